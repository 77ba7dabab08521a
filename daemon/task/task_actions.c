/*
 * task_actions.c - writes of what a task's work leaves: actions and their
 * updates, log lines, thread messages, the driver's notes (takeover) and a
 * verdict written inside another module's transaction (a wait's outcome).
 * See task.h for the contract and task.c for how every write runs (a *_tx
 * body under store_tx: all or nothing, created_at never decreasing in rowid
 * order, updated_at bumped); rows through task_rows.c.
 *
 * Invariants: every body checks its task with task_lookup (and an action's
 * with action_check) before it writes, so nothing is written under a task
 * or an action that does not exist; events go out only after store_tx
 * returned 0.
 *
 * Does not: create, update or end tasks (task.c), touch plan items
 * (task_items.c) or read views (taskview.c).
 */
#include "task.h"

#include <stdio.h>
#include <string.h>

#include "core/jx.h"
#include "events.h"
#include "task_int.h"

static const char SQL_ACTION_EXISTS[] =
    "SELECT 1 FROM actions WHERE id = ?1 AND task_id = ?2";
static const char SQL_ACTION_SET[] =
    "UPDATE actions SET status = coalesce(?3, status), output_data = coalesce(?4, output_data), "
    "duration_ms = coalesce(?5, duration_ms) WHERE id = ?1 AND task_id = ?2";

#define ACTION_HOOKS 4
static task_action_hook_fn action_hooks[ACTION_HOOKS];
static void *action_hook_args[ACTION_HOOKS];

void
task_action_hook_set(task_action_hook_fn fn, void *arg)
{
	for (size_t i = 0; i < ACTION_HOOKS; i++) {
		if (action_hooks[i] == NULL || action_hooks[i] == fn) {
			action_hooks[i] = fn;
			action_hook_args[i] = arg;
			return;
		}
	}
}

static void
action_noted(const char *task_id, const char *id, int64_t ordinal, const struct action_new *a)
{
	struct task_action_note n = { .task_id = task_id, .action_id = id, .ordinal = ordinal, .a = a };

	for (size_t i = 0; i < ACTION_HOOKS && action_hooks[i] != NULL; i++)
		action_hooks[i](&n, action_hook_args[i]);
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
		if (trow_item_get(st, task_id, a->ordinal, item_id, &cur, NULL, &started, e) != 0) {
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
	if (trow_action_insert(st, task_id, item, a, now, t->id_out, e) != 0)
		return -1;
	for (i = 0; i < nlogs; i++) {
		json_object *l = json_object_array_get_idx(a->logs, i), *v;
		const char *type = NULL, *content = NULL;

		if (json_object_object_get_ex(l, "log_type", &v) && v != NULL)
			type = json_object_get_string(v);
		if (json_object_object_get_ex(l, "content", &v))
			content = json_object_get_string(v);
		if (trow_log_insert(st, t->id_out, type, content, now, log_id, e) != 0)
			return -1;
	}
	return trow_touch(st, task_id, now, false, e);
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
	if (rc != 0) {
		*ordinal_out = -1;
	} else {
		events_publish("action", "created", task_id, id_out);
		action_noted(task_id, id_out, *ordinal_out, a);
	}
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
	int cur;

	/* The task may have been deleted since the caller looked: that is a
	 * 404 like action_tx's, not the message's foreign-key failure (a 500,
	 * found by the chaos test: a takeover racing a DELETE). */
	if (task_lookup(st, t->a.task_id, &cur, e) != 0 ||
	    trow_sys_msg(st, t->a.task_id, "control", t->msg, now, e) != 0)
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
		action_noted(id, aid, ord, a);
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
		trow_bind_text_or_null(s, 3, p->status);
		trow_bind_text_or_null(s, 4, p->output_json);
		if (p->duration_ms >= 0)
			sqlite3_bind_double(s, 5, p->duration_ms);
		else
			sqlite3_bind_null(s, 5);
	}
	if (store_exec(st, s, "action set", e) != 0)
		return -1;
	return trow_touch(st, t->task_id, now, false, e);
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
	    trow_log_insert(st, t->action_id, t->log_type, t->content, now, t->id_out, e) != 0)
		return -1;
	return trow_touch(st, t->task_id, now, false, e);
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
	    trow_msg_insert(st, t->task_id, t->role, t->msg_type, t->content, now, t->id, e) != 0)
		return -1;
	return trow_touch(st, t->task_id, now, false, e);
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

int
task_verdict_tx(struct store *st, int64_t now, struct task_verdict *v, struct derr *e)
{
	struct action_up_tx a = { .task_id = v->task_id, .action_id = v->action_id, .p = v->p };
	struct msg_tx m = { .task_id = v->task_id, .role = v->role, .msg_type = v->msg_type,
	    .content = v->content };
	int cur;

	v->wrote = v->action_set = false;
	if (task_lookup(st, v->task_id, &cur, e) != 0)
		return e->code == DERR_NOT_FOUND ? 0 : -1;      /* deleted with its task */
	if (v->action_id != NULL && v->action_id[0] != '\0') {
		if (action_check(st, v->task_id, v->action_id, e) == 0) {
			if (action_up_tx(st, now, &a, e) != 0)
				return -1;
			v->action_set = true;
		} else if (e->code != DERR_NOT_FOUND) {
			return -1;
		}
	}
	if (msg_tx(st, now, &m, e) != 0)
		return -1;
	memcpy(v->msg_id, m.id, ID_LEN);
	v->wrote = true;
	return 0;
}

void
task_verdict_publish(const struct task_verdict *v)
{
	if (v->action_set)
		events_publish("action", "updated", v->task_id, v->action_id);
	if (v->wrote)
		events_publish("message", "created", v->task_id, v->msg_id);
}
