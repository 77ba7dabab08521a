/*
 * api_waits.c - /api/waits* handlers: check the request's shape and hand it
 * to the wait engine (waits.c). Argument names follow the smart_wait MCP
 * tools: target, wake_when, timeout, poll_interval, task_id, judge.
 */
#include <string.h>

#include "api.h"
#include "core/jx.h"
#include "lim.h"
#include "waits/waits.h"

static int
wait_id(struct req *r, const char **out, struct derr *e)
{
	const char *id = r->nparams > 0 ? r->params[0] : NULL;

	if (id == NULL || !id_valid(id))
		return derr_set(e, DERR_NOT_FOUND, "wait_id", "no wait with id '%.*s'",
		    utf8_prec(id ? id : "", 64), id ? id : "");
	*out = id;
	return 0;
}

static int
reply_or_fail(struct req *r, int status, json_object *o)
{
	if (o == NULL)
		return -1;
	return req_reply(r, status, o);
}

int
api_wait_create(struct req *r, struct derr *e)
{
	struct wait_new w = { .timeout_s = WAIT_TIMEOUT_DEFAULT_S };
	int64_t t = WAIT_TIMEOUT_DEFAULT_S;
	double poll = 0;
	bool has;

	if (api_body_check(r, api_wait_create, e) != 0 ||
	    jx_str(r->body, "task_id", false, 1, 64, &w.task_id, e) != 0 ||
	    jx_str(r->body, "target", false, 1, WAIT_TARGET_MAX, &w.target, e) != 0 ||
	    jx_str(r->body, "wake_when", false, 1, WAIT_CRITERIA_MAX, &w.criteria, e) != 0 ||
	    jx_int(r->body, "timeout", false, 1, WAIT_TIMEOUT_MAX_S, &t, &has, e) != 0 ||
	    jx_num(r->body, "poll_interval", 0.5, 60, &poll, &has, e) != 0 ||
	    jx_str(r->body, "judge", false, 1, 16, &w.judge, e) != 0)
		return -1;
	/* "criteria" is the older name; either way a missing or unusable
	 * condition is reported on wake_when. */
	if (w.criteria == NULL && (jx_str(r->body, "criteria", true, 1, WAIT_CRITERIA_MAX, &w.criteria,
	    e) != 0))
		return derr_set(e, DERR_INVALID, "wake_when", "wake_when is required: the condition to wait for");
	if (w.target == NULL)
		w.target = "screen";
	if (w.task_id != NULL && !id_valid(w.task_id))
		return derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%.*s'",
		    utf8_prec(w.task_id, 64), w.task_id);
	w.timeout_s = (int)t;
	w.poll_s = has ? poll : 0;
	return reply_or_fail(r, 201, waits_create(&w, e));
}

int
api_wait_list(struct req *r, struct derr *e)
{
	static const char *const states[] = { "watching", "resolved", "timed_out", "cancelled", "failed", "all" };
	const char *task = req_query(r, "task_id"), *status = req_query(r, "status");
	int64_t limit;
	size_t i;

	if (req_query_int(r, "limit", 1, 500, 100, &limit, e) != 0)
		return -1;
	if (task != NULL && (task[0] == '\0' || !id_valid(task)))
		return derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%.*s'",
		    utf8_prec(task, 64), task);
	if (status != NULL) {
		for (i = 0; i < ARRAY_LEN(states) && strcmp(states[i], status) != 0; i++)
			;
		if (i == ARRAY_LEN(states))
			return derr_set(e, DERR_INVALID, "status", "status must be one of: watching, resolved, "
			    "timed_out, cancelled, failed, all (got '%.*s')", utf8_prec(status,
			    32), status);
	}
	return reply_or_fail(r, 200, waits_list(task, status, (int)limit, e));
}

int
api_wait_get(struct req *r, struct derr *e)
{
	const char *id;
	int64_t block;

	if (wait_id(r, &id, e) != 0 ||
	    req_query_int(r, "block_s", 0, WAIT_BLOCK_MAX_S, 0, &block, e) != 0)
		return -1;
	return reply_or_fail(r, 200, waits_get(id, (int)block, e));
}

int
api_wait_patch(struct req *r, struct derr *e)
{
	const char *id, *crit = NULL, *note = NULL;
	int64_t t = 0;
	bool has;

	if (api_body_check(r, api_wait_patch, e) != 0 ||
	    wait_id(r, &id, e) != 0 ||
	    jx_str(r->body, "wake_when", false, 1, WAIT_CRITERIA_MAX, &crit, e) != 0 ||
	    jx_int(r->body, "timeout", false, 1, WAIT_TIMEOUT_MAX_S, &t, &has, e) != 0 ||
	    jx_str(r->body, "message", false, 1, LIM_NOTE, &note, e) != 0)
		return -1;
	if (crit == NULL && !has && note == NULL)
		return derr_set(e, DERR_INVALID, NULL, "nothing to change: give wake_when, timeout or message");
	return reply_or_fail(r, 200, waits_update(id, crit, has ? (int)t : 0, note, e));
}

int
api_wait_delete(struct req *r, struct derr *e)
{
	const char *id, *reason = req_query(r, "reason");

	if (api_body_check(r, api_wait_delete, e) != 0 ||
	    wait_id(r, &id, e) != 0)
		return -1;
	if (reason == NULL && jx_str(r->body, "reason", false, 0, LIM_REASON, &reason, e) != 0)
		return -1;
	if (reason != NULL && strlen(reason) > LIM_REASON)
		return derr_set(e, DERR_INVALID, "reason", "reason is longer than %d bytes", LIM_REASON);
	return reply_or_fail(r, 200, waits_cancel(id, reason, e));
}
