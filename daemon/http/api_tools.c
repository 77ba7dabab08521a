/*
 * api_tools.c - the tool router: every MCP tool of detm-mcp over plain HTTP.
 *
 *   GET  /api/tools          the tool table (names, descriptions, schemas,
 *                            the route each one stands for)
 *   POST /api/tools/{name}   call a tool with its MCP arguments as the body
 *   POST /{name}             the same, under the Python DETM's route names
 *                            (/task_register, /smart_wait, ...), so scripts
 *                            and plugins written for it keep working
 *
 * A call is checked against the tool's inputSchema (the proxy's schema.c;
 * enum values in any case, normalised to the schema's spelling), turned into the daemon request the tool stands for (toolreq.c, the same
 * code detm-mcp uses), and run in process through req_dispatch: the reply
 * and the errors are exactly what that route gives. The tool table itself
 * is mcp-proxy/tools.c: one table for MCP and HTTP.
 *
 * Does not: keep state, call over the network, or know any tool by name
 * (the Python alias /live_ui is the one exception, a renamed gui_agent).
 */
#include <string.h>

#include "api.h"
#include "lim.h"
#include "schema.h"
#include "toolreq.h"

#define ARG_MAX 64

static const struct {
	const char *alias, *tool;
} renamed[] = {
	{ "live_ui", "gui_agent" },
};

int
api_tools_list(struct req *r, struct derr *e)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	size_t i;

	(void)e;
	for (i = 0; i < tools_count(); i++) {
		const struct tool *t = tools_at(i);
		json_object *j = json_object_new_object();

		json_object_object_add(j, "name", json_object_new_string(t->name));
		json_object_object_add(j, "title", json_object_new_string(t->title));
		json_object_object_add(j, "description", json_object_new_string(t->description));
		json_object_object_add(j, "inputSchema", json_object_get(t->input_schema));
		json_object_object_add(j, "method", json_object_new_string(t->method));
		json_object_object_add(j, "route", json_object_new_string(t->route));
		json_object_object_add(j, "read_only", json_object_new_boolean(t->flags & TOOL_READ_ONLY));
		json_object_array_add(arr, j);
	}
	json_object_object_add(o, "tools", arr);
	json_object_object_add(o, "count", json_object_new_int((int)tools_count()));
	return req_reply(r, 200, o);
}

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
 * as over MCP), or dropped (the Python DETM's routes, ROUTE_LENIENT: its
 * daemon ignored what it did not read). *args may be replaced. */
static int
unknown_args(struct req *r, const struct tool *t, json_object **args, struct derr *e)
{
	const struct route *rt = api_route_of(r, api_tool_call);
	bool lenient = rt != NULL && (rt->flags & ROUTE_LENIENT);
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
api_tool_call(struct req *r, struct derr *e)
{
	const char *name = r->nparams > 0 ? r->params[0] : r->path + 1;
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
	if (unknown_args(r, t, &args, e) != 0)
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
