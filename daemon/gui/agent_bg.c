/*
 * agent_bg.c - background gui_agent runs. See agent_bg.h.
 *
 * Owns: the run table (bg.runs, AGENT_BG_KEEP slots), one joinable thread
 * per running run, and the condition status callers wait on.
 * Invariants (bg.mu): a slot is free (id[0] == '\0') or holds a run;
 * `running` counts runs whose thread has not finished agent_run; a thread
 * is joined exactly once (at eviction of its finished slot, or at
 * shutdown); `result`/`error` are set once, when the run leaves running.
 * Not here: the agent loop (agent.c), HTTP (api_gui.c).
 */
#include "agent_bg.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "core/cancel.h"
#include "core/jx.h"
#include "core/log.h"
#include "core/util.h"
#include "desktop/desktop.h"
#include "utf8.h"

enum run_state { RUN_RUNNING, RUN_DONE, RUN_FAILED, RUN_CANCELLED };
static const char *const run_names[] = { "running", "done", "failed", "cancelled" };

struct run {
	char id[ID_LEN];            /* "" : a free slot */
	char task_id[ID_LEN];       /* "" : none */
	char *instruction, *context;
	int timeout_s;
	struct app *app;
	enum run_state state;
	bool joined;
	atomic_int cancel;
	int64_t t0_us, t1_us, started_ms;
	json_object *result;        /* done/cancelled */
	struct derr err;            /* failed */
	pthread_t thread;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct run runs[AGENT_BG_KEEP];
	int running;
	bool stopped;
} bg = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

void
agent_log(struct app *app, const char *task_id, const char *instruction, int64_t timeout_s,
    json_object *out)
{
	bool done = json_object_get_boolean(json_object_object_get(out, "success"));
	json_object *in;
	char summary[300];

	if (task_id == NULL)
		return;
	in = json_object_new_object();
	jx_add_str(in, "tool", "gui_agent");
	jx_add_str(in, "instruction", instruction);
	json_object_object_add(in, "timeout", json_object_new_int64(timeout_s));
	snprintf(summary, sizeof summary, "gui_agent: %.*s -> %s", utf8_prec(instruction, 200),
	    instruction, done ? "done" : "not done");
	desktop_log(app, task_id, "gui_agent", summary, done, in, out,
	    json_object_get_double(json_object_object_get(out, "elapsed_s")) * 1000.0);
	json_object_put(in);
}

static void
run_clear(struct run *r)
{
	free(r->instruction);
	free(r->context);
	json_object_put(r->result);
	memset(r, 0, sizeof *r);
}

static void *
run_main(void *arg)
{
	struct run *r = arg;
	json_object *out = NULL;
	struct derr e = { 0 };
	int rc;

	cancel_bind(&r->cancel, -1);
	rc = agent_run(r->app, r->task_id[0] ? r->task_id : NULL, r->instruction, r->timeout_s,
	    r->context, &out, &e);
	cancel_bind(NULL, -1);
	if (rc == 0)
		agent_log(r->app, r->task_id[0] ? r->task_id : NULL, r->instruction, r->timeout_s, out);
	pthread_mutex_lock(&bg.mu);
	r->t1_us = mono_us();
	if (rc != 0 && atomic_load(&r->cancel)) {
		/* Cancelled while a step was under way (a model call cut short,
		 * say): the cancel is why it ended, not a failure. */
		r->state = RUN_CANCELLED;
		r->result = json_object_new_object();
		json_object_object_add(r->result, "success", json_object_new_boolean(0));
		jx_add_str(r->result, "summary", "cancelled before it finished");
		jx_add_str(r->result, "cut_short", e.message);
	} else if (rc != 0) {
		r->state = RUN_FAILED;
		r->err = e;
	} else {
		r->state = atomic_load(&r->cancel) ? RUN_CANCELLED : RUN_DONE;
		r->result = out;
	}
	bg.running--;
	pthread_cond_broadcast(&bg.cv);
	pthread_mutex_unlock(&bg.mu);
	log_info("gui_agent run %s %s", r->id, run_names[r->state]);
	return NULL;
}

/* Lock held: a free slot, or the oldest finished run's (joined, cleared);
 * NULL when every slot runs. */
static struct run *
slot_take(void)
{
	struct run *old = NULL;

	for (size_t i = 0; i < AGENT_BG_KEEP; i++) {
		struct run *r = &bg.runs[i];

		if (r->id[0] == '\0')
			return r;
		if (r->state != RUN_RUNNING && (old == NULL || r->t0_us < old->t0_us))
			old = r;
	}
	if (old != NULL) {
		if (!old->joined)
			pthread_join(old->thread, NULL);
		run_clear(old);
	}
	return old;
}

/* Lock held. */
static json_object *
run_json(const struct run *r)
{
	json_object *o = json_object_new_object(), *v;
	char ts[ISO_TIME_LEN];
	int64_t end = r->state == RUN_RUNNING ? mono_us() : r->t1_us;

	jx_add_str(o, "run_id", r->id);
	jx_add_str(o, "status", run_names[r->state]);
	jx_add_str(o, "task_id", r->task_id[0] ? r->task_id : NULL);
	jx_add_str(o, "instruction", r->instruction);
	iso_time(r->started_ms, ts);
	jx_add_str(o, "started_at", ts);
	json_object_object_add(o, "elapsed_s", json_object_new_double((double)((end - r->t0_us) / 1000) / 1000.0));
	if (r->result != NULL) {
		if (json_object_object_get_ex(r->result, "success", &v))
			json_object_object_add(o, "success", json_object_get(v));
		if (json_object_object_get_ex(r->result, "summary", &v))
			json_object_object_add(o, "summary", json_object_get(v));
		json_object_object_add(o, "result", json_object_get(r->result));
	}
	if (r->state == RUN_FAILED) {
		json_object *er = json_object_new_object();

		derr_add_json(er, &r->err);
		json_object_object_add(o, "error", json_object_get(json_object_object_get(er, "error")));
		json_object_put(er);
	}
	return o;
}

int
agent_bg_start(struct app *app, const char *task_id, const char *instruction, int timeout_s,
    const char *context, json_object **out, struct derr *e)
{
	struct run *r;
	int err;

	*out = NULL;
	pthread_mutex_lock(&bg.mu);
	if (bg.stopped) {
		pthread_mutex_unlock(&bg.mu);
		return derr_set(e, DERR_UNAVAILABLE, NULL, "detmd is stopping: no new gui_agent run");
	}
	if (bg.running >= AGENT_BG_RUNNING || (r = slot_take()) == NULL) {
		pthread_mutex_unlock(&bg.mu);
		return derr_set(e, DERR_BUSY, NULL, "%d gui_agent runs are going on already; "
		    "follow them with gui_agent_status, or try again later", AGENT_BG_RUNNING);
	}
	id_new(r->id);
	snprintf(r->task_id, sizeof r->task_id, "%s", task_id ? task_id : "");
	r->instruction = xstrdup(instruction);
	r->context = context ? xstrdup(context) : NULL;
	r->timeout_s = timeout_s;
	r->app = app;
	r->state = RUN_RUNNING;
	r->t0_us = mono_us();
	r->started_ms = now_ms();
	if ((err = pthread_create(&r->thread, NULL, run_main, r)) != 0) {
		run_clear(r);
		pthread_mutex_unlock(&bg.mu);
		return derr_set(e, DERR_INTERNAL, NULL, "cannot start a gui_agent thread: %s", strerror(err));
	}
	bg.running++;
	*out = run_json(r);
	pthread_mutex_unlock(&bg.mu);
	log_info("gui_agent run %s started (task %s)", r->id, task_id ? task_id : "-");
	return 0;
}

/* Lock held. */
static struct run *
run_find(const char *id, struct derr *e)
{
	for (size_t i = 0; id_valid(id) && i < AGENT_BG_KEEP; i++)
		if (strcmp(bg.runs[i].id, id) == 0)
			return &bg.runs[i];
	derr_set(e, DERR_NOT_FOUND, "run_id", "no gui_agent run with id '%.*s' (runs are kept in "
	    "memory: the last %d, until detmd restarts)", utf8_prec(id, 16), id, AGENT_BG_KEEP);
	return NULL;
}

json_object *
agent_bg_status(const char *run_id, int block_s, struct derr *e)
{
	struct run *r;
	struct timespec until;
	json_object *o = NULL;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += block_s;
	pthread_mutex_lock(&bg.mu);
	while ((r = run_find(run_id, e)) != NULL && r->state == RUN_RUNNING && block_s > 0 &&
	    pthread_cond_timedwait(&bg.cv, &bg.mu, &until) == 0)
		;
	if (r != NULL)
		o = run_json(r);
	pthread_mutex_unlock(&bg.mu);
	return o;
}

json_object *
agent_bg_cancel(const char *run_id, struct derr *e)
{
	struct run *r;
	json_object *o = NULL;

	pthread_mutex_lock(&bg.mu);
	if ((r = run_find(run_id, e)) != NULL) {
		atomic_store(&r->cancel, 1);
		o = run_json(r);
	}
	pthread_mutex_unlock(&bg.mu);
	return o;
}

void
agent_bg_shutdown(void)
{
	pthread_mutex_lock(&bg.mu);
	bg.stopped = true;
	for (size_t i = 0; i < AGENT_BG_KEEP; i++)
		if (bg.runs[i].id[0] != '\0')
			atomic_store(&bg.runs[i].cancel, 1);
	pthread_mutex_unlock(&bg.mu);
	/* Joined without the lock: a finishing run takes it. Only this
	 * function and slot_take join, and slot_take refuses after stopped. */
	for (size_t i = 0; i < AGENT_BG_KEEP; i++) {
		struct run *r = &bg.runs[i];

		if (r->id[0] != '\0' && !r->joined) {
			pthread_join(r->thread, NULL);
			r->joined = true;
		}
	}
	pthread_mutex_lock(&bg.mu);
	for (size_t i = 0; i < AGENT_BG_KEEP; i++)
		if (bg.runs[i].id[0] != '\0')
			run_clear(&bg.runs[i]);
	pthread_mutex_unlock(&bg.mu);
}
