/*
 * waits.c - the smart-wait engine (see waits.h for the contract).
 *
 * Owns: the in-memory jobs (table `jobs`, guarded by `mu`), the scheduler
 * thread, the worker pool, the vision backend handle, and the wait_jobs
 * rows (other modules only read them).
 *
 * A job's states: scheduled (in the table, waiting for next_us) -> queued
 * (handed to the workers) -> running (one worker owns its frames) ->
 * scheduled again, or done. `done` is set once, under mu, by whoever
 * finishes the job (a worker's verdict, the scheduler's deadline, a
 * cancel); that caller also takes it out of the table (`removed`) and writes
 * the row. A job has one way to die, job_release_locked(): it is freed only
 * once it is removed from the table AND out of the work queue AND not run by
 * a worker; whichever of the finisher, the dequeuing worker or the worker
 * returning from its tick sees that last frees it. Nothing but the worker
 * that runs a job touches its frame buffers.
 *
 * One tick of a job: lease the display (display.h), grab the target at
 * ACU_DIFF_MAX_WIDTH, give the lease back, compare the greyscale thumbnail
 * with the one last shown to the model (gate.h). Unchanged and recently
 * judged -> skipped, no model call. Otherwise grab a frame for the model
 * (<= ACU_FRAME_MAX_DIM wide, JPEG) and ask the backend, outside any lock.
 * Intervals adapt: a changing screen is checked every ~1.5 s, a still one
 * every 5 s (10 s after a minute), a PARTIAL answer bursts at 0.75 s. A
 * screen drawn on but under the gate's threshold is judged again after
 * ACU_WAIT_REJUDGE_S (30 s) anyway; one where XDamage saw nothing drawn since the frame the model
 * judged is never judged again (the pixels are the ones it saw).
 *
 * Event-driven ticks: every DAMAGE_PEEK_US the scheduler peeks at the
 * XDamage counter of each watched display (display_damage_peek: no lease,
 * no grab, no round trip). Drawing on it schedules the job's tick once a
 * peek sees no new drawing (<= ~200 ms after the last draw) or, while it
 * keeps drawing, DAMAGE_MAX_US after the first; a still screen costs a
 * peek and nothing else. The poll intervals above stay as the fallback.
 *
 * The judge (per wait, judge_pick): a condition OCR can decide (text:"..",
 * text-gone:"..", a quoted phrase) is read by tesseract in process (ocr.h)
 * whatever the model backend, unless the wait asked judge "model"; any
 * other condition goes to the configured model. A wait that needs a model
 * the last health check could not reach (or that has no key) is refused
 * at creation (503) rather than failing later. A model's FINAL_JSON verdict
 * with a confidence under ACU_WAIT_MIN_CONFIDENCE counts as PARTIAL.
 *
 * Does not: talk HTTP (api_waits.c), or know the backends' wire formats
 * (vision.c).
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "desktop.h"
#include "display.h"
#include "gate.h"
#include "jx.h"
#include "events.h"
#include "log.h"
#include "task.h"
#include "taskstate.h"
#include "ocr.h"
#include "usage.h"
#include "vision.h"
#include "wake.h"
#include "waits.h"
#include "xcap.h"
#include "xwin.h"

#define CHANGING_US       1500000   /* a changing screen: check every 1.5 s */
#define STATIC_US         5000000   /* a still screen */
#define STATIC_LONG_US   10000000   /* still for a minute */
#define PARTIAL_US         750000   /* PARTIAL: burst */
#define CHANGE_WINDOW_US  5000000   /* "changing" = changed within 5 s */
#define MISSING_US        1000000   /* target window not there yet */
#define BACKOFF_MAX_US   30000000
#define HEALTH_EVERY_US  60000000
#define HEALTH_RETRY_US  10000000   /* while the model is unreachable */
#define DAMAGE_PEEK_US     100000   /* peek at each watched display's XDamage counter */
#define DAMAGE_MAX_US     1000000   /* drawing goes on: judge at least this often */
#define STATIC_DAMAGE_US 10000000   /* a still screen whose drawing the peeks see */

struct job {
	char id[ID_LEN];
	char task_id[ID_LEN];   /* "" for none */
	char action_id[ID_LEN]; /* the task's wait action, "" for none */
	char target[WAIT_TARGET_MAX + 1];
	char *criteria;         /* under mu */
	char *note;             /* under mu */
	int timeout_s;
	double poll_s;
	int64_t created_ms, deadline_ms;
	/* under mu */
	int64_t next_us;
	bool queued, running, done, removed, force;
	int evaluations, skipped;
	int model_saved;        /* skips of a model-judged wait: model calls the gate saved */
	int64_t last_frame_ms;
	char verdict[16];
	char reason[512];
	long tokens_in, tokens_out;
	/* the running worker's */
	struct xcap_frame thumb, full;
	uint8_t *ref, *cur;     /* greyscale: last judged, this tick */
	uint8_t *prev;          /* passthrough: the previous tick's */
	size_t npix;
	int64_t last_change_us, last_eval_us, started_us;
	bool changed_once;
	unsigned char *prev_jpeg;
	size_t prev_len;
	int fails;
	bool peek_live;         /* the scheduler's peeks see this display's drawing */
	uint64_t damage_seen;   /* the display's damage_seq at the last grab */
	bool damage_valid;
	uint64_t damage_judged; /* ... at the grab the model last judged */
	bool judged_valid;
	/* the judge; under mu */
	char judge[8];          /* asked: auto | ocr | model */
	bool use_ocr;           /* in effect: OCR, else the model backend */
	char judge_why[240];
	const char *wake;       /* static: why the queued tick runs (start, poll, damage, update) */
	const char *woken_by;   /* static: what woke the last judgement */
	int wake_damage, wake_poll;
	double confidence;      /* the last model verdict's, -1 none */
	char summary[512];
	char evidence[1024];    /* JSON array text or "" */
	/* the scheduler's (under mu): XDamage seen by its peeks */
	uint64_t sched_seq;
	bool sched_valid;
	int64_t dmg_first_us, dmg_last_us;   /* 0: no drawing pending */
};

static struct {
	struct app *app;
	struct vision *vision;
	pthread_mutex_t mu;
	pthread_cond_t sched_cv;        /* new or re-armed jobs, stop */
	pthread_cond_t work_cv;         /* queued jobs, stop */
	pthread_cond_t done_cv;         /* a job finished (long polls) */
	struct job **jobs;              /* max_waits slots */
	struct job **queue;             /* ring of queued jobs */
	size_t qhead, qlen;
	pthread_t sched, *workers;
	size_t nworkers;
	bool started, stopping;
	char backend[32];               /* the backend's name (outlives W.vision) */
	bool ocr_mode;                  /* backend "ocr": tesseract, no model, W.vision NULL */
	json_object *health;            /* last backend health */
	int64_t health_at_us;
	bool ocr_ok;                    /* tesseract loads: text conditions are read in process */
	char ocr_err[240];              /* why not */
	char model_err[400];            /* no model: why (ocr backend, missing key) */
	double min_conf;                /* ACU_WAIT_MIN_CONFIDENCE */
	pthread_t health_thread;
	pthread_cond_t health_cv;       /* kick the health check, stop */
	bool health_kick;
	char (*peek_ids)[ID_LEN];       /* the scheduler's scratch: displays to peek, */
	uint64_t *peek_seq;             /* their damage counters, */
	bool *peek_ok;                  /* and whether each peek answered */
	int64_t peek_at_us;
} W = {
	.health_cv = PTHREAD_COND_INITIALIZER,
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.sched_cv = PTHREAD_COND_INITIALIZER,
	.work_cv = PTHREAD_COND_INITIALIZER,
	.done_cv = PTHREAD_COND_INITIALIZER,
};

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

/* ---- small helpers ---- */

static void
job_free(struct job *j)
{
	if (j == NULL)
		return;
	free(j->criteria);
	free(j->note);
	xcap_frame_free(&j->thumb);
	xcap_frame_free(&j->full);
	free(j->ref);
	free(j->cur);
	free(j->prev);
	free(j->prev_jpeg);
	free(j);
}

/* mu held. */
static struct job *
job_find(const char *id)
{
	size_t i;

	for (i = 0; i < (size_t)W.app->cfg->max_waits; i++)
		if (W.jobs[i] != NULL && strcmp(W.jobs[i]->id, id) == 0)
			return W.jobs[i];
	return NULL;
}

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

/* mu held: what decided j and how (the verdict_json column), as a new
 * JSON text. */
static char *
job_extra_locked(const struct job *j)
{
	json_object *o = json_object_new_object(), *w = json_object_new_object(), *ev = NULL;
	char *text;

	jx_add_str(o, "judged_by", j->use_ocr ? "ocr" : "model");
	jx_add_str(o, "judge_reason", j->judge_why);
	jx_add_str(o, "woken_by", j->woken_by);
	json_object_object_add(w, "damage", json_object_new_int(j->wake_damage));
	json_object_object_add(w, "poll", json_object_new_int(j->wake_poll));
	json_object_object_add(o, "wakeups", w);
	json_object_object_add(o, "model_calls_saved", json_object_new_int(j->model_saved));
	json_object_object_add(o, "confidence", j->confidence >= 0 ?
	    json_object_new_double(round(j->confidence * 1000) / 1000) : NULL);
	jx_add_str(o, "summary", j->summary[0] ? j->summary : NULL);
	if (j->evidence[0] != '\0')
		ev = json_tokener_parse(j->evidence);
	json_object_object_add(o, "evidence", ev != NULL ? ev : json_object_new_array());
	text = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return text;
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

	pthread_mutex_lock(&W.mu);
	j = W.started ? job_find(json_object_get_string(json_object_object_get(o, "wait_id"))) : NULL;
	if (j != NULL && !j->done) {
		json_object_object_add(o, "evaluations", json_object_new_int(j->evaluations));
		json_object_object_add(o, "skipped", json_object_new_int(j->skipped));
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
			char *x = job_extra_locked(j);

			extra_merge(o, x);
			free(x);
		}
	}
	pthread_mutex_unlock(&W.mu);
}

/* The row of id as JSON, or NULL with e (NOT_FOUND). */
static json_object *
row_get(const char *id, struct derr *e)
{
	struct store *st = W.app->store;
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

/* ---- finishing ---- */

struct outcome {
	char id[ID_LEN], task_id[ID_LEN], action_id[ID_LEN];
	char *criteria;
	const char *status;     /* resolved | timed_out | cancelled | failed */
	char verdict[16];
	char reason[512];
	int evaluations, skipped, timeout_s;
	int64_t last_frame_ms, created_ms;
	long tokens_in, tokens_out;
	char *extra;            /* verdict_json */
};

/* Writes the outcome: the row (only if still watching), the task's wait
 * action and a thread message. No engine lock held. */
static void
outcome_write(struct outcome *o)
{
	struct store *st = W.app->store;
	int64_t now = now_ms();
	struct derr e;
	sqlite3_stmt *s;
	int changed = 0;
	char *msg;

	store_lock(st);
	s = store_stmt(st, SQL_FINISH);
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
	if (store_exec(st, s, "wait finish", &e) == 0)
		changed = sqlite3_changes(store_db(st));
	else
		log_error("wait %s: cannot record %s: %s", o->id, o->status, e.message);
	store_unlock(st);
	if (changed != 1)
		return;         /* finished before (or deleted with its task) */

	if (strcmp(o->status, "resolved") == 0)
		msg = xasprintf("[smart_wait resolved] Job %s: %s → %s", o->id, o->criteria, o->reason);
	else if (strcmp(o->status, "timed_out") == 0)
		msg = xasprintf("[smart_wait timeout] Job %s: %s — Timeout after %ds.", o->id, o->criteria,
		    o->timeout_s);
	else
		msg = xasprintf("[smart_wait %s] Job %s: %s — %s", o->status, o->id, o->criteria, o->reason);
	log_info("%s", msg);
	/* Wake the agent's gateway for what it is waiting on: a resolution,
	 * a timeout, a failure (a cancel came from the agent itself). */
	if (strcmp(o->status, "cancelled") != 0) {
		json_object *ev = json_object_new_object();
		char kind[32];

		jx_add_str(ev, "wait_id", o->id);
		jx_add_str(ev, "status", o->status);
		jx_add_str(ev, "wake_when", o->criteria);
		jx_add_str(ev, "verdict", o->verdict);
		jx_add_str(ev, "detail", o->reason);
		extra_merge(ev, o->extra);
		json_object_object_add(ev, "evaluations", json_object_new_int(o->evaluations));
		json_object_object_add(ev, "elapsed_seconds",
		    json_object_new_double((double)(now - o->created_ms) / 1000.0));
		snprintf(kind, sizeof kind, "wait_%s", o->status);
		wake_post(kind, o->task_id[0] ? o->task_id : NULL, msg, ev);
	}
	if (o->task_id[0] != '\0') {
		json_object *out = json_object_new_object();
		struct action_patch p = { .status = strcmp(o->status, "resolved") == 0 ? "completed" : "failed" };
		json_object *m;

		jx_add_str(out, "state", o->status);
		jx_add_str(out, "detail", o->reason);
		json_object_object_add(out, "elapsed_seconds",
		    json_object_new_double((double)(now - o->created_ms) / 1000.0));
		json_object_object_add(out, "evaluations", json_object_new_int(o->evaluations));
		json_object_object_add(out, "skipped", json_object_new_int(o->skipped));
		p.output_json = jx_string(out, NULL);
		p.duration_ms = (double)(now - o->created_ms);
		if (o->action_id[0] != '\0' &&
		    task_action_update(st, o->task_id, o->action_id, &p, &e) != 0)
			log_warn("wait %s: cannot update action %s: %s", o->id, o->action_id, e.message);
		json_object_put(out);
		m = task_message_add(st, o->task_id, "wait", o->status, msg, &e);
		if (m == NULL)
			log_warn("wait %s: cannot post to task %s: %s", o->id, o->task_id, e.message);
		json_object_put(m);
	}
	free(msg);
	events_publish("wait", "updated", o->task_id[0] ? o->task_id : NULL, o->id);
}

/* Marks j done (mu held) and fills o. Returns -1 if j was already done.
 * The finisher then writes the outcome (no lock) and calls finish_end. */
static int
finish_locked(struct job *j, const char *status, const char *verdict, const char *reason,
    struct outcome *o)
{
	if (j->done)
		return -1;
	j->done = true;
	memset(o, 0, sizeof *o);
	memcpy(o->id, j->id, ID_LEN);
	memcpy(o->task_id, j->task_id, ID_LEN);
	memcpy(o->action_id, j->action_id, ID_LEN);
	o->criteria = xstrdup(j->criteria);
	o->status = status;
	snprintf(o->verdict, sizeof o->verdict, "%s", verdict ? verdict : j->verdict);
	snprintf(o->reason, sizeof o->reason, "%s", reason ? reason : j->reason);
	o->evaluations = j->evaluations;
	o->skipped = j->skipped;
	o->timeout_s = j->timeout_s;
	o->last_frame_ms = j->last_frame_ms;
	o->created_ms = j->created_ms;
	o->tokens_in = j->tokens_in;
	o->tokens_out = j->tokens_out;
	o->extra = job_extra_locked(j);
	return 0;
}

/* mu held: the one place a job dies. Frees j when nothing can reach it any
 * more: out of the table, not in the work queue, not run by a worker. */
static void
job_release_locked(struct job *j)
{
	assert(!j->removed || j->done);
	if (j->removed && !j->queued && !j->running)
		job_free(j);
}

/* mu held: takes j out of the work queue if it is there, keeping the order
 * of the others, so the ring only ever holds jobs of the table (<= max_waits). */
static void
queue_remove_locked(struct job *j)
{
	size_t n = (size_t)W.app->cfg->max_waits, i, k = 0;

	if (!j->queued)
		return;
	for (i = 0; i < W.qlen; i++) {
		struct job *q = W.queue[(W.qhead + i) % n];

		if (q != j)
			W.queue[(W.qhead + k++) % n] = q;
	}
	W.qlen = k;
	j->queued = false;
}

/* After the outcome is written: j leaves the table (so a long poll that
 * sees it gone reads the final row), and dies unless the queue or a worker
 * still holds it (see job_release_locked). mu held. */
static void
finish_end_locked(struct job *j, struct outcome *o)
{
	size_t i;

	free(o->criteria);
	o->criteria = NULL;
	free(o->extra);
	o->extra = NULL;
	for (i = 0; i < (size_t)W.app->cfg->max_waits; i++)
		if (W.jobs[i] == j)
			W.jobs[i] = NULL;
	j->removed = true;
	queue_remove_locked(j);
	pthread_cond_broadcast(&W.done_cv);
	job_release_locked(j);
}

/* Finishes j from a thread that does not hold mu. */
static void
finish(struct job *j, const char *status, const char *verdict, const char *reason)
{
	struct outcome o;
	int r;

	pthread_mutex_lock(&W.mu);
	r = finish_locked(j, status, verdict, reason, &o);
	pthread_mutex_unlock(&W.mu);
	if (r < 0)
		return;
	outcome_write(&o);
	pthread_mutex_lock(&W.mu);
	finish_end_locked(j, &o);
	pthread_mutex_unlock(&W.mu);
}

/* ---- the ocr backend ---- */

static _Thread_local struct ocr *tls_ocr;   /* one engine per worker */

/* No model judges j: the passthrough backend decides alone. */
static bool
passthrough(bool use_ocr)
{
	return !use_ocr && W.vision != NULL && vision_is_passthrough(W.vision);
}

#define OCR_STRIP_OVERLAP 24

/* OCRs rectangle b of f (in strips that fit OCR_MAX_PIXELS at `scale`)
 * and says whether phrase is in it; `seen` gets an excerpt of the text. */
static int
ocr_rect(const struct xcap_frame *f, struct ocr_box b, int scale, const char *phrase,
    bool *found, char *seen, size_t seen_len, struct derr *e)
{
	int rows, y;

	if (b.w <= 0 || b.h <= 0)
		return 0;
	rows = OCR_MAX_PIXELS / (b.w * scale * scale);
	if (rows < 64) {
		scale = 1;
		rows = OCR_MAX_PIXELS / b.w;
	}
	for (y = b.y; y < b.y + b.h; y += rows - OCR_STRIP_OVERLAP) {
		int h = b.y + b.h - y < rows ? b.y + b.h - y : rows;
		char *text = NULL;

		if (ocr_text(tls_ocr, f->rgb, f->width, f->height, b.x, y, b.w, h, scale, &text, NULL, e) != 0)
			return -1;
		if (ocr_match(text, phrase))
			*found = true;
		if (seen[0] == '\0' || *found) {
			size_t i;

			snprintf(seen, seen_len, "%s", text);
			for (i = 0; seen[i] != '\0'; i++)
				if (seen[i] == '\n')
					seen[i] = ' ';
		}
		free(text);
		if (*found || y + h >= b.y + b.h)
			break;
	}
	return 0;
}

/* Where anything but the background is: the thumbnail against a flat one
 * of its most common grey. OCRing these boxes one by one (not the whole
 * screen) keeps each one's polarity (dark text on a light window, on a
 * dark desktop) for the OCR's binarisation. */
static int
content_boxes(struct job *j, struct ocr_box *boxes, int n)
{
	size_t hist[256] = { 0 }, i, np = j->npix;
	uint8_t *flat;
	int mode = 0, nb;

	for (i = 0; i < np; i++)
		hist[j->cur[i]]++;
	for (i = 1; i < 256; i++)
		if (hist[i] > hist[mode])
			mode = (int)i;
	flat = xmalloc(np);
	memset(flat, mode, np);
	nb = ocr_changed_boxes(flat, j->cur, j->thumb.width, j->thumb.height,
	    j->full.width, j->full.height, 8, boxes, n);
	free(flat);
	return nb;
}

/* The ocr backend's verdict on j's full-resolution frame: the regions that
 * changed since the last judged thumbnail (or everything, on the first
 * look and for "is gone" conditions, which need the whole screen). */
static int
ocr_judge(struct job *j, const char *criteria, struct vision_result *vr, struct derr *e)
{
	char phrase[OCR_MAX_PHRASE], seen[160] = "";
	struct ocr_box boxes[8];
	bool negate = false, found = false;
	int nb = 0, i;

	memset(vr, 0, sizeof *vr);
	if (!ocr_condition(criteria, phrase, sizeof phrase, &negate))
		return derr_set(e, DERR_INVALID, "wake_when", "not a text condition");
	if (tls_ocr == NULL && (tls_ocr = ocr_new("eng", e)) == NULL)
		return -1;
	if (j->ref != NULL && !negate)
		nb = ocr_changed_boxes(j->ref, j->cur, j->thumb.width, j->thumb.height,
		    j->full.width, j->full.height, 8, boxes, (int)ARRAY_LEN(boxes));
	if (nb <= 0 || (nb == 1 && boxes[0].w * boxes[0].h > j->full.width * j->full.height / 2))
		nb = content_boxes(j, boxes, (int)ARRAY_LEN(boxes));
	if (nb <= 0) {
		boxes[0] = (struct ocr_box){ 0, 0, j->full.width, j->full.height };
		nb = 1;
	}
	for (i = 0; i < nb && !found; i++)
		if (ocr_rect(&j->full, boxes[i], 2, phrase, &found, seen, sizeof seen, e) != 0)
			return -1;
	vr->parsed = true;
	vr->verdict = found != negate ? VISION_YES : VISION_NO;
	if (negate)
		snprintf(vr->reason, sizeof vr->reason, found ? "\"%s\" is still on the screen (OCR)" :
		    "\"%s\" is no longer on the screen (OCR)", phrase);
	else if (found)
		snprintf(vr->reason, sizeof vr->reason, "\"%s\" is on the screen (OCR read: %.120s)",
		    phrase, seen);
	else
		snprintf(vr->reason, sizeof vr->reason, "\"%s\" is not on the screen yet (OCR read: %.120s)",
		    phrase, seen[0] ? seen : "nothing");
	return 0;
}

#define TEXT_HOWTO "write text:\"Download complete\", text-gone:\"Saving...\", or quote the phrase " \
    "(wait until \"Build succeeded\" appears)"

/* The model backend can take a wait now: it has a key, and the last
 * health check (cached, never waited for) reached it. 0, or -1 with e
 * (DERR_UNAVAILABLE) naming the backend, its URL and the fix. */
static int
model_ready(struct derr *e)
{
	json_object *h, *v;
	bool unreachable = false;
	char url[200] = "", detail[300] = "";

	if (W.vision == NULL)
		return derr_set(e, DERR_UNAVAILABLE, "wake_when", "%s; or %s", W.model_err, TEXT_HOWTO);
	pthread_mutex_lock(&W.mu);
	h = W.health;
	if (h != NULL && json_object_object_get_ex(h, "reachable", &v) && !json_object_get_boolean(v)) {
		unreachable = true;
		snprintf(url, sizeof url, "%s", json_object_get_string(json_object_object_get(h, "url")));
		snprintf(detail, sizeof detail, "%s", json_object_get_string(json_object_object_get(h, "detail")));
	}
	pthread_mutex_unlock(&W.mu);
	if (!unreachable)
		return 0;
	return derr_set(e, DERR_UNAVAILABLE, "wake_when",
	    "this condition needs the vision model, and the %s backend at %s is not reachable (%.160s): "
	    "%s, or point detmd at one that runs (ACU_VISION_BACKEND, OLLAMA_URL, ACU_VLLM_URL...), "
	    "or %s", W.backend, url, detail,
	    strcmp(W.backend, "ollama") == 0 ? "start Ollama (ollama serve; ollama pull a vision model)" :
	    "start the server", TEXT_HOWTO);
}

/* Which judge takes criteria for a wait that asked `want` (auto | ocr |
 * model): *ocr, and why in why. 0, or -1 with e: DERR_INVALID for a
 * judge that cannot take the condition, DERR_UNAVAILABLE (ready = true
 * only) for a model that is not there. */
static int
judge_pick(const char *want, const char *criteria, bool ready, bool *ocr, char *why, size_t len,
    struct derr *e)
{
	char phrase[OCR_MAX_PHRASE];
	bool negate, text = ocr_condition(criteria, phrase, sizeof phrase, &negate);

	*ocr = false;
	if (strcmp(want, "ocr") == 0 || (strcmp(want, "auto") == 0 && W.ocr_mode)) {
		if (!text)
			return derr_set(e, DERR_INVALID, "wake_when", "%s judges visible text only: " TEXT_HOWTO,
			    W.ocr_mode ? "the ocr backend" : "judge \"ocr\"");
		if (!W.ocr_ok)
			return derr_set(e, DERR_UNAVAILABLE, "judge", "OCR is not available: %s", W.ocr_err);
		*ocr = true;
		snprintf(why, len, "%s: OCR reads %s\"%.120s\" in process, no model call",
		    W.ocr_mode ? "backend ocr" : strcmp(want, "ocr") == 0 ? "judge ocr asked" :
		    "a text condition", negate ? "that the screen no longer shows " : "", phrase);
		return 0;
	}
	if (strcmp(want, "auto") == 0 && text && W.ocr_ok) {
		*ocr = true;
		snprintf(why, len, "a text condition: OCR reads %s\"%.120s\" in process, no model call",
		    negate ? "that the screen no longer shows " : "", phrase);
		return 0;
	}
	if (ready && model_ready(e) != 0)
		return -1;
	if (strcmp(want, "model") == 0)
		snprintf(why, len, "judge model asked: the %s backend judges it", W.backend);
	else if (text)
		snprintf(why, len, "a text condition, but OCR is not available (%.100s): the %s backend "
		    "judges it", W.ocr_err, W.backend);
	else
		snprintf(why, len, "not a text condition: the %s backend judges the picture", W.backend);
	return 0;
}

/* After a judgement that did not end the wait: the counters reach the row,
 * so a restart resumes with them (model calls are rare; gate skips are
 * counted in memory and written with the next judgement or the end). */
static void
progress_write(struct job *j)
{
	struct store *st = W.app->store;
	struct derr e;
	sqlite3_stmt *s;
	char verdict[16], reason[512];
	int ev, sk;
	int64_t lf;
	long ti, to;
	char *extra;

	pthread_mutex_lock(&W.mu);
	extra = job_extra_locked(j);
	snprintf(verdict, sizeof verdict, "%s", j->verdict);
	snprintf(reason, sizeof reason, "%s", j->reason);
	ev = j->evaluations;
	sk = j->skipped;
	lf = j->last_frame_ms;
	ti = j->tokens_in;
	to = j->tokens_out;
	pthread_mutex_unlock(&W.mu);
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

/* ---- one tick ---- */

/* Grabs the target into f at max_width; resolves window:<name> each time
 * (windows come and go). 0, 1 (the window is not there), or -1. */
static int
grab(struct display_lease *l, const char *target, int max_width, struct xcap_frame *f,
    struct derr *e)
{
	struct xcap_req q = { .max_width = max_width };

	if (strncmp(target, "window:", 7) == 0) {
		const char *w = target + 7;
		char *end;
		unsigned long id = strtoul(w, &end, 0);
		struct xwin win;

		if (end != w && *end == '\0' && id != 0)
			q.window = id;
		else if (xwin_find(l->d, w, &win, e) == 0)
			q.window = win.id;
		else
			return e->code == DERR_NOT_FOUND ? 1 : -1;
	}
	if (xcap_grab(l->cap, &q, f, e) != 0)
		return e->code == DERR_NOT_FOUND && q.window != 0 ? 1 : -1;
	return 0;
}

static int64_t
backoff(int fails)
{
	return fails >= 5 ? BACKOFF_MAX_US : (int64_t)1000000 << fails;
}

/* The next check, given what this tick saw. */
static int64_t
next_interval(struct job *j, int64_t now, bool partial)
{
	int64_t still = now - j->last_change_us;

	if (partial)
		return PARTIAL_US;
	if (still < CHANGE_WINDOW_US)
		return j->poll_s > 0 ? (int64_t)(j->poll_s * 1e6) : CHANGING_US;
	if (j->peek_live)
		return STATIC_DAMAGE_US;        /* drawing wakes it at once */
	return still > 60000000 ? STATIC_LONG_US : STATIC_US;
}

/* Asks the health thread for a fresh check (a model call just failed). */
static void
health_kick(void)
{
	pthread_mutex_lock(&W.mu);
	W.health_kick = true;
	pthread_cond_signal(&W.health_cv);
	pthread_mutex_unlock(&W.mu);
}

/* Records a judgement in j: counters, verdict, what woke it, the model's
 * summary and evidence. A YES whose confidence is under
 * ACU_WAIT_MIN_CONFIDENCE becomes PARTIAL. */
static void
judged(struct job *j, struct vision_result *vr, bool use_ocr, const char *cause)
{
	if (!use_ocr && vr->structured && vr->verdict == VISION_YES && vr->confidence >= 0 &&
	    vr->confidence < W.min_conf) {
		size_t n = strlen(vr->reason);

		vr->verdict = VISION_PARTIAL;
		snprintf(vr->reason + n, sizeof vr->reason - n, " (resolved, but confidence %.2f is under "
		    "ACU_WAIT_MIN_CONFIDENCE %.2f)", vr->confidence, W.min_conf);
	}
	pthread_mutex_lock(&W.mu);
	j->evaluations++;
	j->last_frame_ms = now_ms();
	j->tokens_in += vr->tokens_in;
	j->tokens_out += vr->tokens_out;
	snprintf(j->verdict, sizeof j->verdict, "%s", vision_verdict_name(vr->verdict));
	snprintf(j->reason, sizeof j->reason, "%.500s", vr->reason);
	j->woken_by = cause;
	j->confidence = use_ocr ? -1 : vr->confidence;
	memcpy(j->summary, use_ocr ? "" : vr->summary, use_ocr ? 1 : sizeof j->summary);
	memcpy(j->evidence, use_ocr ? "" : vr->evidence, use_ocr ? 1 : sizeof j->evidence);
	pthread_mutex_unlock(&W.mu);
}

/* Runs one tick of j (a worker owns it). Returns the interval to the next
 * tick, or -1 when j finished. */
static int64_t
tick(struct job *j)
{
	const struct config *cfg = W.app->cfg;
	struct display_lease l;
	struct derr e = { 0 };
	struct vision_result vr;
	struct vision_image img[2];
	struct xcap_image jpeg = { 0 };
	char *criteria, reason[600];
	int64_t now = mono_us(), next = -1;
	size_t nimg = 0, npix;
	bool changed_ref, eval, force, use_ocr, pass, held;
	const char *cause;
	int r;

	pthread_mutex_lock(&W.mu);
	criteria = xstrdup(j->criteria);
	force = j->force;
	j->force = false;
	use_ocr = j->use_ocr;
	cause = j->wake != NULL ? j->wake : "poll";
	j->wake = NULL;
	j->peek_live = j->sched_valid;
	pthread_mutex_unlock(&W.mu);
	pass = passthrough(use_ocr);

	if (desktop_lease(W.app, j->task_id[0] ? j->task_id : NULL, &l, &e) != 0) {
		if (++j->fails >= W.app->cfg->wait_max_fails) {
			snprintf(reason, sizeof reason, "cannot watch the display: %.500s", e.message);
			finish(j, "failed", NULL, reason);
			goto out;
		}
		next = backoff(j->fails);
		goto out;
	}
	/* XDamage says nothing was drawn since the last grab: the frame
	 * is the one we have; no grab, no model call (unless it is time
	 * for the forced re-evaluation). */
	if (l.damage && j->damage_valid && l.damage_seq == j->damage_seen && j->ref != NULL &&
	    !force && (pass || (j->judged_valid && l.damage_seq == j->damage_judged) ||
	    now - j->last_eval_us < cfg->wait_rejudge_s * 1000000LL)) {
		display_unlease(&l);
		pthread_mutex_lock(&W.mu);
		j->skipped++;
		j->model_saved += !pass && !use_ocr;
		pthread_mutex_unlock(&W.mu);
		if (pass && j->changed_once &&
		    now - j->last_change_us >= cfg->settle_s * 1000000LL) {
			snprintf(reason, sizeof reason, "the screen changed and then stayed still for %ld s "
			    "(passthrough: look for yourself)", cfg->settle_s);
			finish(j, "resolved", "CHANGED", reason);
			goto out;
		}
		next = pass ? 1000000 : next_interval(j, now, false);
		goto out;
	}
	j->damage_seen = l.damage_seq;
	j->damage_valid = l.damage;
	r = grab(&l, j->target, (int)cfg->diff_width, &j->thumb, &e);
	if (r != 0) {
		display_unlease(&l);
		if (r < 0 && ++j->fails >= W.app->cfg->wait_max_fails) {
			snprintf(reason, sizeof reason, "cannot capture %.64s: %.400s", j->target, e.message);
			finish(j, "failed", NULL, reason);
			goto out;
		}
		pthread_mutex_lock(&W.mu);
		j->skipped++;
		snprintf(j->reason, sizeof j->reason, "%.500s", r > 0 ? "the window is not there (yet)" : e.message);
		pthread_mutex_unlock(&W.mu);
		next = MISSING_US;
		goto out;
	}
	npix = (size_t)j->thumb.width * (size_t)j->thumb.height;
	if (npix != j->npix) {  /* first tick, or the target changed size */
		free(j->ref);
		free(j->cur);
		free(j->prev);
		j->ref = j->prev = NULL;
		j->cur = xmalloc(npix);
		j->npix = npix;
		j->last_change_us = now;
	}
	gate_grey(&j->thumb, j->cur);
	changed_ref = j->ref == NULL ||
	    gate_diff(j->ref, j->cur, npix, GATE_PIXEL_THRESHOLD) > GATE_CHANGED_FRACTION;

	if (pass) {
		/* No model: resolve once the screen has changed since the wait
		 * began and then stayed still for the settle period. */
		display_unlease(&l);
		if (j->ref == NULL) {
			j->ref = xmalloc(npix);
			j->prev = xmalloc(npix);
			memcpy(j->ref, j->cur, npix);
		} else {
			if (gate_diff(j->prev, j->cur, npix, GATE_PIXEL_THRESHOLD) > GATE_CHANGED_FRACTION)
				j->last_change_us = now;        /* still moving */
			if (changed_ref)
				j->changed_once = true;
		}
		memcpy(j->prev, j->cur, npix);
		pthread_mutex_lock(&W.mu);
		j->evaluations++;
		j->last_frame_ms = now_ms();
		pthread_mutex_unlock(&W.mu);
		if (j->changed_once && now - j->last_change_us >= cfg->settle_s * 1000000LL) {
			snprintf(reason, sizeof reason, "the screen changed and then stayed still for %ld s "
			    "(passthrough: look for yourself)", cfg->settle_s);
			finish(j, "resolved", "CHANGED", reason);
			goto out;
		}
		next = 1000000;
		goto out;
	}

	if (changed_ref)
		j->last_change_us = now;
	eval = force || j->ref == NULL || changed_ref ||
	    now - j->last_eval_us >= cfg->wait_rejudge_s * 1000000LL;
	/* usage.h: the task's model calls; over its budget the wait watches without judging */
	held = eval && !use_ocr && usage_scope(j->task_id, "wait", &e) != 0;
	if (!eval || held) {
		display_unlease(&l);
		pthread_mutex_lock(&W.mu);
		j->skipped++;
		j->model_saved += !held && !use_ocr;
		j->last_frame_ms = now_ms();
		pthread_mutex_unlock(&W.mu);
		next = next_interval(j, now, false);
		goto out;
	}
	/* The frame to judge: full resolution for OCR, <= frame_max_dim
	 * for a model. */
	r = grab(&l, j->target, use_ocr ? 0 : (int)cfg->frame_max_dim, &j->full, &e);
	display_unlease(&l);
	if (r != 0 || (!use_ocr && xcap_encode(&j->full, XCAP_JPEG, (int)cfg->frame_quality, &jpeg, &e) != 0)) {
		next = MISSING_US;
		goto out;
	}
	if (j->prev_jpeg != NULL) {
		img[nimg].jpeg = j->prev_jpeg;
		img[nimg++].len = j->prev_len;
	}
	img[nimg].jpeg = jpeg.data;
	img[nimg++].len = jpeg.len;
	/* The judgement: no lock, no lease. */
	if ((use_ocr ? ocr_judge(j, criteria, &vr, &e) :
	    vision_eval_at(W.vision, criteria, (double)(now_ms() - j->created_ms) / 1e3, img, nimg,
	    &vr, &e)) != 0) {
		if (++j->fails >= W.app->cfg->wait_max_fails) {
			snprintf(reason, sizeof reason, "the %s backend failed %d times: %.400s",
			    use_ocr ? "ocr" : W.backend, j->fails, e.message);
			finish(j, "failed", "ERROR", reason);
			goto out;
		}
		log_warn("wait %s: evaluation failed (%d): %s", j->id, j->fails, e.message);
		if (!use_ocr && e.code == DERR_UNAVAILABLE)
			health_kick();
		next = backoff(j->fails);
		goto out;
	}
	j->fails = 0;
	j->last_eval_us = now;
	j->damage_judged = j->damage_seen;
	j->judged_valid = j->damage_valid;
	if (j->ref == NULL)
		j->ref = xmalloc(npix);
	memcpy(j->ref, j->cur, npix);
	if (jpeg.data != NULL) {
		free(j->prev_jpeg);
		j->prev_jpeg = jpeg.data;
		j->prev_len = jpeg.len;
		jpeg.data = NULL;
	}
	judged(j, &vr, use_ocr, cause);
	if (vr.verdict == VISION_YES) {
		finish(j, "resolved", "YES", vr.reason);
		goto out;
	}
	progress_write(j);
	next = next_interval(j, now, vr.verdict == VISION_PARTIAL);
out:
	xcap_image_free(&jpeg);
	free(criteria);
	return next;
}

/* ---- threads ---- */

static void *
worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&W.mu);
	for (;;) {
		struct job *j;
		int64_t next;

		while (!W.stopping && W.qlen == 0)
			pthread_cond_wait(&W.work_cv, &W.mu);
		if (W.stopping)
			break;
		j = W.queue[W.qhead];
		W.qhead = (W.qhead + 1) % (size_t)W.app->cfg->max_waits;
		W.qlen--;
		j->queued = false;
		if (j->done) {
			job_release_locked(j);
			continue;
		}
		j->running = true;
		pthread_mutex_unlock(&W.mu);
		next = tick(j);
		pthread_mutex_lock(&W.mu);
		j->running = false;
		if (j->done) {
			job_release_locked(j);  /* else its finisher frees it */
			continue;
		}
		j->next_us = mono_us() + (next > 0 ? next : CHANGING_US);
		pthread_cond_signal(&W.sched_cv);
	}
	pthread_mutex_unlock(&W.mu);
	ocr_free(tls_ocr);
	tls_ocr = NULL;
	return NULL;
}

static void
health_refresh(void)
{
	json_object *h;

	if (W.ocr_mode) {
		h = json_object_new_object();
		jx_add_str(h, "backend", "ocr");
		json_object_object_add(h, "ok", json_object_new_boolean(1));
		jx_add_str(h, "model", "tesseract eng");
		jx_add_str(h, "detail", "in process; judges text conditions only");
	} else if (W.vision == NULL) {
		h = json_object_new_object();
		jx_add_str(h, "backend", W.backend);
		json_object_object_add(h, "ok", json_object_new_boolean(0));
		json_object_object_add(h, "reachable", json_object_new_boolean(0));
		jx_add_str(h, "detail", W.model_err);
	} else
		h = vision_health(W.vision);
	jx_add_time(h, "checked_at", now_ms());

	pthread_mutex_lock(&W.mu);
	json_object_put(W.health);
	W.health = h;
	W.health_at_us = mono_us();
	pthread_mutex_unlock(&W.mu);
}

/* The backend health check, off every request's path: at start, every
 * minute (every 10 s while the model is unreachable), and when a model
 * call failed. */
static void *
health_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&W.mu);
	while (!W.stopping) {
		json_object *v;
		bool down;
		struct timespec ts;

		W.health_kick = false;
		pthread_mutex_unlock(&W.mu);
		health_refresh();
		pthread_mutex_lock(&W.mu);
		down = W.health != NULL && json_object_object_get_ex(W.health, "reachable", &v) &&
		    !json_object_get_boolean(v);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (down ? HEALTH_RETRY_US : HEALTH_EVERY_US) / 1000000;
		while (!W.stopping && !W.health_kick)
			if (pthread_cond_timedwait(&W.health_cv, &W.mu, &ts) == ETIMEDOUT)
				break;
	}
	pthread_mutex_unlock(&W.mu);
	return NULL;
}

/* mu held (dropped while peeking), from the scheduler: reads the XDamage
 * counter of every watched display and turns drawing into due ticks: once
 * a peek sees no new drawing, or DAMAGE_MAX_US into a run of it. */
static void
damage_scan_locked(int64_t now)
{
	size_t max = (size_t)W.app->cfg->max_waits, n = 0, i, k;
	uint64_t *seq = W.peek_seq;     /* allocated once at start: this runs every 100 ms */
	bool *ok = W.peek_ok;

	W.peek_at_us = now;
	for (i = 0; i < max; i++) {
		struct job *j = W.jobs[i];

		if (j == NULL || j->done)
			continue;
		for (k = 0; k < n && strcmp(W.peek_ids[k], j->task_id) != 0; k++)
			;
		if (k == n)
			memcpy(W.peek_ids[n++], j->task_id, ID_LEN);
	}
	pthread_mutex_unlock(&W.mu);
	for (k = 0; k < n; k++)
		ok[k] = display_damage_peek(W.peek_ids[k], &seq[k]) == 1;
	pthread_mutex_lock(&W.mu);
	for (i = 0; i < max; i++) {
		struct job *j = W.jobs[i];

		if (j == NULL || j->done)
			continue;
		for (k = 0; k < n && strcmp(W.peek_ids[k], j->task_id) != 0; k++)
			;
		if (k < n && ok[k]) {
			if (!j->sched_valid) {
				j->sched_valid = true;
				j->sched_seq = seq[k];
			} else if (seq[k] != j->sched_seq) {
				j->sched_seq = seq[k];
				if (j->dmg_first_us == 0)
					j->dmg_first_us = now;
				j->dmg_last_us = now;
			}
		}
		if (j->dmg_first_us != 0 && !j->queued && !j->running &&
		    (j->dmg_last_us != now || now - j->dmg_first_us >= DAMAGE_MAX_US)) {
			j->dmg_first_us = 0;
			j->next_us = now;
			j->wake = "damage";
			j->wake_damage++;
		}
	}
}

static void *
sched_main(void *arg)
{
	struct job *expired[64];
	size_t nexp, i;

	(void)arg;
	pthread_mutex_lock(&W.mu);
	while (!W.stopping) {
		int64_t now = mono_us(), wall = now_ms(), wake = now + 1000000;
		struct timespec ts;
		bool any = false;

		nexp = 0;
		for (i = 0; i < (size_t)W.app->cfg->max_waits && !any; i++)
			any = W.jobs[i] != NULL && !W.jobs[i]->done;
		if (any && now - W.peek_at_us >= DAMAGE_PEEK_US) {
			damage_scan_locked(now);
			continue;
		}
		if (any)
			wake = W.peek_at_us + DAMAGE_PEEK_US;
		for (i = 0; i < (size_t)W.app->cfg->max_waits; i++) {
			struct job *j = W.jobs[i];

			if (j == NULL || j->done || j->queued || j->running)
				continue;
			if (wall >= j->deadline_ms) {
				if (nexp < ARRAY_LEN(expired))
					expired[nexp++] = j;
				continue;
			}
			if (j->next_us <= now) {
				if (j->wake == NULL) {
					j->wake = "poll";
					j->wake_poll++;
				}
				j->queued = true;
				W.queue[(W.qhead + W.qlen) % (size_t)W.app->cfg->max_waits] = j;
				W.qlen++;
				pthread_cond_signal(&W.work_cv);
				continue;
			}
			if (j->next_us < wake)
				wake = j->next_us;
			if (now + (j->deadline_ms - wall) * 1000 < wake)
				wake = now + (j->deadline_ms - wall) * 1000;
		}
		for (i = 0; i < nexp; i++) {
			struct outcome o;
			int r;
			char reason[64];

			snprintf(reason, sizeof reason, "no match within %d s", expired[i]->timeout_s);
			r = finish_locked(expired[i], "timed_out", "TIMEOUT", reason, &o);
			if (r < 0)
				continue;
			pthread_mutex_unlock(&W.mu);
			outcome_write(&o);
			pthread_mutex_lock(&W.mu);
			finish_end_locked(expired[i], &o);
		}
		if (nexp > 0)
			continue;
		wake -= now;
		if (wake < 1000)
			wake = 1000;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(wake / 1000000);
		ts.tv_nsec += (long)(wake % 1000000) * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&W.sched_cv, &W.mu, &ts);
	}
	pthread_mutex_unlock(&W.mu);
	return NULL;
}

/* ---- jobs from rows ---- */

/* mu held: put j in a free slot; -1 when full. */
static int
slot_put(struct job *j)
{
	size_t i;

	for (i = 0; i < (size_t)W.app->cfg->max_waits; i++)
		if (W.jobs[i] == NULL) {
			W.jobs[i] = j;
			pthread_cond_signal(&W.sched_cv);
			return 0;
		}
	return -1;
}

static struct job *
job_new(const char *id, const char *task_id, const char *target, const char *criteria,
    int timeout_s, double poll_s, int64_t created, int64_t deadline, const char *action_id)
{
	struct job *j = xcalloc(1, sizeof *j);

	snprintf(j->id, sizeof j->id, "%s", id);
	snprintf(j->task_id, sizeof j->task_id, "%s", task_id ? task_id : "");
	snprintf(j->action_id, sizeof j->action_id, "%s", action_id ? action_id : "");
	snprintf(j->target, sizeof j->target, "%s", target);
	j->criteria = xstrdup(criteria);
	j->timeout_s = timeout_s;
	j->poll_s = poll_s;
	j->created_ms = created;
	j->deadline_ms = deadline;
	j->started_us = j->last_change_us = mono_us();
	j->next_us = 0;
	j->wake = "start";
	j->confidence = -1;
	snprintf(j->judge, sizeof j->judge, "auto");
	return j;
}

/* Waits an earlier detmd left watching: resume, or time out. */
static void
resume_rows(void)
{
	struct store *st = W.app->store;
	struct job *list[1024];
	size_t n = 0, i;
	sqlite3_stmt *s;
	int64_t now = now_ms();

	store_lock(st);
	s = store_stmt(st, SQL_WATCHING);
	while (s != NULL && n < ARRAY_LEN(list) && sqlite3_step(s) == SQLITE_ROW) {
		struct job *j = job_new(col_text(s, 0), col_text(s, 1), col_text(s, 2), col_text(s, 3),
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
		if (judge_pick(j->judge, j->criteria, false, &j->use_ocr, j->judge_why,
		    sizeof j->judge_why, &e) != 0)
			snprintf(j->judge_why, sizeof j->judge_why, "%.200s", e.message);
		pthread_mutex_lock(&W.mu);
		keep = j->deadline_ms > now && slot_put(j) == 0;
		pthread_mutex_unlock(&W.mu);
		if (keep) {
			log_info("wait %s resumes watching (%s)", j->id, j->target);
			continue;
		}
		pthread_mutex_lock(&W.mu);
		(void)slot_put(j);
		pthread_mutex_unlock(&W.mu);
		finish(j, "timed_out", "TIMEOUT", j->deadline_ms <= now ?
		    "the deadline passed while detmd was not running" : "too many waits to resume");
	}
}

/* ---- API ---- */

static void
on_task_change(const char *task_id, int from, int to, void *arg)
{
	(void)from;
	(void)arg;
	if (to == TASK_HOOK_DELETED)
		waits_task_ended(task_id, "the task was deleted");
	else if (task_status_final(to)) {
		char why[64];

		snprintf(why, sizeof why, "the task is %s", task_status_name(to));
		waits_task_ended(task_id, why);
	}
}

/* ACU_WAIT_MIN_CONFIDENCE: 0..1 (or a percentage 1..100). */
static int
min_conf_parse(const char *s, double *out, struct derr *e)
{
	char *end;
	double v = s != NULL && s[0] != '\0' ? strtod(s, &end) : 0.5;

	if (s != NULL && s[0] != '\0' && (*end != '\0' || !(v >= 0 && v <= 100)))
		return derr_set(e, DERR_INVALID, "wait_min_confidence",
		    "ACU_WAIT_MIN_CONFIDENCE must be a number 0..1 (got '%.32s')", s);
	*out = v > 1 ? v / 100 : v;
	return 0;
}

/* Whether tesseract loads here (W.ocr_ok); only the ocr backend needs it. */
static int
ocr_probe(struct derr *e)
{
	struct ocr *probe = ocr_new("eng", e);

	W.ocr_ok = probe != NULL;
	ocr_free(probe);
	if (W.ocr_ok)
		return 0;
	snprintf(W.ocr_err, sizeof W.ocr_err, "%.200s", e->message);
	if (strcmp(W.app->cfg->vision_backend, "ocr") == 0)
		return -1;
	log_warn("smart waits: no OCR (%s): text conditions go to the model too", e->message);
	return 0;
}

/* The startup line `make run` shows: which judge takes which conditions. */
static void
log_judges(void)
{
	const char *text = W.ocr_ok ? "OCR in process (tesseract eng, no model call)" : W.backend;
	char model[400];

	if (W.vision != NULL && vision_is_passthrough(W.vision))
		snprintf(model, sizeof model, "passthrough (no model: resolves once the screen changed "
		    "and settled)");
	else if (W.vision != NULL)
		snprintf(model, sizeof model, "the %s model %s", W.backend, vision_model(W.vision));
	else
		snprintf(model, sizeof model, "refused (%.300s)", W.model_err);
	char line[1024];

	snprintf(line, sizeof line, "smart waits: %zu workers; text conditions (text:\"...\", "
	    "text-gone:\"...\", a quoted phrase) -> %s; other conditions -> %s; a wait may ask "
	    "judge ocr|model|auto", W.nworkers, text, model);
	log_info("%s", line);
	fprintf(stderr, "detmd: %s\n", line);   /* what `make run` shows at start */
}

int
waits_start(struct app *app, struct derr *e)
{
	const struct config *c = app->cfg;
	struct vision_settings vs = {
		.backend = c->vision_backend, .ollama_url = c->ollama_url,
		.ollama_model = c->vision_model, .ollama_keep_alive = c->ollama_keep_alive,
		.vllm_url = c->vllm_url, .vllm_model = c->vllm_model, .vllm_api_key = c->vllm_api_key,
		.claude_url = c->claude_url, .claude_model = c->claude_model,
		.anthropic_api_key = c->anthropic_api_key, .openrouter_url = c->openrouter_url,
		.openrouter_model = c->openrouter_model, .openrouter_api_key = c->openrouter_api_key,
		.timeout_ms = c->vision_timeout_ms,
	};
	size_t i;

	W.app = app;
	if (min_conf_parse(c->wait_min_conf, &W.min_conf, e) != 0)
		return -1;
	if (ocr_probe(e) != 0)
		return -1;
	if (strcmp(c->vision_backend, "ocr") == 0) {
		W.ocr_mode = true;
		snprintf(W.backend, sizeof W.backend, "ocr");
		snprintf(W.model_err, sizeof W.model_err, "no vision model: ACU_VISION_BACKEND is ocr");
	} else if ((W.vision = vision_new(&vs, e)) != NULL) {
		snprintf(W.backend, sizeof W.backend, "%s", vision_backend(W.vision));
	} else if (e->code == DERR_INVALID && strstr(e->field, "api_key") != NULL) {
		/* No key: text conditions still work; a model wait says why not. */
		snprintf(W.backend, sizeof W.backend, "%s", c->vision_backend);
		snprintf(W.model_err, sizeof W.model_err, "this condition needs the vision model: %.300s",
		    e->message);
		log_warn("smart waits: %s", e->message);
	} else
		return -1;
	W.jobs = xcalloc((size_t)c->max_waits, sizeof *W.jobs);
	W.peek_ids = xcalloc((size_t)c->max_waits, sizeof *W.peek_ids);
	W.peek_seq = xcalloc((size_t)c->max_waits, sizeof *W.peek_seq);
	W.peek_ok = xcalloc((size_t)c->max_waits, sizeof *W.peek_ok);
	W.queue = xcalloc((size_t)c->max_waits, sizeof *W.queue);
	pthread_mutex_lock(&W.mu);
	W.started = true;
	pthread_mutex_unlock(&W.mu);
	resume_rows();
	task_hook_add(on_task_change, NULL);
	W.nworkers = (size_t)c->wait_workers;
	W.workers = xcalloc(W.nworkers, sizeof *W.workers);
	for (i = 0; i < W.nworkers; i++)
		if (pthread_create(&W.workers[i], NULL, worker_main, NULL) != 0)
			return derr_set(e, DERR_INTERNAL, NULL, "cannot start wait workers");
	if (pthread_create(&W.sched, NULL, sched_main, NULL) != 0)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot start the wait scheduler");
	if (pthread_create(&W.health_thread, NULL, health_main, NULL) != 0)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot start the wait health check");
	log_judges();
	return 0;
}

void
waits_stop(void)
{
	size_t i;

	pthread_mutex_lock(&W.mu);
	if (!W.started || W.stopping) {
		pthread_mutex_unlock(&W.mu);
		return;
	}
	W.stopping = true;
	pthread_cond_broadcast(&W.sched_cv);
	pthread_cond_broadcast(&W.work_cv);
	pthread_cond_broadcast(&W.done_cv);
	pthread_cond_broadcast(&W.health_cv);
	pthread_mutex_unlock(&W.mu);
	pthread_join(W.sched, NULL);
	pthread_join(W.health_thread, NULL);
	for (i = 0; i < W.nworkers; i++)
		pthread_join(W.workers[i], NULL);
	pthread_mutex_lock(&W.mu);
	/* Jobs left in the queue: removed ones die here, the rest below. */
	for (; W.qlen > 0; W.qlen--) {
		struct job *q = W.queue[W.qhead];

		W.qhead = (W.qhead + 1) % (size_t)W.app->cfg->max_waits;
		q->queued = false;
		job_release_locked(q);
	}
	for (i = 0; i < (size_t)W.app->cfg->max_waits; i++) {
		/* A done job still in the table belongs to its finisher. */
		if (W.jobs[i] != NULL && !W.jobs[i]->done)
			job_free(W.jobs[i]);
		W.jobs[i] = NULL;
	}
	json_object_put(W.health);
	W.health = NULL;
	pthread_mutex_unlock(&W.mu);
	free(W.workers);
	free(W.peek_ids);
	W.peek_ids = NULL;
	free(W.peek_seq);
	W.peek_seq = NULL;
	free(W.peek_ok);
	W.peek_ok = NULL;
	vision_free(W.vision);
	W.vision = NULL;
}

/* mu held. */
static int
check_running(struct derr *e)
{
	if (!W.started || W.stopping)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "the wait engine is %s",
		    W.stopping ? "shutting down" : "not running");
	return 0;
}

json_object *
waits_create(const struct wait_new *w, struct derr *e)
{
	struct store *st = W.app->store;
	char id[ID_LEN], action_id[ID_LEN] = "";
	int64_t now = now_ms(), deadline = now + (int64_t)w->timeout_s * 1000;
	const char *want = w->judge != NULL ? w->judge : "auto";
	char why[sizeof ((struct job *)0)->judge_why];
	struct job *j;
	sqlite3_stmt *s;
	bool use_ocr;
	int rc;

	if (strcmp(want, "auto") != 0 && strcmp(want, "ocr") != 0 && strcmp(want, "model") != 0)
		return derr_set(e, DERR_INVALID, "judge", "judge must be auto, ocr or model (got '%.16s')",
		    want), NULL;
	if (!W.started)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "the wait engine is not running"), NULL;
	if (strcmp(w->target, "screen") != 0 &&
	    (strncmp(w->target, "window:", 7) != 0 || w->target[7] == '\0'))
		return derr_set(e, DERR_INVALID, "target",
		    "target must be 'screen' or 'window:<title or id>' (got '%.64s')", w->target), NULL;
	if (w->task_id != NULL) {
		int status;
		json_object *meta;

		if (task_meta(st, w->task_id, &status, &meta, e) != 0)
			return NULL;
		json_object_put(meta);
		if (task_status_final(status))
			return derr_set(e, DERR_CONFLICT, "task_id", "task %s is %s; waits are for live tasks",
			    w->task_id, task_status_name(status)), NULL;
	}
	/* After the input checks: a 400/404 says more than "no model". */
	if (judge_pick(want, w->criteria, true, &use_ocr, why, sizeof why, e) != 0)
		return NULL;
	pthread_mutex_lock(&W.mu);
	rc = check_running(e);
	if (rc == 0) {
		size_t i, used = 0;

		for (i = 0; i < (size_t)W.app->cfg->max_waits; i++)
			used += W.jobs[i] != NULL;
		if (used >= (size_t)W.app->cfg->max_waits)
			rc = derr_set(e, DERR_UNAVAILABLE, NULL, "%zu waits are watching already "
			    "(ACU_MAX_WAITS); cancel some first", used);
	}
	pthread_mutex_unlock(&W.mu);
	if (rc != 0)
		return NULL;
	if (w->task_id != NULL) {
		struct action_new a = { .type = "wait", .status = "started", .duration_ms = -1 };
		json_object *in = json_object_new_object();
		char summary[300];
		int64_t ord;

		snprintf(summary, sizeof summary, "smart_wait: %.200s", w->criteria);
		jx_add_str(in, "target", w->target);
		jx_add_str(in, "criteria", w->criteria);
		json_object_object_add(in, "timeout", json_object_new_int(w->timeout_s));
		a.summary = summary;
		a.input_json = jx_string(in, NULL);
		rc = task_action_add(st, w->task_id, &a, action_id, &ord, e);
		json_object_put(in);
		if (rc != 0)
			return NULL;
	}
	id_new(id);
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
		sqlite3_bind_text(s, 10, use_ocr ? "ocr" : W.backend, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 11, want, -1, SQLITE_STATIC);
		sqlite3_bind_null(s, 12);
	}
	rc = store_exec(st, s, "wait insert", e);
	store_unlock(st);
	if (rc != 0)
		return NULL;
	j = job_new(id, w->task_id, w->target, w->criteria, w->timeout_s, w->poll_s, now, deadline,
	    action_id);
	snprintf(j->judge, sizeof j->judge, "%s", want);
	j->use_ocr = use_ocr;
	snprintf(j->judge_why, sizeof j->judge_why, "%s", why);
	pthread_mutex_lock(&W.mu);
	rc = W.stopping ? -1 : slot_put(j);
	pthread_mutex_unlock(&W.mu);
	if (rc != 0) {
		finish(j, "failed", "ERROR", "the wait engine is full or stopping");
		return derr_set(e, DERR_UNAVAILABLE, NULL, "the wait engine is full or stopping"), NULL;
	}
	log_info("wait %s: %s on %s (timeout %d s, task %s; judge %s: %s)", id, w->criteria, w->target,
	    w->timeout_s, w->task_id ? w->task_id : "-", use_ocr ? "ocr" : "model", why);
	events_publish("wait", "created", w->task_id, id);
	return row_get(id, e);
}

json_object *
waits_get(const char *id, int block_s, struct derr *e)
{
	if (block_s > 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += block_s;
		pthread_mutex_lock(&W.mu);
		while (!W.stopping && W.started) {
			if (job_find(id) == NULL)
				break;  /* finished and written (or never watching) */
			if (pthread_cond_timedwait(&W.done_cv, &W.mu, &ts) == ETIMEDOUT)
				break;
		}
		pthread_mutex_unlock(&W.mu);
	}
	return row_get(id, e);
}

json_object *
waits_list(const char *task_id, const char *status, int limit, struct derr *e)
{
	struct store *st = W.app->store;
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

json_object *
waits_update(const char *id, const char *criteria, int timeout_s, const char *note,
    struct derr *e)
{
	struct store *st = W.app->store;
	char *crit = NULL, *nt = NULL, want[8] = "auto", why[sizeof ((struct job *)0)->judge_why] = "";
	const char *backend = NULL;
	int64_t deadline = 0;
	int tmo = 0, rc;
	struct job *j;
	sqlite3_stmt *s;
	bool use_ocr = false;

	pthread_mutex_lock(&W.mu);
	j = W.started ? job_find(id) : NULL;
	if (j != NULL)
		memcpy(want, j->judge, sizeof want);
	pthread_mutex_unlock(&W.mu);
	if (criteria != NULL && judge_pick(want, criteria, true, &use_ocr, why, sizeof why, e) != 0)
		return NULL;
	pthread_mutex_lock(&W.mu);
	rc = check_running(e);
	j = rc == 0 ? job_find(id) : NULL;
	if (rc == 0 && j == NULL) {
		pthread_mutex_unlock(&W.mu);
		json_object *row = row_get(id, e);

		if (row == NULL)
			return NULL;
		derr_set(e, DERR_CONFLICT, "wait_id", "wait %s is %s; only a watching wait can change",
		    id, json_object_get_string(json_object_object_get(row, "status")));
		json_object_put(row);
		return NULL;
	}
	if (rc == 0) {
		if (criteria != NULL) {
			free(j->criteria);
			j->criteria = xstrdup(criteria);
			j->force = true;        /* judge the new condition at once */
			j->next_us = 0;
			j->wake = "update";
			j->use_ocr = use_ocr;
			snprintf(j->judge_why, sizeof j->judge_why, "%s", why);
		}
		if (timeout_s > 0) {
			j->timeout_s = timeout_s;
			j->deadline_ms = now_ms() + (int64_t)timeout_s * 1000;
		}
		if (note != NULL) {
			free(j->note);
			j->note = xstrdup(note);
		}
		crit = xstrdup(j->criteria);
		nt = j->note ? xstrdup(j->note) : NULL;
		tmo = j->timeout_s;
		deadline = j->deadline_ms;
		backend = j->use_ocr ? "ocr" : W.backend;
		pthread_cond_signal(&W.sched_cv);
	}
	pthread_mutex_unlock(&W.mu);
	if (rc != 0)
		return NULL;
	store_lock(st);
	s = store_stmt(st, SQL_UPDATE);
	if (s != NULL) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, crit, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 3, tmo);
		sqlite3_bind_int64(s, 4, deadline);
		bind_text_or_null(s, 5, nt);
		sqlite3_bind_text(s, 6, backend ? backend : W.backend, -1, SQLITE_STATIC);
	}
	rc = store_exec(st, s, "wait update", e);
	store_unlock(st);
	free(crit);
	free(nt);
	if (rc != 0)
		return NULL;
	if (note != NULL)
		log_info("wait %s note: %s", id, note);
	return row_get(id, e);
}

json_object *
waits_cancel(const char *id, const char *reason, struct derr *e)
{
	struct job *j;
	struct outcome o;
	int r = -1;

	pthread_mutex_lock(&W.mu);
	j = W.started ? job_find(id) : NULL;
	if (j != NULL)
		r = finish_locked(j, "cancelled", "CANCELLED", reason ? reason : "cancelled by the agent", &o);
	pthread_mutex_unlock(&W.mu);
	if (r >= 0) {
		outcome_write(&o);
		pthread_mutex_lock(&W.mu);
		finish_end_locked(j, &o);
		pthread_mutex_unlock(&W.mu);
	}
	return row_get(id, e);
}

void
waits_task_ended(const char *task_id, const char *why)
{
	for (;;) {
		struct job *j = NULL;
		struct outcome o;
		size_t i;
		int r = -1;

		pthread_mutex_lock(&W.mu);
		for (i = 0; W.started && i < (size_t)W.app->cfg->max_waits && j == NULL; i++)
			if (W.jobs[i] != NULL && strcmp(W.jobs[i]->task_id, task_id) == 0)
				j = W.jobs[i];
		if (j != NULL)
			r = finish_locked(j, "cancelled", "CANCELLED", why, &o);
		pthread_mutex_unlock(&W.mu);
		if (j == NULL)
			return;
		if (r >= 0) {
			outcome_write(&o);
			pthread_mutex_lock(&W.mu);
			finish_end_locked(j, &o);
			pthread_mutex_unlock(&W.mu);
		} else {
			/* Another thread is finishing it: let it leave the table. */
			struct timespec ts = { 0, 5000000 };

			nanosleep(&ts, NULL);
		}
	}
}

json_object *
waits_health(void)
{
	json_object *o, *ocr, *judges;
	size_t i, n = 0;

	pthread_mutex_lock(&W.mu);
	o = W.health ? json_tokener_parse(json_object_to_json_string(W.health)) : json_object_new_object();
	for (i = 0; W.started && i < (size_t)W.app->cfg->max_waits; i++)
		n += W.jobs[i] != NULL;
	json_object_object_add(o, "watching", json_object_new_int((int)n));
	if (json_object_object_get(o, "backend") == NULL)
		jx_add_str(o, "backend", W.backend);
	pthread_mutex_unlock(&W.mu);
	ocr = json_object_new_object();
	json_object_object_add(ocr, "ok", json_object_new_boolean(W.ocr_ok));
	jx_add_str(ocr, "detail", W.ocr_ok ? "tesseract eng, in process" : W.ocr_err);
	json_object_object_add(o, "ocr", ocr);
	judges = json_object_new_object();
	jx_add_str(judges, "text", W.ocr_ok ? "ocr" : W.backend);
	jx_add_str(judges, "other", W.ocr_mode ? NULL : W.backend);
	json_object_object_add(o, "judges", judges);
	json_object_object_add(o, "min_confidence", json_object_new_double(W.min_conf));
	return o;
}
