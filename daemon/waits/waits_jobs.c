/*
 * waits_jobs.c - the engine's state (waits_engine) and its table of jobs:
 * made, found, put in a slot, finished in two steps around the outcome's
 * write (wjob_finish_locked, then wjob_finish_end_locked), freed once
 * nothing reaches them. The lowest file of the engine with waits_judge.c:
 * it calls nothing of waits.c, waits_sched.c or waits_store.c.
 *
 * Invariants (waits_engine.mu): a job is in at most one slot and in the
 * work queue at most once; it is freed only when out of the table, out of
 * the queue and not run by a worker (wjob_release_locked, the one place a
 * job dies); WAITS_CHECK_LOCKED() checks the tally in debug builds.
 *
 * Does not: write rows (waits_store.c), schedule or judge.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "desktop/expect.h"
#include "waits_int.h"
#include "x11/xcap.h"

struct waits_engine waits_engine = {
	.health_cv = PTHREAD_COND_INITIALIZER,
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.sched_cv = PTHREAD_COND_INITIALIZER,
	.work_cv = PTHREAD_COND_INITIALIZER,
	.done_cv = PTHREAD_COND_INITIALIZER,
};

/* ---- jobs: made, finished, freed ---- */

void
wjob_free(struct job *j)
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
struct job *
wjob_find(const char *id)
{
	size_t i;

	for (i = 0; i < (size_t)waits_engine.app->cfg->max_waits; i++)
		if (waits_engine.jobs[i] != NULL && strcmp(waits_engine.jobs[i]->id, id) == 0)
			return waits_engine.jobs[i];
	return NULL;
}

/* mu held: takes j out of the work queue if it is there, keeping the order
 * of the others, so the ring only ever holds jobs of the table (<= max_waits). */
static void
queue_remove_locked(struct job *j)
{
	size_t n = (size_t)waits_engine.app->cfg->max_waits, i, k = 0;

	if (!j->queued)
		return;
	for (i = 0; i < waits_engine.qlen; i++) {
		struct job *q = waits_engine.queue[(waits_engine.qhead + i) % n];

		if (q != j)
			waits_engine.queue[(waits_engine.qhead + k++) % n] = q;
	}
	waits_engine.qlen = k;
	j->queued = false;
}

/* Marks j done (mu held) and fills o. Returns -1 if j was already done.
 * The finisher then writes the outcome (no lock) and calls finish_end. */
int
wjob_finish_locked(struct job *j, const char *status, const char *verdict, const char *reason,
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
	o->extra = wjob_extra_locked(j);
	WAITS_CHECK_LOCKED();
	return 0;
}

/* mu held: the one place a job dies. Frees j when nothing can reach it any
 * more: out of the table, not in the work queue, not run by a worker. */
void
wjob_release_locked(struct job *j)
{
	assert(!j->removed || j->done);
	if (j->removed && !j->queued && !j->running)
		wjob_free(j);
}

/* After the outcome is written: j leaves the table (so a long poll that
 * sees it gone reads the final row), and dies unless the queue or a worker
 * still holds it (see job_release_locked). mu held. */
void
wjob_finish_end_locked(struct job *j, struct outcome *o)
{
	size_t i;

	free(o->criteria);
	o->criteria = NULL;
	free(o->extra);
	o->extra = NULL;
	for (i = 0; i < (size_t)waits_engine.app->cfg->max_waits; i++)
		if (waits_engine.jobs[i] == j)
			waits_engine.jobs[i] = NULL;
	j->removed = true;
	queue_remove_locked(j);
	pthread_cond_broadcast(&waits_engine.done_cv);
	wjob_release_locked(j);
	WAITS_CHECK_LOCKED();
}

/* mu held: put j in a free slot; -1 when full. */
int
wjob_slot_put(struct job *j)
{
	size_t i;

	for (i = 0; i < (size_t)waits_engine.app->cfg->max_waits; i++)
		if (waits_engine.jobs[i] == NULL) {
			waits_engine.jobs[i] = j;
			WAITS_CHECK_LOCKED();
			pthread_cond_signal(&waits_engine.sched_cv);
			return 0;
		}
	return -1;
}

struct job *
wjob_new(const char *id, const char *task_id, const char *target, const char *criteria,
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

/* mu held: what decided j and how (the verdict_json column), as a new
 * JSON text. */
char *
wjob_extra_locked(const struct job *j)
{
	json_object *o = json_object_new_object(), *w = json_object_new_object(), *ev = NULL;
	char *text;

	jx_add_str(o, "judged_by", expect_settled(j->criteria, NULL) ? "xdamage" :
	    wjudge_is_a11y(j->criteria) ? "accessibility" : j->use_ocr ? "ocr" : "model");
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
