/*
 * task.c - writes to the task model. See task.h for the contract. Tasks
 * themselves (register, update, control, delete, lookups, status hooks)
 * and the row writers are here; plan items, actions, logs and messages are
 * in task_items.c, over task_int.h. What follows holds for both.
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

#include "budget_rows.h"
#include "completion.h"
#include "core/buf.h"
#include "core/jx.h"
#include "drain.h"
#include "events.h"
#include "lim.h"
#include "task_int.h"
#include "taskstate.h"

static const char SQL_TASK_INSERT[] =
    "INSERT INTO tasks (id, name, status, agent_id, metadata, created_at, updated_at) "
    "VALUES (?1, ?2, 'active', ?3, ?4, ?5, ?5)";
static const char SQL_TASK_GET[] =
    "SELECT status, name, metadata FROM tasks WHERE id = ?1";
static const char SQL_TASK_STATUS[] =
    "UPDATE tasks SET status = ?2, updated_at = ?3 WHERE id = ?1";
static const char SQL_TASK_SET[] =
    "UPDATE tasks SET name = ?2, status = ?3, metadata = ?4, updated_at = ?5 WHERE id = ?1";
static const char SQL_TASK_DELETE[] = "DELETE FROM tasks WHERE id = ?1";

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
static struct { task_hook_fn fn; void *arg; bool all; } hooks[MAX_HOOKS];
static size_t nhooks;

static void
hook_add(task_hook_fn fn, void *arg, bool all)
{
	if (nhooks < MAX_HOOKS) {
		hooks[nhooks].fn = fn;
		hooks[nhooks].arg = arg;
		hooks[nhooks].all = all;
		nhooks++;
	}
}

void
task_hook_add(task_hook_fn fn, void *arg)
{
	hook_add(fn, arg, false);
}

void
task_hook_add_all(task_hook_fn fn, void *arg)
{
	hook_add(fn, arg, true);
}

static void
run_hooks(const char *id, int from, int to)
{
	size_t i;

	for (i = 0; i < nhooks; i++)
		if (to != TASK_HOOK_BUDGET || hooks[i].all)
			hooks[i].fn(id, from, to, hooks[i].arg);
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
	sqlite3_stmt *s;

	if (drain_on())         /* checked under the store lock: drain.h */
		return drain_refuse(e);
	s = store_stmt(st, SQL_TASK_INSERT);
	if (s != NULL) {
		sqlite3_bind_text(s, 2, in->name, -1, SQLITE_STATIC);
		trow_bind_text_or_null(s, 3, in->agent_id);
		sqlite3_bind_text(s, 4, t->meta, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, now);
	}
	if (trow_insert(st, s, t->id_out, "insert task", e) != 0)
		return -1;
	if (in->plan != NULL && titem_insert(st, t->id_out, in->plan, NULL, &t->text, e) != 0)
		return -1;
	if (in->budget != NULL && budget_write_tx(st, t->id_out, in->budget, now, e) != 0)
		return -1;
	t->msg = nitems ? xasprintf("Task registered: %s (%zu item%s: %s)", in->name, nitems,
	    nitems == 1 ? "" : "s", t->text.data ? t->text.data : "")
	    : xasprintf("Task registered: %s (no plan yet)", in->name);
	return trow_sys_msg(st, t->id_out, "lifecycle", t->msg, now, e);
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
	if (rc == 0 && in->budget != NULL)
		run_hooks(id_out, -1, TASK_HOOK_BUDGET);
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
	return trow_sys_msg(st, id, "lifecycle", msg, now, e);
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
	struct completion_rec rec;      /* the verdict of a move to completed */
};

/* The task's row for an update: status, the new name and merged metadata
 * (malloc'd). */
static int
update_read(struct store *st, struct update_tx *t, char **name, char **meta, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_TASK_GET);
	const struct task_patch *p = t->p;
	int step;

	if (s == NULL)
		return store_fail(st, "task get", e);
	sqlite3_bind_text(s, 1, t->id, -1, SQLITE_STATIC);
	step = sqlite3_step(s);
	if (step != SQLITE_ROW) {
		sqlite3_reset(s);
		/* Only "no row" is a missing task: a read that failed (an I/O
		 * error, a full disk) is the store's failure, never a 404. */
		if (step != SQLITE_DONE)
			return store_fail(st, "task get", e);
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
	if (p->status == TASK_COMPLETED && t->cur != TASK_COMPLETED &&
	    completion_tx(st, id, NULL, -1, 0, p->workspace, now, &t->rec, e) != 0)
		goto out;
	if (p->budget != NULL && (budget_write_tx(st, id, p->budget, now, e) != 0 ||
	    trow_sys_msg(st, id, "control", "Budget changed (GET the task for the limits and what is spent)", now, e) != 0))
		goto out;
	if (p->message != NULL) {
		found = task_current_item(st, id, item_id, &ord, e);
		if (found < 0 || trow_note_insert(st, id, found == 0 ? item_id : NULL, p->message, now, e) != 0)
			goto out;
		if (trow_msg_insert(st, id, "agent", "text", p->message, now, mid, e) != 0)
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

	if (rc == 0 && p->budget != NULL)
		run_hooks(id, -1, TASK_HOOK_BUDGET);
	if (rc == 0)
		events_publish("task", "updated", id, NULL);
	if (rc == 0 && p->status >= 0 && p->status != t.cur)
		run_hooks(id, t.cur, p->status);
	if (rc == 0)
		completion_publish(id, &t.rec);
	if (rc == 0 && p->completion != NULL) {
		*p->completion = t.rec;
		t.rec.why = NULL;
	}
	json_object_put(t.rec.why);
	return rc;
}

/* The control message: "Operator paused the task[: reason]" for a
 * transition, "Operator: pause changed nothing (the task was already
 * paused)[: reason]" for a click that found the task in `to` already. */
static char *
control_text(const char *who, int cur, int to, const char *reason)
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
		return xasprintf("%s: %s changed nothing (the task was already %s)%s%s",
		    who, verbs[to], task_status_name(to), sep, why);
	return xasprintf("%s %s the task%s%s", who, done[to], sep, why);
}

/* One transaction, one clock reading: the status row, then the control
 * message, then the lifecycle message; or, when the task is already in
 * `to`, only a control message saying nothing changed. */
struct control_tx {
	const char *id, *reason, *who;
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
	t->msg = control_text(t->who, t->cur, to, t->reason);
	if (trow_sys_msg(st, id, "control", t->msg, now, e) != 0)
		return -1;
	return t->cur != to ? lifecycle_msg(st, id, t->cur, to, now, e)
	    : trow_touch(st, id, now, true, e);
}

int
task_control(struct store *st, const char *id, int to, const char *reason,
    struct derr *e)
{
	return task_control_by(st, id, to, "Operator", reason, e);
}

int
task_control_by(struct store *st, const char *id, int to, const char *who,
    const char *reason, struct derr *e)
{
	struct control_tx t = { .id = id, .reason = reason, .who = who, .to = to, .cur = -1 };
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
