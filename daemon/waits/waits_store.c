/*
 * waits_store.c - the wait_jobs rows: insert, progress, the outcome (row,
 * the task's wait action, the thread message, the gateway wake-up), update,
 * read as the API's JSON with the live counters of a watching job laid over
 * it, the list, and resuming the rows an earlier detmd left watching.
 *
 * Owns: the SQL of wait_jobs (other modules only read the table).
 * Invariant: a row leaves 'watching' once: the finish and progress updates
 * only touch watching rows, so a wait finished twice (a race of cancel and
 * verdict) writes its outcome once. Runs with no engine lock held except
 * where a name ends in _locked.
 *
 * Does not: decide anything about a job's state (waits.c) or schedule it.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/jx.h"
#include "core/log.h"
#include "task/events.h"
#include "task/task.h"
#include "task/wake.h"
#include "waits_int.h"

static const char SQL_INSERT[] =
    "INSERT INTO wait_jobs (id, task_id, target, criteria, timeout_s, poll_hint_s, status, "
    "created_at, deadline_at, action_id, backend, judge, verdict_json) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'watching', ?7, ?8, ?9, ?10, ?11, ?12)";
static const char SQL_FINISH[] =
    "UPDATE wait_jobs SET status = ?2, verdict = ?3, reason = ?4, evaluations = ?5, skipped = ?6, "
    "last_frame_at = ?7, resolved_at = ?8, tokens_in = ?9, tokens_out = ?10, verdict_json = ?11 "
    "WHERE id = ?1 AND status = 'watching'";
static const char SQL_PROGRESS[] =
    "UPDATE wait_jobs SET verdict = ?2, reason = ?3, evaluations = ?4, skipped = ?5, "
    "last_frame_at = ?6, tokens_in = ?7, tokens_out = ?8, verdict_json = ?9 "
    "WHERE id = ?1 AND status = 'watching'";
static const char SQL_UPDATE[] =
    "UPDATE wait_jobs SET criteria = ?2, timeout_s = ?3, deadline_at = ?4, note = ?5, backend = ?6 "
    "WHERE id = ?1 AND status = 'watching'";
#define WAIT_COLS "id, task_id, target, criteria, timeout_s, poll_hint_s, status, verdict, reason, " \
    "evaluations, skipped, created_at, deadline_at, last_frame_at, resolved_at, action_id, backend, " \
    "tokens_in, tokens_out, note, judge, verdict_json"
static const char SQL_GET[] = "SELECT " WAIT_COLS " FROM wait_jobs WHERE id = ?1";
static const char SQL_LIST[] =
    "SELECT " WAIT_COLS " FROM wait_jobs WHERE (?1 IS NULL OR task_id = ?1) "
    "AND (?2 IS NULL OR status = ?2) ORDER BY created_at DESC LIMIT ?3";
static const char SQL_WATCHING[] = "SELECT " WAIT_COLS " FROM wait_jobs WHERE status = 'watching'";

static void
bind_text_or_null(sqlite3_stmt *s, int i, const char *v)
{
	if (v != NULL && v[0] != '\0')
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

static void
bind_time_or_null(sqlite3_stmt *s, int i, int64_t ms)
{
	if (ms > 0)
		sqlite3_bind_int64(s, i, ms);
	else
		sqlite3_bind_null(s, i);
}

static const char *
col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t ? (const char *)t : NULL;
}

/* The keys of the JSON object text `extra` (verdict_json) into o. */
static void
extra_merge(json_object *o, const char *extra)
{
	json_object *x = extra != NULL ? json_tokener_parse(extra) : NULL;

	if (x != NULL && json_object_is_type(x, json_type_object)) {
		json_object_object_foreach(x, k, v)
			json_object_object_add(o, k, json_object_get(v));
	}
	json_object_put(x);
}

/* A row (WAIT_COLS) as the API's JSON. */
static json_object *
row_json(sqlite3_stmt *s)
{
	json_object *o = json_object_new_object(), *tok;
	int64_t created = sqlite3_column_int64(s, 11), deadline = sqlite3_column_int64(s, 12);
	int64_t resolved = sqlite3_column_int64(s, 14), now = now_ms();
	const char *status = col_text(s, 6);
	int64_t end = resolved > 0 ? resolved : now;

	jx_add_str(o, "wait_id", col_text(s, 0));
	jx_add_str(o, "task_id", col_text(s, 1));
	jx_add_str(o, "status", status);
	jx_add_str(o, "target", col_text(s, 2));
	jx_add_str(o, "wake_when", col_text(s, 3));
	json_object_object_add(o, "timeout_s", json_object_new_int(sqlite3_column_int(s, 4)));
	if (sqlite3_column_type(s, 5) != SQLITE_NULL)
		json_object_object_add(o, "poll_interval", json_object_new_double(sqlite3_column_double(s, 5)));
	jx_add_str(o, "verdict", col_text(s, 7));
	jx_add_str(o, "detail", col_text(s, 8));
	json_object_object_add(o, "evaluations", json_object_new_int(sqlite3_column_int(s, 9)));
	json_object_object_add(o, "skipped", json_object_new_int(sqlite3_column_int(s, 10)));
	jx_add_time(o, "created_at", created);
	jx_add_time(o, "deadline_at", deadline);
	jx_add_time(o, "last_frame_at", sqlite3_column_int64(s, 13));
	jx_add_time(o, "resolved_at", resolved);
	json_object_object_add(o, "elapsed_seconds",
	    json_object_new_double(round((double)(end - created) / 100.0) / 10.0));
	if (status != NULL && strcmp(status, "watching") == 0)
		json_object_object_add(o, "remaining_seconds", json_object_new_double(
		    deadline > now ? round((double)(deadline - now) / 100.0) / 10.0 : 0.0));
	jx_add_str(o, "action_id", col_text(s, 15));
	jx_add_str(o, "backend", col_text(s, 16));
	tok = json_object_new_object();
	json_object_object_add(tok, "in", json_object_new_int64(sqlite3_column_int64(s, 17)));
	json_object_object_add(tok, "out", json_object_new_int64(sqlite3_column_int64(s, 18)));
	json_object_object_add(o, "tokens", tok);
	jx_add_str(o, "note", col_text(s, 19));
	jx_add_str(o, "judge", col_text(s, 20) ? col_text(s, 20) : "auto");
	extra_merge(o, col_text(s, 21));
	return o;
}

/* The live counters of a watching job over its row's JSON. */
static void
overlay_live(json_object *o)
{
	struct job *j;
	json_object *tok;

	pthread_mutex_lock(&waits_engine.mu);
	j = waits_engine.started ? wjob_find(json_object_get_string(json_object_object_get(o, "wait_id"))) : NULL;
	if (j != NULL && !j->done) {
		json_object_object_add(o, "evaluations", json_object_new_int(j->evaluations));
		json_object_object_add(o, "skipped", json_object_new_int(j->skipped));
		json_object_object_add(o, "skipped_human", json_object_new_int(j->human_skips));
		jx_add_time(o, "last_frame_at", j->last_frame_ms);
		if (j->verdict[0] != '\0') {
			jx_add_str(o, "verdict", j->verdict);
			jx_add_str(o, "detail", j->reason);
		}
		tok = json_object_new_object();
		json_object_object_add(tok, "in", json_object_new_int64(j->tokens_in));
		json_object_object_add(tok, "out", json_object_new_int64(j->tokens_out));
		json_object_object_add(o, "tokens", tok);
		{
			char *x = wjob_extra_locked(j);

			extra_merge(o, x);
			free(x);
		}
	}
	pthread_mutex_unlock(&waits_engine.mu);
}

/* The row of id as JSON, or NULL with e (NOT_FOUND). */
json_object *
wstore_row_get(const char *id, struct derr *e)
{
	struct store *st = waits_engine.app->store;
	json_object *o = NULL;
	sqlite3_stmt *s;
	int rc;

	store_lock(st);
	s = store_stmt(st, SQL_GET);
	if (s == NULL) {
		store_fail(st, "wait get", e);
		goto out;
	}
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		o = row_json(s);
	else if (rc == SQLITE_DONE)
		derr_set(e, DERR_NOT_FOUND, "wait_id", "no wait with id '%.64s'", id);
	else
		store_fail(st, "wait get", e);
	sqlite3_reset(s);
out:
	store_unlock(st);
	if (o != NULL)
		overlay_live(o);
	return o;
}

/* The new wait's row (status watching). 0, or -1 with e. */
int
wstore_row_insert(const char *id, const struct wait_new *w, int64_t now, int64_t deadline,
    const char *action_id, const char *backend, const char *judge, struct derr *e)
{
	struct store *st = waits_engine.app->store;
	sqlite3_stmt *s;
	int rc;

	store_lock(st);
	s = store_stmt(st, SQL_INSERT);
	if (s != NULL) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		bind_text_or_null(s, 2, w->task_id);
		sqlite3_bind_text(s, 3, w->target, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, w->criteria, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 5, w->timeout_s);
		if (w->poll_s > 0)
			sqlite3_bind_double(s, 6, w->poll_s);
		else
			sqlite3_bind_null(s, 6);
		sqlite3_bind_int64(s, 7, now);
		sqlite3_bind_int64(s, 8, deadline);
		bind_text_or_null(s, 9, action_id);
		sqlite3_bind_text(s, 10, backend, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 11, judge, -1, SQLITE_STATIC);
		sqlite3_bind_null(s, 12);
	}
	rc = store_exec(st, s, "wait insert", e);
	store_unlock(st);
	return rc;
}

/* A watching wait's changed condition, timeout and note. 0, or -1 with e. */
int
wstore_row_update(const char *id, const char *criteria, int timeout_s, int64_t deadline,
    const char *note, const char *backend, struct derr *e)
{
	struct store *st = waits_engine.app->store;
	sqlite3_stmt *s;
	int rc;

	store_lock(st);
	s = store_stmt(st, SQL_UPDATE);
	if (s != NULL) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, criteria, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 3, timeout_s);
		sqlite3_bind_int64(s, 4, deadline);
		bind_text_or_null(s, 5, note);
		sqlite3_bind_text(s, 6, backend, -1, SQLITE_STATIC);
	}
	rc = store_exec(st, s, "wait update", e);
	store_unlock(st);
	return rc;
}

/* The outcome's write, one transaction: the row (only if still watching),
 * then the task's wait action and a thread message (task_verdict_tx). */
struct outcome_tx {
	struct outcome *o;
	struct task_verdict v;
	int changed;
};

static int
outcome_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct outcome_tx *t = arg;
	struct outcome *o = t->o;
	sqlite3_stmt *s = store_stmt(st, SQL_FINISH);

	if (s != NULL) {
		sqlite3_bind_text(s, 1, o->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, o->status, -1, SQLITE_STATIC);
		bind_text_or_null(s, 3, o->verdict);
		bind_text_or_null(s, 4, o->reason);
		sqlite3_bind_int(s, 5, o->evaluations);
		sqlite3_bind_int(s, 6, o->skipped);
		bind_time_or_null(s, 7, o->last_frame_ms);
		sqlite3_bind_int64(s, 8, now);
		sqlite3_bind_int64(s, 9, o->tokens_in);
		sqlite3_bind_int64(s, 10, o->tokens_out);
		bind_text_or_null(s, 11, o->extra);
	}
	if (store_exec(st, s, "wait finish", e) != 0)
		return -1;
	t->changed = sqlite3_changes(store_db(st));
	if (t->changed != 1 || o->task_id[0] == '\0')
		return 0;       /* finished before (or deleted with its task) */
	return task_verdict_tx(st, now, &t->v, e);
}

/* The thread message of an outcome (caller frees). */
static char *
outcome_message(const struct outcome *o)
{
	if (strcmp(o->status, "resolved") == 0)
		return xasprintf("[smart_wait resolved] Job %s: %s → %s", o->id, o->criteria, o->reason);
	if (strcmp(o->status, "timed_out") == 0)
		return xasprintf("[smart_wait timeout] Job %s: %s — Timeout after %ds.", o->id, o->criteria,
		    o->timeout_s);
	return xasprintf("[smart_wait %s] Job %s: %s — %s", o->status, o->id, o->criteria, o->reason);
}

/* Wakes the agent's gateway for what it is waiting on: a resolution, a
 * timeout, a failure (a cancel came from the agent itself). */
static void
outcome_wake(const struct outcome *o, const char *msg, int64_t now)
{
	json_object *ev;
	char kind[32];

	if (strcmp(o->status, "cancelled") == 0)
		return;
	ev = json_object_new_object();
	jx_add_str(ev, "wait_id", o->id);
	jx_add_str(ev, "status", o->status);
	jx_add_str(ev, "wake_when", o->criteria);
	jx_add_str(ev, "verdict", o->verdict);
	jx_add_str(ev, "detail", o->reason);
	extra_merge(ev, o->extra);
	json_object_object_add(ev, "evaluations", json_object_new_int(o->evaluations));
	json_object_object_add(ev, "elapsed_seconds", json_object_new_double((double)(now - o->created_ms) / 1000.0));
	snprintf(kind, sizeof kind, "wait_%s", o->status);
	/* The thread message, plus what a woken agent needs to act on it: the
	 * task it belongs to and the call that tells it the rest (issue 36: a
	 * wake-up that lands in a gateway's main session named no task). */
	if (o->task_id[0] != '\0') {
		char *text = xasprintf("%s [task %s: call task_summary {\"task_id\":\"%s\"} to "
		    "continue; wait_status {\"wait_id\":\"%s\"} for this wait]", msg, o->task_id,
		    o->task_id, o->id);

		wake_post(kind, o->task_id, text, ev);
		free(text);
	} else {
		wake_post(kind, NULL, msg, ev);
	}
}

/* Writes the outcome: the wait's row, its action on the task and the
 * thread message in one transaction, and only once it committed wakes the
 * agent (so a woken agent finds the task saying why). No engine lock held. */
void
wstore_outcome_write(struct outcome *o)
{
	struct store *st = waits_engine.app->store;
	int64_t now = now_ms();
	struct derr e;
	json_object *out = json_object_new_object();
	struct action_patch p = { .status = strcmp(o->status, "resolved") == 0 ? "completed" : "failed" };
	struct outcome_tx t = { .o = o };
	char *msg = outcome_message(o);

	jx_add_str(out, "state", o->status);
	jx_add_str(out, "detail", o->reason);
	json_object_object_add(out, "elapsed_seconds", json_object_new_double((double)(now - o->created_ms) / 1000.0));
	json_object_object_add(out, "evaluations", json_object_new_int(o->evaluations));
	json_object_object_add(out, "skipped", json_object_new_int(o->skipped));
	p.output_json = jx_string(out, NULL);
	p.duration_ms = (double)(now - o->created_ms);
	t.v = (struct task_verdict){ .task_id = o->task_id, .action_id = o->action_id, .p = &p,
	    .role = "wait", .msg_type = o->status, .content = msg };
	derr_clear(&e);
	if (store_tx(st, outcome_tx, &t, &e) != 0)
		log_error("wait %s: cannot record %s: %s", o->id, o->status, e.message);
	else if (t.changed == 1)
		log_info("%s", msg);
	if (t.changed == 1 && e.code == DERR_OK) {
		task_verdict_publish(&t.v);
		outcome_wake(o, msg, now);
		events_publish("wait", "updated", o->task_id[0] ? o->task_id : NULL, o->id);
	}
	json_object_put(out);
	free(msg);
}

/* Finishes j from a thread that does not hold mu: marks it done, writes
 * the outcome, then lets it leave the table (waits_jobs.c). */
void
wstore_finish(struct job *j, const char *status, const char *verdict, const char *reason)
{
	struct outcome o;
	int r;

	pthread_mutex_lock(&waits_engine.mu);
	r = wjob_finish_locked(j, status, verdict, reason, &o);
	pthread_mutex_unlock(&waits_engine.mu);
	wstore_finish_rest(j, r, &o);
}

/* The rest of a finish begun under mu (r, o from wjob_finish_locked): the
 * outcome's write, then j leaves the table. No lock held. */
void
wstore_finish_rest(struct job *j, int r, struct outcome *o)
{
	if (r < 0)
		return;
	wstore_outcome_write(o);
	pthread_mutex_lock(&waits_engine.mu);
	wjob_finish_end_locked(j, o);
	pthread_mutex_unlock(&waits_engine.mu);
}

/* A judgement: recorded, and a YES finishes j in the same hold of mu (a
 * reader never sees the verdict before the job is done); a NO or PARTIAL
 * reaches the row as progress. True when j is finished. */
bool
wstore_judged(struct job *j, struct vision_result *vr, bool use_ocr, const char *cause)
{
	struct outcome o;
	int r = -1;
	bool finished;

	pthread_mutex_lock(&waits_engine.mu);
	wjudge_record_locked(j, vr, use_ocr, cause);
	finished = vr->verdict == VISION_YES || j->done;
	if (vr->verdict == VISION_YES)
		r = wjob_finish_locked(j, "resolved", "YES", vr->reason, &o);
	pthread_mutex_unlock(&waits_engine.mu);
	if (finished)
		wstore_finish_rest(j, r, &o);
	else
		wstore_progress_write(j);
	return finished;
}

/* After a judgement that did not end the wait: the counters reach the row,
 * so a restart resumes with them (model calls are rare; gate skips are
 * counted in memory and written with the next judgement or the end). */
void
wstore_progress_write(struct job *j)
{
	struct store *st = waits_engine.app->store;
	struct derr e;
	sqlite3_stmt *s;
	char verdict[16], reason[512];
	int ev, sk;
	int64_t lf;
	long ti, to;
	char *extra;

	pthread_mutex_lock(&waits_engine.mu);
	extra = wjob_extra_locked(j);
	snprintf(verdict, sizeof verdict, "%s", j->verdict);
	snprintf(reason, sizeof reason, "%s", j->reason);
	ev = j->evaluations;
	sk = j->skipped;
	lf = j->last_frame_ms;
	ti = j->tokens_in;
	to = j->tokens_out;
	pthread_mutex_unlock(&waits_engine.mu);
	store_lock(st);
	s = store_stmt(st, SQL_PROGRESS);
	if (s != NULL) {
		sqlite3_bind_text(s, 1, j->id, -1, SQLITE_STATIC);
		bind_text_or_null(s, 2, verdict);
		bind_text_or_null(s, 3, reason);
		sqlite3_bind_int(s, 4, ev);
		sqlite3_bind_int(s, 5, sk);
		bind_time_or_null(s, 6, lf);
		sqlite3_bind_int64(s, 7, ti);
		sqlite3_bind_int64(s, 8, to);
		bind_text_or_null(s, 9, extra);
	}
	if (store_exec(st, s, "wait progress", &e) != 0)
		log_warn("wait %s: cannot record progress: %s", j->id, e.message);
	store_unlock(st);
	free(extra);
	events_publish("wait", "updated", j->task_id[0] ? j->task_id : NULL, j->id);
}

/* Waits an earlier detmd left watching: resume, or time out. */
void
wstore_resume(void)
{
	struct store *st = waits_engine.app->store;
	struct job *list[1024];
	size_t n = 0, i;
	sqlite3_stmt *s;
	int64_t now = now_ms();

	store_lock(st);
	s = store_stmt(st, SQL_WATCHING);
	while (s != NULL && n < ARRAY_LEN(list) && sqlite3_step(s) == SQLITE_ROW) {
		struct job *j = wjob_new(col_text(s, 0), col_text(s, 1), col_text(s, 2), col_text(s, 3),
		    sqlite3_column_int(s, 4), sqlite3_column_double(s, 5), sqlite3_column_int64(s, 11),
		    sqlite3_column_int64(s, 12), col_text(s, 15));

		/* What the earlier run had counted. */
		snprintf(j->verdict, sizeof j->verdict, "%s", col_text(s, 7) ? col_text(s, 7) : "");
		snprintf(j->reason, sizeof j->reason, "%s", col_text(s, 8) ? col_text(s, 8) : "");
		j->evaluations = sqlite3_column_int(s, 9);
		j->skipped = sqlite3_column_int(s, 10);
		j->last_frame_ms = sqlite3_column_int64(s, 13);
		j->tokens_in = sqlite3_column_int64(s, 17);
		j->tokens_out = sqlite3_column_int64(s, 18);
		if (col_text(s, 20) != NULL)
			snprintf(j->judge, sizeof j->judge, "%s", col_text(s, 20));
		list[n++] = j;
	}
	if (s != NULL)
		sqlite3_reset(s);
	store_unlock(st);
	for (i = 0; i < n; i++) {
		struct job *j = list[i];
		bool keep;

		struct derr e;

		/* The judge as this run's backends allow (a model that is
		 * down now fails the wait later, as it would have). */
		if (wjudge_pick(j->judge, j->criteria, false, &j->use_ocr, j->judge_why,
		    sizeof j->judge_why, &e) != 0)
			snprintf(j->judge_why, sizeof j->judge_why, "%.200s", e.message);
		pthread_mutex_lock(&waits_engine.mu);
		keep = j->deadline_ms > now && wjob_slot_put(j) == 0;
		pthread_mutex_unlock(&waits_engine.mu);
		if (keep) {
			log_info("wait %s resumes watching (%s)", j->id, j->target);
			continue;
		}
		pthread_mutex_lock(&waits_engine.mu);
		(void)wjob_slot_put(j);
		pthread_mutex_unlock(&waits_engine.mu);
		wstore_finish(j, "timed_out", "TIMEOUT", j->deadline_ms <= now ?
		    "the deadline passed while detmd was not running" : "too many waits to resume");
	}
}

json_object *
waits_list(const char *task_id, const char *status, int limit, struct derr *e)
{
	struct store *st = waits_engine.app->store;
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	sqlite3_stmt *s;
	int rc = -1;

	store_lock(st);
	s = store_stmt(st, SQL_LIST);
	if (s == NULL) {
		store_fail(st, "wait list", e);
		goto out;
	}
	bind_text_or_null(s, 1, task_id);
	if (status != NULL && strcmp(status, "all") == 0)
		sqlite3_bind_null(s, 2);
	else
		sqlite3_bind_text(s, 2, status ? status : "watching", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, 3, limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		json_object_array_add(arr, row_json(s));
	sqlite3_reset(s);
	rc = rc == SQLITE_DONE ? 0 : store_fail(st, "wait list", e);
out:
	store_unlock(st);
	if (rc != 0) {
		json_object_put(arr);
		json_object_put(o);
		return NULL;
	}
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		overlay_live(json_object_array_get_idx(arr, i));
	json_object_object_add(o, "count", json_object_new_int((int)json_object_array_length(arr)));
	json_object_object_add(o, "waits", arr);
	return o;
}
