/*
 * task_items.c - writes of a task's plan items (append, status, rename).
 * Actions, logs and messages are task_actions.c; row writers and the
 * current item, task_rows.c. See task.h for the contract and task.c for how every
 * write runs (a *_tx body under store_tx: all or nothing, created_at never
 * decreasing in rowid order, the change recorded in the thread, updated_at
 * bumped).
 *
 * Invariants: ordinals are 0-based per task and an append starts after
 * the current last one; every body checks its task with task_lookup before
 * it writes, so nothing is written under a task that does not exist.
 *
 * Does not: create, update or end tasks themselves (task.c), or read views
 * (taskview.c).
 */
#include "task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "completion.h"
#include "core/buf.h"
#include "events.h"
#include "task_int.h"
#include "taskstate.h"

static const char SQL_ITEM_SET[] =
    "UPDATE plan_items SET status = ?2, title = ?3, started_at = ?4, completed_at = ?5, "
    "duration_seconds = ?6 WHERE id = ?1";
static const char SQL_ITEM_RENAME[] =
    "UPDATE plan_items SET title = ?2 WHERE id = ?1";

struct append_tx {
	const char *id, *note;
	json_object *titles, *added;
	struct buf text;
	char *msg;
};

static int
append_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct append_tx *t = arg;
	size_t n = json_object_array_length(t->titles);
	int cur;

	t->added = json_object_new_array();
	if (task_lookup(st, t->id, &cur, e) != 0 ||
	    titem_insert(st, t->id, t->titles, t->added, &t->text, e) != 0)
		return -1;
	t->msg = xasprintf("%s%sPlan updated: added %zu item%s: %s", t->note ? t->note : "",
	    t->note ? " | " : "", n, n == 1 ? "" : "s", t->text.data ? t->text.data : "");
	if (trow_sys_msg(st, t->id, "plan", t->msg, now, e) != 0)
		return -1;
	return trow_touch(st, t->id, now, true, e);
}

int
task_items_append(struct store *st, const char *id, json_object *titles,
    const char *note, json_object **added_out, struct derr *e)
{
	struct append_tx t = { .id = id, .note = note, .titles = titles };
	int rc;

	*added_out = NULL;
	buf_init(&t.text, 8192);
	rc = store_tx(st, append_tx, &t, e);
	if (rc == 0) {
		events_publish("item", "created", id, NULL);
		*added_out = t.added;
		t.added = NULL;
	}
	json_object_put(t.added);
	buf_free(&t.text);
	free(t.msg);
	return rc;
}

struct item_tx {
	const char *id;
	int64_t ordinal;
	const struct item_patch *p;
	struct completion_rec rec;      /* the verdict of a move to completed */
};

/* The item's row after a move from cur to to (or a rename when equal). */
static int
item_write(struct store *st, const char *item_id, int cur, int to, const char *title,
    int64_t started, int64_t now, struct derr *e)
{
	int64_t completed = 0;
	double duration = -1;
	sqlite3_stmt *s;

	if (to == cur) {
		/* Status unchanged: keep the clock fields, maybe rename. */
		s = store_stmt(st, SQL_ITEM_RENAME);
		if (s != NULL) {
			sqlite3_bind_text(s, 1, item_id, -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 2, title, -1, SQLITE_STATIC);
		}
		return store_exec(st, s, "item set", e);
	}
	/* Completed or failed straight from pending: it started when it
	 * ended (started_at = completed_at, 0 s). */
	if (started <= 0 && (to == ITEM_ACTIVE || to == ITEM_COMPLETED || to == ITEM_FAILED))
		started = now;
	if (item_status_ends(to)) {
		completed = now;
		if (started > 0)
			duration = (double)(now - started) / 1000.0;
	}
	s = store_stmt(st, SQL_ITEM_SET);
	if (s != NULL) {
		sqlite3_bind_text(s, 1, item_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, item_status_name(to), -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, title, -1, SQLITE_STATIC);
		if (started > 0)
			sqlite3_bind_int64(s, 4, started);
		if (completed > 0)
			sqlite3_bind_int64(s, 5, completed);
		if (duration >= 0)
			sqlite3_bind_double(s, 6, duration);
	}
	return store_exec(st, s, "item set", e);
}

static int
item_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct item_tx *t = arg;
	const struct item_patch *p = t->p;
	int64_t started;
	char item_id[ID_LEN], allowed[128];
	char *title = NULL, *msg = NULL;
	int cur, tstatus, to, rc = -1;

	if (task_lookup(st, t->id, &tstatus, e) != 0 ||
	    trow_item_get(st, t->id, t->ordinal, item_id, &cur, &title, &started, e) != 0)
		goto out;
	to = p->status >= 0 ? p->status : cur;
	if (!item_status_can(cur, to)) {
		item_status_allowed(cur, allowed, sizeof allowed);
		derr_set(e, DERR_CONFLICT, "status",
		    "plan item %lld cannot go from %s to %s (allowed: %s)", (long long)t->ordinal,
		    item_status_name(cur), item_status_name(to), allowed);
		goto out;
	}
	if (item_write(st, item_id, cur, to, p->title ? p->title : title, started, now, e) != 0)
		goto out;
	if (to != cur) {
		msg = xasprintf("Item %lld (%s): %s → %s", (long long)t->ordinal,
		    p->title ? p->title : title, item_status_name(cur), item_status_name(to));
		if (trow_sys_msg(st, t->id, "progress", msg, now, e) != 0)
			goto out;
	}
	/* Judged before the note of this same call is logged (a note is no
	 * evidence), since the item started (a pending item: all its actions). */
	if (to == ITEM_COMPLETED && cur != to &&
	    completion_tx(st, t->id, item_id, t->ordinal, started > 0 ? started : 0, NULL, now,
	    &t->rec, e) != 0)
		goto out;
	if (p->note != NULL && trow_note_insert(st, t->id, item_id, p->note, now, e) != 0)
		goto out;
	rc = trow_touch(st, t->id, now, true, e);
out:
	free(title);
	free(msg);
	return rc;
}

int
task_item_update(struct store *st, const char *id, int64_t ordinal,
    const struct item_patch *p, struct derr *e)
{
	struct item_tx t = { .id = id, .ordinal = ordinal, .p = p };
	int rc = store_tx(st, item_tx, &t, e);

	if (rc == 0) {
		char ref[24];

		snprintf(ref, sizeof ref, "%lld", (long long)ordinal);
		events_publish("item", "updated", id, ref);
		completion_publish(id, &t.rec);
	}
	if (rc == 0 && p->completion != NULL) {
		*p->completion = t.rec;
		t.rec.why = NULL;
	}
	json_object_put(t.rec.why);
	return rc;
}
