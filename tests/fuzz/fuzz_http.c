/*
 * fuzz_http.c - libFuzzer target: detmd's request handling below the
 * socket. Input byte 0 picks a route of the table (or, 0xff, runs the rest
 * as a URL path through the route matcher against every pattern); byte 1
 * picks the path parameters (a real task id, an unknown id, ordinals, junk,
 * the computer dialects' names);
 * the rest is the request body, parsed as the HTTP layer does (jx_parse,
 * object only) and handed to the route's handler with a real store in a
 * temporary data dir. Every module starts as in detmd (modules_start: the
 * smart-wait engine, takeover, usage and budgets run). Xvfb is /bin/false
 * and no display exists, so desktop routes fail fast instead of starting
 * servers; routes that stream or sleep on purpose (events, MJPEG, the
 * export and dump ZIPs, /api/commands, desktop sleep) and task deletion
 * are skipped.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/jx.h"
#include "core/log.h"
#include "http/api.h"
#include "http/http.h"
#include "modules.h"
#include "task/task.h"

static struct config cfg;
static struct app app;
static char task_id[ID_LEN];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/detm-fuzz-http.XXXXXX";
	static char a0[] = "detmd", a1[] = "--data-dir", a3[] = "--port", a4[] = "0",
	    a5[] = "--xvfb", a6[] = "/bin/false", a7[] = "--display", a8[] = ":1999",
	    a9[] = "--workspace";
	char ws[64];
	char *args[] = { a0, a1, dir, a3, a4, a5, a6, a7, a8, a9, ws, NULL };
	struct task_reg reg = { .name = "fuzz" };
	const char *what;
	struct derr e;

	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);       /* as detmd's main: a closed pipe is an error, not a death */
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(ws, sizeof ws, "%s/ws", dir);   /* the memory routes write here */
	if (config_load(&cfg, 11, args) != 0)
		abort();
	app.cfg = &cfg;
	if (modules_start(&app, &what, &e) != 0 ||
	    task_register(app.store, &reg, task_id, &e) != 0) {
		fprintf(stderr, "fuzz_http: %s%s\n", what, e.message);
		abort();
	}
	return 0;
}

static bool
skipped(const struct route *rt)
{
	static const char *const deny[] = { "/api/events", "live.mjpeg", "/api/commands",
		"/api/desktop/action", "/export", "/api/dump" };   /* the ZIPs stream too */

	for (size_t i = 0; i < sizeof deny / sizeof deny[0]; i++)
		if (strstr(rt->pattern, deny[i]) != NULL)
			return true;
	return strcmp(rt->method, "DELETE") == 0 && strcmp(rt->pattern, "/api/tasks/{id}") == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static const char *const ids[] = { NULL, "deadbeef", "0", "1", "-1", "99999999999", "zz/..",
		"clip", "index.html", "abcd1234%2Fitems%2F1", "ab%00cd", "%00",
		"anthropic", "openai", "gemini" };      /* /api/computer/{dialect} */
	const char *params[ROUTE_MAX_PARAMS];
	size_t lens[ROUTE_MAX_PARAMS];
	const struct route *rt;
	json_object *body;
	struct derr e;
	struct req r;
	int np = 0;

	if (n < 2)
		return 0;
	if (d[0] == 0xff) {
		char *path = strndup((const char *)d + 1, n - 1);

		for (size_t i = 0; i < api_nroutes; i++)
			(void)http_route_match(api_routes[i].pattern, path, params, lens, &np);
		free(path);
		return 0;
	}
	rt = &api_routes[d[0] % api_nroutes];
	if (skipped(rt))
		return 0;
	derr_clear(&e);
	body = n > 2 ? jx_parse((const char *)d + 2, n - 2, &e) : json_object_new_object();
	if (body == NULL || !json_object_is_type(body, json_type_object)) {
		json_object_put(body);
		return 0;
	}
	memset(&r, 0, sizeof r);
	r.fd = -1;
	r.app = &app;
	r.method = rt->method;
	r.path = rt->pattern;
	r.body = body;
	r.query = json_object_new_object();
	r.status = 200;
	for (const char *p = rt->pattern; (p = strchr(p, '{')) != NULL && r.nparams < ROUTE_MAX_PARAMS; p++) {
		const char *v = ids[(d[1] >> (2 * r.nparams)) % (sizeof ids / sizeof ids[0])];

		r.params[r.nparams++] = v != NULL ? v : task_id;
	}
	derr_clear(&e);
	(void)rt->fn(&r, &e);
	json_object_put(r.reply);
	free(r.raw);
	if (r.fd >= 0)
		close(r.fd);
	if (r.stream_done != NULL)
		r.stream_done(r.stream_cls);
	json_object_put(r.query);
	json_object_put(body);
	return 0;
}
