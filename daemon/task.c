/*
 * task.c - writes to the task model. See task.h for the contract.
 *
 * Each public function hands a body (`*_tx`) to store_tx, which takes the
 * lock, reads the clock (store_now, after the lock, so created_at never
 * decreases in rowid order) and runs it in a transaction. The body checks
 * the task exists and the transition is legal, writes rows, writes the
 * thread message that records the change and bumps tasks.updated_at (stuck
 * detection reads it). On any failure its writes are rolled back, so a
 * request either happens whole or not at all. Events and hooks run after
 * store_tx returns, outside the lock. The thread is ordered by
 * rowid; every status change writes its lifecycle message in the same
 * transaction, so the thread replays as a walk of the status machine.
 *
 * Ids are random 8-hex strings; a primary-key collision (about 1 in 4e9 per
 * existing row) is retried with a new id inside the same transaction.
 */
#include "task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jx.h"
#include "limits.h"
#include "events.h"
#include "log.h"
#include "taskstate.h"

#define ID_RETRIES 8

static const char SQL_TASK_INSERT[] =
    "INSERT INTO tasks (id, name, status, agent_id, metadata, created_at, updated_at) "
    "VALUES (?1, ?2, 'active', ?3, ?4, ?5, ?5)";
static const char SQL_TASK_GET[] =
    "SELECT status, name, metadata FROM tasks WHERE id = ?1";
static const char SQL_TASK_STATUS[] =
    "UPDATE tasks SET status = ?2, updated_at = ?3 WHERE id = ?1";
static const char SQL_TASK_SET[] =
    "UPDATE tasks SET name = ?2, status = ?3, metadata = ?4, updated_at = ?5 WHERE id = ?1";
/* Activity bumps updated_at at most once a second per task: at thousands
 * of actions a second this saves the task row and its two indexes from
 * being rewritten on every commit (about a third of the pages written). */
static const char SQL_TASK_TOUCH[] =
    "UPDATE tasks SET updated_at = ?2 WHERE id = ?1 AND updated_at <= ?2 - 1000";
static const char SQL_TASK_TOUCH_NOW[] =
    "UPDATE tasks SET updated_at = ?2 WHERE id = ?1";
static const char SQL_ITEM_COUNT_ACTION[] =
    "UPDATE plan_items SET action_count = action_count + 1 WHERE id = ?1";
static const char SQL_TASK_DELETE[] = "DELETE FROM tasks WHERE id = ?1";
static const char SQL_ITEM_INSERT[] =
    "INSERT INTO plan_items (id, task_id, ordinal, title, status) VALUES (?1, ?2, ?3, ?4, 'pending')";
static const char SQL_ITEM_MAX[] =
    "SELECT coalesce(max(ordinal), -1), count(*) FROM plan_items WHERE task_id = ?1";
static const char SQL_ITEM_GET[] =
    "SELECT id, status, title, started_at FROM plan_items WHERE task_id = ?1 AND ordinal = ?2";
static const char SQL_ITEM_SET[] =
    "UPDATE plan_items SET status = ?2, title = ?3, started_at = ?4, completed_at = ?5, "
    "duration_seconds = ?6 WHERE id = ?1";
static const char SQL_ITEM_RENAME[] =
    "UPDATE plan_items SET title = ?2 WHERE id = ?1";
static const char SQL_ITEM_CURRENT[] =
    "SELECT id, ordinal FROM plan_items WHERE task_id = ?1 AND status IN ('active', 'pending') "
    "ORDER BY status = 'active' DESC, ordinal LIMIT 1";
static const char SQL_ACTION_INSERT[] =
    "INSERT INTO actions (id, task_id, plan_item_id, action_type, summary, status, "
    "input_data, output_data, duration_ms, created_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
static const char SQL_ACTION_EXISTS[] =
    "SELECT 1 FROM actions WHERE id = ?1 AND task_id = ?2";
static const char SQL_ACTION_SET[] =
    "UPDATE actions SET status = coalesce(?3, status), output_data = coalesce(?4, output_data), "
    "duration_ms = coalesce(?5, duration_ms) WHERE id = ?1 AND task_id = ?2";
static const char SQL_LOG_INSERT[] =
    "INSERT INTO action_logs (id, action_id, log_type, content, created_at) VALUES (?1, ?2, ?3, ?4, ?5)";
static const char SQL_MSG_INSERT[] =
    "INSERT INTO task_messages (id, task_id, role, msg_type, content, created_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/* Steps an INSERT whose ?1 is the row id, drawing a new id on collision.
 * The other parameters stay bound across retries. */
static int
insert_row(struct store *st, sqlite3_stmt *s, char id[ID_LEN], const char *what,
    struct derr *e)
{
	int tries, rc;

	if (s == NULL)
		return store_fail(st, what, e);
	for (tries = 0; tries < ID_RETRIES; tries++) {
		id_new(id);
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

static void
bind_text_or_null(sqlite3_stmt *s, int i, const char *v)
{
	if (v != NULL)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

static int
msg_insert(struct store *st, const char *task_id, const char *role,
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
	return insert_row(st, s, id, "insert message", e);
}

static int
sys_msg(struct store *st, const char *task_id, const char *type,
    const char *content, int64_t now, struct derr *e)
{
	char id[ID_LEN];

	return msg_insert(st, task_id, "system", type, content, now, id, e);
}

/* Bumps updated_at; `always` for changes of the plan, otherwise at most
 * once a second (see SQL_TASK_TOUCH). */
static int
touch(struct store *st, const char *task_id, int64_t now, bool always, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, always ? SQL_TASK_TOUCH_NOW : SQL_TASK_TOUCH);

	if (s != NULL) {
		sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, now);
	}
	return store_exec(st, s, "touch task", e);
}

static int
action_insert(struct store *st, const char *task_id, const char *item_id,
    const struct action_new *a, int64_t now, char id[ID_LEN], struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_ACTION_INSERT);

	if (s != NULL) {
		sqlite3_bind_text(s, 2, task_id, -1, SQLITE_STATIC);
		bind_text_or_null(s, 3, item_id);
		sqlite3_bind_text(s, 4, a->type, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 5, a->summary, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 6, a->status ? a->status : "completed", -1, SQLITE_STATIC);
		bind_text_or_null(s, 7, a->input_json);
		bind_text_or_null(s, 8, a->output_json);
		if (a->duration_ms >= 0)
			sqlite3_bind_double(s, 9, a->duration_ms);
		else
			sqlite3_bind_null(s, 9);
		sqlite3_bind_int64(s, 10, now);
	}
	if (insert_row(st, s, id, "insert action", e) != 0)
		return -1;
	if (item_id == NULL)
		return 0;
	s = store_stmt(st, SQL_ITEM_COUNT_ACTION);
	if (s != NULL)
		sqlite3_bind_text(s, 1, item_id, -1, SQLITE_STATIC);
	return store_exec(st, s, "count action", e);
}

static int
log_insert(struct store *st, const char *action_id, const char *type,
    const char *content, int64_t now, char id[ID_LEN], struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_LOG_INSERT);

	if (s != NULL) {
		sqlite3_bind_text(s, 2, action_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, type ? type : "info", -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, content, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, now);
	}
	return insert_row(st, s, id, "insert log", e);
}

/* A reasoning note: an action under item_id (may be NULL). */
static int
note_insert(struct store *st, const char *task_id, const char *item_id,
    const char *note, int64_t now, struct derr *e)
{
	struct action_new a = { .type = "reasoning", .summary = note,
	    .status = "completed", .duration_ms = -1 };
	char id[ID_LEN];

	return action_insert(st, task_id, item_id, &a, now, id, e);
}

int
task_lookup(struct store *st, const char *id, int *status, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_TASK_GET);
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
task_meta(struct store *st, const char *id, int *status, json_object **meta,
    struct derr *e)
{
	sqlite3_stmt *s;
	int rc = -1, step;

	*meta = NULL;
	st = store_read_begin(st);     /* a snapshot; never waits for writers */
	s = store_stmt(st, SQL_TASK_GET);
	if (s == NULL) {
		store_fail(st, "task lookup", e);
		goto out;
	}
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		*status = task_status_parse((const char *)sqlite3_column_text(s, 0));
		*meta = jx_parse_stored((const char *)sqlite3_column_text(s, 2));
		if (*meta == NULL || !json_object_is_type(*meta, json_type_object)) {
			json_object_put(*meta);
			*meta = json_object_new_object();
		}
		rc = 0;
	} else if (step == SQLITE_DONE)
		derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%s'", id);
	else
		store_fail(st, "task lookup", e);
	sqlite3_reset(s);
out:
	store_read_end(st);
	return rc;
}

/* Status hooks: registered before the server starts, read-only after. */
#define MAX_HOOKS 8
static struct { task_hook_fn fn; void *arg; } hooks[MAX_HOOKS];
static size_t nhooks;

void
task_hook_add(task_hook_fn fn, void *arg)
{
	if (nhooks < MAX_HOOKS) {
		hooks[nhooks].fn = fn;
		hooks[nhooks].arg = arg;
		nhooks++;
	}
}

static void
run_hooks(const char *id, int from, int to)
{
	size_t i;

	for (i = 0; i < nhooks; i++)
		hooks[i].fn(id, from, to, hooks[i].arg);
}

int
task_current_item(struct store *st, const char *task_id, char item_id[ID_LEN],
    int64_t *ordinal, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_ITEM_CURRENT);
	int rc;

	if (s == NULL)
		return store_fail(st, "current item", e);
	sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		snprintf(item_id, ID_LEN, "%s", (const char *)sqlite3_column_text(s, 0));
		*ordinal = sqlite3_column_int64(s, 1);
		sqlite3_reset(s);
		return 0;
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 1 : store_fail(st, "current item", e);
}

/* Appends titles starting after the current last ordinal; fills `added`
 * (may be NULL) and a human summary "3. a; 4. b" in text. */
static int
items_insert(struct store *st, const char *task_id, json_object *titles,
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
		if (insert_row(st, s, id, "insert item", e) != 0)
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

struct reg_tx {
	const struct task_reg *in;
	const char *meta;
	char *id_out;
	struct buf text;
	char *msg;
};

static int
register_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct reg_tx *t = arg;
	const struct task_reg *in = t->in;
	size_t nitems = in->plan ? json_object_array_length(in->plan) : 0;
	sqlite3_stmt *s = store_stmt(st, SQL_TASK_INSERT);

	if (s != NULL) {
		sqlite3_bind_text(s, 2, in->name, -1, SQLITE_STATIC);
		bind_text_or_null(s, 3, in->agent_id);
		sqlite3_bind_text(s, 4, t->meta, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, now);
	}
	if (insert_row(st, s, t->id_out, "insert task", e) != 0)
		return -1;
	if (in->plan != NULL && items_insert(st, t->id_out, in->plan, NULL, &t->text, e) != 0)
		return -1;
	t->msg = nitems ? xasprintf("Task registered: %s (%zu item%s: %s)", in->name, nitems,
	    nitems == 1 ? "" : "s", t->text.data ? t->text.data : "")
	    : xasprintf("Task registered: %s (no plan yet)", in->name);
	return sys_msg(st, t->id_out, "lifecycle", t->msg, now, e);
}

int
task_register(struct store *st, const struct task_reg *in, char id_out[ID_LEN],
    struct derr *e)
{
	struct reg_tx t = { .in = in, .id_out = id_out };
	int rc;

	t.meta = in->metadata ? jx_string(in->metadata, NULL) : "{}";
	buf_init(&t.text, 8192);
	rc = store_tx(st, register_tx, &t, e);
	if (rc == 0)
		events_publish("task", "created", id_out, NULL);
	buf_free(&t.text);
	free(t.msg);
	return rc;
}

/* 409 for a task status move the machine forbids. Returns -1. */
static int
status_conflict(const char *id, int cur, int to, struct derr *e)
{
	char allowed[128];

	task_status_allowed(cur, allowed, sizeof allowed);
	return derr_set(e, DERR_CONFLICT, "status", "task %s cannot go from %s to %s (allowed: %s)",
	    id, task_status_name(cur), task_status_name(to), allowed);
}

/* The lifecycle message of a status change: "Status changed: a → b". A
 * thread read in rowid order replays these as a walk of the machine. */
static int
lifecycle_msg(struct store *st, const char *id, int from, int to, int64_t now,
    struct derr *e)
{
	char msg[80];

	snprintf(msg, sizeof msg, "Status changed: %s → %s", task_status_name(from),
	    task_status_name(to));
	return sys_msg(st, id, "lifecycle", msg, now, e);
}

/* Merges patch into the stored metadata text; returns a malloc'd JSON text
 * or NULL with e (too large). */
static char *
metadata_merge(const char *stored, json_object *patch, struct derr *e)
{
	json_object *cur = jx_parse_stored(stored);
	char *outs = NULL;
	size_t len;

	if (cur == NULL || !json_object_is_type(cur, json_type_object)) {
		json_object_put(cur);
		cur = json_object_new_object();
	}
	json_object_object_foreach(patch, key, val) {
		if (val == NULL)
			json_object_object_del(cur, key);
		else
			json_object_object_add(cur, key, json_object_get(val));
	}
	jx_string(cur, &len);
	if (len > LIM_METADATA_BYTES)
		derr_set(e, DERR_INVALID, "metadata",
		    "metadata would be %zu bytes as JSON (at most %d)", len, LIM_METADATA_BYTES);
	else
		outs = xstrdup(jx_string(cur, NULL));
	json_object_put(cur);
	return outs;
}

struct update_tx {
	const char *id;
	const struct task_patch *p;
	int cur;
};

/* The task's row for an update: status, the new name and merged metadata
 * (malloc'd). */
static int
update_read(struct store *st, struct update_tx *t, char **name, char **meta, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_TASK_GET);
	const struct task_patch *p = t->p;

	if (s == NULL)
		return store_fail(st, "task get", e);
	sqlite3_bind_text(s, 1, t->id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_ROW) {
		sqlite3_reset(s);
		return derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%s'", t->id);
	}
	t->cur = task_status_parse((const char *)sqlite3_column_text(s, 0));
	*name = xstrdup(p->name ? p->name : (const char *)sqlite3_column_text(s, 1));
	*meta = p->metadata ? metadata_merge((const char *)sqlite3_column_text(s, 2), p->metadata, e)
	    : xstrdup((const char *)sqlite3_column_text(s, 2));
	sqlite3_reset(s);
	return *meta == NULL ? -1 : 0;
}

static int
update_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct update_tx *t = arg;
	const struct task_patch *p = t->p;
	const char *id = t->id;
	sqlite3_stmt *s;
	char *name = NULL, *meta = NULL;
	char item_id[ID_LEN], mid[ID_LEN];
	int64_t ord;
	int rc = -1, found;

	if (update_read(st, t, &name, &meta, e) != 0)
		goto out;
	if (p->status >= 0 && !task_status_can(t->cur, p->status)) {
		status_conflict(id, t->cur, p->status, e);
		goto out;
	}
	s = store_stmt(st, SQL_TASK_SET);
	if (s != NULL) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, task_status_name(p->status >= 0 ? p->status : t->cur), -1,
		    SQLITE_STATIC);
		sqlite3_bind_text(s, 4, meta, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, now);
	}
	if (store_exec(st, s, "task set", e) != 0)
		goto out;
	if (p->status >= 0 && p->status != t->cur &&
	    lifecycle_msg(st, id, t->cur, p->status, now, e) != 0)
		goto out;
	if (p->message != NULL) {
		found = task_current_item(st, id, item_id, &ord, e);
		if (found < 0 || note_insert(st, id, found == 0 ? item_id : NULL, p->message, now, e) != 0)
			goto out;
		if (msg_insert(st, id, "agent", "text", p->message, now, mid, e) != 0)
			goto out;
	}
	rc = 0;
out:
	free(name);
	free(meta);
	return rc;
}

int
task_update(struct store *st, const char *id, const struct task_patch *p,
    struct derr *e)
{
	struct update_tx t = { .id = id, .p = p, .cur = -1 };
	int rc = store_tx(st, update_tx, &t, e);

	if (rc == 0)
		events_publish("task", "updated", id, NULL);
	if (rc == 0 && p->status >= 0 && p->status != t.cur)
		run_hooks(id, t.cur, p->status);
	return rc;
}

/* The control message: "Operator paused the task[: reason]" for a
 * transition, "Operator: pause changed nothing (the task was already
 * paused)[: reason]" for a click that found the task in `to` already. */
static char *
control_text(int cur, int to, const char *reason)
{
	static const char *const verbs[TASK__COUNT] = {
		[TASK_ACTIVE] = "resume", [TASK_PAUSED] = "pause",
		[TASK_CANCELLED] = "cancel", [TASK_COMPLETED] = "complete",
		[TASK_FAILED] = "fail" };
	static const char *const done[TASK__COUNT] = {
		[TASK_ACTIVE] = "resumed", [TASK_PAUSED] = "paused",
		[TASK_CANCELLED] = "cancelled", [TASK_COMPLETED] = "completed",
		[TASK_FAILED] = "failed" };
	const char *sep = reason ? ": " : "", *why = reason ? reason : "";

	if (cur == to)
		return xasprintf("Operator: %s changed nothing (the task was already %s)%s%s",
		    verbs[to], task_status_name(to), sep, why);
	return xasprintf("Operator %s the task%s%s", done[to], sep, why);
}

/* One transaction, one clock reading: the status row, then the control
 * message, then the lifecycle message; or, when the task is already in
 * `to`, only a control message saying nothing changed. */
struct control_tx {
	const char *id, *reason;
	int to, cur;
	char *msg;
};

static int
control_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct control_tx *t = arg;
	const char *id = t->id;
	int to = t->to;
	sqlite3_stmt *s;

	if (task_lookup(st, id, &t->cur, e) != 0)
		return -1;
	if (!task_status_can(t->cur, to))
		return status_conflict(id, t->cur, to, e);
	if (t->cur != to) {
		s = store_stmt(st, SQL_TASK_STATUS);
		if (s != NULL) {
			sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 2, task_status_name(to), -1, SQLITE_STATIC);
			sqlite3_bind_int64(s, 3, now);
		}
		if (store_exec(st, s, "task status", e) != 0)
			return -1;
	}
	t->msg = control_text(t->cur, to, t->reason);
	if (sys_msg(st, id, "control", t->msg, now, e) != 0)
		return -1;
	return t->cur != to ? lifecycle_msg(st, id, t->cur, to, now, e)
	    : touch(st, id, now, true, e);
}

int
task_control(struct store *st, const char *id, int to, const char *reason,
    struct derr *e)
{
	struct control_tx t = { .id = id, .reason = reason, .to = to, .cur = -1 };
	int rc = store_tx(st, control_tx, &t, e);

	if (rc == 0) {
		if (t.cur != to)
			events_publish("task", "updated", id, NULL);
		events_publish("message", "created", id, NULL);
	}
	if (rc == 0 && t.cur != to)
		run_hooks(id, t.cur, to);
	free(t.msg);
	return rc;
}

static int
delete_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	const char *id = *(const char **)arg;
	sqlite3_stmt *s = store_stmt(st, SQL_TASK_DELETE);

	(void)now;
	if (s != NULL)
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	if (store_exec(st, s, "delete task", e) != 0)
		return -1;
	if (sqlite3_changes(store_db(st)) == 0)
		return derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%s'", id);
	return 0;
}

int
task_delete(struct store *st, const char *id, struct derr *e)
{
	int rc = store_tx(st, delete_tx, &id, e);

	if (rc == 0) {
		events_publish("task", "deleted", id, NULL);
		run_hooks(id, -1, TASK_HOOK_DELETED);
	}
	return rc;
}

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
	    items_insert(st, t->id, t->titles, t->added, &t->text, e) != 0)
		return -1;
	t->msg = xasprintf("%s%sPlan updated: added %zu item%s: %s", t->note ? t->note : "",
	    t->note ? " | " : "", n, n == 1 ? "" : "s", t->text.data ? t->text.data : "");
	if (sys_msg(st, t->id, "plan", t->msg, now, e) != 0)
		return -1;
	return touch(st, t->id, now, true, e);
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

/* Fills the item's row fields; 0, or -1 with NOT_FOUND / INVALID. */
static int
item_get(struct store *st, const char *task_id, int64_t ordinal, char id[ID_LEN],
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

struct item_tx {
	const char *id;
	int64_t ordinal;
	const struct item_patch *p;
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
	    item_get(st, t->id, t->ordinal, item_id, &cur, &title, &started, e) != 0)
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
		if (sys_msg(st, t->id, "progress", msg, now, e) != 0)
			goto out;
	}
	if (p->note != NULL && note_insert(st, t->id, item_id, p->note, now, e) != 0)
		goto out;
	rc = touch(st, t->id, now, true, e);
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
	}
	return rc;
}

struct action_tx {
	const char *task_id;
	const struct action_new *a;
	char *id_out;
	int64_t *ordinal_out;
};

static int
action_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct action_tx *t = arg;
	const struct action_new *a = t->a;
	const char *task_id = t->task_id, *item = NULL;
	int64_t started;
	char item_id[ID_LEN], log_id[ID_LEN];
	size_t i, nlogs = a->logs ? json_object_array_length(a->logs) : 0;
	int cur, found;

	if (task_lookup(st, task_id, &cur, e) != 0)
		return -1;
	if (a->has_ordinal) {
		if (item_get(st, task_id, a->ordinal, item_id, &cur, NULL, &started, e) != 0) {
			/* An unknown ordinal in a body is a bad argument, not
			 * a missing resource (that is for path ordinals). */
			if (e->code == DERR_NOT_FOUND)
				e->code = DERR_INVALID;
			return -1;
		}
		item = item_id;
		*t->ordinal_out = a->ordinal;
	} else {
		found = task_current_item(st, task_id, item_id, t->ordinal_out, e);
		if (found < 0)
			return -1;
		item = found == 0 ? item_id : NULL;
	}
	if (action_insert(st, task_id, item, a, now, t->id_out, e) != 0)
		return -1;
	for (i = 0; i < nlogs; i++) {
		json_object *l = json_object_array_get_idx(a->logs, i), *v;
		const char *type = NULL, *content = NULL;

		if (json_object_object_get_ex(l, "log_type", &v) && v != NULL)
			type = json_object_get_string(v);
		if (json_object_object_get_ex(l, "content", &v))
			content = json_object_get_string(v);
		if (log_insert(st, t->id_out, type, content, now, log_id, e) != 0)
			return -1;
	}
	return touch(st, task_id, now, false, e);
}

int
task_action_add(struct store *st, const char *task_id, const struct action_new *a,
    char id_out[ID_LEN], int64_t *ordinal_out, struct derr *e)
{
	struct action_tx t = { .task_id = task_id, .a = a, .id_out = id_out,
	    .ordinal_out = ordinal_out };
	int rc;

	*ordinal_out = -1;
	rc = store_tx(st, action_tx, &t, e);
	if (rc != 0)
		*ordinal_out = -1;
	else
		events_publish("action", "created", task_id, id_out);
	return rc;
}

/* The driver of the task's display changed (takeover.c): the `control`
 * message and the audit action, in one transaction with one clock. */
struct driver_tx {
	const char *msg;
	struct action_tx a;
};

static int
driver_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct driver_tx *t = arg;

	if (sys_msg(st, t->a.task_id, "control", t->msg, now, e) != 0)
		return -1;
	return action_tx(st, now, &t->a, e);
}

int
task_driver_note(struct store *st, const char *id, const char *msg,
    const struct action_new *a, struct derr *e)
{
	char aid[ID_LEN];
	int64_t ord = -1;
	struct driver_tx t = { .msg = msg, .a = { .task_id = id, .a = a, .id_out = aid,
	    .ordinal_out = &ord } };
	int rc = store_tx(st, driver_tx, &t, e);

	if (rc == 0) {
		events_publish("message", "created", id, NULL);
		events_publish("action", "created", id, aid);
		events_publish("task", "updated", id, NULL);
	}
	return rc;
}

static int
action_check(struct store *st, const char *task_id, const char *action_id,
    struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_ACTION_EXISTS);
	int rc;

	if (s == NULL)
		return store_fail(st, "action exists", e);
	sqlite3_bind_text(s, 1, action_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, task_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc != SQLITE_DONE)
		return store_fail(st, "action exists", e);
	return derr_set(e, DERR_NOT_FOUND, "action_id", "task %s has no action with id '%s'",
	    task_id, action_id);
}

struct action_up_tx {
	const char *task_id, *action_id;
	const struct action_patch *p;
};

static int
action_up_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct action_up_tx *t = arg;
	const struct action_patch *p = t->p;
	sqlite3_stmt *s;
	int cur;

	if (task_lookup(st, t->task_id, &cur, e) != 0 ||
	    action_check(st, t->task_id, t->action_id, e) != 0)
		return -1;
	s = store_stmt(st, SQL_ACTION_SET);
	if (s != NULL) {
		sqlite3_bind_text(s, 1, t->action_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, t->task_id, -1, SQLITE_STATIC);
		bind_text_or_null(s, 3, p->status);
		bind_text_or_null(s, 4, p->output_json);
		if (p->duration_ms >= 0)
			sqlite3_bind_double(s, 5, p->duration_ms);
		else
			sqlite3_bind_null(s, 5);
	}
	if (store_exec(st, s, "action set", e) != 0)
		return -1;
	return touch(st, t->task_id, now, false, e);
}

int
task_action_update(struct store *st, const char *task_id, const char *action_id,
    const struct action_patch *p, struct derr *e)
{
	struct action_up_tx t = { .task_id = task_id, .action_id = action_id, .p = p };
	int rc = store_tx(st, action_up_tx, &t, e);

	if (rc == 0)
		events_publish("action", "updated", task_id, action_id);
	return rc;
}

struct log_tx {
	const char *task_id, *action_id, *log_type, *content;
	char *id_out;
};

static int
log_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct log_tx *t = arg;
	int cur;

	if (task_lookup(st, t->task_id, &cur, e) != 0 ||
	    action_check(st, t->task_id, t->action_id, e) != 0 ||
	    log_insert(st, t->action_id, t->log_type, t->content, now, t->id_out, e) != 0)
		return -1;
	return touch(st, t->task_id, now, false, e);
}

int
task_log_add(struct store *st, const char *task_id, const char *action_id,
    const char *log_type, const char *content, char id_out[ID_LEN], struct derr *e)
{
	struct log_tx t = { .task_id = task_id, .action_id = action_id,
	    .log_type = log_type, .content = content, .id_out = id_out };
	int rc = store_tx(st, log_tx, &t, e);

	if (rc == 0)
		events_publish("log", "created", task_id, action_id);
	return rc;
}

struct msg_tx {
	const char *task_id, *role, *msg_type, *content;
	char id[ID_LEN];
	int64_t now;
};

static int
msg_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct msg_tx *t = arg;
	int cur;

	t->now = now;
	if (task_lookup(st, t->task_id, &cur, e) != 0 ||
	    msg_insert(st, t->task_id, t->role, t->msg_type, t->content, now, t->id, e) != 0)
		return -1;
	return touch(st, t->task_id, now, false, e);
}

json_object *
task_message_add(struct store *st, const char *task_id, const char *role,
    const char *msg_type, const char *content, struct derr *e)
{
	struct msg_tx t = { .task_id = task_id, .role = role, .msg_type = msg_type,
	    .content = content };
	json_object *m;

	if (store_tx(st, msg_tx, &t, e) != 0)
		return NULL;
	events_publish("message", "created", task_id, t.id);
	m = json_object_new_object();
	json_object_object_add(m, "message_id", json_object_new_string(t.id));
	json_object_object_add(m, "task_id", json_object_new_string(task_id));
	json_object_object_add(m, "role", json_object_new_string(role));
	json_object_object_add(m, "msg_type", json_object_new_string(msg_type));
	json_object_object_add(m, "content", json_object_new_string(content));
	jx_add_time(m, "created_at", t.now);
	return m;
}
