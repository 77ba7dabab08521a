/*
 * api_launch.c - POST /api/tasks/{id}/launch (desktop_launch): start a
 * program on the task's own display; GET /api/tasks/{id}/launch: the
 * programs the task launched. The work is desktop/launch.c's; here the
 * body's shape: command (with args) or open, wait_window (seconds, 0..20,
 * default 5).
 */
#include <string.h>

#include "api.h"
#include "core/jx.h"
#include "desktop/launch.h"

int
api_task_launch(struct req *r, struct derr *e)
{
	struct launch_req q = { .wait_ms = LAUNCH_WAIT_DEFAULT_MS };
	json_object *out;
	double wait_s = 0;
	bool has_wait = false;

	if (api_body_check(r, api_task_launch, e) != 0 || api_known_task(r, &q.task_id, e) != 0 ||
	    jx_str(r->body, "command", false, 1, 256, &q.command, e) != 0 ||
	    jx_str(r->body, "open", false, 1, 4096, &q.open, e) != 0 ||
	    jx_num(r->body, "wait_window", 0, LAUNCH_WAIT_MAX_MS / 1000, &wait_s, &has_wait, e) != 0)
		return -1;
	if (json_object_object_get_ex(r->body, "args", &q.args) && json_object_is_type(q.args, json_type_null))
		q.args = NULL;
	if (has_wait)
		q.wait_ms = (int)(wait_s * 1000.0);
	if (launch_start(r->app, &q, &out, e) != 0)
		return -1;
	return req_reply(r, 201, out);
}

int
api_task_launched(struct req *r, struct derr *e)
{
	const char *id;
	json_object *o, *list;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	list = launch_list(id);
	o = json_object_new_object();
	json_object_object_add(o, "task_id", json_object_new_string(id));
	json_object_object_add(o, "launched", list != NULL ? list : json_object_new_array());
	return req_reply(r, 200, o);
}
