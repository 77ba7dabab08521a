/*
 * merge.h - a "list everything" tool call (route_merges: task_list,
 * wait_status without a wait_id) when detm-mcp routes between several
 * detmds: the call goes to every detmd, and the result is one list.
 *
 * Each entry gains "detmd": the base URL of the detmd that holds it (its
 * ids route there). Entries are sorted newest first by updated_at (then
 * created_at) when they have one, and cut to the call's limit. A detmd
 * that fails (unreachable, an error) is named in "unreachable" ([{detmd,
 * error}]) and in the text, never silently dropped; "detmds" counts those
 * asked. Every detmd failing is a tool error naming each.
 * Detmds are asked at once (one thread each, at most PEERLIST_MAX), each
 * for at most 10 s: a hung one, or several, delay the list by that much,
 * then are named.
 * Does not: page across detmds (each is asked for up to limit).
 */
#ifndef DETM_MCP_MERGE_H
#define DETM_MCP_MERGE_H

#include <json-c/json.h>

#include "forward.h"
#include "tools.h"

/* Runs t with args on each of fws[0..n) and merges the lists. NULL when
 * the call was cancelled. */
struct json_object *merge_call(struct forward *const *fws, int n, const struct tool *t,
                               struct json_object *args, struct forward_ctl *ctl);

#endif
