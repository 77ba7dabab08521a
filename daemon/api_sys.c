/*
 * api_sys.c - /api/health, /api/version, /api/capabilities, /api/routes.
 * Capabilities are data: a feature is true only when its module is built
 * in and its routes exist, so clients (detm-mcp) can tell "not yet" from
 * "broken".
 */
#include <unistd.h>

#include "api.h"

static const struct { const char *name; int on; } capabilities[] = {
	{ "tasks", 1 }, { "waits", 0 }, { "desktop", 0 }, { "gui", 0 },
	{ "recording", 0 }, { "dashboard", 0 }, { "events", 0 },
};

int
api_health(struct req *r, struct derr *e)
{
	json_object *o = json_object_new_object();
	int ok = store_ok(r->app->store);

	json_object_object_add(o, "status", json_object_new_string(ok ? "ok" : "degraded"));
	json_object_object_add(o, "version", json_object_new_string(DETM_VERSION));
	json_object_object_add(o, "api_version", json_object_new_int(DETM_API_VERSION));
	json_object_object_add(o, "uptime_s", json_object_new_int64(
	    (mono_us() - r->app->started_mono_us) / 1000000));
	json_object_object_add(o, "db", json_object_new_string(ok ? "ok" : "error"));
	json_object_object_add(o, "schema_version", json_object_new_int(
	    ok ? store_schema_version(r->app->store) : -1));
	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(o, "data_dir", json_object_new_string(r->app->cfg->data_dir));
	return req_reply(r, ok ? 200 : 503, o);
}

int
api_version(struct req *r, struct derr *e)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string("detmd"));
	json_object_object_add(o, "version", json_object_new_string(DETM_VERSION));
	json_object_object_add(o, "api_version", json_object_new_int(DETM_API_VERSION));
	return req_reply(r, 200, o);
}

int
api_capabilities(struct req *r, struct derr *e)
{
	json_object *o = json_object_new_object(), *caps = json_object_new_object();
	size_t i;

	for (i = 0; i < ARRAY_LEN(capabilities); i++)
		json_object_object_add(caps, capabilities[i].name,
		    json_object_new_boolean(capabilities[i].on));
	json_object_object_add(o, "api_version", json_object_new_int(DETM_API_VERSION));
	json_object_object_add(o, "version", json_object_new_string(DETM_VERSION));
	json_object_object_add(o, "capabilities", caps);
	return req_reply(r, 200, o);
}

int
api_routes_list(struct req *r, struct derr *e)
{
	json_object *arr = json_object_new_array(), *o = json_object_new_object();
	size_t i;

	for (i = 0; i < api_nroutes; i++) {
		json_object *rt = json_object_new_object();

		json_object_object_add(rt, "method", json_object_new_string(api_routes[i].method));
		json_object_object_add(rt, "path", json_object_new_string(api_routes[i].pattern));
		json_object_object_add(rt, "summary", json_object_new_string(api_routes[i].summary));
		json_object_object_add(rt, "max_body", json_object_new_int64((int64_t)api_routes[i].max_body));
		json_object_array_add(arr, rt);
	}
	json_object_object_add(o, "routes", arr);
	return req_reply(r, 200, o);
}
