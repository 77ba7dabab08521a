/*
 * taskview_full.c - the big views (detail=actions/full/focused) written
 * as they are read (task.h: task_view_*), for a streamed reply and the
 * export bundle's task.json.
 *
 * The head (task row, items, counts: what taskview.c's summary makes for
 * DETAIL_ITEMS) is read when the view opens; writing walks its keys in
 * order and puts, where the in-memory view has them, each expanded item's
 * action_details (after its own keys) and task_actions (after
 * unassigned_actions), read one action at a time with its logs one line
 * at a time. Every piece is json-c's own text of a value (jx_string), so
 * the document is byte for byte what the in-memory view serializes to.
 * Invariants: one snapshot (store_read_begin on the view's private
 * reader) from task_view_open to task_view_close; at most one action and
 * one log line are held at a time.
 *
 * Not here: the in-memory views (taskview.c), where the bytes go (the
 * caller's sink: a pipe, a ZIP entry, a capped buffer).
 */
#include "task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "lim.h"
#include "task_int.h"
#include "utf8.h"

static const char SQL_ITEM_ID[] =
    "SELECT id FROM plan_items WHERE task_id = ?1 AND ordinal = ?2";
static const char SQL_PAGE[] =
    "SELECT id, action_type, summary, status, input_data, output_data, duration_ms, created_at "
    "FROM actions WHERE task_id = ?4 AND plan_item_id IS ?1 ORDER BY rowid LIMIT ?2 OFFSET ?3";
static const char SQL_LOGS[] =
    "SELECT action_id, id, log_type, content, created_at FROM action_logs WHERE action_id = ?1 "
    "ORDER BY rowid";

struct task_view {
	struct store *rd;           /* the snapshot's reader (not owned) */
	char id[ID_LEN];
	enum task_detail detail;
	json_object *head;
	int found;                  /* FOCUSED: 0 when the task has a current item */
	int64_t cur_ord;
	int64_t unassigned;
};

struct vout {
	task_sink_fn sink;
	void *cls;
	bool stopped;
};

static int
put(struct vout *o, const char *p, size_t n)
{
	char *fixed;
	size_t fl;
	int rc;

	if (o->stopped)
		return -1;
	if (n == 0)
		return 0;
	if (utf8_valid(p, n))
		rc = o->sink(o->cls, p, n);
	else {
		fixed = utf8_dup(p, n, &fl);
		rc = o->sink(o->cls, fixed, fl);
		free(fixed);
	}
	if (rc != 0)
		o->stopped = true;
	return rc != 0 ? -1 : 0;
}

static int
put_str(struct vout *o, const char *s)
{
	return put(o, s, strlen(s));
}

/* v's text; open: without its closing brace (an object to add keys to). */
static int
put_json(struct vout *o, json_object *v, bool open)
{
	size_t n;
	const char *s;

	if (v == NULL)
		return put_str(o, "null");
	s = jx_string(v, &n);
	return put(o, s, open && n > 0 ? n - 1 : n);
}

/* `,"key":` (no comma for the first). */
static int
put_key(struct vout *o, bool comma, const char *key)
{
	json_object *k = json_object_new_string(key);
	int rc = -1;

	if ((!comma || put_str(o, ",") == 0) && put_json(o, k, false) == 0)
		rc = put_str(o, ":");
	json_object_put(k);
	return rc;
}

/* One action: its row's columns, then "logs" (one line at a time), then
 * "ordinal", in the in-memory view's order. */
static int
put_action(struct vout *o, struct store *rd, sqlite3_stmt *s, int64_t ordinal, struct derr *e)
{
	json_object *a = tview_action_head(s), *l;
	sqlite3_stmt *ls = store_stmt(rd, SQL_LOGS);
	char num[48];
	int rc = -1, step, n = 0;

	if (ls == NULL) {
		store_fail(rd, "task view logs", e);
		goto out;
	}
	sqlite3_bind_text(ls, 1, (const char *)sqlite3_column_text(s, 0), -1, SQLITE_TRANSIENT);
	if (put_json(o, a, true) != 0 || put_str(o, ",\"logs\":[") != 0)
		goto out;
	while ((step = sqlite3_step(ls)) == SQLITE_ROW) {
		l = tview_log(ls);
		rc = n++ > 0 ? put_str(o, ",") : 0;
		if (rc == 0)
			rc = put_json(o, l, false);
		json_object_put(l);
		if (rc != 0)
			goto out;
	}
	rc = -1;
	if (step != SQLITE_DONE) {
		store_fail(rd, "task view logs", e);
		goto out;
	}
	if (ordinal < 0)
		snprintf(num, sizeof num, "],\"ordinal\":null}");
	else
		snprintf(num, sizeof num, "],\"ordinal\":%lld}", (long long)ordinal);
	rc = put_str(o, num);
out:
	if (ls != NULL)
		sqlite3_reset(ls);
	json_object_put(a);
	return rc;
}

/* The latest LIM_DETAIL_ACTIONS of count actions of item_id (NULL: the
 * task-level ones, ordinal -1), oldest first, as an array. */
static int
put_page(struct vout *o, struct task_view *v, const char *item_id, int64_t ordinal,
    int64_t count, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(v->rd, SQL_PAGE);
	int rc = 0, step = SQLITE_DONE, n = 0;

	if (s == NULL)
		return store_fail(v->rd, "task view actions", e);
	if (item_id != NULL)
		sqlite3_bind_text(s, 1, item_id, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 1);
	sqlite3_bind_int(s, 2, LIM_DETAIL_ACTIONS);
	sqlite3_bind_int64(s, 3, count > LIM_DETAIL_ACTIONS ? count - LIM_DETAIL_ACTIONS : 0);
	sqlite3_bind_text(s, 4, v->id, -1, SQLITE_STATIC);
	if (put_str(o, "[") != 0)
		rc = -1;
	while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
		rc = n++ > 0 ? put_str(o, ",") : 0;
		if (rc == 0)
			rc = put_action(o, v->rd, s, ordinal, e);
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = store_fail(v->rd, "task view actions", e);
	sqlite3_reset(s);
	return rc != 0 ? -1 : put_str(o, "]");
}

/* An item of the head, with its action_details when the detail has them. */
static int
put_item(struct vout *o, struct task_view *v, json_object *it, struct derr *e)
{
	int64_t ord = json_object_get_int64(json_object_object_get(it, "ordinal"));
	int64_t count = json_object_get_int64(json_object_object_get(it, "actions"));
	char item_id[ID_LEN];
	sqlite3_stmt *s;

	if (v->detail == DETAIL_ITEMS || (v->detail == DETAIL_FOCUSED &&
	    (v->found != 0 || ord != v->cur_ord)))
		return put_json(o, it, false);
	s = store_stmt(v->rd, SQL_ITEM_ID);
	if (s == NULL)
		return store_fail(v->rd, "task view", e);
	sqlite3_bind_text(s, 1, v->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, ord);
	if (sqlite3_step(s) != SQLITE_ROW) {
		sqlite3_reset(s);
		return store_fail(v->rd, "task view", e);
	}
	snprintf(item_id, sizeof item_id, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_reset(s);
	if (put_json(o, it, true) != 0 || put_str(o, ",\"action_details\":") != 0 ||
	    put_page(o, v, item_id, ord, count, e) != 0)
		return -1;
	return put_str(o, "}");
}

static int
put_items(struct vout *o, struct task_view *v, json_object *items, struct derr *e)
{
	size_t i, n = json_object_array_length(items);

	if (put_str(o, "[") != 0)
		return -1;
	for (i = 0; i < n; i++)
		if ((i > 0 && put_str(o, ",") != 0) ||
		    put_item(o, v, json_object_array_get_idx(items, i), e) != 0)
			return -1;
	return put_str(o, "]");
}

int
task_view_write(struct task_view *v, task_sink_fn sink, void *cls, struct derr *e)
{
	struct vout o = { sink, cls, false };
	bool first = true;

	if (put_str(&o, "{") != 0)
		return -1;
	json_object_object_foreach(v->head, key, val) {
		if (put_key(&o, !first, key) != 0)
			return -1;
		first = false;
		if (strcmp(key, "items") == 0 && json_object_is_type(val, json_type_array)) {
			if (put_items(&o, v, val, e) != 0)
				return -1;
		} else if (put_json(&o, val, false) != 0)
			return -1;
		if (strcmp(key, "unassigned_actions") == 0 && v->detail == DETAIL_ACTIONS &&
		    v->unassigned > 0 && (put_key(&o, true, "task_actions") != 0 ||
		    put_page(&o, v, NULL, -1, v->unassigned, e) != 0))
			return -1;
	}
	return put_str(&o, "}");
}

struct task_view *
task_view_open(struct store *rd, const char *id, enum task_detail detail, struct derr *e)
{
	struct task_view *v = xcalloc(1, sizeof *v);
	char cur_id[ID_LEN];

	v->rd = store_read_begin(rd);
	snprintf(v->id, sizeof v->id, "%s", id);
	v->detail = detail;
	v->found = 1;
	v->head = tview_summary(v->rd, id, DETAIL_ITEMS, false, e);
	if (v->head == NULL ||
	    (detail == DETAIL_FOCUSED && (v->found = task_current_item(v->rd, id, cur_id,
	    &v->cur_ord, e)) < 0)) {
		task_view_close(v);
		return NULL;
	}
	v->unassigned = json_object_get_int64(json_object_object_get(v->head, "unassigned_actions"));
	return v;
}

json_object *
task_view_head(struct task_view *v)
{
	return v->head;
}

void
task_view_close(struct task_view *v)
{
	if (v == NULL)
		return;
	store_read_end(v->rd);
	json_object_put(v->head);
	free(v);
}
