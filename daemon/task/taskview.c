/*
 * taskview.c - the read side of the task model: JSON views. See task.h.
 *
 * Views are built on a read connection (store_read_begin: one WAL snapshot
 * per view, so a view is consistent and never waits for writers) from a
 * handful of queries (no N+1 per action: logs for a page of actions come
 * from one query). input_data and
 * output_data are stored as JSON text and parsed back, so a client gets
 * the same JSON value it sent. The big views (DETAIL_ACTIONS, _FOCUSED)
 * are served by taskview_full.c, written as they are read; built here in
 * memory they are what those must equal byte for byte (tests/unit).
 */
#include "task.h"
#include "task_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/jx.h"
#include "lim.h"
#include "taskstate.h"

static const char SQL_TASK_ROW[] =
    "SELECT id, name, status, agent_id, metadata, created_at, updated_at, completion, loops, replay FROM tasks WHERE id = ?1";
/* The replays of a task (metadata.replay_of, gui/replay.h), oldest first. */
static const char SQL_REPLAYS_OF[] =
    "SELECT id FROM tasks WHERE json_valid(metadata) AND json_extract(metadata, '$.replay_of') = ?1 "
    "ORDER BY created_at, rowid LIMIT 100";
static const char SQL_ITEMS[] =
    "SELECT p.id, p.ordinal, p.title, p.status, p.started_at, p.completed_at, p.duration_seconds, "
    "p.action_count, p.completion "
    "FROM plan_items p WHERE p.task_id = ?1 ORDER BY p.ordinal";
static const char SQL_UNASSIGNED[] =
    "SELECT count(*) FROM actions WHERE task_id = ?1 AND plan_item_id IS NULL";
static const char SQL_ITEM_ROW[] =
    "SELECT p.id, p.ordinal, p.title, p.status, p.started_at, p.completed_at, p.duration_seconds, "
    "p.action_count, p.completion "
    "FROM plan_items p WHERE p.task_id = ?1 AND p.ordinal = ?2";
static const char SQL_ACTIONS_PAGE[] =
    "SELECT id, action_type, summary, status, input_data, output_data, duration_ms, created_at "
    "FROM actions WHERE task_id = ?4 AND plan_item_id IS ?1 ORDER BY rowid LIMIT ?2 OFFSET ?3";
static const char SQL_LOGS_PAGE[] =
    "SELECT action_id, id, log_type, content, created_at FROM action_logs WHERE action_id IN "
    "(SELECT id FROM actions WHERE task_id = ?4 AND plan_item_id IS ?1 ORDER BY rowid LIMIT ?2 "
    "OFFSET ?3) "
    "ORDER BY rowid";
static const char SQL_ACTION_ONE[] =
    "SELECT a.id, a.action_type, a.summary, a.status, a.input_data, a.output_data, a.duration_ms, "
    "a.created_at, p.ordinal FROM actions a LEFT JOIN plan_items p ON p.id = a.plan_item_id "
    "WHERE a.id = ?1 AND a.task_id = ?2";
static const char SQL_LOGS_ONE[] =
    "SELECT action_id, id, log_type, content, created_at FROM action_logs WHERE action_id = ?1 "
    "ORDER BY rowid";
static const char SQL_LIST[] =
    "SELECT id FROM tasks WHERE (?1 IS NULL OR status = ?1) AND updated_at >= ?2 "
    "ORDER BY updated_at DESC, rowid DESC LIMIT ?3";
static const char SQL_THREAD[] =
    "SELECT id, role, msg_type, content, created_at FROM "
    "(SELECT rowid AS r, * FROM task_messages WHERE task_id = ?1 ORDER BY rowid DESC LIMIT ?2) "
    "ORDER BY r";
static const char SQL_TIMELINE[] =
    "SELECT id, ordinal, action_type, summary, created_at, event FROM "
    "(SELECT a.rowid AS r, a.id, p.ordinal, a.action_type, a.summary, a.created_at, "
    "CASE WHEN a.action_type = 'human' AND json_valid(a.input_data) "
    "THEN json_extract(a.input_data, '$.event') END AS event "
    "FROM actions a LEFT JOIN plan_items p ON p.id = a.plan_item_id "
    "WHERE a.task_id = ?1 ORDER BY a.rowid DESC LIMIT ?2) ORDER BY r";
static const char SQL_THREAD_COUNT[] =
    "SELECT count(*) FROM task_messages WHERE task_id = ?1";

static const char *
col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

static void
add_col_str(json_object *o, const char *key, sqlite3_stmt *s, int i)
{
	jx_add_str(o, key, col_text(s, i));
}

static void
add_col_time(json_object *o, const char *key, sqlite3_stmt *s, int i)
{
	jx_add_time(o, key, sqlite3_column_type(s, i) == SQLITE_NULL ? 0 : sqlite3_column_int64(s, i));
}

static void
add_col_num(json_object *o, const char *key, sqlite3_stmt *s, int i)
{
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		json_object_object_add(o, key, NULL);
	else
		json_object_object_add(o, key, json_object_new_double(sqlite3_column_double(s, i)));
}

/* Stored JSON text back to a value (null if absent or unparseable). */
static void
add_col_json(json_object *o, const char *key, sqlite3_stmt *s, int i)
{
	const char *t = col_text(s, i);

	json_object_object_add(o, key, jx_parse_stored(t));
}

json_object *
tview_log(sqlite3_stmt *s)
{
	json_object *l = json_object_new_object();

	add_col_str(l, "log_id", s, 1);
	add_col_str(l, "log_type", s, 2);
	add_col_str(l, "content", s, 3);
	add_col_time(l, "created_at", s, 4);
	return l;
}

json_object *
tview_action_head(sqlite3_stmt *s)
{
	json_object *a = json_object_new_object();

	add_col_str(a, "action_id", s, 0);
	add_col_str(a, "action_type", s, 1);
	add_col_str(a, "summary", s, 2);
	add_col_str(a, "status", s, 3);
	add_col_json(a, "input_data", s, 4);
	add_col_json(a, "output_data", s, 5);
	add_col_num(a, "duration_ms", s, 6);
	add_col_time(a, "created_at", s, 7);
	return a;
}

/* The columns of SQL_ACTIONS_PAGE / SQL_ACTION_ONE (0..7). */
static json_object *
action_json(sqlite3_stmt *s)
{
	json_object *a = tview_action_head(s);

	json_object_object_add(a, "logs", json_object_new_array());
	return a;
}

static void
page_bind(sqlite3_stmt *s, const char *task_id, const char *item_id, int limit, int offset)
{
	if (item_id != NULL)
		sqlite3_bind_text(s, 1, item_id, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 1);
	sqlite3_bind_int(s, 2, limit);
	sqlite3_bind_int(s, 3, offset);
	sqlite3_bind_text(s, 4, task_id, -1, SQLITE_STATIC);
}

/* A page of an item's actions with their logs, oldest first; item_id NULL
 * (ordinal -1): the task-level actions of task_id. */
static json_object *
actions_page(struct store *st, const char *task_id, const char *item_id, int64_t ordinal,
    int limit, int offset, struct derr *e)
{
	json_object *arr = json_object_new_array(), *byid = json_object_new_object(), *a, *logs;
	sqlite3_stmt *s = store_stmt(st, SQL_ACTIONS_PAGE);
	int rc;

	if (s == NULL)
		goto fail;
	page_bind(s, task_id, item_id, limit, offset);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		a = action_json(s);
		json_object_object_add(a, "ordinal", ordinal < 0 ? NULL : json_object_new_int64(ordinal));
		json_object_array_add(arr, a);
		json_object_object_add(byid, col_text(s, 0), json_object_get(a));
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		goto fail;
	s = store_stmt(st, SQL_LOGS_PAGE);
	if (s == NULL)
		goto fail;
	page_bind(s, task_id, item_id, limit, offset);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (json_object_object_get_ex(byid, col_text(s, 0), &a) &&
		    json_object_object_get_ex(a, "logs", &logs))
			json_object_array_add(logs, tview_log(s));
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		goto fail;
	json_object_put(byid);
	return arr;
fail:
	json_object_put(arr);
	json_object_put(byid);
	store_fail(st, "actions page", e);
	return NULL;
}

/* A stored completion verdict (column i, JSON or NULL) as o's
 * "completion" and "completion_why"; nothing when there is none. */
static void
add_completion(json_object *o, sqlite3_stmt *s, int i)
{
	json_object *c = jx_parse_stored(col_text(s, i)), *v;

	if (c == NULL)
		return;
	if (json_object_object_get_ex(c, "completion", &v))
		json_object_object_add(o, "completion", json_object_get(v));
	if (json_object_object_get_ex(c, "completion_why", &v))
		json_object_object_add(o, "completion_why", json_object_get(v));
	json_object_put(c);
}

/* The columns of SQL_ITEMS / SQL_ITEM_ROW as an item-summary entry. */
static json_object *
item_json(sqlite3_stmt *s)
{
	json_object *it = json_object_new_object();

	json_object_object_add(it, "ordinal", json_object_new_int64(sqlite3_column_int64(s, 1)));
	add_col_str(it, "title", s, 2);
	add_col_str(it, "status", s, 3);
	add_col_time(it, "started_at", s, 4);
	add_col_time(it, "completed_at", s, 5);
	add_col_num(it, "duration_s", s, 6);
	json_object_object_add(it, "actions", json_object_new_int64(sqlite3_column_int64(s, 7)));
	add_completion(it, s, 8);
	return it;
}

static int64_t
count_query(struct store *st, const char *sql, const char *id)
{
	sqlite3_stmt *s = store_stmt(st, sql);
	int64_t n = -1;

	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return n;
}

/* "Done: a, b. Current: c. Remaining: d." from the items array. */
static void
add_sentence(json_object *sum, json_object *items)
{
	struct buf done, cur, rest;
	size_t i, n = json_object_array_length(items);
	char *text;

	buf_init(&done, 4096);
	buf_init(&cur, 4096);
	buf_init(&rest, 4096);
	for (i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i), *v;
		const char *status, *title;
		struct buf *b;

		json_object_object_get_ex(it, "status", &v);
		status = json_object_get_string(v);
		json_object_object_get_ex(it, "title", &v);
		title = json_object_get_string(v);
		if (strcmp(status, "completed") == 0 || strcmp(status, "skipped") == 0)
			b = &done;
		else if (strcmp(status, "active") == 0 || strcmp(status, "failed") == 0)
			b = &cur;
		else if (strcmp(status, "pending") == 0)
			b = &rest;
		else
			continue;
		if ((b->len && buf_append(b, ", ", 2) != 0) || buf_append(b, title, strlen(title)) != 0)
			continue;
	}
	text = xasprintf("Done: %s. Current: %s. Remaining: %s.",
	    done.len ? done.data : "nothing", cur.len ? cur.data : "none",
	    rest.len ? rest.data : "nothing");
	json_object_object_add(sum, "summary", json_object_new_string(text));
	free(text);
	buf_free(&done);
	buf_free(&cur);
	buf_free(&rest);
}

/* Expands items with their latest actions (FOCUSED: the current item
 * only; found != 0: there is none) and, except FOCUSED, adds the latest
 * task-level actions as task_actions. Lock held. */
static int
expand_actions(struct store *st, json_object *sum, json_object *items, const char *id,
    enum task_detail detail, int found, int64_t cur_ord, int64_t unassigned, struct derr *e)
{
	size_t i, n = json_object_array_length(items);
	json_object *acts;
	sqlite3_stmt *s;

	/* Item ids come from a second pass so the item query is not held open. */
	for (i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i), *v;
		int64_t ord, count;
		char item_id[ID_LEN];

		json_object_object_get_ex(it, "ordinal", &v);
		ord = json_object_get_int64(v);
		if (detail == DETAIL_FOCUSED && (found != 0 || ord != cur_ord))
			continue;
		json_object_object_get_ex(it, "actions", &v);
		count = json_object_get_int64(v);
		s = store_stmt(st, "SELECT id FROM plan_items WHERE task_id = ?1 AND ordinal = ?2");
		if (s == NULL)
			return store_fail(st, "task summary", e);
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, ord);
		if (sqlite3_step(s) != SQLITE_ROW) {
			sqlite3_reset(s);
			return store_fail(st, "task summary", e);
		}
		snprintf(item_id, sizeof item_id, "%s", col_text(s, 0));
		sqlite3_reset(s);
		acts = actions_page(st, id, item_id, ord, LIM_DETAIL_ACTIONS,
		    count > LIM_DETAIL_ACTIONS ? (int)(count - LIM_DETAIL_ACTIONS) : 0, e);
		if (acts == NULL)
			return -1;
		json_object_object_add(it, "action_details", acts);
	}
	if (detail == DETAIL_FOCUSED || unassigned <= 0)
		return 0;
	acts = actions_page(st, id, NULL, -1, LIM_DETAIL_ACTIONS,
	    unassigned > LIM_DETAIL_ACTIONS ? (int)(unassigned - LIM_DETAIL_ACTIONS) : 0, e);
	if (acts == NULL)
		return -1;
	json_object_object_add(sum, "task_actions", acts);
	return 0;
}

/* "replays": the ids of the task's replays, when it has any. */
static void
add_replays(struct store *st, json_object *sum, const char *id)
{
	sqlite3_stmt *s = store_stmt(st, SQL_REPLAYS_OF);
	json_object *a = NULL;

	if (s == NULL)
		return;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (a == NULL)
			a = json_object_new_array();
		json_object_array_add(a, json_object_new_string(col_text(s, 0)));
	}
	sqlite3_reset(s);
	if (a != NULL)
		json_object_object_add(sum, "replays", a);
}

/* Lock held. */
json_object *
tview_summary(struct store *st, const char *id, enum task_detail detail,
    bool sentence, struct derr *e)
{
	json_object *sum = NULL, *items, *meta;
	sqlite3_stmt *s = store_stmt(st, SQL_TASK_ROW);
	int64_t done = 0, total = 0, cur_ord = -1, unassigned;
	char cur_id[ID_LEN];
	int rc, found = 1;

	if (s == NULL) {
		store_fail(st, "task row", e);
		return NULL;
	}
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		if (rc == SQLITE_DONE)
			derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%s'", id);
		else
			store_fail(st, "task row", e);
		return NULL;
	}
	sum = json_object_new_object();
	add_col_str(sum, "task_id", s, 0);
	add_col_str(sum, "name", s, 1);
	add_col_str(sum, "status", s, 2);
	add_col_str(sum, "agent_id", s, 3);
	meta = jx_parse_stored(col_text(s, 4));
	json_object_object_add(sum, "metadata", meta ? meta : json_object_new_object());
	add_col_time(sum, "created_at", s, 5);
	add_col_time(sum, "last_update", s, 6);
	add_completion(sum, s, 7);
	if ((meta = jx_parse_stored(col_text(s, 8))) != NULL)
		json_object_object_add(sum, "loops", meta);
	if ((meta = jx_parse_stored(col_text(s, 9))) != NULL)
		json_object_object_add(sum, "replay", meta);
	sqlite3_reset(s);
	add_replays(st, sum, id);

	if (detail == DETAIL_FOCUSED &&
	    (found = task_current_item(st, id, cur_id, &cur_ord, e)) < 0)
		goto fail;
	items = json_object_new_array();
	json_object_object_add(sum, "items", items);
	s = store_stmt(st, SQL_ITEMS);
	if (s == NULL)
		goto dbfail;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_object *it = item_json(s);

		total++;
		if (strcmp(col_text(s, 3), "completed") == 0)
			done++;
		json_object_array_add(items, it);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		goto dbfail;
	json_object_object_add(sum, "progress_pct", json_object_new_int64(
	    total ? (int64_t)llround(100.0 * (double)done / (double)total) : 0));
	unassigned = count_query(st, SQL_UNASSIGNED, id);
	json_object_object_add(sum, "unassigned_actions", json_object_new_int64(unassigned));
	if (detail != DETAIL_ITEMS && expand_actions(st, sum, items, id, detail, found, cur_ord,
	    unassigned, e) != 0)
		goto fail;
	if (sentence)
		add_sentence(sum, items);
	return sum;
dbfail:
	store_fail(st, "task summary", e);
fail:
	json_object_put(sum);
	return NULL;
}

json_object *
task_summary(struct store *st, const char *id, enum task_detail detail,
    bool sentence, struct derr *e)
{
	json_object *sum;

	st = store_read_begin(st);     /* a snapshot; never waits for writers */
	sum = tview_summary(st, id, detail, sentence, e);
	store_read_end(st);
	return sum;
}

json_object *
task_list(struct store *st, const struct task_query *q, struct derr *e)
{
	json_object *out = NULL, *tasks = json_object_new_array(), *ids = json_object_new_array();
	sqlite3_stmt *s;
	size_t i, n;
	int rc;

	st = store_read_begin(st);     /* a snapshot; never waits for writers */
	s = store_stmt(st, SQL_LIST);
	if (s == NULL) {
		store_fail(st, "task list", e);
		goto out;
	}
	if (q->status >= 0)
		sqlite3_bind_text(s, 1, task_status_name(q->status), -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, q->since_ms);
	sqlite3_bind_int(s, 3, q->limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		json_object_array_add(ids, json_object_new_string(col_text(s, 0)));
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		store_fail(st, "task list", e);
		goto out;
	}
	n = json_object_array_length(ids);
	for (i = 0; i < n; i++) {
		json_object *sum = tview_summary(st,
		    json_object_get_string(json_object_array_get_idx(ids, i)), DETAIL_ITEMS, false, e);

		if (sum == NULL)
			goto out;
		json_object_array_add(tasks, sum);
	}
	out = json_object_new_object();
	json_object_object_add(out, "tasks", tasks);
	json_object_object_add(out, "count", json_object_new_int64((int64_t)n));
	tasks = NULL;
out:
	store_read_end(st);
	json_object_put(tasks);
	json_object_put(ids);
	return out;
}

json_object *
task_item_view(struct store *st, const char *id, int64_t ordinal, int limit,
    int offset, struct derr *e)
{
	json_object *out = NULL, *acts;
	sqlite3_stmt *s;
	char item_id[ID_LEN];
	int status, rc;

	st = store_read_begin(st);     /* a snapshot; never waits for writers */
	if (task_lookup(st, id, &status, e) != 0)
		goto out;
	s = store_stmt(st, SQL_ITEM_ROW);
	if (s == NULL) {
		store_fail(st, "item row", e);
		goto out;
	}
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, ordinal);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		if (rc == SQLITE_DONE)
			derr_set(e, DERR_NOT_FOUND, "ordinal",
			    "task %s has no plan item with ordinal %lld (ordinals are 0-based)",
			    id, (long long)ordinal);
		else
			store_fail(st, "item row", e);
		goto out;
	}
	out = json_object_new_object();
	json_object_object_add(out, "task_id", json_object_new_string(id));
	json_object_object_add(out, "ordinal", json_object_new_int64(ordinal));
	add_col_str(out, "title", s, 2);
	add_col_str(out, "status", s, 3);
	add_col_time(out, "started_at", s, 4);
	add_col_time(out, "completed_at", s, 5);
	add_col_num(out, "duration_seconds", s, 6);
	json_object_object_add(out, "action_count", json_object_new_int64(sqlite3_column_int64(s, 7)));
	snprintf(item_id, sizeof item_id, "%s", col_text(s, 0));
	sqlite3_reset(s);
	acts = actions_page(st, id, item_id, ordinal, limit, offset, e);
	if (acts == NULL) {
		json_object_put(out);
		out = NULL;
		goto out;
	}
	json_object_object_add(out, "actions", acts);
	json_object_object_add(out, "limit", json_object_new_int(limit));
	json_object_object_add(out, "offset", json_object_new_int(offset));
out:
	store_read_end(st);
	return out;
}

json_object *
task_action_view(struct store *st, const char *task_id, const char *action_id,
    struct derr *e)
{
	json_object *a = NULL, *logs;
	sqlite3_stmt *s;
	int rc;

	st = store_read_begin(st);     /* a snapshot; never waits for writers */
	s = store_stmt(st, SQL_ACTION_ONE);
	if (s == NULL) {
		store_fail(st, "action row", e);
		goto out;
	}
	sqlite3_bind_text(s, 1, action_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, task_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		if (rc == SQLITE_DONE)
			derr_set(e, DERR_NOT_FOUND, "action_id",
			    "task %s has no action with id '%s'", task_id, action_id);
		else
			store_fail(st, "action row", e);
		goto out;
	}
	a = action_json(s);
	if (sqlite3_column_type(s, 8) == SQLITE_NULL)
		json_object_object_add(a, "ordinal", NULL);
	else
		json_object_object_add(a, "ordinal", json_object_new_int64(sqlite3_column_int64(s, 8)));
	sqlite3_reset(s);
	json_object_object_get_ex(a, "logs", &logs);
	s = store_stmt(st, SQL_LOGS_ONE);
	if (s == NULL) {
		store_fail(st, "action logs", e);
		json_object_put(a);
		a = NULL;
		goto out;
	}
	sqlite3_bind_text(s, 1, action_id, -1, SQLITE_STATIC);
	while (sqlite3_step(s) == SQLITE_ROW)
		json_object_array_add(logs, tview_log(s));
	sqlite3_reset(s);
out:
	store_read_end(st);
	return a;
}

json_object *
task_thread(struct store *st, const char *id, int limit, struct derr *e)
{
	json_object *out = NULL, *sum, *items, *brief, *msgs, *v;
	sqlite3_stmt *s;
	size_t i, n;
	int rc;

	st = store_read_begin(st);     /* a snapshot; never waits for writers */
	sum = tview_summary(st, id, DETAIL_ITEMS, false, e);
	if (sum == NULL)
		goto out;
	out = json_object_new_object();
	json_object_object_add(out, "task_id", json_object_new_string(id));
	json_object_object_get_ex(sum, "name", &v);
	json_object_object_add(out, "name", json_object_get(v));
	json_object_object_get_ex(sum, "status", &v);
	json_object_object_add(out, "status", json_object_get(v));
	json_object_object_get_ex(sum, "items", &items);
	brief = json_object_new_array();
	n = json_object_array_length(items);
	for (i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i), *b = json_object_new_object();

		json_object_object_get_ex(it, "ordinal", &v);
		json_object_object_add(b, "ordinal", json_object_get(v));
		json_object_object_get_ex(it, "title", &v);
		json_object_object_add(b, "title", json_object_get(v));
		json_object_object_get_ex(it, "status", &v);
		json_object_object_add(b, "status", json_object_get(v));
		json_object_array_add(brief, b);
	}
	json_object_object_add(out, "items", brief);
	json_object_put(sum);
	msgs = json_object_new_array();
	json_object_object_add(out, "messages", msgs);
	s = store_stmt(st, SQL_THREAD);
	if (s == NULL)
		goto fail;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_object *m = json_object_new_object();

		add_col_str(m, "message_id", s, 0);
		add_col_str(m, "role", s, 1);
		add_col_str(m, "msg_type", s, 2);
		add_col_str(m, "content", s, 3);
		add_col_time(m, "created_at", s, 4);
		json_object_array_add(msgs, m);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		goto fail;
	json_object_object_add(out, "message_count",
	    json_object_new_int64(count_query(st, SQL_THREAD_COUNT, id)));
	goto out;
fail:
	store_fail(st, "thread", e);
	json_object_put(out);
	out = NULL;
out:
	store_read_end(st);
	return out;
}

json_object *
task_timeline(struct store *st, const char *id, int limit, struct derr *e)
{
	json_object *out = NULL, *x;
	sqlite3_stmt *s;
	int status, rc;

	st = store_read_begin(st);     /* a snapshot; never waits for writers */
	if (task_lookup(st, id, &status, e) != 0)
		goto out;
	if ((s = store_stmt(st, SQL_TIMELINE)) == NULL) {
		store_fail(st, "timeline", e);
		goto out;
	}
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, limit);
	out = json_object_new_array();
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		x = json_object_new_object();
		add_col_str(x, "action_id", s, 0);
		json_object_object_add(x, "ordinal", sqlite3_column_type(s, 1) == SQLITE_NULL ? NULL :
		    json_object_new_int64(sqlite3_column_int64(s, 1)));
		add_col_str(x, "action_type", s, 2);
		add_col_str(x, "summary", s, 3);
		add_col_time(x, "created_at", s, 4);
		if (sqlite3_column_type(s, 5) == SQLITE_TEXT)
			add_col_str(x, "event", s, 5);
		json_object_array_add(out, x);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		json_object_put(out);
		out = NULL;
		store_fail(st, "timeline", e);
	}
out:
	store_read_end(st);
	return out;
}
