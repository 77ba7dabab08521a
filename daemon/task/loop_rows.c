/*
 * loop_rows.c - a loop the detector found (loopdet.h), recorded on its
 * task: the tasks.loops column (migration 9) and a system message, in one
 * transaction; the events after the commit.
 *
 * Invariants: the count only grows; nothing is written under a task that
 * does not exist (a deleted task's late action is no error); updated_at is
 * not bumped (a loop is not the agent's activity: stuck detection keeps
 * reading its idle time).
 *
 * Does not: detect (loopdet.c), wake or pause (desktop/loopwatch.c).
 */
#include "loopdet.h"

#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "core/util.h"
#include "events.h"
#include "task.h"
#include "task_int.h"

static const char SQL_LOOPS_GET[] = "SELECT loops FROM tasks WHERE id = ?1";
static const char SQL_LOOPS_SET[] = "UPDATE tasks SET loops = ?2 WHERE id = ?1";

/* The stored loops object of task_id (new; an empty one when none). */
static int
loops_read(struct store *st, const char *task_id, json_object **out, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_LOOPS_GET);
	int rc;

	*out = NULL;
	if (s == NULL)
		return store_fail(st, "loops get", e);
	sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = jx_parse_stored((const char *)sqlite3_column_text(s, 0));
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, "loops get", e);
	if (*out == NULL || !json_object_is_type(*out, json_type_object)) {
		json_object_put(*out);
		*out = json_object_new_object();
	}
	return 0;
}

static int
loops_write(struct store *st, const char *task_id, json_object *o, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_LOOPS_SET);

	if (s != NULL) {
		sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, jx_string(o, NULL), -1, SQLITE_TRANSIENT);
	}
	return store_exec(st, s, "loops set", e);
}

static json_object *
last_of(const struct loop_rec *r, int64_t now)
{
	const struct loopdet_hit *h = r->hit;
	json_object *l = json_object_new_object();

	jx_add_str(l, "signal", loopdet_signal_name(h->signal));
	jx_add_str(l, "what", h->what);
	json_object_object_add(l, "times", json_object_new_int(h->times));
	if (h->period > 0)
		json_object_object_add(l, "period", json_object_new_int(h->period));
	jx_add_time(l, "since", h->since_ms);
	jx_add_time(l, "at", now);
	jx_add_str(l, "sentence", h->sentence);
	json_object_object_add(l, "ordinal", h->ordinal >= 0 ? json_object_new_int64(h->ordinal) : NULL);
	json_object_object_add(l, "action_id", r->action_id != NULL ? json_object_new_string(r->action_id) : NULL);
	return l;
}

struct record_tx {
	const char *task_id;
	struct loop_rec *r;
	char msg_id[ID_LEN];
};

static int
record_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct record_tx *t = arg;
	struct loop_rec *r = t->r;
	const char *name = loopdet_signal_name(r->hit->signal);
	json_object *o = NULL, *sig, *v;
	char *msg;
	int cur, rc = -1;

	r->wrote = false;
	if (task_lookup(st, t->task_id, &cur, e) != 0)
		return e->code == DERR_NOT_FOUND ? 0 : -1;      /* deleted: nothing to record */
	if (loops_read(st, t->task_id, &o, e) != 0)
		goto out;
	r->count = (json_object_object_get_ex(o, "count", &v) ? json_object_get_int64(v) : 0) + 1;
	json_object_object_add(o, "count", json_object_new_int64(r->count));
	if (!json_object_object_get_ex(o, "signals", &sig) || !json_object_is_type(sig, json_type_object)) {
		sig = json_object_new_object();
		json_object_object_add(o, "signals", sig);
	}
	json_object_object_add(sig, name, json_object_new_int64((json_object_object_get_ex(sig, name, &v) ?
	    json_object_get_int64(v) : 0) + 1));
	json_object_object_add(o, "last", last_of(r, now));
	if (loops_write(st, t->task_id, o, e) != 0)
		goto out;
	msg = xasprintf("Loop detected: %s.", r->hit->sentence);
	rc = trow_sys_msg(st, t->task_id, "loop", msg, now, e);
	free(msg);
	r->wrote = rc == 0;
out:
	json_object_put(o);
	return rc;
}

int
loop_record(struct store *st, const char *task_id, struct loop_rec *r, struct derr *e)
{
	struct record_tx t = { .task_id = task_id, .r = r };

	r->count = 0;
	if (store_tx(st, record_tx, &t, e) != 0)
		return -1;
	if (r->wrote) {
		events_publish("loop", "created", task_id, r->action_id);
		events_publish("message", "created", task_id, NULL);
		events_publish("task", "updated", task_id, NULL);
	}
	return 0;
}

static int
paused_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	const char *task_id = *(const char **)arg;
	json_object *o = NULL;
	int cur, rc = -1;

	if (task_lookup(st, task_id, &cur, e) != 0)
		return e->code == DERR_NOT_FOUND ? 0 : -1;
	if (loops_read(st, task_id, &o, e) == 0) {
		jx_add_time(o, "paused_at", now);
		rc = loops_write(st, task_id, o, e);
	}
	json_object_put(o);
	return rc;
}

int
loop_mark_paused(struct store *st, const char *task_id, struct derr *e)
{
	if (store_tx(st, paused_tx, &task_id, e) != 0)
		return -1;
	events_publish("task", "updated", task_id, NULL);
	return 0;
}
