/*
 * replay_rows.c - the rows of "record once, replay" (replay_rows.h):
 * actions.target and tasks.replay (migration 10), the recorded steps of a
 * task (a source's replays are listed by its summary: taskview.c).
 *
 * Invariants: writes go through store_tx (group commit) and never bump a
 * task's updated_at (a descriptor read after an input is not the agent's
 * activity); reads use a snapshot (store_read_begin). Stored JSON that
 * does not parse reads as null.
 *
 * Does not: read the screen or replay anything.
 */
#include "replay_rows.h"

#include <string.h>

#include "core/jx.h"
#include "core/util.h"
#include "events.h"
#include "task.h"

static const char SQL_TARGET_SET[] = "UPDATE actions SET target = ?2 WHERE id = ?1";
static const char SQL_STEPS[] =
    "SELECT id, action_type, status, summary, input_data, output_data, target FROM actions "
    "WHERE task_id = ?1 ORDER BY created_at, rowid LIMIT 500";   /* REPLAY_MAX_STEPS */
static const char SQL_STATE_SET[] = "UPDATE tasks SET replay = ?2 WHERE id = ?1";
static const char SQL_STATE_GET[] = "SELECT replay FROM tasks WHERE id = ?1";
/* replays whose last stored progress says running (at start-up: none runs) */
static const char SQL_RUNNING[] = "SELECT id FROM tasks WHERE replay IS NOT NULL AND json_valid(replay) "
    "AND json_extract(replay, '$.status') = 'running' LIMIT 1000";

struct set_tx {
	const char *sql, *id, *json;
};

static int
set_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct set_tx *t = arg;
	sqlite3_stmt *s = store_stmt(st, t->sql);

	(void)now;
	if (s != NULL) {
		sqlite3_bind_text(s, 1, t->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, t->json, -1, SQLITE_STATIC);
	}
	return store_exec(st, s, "replay row set", e);
}

int
replay_target_set(struct store *st, const char *action_id, json_object *target, struct derr *e)
{
	struct set_tx t = { SQL_TARGET_SET, action_id, jx_string(target, NULL) };

	return store_tx(st, set_tx, &t, e);
}

int
replay_state_set(struct store *st, const char *task_id, json_object *state, struct derr *e)
{
	struct set_tx t = { SQL_STATE_SET, task_id, jx_string(state, NULL) };

	if (store_tx(st, set_tx, &t, e) != 0)
		return -1;
	events_publish("task", "updated", task_id, NULL);
	return 0;
}

static json_object *
col_json(sqlite3_stmt *s, int i)
{
	const char *t = (const char *)sqlite3_column_text(s, i);

	return t != NULL ? jx_parse_stored(t) : NULL;
}

static json_object *
step_row(sqlite3_stmt *s)
{
	json_object *o = json_object_new_object();

	jx_add_str(o, "action_id", (const char *)sqlite3_column_text(s, 0));
	jx_add_str(o, "type", (const char *)sqlite3_column_text(s, 1));
	jx_add_str(o, "status", (const char *)sqlite3_column_text(s, 2));
	jx_add_str(o, "summary", (const char *)sqlite3_column_text(s, 3));
	json_object_object_add(o, "input", col_json(s, 4));
	json_object_object_add(o, "output", col_json(s, 5));
	json_object_object_add(o, "target", col_json(s, 6));
	return o;
}

int
replay_steps_read(struct store *st, const char *task_id, json_object **out, struct derr *e)
{
	struct store *rd = store_read_begin(st);
	sqlite3_stmt *s;
	int cur, rc = -1, step;

	*out = NULL;
	if (task_lookup(rd, task_id, &cur, e) != 0)
		goto out;
	if ((s = store_stmt(rd, SQL_STEPS)) == NULL) {
		store_fail(rd, "replay steps", e);
		goto out;
	}
	sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
	*out = json_object_new_array();
	while ((step = sqlite3_step(s)) == SQLITE_ROW)
		json_object_array_add(*out, step_row(s));
	sqlite3_reset(s);
	if (step != SQLITE_DONE) {
		store_fail(rd, "replay steps", e);
		json_object_put(*out);
		*out = NULL;
		goto out;
	}
	rc = 0;
out:
	store_read_end(rd);
	return rc;
}

int
replay_state_get(struct store *st, const char *task_id, json_object **out, struct derr *e)
{
	struct store *rd = store_read_begin(st);
	sqlite3_stmt *s;
	int cur, rc = -1, step;

	*out = NULL;
	if (task_lookup(rd, task_id, &cur, e) != 0)
		goto out;
	if ((s = store_stmt(rd, SQL_STATE_GET)) == NULL) {
		store_fail(rd, "replay state", e);
		goto out;
	}
	sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
	if ((step = sqlite3_step(s)) == SQLITE_ROW)
		*out = col_json(s, 0);
	sqlite3_reset(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		store_fail(rd, "replay state", e);
		goto out;
	}
	rc = 0;
out:
	store_read_end(rd);
	return rc;
}

int
replay_running_ids(struct store *st, json_object **out, struct derr *e)
{
	struct store *rd = store_read_begin(st);
	sqlite3_stmt *s;
	int rc = -1, step;

	*out = json_object_new_array();
	if ((s = store_stmt(rd, SQL_RUNNING)) == NULL) {
		store_fail(rd, "running replays", e);
		goto out;
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW)
		json_object_array_add(*out, json_object_new_string((const char *)sqlite3_column_text(s, 0)));
	sqlite3_reset(s);
	if (step != SQLITE_DONE) {
		store_fail(rd, "running replays", e);
		goto out;
	}
	rc = 0;
out:
	if (rc != 0) {
		json_object_put(*out);
		*out = NULL;
	}
	store_read_end(rd);
	return rc;
}
