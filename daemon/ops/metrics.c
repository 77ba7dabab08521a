/*
 * metrics.c - see metrics.h.
 *
 * State: per route index (plus one slot for "no route"): a request count
 * per status slot and a latency histogram (bucket counts, sum, count), all
 * atomics, never reset. Statuses outside the slot table count under
 * status "other". Gauges are read at render time (the database through a
 * read snapshot, displays, wake and usage counters through their modules).
 *
 * Does not: serve HTTP (api_usage.c), know the route table (it gets the
 * labels in struct metrics_view).
 */
#include <microhttpd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/ocr.h"
#include "core/buf.h"
#include "metrics.h"
#include "task/drain.h"
#include "task/usage.h"
#include "task/wake.h"
#include "x11/display.h"

#define NSLOTS (METRICS_MAX_ROUTES + 1)   /* the last: no route matched */
#define METRICS_MAX_TEXT (4 * 1024 * 1024)

static const int statuses[] = { 0, 101, 200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 403, 404,
	405, 408, 409, 413, 415, 416, 429, 500, 501, 502, 503, 504 };
#define NSTATUS (sizeof statuses / sizeof statuses[0] + 1)  /* + "other" */

static const double bounds[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10, 30 };
#define NBUCKETS (sizeof bounds / sizeof bounds[0] + 1)     /* + +Inf */

static struct {
	_Atomic uint64_t by_status[NSLOTS][NSTATUS];
	_Atomic uint64_t bucket[NSLOTS][NBUCKETS];
	_Atomic uint64_t sum_us[NSLOTS];
} metrics_state;

static size_t
status_slot(unsigned s)
{
	for (size_t i = 0; i < NSTATUS - 1; i++)
		if ((unsigned)statuses[i] == s)
			return i;
	return NSTATUS - 1;
}

void
metrics_observe(int route, struct MHD_Connection *conn, int64_t usec)
{
	const union MHD_ConnectionInfo *ci = conn != NULL ?
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_HTTP_STATUS) : NULL;
	size_t slot = route >= 0 && route < METRICS_MAX_ROUTES ? (size_t)route : NSLOTS - 1;
	double s = (double)(usec < 0 ? 0 : usec) / 1e6;
	size_t b = 0;

	while (b < NBUCKETS - 1 && s > bounds[b])
		b++;
	atomic_fetch_add_explicit(&metrics_state.by_status[slot][status_slot(ci != NULL ? ci->http_status : 0)], 1,
	    memory_order_relaxed);
	atomic_fetch_add_explicit(&metrics_state.bucket[slot][b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&metrics_state.sum_us[slot], (uint64_t)(usec < 0 ? 0 : usec), memory_order_relaxed);
}

/* ---- text ---- */

static void bprintf(struct buf *b, const char *fmt, ...) DETM_PRINTF(2, 3);
static void
bprintf(struct buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	/* Past the cap a line is dropped: the text stays well formed. */
	if (n > 0 && buf_append(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1) != 0)
		return;
}

static void
family(struct buf *b, const char *name, const char *type, const char *help)
{
	bprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value with \\, " and newline escaped (into out). */
static const char *
esc(const char *s, char *out, size_t cap)
{
	size_t o = 0;

	for (; s != NULL && *s != '\0' && o + 3 < cap; s++) {
		if (*s == '\\' || *s == '"') {
			out[o++] = '\\';
			out[o++] = *s;
		} else if (*s == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			out[o++] = *s;
		}
	}
	out[o] = '\0';
	return out;
}

static void
route_label(const struct metrics_view *v, size_t slot, char *out, size_t cap)
{
	char m[16], p[256];

	if (slot < v->nroutes)
		snprintf(out, cap, "method=\"%s\",route=\"%s\"", esc(v->methods[slot], m, sizeof m),
		    esc(v->patterns[slot], p, sizeof p));
	else
		snprintf(out, cap, "method=\"\",route=\"(none)\"");
}

static bool
slot_used(const struct metrics_view *v, size_t slot)
{
	if (slot != NSLOTS - 1 && slot >= v->nroutes)
		return false;
	for (size_t k = 0; k < NBUCKETS; k++)
		if (atomic_load_explicit(&metrics_state.bucket[slot][k], memory_order_relaxed) != 0)
			return true;
	return false;
}

static void
http_families(struct buf *b, const struct metrics_view *v)
{
	char lab[320];

	family(b, "detm_http_requests_total", "counter", "HTTP requests answered, by route pattern and status.");
	for (size_t i = 0; i < NSLOTS; i++) {
		if (!slot_used(v, i))
			continue;
		route_label(v, i, lab, sizeof lab);
		for (size_t k = 0; k < NSTATUS; k++) {
			uint64_t n = atomic_load_explicit(&metrics_state.by_status[i][k], memory_order_relaxed);

			if (n == 0)
				continue;
			if (k == NSTATUS - 1)
				bprintf(b, "detm_http_requests_total{%s,status=\"other\"} %llu\n", lab,
				    (unsigned long long)n);
			else
				bprintf(b, "detm_http_requests_total{%s,status=\"%d\"} %llu\n", lab, statuses[k],
				    (unsigned long long)n);
		}
	}
	family(b, "detm_http_request_duration_seconds", "histogram",
	    "Time from the request line to the end of the reply, by route pattern.");
	for (size_t i = 0; i < NSLOTS; i++) {
		uint64_t cum = 0;

		if (!slot_used(v, i))
			continue;
		route_label(v, i, lab, sizeof lab);
		for (size_t k = 0; k < NBUCKETS; k++) {
			cum += atomic_load_explicit(&metrics_state.bucket[i][k], memory_order_relaxed);
			if (k == NBUCKETS - 1)
				bprintf(b, "detm_http_request_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n", lab,
				    (unsigned long long)cum);
			else
				bprintf(b, "detm_http_request_duration_seconds_bucket{%s,le=\"%g\"} %llu\n", lab,
				    bounds[k], (unsigned long long)cum);
		}
		bprintf(b, "detm_http_request_duration_seconds_sum{%s} %.6f\n", lab,
		    (double)atomic_load_explicit(&metrics_state.sum_us[i], memory_order_relaxed) / 1e6);
		bprintf(b, "detm_http_request_duration_seconds_count{%s} %llu\n", lab, (unsigned long long)cum);
	}
}

/* ---- gauges from the database ---- */

/* The disk's failures as the store counted them, and whether it is degraded. */
static void
db_fault_families(struct buf *b, struct store *st)
{
	struct store_faults f;
	char cause[8];

	store_fault_stats(st, &f);
	family(b, "detm_db_write_failures_total", "counter",
	    "Writes and batches the disk refused (full, I/O error): nothing of them was stored.");
	bprintf(b, "detm_db_write_failures_total %llu\n", (unsigned long long)f.write_failures);
	family(b, "detm_db_sync_failures_total", "counter",
	    "Failed fdatasyncs of the WAL (--db-sync full): writes stored but not durable.");
	bprintf(b, "detm_db_sync_failures_total %llu\n", (unsigned long long)f.sync_failures);
	family(b, "detm_db_checkpoint_failures_total", "counter", "Failed WAL checkpoints.");
	bprintf(b, "detm_db_checkpoint_failures_total %llu\n", (unsigned long long)f.ckpt_failures);
	family(b, "detm_db_read_failures_total", "counter",
	    "Reads the disk refused (answered io_error; nothing was changed).");
	bprintf(b, "detm_db_read_failures_total %llu\n", (unsigned long long)f.read_failures);
	family(b, "detm_db_degraded", "gauge", "1 while writes fail or are not durable (GET /api/health says why).");
	bprintf(b, "detm_db_degraded %d\n", store_degraded(st, cause, sizeof cause) ? 1 : 0);
}

static void
db_families(struct buf *b, struct store *st, const struct config *cfg)
{
	static const char *const names[] = { "active", "paused", "completed", "failed", "cancelled" };
	static const char SQL_TASKS[] = "SELECT status, COUNT(*) FROM tasks GROUP BY status";
	static const char SQL_WAITS[] = "SELECT COUNT(*) FROM wait_jobs WHERE status = 'watching'";
	int64_t counts[5] = { 0 }, waits = 0;
	struct store *rd = store_read_begin(st);
	sqlite3_stmt *s = store_stmt(rd, SQL_TASKS);
	uint64_t writes = 0, commits = 0;
	char path[4096];
	struct stat sb;

	while (s != NULL && sqlite3_step(s) == SQLITE_ROW)
		for (size_t i = 0; i < 5; i++)
			if (strcmp((const char *)sqlite3_column_text(s, 0), names[i]) == 0)
				counts[i] = sqlite3_column_int64(s, 1);
	if (s != NULL)
		sqlite3_reset(s);
	if ((s = store_stmt(rd, SQL_WAITS)) != NULL && sqlite3_step(s) == SQLITE_ROW)
		waits = sqlite3_column_int64(s, 0);
	if (s != NULL)
		sqlite3_reset(s);
	store_read_end(rd);
	family(b, "detm_tasks", "gauge", "Tasks by status.");
	for (size_t i = 0; i < 5; i++)
		bprintf(b, "detm_tasks{status=\"%s\"} %lld\n", names[i], (long long)counts[i]);
	family(b, "detm_waits_watching", "gauge", "Smart waits watching now.");
	bprintf(b, "detm_waits_watching %lld\n", (long long)waits);
	family(b, "detm_db_size_bytes", "gauge", "Size of the database files.");
	snprintf(path, sizeof path, "%s/data.db", cfg->data_dir);
	bprintf(b, "detm_db_size_bytes{file=\"data.db\"} %lld\n", stat(path, &sb) == 0 ? (long long)sb.st_size : 0LL);
	snprintf(path, sizeof path, "%s/data.db-wal", cfg->data_dir);
	bprintf(b, "detm_db_size_bytes{file=\"data.db-wal\"} %lld\n", stat(path, &sb) == 0 ? (long long)sb.st_size : 0LL);
	store_tx_stats(st, &writes, &commits);
	family(b, "detm_db_writes_total", "counter", "Writes done through group commit.");
	bprintf(b, "detm_db_writes_total %llu\n", (unsigned long long)writes);
	family(b, "detm_db_commits_total", "counter", "COMMITs that carried them.");
	bprintf(b, "detm_db_commits_total %llu\n", (unsigned long long)commits);
	db_fault_families(b, st);
}

/* ---- models, wake-ups, displays ---- */

static void
usage_families(struct buf *b)
{
	struct usage_counter c[64];
	size_t n = usage_counters(c, 64);
	char p[64], m[256];

	family(b, "detm_model_calls_total", "counter", "Model calls sent, by provider and model.");
	for (size_t i = 0; i < n; i++)
		bprintf(b, "detm_model_calls_total{provider=\"%s\",model=\"%s\"} %llu\n", esc(c[i].provider, p, sizeof p),
		    esc(c[i].model, m, sizeof m), (unsigned long long)c[i].calls);
	family(b, "detm_model_call_errors_total", "counter", "Model calls that did not answer usably.");
	for (size_t i = 0; i < n; i++)
		bprintf(b, "detm_model_call_errors_total{provider=\"%s\",model=\"%s\"} %llu\n",
		    esc(c[i].provider, p, sizeof p), esc(c[i].model, m, sizeof m), (unsigned long long)c[i].errors);
	family(b, "detm_model_tokens_total", "counter", "Tokens as the providers reported them.");
	for (size_t i = 0; i < n; i++) {
		esc(c[i].provider, p, sizeof p);
		esc(c[i].model, m, sizeof m);
		bprintf(b, "detm_model_tokens_total{provider=\"%s\",model=\"%s\",direction=\"in\"} %llu\n", p, m,
		    (unsigned long long)c[i].tokens_in);
		bprintf(b, "detm_model_tokens_total{provider=\"%s\",model=\"%s\",direction=\"out\"} %llu\n", p, m,
		    (unsigned long long)c[i].tokens_out);
	}
	family(b, "detm_model_cost_usd_total", "counter", "Cost of the priced model calls (unknown prices excluded).");
	for (size_t i = 0; i < n; i++)
		bprintf(b, "detm_model_cost_usd_total{provider=\"%s\",model=\"%s\"} %.8f\n",
		    esc(c[i].provider, p, sizeof p), esc(c[i].model, m, sizeof m), c[i].cost_usd);
	family(b, "detm_model_call_seconds_total", "counter", "Time spent waiting for models.");
	for (size_t i = 0; i < n; i++)
		bprintf(b, "detm_model_call_seconds_total{provider=\"%s\",model=\"%s\"} %.6f\n",
		    esc(c[i].provider, p, sizeof p), esc(c[i].model, m, sizeof m), c[i].latency_s);
	family(b, "detm_model_calls_refused_total", "counter", "Model calls refused because a task's budget was reached.");
	bprintf(b, "detm_model_calls_refused_total %llu\n", (unsigned long long)usage_refused_total());
}

static int64_t
jint(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

static void
misc_families(struct buf *b, const struct metrics_view *v)
{
	static const char *const wk[] = { "posted", "delivered", "failed", "dropped" };
	json_object *w = wake_stats(), *d = display_list(), *arr;
	uint64_t hits, misses;

	family(b, "detm_wake_events_total", "counter", "Wake-up events, by what became of them.");
	for (size_t i = 0; i < 4; i++)
		bprintf(b, "detm_wake_events_total{result=\"%s\"} %lld\n", wk[i], (long long)jint(w, wk[i]));
	family(b, "detm_wake_pending", "gauge", "Wake-up events waiting for delivery.");
	bprintf(b, "detm_wake_pending %lld\n", (long long)jint(w, "pending"));
	family(b, "detm_displays", "gauge", "Per-task displays (Xvfb) detmd runs.");
	bprintf(b, "detm_displays %zu\n", json_object_object_get_ex(d, "displays", &arr) &&
	    json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : (size_t)0);
	family(b, "detm_displays_max", "gauge", "Task display slots (ACU_MAX_DISPLAYS); readyz fails when all are used.");
	bprintf(b, "detm_displays_max %lld\n", (long long)jint(d, "max"));
	family(b, "detm_draining", "gauge",
	    "1 once POST /api/drain was called: no new task is taken (drained when detm_tasks active+paused is 0).");
	bprintf(b, "detm_draining %d\n", drain_on() ? 1 : 0);
	family(b, "detm_recordings_active", "gauge", "Task recordings running now.");
	bprintf(b, "detm_recordings_active %d\n", v->recordings);
	family(b, "detm_start_time_seconds", "gauge", "When detmd started (Unix time).");
	bprintf(b, "detm_start_time_seconds %.3f\n", (double)v->started_ms / 1000.0);
	ocr_cache_stats(&hits, &misses);
	family(b, "detm_ocr_lines_total", "counter",
	    "Text lines the OCR waits needed: read by tesseract, or answered by the cache of lines read before.");
	bprintf(b, "detm_ocr_lines_total{source=\"read\"} %llu\n", (unsigned long long)misses);
	bprintf(b, "detm_ocr_lines_total{source=\"cache\"} %llu\n", (unsigned long long)hits);
	family(b, "detm_build_info", "gauge", "detmd's version.");
	bprintf(b, "detm_build_info{version=\"%s\"} 1\n", DETM_VERSION);
	json_object_put(w);
	json_object_put(d);
}

char *
metrics_render(struct store *st, const struct config *cfg, const struct metrics_view *v, size_t *len)
{
	struct buf b;

	buf_init(&b, METRICS_MAX_TEXT);
	http_families(&b, v);
	db_families(&b, st, cfg);
	usage_families(&b);
	misc_families(&b, v);
	*len = b.len;
	if (b.data == NULL)
		return xstrdup("");
	return buf_take(&b);
}
