/*
 * api_usage.c - GET /api/usage/stats, GET /api/usage/prices and GET
 * /metrics: check the query, call usage.c / metrics.c, shape the reply.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "ops/metrics.h"
#include "recorder/recorder.h"
#include "task/usage.h"

/* GET /api/usage/stats?since=DAYS&task_id=ID (the Python DETM's shape). */
int
api_usage_stats(struct req *r, struct derr *e)
{
	const char *since = req_query(r, "since"), *task = req_query(r, "task_id");
	double days = -1;
	json_object *o;

	if (since != NULL && since[0] != '\0') {
		char *end;

		days = strtod(since, &end);
		if (*end != '\0' || !(days >= 0) || days > 36500)
			return derr_set(e, DERR_INVALID, "since",
			    "since is a number of days, e.g. 1, 7 or 0.5 (empty: all time); got '%.*s'",
			    utf8_prec(since, 32), since);
	}
	if (task != NULL && task[0] == '\0')
		task = NULL;
	if (task != NULL && !id_valid(task))
		return derr_set(e, DERR_INVALID, "task_id", "task_id must be 8 lowercase hex digits");
	if ((o = usage_stats(r->app->store, days, task, e)) == NULL)
		return -1;
	return req_reply(r, 200, o);
}

int
api_usage_prices(struct req *r, struct derr *e)
{
	(void)e;
	return req_reply(r, 200, usage_prices_json());
}

/* Task recordings running now (recorder.h is the HTTP layer's). */
static int
recordings(struct req *r)
{
	static const char SQL[] = "SELECT id FROM tasks WHERE status IN ('active', 'paused')";
	struct store *rd = store_read_begin(r->app->store);
	sqlite3_stmt *s = store_stmt(rd, SQL);
	json_object *ids = json_object_new_array();
	int n = 0;

	while (s != NULL && sqlite3_step(s) == SQLITE_ROW)
		json_object_array_add(ids, json_object_new_string((const char *)sqlite3_column_text(s, 0)));
	if (s != NULL)
		sqlite3_reset(s);
	store_read_end(rd);
	for (size_t i = 0; i < json_object_array_length(ids); i++) {
		json_object *st = rec_task_status(json_object_get_string(json_object_array_get_idx(ids, i))), *v;

		if (st != NULL && json_object_object_get_ex(st, "state", &v) &&
		    strcmp(json_object_get_string(v), "recording") == 0)
			n++;
		json_object_put(st);
	}
	json_object_put(ids);
	return n;
}

/* GET /metrics: Prometheus text format 0.0.4. */
int
api_metrics(struct req *r, struct derr *e)
{
	const char **methods = xcalloc(api_nroutes, sizeof *methods);
	const char **patterns = xcalloc(api_nroutes, sizeof *patterns);
	struct metrics_view v = { .methods = methods, .patterns = patterns, .nroutes = api_nroutes,
		.started_ms = r->app->started_ms };
	size_t len;
	char *text;

	(void)e;
	for (size_t i = 0; i < api_nroutes; i++) {
		methods[i] = api_routes[i].method;
		patterns[i] = api_routes[i].pattern;
	}
	v.recordings = recordings(r);
	text = metrics_render(r->app->store, r->app->cfg, &v, &len);
	free(methods);
	free(patterns);
	return req_reply_raw(r, 200, "text/plain; version=0.0.4; charset=utf-8", (unsigned char *)text, len);
}
