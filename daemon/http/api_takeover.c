/*
 * api_takeover.c - the human-takeover routes (takeover.h):
 *
 *   POST /api/tasks/{id}/takeover  {reason?, allow_screenshots?}  -> lease
 *   GET  /api/tasks/{id}/takeover  who drives, since when, open help request
 *   POST /api/tasks/{id}/release   {lease, note?}                  -> summary
 *                                  {force:true, note?}             -> summary, forced
 *   POST /api/tasks/{id}/input     {lease, events:[...], iw?, ih?}
 *   POST /api/tasks/{id}/help      {reason, instructions?}         -> request_id
 *
 * Handlers check the body's shape and call takeover.c; nothing else. A task
 * this detmd does not hold is 404 not_found on each (api_known_task), so a
 * detmd with --peers forwards it to the one that does (api_fleet.c).
 */
#include "api.h"
#include "core/jx.h"
#include "desktop/takeover.h"
#include "lim.h"

int
api_takeover_start(struct req *r, struct derr *e)
{
	const char *id, *reason = NULL;
	bool allow = false, has;
	json_object *o;

	if (api_known_task(r, &id, e) != 0 || api_body_check(r, api_takeover_start, e) != 0 ||
	    jx_str(r->body, "reason", false, 0, LIM_REASON, &reason, e) != 0 ||
	    jx_bool(r->body, "allow_screenshots", &allow, &has, e) != 0 ||
	    (o = takeover_start(id, reason, allow, e)) == NULL)
		return -1;
	return req_reply(r, 200, o);
}

int
api_takeover_get(struct req *r, struct derr *e)
{
	const char *id;
	json_object *o;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	o = takeover_status(id);
	jx_add_str(o, "task_id", id);
	return req_reply(r, 200, o);
}

/* With the lease: the human hands back. force:true without it: the
 * operator's override, recorded as forced; with a lease that holds the
 * takeover, force changes nothing (an ordinary release). */
int
api_takeover_release(struct req *r, struct derr *e)
{
	const char *id, *lease = NULL, *note = NULL;
	bool force = false, has;
	json_object *o;

	if (api_known_task(r, &id, e) != 0 || api_body_check(r, api_takeover_release, e) != 0 ||
	    jx_str(r->body, "lease", false, 0, 2 * SECRET_LEN, &lease, e) != 0 ||
	    jx_bool(r->body, "force", &force, &has, e) != 0 ||
	    jx_str(r->body, "note", false, 0, LIM_REASON, &note, e) != 0)
		return -1;
	if (note == NULL && jx_str(r->body, "reason", false, 0, LIM_REASON, &note, e) != 0)
		return -1;
	o = takeover_release(id, lease, note, TKE_RELEASE, e);
	if (o == NULL && force && e->code == DERR_FORBIDDEN)
		o = takeover_release(id, NULL, note, TKE_FORCE, e);
	if (o == NULL)
		return -1;
	return req_reply(r, 200, o);
}

int
api_takeover_input(struct req *r, struct derr *e)
{
	const char *id, *lease;
	int64_t iw = 0, ih = 0;
	bool has;
	json_object *ev, *o;

	if (api_known_task(r, &id, e) != 0 || api_body_check(r, api_takeover_input, e) != 0 ||
	    jx_str(r->body, "lease", true, 1, 2 * SECRET_LEN, &lease, e) != 0 ||
	    jx_int(r->body, "iw", false, 1, 16384, &iw, &has, e) != 0 ||
	    jx_int(r->body, "ih", false, 1, 16384, &ih, &has, e) != 0)
		return -1;
	if (!json_object_object_get_ex(r->body, "events", &ev))
		return derr_set(e, DERR_INVALID, "events", "events (an array) is required");
	if ((o = takeover_input(id, lease, ev, (int)iw, (int)ih, e)) == NULL)
		return -1;
	return req_reply(r, 200, o);
}

int
api_takeover_help(struct req *r, struct derr *e)
{
	const char *id, *reason, *instr = NULL;
	json_object *o;

	if (api_known_task(r, &id, e) != 0 || api_body_check(r, api_takeover_help, e) != 0 ||
	    jx_str(r->body, "reason", true, 1, LIM_REASON, &reason, e) != 0 ||
	    jx_str(r->body, "instructions", false, 0, LIM_MESSAGE, &instr, e) != 0 ||
	    (o = takeover_help(id, reason, instr, e)) == NULL)
		return -1;
	return req_reply(r, 201, o);
}
