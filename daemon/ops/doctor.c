/*
 * doctor.c - the doctor's runner, its result and the `detmd doctor` CLI
 * (doctor.h). The checks themselves are in doctor_checks.c.
 *
 * A run (states: running -> collected) owns one thread per check and a
 * reference count: the caller holds one reference and each check thread
 * one, so a check that outlives the caller's cap still has its context,
 * the redactor and its result array until it ends; the last reference out
 * frees the run. Inside the daemon, a call that arrives while a run is
 * under way waits for that run and gets a copy of its result.
 */
#include "doctor.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/httpc.h"
#include "core/util.h"
#include "doctor_int.h"

struct job {
	struct run *run;
	struct dctx ctx;
	bool done;
};

struct run {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs, pending;
	struct redact *rd;
	struct job jobs[];
};

void
dres(struct dctx *c, const char *section, const char *name, const char *status, const char *hint,
    const char *fmt, ...)
{
	char detail[1024];
	va_list ap;
	json_object *o = json_object_new_object();
	char *d, *h;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	utf8_fix_in_place(detail, sizeof detail);
	d = redact_text(c->rd, detail, NULL);
	h = redact_text(c->rd, hint ? hint : "", NULL);
	json_object_object_add(o, "section", json_object_new_string(section));
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "status", json_object_new_string(status));
	json_object_object_add(o, "detail", json_object_new_string(d));
	json_object_object_add(o, "hint", json_object_new_string(h));
	json_object_array_add(c->out, o);
	free(d);
	free(h);
}

static void
recount(json_object *res)
{
	static const char *const names[] = { "ok", "warn", "fail", "skip" };
	json_object *arr = json_object_object_get(res, "results"), *sum = json_object_new_object();
	int n[4] = { 0, 0, 0, 0 };

	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		const char *st = json_object_get_string(json_object_object_get(
		    json_object_array_get_idx(arr, i), "status"));

		for (int k = 0; k < 4; k++)
			if (st != NULL && strcmp(st, names[k]) == 0)
				n[k]++;
	}
	for (int k = 0; k < 4; k++)
		json_object_object_add(sum, names[k], json_object_new_int(n[k]));
	json_object_object_add(res, "summary", sum);
	json_object_object_add(res, "exit_code", json_object_new_int(n[2] ? 2 : n[1] ? 1 : 0));
}

void
doctor_add(json_object *res, const char *section, const char *name, const char *status,
    const char *detail, const char *hint)
{
	struct dctx c = { NULL, false, NULL, json_object_object_get(res, "results") };

	dres(&c, section, name, status, hint, "%s", detail);
	recount(res);
}

static void
run_unref(struct run *r)
{
	bool last;

	pthread_mutex_lock(&r->mu);
	last = --r->refs == 0;
	pthread_mutex_unlock(&r->mu);
	if (!last)
		return;
	for (size_t i = 0; i < doctor_nchecks; i++)
		json_object_put(r->jobs[i].ctx.out);
	redact_free(r->rd);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r);
}

static void *
job_main(void *p)
{
	struct job *j = p;
	struct run *r = j->run;

	doctor_checks[j - r->jobs].fn(&j->ctx);
	pthread_mutex_lock(&r->mu);
	j->done = true;
	r->pending--;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	run_unref(r);
	return NULL;
}

static struct redact *
redactor(const struct config *cfg)
{
	const char *lits[CONFIG_SECRETS_MAX];

	config_secrets(cfg, lits);
	return redact_new(lits);
}

/* Starts every check, waits up to cap_ms, collects. */
static json_object *
run_checks(const struct config *cfg, bool in_daemon, long cap_ms)
{
	struct run *r = xcalloc(1, sizeof *r + doctor_nchecks * sizeof r->jobs[0]);
	json_object *res = json_object_new_object(), *arr = json_object_new_array();
	int64_t t0 = mono_us();
	struct timespec dl;
	pthread_attr_t at;
	size_t i;

	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	r->rd = redactor(cfg);
	r->refs = 1;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < doctor_nchecks; i++) {
		struct job *j = &r->jobs[i];
		pthread_t th;

		j->run = r;
		j->ctx = (struct dctx){ cfg, in_daemon, r->rd, json_object_new_array() };
		pthread_mutex_lock(&r->mu);
		r->refs++;
		r->pending++;
		pthread_mutex_unlock(&r->mu);
		if (pthread_create(&th, &at, job_main, j) != 0) {
			dres(&j->ctx, doctor_checks[i].section, doctor_checks[i].name, "fail", NULL,
			    "could not start a thread for this check");
			pthread_mutex_lock(&r->mu);
			j->done = true;
			r->refs--;
			r->pending--;
			pthread_mutex_unlock(&r->mu);
		}
	}
	pthread_attr_destroy(&at);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += cap_ms / 1000;
	dl.tv_nsec += (cap_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->mu);
	while (r->pending > 0 && pthread_cond_timedwait(&r->cv, &r->mu, &dl) != ETIMEDOUT)
		;
	for (i = 0; i < doctor_nchecks; i++) {
		struct job *j = &r->jobs[i];

		if (j->done) {
			for (size_t k = 0; k < json_object_array_length(j->ctx.out); k++)
				json_object_array_add(arr, json_object_get(json_object_array_get_idx(j->ctx.out, k)));
		} else {
			struct dctx c = { cfg, in_daemon, r->rd, arr };

			dres(&c, doctor_checks[i].section, doctor_checks[i].name, "fail",
			    "something this check waits on hangs (an X server, a disk, a model server)",
			    "did not finish within %ld ms", cap_ms);
		}
	}
	pthread_mutex_unlock(&r->mu);
	json_object_object_add(res, "results", arr);
	json_object_object_add(res, "mode", json_object_new_string(in_daemon ? "daemon" : "in-process"));
	json_object_object_add(res, "duration_ms", json_object_new_int64((mono_us() - t0) / 1000));
	recount(res);
	run_unref(r);
	return res;
}

/* Inside the daemon: one run at a time; latecomers share it. */
static pthread_mutex_t share_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t share_cv = PTHREAD_COND_INITIALIZER;
static bool share_running;
static unsigned long share_gen;
static char *share_last;        /* the last result as JSON text */

json_object *
doctor_run(const struct config *cfg, bool in_daemon, long cap_ms)
{
	json_object *res;
	unsigned long gen;

	if (!in_daemon)
		return run_checks(cfg, false, cap_ms);
	pthread_mutex_lock(&share_mu);
	if (share_running) {
		gen = share_gen;
		while (share_gen == gen)
			pthread_cond_wait(&share_cv, &share_mu);
		res = json_tokener_parse(share_last);
		pthread_mutex_unlock(&share_mu);
		return res;
	}
	share_running = true;
	pthread_mutex_unlock(&share_mu);
	res = run_checks(cfg, true, cap_ms);
	pthread_mutex_lock(&share_mu);
	free(share_last);
	share_last = xstrdup(json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN));
	share_gen++;
	share_running = false;
	pthread_cond_broadcast(&share_cv);
	pthread_mutex_unlock(&share_mu);
	return res;
}

/* ---- the CLI ---- */

static void
print_table(json_object *res)
{
	json_object *arr = json_object_object_get(res, "results"), *sum = json_object_object_get(res, "summary");
	bool color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;

	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		const char *st = json_object_get_string(json_object_object_get(o, "status"));
		const char *hint = json_object_get_string(json_object_object_get(o, "hint"));
		const char *col = strcmp(st, "ok") == 0 ? "32" : strcmp(st, "warn") == 0 ? "33" :
		    strcmp(st, "fail") == 0 ? "31" : "90";
		char name[96];

		snprintf(name, sizeof name, "%s/%s", json_object_get_string(json_object_object_get(o, "section")),
		    json_object_get_string(json_object_object_get(o, "name")));
		if (color)
			printf("\033[%sm%-4s\033[0m", col, st);
		else
			printf("%-4s", st);
		printf("  %-28s %s\n", name, json_object_get_string(json_object_object_get(o, "detail")));
		if (hint != NULL && hint[0] != '\0')
			printf("      %-28s -> %s\n", "", hint);
	}
	printf("\n%d ok, %d warn, %d fail, %d skip (%s)\n",
	    json_object_get_int(json_object_object_get(sum, "ok")),
	    json_object_get_int(json_object_object_get(sum, "warn")),
	    json_object_get_int(json_object_object_get(sum, "fail")),
	    json_object_get_int(json_object_object_get(sum, "skip")),
	    json_object_get_string(json_object_object_get(res, "mode")));
}

/* GET url/api/doctor. 0: *res set; 1: nothing answers; -1: it answered
 * with an error (printed). */
static int
ask_daemon(const char *url, const char *token, json_object **res)
{
	char *u = xasprintf("%s/api/doctor", url), *auth = NULL;
	const char *hdr[2] = { NULL, NULL };
	struct httpc_req rq = { "GET", u, hdr, NULL, 60000, 4 * 1024 * 1024 };
	struct httpc_resp rs;
	int rc;

	if (token[0] != '\0')
		hdr[0] = auth = xasprintf("Authorization: Bearer %s", token);
	rc = httpc_do(&rq, &rs);
	if (rc == HTTPC_ECONNECT)
		rc = 1;
	else if (rc != HTTPC_OK || rs.status != 200 || rs.json == NULL ||
	    json_object_object_get(rs.json, "exit_code") == NULL) {
		fprintf(stderr, "detmd doctor: %s answered HTTP %ld: %s%s\n", u, rs.status, rs.excerpt, rs.error);
		rc = -1;
	} else {
		*res = json_object_get(rs.json);
		rc = 0;
	}
	httpc_resp_free(&rs);
	free(auth);
	free(u);
	return rc;
}

/* The daemon's URL: --url, ACU_URL, else the configured address. */
static char *
daemon_url(const char *flag, const struct config *cfg)
{
	const char *env = getenv("ACU_URL"), *host = cfg->listen;
	long port = cfg->port;
	char *path;
	FILE *f;

	if (flag != NULL)
		return xstrdup(flag);
	if (env != NULL && env[0] != '\0')
		return xstrdup(env);
	if (port == 0) {
		path = xasprintf("%s/detmd.port", cfg->data_dir);
		if ((f = fopen(path, "re")) != NULL) {
			if (fscanf(f, "%ld", &port) != 1)
				port = 0;
			fclose(f);
		}
		free(path);
	}
	if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0)
		host = "127.0.0.1";
	return strchr(host, ':') ? xasprintf("http://[%s]:%ld", host, port) : xasprintf("http://%s:%ld", host, port);
}

int
doctor_cli(int argc, char **argv)
{
	char **rest = xcalloc((size_t)argc + 1, sizeof *rest);
	const char *url_flag = NULL;
	bool as_json = false;
	struct config cfg;
	json_object *res = NULL;
	char *url;
	int n = 0, rc, code;

	rest[n++] = argv[0];
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			as_json = true;
		else if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
			url_flag = argv[++i];
		else if (strncmp(argv[i], "--url=", 6) == 0)
			url_flag = argv[i] + 6;
		else
			rest[n++] = argv[i];
	}
	if ((rc = config_load(&cfg, n, rest)) != 0) {
		free(rest);
		if (rc > 0)
			printf("\ndetmd doctor [--url URL] [--json] [options]: asks the detmd at URL (ACU_URL;\n"
			    "default the configured address) for GET /api/doctor, or runs the checks in\n"
			    "process when none answers. Exit status: 0 all ok, 1 a warning, 2 a failure.\n");
		return rc > 0 ? 0 : 2;
	}
	free(rest);
	url = daemon_url(url_flag, &cfg);
	rc = ask_daemon(url, cfg.token, &res);
	if (rc == 1) {
		char detail[600];

		res = doctor_run(&cfg, false, 20000);
		snprintf(detail, sizeof detail, "no detmd answers at %s: the checks ran in this process on %s",
		    url, cfg.data_dir);
		doctor_add(res, "daemon", "running", "skip", detail, NULL);
	}
	free(url);
	if (res == NULL)
		return 2;
	if (as_json)
		printf("%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		print_table(res);
	code = json_object_get_int(json_object_object_get(res, "exit_code"));
	json_object_put(res);
	fflush(stdout);
	/* A check that outlived its cap may still read cfg: leave without
	 * freeing it (the process ends here). */
	_exit(code);
}
