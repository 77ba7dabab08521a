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
 * and the errors are exactly what that route gives. The call itself is
 * api_tool_run (api_common.c), which /mcp's tools/call runs too; this file
 * picks the tool's name from the route and its body policy (strict, or
 * ROUTE_LENIENT for the Python routes). The tool table itself is
 * mcp-proxy/tools.c: one table for MCP and HTTP.
 *
 * Does not: keep state, call over the network, or know any tool by name
 * (api_tool_run's Python alias /live_ui, a renamed gui_agent, is the one
 * exception).
 */
#include <string.h>

#include "api.h"
#include "tools.h"

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

int
api_tool_call(struct req *r, struct derr *e)
{
	const struct route *rt = api_route_of(r, api_tool_call);

	return api_tool_run(r, r->nparams > 0 ? r->params[0] : r->path + 1,
	    rt != NULL && (rt->flags & ROUTE_LENIENT), e);
}
