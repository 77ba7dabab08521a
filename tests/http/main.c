/*
 * main.c - httpcase: run data-driven HTTP cases against a live detmd.
 *
 *   httpcase --url http://127.0.0.1:PORT [--var NAME=VALUE]... [-v] FILE...
 *
 * Each file runs top to bottom with its own variables (captures do not
 * leak between files), pre-set with URL, HOSTPORT (127.0.0.1:PORT), PORT
 * and every --var. For each step: expand the path, header values and body,
 * add "Content-Type: application/json" when the step has a body and names
 * no Content-Type, send, check, and print
 *   ok   FILE: STEP
 *   FAIL FILE: STEP: expected ..., got ...      (then the response body)
 * A file that does not parse counts as one failure. The closing line is
 * "N passed, N failed"; the exit status is 1 if anything failed, 2 on a
 * usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "harness.h"
#include "httpcase.h"

HARNESS_DEFINE;
static int verbose;

static void
sleep_ms(int ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

static void
print_body(const struct hc_response *resp)
{
	size_t n = resp->body_len < 400 ? resp->body_len : 400;
	size_t i;

	fputs("     response: ", stdout);
	printf("%ld ", resp->status);
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)resp->body[i];

		if (ch >= 0x20 && ch != 0x7f)
			putchar(ch);
		else
			printf("\\x%02x", ch);
	}
	printf("%s\n", resp->body_len > n ? "..." : "");
}

/* Run one step; returns 1 if it passed. */
static int
run_step(const char *base, const char *fname, const struct hc_step *st, struct hc_vars *vars)
{
	struct hc_request req;
	struct hc_response resp;
	char **hdrs = NULL, *path = NULL, *url = NULL, *body = NULL, *err = NULL, why[4096];
	size_t i, nh = 0, blen = 0;
	int has_ct = 0, ok = 0;

	memset(&resp, 0, sizeof resp);
	if (st->sleep_ms > 0)
		sleep_ms(st->sleep_ms);
	if ((path = hc_expand(st->path, vars, 0, NULL, &err)) == NULL)
		goto bad;
	hdrs = hc_xmalloc((st->nheaders + 1) * sizeof *hdrs);
	for (i = 0; i < st->nheaders; i++) {
		if ((hdrs[nh] = hc_expand(st->headers[i], vars, 1, NULL, &err)) == NULL)
			goto bad;
		if (strncasecmp(hdrs[nh], "Content-Type:", 13) == 0)
			has_ct = 1;
		nh++;
	}
	if (st->body != NULL) {
		if ((body = hc_expand(st->body, vars, 1, &blen, &err)) == NULL)
			goto bad;
		if (!has_ct)
			hdrs[nh++] = hc_xstrdup("Content-Type: application/json");
	}
	url = hc_xasprintf("%s%s", base, path);
	memset(&req, 0, sizeof req);
	req.method = st->method;
	req.url = url;
	req.headers = (const char *const *)hdrs;
	req.nheaders = nh;
	req.body = body;
	req.body_len = blen;
	hc_http_do(&req, &resp);
	ok = hc_check_step(st, &resp, vars, why, sizeof why);
	if (ok) {
		printf("ok   %s: %s\n", fname, st->name);
		if (verbose)
			print_body(&resp);
	} else {
		printf("FAIL %s: %s (%s %s): %s\n", fname, st->name, st->method, path, why);
		print_body(&resp);
	}
	goto out;
bad:
	printf("FAIL %s: %s: line %d: %s\n", fname, st->name, st->lineno, err);
out:
	for (i = 0; i < nh; i++)
		free(hdrs[i]);
	free(hdrs);
	free(path);
	free(url);
	free(body);
	free(err);
	hc_response_free(&resp);
	return ok;
}

static void
usage(void)
{
	fputs("usage: httpcase --url http://HOST:PORT [--var NAME=VALUE]... [-v] FILE...\n", stderr);
	exit(2);
}

int
main(int argc, char **argv)
{
	struct hc_vars globals = { NULL, NULL, 0 }, vars;
	const char *url = NULL, *hp;
	char *name, *eq, *err = NULL;
	int i, nfiles = 0;
	size_t j, k;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--url") == 0 && i + 1 < argc) {
			url = argv[++i];
		} else if (strcmp(argv[i], "--var") == 0 && i + 1 < argc) {
			if ((eq = strchr(argv[++i], '=')) == NULL)
				usage();
			name = hc_xstrndup(argv[i], (size_t)(eq - argv[i]));
			hc_vars_set(&globals, name, eq + 1);
			free(name);
		} else if (strcmp(argv[i], "-v") == 0) {
			verbose = 1;
		} else if (argv[i][0] == '-') {
			usage();
		} else {
			break;
		}
	}
	if (url == NULL || i == argc)
		usage();
	hp = strstr(url, "://");
	hp = hp != NULL ? hp + 3 : url;
	hc_vars_set(&globals, "URL", url);
	hc_vars_set(&globals, "HOSTPORT", hp);
	hc_vars_set(&globals, "PORT", strrchr(hp, ':') != NULL ? strrchr(hp, ':') + 1 : "80");

	hc_http_init();
	for (; i < argc; i++, nfiles++) {
		struct hc_file f;
		const char *fname = base_name(argv[i]);

		if (hc_file_load(argv[i], &f, &err) != 0) {
			printf("FAIL %s: %s\n", fname, err);
			free(err);
			err = NULL;
			harness_count(false);
			continue;
		}
		memset(&vars, 0, sizeof vars);
		for (k = 0; k < globals.n; k++)
			hc_vars_set(&vars, globals.names[k], globals.values[k]);
		for (j = 0; j < f.nsteps; j++)
			harness_count(run_step(url, fname, &f.steps[j], &vars));
		hc_vars_free(&vars);
		hc_file_free(&f);
	}
	hc_http_cleanup();
	hc_vars_free(&globals);
	return harness_finish();
}
