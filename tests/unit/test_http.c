/* test_http.c - route matching and the Host/Origin rules (http.c). */
#include <string.h>

#include "http/http.h"
#include "mcp.h"
#include "toolreq.h"
#include "tools.h"
#include "unit.h"

static int
match(const char *pattern, const char *path, int want_params, const char *p0, const char *p1)
{
	const char *params[ROUTE_MAX_PARAMS];
	size_t lens[ROUTE_MAX_PARAMS];
	int n;

	if (!http_route_match(pattern, path, params, lens, &n))
		return 0;
	if (n != want_params)
		return 0;
	if (p0 && (lens[0] != strlen(p0) || strncmp(params[0], p0, lens[0]) != 0))
		return 0;
	if (p1 && (lens[1] != strlen(p1) || strncmp(params[1], p1, lens[1]) != 0))
		return 0;
	return 1;
}

static void
test_route_match_binds_placeholders(void)
{
	CHECK(match("/api/tasks", "/api/tasks", 0, NULL, NULL));
	CHECK(match("/api/tasks", "/api/tasks/", 0, NULL, NULL));
	CHECK(match("/api/tasks/{id}", "/api/tasks/abc", 1, "abc", NULL));
	CHECK(match("/api/tasks/{id}/items/{ordinal}", "/api/tasks/abc/items/3", 2, "abc", "3"));
	CHECK(!match("/api/tasks/{id}", "/api/tasks/", 1, NULL, NULL));
	CHECK(!match("/api/tasks/{id}", "/api/tasks/a/b", 1, NULL, NULL));
	CHECK(!match("/api/tasks", "/api/taskss", 0, NULL, NULL));
	CHECK(!match("/api/tasks/{id}/items", "/api/tasks/x/item", 1, NULL, NULL));
	CHECK(!match("/api/health", "/api", 0, NULL, NULL));
	/* "{name*}" takes the rest of the path, slashes and all, never nothing */
	CHECK(match("/api/tasks/{id}/files/{path*}", "/api/tasks/abc/files/a/b/c.txt", 2, "abc", "a/b/c.txt"));
	CHECK(match("/api/tasks/{id}/files/{path*}", "/api/tasks/abc/files/x", 2, "abc", "x"));
	CHECK(match("/api/tasks/{id}/files/{path*}", "/api/tasks/abc/files/a%2Fb", 2, "abc", "a%2Fb"));
	CHECK(!match("/api/tasks/{id}/files/{path*}", "/api/tasks/abc/files/", 2, NULL, NULL));
	CHECK(!match("/api/tasks/{id}/files/{path*}", "/api/tasks/abc/files", 2, NULL, NULL));
}

static void
test_every_route_pattern_is_reachable_and_unique(void)
{
	size_t i, j;

	for (i = 0; i < api_nroutes; i++) {
		CHECK(api_routes[i].fn != NULL);
		CHECK(api_routes[i].pattern[0] == '/');
		for (j = i + 1; j < api_nroutes; j++)
			CHECK(!(strcmp(api_routes[i].method, api_routes[j].method) == 0 &&
			    strcmp(api_routes[i].pattern, api_routes[j].pattern) == 0));
	}
}

static void
test_host_must_be_loopback_or_the_listen_address(void)
{
	CHECK(http_host_ok("127.0.0.1:18790", "127.0.0.1", 18790));
	CHECK(http_host_ok("localhost:18790", "127.0.0.1", 18790));
	CHECK(http_host_ok("[::1]:18790", "127.0.0.1", 18790));
	CHECK(http_host_ok("localhost", "127.0.0.1", 18790));
	CHECK(!http_host_ok("evil.example:18790", "127.0.0.1", 18790));
	CHECK(!http_host_ok("127.0.0.1:9999", "127.0.0.1", 18790));
	CHECK(http_host_ok("10.0.0.5:18790", "10.0.0.5", 18790));
	CHECK(http_host_ok(NULL, "127.0.0.1", 18790));
}

static void
test_origin_must_be_same_origin(void)
{
	CHECK(http_origin_ok(NULL, "127.0.0.1:18790"));
	CHECK(http_origin_ok("http://127.0.0.1:18790", "127.0.0.1:18790"));
	CHECK(!http_origin_ok("http://evil.example", "127.0.0.1:18790"));
	CHECK(!http_origin_ok("null", "127.0.0.1:18790"));
	CHECK(!http_origin_ok("http://localhost:3000", "127.0.0.1:18790"));
	CHECK(!http_origin_ok("https://127.0.0.1:18790", "127.0.0.1:18790"));
}

static bool
takes(const struct route *rt, const char *field)
{
	for (size_t i = 0; rt->fields != NULL && rt->fields[i] != NULL; i++)
		if (strcmp(rt->fields[i], field) == 0)
			return true;
	return false;
}

/* docs/api.md "Bodies": a route with a body lists its fields (or is the
 * tool router, which checks a tool's schema); one without has none, and no
 * body flag (ROUTE_STREAM, a stream's slot, and ROUTE_OPEN, the probes'
 * "no token", are not about the body). */
static void
test_every_body_route_declares_its_fields(void)
{
	for (size_t i = 0; i < api_nroutes; i++) {
		const struct route *rt = &api_routes[i];

		/* An open route is a GET without placeholders (http_check.c). */
		if (rt->flags & ROUTE_OPEN)
			CHECK(strcmp(rt->method, "GET") == 0 && strchr(rt->pattern, '{') == NULL);
		if (rt->max_body == 0)
			CHECK(rt->fields == NULL && (rt->flags & ~(ROUTE_STREAM | ROUTE_OPEN)) == 0);
		else
			CHECK((rt->fields != NULL) !=
			    ((rt->flags & (ROUTE_TOOL | ROUTE_RPC | ROUTE_FOREIGN)) != 0));
		/* Only the Python DETM's routes are lenient. */
		if (rt->flags & ROUTE_LENIENT)
			CHECK(strncmp(rt->pattern, "/api/", 5) != 0);
	}
}

/* tools/list's text built at build time is what the table builds now, for
 * every protocol version (a stale build/gen/tools_list.c would differ). */
static void
test_tools_list_text_is_the_table(void)
{
	for (int v = 0; v < MCP_V_COUNT; v++) {
		json_object *built = mcp_tools_array(v);
		json_object *text = mcp_tools_text[v] ? json_tokener_parse(mcp_tools_text[v]) : NULL;

		CHECK(text != NULL);
		CHECK(json_object_equal(built, text));
		CHECK(json_object_array_length(built) == tools_count());
		json_object_put(built);
		json_object_put(text);
	}
}

/* Every argument a tool puts in a request body is a field its route takes:
 * a strict route must never refuse what detm-mcp and the tool router send. */
static void
test_every_tool_body_argument_is_a_route_field(void)
{
	char err[256], path[512];

	CHECK(tools_init(err, sizeof err) == 0);
	for (size_t i = 0; i < tools_count(); i++) {
		const struct tool *t = tools_at(i);
		json_object *args = json_object_new_object(), *query = json_object_new_object();
		json_object *body = json_object_new_object(), *props = NULL;
		const struct route *rt = NULL;

		if (json_object_object_get_ex(t->input_schema, "properties", &props)) {
			json_object_object_foreach(props, k, v) {
				(void)v;
				json_object_object_add(args, k, json_object_new_string("0000000a"));
			}
		}
		CHECK(toolreq_build(t, args, true, path, sizeof path, query, body) == 0);
		path[strcspn(path, "?")] = '\0';
		/* The router posts it to the thread first (api_tools.c). */
		if (t->flags & TOOL_POST_MESSAGE_FIRST)
			json_object_object_del(body, "message");
		for (size_t j = 0; j < api_nroutes && rt == NULL; j++) {
			const char *params[ROUTE_MAX_PARAMS];
			size_t lens[ROUTE_MAX_PARAMS];
			int n;

			if (strcmp(api_routes[j].method, t->method) == 0 &&
			    http_route_match(api_routes[j].pattern, path, params, lens, &n))
				rt = &api_routes[j];
		}
		CHECK(rt != NULL);
		if (rt != NULL && !(rt->flags & (ROUTE_LENIENT | ROUTE_TOOL))) {
			json_object_object_foreach(body, bk, bv) {
				(void)bv;
				if (!takes(rt, bk))
					fprintf(stderr, "     tool %s: %s %s does not take '%s'\n", t->name,
					    rt->method, rt->pattern, bk);
				CHECK(takes(rt, bk));
			}
		}
		json_object_put(args);
		json_object_put(query);
		json_object_put(body);
	}
	tools_free();
}

/* video_record: the call follows clips up to 55 s, hands back longer
 * ones, and an explicit wait wins; the body always starts the clip
 * without waiting (the call follows it itself). */
static bool
follows(const char *body_json)
{
	json_object *b = json_tokener_parse(body_json), *w = NULL;
	bool f = tools_clip_follows(b);

	CHECK(json_object_object_get_ex(b, "wait", &w) && !json_object_get_boolean(w));
	json_object_put(b);
	return f;
}

static void
test_clip_calls_follow_short_clips_only(void)
{
	CHECK(follows("{}"));
	CHECK(follows("{\"duration\":55}"));
	CHECK(!follows("{\"duration\":56}"));
	CHECK(!follows("{\"duration\":120}"));
	CHECK(!follows("{\"duration\":2,\"wait\":false}"));
	CHECK(follows("{\"duration\":90,\"wait\":true}"));
}

const struct harness_test http_tests[] = {
	{ "clip_calls_follow_short_clips_only", test_clip_calls_follow_short_clips_only },
	{ "every_body_route_declares_its_fields", test_every_body_route_declares_its_fields },
	{ "every_tool_body_argument_is_a_route_field", test_every_tool_body_argument_is_a_route_field },
	{ "tools_list_text_is_the_table", test_tools_list_text_is_the_table },
	{ "route_match_binds_placeholders", test_route_match_binds_placeholders },
	{ "every_route_pattern_is_reachable_and_unique", test_every_route_pattern_is_reachable_and_unique },
	{ "host_must_be_loopback_or_the_listen_address", test_host_must_be_loopback_or_the_listen_address },
	{ "origin_must_be_same_origin", test_origin_must_be_same_origin },
	{ NULL, NULL },
};
