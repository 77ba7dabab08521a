/*
 * waits.c - the smart-wait engine (see waits.h for the contract): its
 * lifecycle (start, stop) and API (create, get, update, cancel, health),
 * and the jobs' one way to finish and die. The engine is four files over
 * one private header (waits_int.h): this one, waits_sched.c (the scheduler,
 * XDamage peeks, workers and one tick), waits_judge.c (OCR and the model as
 * judges, verdicts) and waits_store.c (the wait_jobs rows).
 *
 * Owns: the in-memory jobs (table `jobs`, guarded by `mu`), the engine's
 * state waits_engine (waits_int.h) and its threads' start and stop, and the vision
 * backend handle. The wait_jobs rows are waits_store.c's (other modules
 * only read them).
 *
 * A job's states: scheduled (in the table, waiting for next_us) -> queued
 * (handed to the workers) -> running (one worker owns its frames) ->
 * scheduled again, or done. `done` is set once, under mu, by whoever
 * finishes the job (a worker's verdict, the scheduler's deadline, a
 * cancel); that caller also takes it out of the table (`removed`) and writes
 * the row. A job has one way to die, wjob_release_locked(): it is freed only
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

#include "backends/ocr.h"
#include "backends/vision.h"
#include "core/jx.h"
#include "core/log.h"
#include "task/events.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "desktop/expect.h"
#include "waits_int.h"
#include "x11/display.h"

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

/* Whether tesseract loads here (waits_engine.ocr_ok); only the ocr backend needs it.
 * ocr_probe checks the model files and the library without loading the
 * model: loading it here at start kept ~23 MB resident in a daemon that may
 * never OCR (idle RSS 37.9 MB, bench/run.sh); the first OCR wait loads it. */
static int
waits_ocr_probe(struct derr *e)
{
	waits_engine.ocr_ok = ocr_probe("eng", e) == 0;
	if (waits_engine.ocr_ok)
		return 0;
	snprintf(waits_engine.ocr_err, sizeof waits_engine.ocr_err, "%.200s", e->message);
	if (strcmp(waits_engine.app->cfg->vision_backend, "ocr") == 0)
		return -1;
	log_warn("smart waits: no OCR (%s): text conditions go to the model too", e->message);
	return 0;
}

/* The startup line `make run` shows: which judge takes which conditions. */
static void
log_judges(void)
{
	const char *text = waits_engine.ocr_ok ? "OCR in process (tesseract eng, no model call)" : waits_engine.backend;
	char model[400];

	if (waits_engine.vision != NULL && vision_is_passthrough(waits_engine.vision))
		snprintf(model, sizeof model, "passthrough (no model: resolves once the screen changed "
		    "and settled)");
	else if (waits_engine.vision != NULL)
		snprintf(model, sizeof model, "the %s model %s", waits_engine.backend, vision_model(waits_engine.vision));
	else
		snprintf(model, sizeof model, "refused (%.300s)", waits_engine.model_err);
	char line[1024];

	snprintf(line, sizeof line, "smart waits: %zu workers; text conditions (text:\"...\", "
	    "text-gone:\"...\", a quoted phrase) -> %s; other conditions -> %s; a wait may ask "
	    "judge ocr|model|auto", waits_engine.nworkers, text, model);
	log_info("%s", line);
	fprintf(stderr, "detmd: %s\n", line);   /* what `make run` shows at start */
}

int
waits_init(struct app *app, struct derr *e)
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

	waits_engine.app = app;
	if (min_conf_parse(c->wait_min_conf, &waits_engine.min_conf, e) != 0)
		return -1;
	if (waits_ocr_probe(e) != 0)
		return -1;
	if (strcmp(c->vision_backend, "ocr") == 0) {
		waits_engine.ocr_mode = true;
		snprintf(waits_engine.backend, sizeof waits_engine.backend, "ocr");
		snprintf(waits_engine.model_err, sizeof waits_engine.model_err, "no vision model: ACU_VISION_BACKEND is ocr");
	} else if ((waits_engine.vision = vision_new(&vs, e)) != NULL) {
		snprintf(waits_engine.backend, sizeof waits_engine.backend, "%s", vision_backend(waits_engine.vision));
	} else if (e->code == DERR_INVALID && strstr(e->field, "api_key") != NULL) {
		/* No key: text conditions still work; a model wait says why not. */
		snprintf(waits_engine.backend, sizeof waits_engine.backend, "%s", c->vision_backend);
		snprintf(waits_engine.model_err, sizeof waits_engine.model_err, "this condition needs the vision model: %.300s",
		    e->message);
		log_warn("smart waits: %s", e->message);
	} else
		return -1;
	waits_engine.jobs = xcalloc((size_t)c->max_waits, sizeof *waits_engine.jobs);
	waits_engine.peek_ids = xcalloc((size_t)c->max_waits, sizeof *waits_engine.peek_ids);
	waits_engine.peek_seq = xcalloc((size_t)c->max_waits, sizeof *waits_engine.peek_seq);
	waits_engine.peek_ok = xcalloc((size_t)c->max_waits, sizeof *waits_engine.peek_ok);
	waits_engine.queue = xcalloc((size_t)c->max_waits, sizeof *waits_engine.queue);
	pthread_mutex_lock(&waits_engine.mu);
	waits_engine.started = true;
	pthread_mutex_unlock(&waits_engine.mu);
	wstore_resume();
	task_hook_add(on_task_change, NULL);
	waits_engine.nworkers = (size_t)c->wait_workers;
	waits_engine.workers = xcalloc(waits_engine.nworkers, sizeof *waits_engine.workers);
	for (i = 0; i < waits_engine.nworkers; i++)
		if (pthread_create(&waits_engine.workers[i], NULL, wsched_worker, NULL) != 0)
			return derr_set(e, DERR_INTERNAL, NULL, "cannot start wait workers");
	if (pthread_create(&waits_engine.sched, NULL, wsched_main, NULL) != 0)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot start the wait scheduler");
	if (pthread_create(&waits_engine.health_thread, NULL, wsched_health, NULL) != 0)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot start the wait health check");
	log_judges();
	return 0;
}

void
waits_shutdown(void)
{
	size_t i;

	pthread_mutex_lock(&waits_engine.mu);
	if (!waits_engine.started || waits_engine.stopping) {
		pthread_mutex_unlock(&waits_engine.mu);
		return;
	}
	waits_engine.stopping = true;
	pthread_cond_broadcast(&waits_engine.sched_cv);
	pthread_cond_broadcast(&waits_engine.work_cv);
	pthread_cond_broadcast(&waits_engine.done_cv);
	pthread_cond_broadcast(&waits_engine.health_cv);
	pthread_mutex_unlock(&waits_engine.mu);
	pthread_join(waits_engine.sched, NULL);
	pthread_join(waits_engine.health_thread, NULL);
	for (i = 0; i < waits_engine.nworkers; i++)
		pthread_join(waits_engine.workers[i], NULL);
	pthread_mutex_lock(&waits_engine.mu);
	/* Jobs left in the queue: removed ones die here, the rest below. */
	for (; waits_engine.qlen > 0; waits_engine.qlen--) {
		struct job *q = waits_engine.queue[waits_engine.qhead];

		waits_engine.qhead = (waits_engine.qhead + 1) % (size_t)waits_engine.app->cfg->max_waits;
		q->queued = false;
		wjob_release_locked(q);
	}
	for (i = 0; i < (size_t)waits_engine.app->cfg->max_waits; i++) {
		/* A done job still in the table belongs to its finisher. */
		if (waits_engine.jobs[i] != NULL && !waits_engine.jobs[i]->done)
			wjob_free(waits_engine.jobs[i]);
		waits_engine.jobs[i] = NULL;
	}
	json_object_put(waits_engine.health);
	waits_engine.health = NULL;
	pthread_mutex_unlock(&waits_engine.mu);
	free(waits_engine.workers);
	free(waits_engine.peek_ids);
	waits_engine.peek_ids = NULL;
	free(waits_engine.peek_seq);
	waits_engine.peek_seq = NULL;
	free(waits_engine.peek_ok);
	waits_engine.peek_ok = NULL;
	vision_free(waits_engine.vision);
	waits_engine.vision = NULL;
}

/* mu held. */
static int
check_running(struct derr *e)
{
	if (!waits_engine.started || waits_engine.stopping)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "the wait engine is %s",
		    waits_engine.stopping ? "shutting down" : "not running");
	return 0;
}

/* mu held: the watching job with this id, or NULL. A job being finished
 * (done, its outcome not yet written) is waited for until it has left the
 * table: a change or cancel then answers from its finished row instead of
 * acting on a wait that has already ended, or returning it as watching. */
static struct job *
find_watching_locked(const char *id)
{
	struct job *j;

	while ((j = wjob_find(id)) != NULL && j->done && !waits_engine.stopping)
		pthread_cond_wait(&waits_engine.done_cv, &waits_engine.mu);
	return j != NULL && !j->done ? j : NULL;
}

/* waits_create step 1: the arguments, and the task is live. */
static int
create_check(const struct wait_new *w, const char *want, struct derr *e)
{
	if (strcmp(want, "auto") != 0 && strcmp(want, "ocr") != 0 && strcmp(want, "model") != 0)
		return derr_set(e, DERR_INVALID, "judge", "judge must be auto, ocr or model (got '%.16s')",
		    want);
	if (!waits_engine.started)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "the wait engine is not running");
	if (strcmp(w->target, "screen") != 0 &&
	    (strncmp(w->target, "window:", 7) != 0 || w->target[7] == '\0'))
		return derr_set(e, DERR_INVALID, "target",
		    "target must be 'screen' or 'window:<title or id>' (got '%.64s')", w->target);
	if (wjudge_is_a11y(w->criteria) && display_task_number(w->task_id) < 0)
		return derr_set(e, DERR_CONFLICT, "task_id", "element conditions are read from the "
		    "accessibility tree of a task's own display: give the task_id of a task whose display "
		    "runs (display: true)");
	if (w->task_id != NULL) {
		int status;
		json_object *meta;

		if (task_meta(waits_engine.app->store, w->task_id, &status, &meta, e) != 0)
			return -1;
		json_object_put(meta);
		if (task_status_final(status))
			return derr_set(e, DERR_CONFLICT, "task_id", "task %s is %s; waits are for live tasks",
			    w->task_id, task_status_name(status));
	}
	return 0;
}

/* Step 2: the engine runs and has room for one more (ACU_MAX_WAITS). */
static int
create_room(struct derr *e)
{
	int rc;

	pthread_mutex_lock(&waits_engine.mu);
	rc = check_running(e);
	if (rc == 0) {
		size_t i, used = 0;

		for (i = 0; i < (size_t)waits_engine.app->cfg->max_waits; i++)
			used += waits_engine.jobs[i] != NULL;
		if (used >= (size_t)waits_engine.app->cfg->max_waits)
			rc = derr_set(e, DERR_UNAVAILABLE, NULL, "%zu waits are watching already "
			    "(ACU_MAX_WAITS); cancel some first", used);
	}
	pthread_mutex_unlock(&waits_engine.mu);
	return rc;
}

/* Step 3: the task's "wait" action (started), its id into action_id. */
static int
create_action(const struct wait_new *w, char action_id[ID_LEN], struct derr *e)
{
	struct action_new a = { .type = "wait", .status = "started", .duration_ms = -1 };
	json_object *in = json_object_new_object();
	char summary[300];
	int64_t ord;
	int rc;

	snprintf(summary, sizeof summary, "smart_wait: %.200s", w->criteria);
	jx_add_str(in, "target", w->target);
	jx_add_str(in, "criteria", w->criteria);
	json_object_object_add(in, "timeout", json_object_new_int(w->timeout_s));
	a.summary = summary;
	a.input_json = jx_string(in, NULL);
	rc = task_action_add(waits_engine.app->store, w->task_id, &a, action_id, &ord, e);
	json_object_put(in);
	return rc;
}

json_object *
waits_create(const struct wait_new *w, struct derr *e)
{
	char id[ID_LEN], action_id[ID_LEN] = "";
	int64_t now = now_ms(), deadline = now + (int64_t)w->timeout_s * 1000;
	const char *want = w->judge != NULL ? w->judge : "auto";
	char why[sizeof ((struct job *)0)->judge_why];
	struct job *j;
	bool use_ocr;
	int rc;

	if (create_check(w, want, e) != 0)
		return NULL;
	/* After the input checks: a 400/404 says more than "no model". */
	if (wjudge_pick(want, w->criteria, true, &use_ocr, why, sizeof why, e) != 0)
		return NULL;
	if (create_room(e) != 0)
		return NULL;
	if (w->task_id != NULL && create_action(w, action_id, e) != 0)
		return NULL;
	id_new(id);
	if (wstore_row_insert(id, w, now, deadline, action_id, expect_settled(w->criteria, NULL) ? "xdamage" :
	    wjudge_is_a11y(w->criteria) ? "accessibility" : use_ocr ? "ocr" : waits_engine.backend, want, e) != 0)
		return NULL;
	j = wjob_new(id, w->task_id, w->target, w->criteria, w->timeout_s, w->poll_s, now, deadline,
	    action_id);
	snprintf(j->judge, sizeof j->judge, "%s", want);
	j->use_ocr = use_ocr;
	snprintf(j->judge_why, sizeof j->judge_why, "%s", why);
	pthread_mutex_lock(&waits_engine.mu);
	rc = waits_engine.stopping ? -1 : wjob_slot_put(j);
	pthread_mutex_unlock(&waits_engine.mu);
	if (rc != 0) {
		wstore_finish(j, "failed", "ERROR", "the wait engine is full or stopping");
		return derr_set(e, DERR_UNAVAILABLE, NULL, "the wait engine is full or stopping"), NULL;
	}
	log_info("wait %s: %s on %s (timeout %d s, task %s; judge %s: %s)", id, w->criteria, w->target,
	    w->timeout_s, w->task_id ? w->task_id : "-", expect_settled(w->criteria, NULL) ? "xdamage" :
	    wjudge_is_a11y(w->criteria) ? "accessibility" : use_ocr ? "ocr" : "model", why);
	events_publish("wait", "created", w->task_id, id);
	return wstore_row_get(id, e);
}

json_object *
waits_get(const char *id, int block_s, struct derr *e)
{
	if (block_s > 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += block_s;
		pthread_mutex_lock(&waits_engine.mu);
		while (!waits_engine.stopping && waits_engine.started) {
			if (wjob_find(id) == NULL)
				break;  /* finished and written (or never watching) */
			if (pthread_cond_timedwait(&waits_engine.done_cv, &waits_engine.mu, &ts) == ETIMEDOUT)
				break;
		}
		pthread_mutex_unlock(&waits_engine.mu);
	}
	return wstore_row_get(id, e);
}

json_object *
waits_update(const char *id, const char *criteria, int timeout_s, const char *note,
    struct derr *e)
{
	char *crit = NULL, *nt = NULL, want[8] = "auto", why[sizeof ((struct job *)0)->judge_why] = "";
	const char *backend = NULL;
	int64_t deadline = 0;
	int tmo = 0, rc;
	struct job *j;
	bool use_ocr = false;

	pthread_mutex_lock(&waits_engine.mu);
	j = waits_engine.started ? wjob_find(id) : NULL;
	if (j != NULL)
		memcpy(want, j->judge, sizeof want);
	pthread_mutex_unlock(&waits_engine.mu);
	if (criteria != NULL && wjudge_pick(want, criteria, true, &use_ocr, why, sizeof why, e) != 0)
		return NULL;
	pthread_mutex_lock(&waits_engine.mu);
	rc = check_running(e);
	j = rc == 0 ? find_watching_locked(id) : NULL;
	if (rc == 0 && j == NULL) {
		pthread_mutex_unlock(&waits_engine.mu);
		json_object *row = wstore_row_get(id, e);

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
			WAITS_CHECK_LOCKED();
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
		backend = expect_settled(j->criteria, NULL) ? "xdamage" : wjudge_is_a11y(j->criteria) ?
		    "accessibility" : j->use_ocr ? "ocr" : waits_engine.backend;
		pthread_cond_signal(&waits_engine.sched_cv);
	}
	pthread_mutex_unlock(&waits_engine.mu);
	if (rc != 0)
		return NULL;
	rc = wstore_row_update(id, crit, tmo, deadline, nt, backend ? backend : waits_engine.backend, e);
	free(crit);
	free(nt);
	if (rc != 0)
		return NULL;
	if (note != NULL)
		log_info("wait %s note: %s", id, note);
	return wstore_row_get(id, e);
}

json_object *
waits_cancel(const char *id, const char *reason, struct derr *e)
{
	struct job *j;
	struct outcome o;
	int r = -1;

	pthread_mutex_lock(&waits_engine.mu);
	j = waits_engine.started ? find_watching_locked(id) : NULL;
	if (j != NULL)
		r = wjob_finish_locked(j, "cancelled", "CANCELLED", reason ? reason : "cancelled by the agent", &o);
	pthread_mutex_unlock(&waits_engine.mu);
	if (r >= 0) {
		wstore_outcome_write(&o);
		pthread_mutex_lock(&waits_engine.mu);
		wjob_finish_end_locked(j, &o);
		pthread_mutex_unlock(&waits_engine.mu);
	}
	return wstore_row_get(id, e);
}

void
waits_task_ended(const char *task_id, const char *why)
{
	for (;;) {
		struct job *j = NULL;
		struct outcome o;
		size_t i;
		int r = -1;

		pthread_mutex_lock(&waits_engine.mu);
		for (i = 0; waits_engine.started && i < (size_t)waits_engine.app->cfg->max_waits && j == NULL; i++)
			if (waits_engine.jobs[i] != NULL && strcmp(waits_engine.jobs[i]->task_id, task_id) == 0)
				j = waits_engine.jobs[i];
		if (j != NULL)
			r = wjob_finish_locked(j, "cancelled", "CANCELLED", why, &o);
		pthread_mutex_unlock(&waits_engine.mu);
		if (j == NULL)
			return;
		if (r >= 0) {
			wstore_outcome_write(&o);
			pthread_mutex_lock(&waits_engine.mu);
			wjob_finish_end_locked(j, &o);
			pthread_mutex_unlock(&waits_engine.mu);
		} else {
			/* Another thread is finishing it: let it leave the table. */
			sleep_ms(5);
		}
	}
}

json_object *
waits_health(void)
{
	json_object *o, *ocr, *judges;
	size_t i, n = 0;

	pthread_mutex_lock(&waits_engine.mu);
	o = waits_engine.health ? json_tokener_parse(json_object_to_json_string(waits_engine.health)) : json_object_new_object();
	for (i = 0; waits_engine.started && i < (size_t)waits_engine.app->cfg->max_waits; i++)
		n += waits_engine.jobs[i] != NULL;
	json_object_object_add(o, "watching", json_object_new_int((int)n));
	if (json_object_object_get(o, "backend") == NULL)
		jx_add_str(o, "backend", waits_engine.backend);
	pthread_mutex_unlock(&waits_engine.mu);
	ocr = json_object_new_object();
	json_object_object_add(ocr, "ok", json_object_new_boolean(waits_engine.ocr_ok));
	jx_add_str(ocr, "detail", waits_engine.ocr_ok ? "tesseract eng, in process" : waits_engine.ocr_err);
	json_object_object_add(o, "ocr", ocr);
	judges = json_object_new_object();
	jx_add_str(judges, "text", waits_engine.ocr_ok ? "ocr" : waits_engine.backend);
	jx_add_str(judges, "other", waits_engine.ocr_mode ? NULL : waits_engine.backend);
	json_object_object_add(o, "judges", judges);
	json_object_object_add(o, "min_confidence", json_object_new_double(waits_engine.min_conf));
	return o;
}
