/*
 * task_items.c - writes to what a task holds: plan items (append, status,
 * rename, the current one), actions and their updates, log lines, and
 * thread messages. See task.h for the contract and task.c for how every
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

#include "core/buf.h"
#include "core/jx.h"
#include "core/log.h"
#include "events.h"
#include "lim.h"
#include "task_int.h"
#include "taskstate.h"

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
static const char SQL_ACTION_EXISTS[] =
    "SELECT 1 FROM actions WHERE id = ?1 AND task_id = ?2";
static const char SQL_ACTION_SET[] =
    "UPDATE actions SET status = coalesce(?3, status), output_data = coalesce(?4, output_data), "
    "duration_ms = coalesce(?5, duration_ms) WHERE id = ?1 AND task_id = ?2";

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
		if (trow_sys_msg(st, t->id, "progress", msg, now, e) != 0)
			goto out;
	}
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
