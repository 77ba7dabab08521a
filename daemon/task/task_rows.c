/*
 * task_rows.c - the task family's row writers and row lookups, under task.c
 * (tasks), task_items.c (plan items) and task_actions.c (actions, logs,
 * messages, verdicts): each runs inside a store_tx body (the lock held, in
 * the transaction, `now` from store_now) and returns 0, or -1 with e (the
 * caller's transaction then undoes everything). task_int.h declares them.
 *
 * Invariants: an id collision is retried with a new id inside the same
 * transaction (ID_RETRIES); the task's updated_at moves at most once a
 * second unless a change asks (trow_touch); every writer here writes rows
 * only, never events, hooks or replies.
 *
 * Does not: check transitions (taskstate.c) or publish anything.
 */
#include "task.h"

#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "lim.h"
#include "task_int.h"
#include "taskstate.h"
#include "utf8.h"

#define ID_RETRIES 8

static const char SQL_TASK_STATUS_GET[] = "SELECT status FROM tasks WHERE id = ?1";
/* Activity bumps updated_at at most once a second per task: at thousands
 * of actions a second this saves the task row and its two indexes from
 * being rewritten on every commit (about a third of the pages written). */
static const char SQL_TASK_TOUCH[] =
    "UPDATE tasks SET updated_at = ?2 WHERE id = ?1 AND updated_at <= ?2 - 1000";
static const char SQL_TASK_TOUCH_NOW[] =
    "UPDATE tasks SET updated_at = ?2 WHERE id = ?1";
static const char SQL_ITEM_COUNT_ACTION[] =
    "UPDATE plan_items SET action_count = action_count + 1 WHERE id = ?1";
static const char SQL_ACTION_INSERT[] =
    "INSERT INTO actions (id, task_id, plan_item_id, action_type, summary, status, "
    "input_data, output_data, duration_ms, created_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
static const char SQL_LOG_INSERT[] =
    "INSERT INTO action_logs (id, action_id, log_type, content, created_at) VALUES (?1, ?2, ?3, ?4, ?5)";
static const char SQL_MSG_INSERT[] =
    "INSERT INTO task_messages (id, task_id, role, msg_type, content, created_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
static const char SQL_ITEM_INSERT[] =
    "INSERT INTO plan_items (id, task_id, ordinal, title, status) VALUES (?1, ?2, ?3, ?4, 'pending')";
static const char SQL_ITEM_GET[] =
    "SELECT id, status, title, started_at FROM plan_items WHERE task_id = ?1 AND ordinal = ?2";
static const char SQL_ITEM_MAX[] =
    "SELECT coalesce(max(ordinal), -1), count(*) FROM plan_items WHERE task_id = ?1";
/* The current item: the first active one, else the first pending one. Two
 * lookups in the (task_id, ordinal) index's order instead of one ORDER BY
 * status = 'active': that sorts, and the sorter's temporary b-tree was
 * about 3 % of detmd's time in a POST storm (every logged action asks). */
static const char *const SQL_ITEM_CURRENT[2] = {
    "SELECT id, ordinal FROM plan_items WHERE task_id = ?1 AND status = 'active' "
    "ORDER BY ordinal LIMIT 1",
    "SELECT id, ordinal FROM plan_items WHERE task_id = ?1 AND status = 'pending' "
    "ORDER BY ordinal LIMIT 1",
};

/* Steps an INSERT whose ?1 is the row id, drawing a new id on collision.
 * The other parameters stay bound across retries. */
int
trow_insert(struct store *st, sqlite3_stmt *s, char id[ID_LEN], const char *what,
    struct derr *e)
{
	int tries, rc;

	if (s == NULL)
		return store_fail(st, what, e);
	for (tries = 0; tries < ID_RETRIES; tries++) {
		id_row(id, tries > 0);
		sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(s);
		sqlite3_reset(s);
		if (rc == SQLITE_DONE)
			return 0;
		if (sqlite3_extended_errcode(store_db(st)) != SQLITE_CONSTRAINT_PRIMARYKEY)
			break;
	}
	return store_fail(st, what, e);
}

void
trow_bind_text_or_null(sqlite3_stmt *s, int i, const char *v)
{
	if (v != NULL)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

int
trow_msg_insert(struct store *st, const char *task_id, const char *role,
    const char *type, const char *content, int64_t now, char id[ID_LEN],
    struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_MSG_INSERT);

	if (s != NULL) {
		sqlite3_bind_text(s, 2, task_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, role, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, type, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 5, content, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 6, now);
	}
	return trow_insert(st, s, id, "insert message", e);
}

int
trow_sys_msg(struct store *st, const char *task_id, const char *type,
    const char *content, int64_t now, struct derr *e)
{
	char id[ID_LEN];

	return trow_msg_insert(st, task_id, "system", type, content, now, id, e);
}

/* Bumps updated_at; `always` for changes of the plan, otherwise at most
 * once a second (see SQL_TASK_TOUCH). */
int
trow_touch(struct store *st, const char *task_id, int64_t now, bool always, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, always ? SQL_TASK_TOUCH_NOW : SQL_TASK_TOUCH);

	if (s != NULL) {
		sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, now);
	}
	return store_exec(st, s, "touch task", e);
}

int
trow_action_insert(struct store *st, const char *task_id, const char *item_id,
    const struct action_new *a, int64_t now, char id[ID_LEN], struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_ACTION_INSERT);

	if (s != NULL) {
		sqlite3_bind_text(s, 2, task_id, -1, SQLITE_STATIC);
		trow_bind_text_or_null(s, 3, item_id);
		sqlite3_bind_text(s, 4, a->type, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 5, a->summary, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 6, a->status ? a->status : "completed", -1, SQLITE_STATIC);
		trow_bind_text_or_null(s, 7, a->input_json);
		trow_bind_text_or_null(s, 8, a->output_json);
		if (a->duration_ms >= 0)
			sqlite3_bind_double(s, 9, a->duration_ms);
		else
			sqlite3_bind_null(s, 9);
		sqlite3_bind_int64(s, 10, now);
	}
	if (trow_insert(st, s, id, "insert action", e) != 0)
		return -1;
	if (item_id == NULL)
		return 0;
	s = store_stmt(st, SQL_ITEM_COUNT_ACTION);
	if (s != NULL)
		sqlite3_bind_text(s, 1, item_id, -1, SQLITE_STATIC);
	return store_exec(st, s, "count action", e);
}

int
trow_log_insert(struct store *st, const char *action_id, const char *type,
    const char *content, int64_t now, char id[ID_LEN], struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_LOG_INSERT);

	if (s != NULL) {
		sqlite3_bind_text(s, 2, action_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, type ? type : "info", -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, content, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, now);
	}
	return trow_insert(st, s, id, "insert log", e);
}

/* A reasoning note: an action under item_id (may be NULL). */
int
trow_note_insert(struct store *st, const char *task_id, const char *item_id,
    const char *note, int64_t now, struct derr *e)
{
	struct action_new a = { .type = "reasoning", .summary = note,
	    .status = "completed", .duration_ms = -1 };
	char id[ID_LEN];

	return trow_action_insert(st, task_id, item_id, &a, now, id, e);
}

int
task_lookup(struct store *st, const char *id, int *status, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_TASK_STATUS_GET);
	int rc;

	if (s == NULL)
		return store_fail(st, "task lookup", e);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*status = task_status_parse((const char *)sqlite3_column_text(s, 0));
		sqlite3_reset(s);
		return 0;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return store_fail(st, "task lookup", e);
	return derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%s'", id);
}

int
task_current_item(struct store *st, const char *task_id, char item_id[ID_LEN],
    int64_t *ordinal, struct derr *e)
{
	size_t i;
	int rc;

	for (i = 0; i < sizeof SQL_ITEM_CURRENT / sizeof SQL_ITEM_CURRENT[0]; i++) {
		sqlite3_stmt *s = store_stmt(st, SQL_ITEM_CURRENT[i]);

		if (s == NULL)
			return store_fail(st, "current item", e);
		sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			snprintf(item_id, ID_LEN, "%s", (const char *)sqlite3_column_text(s, 0));
			*ordinal = sqlite3_column_int64(s, 1);
		}
		sqlite3_reset(s);
		if (rc == SQLITE_ROW)
			return 0;
		if (rc != SQLITE_DONE)
			return store_fail(st, "current item", e);
	}
	return 1;
}

/* Appends titles starting after the current last ordinal; fills `added`
 * (may be NULL) and a human summary "3. a; 4. b" in text. */
int
titem_insert(struct store *st, const char *task_id, json_object *titles,
    json_object *added, struct buf *text, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_ITEM_MAX);
	int64_t next, count;
	size_t i, n = json_object_array_length(titles);
	char id[ID_LEN];

	if (s == NULL)
		return store_fail(st, "item max", e);
	sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_ROW) {
		sqlite3_reset(s);
		return store_fail(st, "item max", e);
	}
	next = sqlite3_column_int64(s, 0) + 1;
	count = sqlite3_column_int64(s, 1);
	sqlite3_reset(s);
	if (count + (int64_t)n > LIM_PLAN_ITEMS)
		return derr_set(e, DERR_INVALID, "items",
		    "a task has at most %d plan items (it has %lld, %zu more were asked for)",
		    LIM_PLAN_ITEMS, (long long)count, n);
	for (i = 0; i < n; i++, next++) {
		const char *title = json_object_get_string(json_object_array_get_idx(titles, i));
		char line[600];
		int len;

		s = store_stmt(st, SQL_ITEM_INSERT);
		if (s != NULL) {
			sqlite3_bind_text(s, 2, task_id, -1, SQLITE_STATIC);
			sqlite3_bind_int64(s, 3, next);
			sqlite3_bind_text(s, 4, title, -1, SQLITE_STATIC);
		}
		if (trow_insert(st, s, id, "insert item", e) != 0)
			return -1;
		if (added != NULL) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "ordinal", json_object_new_int64(next));
			json_object_object_add(o, "title", json_object_new_string(title));
			json_object_array_add(added, o);
		}
		len = snprintf(line, sizeof line, "%s%lld. %.*s", i ? "; " : "",
		    (long long)next, utf8_prec(title, 500), title);
		if (len > 0)
			(void)!buf_append(text, line, strlen(line));
	}
	return 0;
}

int
trow_item_get(struct store *st, const char *task_id, int64_t ordinal, char id[ID_LEN],
    int *status, char **title, int64_t *started, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_ITEM_GET);
	int rc;

	if (s == NULL)
		return store_fail(st, "item get", e);
	sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, ordinal);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		if (rc != SQLITE_DONE)
			return store_fail(st, "item get", e);
		return derr_set(e, DERR_NOT_FOUND, "ordinal",
		    "task %s has no plan item with ordinal %lld (ordinals are 0-based)",
		    task_id, (long long)ordinal);
	}
	snprintf(id, ID_LEN, "%s", (const char *)sqlite3_column_text(s, 0));
	*status = item_status_parse((const char *)sqlite3_column_text(s, 1));
	if (title != NULL)
		*title = xstrdup((const char *)sqlite3_column_text(s, 2));
	*started = sqlite3_column_int64(s, 3);
	sqlite3_reset(s);
	return 0;
}
