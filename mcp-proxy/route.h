/*
 * route.h - which detmd a tool call goes to, when detm-mcp was given
 * several (--url more than once, or a comma-separated ACU_DAEMON_URL):
 * issue 39 item 3, routing by task id.
 *
 *   task_register     the detmd with the most free task display slots
 *                     among those whose GET /readyz is 200 (not draining,
 *                     disk writable, a slot free); none ready is a tool
 *                     error saying why for each
 *   a task_id/wait_id the detmd that has it: a cache of ids seen, else
 *                     GET /api/tasks/{id} (/api/waits/{id}) on each; an id
 *                     no reachable detmd has while some did not answer is
 *                     a tool error naming them ("unavailable"), else the
 *                     first detmd answers (its own not_found)
 *   anything else     the first URL
 *
 * With one URL nothing is asked: every call goes to it, as before.
 * Ids are checked as 8 lowercase hex digits before they go into a path.
 * Does not: merge lists across detmds (task_list shows the first one's),
 * move tasks, or retry a call on another detmd.
 */
#ifndef DETM_MCP_ROUTE_H
#define DETM_MCP_ROUTE_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stddef.h>

#include "forward.h"
#include "tools.h"

#define CAP_URLS 16             /* detmds one detm-mcp routes between */

/* The index into fws (n of them, one per URL, in the order given) of the
 * detmd that runs tool t with args; -1 with a sentence in err (the call's
 * tool error). Blocks for the probes it needs (a few seconds at most each). */
int route_choose(struct forward *const *fws, int n, const struct tool *t, struct json_object *args,
                 char *err, size_t errlen);

/* Remembers that id lives on detmd idx (a task_register's reply). */
void route_remember(const char *id, int idx);

#endif
