/*
 * route.h - which detmd a tool call goes to, when detm-mcp was given
 * several (--url more than once, or a comma-separated ACU_DAEMON_URL):
 * issue 39 item 3, routing by task id.
 *
 *   task_register     the detmd with the most free task display slots
 *                     among those whose GET /readyz is 200 (not draining,
 *                     disk writable, a slot free); none ready is a tool
 *                     error saying why for each
 *   an id argument    task_id, wait_id, run_id (gui_agent_status), clip_id
 *                     (video_status): the detmd that has it: a cache of ids
 *                     seen (every reply that carries one of these ids fills
 *                     it: route_remember), else GET /api/tasks/{id}
 *                     (/api/waits/, /api/gui/agent/, /api/record/) on each,
 *                     with X-Detm-Forwarded: 1 (a detmd with --peers would
 *                     answer for its peers' ids too), every detmd asked:
 *                     an id two or more have is a tool error "conflict"
 *                     naming them (ids are random per detmd); an id
 *                     no reachable detmd has while some did not answer is
 *                     a tool error naming them ("unavailable"), else the
 *                     first detmd answers (its own not_found)
 *   task_list, wait_status without a wait_id: every detmd, merged
 *                     (merge.h; route_merges says which calls)
 *   anything else     the first URL
 *
 * With one URL nothing is asked: every call goes to it, as before.
 * Ids are checked as 8 lowercase hex digits before they go into a path.
 * Does not: move tasks, or retry a call on another detmd.
 */
#ifndef DETM_MCP_ROUTE_H
#define DETM_MCP_ROUTE_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "forward.h"
#include "tools.h"

/* The index into fws (n of them, one per URL, in the order given) of the
 * detmd that runs tool t with args; -1 with a sentence in err (the call's
 * tool error). Blocks for the probes it needs (a few seconds at most each). */
int route_choose(struct forward *const *fws, int n, const struct tool *t, struct json_object *args,
                 char *err, size_t errlen);

/* Remembers that id lives on the detmd at url (forward_base). */
void route_remember(const char *id, const char *url);

/* Every id (task_id, wait_id, run_id, clip_id) in a tool result's
 * structuredContent is remembered as living at url. */
void route_remember_result(struct json_object *res, const char *url);

/* Whether tool t with args lists what every detmd holds (merge.h). */
bool route_merges(const struct tool *t, struct json_object *args);

#endif
