/*
 * toolreq.h - turn one tool call (a row of tools.c plus its arguments) into
 * the detmd request it stands for: method, path, query and body.
 *
 * Shared by detm-mcp (forward.c sends the request over HTTP) and detmd
 * (api_tools.c runs it in process for POST /api/tools/{name} and the Python
 * DETM's POST /<tool> routes), so the mapping from tools to routes exists
 * once. Pure: no I/O, no globals; json-c only.
 */
#ifndef DETM_MCP_TOOLREQ_H
#define DETM_MCP_TOOLREQ_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "tools.h"

/* Fills path from t->route with the path arguments (percent-encoded when
 * escape), adds the route's fixed query and the query arguments to
 * `query` (string values, not encoded; renamed as t->query says), and
 * every other argument to `body`. args is not modified. Returns 0, or -1
 * when the path would not fit in cap bytes or a path argument holds a NUL. */
int toolreq_build(const struct tool *t, struct json_object *args, bool escape,
                  char *path, size_t cap, struct json_object *query,
                  struct json_object *body);

/* Appends "?k=v&k2=v2" (percent-encoded; nothing when query is empty) to
 * the string in out. Returns 0, or -1 when it would not fit in cap. */
int toolreq_query_string(struct json_object *query, char *out, size_t cap);

#endif
