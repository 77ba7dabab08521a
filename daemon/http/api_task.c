/*
 * api_task.c - /api/tasks* handlers: validate the request, call task.c,
 * shape the reply. Each handler reads as the request's meaning; every check
 * fills the derr itself (jx.h), so handlers just return -1 on failure.
 */
#include <string.h>
#include <stdlib.h>
#include <strings.h>

#include "api.h"
#include "core/buf.h"
#include "core/jx.h"
#include "core/log.h"
#include "desktop/launch.h"
#include "desktop/takeover.h"
#include "lim.h"
#include "recorder/recorder.h"
#include "task/budget.h"
#include "task/completion.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "task/usage.h"

static const char *const action_types[] = { "cli", "gui", "wait", "vision", "reasoning", "other" };
static const char *const action_states[] = { "started", "completed", "failed" };
static const char *const roles[] = { "agent", "user", "wait", "system", "error" };

/* A string that must be one of `allowed`, in any case (the Python DETM's
 * clients capitalise); *out is the canonical spelling, or keeps def when
 * absent. */
static int
body_enum(json_object *body, const char *key, const char *const *allowed, size_t n,
    const char **out, struct derr *e)
{
	const char *v = NULL;
	size_t i;

	if (jx_str(body, key, false, 0, 64, &v, e) != 0)
		return -1;
	if (v == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		if (strcasecmp(v, allowed[i]) == 0) {
			*out = allowed[i];
			return 0;
		}
	}
	{
		char list[160] = "";
		size_t o = 0;

		for (i = 0; i < n && o < sizeof list; i++)
			o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", allowed[i]);
		return derr_set(e, DERR_INVALID, key, "%s must be one of: %s (got '%.*s')", key,
		    list, utf8_prec(v, 64), v);
	}
}

static int
body_task_status(json_object *body, int *out, struct derr *e)
{
	const char *s = NULL;

	*out = -1;
	if (jx_str(body, "status", false, 0, 32, &s, e) != 0)
		return -1;
	if (s == NULL)
		return 0;
	if ((*out = task_status_parse(s)) < 0)
		return derr_set(e, DERR_INVALID, "status", "unknown task status '%.*s' (one of: %s)",
		    utf8_prec(s, 32), s, task_status_all());
	return 0;
}

/* The reply of a write that has been stored: the task's summary. The
 * write is done by now, so a summary the disk would not let us read is
 * not the write's failure: the reply keeps its 2xx (a 5xx would tell the
 * client the write was lost, and a retry would store it twice) and says
 * the summary is missing and why. Only "the task is gone" (deleted
 * meanwhile) stays an error. */
static int
reply_summary_judged(struct req *r, const char *id, int status, bool sentence,
    struct completion_rec *rec, struct derr *e)
{
	json_object *sum = task_summary(r->app->store, id, DETAIL_ITEMS, sentence, e);

	if (sum == NULL && e->code == DERR_NOT_FOUND)
		return -1;
	/* This call's verdict (completion.h), on top: the reply says at once
	 * whether the evidence bears the claim out. */
	if (sum != NULL && rec != NULL && rec->done) {
		json_object_object_add(sum, "completion", json_object_new_string(completion_name(rec->verdict)));
		json_object_object_add(sum, "completion_why", json_object_get(rec->why));
		json_object_object_add(sum, "completion_item",
		    rec->ordinal >= 0 ? json_object_new_int64(rec->ordinal) : NULL);
	}
	if (sum == NULL) {
		sum = json_object_new_object();
		json_object_object_add(sum, "task_id", json_object_new_string(id));
		json_object_object_add(sum, "stored", json_object_new_boolean(1));
		json_object_object_add(sum, "summary_error", json_object_new_string(e->message));
		json_object_object_add(sum, "note", json_object_new_string("the write was stored; "
		    "its summary could not be read: GET /api/tasks/{id} later"));
		derr_clear(e);
	}
	return req_reply(r, status, sum);
}

static int
reply_summary(struct req *r, const char *id, int status, bool sentence, struct derr *e)
{
	return reply_summary_judged(r, id, status, sentence, NULL, e);
}

/* The ordinal path parameter (index 1). */
static int
path_ordinal(struct req *r, int64_t *out, struct derr *e)
{
	return jx_parse_int(r->params[1], "ordinal", 0, INT32_MAX, out, e);
}

/* Whether a new task gets its own display: `display` in the body, else
 * metadata.isolated_display (the Python DETM's key), else the daemon
 * default. Size: display_width/display_height or display_resolution in the
 * body or the metadata. */
static int
want_display(struct req *r, json_object *meta, bool *want, int *w, int *h, struct derr *e)
{
	json_object *v;
	bool has = false;

	*want = r->app->cfg->task_displays;
	if (jx_bool(r->body, "display", want, &has, e) != 0)
		return -1;
	if (!has && meta != NULL && json_object_object_get_ex(meta, "isolated_display", &v))
		*want = json_object_get_boolean(v);
	if (api_display_size(r->body, "display_", w, h, e) != 0)
		return -1;
	if (*w == 0 && meta != NULL && api_display_size(meta, "display_", w, h, e) != 0)
		return derr_refield(e, "metadata");
	return 0;
}

/* done_when (a list of conditions, completion.h) goes into the metadata
 * (the body's own object, or a new one the body then holds), where the
 * completion check reads it. */
static int
body_done_when(json_object *body, json_object **meta, struct derr *e)
{
	json_object *dw;

	if (jx_strarray(body, "done_when", false, 1, 16, 1, 1024, &dw, e) != 0)
		return -1;
	if (dw == NULL)
		return 0;
	if (*meta == NULL) {
		*meta = json_object_new_object();
		json_object_object_add(body, "metadata", *meta);
	}
	json_object_object_add(*meta, "done_when", json_object_get(dw));
	return 0;
}

int
api_task_create(struct req *r, struct derr *e)
{
	struct task_reg in = { 0 };
	struct budget bud;
	char id[ID_LEN];
	bool disp, has_bud;
	int w, h;

	if (api_body_check(r, api_task_create, e) != 0 || budget_parse(r->body, &bud, &has_bud, e) != 0)
		return -1;
	in.budget = has_bud ? &bud : NULL;
	if (jx_str(r->body, "name", true, 1, LIM_TASK_NAME, &in.name, e) != 0 ||
	    jx_strarray(r->body, "plan", false, 0, LIM_PLAN_ITEMS, 1, LIM_ITEM_TITLE, &in.plan, e) != 0 ||
	    jx_obj(r->body, "metadata", &in.metadata, e) != 0 ||
	    jx_str(r->body, "agent_id", false, 0, LIM_AGENT_ID, &in.agent_id, e) != 0)
		return -1;
	if (body_done_when(r->body, &in.metadata, e) != 0)
		return -1;
	if (in.metadata != NULL && strlen(jx_string(in.metadata, NULL)) > LIM_METADATA_BYTES)
		return derr_set(e, DERR_INVALID, "metadata", "metadata is larger than %d bytes as JSON",
		    LIM_METADATA_BYTES);
	if (want_display(r, in.metadata, &disp, &w, &h, e) != 0 ||
	    task_register(r->app->store, &in, id, e) != 0)
		return -1;
	if (disp) {
		json_object *info = NULL;
		struct derr e2;

		/* No task without the display it asked for. */
		if (api_task_display_start(r, id, w, h, &info, e) != 0) {
			if (task_delete(r->app->store, id, &e2) != 0)
				log_warn("could not remove task %s after its display failed: %s", id, e2.message);
			return -1;
		}
		json_object_put(info);
	}
	return reply_summary(r, id, 201, false, e);
}

int
api_task_list(struct req *r, struct derr *e)
{
	struct task_query q = { .status = TASK_ACTIVE };
	const char *status = req_query(r, "status"), *since = req_query(r, "since");
	int64_t limit;
	json_object *out, *tasks;

	if (status != NULL && strcasecmp(status, "all") == 0)
		q.status = -1;
	else if (status != NULL && status[0] != '\0' && (q.status = task_status_parse(status)) < 0)
		return derr_set(e, DERR_INVALID, "status", "unknown status '%.*s' (one of: all, %s)",
		    utf8_prec(status, 32), status, task_status_all());
	if (req_query_int(r, "limit", 1, LIM_LIST_MAX, LIM_LIST_DEFAULT, &limit, e) != 0)
		return -1;
	q.limit = (int)limit;
	if (since != NULL && since[0] != '\0' && time_parse(since, &q.since_ms) != 0)
		return derr_set(e, DERR_INVALID, "since",
		    "since must be an ISO-8601 time or epoch seconds (got '%.*s')",
		    utf8_prec(since, 64), since);
	if ((out = task_list(r->app->store, &q, e)) == NULL)
		return -1;
	tasks = json_object_object_get(out, "tasks");
	for (size_t i = 0; i < json_object_array_length(tasks); i++) {
		json_object *t = json_object_array_get_idx(tasks, i);
		const char *tid = json_object_get_string(json_object_object_get(t, "task_id"));

		if (tid != NULL)
			json_object_object_add(t, "recording", rec_task_status(tid));
		if (tid != NULL)
			json_object_object_add(t, "driver", takeover_status(tid));
	}
	return req_reply(r, 200, out);
}

/* ---- the big views (detail=actions/full/focused): written by a thread of
 * their own into the reply as they are read (http_pipe.c), so neither an
 * HTTP worker nor memory pays for a task's size; in process (an MCP call
 * on /mcp: no connection) built in memory, up to LIM_VIEW_INPROC_BYTES. */

#define VIEW_CHUNK (64 * 1024)  /* one write into the pipe: as much as it holds */

struct vjob {
	struct store *rd;
	struct task_view *v;
	struct pipejob *pj;
	size_t len;
	char buf[VIEW_CHUNK];
};

static int
vj_flush(struct vjob *j)
{
	int rc = pipejob_write(j->pj, j->buf, j->len);

	j->len = 0;
	return rc;
}

static int
vj_sink(void *cls, const char *p, size_t n)
{
	struct vjob *j = cls;

	if (pipejob_cancelled(j->pj))
		return -1;
	if (j->len + n > sizeof j->buf && vj_flush(j) != 0)
		return -1;
	if (n >= sizeof j->buf)
		return pipejob_write(j->pj, p, n);
	memcpy(j->buf + j->len, p, n);
	j->len += n;
	return 0;
}

static int
vj_main(struct pipejob *pj, void *arg)
{
	struct vjob *j = arg;
	struct derr e;

	j->pj = pj;
	derr_clear(&e);
	if (task_view_write(j->v, vj_sink, j, &e) != 0) {
		if (e.code != DERR_OK)
			log_warn("a task view ended early: %s", e.message);
		return -1;
	}
	return vj_flush(j);
}

static void
vj_free(void *arg)
{
	struct vjob *j = arg;

	task_view_close(j->v);
	store_reader_close(j->rd);
	free(j);
}

static int
cap_sink(void *cls, const char *p, size_t n)
{
	return buf_append(cls, p, n);
}

/* In process: the view as a JSON object, if it fits the cap. */
static int
view_inproc(struct req *r, struct task_view *v, const char *id, struct derr *e)
{
	struct buf b;
	json_object *o = NULL;

	buf_init(&b, LIM_VIEW_INPROC_BYTES);
	if (task_view_write(v, cap_sink, &b, e) == 0)
		o = jx_parse(b.data, b.len, e);
	else if (e->code == DERR_OK)
		derr_set(e, DERR_TOO_LARGE, "detail", "the view of task %s is larger than %ld MiB: ask "
		    "GET /api/tasks/%s?detail=full over HTTP (streamed), drill into one item "
		    "(task_drill_down, GET /api/tasks/%s/items/{ordinal}?limit=&offset=), or "
		    "export the task", id, LIM_VIEW_INPROC_BYTES >> 20, id, id);
	buf_free(&b);
	return o != NULL ? req_reply(r, 200, o) : -1;
}

static int
big_view(struct req *r, const char *id, enum task_detail d, struct derr *e)
{
	struct vjob *j;
	struct store *rd;
	struct task_view *v;
	struct pipejob *pj;
	char err[256] = "";
	int fd = -1, rc;

	if (req_bulk_take(REQ_BULK_VIEW, e) != 0)
		return -1;
	if ((v = api_task_view_open(r, id, (int)d, &rd, e)) == NULL) {
		req_bulk_give(REQ_BULK_VIEW);
		return -1;
	}
	if (r->conn == NULL) {
		rc = view_inproc(r, v, id, e);
		task_view_close(v);
		store_reader_close(rd);
		req_bulk_give(REQ_BULK_VIEW);
		return rc;
	}
	j = xcalloc(1, sizeof *j);
	j->rd = rd;
	j->v = v;
	pj = pipejob_spawn(vj_main, j, vj_free, req_streams_wake, &fd, err, sizeof err);
	if (pj == NULL)
		vj_free(j);
	return req_reply_pipe(r, REQ_BULK_VIEW, pj, fd, "application/json; charset=utf-8", err, e);
}

int
api_task_get(struct req *r, struct derr *e)
{
	static const struct { const char *name; enum task_detail d; } levels[] = {
		{ "items", DETAIL_ITEMS }, { "actions", DETAIL_ACTIONS },
		{ "full", DETAIL_ACTIONS }, { "focused", DETAIL_FOCUSED } };
	const char *id, *detail = req_query(r, "detail");
	enum task_detail d = DETAIL_ITEMS;
	json_object *sum;
	size_t i;

	if (req_task_id(r, 0, &id, e) != 0)
		return -1;
	if (detail != NULL && detail[0] != '\0') {
		for (i = 0; i < ARRAY_LEN(levels) && strcasecmp(levels[i].name, detail) != 0; i++)
			;
		if (i == ARRAY_LEN(levels))
			return derr_set(e, DERR_INVALID, "detail",
			    "detail must be one of: items, actions, full, focused (got '%.*s')",
			    utf8_prec(detail, 32), detail);
		d = levels[i].d;
	}
	if (d != DETAIL_ITEMS)
		return big_view(r, id, d, e);
	if ((sum = task_summary(r->app->store, id, d, false, e)) == NULL)
		return -1;
	api_task_view_tail(r, id, sum);
	return req_reply(r, 200, sum);
}

int
api_task_patch(struct req *r, struct derr *e)
{
	struct task_patch p = { .status = -1 };
	struct completion_rec rec = { .ordinal = -1 };
	const char *id, *query = NULL;
	struct budget bud;
	bool has_bud;
	int rc;

	if (api_body_check(r, api_task_patch, e) != 0 || budget_parse(r->body, &bud, &has_bud, e) != 0)
		return -1;
	p.budget = has_bud ? &bud : NULL;
	if (req_task_id(r, 0, &id, e) != 0 ||
	    jx_str(r->body, "name", false, 1, LIM_TASK_NAME, &p.name, e) != 0 ||
	    body_task_status(r->body, &p.status, e) != 0 ||
	    jx_obj(r->body, "metadata", &p.metadata, e) != 0 ||
	    jx_str(r->body, "message", false, 1, LIM_MESSAGE, &p.message, e) != 0 ||
	    jx_str(r->body, "query", false, 0, LIM_MESSAGE, &query, e) != 0)
		return -1;
	if (p.name == NULL && p.status < 0 && p.metadata == NULL && p.message == NULL && query == NULL &&
	    p.budget == NULL)
		return derr_set(e, DERR_INVALID, NULL,
		    "nothing to update: give status, name, metadata, message, budget or query");
	p.workspace = r->app->cfg->workspace;
	p.completion = &rec;
	if ((p.name || p.status >= 0 || p.metadata || p.message || p.budget) &&
	    task_update(r->app->store, id, &p, e) != 0)
		return -1;
	rc = reply_summary_judged(r, id, 200, query != NULL, &rec, e);
	json_object_put(rec.why);
	return rc;
}

int
api_task_delete(struct req *r, struct derr *e)
{
	const char *id;
	json_object *out;

	if (req_task_id(r, 0, &id, e) != 0 || task_delete(r->app->store, id, e) != 0)
		return -1;
	out = json_object_new_object();
	json_object_object_add(out, "ok", json_object_new_boolean(1));
	json_object_object_add(out, "task_id", json_object_new_string(id));
	return req_reply(r, 200, out);
}

static int
control(struct req *r, route_fn self, int to, struct derr *e)
{
	const char *id, *reason = NULL;

	if (api_body_check(r, self, e) != 0 || req_task_id(r, 0, &id, e) != 0 ||
	    jx_str(r->body, "reason", false, 0, LIM_REASON, &reason, e) != 0 ||
	    task_control(r->app->store, id, to, reason, e) != 0)
		return -1;
	return reply_summary(r, id, 200, false, e);
}

int
api_task_pause(struct req *r, struct derr *e)
{
	return control(r, api_task_pause, TASK_PAUSED, e);
}

int
api_task_resume(struct req *r, struct derr *e)
{
	return control(r, api_task_resume, TASK_ACTIVE, e);
}

int
api_task_cancel(struct req *r, struct derr *e)
{
	return control(r, api_task_cancel, TASK_CANCELLED, e);
}

int
api_items_append(struct req *r, struct derr *e)
{
	const char *id, *note = NULL;
	json_object *titles, *added, *out;

	if (api_body_check(r, api_items_append, e) != 0 ||
	    req_task_id(r, 0, &id, e) != 0 ||
	    jx_strarray(r->body, "items", true, 1, LIM_PLAN_ITEMS, 1, LIM_ITEM_TITLE, &titles, e) != 0 ||
	    jx_str(r->body, "note", false, 0, LIM_NOTE, &note, e) != 0 ||
	    task_items_append(r->app->store, id, titles, note, &added, e) != 0)
		return -1;
	out = json_object_new_object();
	json_object_object_add(out, "ok", json_object_new_boolean(1));
	json_object_object_add(out, "task_id", json_object_new_string(id));
	json_object_object_add(out, "added", added);
	return req_reply(r, 201, out);
}

int
api_item_get(struct req *r, struct derr *e)
{
	const char *id;
	int64_t ord, limit, offset;
	json_object *out;

	if (req_task_id(r, 0, &id, e) != 0 || path_ordinal(r, &ord, e) != 0 ||
	    req_query_int(r, "limit", 1, LIM_DRILL_MAX, LIM_DRILL_DEFAULT, &limit, e) != 0 ||
	    req_query_int(r, "offset", 0, INT32_MAX, 0, &offset, e) != 0)
		return -1;
	if ((out = task_item_view(r->app->store, id, ord, (int)limit, (int)offset, e)) == NULL)
		return -1;
	return req_reply(r, 200, out);
}

int
api_item_patch(struct req *r, struct derr *e)
{
	struct item_patch p = { .status = -1 };
	struct completion_rec rec = { .ordinal = -1 };
	const char *id, *status = NULL;
	int64_t ord;
	int rc;

	if (api_body_check(r, api_item_patch, e) != 0 ||
	    req_task_id(r, 0, &id, e) != 0 || path_ordinal(r, &ord, e) != 0 ||
	    jx_str(r->body, "status", false, 0, 32, &status, e) != 0 ||
	    jx_str(r->body, "title", false, 1, LIM_ITEM_TITLE, &p.title, e) != 0 ||
	    jx_str(r->body, "note", false, 1, LIM_NOTE, &p.note, e) != 0)
		return -1;
	if (status != NULL && (p.status = item_status_parse(status)) < 0)
		return derr_set(e, DERR_INVALID, "status", "unknown plan item status '%.*s' (one of: %s)",
		    utf8_prec(status, 32), status, item_status_all());
	if (p.status < 0 && p.title == NULL && p.note == NULL)
		return derr_set(e, DERR_INVALID, NULL, "nothing to update: give status, title or note");
	p.completion = &rec;
	if (task_item_update(r->app->store, id, ord, &p, e) != 0)
		return -1;
	rc = reply_summary_judged(r, id, 200, false, &rec, e);
	json_object_put(rec.why);
	return rc;
}

/* Checks a logs array: at most LIM_LOGS_PER_CALL objects with content. */
static int
body_logs(json_object *body, json_object **out, struct derr *e)
{
	json_object *logs;
	size_t i, n;
	char field[48];

	*out = NULL;
	if (!json_object_object_get_ex(body, "logs", &logs) || logs == NULL)
		return 0;
	if (!json_object_is_type(logs, json_type_array))
		return derr_set(e, DERR_INVALID, "logs", "logs must be an array of {log_type, content}");
	n = json_object_array_length(logs);
	if (n > LIM_LOGS_PER_CALL)
		return derr_set(e, DERR_INVALID, "logs", "at most %d logs per call", LIM_LOGS_PER_CALL);
	for (i = 0; i < n; i++) {
		json_object *l = json_object_array_get_idx(logs, i);
		const char *s;
		struct derr sub;

		snprintf(field, sizeof field, "logs[%zu]", i);
		if (l == NULL || !json_object_is_type(l, json_type_object))
			return derr_set(e, DERR_INVALID, field, "%s must be an object {log_type, content}", field);
		derr_clear(&sub);
		if (jx_str(l, "content", true, 0, LIM_LOG_CONTENT, &s, &sub) != 0 ||
		    jx_str(l, "log_type", false, 1, LIM_LOG_TYPE, &s, &sub) != 0)
			return derr_set(e, DERR_INVALID, field, "%s: %s", field, sub.message);
	}
	*out = logs;
	return 0;
}

int
api_action_create(struct req *r, struct derr *e)
{
	struct action_new a = { .duration_ms = -1 };
	char *in_json = NULL, *out_json = NULL;
	char id[ID_LEN];
	const char *task_id;
	int64_t ord = -1;
	bool has_dur;
	json_object *out;
	int rc = -1;

	if (api_body_check(r, api_action_create, e) != 0 ||
	    req_task_id(r, 0, &task_id, e) != 0 ||
	    jx_str(r->body, "action_type", true, 1, 32, &a.type, e) != 0 ||
	    body_enum(r->body, "action_type", action_types, ARRAY_LEN(action_types), &a.type, e) != 0 ||
	    jx_str(r->body, "summary", true, 1, LIM_SUMMARY, &a.summary, e) != 0 ||
	    body_enum(r->body, "status", action_states, ARRAY_LEN(action_states), &a.status, e) != 0 ||
	    jx_num(r->body, "duration_ms", 0, 1e12, &a.duration_ms, &has_dur, e) != 0 ||
	    jx_int(r->body, "ordinal", false, 0, INT32_MAX, &a.ordinal, &a.has_ordinal, e) != 0 ||
	    body_logs(r->body, &a.logs, e) != 0 ||
	    jx_any_text(r->body, "input_data", LIM_DATA_BYTES, &in_json, e) != 0 ||
	    jx_any_text(r->body, "output_data", LIM_DATA_BYTES, &out_json, e) != 0)
		goto out;
	if (!has_dur)
		a.duration_ms = -1;
	a.input_json = in_json;
	a.output_json = out_json;
	if (task_action_add(r->app->store, task_id, &a, id, &ord, e) != 0)
		goto out;
	out = json_object_new_object();
	json_object_object_add(out, "ok", json_object_new_boolean(1));
	json_object_object_add(out, "action_id", json_object_new_string(id));
	json_object_object_add(out, "task_id", json_object_new_string(task_id));
	json_object_object_add(out, "plan_item_ordinal", ord >= 0 ? json_object_new_int64(ord) : NULL);
	rc = req_reply(r, 201, out);
out:
	free(in_json);
	free(out_json);
	return rc;
}

int
api_action_get(struct req *r, struct derr *e)
{
	const char *task_id, *action_id;
	json_object *out;

	if (req_task_id(r, 0, &task_id, e) != 0 || req_task_id(r, 1, &action_id, e) != 0)
		return -1;
	if ((out = task_action_view(r->app->store, task_id, action_id, e)) == NULL)
		return -1;
	return req_reply(r, 200, out);
}

int
api_action_patch(struct req *r, struct derr *e)
{
	struct action_patch p = { .duration_ms = -1 };
	const char *task_id, *action_id;
	char *out_json = NULL;
	bool has_dur;
	json_object *out;
	int rc = -1;

	if (api_body_check(r, api_action_patch, e) != 0 ||
	    req_task_id(r, 0, &task_id, e) != 0 || req_task_id(r, 1, &action_id, e) != 0 ||
	    body_enum(r->body, "status", action_states, ARRAY_LEN(action_states), &p.status, e) != 0 ||
	    jx_num(r->body, "duration_ms", 0, 1e12, &p.duration_ms, &has_dur, e) != 0 ||
	    jx_any_text(r->body, "output_data", LIM_DATA_BYTES, &out_json, e) != 0)
		goto out;
	if (!has_dur)
		p.duration_ms = -1;
	p.output_json = out_json;
	if (p.status == NULL && p.output_json == NULL && p.duration_ms < 0) {
		derr_set(e, DERR_INVALID, NULL, "nothing to update: give status, output_data or duration_ms");
		goto out;
	}
	if (task_action_update(r->app->store, task_id, action_id, &p, e) != 0)
		goto out;
	if ((out = task_action_view(r->app->store, task_id, action_id, e)) == NULL)
		goto out;
	rc = req_reply(r, 200, out);
out:
	free(out_json);
	return rc;
}

int
api_log_create(struct req *r, struct derr *e)
{
	const char *task_id, *action_id, *type = "info", *content;
	char id[ID_LEN];
	json_object *out;

	if (api_body_check(r, api_log_create, e) != 0 ||
	    req_task_id(r, 0, &task_id, e) != 0 || req_task_id(r, 1, &action_id, e) != 0 ||
	    jx_str(r->body, "log_type", false, 1, LIM_LOG_TYPE, &type, e) != 0 ||
	    jx_str(r->body, "content", true, 0, LIM_LOG_CONTENT, &content, e) != 0 ||
	    task_log_add(r->app->store, task_id, action_id, type, content, id, e) != 0)
		return -1;
	out = json_object_new_object();
	json_object_object_add(out, "ok", json_object_new_boolean(1));
	json_object_object_add(out, "log_id", json_object_new_string(id));
	json_object_object_add(out, "action_id", json_object_new_string(action_id));
	return req_reply(r, 201, out);
}

int
api_messages_get(struct req *r, struct derr *e)
{
	const char *id;
	int64_t limit;
	json_object *out;

	if (req_task_id(r, 0, &id, e) != 0 ||
	    req_query_int(r, "limit", 1, LIM_THREAD_MAX, LIM_THREAD_DEFAULT, &limit, e) != 0)
		return -1;
	if ((out = task_thread(r->app->store, id, (int)limit, e)) == NULL)
		return -1;
	return req_reply(r, 200, out);
}

int
api_message_create(struct req *r, struct derr *e)
{
	const char *id, *content, *role = "user", *type = "text";
	json_object *m;

	if (api_body_check(r, api_message_create, e) != 0 ||
	    req_task_id(r, 0, &id, e) != 0 ||
	    jx_str(r->body, "content", true, 1, LIM_MESSAGE, &content, e) != 0 ||
	    body_enum(r->body, "role", roles, ARRAY_LEN(roles), &role, e) != 0 ||
	    jx_str(r->body, "msg_type", false, 1, LIM_MSG_TYPE, &type, e) != 0)
		return -1;
	if ((m = task_message_add(r->app->store, id, role, type, content, e)) == NULL)
		return -1;
	return req_reply(r, 201, m);
}
