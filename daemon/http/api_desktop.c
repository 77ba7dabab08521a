/*
 * api_desktop.c - desktop routes: /api/desktop/action, /api/desktop/screenshot,
 * /api/commands (the command router), /api/displays and a task's display
 * (/api/tasks/{id}/display), and the humanize switch (/api/humanize).
 *
 * Handlers validate the request shape and hand the work to desktop.c
 * (actions, screenshots) or display.c (displays). The command router runs a
 * list of actions in order and reports one result per command; it never
 * turns a failed command into an HTTP error.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "core/jx.h"
#include "core/log.h"
#include "desktop/desktop.h"
#include "desktop/launch.h"
#include "desktop/takeover.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "x11/display.h"
#include "x11/humanize.h"

#define COMMANDS_MAX 100
#define COMMANDS_TIMEOUT_DEFAULT_MS 30000
#define COMMANDS_TIMEOUT_MAX_MS 600000

/* coords: "screen" (default for HTTP) or "image" (the last look's pixels;
 * detm-mcp asks for this). From the query string or the body. */
static int
image_coords(struct req *r, json_object *params, bool *out, struct derr *e)
{
	const char *c = req_query(r, "coords");

	if (params != NULL && jx_str(params, "coords", false, 1, 16, &c, e) != 0)
		return -1;
	if (c == NULL)
		c = req_query(r, "coords");
	*out = false;
	if (c == NULL || strcmp(c, "screen") == 0)
		return 0;
	if (strcmp(c, "image") == 0) {
		*out = true;
		return 0;
	}
	return derr_set(e, DERR_INVALID, "coords", "coords must be 'screen' or 'image'");
}

int
api_desktop_action(struct req *r, struct derr *e)
{
	const char *task_id, *action;
	struct desk_out out;
	json_object *o;
	bool img;

	if (api_body_check(r, api_desktop_action, e) != 0 ||
	    api_opt_task_id(r, true, &task_id, e) != 0 || takeover_gate(task_id, e) != 0 ||
	    jx_str(r->body, "action", true, 1, 64, &action, e) != 0 ||
	    image_coords(r, r->body, &img, e) != 0 ||
	    desktop_run(r->app, task_id, action, r->body, img, &out, e) != 0)
		return -1;
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "action", json_object_new_string(action));
	json_object_object_add(o, "display", json_object_new_string(out.display));
	json_object_object_add(o, "observation", json_object_new_string(out.observation));
	{
		char ms[32];

		snprintf(ms, sizeof ms, "%.3f", out.duration_ms);
		json_object_object_add(o, "duration_ms", json_object_new_double_s(out.duration_ms, ms));
	}
	json_object_object_foreach(out.data, k, v)
		json_object_object_add(o, k, json_object_get(v));
	json_object_put(out.data);
	return req_reply(r, 200, o);
}

static int
query_int(struct req *r, const char *key, int64_t min, int64_t max, int *out, struct derr *e)
{
	int64_t v;

	if (req_query_int(r, key, min, max, 0, &v, e) != 0)
		return -1;
	*out = (int)v;
	return 0;
}

int
api_desktop_screenshot(struct req *r, struct derr *e)
{
	struct desk_shot q = { 0 };
	struct xcap_image img = { 0 };
	const char *fmt = req_query(r, "format"), *win = req_query(r, "window");
	json_object *meta = NULL, *sz;
	bool json = false;
	int rc = -1;

	if (api_opt_task_id(r, true, &q.task_id, e) != 0 || takeover_gate_look(q.task_id, e) != 0 ||
	    query_int(r, "max_width", 16, 16384, &q.max_width, e) != 0 ||
	    query_int(r, "quality", 1, 100, &q.quality, e) != 0 ||
	    query_int(r, "x", 0, 16384, &q.x, e) != 0 ||
	    query_int(r, "y", 0, 16384, &q.y, e) != 0 ||
	    query_int(r, "w", 0, 16384, &q.w, e) != 0 ||
	    query_int(r, "h", 0, 16384, &q.h, e) != 0)
		return -1;
	if (fmt == NULL || fmt[0] == '\0' || strcmp(fmt, "jpeg") == 0 || strcmp(fmt, "jpg") == 0)
		q.format = XCAP_JPEG;
	else if (strcmp(fmt, "png") == 0)
		q.format = XCAP_PNG;
	else if (strcmp(fmt, "json") == 0)
		json = true;
	else
		return derr_set(e, DERR_INVALID, "format", "format must be jpeg, png or json");
	if (win != NULL && win[0] != '\0') {
		json_object *v = json_object_new_string(win);

		rc = desktop_window_id(v, &q.window, e);
		json_object_put(v);
		if (rc != 0)
			return derr_refield(e, "window");
		rc = -1;
	}
	q.window_name = req_query(r, "window_name");
	if (q.window_name != NULL && q.window_name[0] == '\0')
		q.window_name = NULL;
	/* The JSON variant is what an agent looks at (desktop_look): later
	 * image coordinates refer to it. */
	q.remember = json;
	if (desktop_shot(r->app, &q, &img, &meta, e) != 0)
		goto out;
	if (json) {
		char *b64 = b64_encode(img.data, img.len, NULL);

		json_object_object_add(meta, "image_b64", json_object_new_string(b64));
		json_object_object_add(meta, "media_type", json_object_new_string(img.mime));
		free(b64);
		req_reply(r, 200, meta);
		meta = NULL;
		rc = 0;
		goto out;
	}
	json_object_object_get_ex(meta, "image_size", &sz);
	req_header(r, "X-Image-Width", "%d", json_object_get_int(json_object_object_get(sz, "width")));
	req_header(r, "X-Image-Height", "%d", json_object_get_int(json_object_object_get(sz, "height")));
	json_object_object_get_ex(meta, "screen_size", &sz);
	req_header(r, "X-Screen-Width", "%d", json_object_get_int(json_object_object_get(sz, "width")));
	req_header(r, "X-Screen-Height", "%d", json_object_get_int(json_object_object_get(sz, "height")));
	req_header(r, "X-Scale", "%s", json_object_get_string(json_object_object_get(meta, "scale")));
	json_object_object_get_ex(meta, "region", &sz);
	req_header(r, "X-Region", "%d,%d,%d,%d",
	    json_object_get_int(json_object_object_get(sz, "x")),
	    json_object_get_int(json_object_object_get(sz, "y")),
	    json_object_get_int(json_object_object_get(sz, "width")),
	    json_object_get_int(json_object_object_get(sz, "height")));
	req_header(r, "X-Display", "%s", json_object_get_string(json_object_object_get(meta, "display")));
	req_reply_raw(r, 200, img.mime, img.data, img.len);
	img.data = NULL;
	rc = 0;
out:
	xcap_image_free(&img);
	json_object_put(meta);
	return rc;
}

/* ---- the command router ---- */

static json_object *
command_result(const char *action, const char *status, const char *obs, json_object *data,
    const struct derr *err)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "action", action ? json_object_new_string(action) : NULL);
	json_object_object_add(o, "status", json_object_new_string(status));
	json_object_object_add(o, "observation", obs ? json_object_new_string(obs) : NULL);
	json_object_object_add(o, "data", data);
	if (err != NULL)
		derr_add_json(o, err);
	else
		json_object_object_add(o, "error", NULL);
	return o;
}

int
api_commands(struct req *r, struct derr *e)
{
	const char *task_id;
	json_object *cmds, *results, *o;
	int64_t timeout_ms = COMMANDS_TIMEOUT_DEFAULT_MS, deadline;
	bool stop = true, has, img, stopped = false;
	int ok = 0, failed = 0, notrun = 0;
	size_t i, n;

	if (api_body_check(r, api_commands, e) != 0 ||
	    api_opt_task_id(r, true, &task_id, e) != 0 || takeover_gate(task_id, e) != 0 ||
	    jx_int(r->body, "timeout_ms", false, 1, COMMANDS_TIMEOUT_MAX_MS, &timeout_ms, &has, e) != 0 ||
	    jx_bool(r->body, "stop_on_error", &stop, &has, e) != 0 ||
	    image_coords(r, r->body, &img, e) != 0)
		return -1;
	if (!has)
		stop = true;
	if (!json_object_object_get_ex(r->body, "commands", &cmds) ||
	    !json_object_is_type(cmds, json_type_array))
		return derr_set(e, DERR_INVALID, "commands",
		    "commands must be an array of {\"action\": ..., \"parameters\": {...}}");
	n = json_object_array_length(cmds);
	if (n == 0 || n > COMMANDS_MAX)
		return derr_set(e, DERR_INVALID, "commands", "give 1 to %d commands (got %zu)",
		    COMMANDS_MAX, n);
	/* The whole list is checked before anything runs: a malformed list is
	 * a 400, not half a run. */
	for (i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(cmds, i), *v;
		char field[32];

		snprintf(field, sizeof field, "commands[%zu]", i);
		if (!json_object_is_type(c, json_type_object) ||
		    !json_object_object_get_ex(c, "action", &v) || !json_object_is_type(v, json_type_string))
			return derr_set(e, DERR_INVALID, field, "%s must be an object with a string action",
			    field);
		if (json_object_object_get_ex(c, "parameters", &v) && !json_object_is_type(v, json_type_object) &&
		    !json_object_is_type(v, json_type_null))
			return derr_set(e, DERR_INVALID, field, "%s.parameters must be an object", field);
	}
	if (task_id != NULL) {
		int st;
		json_object *meta;

		if (task_meta(r->app->store, task_id, &st, &meta, e) != 0)
			return -1;
		json_object_put(meta);
	}
	deadline = mono_us() + timeout_ms * 1000;
	results = json_object_new_array();
	for (i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(cmds, i), *params = NULL;
		const char *action = json_object_get_string(json_object_object_get(c, "action"));
		struct desk_out out;
		struct derr ce = { 0 };

		if (stopped) {
			derr_set(&ce, DERR_CONFLICT, NULL, "not run: an earlier command failed "
			    "(stop_on_error is true)");
			json_object_array_add(results, command_result(action, "error", NULL, NULL, &ce));
			notrun++;
			continue;
		}
		if (mono_us() >= deadline) {
			derr_set(&ce, DERR_UNAVAILABLE, NULL, "not run: the %lld ms timeout passed",
			    (long long)timeout_ms);
			json_object_array_add(results, command_result(action, "timeout", NULL, NULL, &ce));
			notrun++;
			continue;
		}
		json_object_object_get_ex(c, "parameters", &params);
		if (params == NULL || json_object_is_type(params, json_type_null))
			params = json_object_new_object();
		else
			json_object_get(params);
		if (desktop_run(r->app, task_id, action, params, img, &out, &ce) == 0) {
			json_object_array_add(results, command_result(action, "success", out.observation,
			    out.data, NULL));
			ok++;
		} else {
			json_object_array_add(results, command_result(action, "error", NULL, NULL, &ce));
			failed++;
			stopped = stop;
		}
		json_object_put(params);
	}
	o = json_object_new_object();
	jx_add_str(o, "task_id", task_id);
	json_object_object_add(o, "results", results);
	json_object_object_add(o, "succeeded", json_object_new_int(ok));
	json_object_object_add(o, "failed", json_object_new_int(failed));
	json_object_object_add(o, "not_run", json_object_new_int(notrun));
	json_object_object_add(o, "stop_on_error", json_object_new_boolean(stop));
	return req_reply(r, 200, o);
}

/* ---- displays ---- */

int
api_displays(struct req *r, struct derr *e)
{
	return req_reply(r, 200, display_list());
}

int
api_task_display_post(struct req *r, struct derr *e)
{
	const char *id;
	json_object *meta, *info;
	int st, w, h;

	if (api_body_check(r, api_task_display_post, e) != 0 ||
	    req_task_id(r, 0, &id, e) != 0 || api_display_size(r->body, "", &w, &h, e) != 0 ||
	    task_meta(r->app->store, id, &st, &meta, e) != 0)
		return -1;
	json_object_put(meta);
	if (task_status_final(st))
		return derr_set(e, DERR_CONFLICT, "task_id", "task %s is %s; displays are for live tasks",
		    id, task_status_name(st));
	if (api_task_display_start(r, id, w, h, &info, e) != 0)
		return -1;
	return req_reply(r, 201, info);
}

int
api_task_display_get(struct req *r, struct derr *e)
{
	const char *id;
	json_object *all, *arr, *meta;
	size_t i;
	int st;

	if (req_task_id(r, 0, &id, e) != 0 || task_meta(r->app->store, id, &st, &meta, e) != 0)
		return -1;
	json_object_put(meta);
	all = display_list();
	arr = json_object_object_get(all, "displays");
	for (i = 0; i < json_object_array_length(arr); i++) {
		json_object *d = json_object_array_get_idx(arr, i);

		if (strcmp(json_object_get_string(json_object_object_get(d, "task_id")), id) == 0) {
			json_object_get(d);
			json_object_put(all);
			return req_reply(r, 200, d);
		}
	}
	json_object_put(all);
	return derr_set(e, DERR_NOT_FOUND, "display", "task %s has no display of its own "
	    "(it uses the shared display %s)", id, display_shared_name());
}

int
api_task_display_delete(struct req *r, struct derr *e)
{
	const char *id;
	json_object *o, *meta;
	int st, stopped;

	if (req_task_id(r, 0, &id, e) != 0 || task_meta(r->app->store, id, &st, &meta, e) != 0)
		return -1;
	json_object_put(meta);
	launch_stop_task(id);   /* its programs go with the display */
	stopped = display_stop(id) == 0;
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "task_id", json_object_new_string(id));
	json_object_object_add(o, "stopped", json_object_new_boolean(stopped));
	return req_reply(r, 200, o);
}

int
api_humanize_get(struct req *r, struct derr *e)
{
	(void)e;
	return req_reply(r, 200, humanize_snapshot());
}

/* {enabled (required), reason?}: the Python DETM's /humanize, daemon-wide. */
int
api_humanize_set(struct req *r, struct derr *e)
{
	const char *reason = NULL;
	bool on = false, present = false;

	if (api_body_check(r, api_humanize_set, e) != 0 ||
	    jx_bool(r->body, "enabled", &on, &present, e) != 0 ||
	    jx_str(r->body, "reason", false, 0, 200, &reason, e) != 0)
		return -1;
	if (!present)
		return derr_set(e, DERR_INVALID, "enabled", "enabled (true or false) is required");
	log_info("humanize %s%s%s", on ? "on" : "off", reason != NULL ? ": " : "",
	    reason != NULL ? reason : "");
	return req_reply(r, 200, humanize_set(on, reason));
}
