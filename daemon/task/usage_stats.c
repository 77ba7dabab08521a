/*
 * usage_stats.c - reads of usage.h: the /api/usage/stats report in the
 * Python DETM's shape, a task's totals, and the summary fields.
 *
 * Every read runs in one read snapshot (store_read_begin), so a report's
 * rows, totals and days agree with each other. Sums of cost_usd stay NULL
 * when every row in them has an unknown price (SQL SUM), so "unknown" never
 * reads as $0; unpriced_requests says how many calls the cost leaves out.
 * Days are UTC calendar days.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "budget.h"
#include "core/jx.h"
#include "usage.h"

#define DAYS 30
#define DAY_MS 86400000LL

#define SUMS "SUM(requests), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd), " \
	"SUM(cost_usd IS NULL), SUM(outcome <> 'ok'), AVG(latency_ms)"
#define FILTER "WHERE ts >= ?1 AND (?2 IS NULL OR task_id = ?2)"

static const char SQL_ROWS[] =
    "SELECT provider, model, " SUMS " FROM usage_events " FILTER
    " GROUP BY provider, model ORDER BY SUM(cost_usd) DESC NULLS LAST, SUM(requests) DESC";
static const char SQL_TOTALS[] = "SELECT " SUMS " FROM usage_events " FILTER;
static const char SQL_DAILY[] =
    "SELECT ts / 86400000, SUM(cost_usd), SUM(requests), SUM(input_tokens), SUM(output_tokens) "
    "FROM usage_events " FILTER " GROUP BY ts / 86400000";

static json_object *
money(sqlite3_stmt *s, int col)
{
	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return NULL;
	return json_object_new_double(round(sqlite3_column_double(s, col) * 1e8) / 1e8);
}

/* The SUMS columns from col on into o. */
static void
sums_add(json_object *o, sqlite3_stmt *s, int col)
{
	json_object_object_add(o, "requests", json_object_new_int64(sqlite3_column_int64(s, col)));
	json_object_object_add(o, "input_tokens", json_object_new_int64(sqlite3_column_int64(s, col + 1)));
	json_object_object_add(o, "output_tokens", json_object_new_int64(sqlite3_column_int64(s, col + 2)));
	json_object_object_add(o, "cost_usd", money(s, col + 3));
	json_object_object_add(o, "unpriced_requests", json_object_new_int64(sqlite3_column_int64(s, col + 4)));
	json_object_object_add(o, "errors", json_object_new_int64(sqlite3_column_int64(s, col + 5)));
	json_object_object_add(o, "avg_latency_ms", sqlite3_column_type(s, col + 6) == SQLITE_NULL ? NULL :
	    json_object_new_double(round(sqlite3_column_double(s, col + 6) * 10) / 10));
}

static void
bind_filter(sqlite3_stmt *s, int64_t since_ms, const char *task_id)
{
	sqlite3_bind_int64(s, 1, since_ms);
	if (task_id != NULL)
		sqlite3_bind_text(s, 2, task_id, -1, SQLITE_STATIC);
}

/* The last DAYS UTC days, oldest first, empty days as zeros. */
static int
daily(struct store *rd, const char *task_id, json_object *out)
{
	int64_t today = now_ms() / DAY_MS, first = today - (DAYS - 1);
	json_object *days[DAYS] = { NULL };
	sqlite3_stmt *s = store_stmt(rd, SQL_DAILY);
	int i, rc;

	if (s == NULL)
		return -1;
	bind_filter(s, first * DAY_MS, task_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t d = sqlite3_column_int64(s, 0);
		json_object *o;

		if (d < first || d > today)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "cost_usd", money(s, 1));
		json_object_object_add(o, "requests", json_object_new_int64(sqlite3_column_int64(s, 2)));
		json_object_object_add(o, "input_tokens", json_object_new_int64(sqlite3_column_int64(s, 3)));
		json_object_object_add(o, "output_tokens", json_object_new_int64(sqlite3_column_int64(s, 4)));
		days[d - first] = o;
	}
	sqlite3_reset(s);
	for (i = 0; i < DAYS; i++) {
		char iso[ISO_TIME_LEN], date[11];
		json_object *o = days[i];

		if (o == NULL) {
			o = json_object_new_object();
			json_object_object_add(o, "cost_usd", json_object_new_double(0));
			json_object_object_add(o, "requests", json_object_new_int(0));
			json_object_object_add(o, "input_tokens", json_object_new_int(0));
			json_object_object_add(o, "output_tokens", json_object_new_int(0));
		}
		iso_time((first + i) * DAY_MS, iso);
		snprintf(date, sizeof date, "%.10s", iso);
		jx_add_str(o, "date", date);
		json_object_array_add(out, o);
	}
	return rc == SQLITE_DONE ? 0 : -1;
}

json_object *
usage_stats(struct store *st, double since_days, const char *task_id, struct derr *e)
{
	struct store *rd = store_read_begin(st);
	int64_t since_ms = since_days < 0 ? 0 : now_ms() - (int64_t)(since_days * DAY_MS);
	json_object *o = json_object_new_object(), *rows = json_object_new_array();
	json_object *totals = json_object_new_object(), *days = json_object_new_array();
	sqlite3_stmt *s;
	int rc;

	s = store_stmt(rd, SQL_ROWS);
	if (s == NULL)
		goto fail;
	bind_filter(s, since_ms, task_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_object *r = json_object_new_object();

		jx_add_str(r, "provider", (const char *)sqlite3_column_text(s, 0));
		jx_add_str(r, "model", (const char *)sqlite3_column_text(s, 1));
		sums_add(r, s, 2);
		json_object_array_add(rows, r);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE || (s = store_stmt(rd, SQL_TOTALS)) == NULL)
		goto fail;
	bind_filter(s, since_ms, task_id);
	if (sqlite3_step(s) == SQLITE_ROW)
		sums_add(totals, s, 0);
	sqlite3_reset(s);
	if (daily(rd, task_id, days) != 0)
		goto fail;
	store_read_end(rd);
	json_object_object_add(o, "rows", rows);
	json_object_object_add(o, "totals", totals);
	json_object_object_add(o, "daily", days);
	json_object_object_add(o, "since_days", since_days < 0 ? NULL : json_object_new_double(since_days));
	jx_add_str(o, "task_id", task_id);
	jx_add_str(o, "currency", "USD");
	return o;
fail:
	store_fail(rd, "usage stats", e);
	store_read_end(rd);
	json_object_put(o);
	json_object_put(rows);
	json_object_put(totals);
	json_object_put(days);
	return NULL;
}

/* The task's totals inside a read snapshot. */
static json_object *
totals_read(struct store *rd, const char *task_id)
{
	sqlite3_stmt *s = store_stmt(rd, SQL_TOTALS);
	json_object *o = json_object_new_object();

	if (s != NULL) {
		bind_filter(s, 0, task_id);
		if (sqlite3_step(s) == SQLITE_ROW)
			sums_add(o, s, 0);
		sqlite3_reset(s);
	}
	return o;
}

json_object *
usage_task_totals(struct store *st, const char *task_id)
{
	struct store *rd = store_read_begin(st);
	json_object *o = totals_read(rd, task_id);

	store_read_end(rd);
	return o;
}

void
usage_summary_add(struct store *st, const char *task_id, json_object *summary)
{
	struct store *rd;
	json_object *b;

	if (summary == NULL || task_id == NULL)
		return;
	rd = store_read_begin(st);     /* one snapshot for both */
	json_object_object_add(summary, "usage", totals_read(rd, task_id));
	if ((b = budget_json_read(rd, task_id)) != NULL)
		json_object_object_add(summary, "budget", b);
	store_read_end(rd);
}
