/*
 * api_common.c - the request helpers that several handler files share, so
 * that no api_*.c calls into another: a request's optional task_id, a
 * task route's known task, a display's size and a task display's start
 * (task registration and /api/tasks/{id}/display), the health reply
 * (/api/health and the doctor's health_check), a tool call (the tool
 * router's routes and /mcp's tools/call), and a task's big view as GET
 * /api/tasks/{id} answers it (that route and the export bundle's task.json).
 *
 * Invariant: every helper fills e and returns -1 on failure, and leaves
 * nothing running or half-recorded (a display that could not be recorded
 * is stopped). Handlers stay in their api_*.c; nothing here is a route.
 * Not here: a route's own checks (api_body_check, routes.c), the tool
 * table (common/tools.c), the daemon request a tool stands for
 * (common/toolreq.c).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "core/jx.h"
#include "desktop/launch.h"
#include "desktop/takeover.h"
#include "lim.h"
#include "recorder/recorder.h"
#include "schema.h"
#include "store/store.h"
#include "task/task.h"
#include "task/usage.h"
#include "task/wake.h"
#include "toolreq.h"
#include "waits/waits.h"
#include "x11/display.h"
#include "x11/humanize.h"

#define ARG_MAX 64

/* ---- task ids ---- */

int
api_opt_task_id(struct req *r, bool from_query, const char **out, struct derr *e)
{
	const char *id = NULL;

	if (jx_str(r->body, "task_id", false, 0, 64, &id, e) != 0)
		return -1;
	if (id == NULL && from_query)
		id = req_query(r, "task_id");
	if (id != NULL && id[0] == '\0')
		id = NULL;
	if (id != NULL && !id_valid(id))
		return derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%.*s'",
		    utf8_prec(id, 64), id);
	*out = id;
	return 0;
}

int
api_known_task(struct req *r, const char **id, struct derr *e)
{
	json_object *meta = NULL;
	int st;

	if (req_task_id(r, 0, id, e) != 0 || task_meta(r->app->store, *id, &st, &meta, e) != 0)
		return -1;
	json_object_put(meta);
	return 0;
}

/* ---- displays ---- */

/* Width/height from {"<p>width","<p>height"} or {"<p>resolution":"WxH"}. */
int
api_display_size(json_object *body, const char *p, int *w, int *h, struct derr *e)
{
	char kw[32], kh[32], kr[32];
	const char *res = NULL;
	int64_t v;
	bool hw = false, hh = false;

	snprintf(kw, sizeof kw, "%swidth", p);
	snprintf(kh, sizeof kh, "%sheight", p);
	snprintf(kr, sizeof kr, "%sresolution", p);
	*w = *h = 0;
	if (jx_str(body, kr, false, 3, 16, &res, e) != 0)
		return -1;
	if (res != NULL) {
		if (config_parse_size(res, w, h) != 0)
			return derr_set(e, DERR_INVALID, kr, "%s must be WIDTHxHEIGHT, each %d..%d", kr,
			    CONFIG_DISPLAY_MIN, CONFIG_DISPLAY_MAX);
		return 0;
	}
	if (jx_int(body, kw, false, CONFIG_DISPLAY_MIN, CONFIG_DISPLAY_MAX, &v, &hw, e) != 0)
		return -1;
	*w = hw ? (int)v : 0;
	if (jx_int(body, kh, false, CONFIG_DISPLAY_MIN, CONFIG_DISPLAY_MAX, &v, &hh, e) != 0)
		return -1;
	*h = hh ? (int)v : 0;
	if (hw != hh)
		return derr_set(e, DERR_INVALID, hw ? kh : kw, "give both %s and %s", kw, kh);
	return 0;
}

/* Records the display in the task's metadata (the record survives the
 * display; desktop.c reads it to explain a released display). */
static int
record_display(struct req *r, const char *task_id, json_object *info, struct derr *e)
{
	struct task_patch p = { .status = -1 };
	json_object *m = json_object_new_object();
	int rc;

	json_object_object_add(m, "display", json_object_get(json_object_object_get(info, "name")));
	json_object_object_add(m, "display_number", json_object_get(json_object_object_get(info, "number")));
	json_object_object_add(m, "display_resolution",
	    json_object_get(json_object_object_get(info, "resolution")));
	json_object_object_add(m, "isolated_display", json_object_new_boolean(1));
	json_object_object_add(m, "xauthority", json_object_get(json_object_object_get(info, "xauthority")));
	/* What a program of the agent's own shell needs there (the
	 * accessibility bus and switches too); desktop_launch sets it itself. */
	if (json_object_object_get(info, "env") != NULL)
		json_object_object_add(m, "display_env", json_object_get(json_object_object_get(info, "env")));
	p.metadata = m;
	rc = task_update(r->app->store, task_id, &p, e);
	json_object_put(m);
	return rc;
}

/* Starts a display for an existing task and records it (used by task
 * registration too). On failure nothing is left running. */
int
api_task_display_start(struct req *r, const char *task_id, int w, int h,
    json_object **info, struct derr *e)
{
	if (display_start(task_id, w, h, info, e) != 0)
		return -1;
	if (record_display(r, task_id, *info, e) != 0) {
		display_stop(task_id);
		json_object_put(*info);
		*info = NULL;
		return -1;
	}
	rec_display_started(task_id);
	return 0;
}

/* ---- health ---- */

int
api_health_reply(struct req *r)
{
	json_object *o = json_object_new_object();
	int ok = store_ok(r->app->store);
	char cause[512];
	bool degraded = ok && store_degraded(r->app->store, cause, sizeof cause);

	json_object_object_add(o, "status", json_object_new_string(ok && !degraded ? "ok" : "degraded"));
	json_object_object_add(o, "version", json_object_new_string(DETM_VERSION));
	json_object_object_add(o, "api_version", json_object_new_int(DETM_API_VERSION));
	json_object_object_add(o, "uptime_s", json_object_new_int64(
	    (mono_us() - r->app->started_mono_us) / 1000000));
	json_object_object_add(o, "db", json_object_new_string(!ok ? "error" : degraded ? "degraded" : "ok"));
	if (degraded)
		json_object_object_add(o, "db_error", json_object_new_string(cause));
	json_object_object_add(o, "schema_version", json_object_new_int(
	    ok ? store_schema_version(r->app->store) : -1));
	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(o, "data_dir", json_object_new_string(r->app->cfg->data_dir));
	json_object_object_add(o, "wake", wake_stats());
	json_object_object_add(o, "vision", waits_health());
	json_object_object_add(o, "humanize", json_object_new_boolean(humanize_enabled()));
	json_object_object_add(o, "window_manager", display_wm_json());
	return req_reply(r, ok ? 200 : 503, o);
}

/* ---- tool calls ---- */

static const struct {
	const char *alias, *tool;
} renamed[] = {
	{ "live_ui", "gui_agent" },
};

/* The arguments: the body with the Python DETM's legacy key form ("key:",
 * an mcporter artifact it stripped) normalised. New object. */
static json_object *
tool_args(json_object *body)
{
	json_object *args = json_object_new_object();
	char key[ARG_MAX + 1];

	json_object_object_foreach(body, k, v) {
		size_t n = strlen(k);

		if (n > 1 && n <= ARG_MAX && k[n - 1] == ':') {
			memcpy(key, k, n - 1);
			key[n - 1] = '\0';
			json_object_object_add(args, key, json_object_get(v));
		} else {
			json_object_object_add(args, k, json_object_get(v));
		}
	}
	return args;
}

/* The route's body policy on a tool's arguments: an argument the tool's
 * inputSchema does not name is an error on that field (/api/tools/{name},
 * as over MCP), or dropped (lenient: the Python DETM's routes,
 * ROUTE_LENIENT: its daemon ignored what it did not read). *args may be
 * replaced. */
static int
unknown_args(const struct tool *t, bool lenient, json_object **args, struct derr *e)
{
	json_object *props = NULL, *kept = json_object_new_object();
	char list[512] = "";
	size_t o = 0;

	json_object_object_get_ex(t->input_schema, "properties", &props);
	json_object_object_foreach(*args, k, v) {
		if (props != NULL && json_object_object_get_ex(props, k, NULL)) {
			json_object_object_add(kept, k, json_object_get(v));
			continue;
		}
		if (lenient)
			continue;
		json_object_put(kept);
		if (props != NULL) {
			json_object_object_foreach(props, pk, pv) {
				(void)pv;
				if (o < sizeof list)
					o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", o ? ", " : "", pk);
			}
		}
		return derr_set(e, DERR_INVALID, k, "%s: unknown argument '%.*s' (%s%s)", t->name,
		    utf8_prec(k, 64), k, o ? "allowed: " : "this tool takes no arguments", list);
	}
	json_object_put(*args);
	*args = kept;
	return 0;
}

int
api_tool_run(struct req *r, const char *name, bool lenient, struct derr *e)
{
	json_object *args = NULL, *query = json_object_new_object();
	json_object *body = json_object_new_object(), *msg, *post;
	const struct tool *t;
	char path[LIM_URL_BYTES + 1], err[256];
	int rc = -1;

	for (size_t i = 0; i < ARRAY_LEN(renamed); i++)
		if (strcmp(name, renamed[i].alias) == 0)
			name = renamed[i].tool;
	t = tools_find(name);
	if (t == NULL) {
		derr_set(e, DERR_NOT_FOUND, "tool", "no tool '%.*s' (GET /api/tools lists them)",
		    utf8_prec(name, 64), name);
		goto out;
	}
	args = tool_args(r->body);
	if (unknown_args(t, lenient, &args, e) != 0)
		goto out;
	if (schema_check(tools_check_schema(t), args, err, sizeof err) != 0) {
		derr_set(e, DERR_INVALID, NULL, "%s: %s", t->name, err);
		goto out;
	}
	schema_normalize(t->input_schema, args);
	if (toolreq_build(t, args, true, path, sizeof path, query, body) != 0) {
		derr_set(e, DERR_INVALID, NULL, "the path arguments of %s are too long or hold a NUL byte", t->name);
		goto out;
	}
	if ((t->flags & TOOL_POST_MESSAGE_FIRST) && json_object_object_get_ex(body, "message", &msg)) {
		post = json_object_new_object();
		json_object_object_add(post, "content", json_object_get(msg));
		json_object_object_add(post, "role", json_object_new_string("agent"));
		rc = req_dispatch(r, "POST", path, NULL, post, e);
		json_object_put(post);
		json_object_object_del(body, "message");
		if (rc != 0)
			goto out;
	}
	rc = req_dispatch(r, t->method, path, query, body, e);
out:
	json_object_put(args);
	json_object_put(query);
	json_object_put(body);
	return rc;
}

/* ---- a task's view ---- */

void
api_task_view_tail(struct req *r, const char *id, json_object *sum)
{
	json_object *launched;

	json_object_object_add(sum, "recording", rec_task_status(id));
	json_object_object_add(sum, "driver", takeover_status(id));
	if ((launched = launch_list(id)) != NULL)
		json_object_object_add(sum, "launched", launched);    /* desktop_launch's programs */
	usage_summary_add(r->app->store, id, sum);     /* usage totals and budget */
}

struct task_view *
api_task_view_open(struct req *r, const char *id, int detail, struct store **rd, struct derr *e)
{
	struct task_view *v;

	*rd = store_reader_open(r->app->store);
	if (*rd == NULL) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "cannot open a read connection to the database");
		return NULL;
	}
	v = task_view_open(*rd, id, (enum task_detail)detail, e);
	if (v == NULL) {
		store_reader_close(*rd);
		*rd = NULL;
		return NULL;
	}
	api_task_view_tail(r, id, task_view_head(v));
	return v;
}
