/* test_http.c - route matching and the Host/Origin rules (http.c). */
#include <string.h>

#include "http.h"
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

const struct harness_test http_tests[] = {
	{ "route_match_binds_placeholders", test_route_match_binds_placeholders },
	{ "every_route_pattern_is_reachable_and_unique", test_every_route_pattern_is_reachable_and_unique },
	{ "host_must_be_loopback_or_the_listen_address", test_host_must_be_loopback_or_the_listen_address },
	{ "origin_must_be_same_origin", test_origin_must_be_same_origin },
	{ NULL, NULL },
};
