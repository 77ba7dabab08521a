/*
 * replay.c - replay runs (replay.h): one thread per run, the steps in
 * order, the progress written to the replay task after every step.
 *
 * Owns: the run table (REPLAY_RUNNING_MAX slots; a finished run's slot is
 * joined and reused), each run's progress object (rp.mu) and the
 * condition replay_status waits on.
 * Invariants: a task has at most one running replay; the progress in
 * memory is what was last written to the store (a failed write is
 * logged); a run checks its stop flag between steps and in every wait.
 *
 * Does not: find targets (replay_ground.c), create the replay task or its
 * display (http/api_replay.c).
 */
#include "replay.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "core/log.h"
#include "core/util.h"
#include "desktop/desktop.h"
#include "desktop/launch.h"
#include "desktop/target.h"
#include "replay_int.h"
#include "task/replay_rows.h"
#include "task/task.h"
#include "task/taskstate.h"

struct run {
	bool used, running, joined;
	char task_id[ID_LEN], source_id[ID_LEN];
	struct app *app;
	json_object *steps, *params, *state;   /* state: the run thread's own */
	char *snap;                 /* the last progress published, as JSON (rp.mu) */
	int from, settle_ms, timeout_ms;
	bool ask_model;
	atomic_int stop;
	pthread_t th;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct run runs[REPLAY_RUNNING_MAX];
	bool stopped;
} rp = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static const char *const pointer_actions[] = { "click", "double_click", "right_click", "middle_click",
	"drag", "scroll", "mouse_move", NULL };

static bool
in_list(const char *s, const char *const *l)
{
	for (size_t i = 0; s != NULL && l[i] != NULL; i++)
		if (strcmp(s, l[i]) == 0)
			return true;
	return false;
}

static const char *
sget(json_object *o, const char *k)
{
	const char *s = json_object_get_string(json_object_object_get(o, k));

	return s != NULL ? s : "";
}

/* The step's kind: "pointer", "keys" (type, press_key), "launch", or
 * NULL (not replayed). */
static const char *
kind_of(json_object *row)
{
	const char *type = sget(row, "type"), *status = sget(row, "status");
	json_object *in = json_object_object_get(row, "input");
	const char *a = sget(in, "action");

	if (strcmp(type, "gui") == 0 && strcmp(status, "completed") == 0) {
		if (in_list(a, pointer_actions))
			return "pointer";
		if (strcmp(a, "type") == 0 || strcmp(a, "press_key") == 0)
			return "keys";
	}
	if (strcmp(type, "cli") == 0 && strncmp(sget(row, "summary"), "launch ", 7) == 0 &&
	    (json_object_object_get(in, "command") != NULL || json_object_object_get(in, "open") != NULL))
		return "launch";
	return NULL;
}

static json_object *
steps_of(json_object *rows)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < jx_alen(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);
		const char *k = kind_of(r);

		if (k != NULL) {
			json_object_object_add(r, "kind", json_object_new_string(k));
			json_object_array_add(a, json_object_get(r));
		}
	}
	return a;
}

static void
count_add(json_object *st, const char *k, int d)
{
	json_object_object_add(st, k, json_object_new_int(json_object_get_int(json_object_object_get(st, k)) + d));
}

/* Writes the progress to the store, then shows it to replay_status. */
static void
publish(struct run *r)
{
	char *snap = xstrdup(jx_string(r->state, NULL));
	struct derr e;

	if (replay_state_set(r->app->store, r->task_id, r->state, &e) != 0)
		log_warn("replay %s: could not store its progress: %s", r->task_id, e.message);
	pthread_mutex_lock(&rp.mu);
	free(r->snap);
	r->snap = snap;
	pthread_cond_broadcast(&rp.cv);
	pthread_mutex_unlock(&rp.mu);
}

/* ---- one step ---- */

/* The text a type step types: params[param], else params[recorded]. */
static const char *
text_for(struct run *r, json_object *in, json_object *rec, bool *replaced)
{
	const char *text = sget(in, "text"), *param = sget(in, "param");
	json_object *v;

	*replaced = false;
	if (r->params == NULL)
		return text;
	if ((param[0] != '\0' && json_object_object_get_ex(r->params, param, &v)) ||
	    json_object_object_get_ex(r->params, text, &v)) {
		*replaced = true;
		json_object_object_add(rec, "param", json_object_new_string(param[0] != '\0' &&
		    json_object_object_get(r->params, param) != NULL ? param : text));
		return json_object_get_string(v);
	}
	return text;
}

/* The title a key step waits for: the recorded one with each recorded
 * text that params replace (a file name typed into Save As, now in the
 * editor's title) replaced by its new text; the first match of each. */
static void
title_for(struct run *r, const char *title, char *buf, size_t cap)
{
	bool replaced;

	snprintf(buf, cap, "%s", title);
	for (size_t i = 0; r->params != NULL && i < jx_alen(r->steps); i++) {
		json_object *in = json_object_object_get(json_object_array_get_idx(r->steps, i), "input");
		json_object *scratch = json_object_new_object();
		const char *old = sget(in, "text"), *new = text_for(r, in, scratch, &replaced);
		char *at = replaced && old[0] != '\0' ? strstr(buf, old) : NULL;

		if (at != NULL && strlen(buf) - strlen(old) + strlen(new) < cap) {
			char tail[512];

			snprintf(tail, sizeof tail, "%s", at + strlen(old));
			snprintf(at, cap - (size_t)(at - buf), "%s%s", new, tail);
		}
		json_object_put(scratch);
	}
}

/* The recorded input without what replay sets itself. */
static json_object *
params_of(struct run *r, json_object *in)
{
	json_object *p = json_object_new_object();

	json_object_object_foreach(in, k, v) {
		if (strcmp(k, "action") != 0 && strcmp(k, "task_id") != 0 && strcmp(k, "coords") != 0)
			json_object_object_add(p, k, json_object_get(v));
	}
	if (json_object_object_get(p, "settle_ms") == NULL)
		json_object_object_add(p, "settle_ms", json_object_new_int(r->settle_ms));
	/* the next step (or the end of the replay, which stops the task's
	 * apps) only once the app has drawn what the input did: GTK draws
	 * typed keys late under load (a click right after them hits a Save
	 * still insensitive) and mousepad writes its file after the click */
	if (json_object_object_get(p, "expect") == NULL)
		json_object_object_add(p, "expect", json_object_new_string("settled:800"));
	return p;
}

static int
run_input(struct run *r, const char *action, json_object *p, json_object *rec, json_object *row)
{
	struct desk_out out;
	struct derr e;
	const char *was = sget(json_object_object_get(row, "output"), "effect");

	if (desktop_run(r->app, r->task_id, action, p, false, &out, &e) != 0) {
		jx_add_str(rec, "why", e.message);
		return 0;
	}
	jx_add_str(rec, "effect", sget(out.data, "effect"));
	if (sget(out.data, "summary")[0] != '\0')
		jx_add_str(rec, "effect_summary", sget(out.data, "summary"));
	if (was[0] != '\0')
		jx_add_str(rec, "recorded_effect", was);
	json_object_put(out.data);
	return 1;
}

/* A window the original input opened: waited for by title. */
static int
wait_appeared(struct run *r, json_object *row, json_object *rec)
{
	json_object *w = json_object_object_get(json_object_object_get(json_object_object_get(row, "output"),
	    "evidence"), "windows");
	struct xwin x;

	for (size_t i = 0; i < jx_alen(w); i++) {
		json_object *o = json_object_array_get_idx(w, i);

		if (strcmp(sget(o, "change"), "appeared") != 0 || sget(o, "title")[0] == '\0')
			continue;
		jx_add_str(rec, "waited_for", sget(o, "title"));
		if (!rp_wait_window(r->app, r->task_id, sget(o, "title"), NULL, r->timeout_ms, &r->stop, &x)) {
			json_object_object_add(rec, "why", json_object_new_string("the window the original input "
			    "opened did not appear"));
			return 0;
		}
	}
	return 1;
}

static void
add_point(json_object *rec, int x, int y)
{
	json_object *p = json_object_new_object();

	json_object_object_add(p, "x", json_object_new_int(x));
	json_object_object_add(p, "y", json_object_new_int(y));
	json_object_object_add(rec, "point", p);
}

/* 1 done, 0 failed, -1 not grounded (needs the agent). */
static int
step_pointer(struct run *r, json_object *row, json_object *rec, struct rp_ground *g)
{
	json_object *in = json_object_object_get(row, "input"), *t = json_object_object_get(row, "target");
	json_object *tp = json_object_object_get(t, "point"), *p;
	int ok, dx, dy, rc;

	rc = rp_ground(r->app, r->task_id, t, r->timeout_ms, r->ask_model, &r->stop, g);
	if (g->model_call) {
		count_add(r->state, "model_calls", 1);
		count_add(r->state, "asked", 1);
		json_object_object_add(rec, "asked", json_object_new_boolean(1));
	}
	if (!rc)
		return -1;
	jx_add_str(rec, "grounded_by", g->by);
	if (g->not_ready)
		jx_add_str(rec, "precondition", "the element stayed insensitive until the timeout's half: clicked all the same");
	add_point(rec, g->x, g->y);
	p = params_of(r, in);
	dx = g->x - json_object_get_int(json_object_object_get(tp, "x"));
	dy = g->y - json_object_get_int(json_object_object_get(tp, "y"));
	json_object_object_add(p, "x", json_object_new_int(g->x));
	json_object_object_add(p, "y", json_object_new_int(g->y));
	if (json_object_object_get(p, "x2") != NULL) {      /* a drag keeps its vector (screen px) */
		json_object *o = json_object_object_get(row, "output");
		json_object *src = json_object_object_get(o, "x2") != NULL ? o : in;

		json_object_object_add(p, "x2", json_object_new_int(json_object_get_int(
		    json_object_object_get(src, "x2")) + dx));
		json_object_object_add(p, "y2", json_object_new_int(json_object_get_int(
		    json_object_object_get(src, "y2")) + dy));
	}
	ok = run_input(r, sget(in, "action"), p, rec, row) && wait_appeared(r, row, rec);
	json_object_put(p);
	return ok;
}

static int
step_keys(struct run *r, json_object *row, json_object *rec, struct rp_ground *g)
{
	json_object *in = json_object_object_get(row, "input"), *out = json_object_object_get(row, "output");
	char fw[512];
	json_object *p;
	bool replaced = false;
	int ok;

	title_for(r, sget(json_object_object_get(out, "focus_window"), "title"), fw, sizeof fw);
	snprintf(g->looked_for, sizeof g->looked_for, "the keyboard focus in \"%.100s\"", fw);
	if (!rp_wait_focus(r->app, r->task_id, fw, r->timeout_ms, &r->stop, g->why, sizeof g->why))
		return -1;
	jx_add_str(rec, "grounded_by", fw[0] != '\0' ? "focus" : "none");
	p = params_of(r, in);
	if (strcmp(sget(in, "action"), "type") == 0) {
		json_object_object_add(p, "text", json_object_new_string(text_for(r, in, rec, &replaced)));
	}
	ok = run_input(r, sget(in, "action"), p, rec, row) && wait_appeared(r, row, rec);
	json_object_put(p);
	return ok;
}

static int
step_launch(struct run *r, json_object *row, json_object *rec)
{
	json_object *in = json_object_object_get(row, "input"), *out = NULL;
	struct launch_req q = { .task_id = r->task_id, .wait_ms = r->timeout_ms < LAUNCH_WAIT_MAX_MS ?
		r->timeout_ms : LAUNCH_WAIT_MAX_MS };
	struct derr e;

	q.command = json_object_object_get(in, "command") != NULL ? sget(in, "command") : NULL;
	q.open = json_object_object_get(in, "open") != NULL ? sget(in, "open") : NULL;
	q.args = json_object_object_get(in, "args");
	jx_add_str(rec, "grounded_by", "launch");
	if (launch_start(r->app, &q, &out, &e) != 0) {
		jx_add_str(rec, "why", e.message);
		return 0;
	}
	/* its proof: the window it opened (launch waited for it) */
	jx_add_str(rec, "effect", json_object_object_get(out, "window") != NULL ? "confirmed" : "unverifiable");
	json_object_put(out);
	return 1;
}

static int
step_run(struct run *r, int i, json_object *row, json_object *rec)
{
	const char *kind = sget(row, "kind");
	struct rp_ground g = { .by = "none" };
	int rc;

	json_object_object_add(rec, "step", json_object_new_int(i));
	jx_add_str(rec, "action", strcmp(kind, "launch") == 0 ? "launch" :
	    sget(json_object_object_get(row, "input"), "action"));
	jx_add_str(rec, "source_action_id", sget(row, "action_id"));
	if (strcmp(kind, "launch") == 0)
		rc = step_launch(r, row, rec);
	else if (strcmp(kind, "keys") == 0)
		rc = step_keys(r, row, rec, &g);
	else
		rc = step_pointer(r, row, rec, &g);
	if (rc < 0) {
		json_object *n = json_object_new_object();

		json_object_object_add(n, "step", json_object_new_int(i));
		jx_add_str(n, "action", sget(rec, "action"));
		jx_add_str(n, "source_action_id", sget(row, "action_id"));
		jx_add_str(n, "looked_for", g.looked_for);
		jx_add_str(n, "why", g.why);
		json_object_object_add(r->state, "needs", n);
		jx_add_str(rec, "grounded_by", "none");
		jx_add_str(rec, "why", g.why);
	}
	json_object_object_add(rec, "ok", json_object_new_boolean(rc == 1));
	return rc;
}

/* ---- the run ---- */

/* A step replayed without evidence of its effect (effect not
 * "confirmed"): listed in "unverified" {step, effect}; one whose input
 * visibly did nothing while the recorded one did is "contradicted". */
static void
proof_note(struct run *r, int i, json_object *rec)
{
	const char *eff = sget(rec, "effect");
	json_object *u, *o;

	if (strcmp(eff, "confirmed") == 0)
		return;
	json_object_object_add(rec, "proof", json_object_new_boolean(0));
	if (!json_object_object_get_ex(r->state, "unverified", &u) || u == NULL) {
		u = json_object_new_array();
		json_object_object_add(r->state, "unverified", u);
	}
	o = json_object_new_object();
	json_object_object_add(o, "step", json_object_new_int(i));
	jx_add_str(o, "effect", eff[0] != '\0' ? eff : "none");
	if (strcmp(eff, "suspected_noop") == 0 && strcmp(sget(rec, "recorded_effect"), "confirmed") == 0) {
		json_object_object_add(o, "contradicted", json_object_new_boolean(1));
		json_object_object_add(r->state, "contradicted", json_object_new_boolean(1));
	}
	json_object_array_add(u, o);
}

/* "completion" of a replay that ran every step: evidenced (every step's
 * effect confirmed), contradicted (a step visibly did nothing where the
 * recorded one did), else unchecked. */
static const char *
completion_of(struct run *r)
{
	if (json_object_get_boolean(json_object_object_get(r->state, "contradicted")))
		return "contradicted";
	return jx_alen(json_object_object_get(r->state, "unverified")) > 0 ? "unchecked" : "evidenced";
}

#define STOP_WHY "detmd was stopped (SIGTERM or SIGINT) while the replay ran; it stopped the replay there"
#define LOST_WHY "detmd ended while the replay ran without stopping it (killed, e.g. kill -9, or crashed); " \
	"seen at the next start: whether this step's input was sent is unknown"

/* The progress of a replay that was stopped from outside (detmd stopping,
 * or found still "running" after detmd ended under it): status
 * "interrupted" and interrupted {step, why}; step is the step it was at
 * (the one running then, or the next one): later steps were not replayed. */
static void
interrupted_set(json_object *st, int step, const char *why)
{
	json_object *n = json_object_new_object();

	if (step < 0)           /* the steps recorded so far, from from_step */
		step = json_object_get_int(json_object_object_get(st, "from_step")) +
		    (int)jx_alen(json_object_object_get(st, "steps"));
	json_object_object_add(n, "step", json_object_new_int(step));
	jx_add_str(n, "why", why);
	jx_add_str(st, "status", "interrupted");
	json_object_object_add(st, "interrupted", n);
	if (json_object_object_get(st, "ended_at") == NULL)
		jx_add_time(st, "ended_at", now_ms());
}

/* The replay task's message for an interrupted progress st. */
static void
interrupted_msg(char *msg, size_t cap, const char *source, json_object *st)
{
	json_object *n = json_object_object_get(st, "interrupted");
	int step = json_object_get_int(json_object_object_get(n, "step"));

	snprintf(msg, cap, "Replay of %s interrupted at step %d: %s. Steps from %d on were not replayed; "
	    "replay again (from_step %d) on a new task.", source, step, sget(n, "why"), step, step);
}

static void
finish(struct run *r, const char *status)
{
	struct task_patch p = { .status = -1 };
	struct derr e;
	char msg[600];

	jx_add_str(r->state, "status", status);
	jx_add_time(r->state, "ended_at", now_ms());
	if (strcmp(status, "done") == 0)
		p.status = TASK_COMPLETED;
	else if (strcmp(status, "failed") == 0)
		p.status = TASK_FAILED;
	else if (strcmp(status, "interrupted") == 0)
		p.status = TASK_CANCELLED;      /* not left running: its display goes with detmd */
	if (strcmp(status, "interrupted") == 0) {
		interrupted_msg(msg, sizeof msg, r->source_id, r->state);
	} else if (strcmp(status, "needs_agent") == 0) {
		json_object *n = json_object_object_get(r->state, "needs");

		snprintf(msg, sizeof msg, "Replay stopped at step %d (%s): could not find %s (%s). Do that step, "
		    "then replay again with from_step %d and replay_task_id %s.",
		    json_object_get_int(json_object_object_get(n, "step")), sget(n, "action"), sget(n, "looked_for"),
		    sget(n, "why"), json_object_get_int(json_object_object_get(n, "step")) + 1, r->task_id);
	} else {
		if (strcmp(status, "done") == 0)
			jx_add_str(r->state, "completion", completion_of(r));
		snprintf(msg, sizeof msg, "Replay of %s %s: %d of %d steps replayed, %d model calls; %d steps "
		    "without evidence of their effect%s.", r->source_id,
		    status, json_object_get_int(json_object_object_get(r->state, "replayed")),
		    json_object_get_int(json_object_object_get(r->state, "steps_total")),
		    json_object_get_int(json_object_object_get(r->state, "model_calls")),
		    (int)jx_alen(json_object_object_get(r->state, "unverified")),
		    strcmp(status, "done") != 0 ? "" : strcmp(completion_of(r), "evidenced") == 0 ?
		    " (completion evidenced)" : strcmp(completion_of(r), "contradicted") == 0 ?
		    " (completion contradicted: a step visibly did nothing where the recorded one did)" :
		    " (completion unchecked: the steps listed in unverified)");
	}
	p.message = msg;
	publish(r);
	if (task_update(r->app->store, r->task_id, &p, &e) != 0)
		log_warn("replay %s: could not end its task: %s", r->task_id, e.message);
}

static void *
run_main(void *arg)
{
	struct run *r = arg;
	json_object *list = json_object_object_get(r->state, "steps");
	size_t n = jx_alen(r->steps);
	const char *status = "done";

	for (size_t i = (size_t)r->from; i < n; i++) {
		json_object *rec = json_object_new_object();
		int rc;

		if (atomic_load(&r->stop)) {
			json_object_put(rec);
			interrupted_set(r->state, (int)i, STOP_WHY);
			status = "interrupted";
			break;
		}
		rc = step_run(r, (int)i, json_object_array_get_idx(r->steps, i), rec);
		if (rc != 1 && atomic_load(&r->stop)) {   /* its wait ended by the stop, not by the screen */
			jx_add_str(rec, "why", "detmd stopped during this step (its input was sent only if the "
			    "step has an effect)");
			json_object_object_del(r->state, "needs");
			json_object_array_add(list, rec);
			interrupted_set(r->state, (int)i, STOP_WHY);
			status = "interrupted";
			break;
		}
		json_object_array_add(list, rec);
		if (rc == 1) {
			proof_note(r, (int)i, rec);
			count_add(r->state, "replayed", 1);
			if (strcmp(sget(rec, "grounded_by"), "accessibility") == 0 ||
			    strcmp(sget(rec, "grounded_by"), "ocr") == 0 || strcmp(sget(rec, "grounded_by"), "model") == 0)
				count_add(r->state, "regrounded", 1);
		} else {
			count_add(r->state, "failed", rc == 0 ? 1 : 0);
			status = rc == 0 ? "failed" : "needs_agent";
			publish(r);
			break;
		}
		publish(r);
	}
	finish(r, status);
	pthread_mutex_lock(&rp.mu);
	r->running = false;
	pthread_cond_broadcast(&rp.cv);
	pthread_mutex_unlock(&rp.mu);
	return NULL;
}

static json_object *
state_new(const struct replay_req *q, size_t total)
{
	json_object *s = json_object_new_object();

	jx_add_str(s, "status", "running");
	jx_add_str(s, "source", q->source_id);
	jx_add_str(s, "task_id", q->task_id);
	json_object_object_add(s, "from_step", json_object_new_int(q->from_step));
	json_object_object_add(s, "steps_total", json_object_new_int((int)total));
	json_object_object_add(s, "replayed", json_object_new_int(0));
	json_object_object_add(s, "regrounded", json_object_new_int(0));
	json_object_object_add(s, "asked", json_object_new_int(0));
	json_object_object_add(s, "failed", json_object_new_int(0));
	json_object_object_add(s, "model_calls", json_object_new_int(0));
	json_object_object_add(s, "ask_model", json_object_new_boolean(q->ask_model));
	json_object_object_add(s, "params", q->params != NULL ? json_object_get(q->params) : NULL);
	json_object_object_add(s, "steps", json_object_new_array());
	jx_add_time(s, "started_at", now_ms());
	return s;
}

/* A free slot (rp.mu held): an unused one, else a finished one (joined). */
static struct run *
slot_take(const char *task_id, struct derr *e)
{
	struct run *free_slot = NULL;

	for (int i = 0; i < REPLAY_RUNNING_MAX; i++) {
		struct run *r = &rp.runs[i];

		if (r->used && r->running && strcmp(r->task_id, task_id) == 0) {
			derr_set(e, DERR_CONFLICT, "task_id", "a replay already runs on task %s", task_id);
			return NULL;
		}
		if (free_slot == NULL && (!r->used || !r->running))
			free_slot = r;
	}
	if (free_slot == NULL) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "%d replays run (the most at once)", REPLAY_RUNNING_MAX);
		return NULL;
	}
	if (free_slot->used && !free_slot->joined) {
		pthread_join(free_slot->th, NULL);
		free_slot->joined = true;
	}
	json_object_put(free_slot->steps);
	json_object_put(free_slot->params);
	json_object_put(free_slot->state);
	free(free_slot->snap);
	memset(free_slot, 0, sizeof *free_slot);
	return free_slot;
}

int
replay_start(struct app *app, const struct replay_req *q, json_object **out, struct derr *e)
{
	json_object *rows = NULL, *steps;
	struct run *r;
	size_t n;
	int err = 0;

	*out = NULL;
	(void)target_flush(3000);      /* the source's last targets are written */
	if (replay_steps_read(app->store, q->source_id, &rows, e) != 0)
		return -1;
	steps = steps_of(rows);
	json_object_put(rows);
	n = jx_alen(steps);
	if (q->from_step < 0 || (n > 0 && (size_t)q->from_step >= n) || (n == 0 && q->from_step > 0)) {
		json_object_put(steps);
		return derr_set(e, DERR_INVALID, "from_step", "from_step %d is past the source's %zu steps",
		    q->from_step, n);
	}
	pthread_mutex_lock(&rp.mu);
	if (rp.stopped || (r = slot_take(q->task_id, e)) == NULL) {
		pthread_mutex_unlock(&rp.mu);
		json_object_put(steps);
		return rp.stopped ? derr_set(e, DERR_UNAVAILABLE, NULL, "detmd is stopping") : -1;
	}
	r->used = r->running = true;
	r->app = app;
	snprintf(r->task_id, sizeof r->task_id, "%s", q->task_id);
	snprintf(r->source_id, sizeof r->source_id, "%s", q->source_id);
	r->steps = steps;
	r->params = q->params != NULL ? json_tokener_parse(jx_string(q->params, NULL)) : NULL;
	r->from = q->from_step;
	r->ask_model = q->ask_model;
	r->settle_ms = q->settle_ms > 0 ? q->settle_ms : REPLAY_SETTLE_DEFAULT_MS;
	r->timeout_ms = q->timeout_ms > 0 ? q->timeout_ms : REPLAY_TIMEOUT_DEFAULT_MS;
	r->state = state_new(q, n);
	r->snap = xstrdup(jx_string(r->state, NULL));
	if (replay_state_set(app->store, r->task_id, r->state, e) != 0 ||
	    (err = pthread_create(&r->th, NULL, run_main, r)) != 0) {
		if (e->code == 0)
			derr_set(e, DERR_INTERNAL, NULL, "replay thread: %s", strerror(err));
		r->running = false;
		r->joined = true;
		pthread_mutex_unlock(&rp.mu);
		return -1;
	}
	*out = json_tokener_parse(r->snap);
	pthread_mutex_unlock(&rp.mu);
	return 0;
}

static struct run *
run_of(const char *task_id)
{
	for (int i = 0; i < REPLAY_RUNNING_MAX; i++)
		if (rp.runs[i].used && strcmp(rp.runs[i].task_id, task_id) == 0)
			return &rp.runs[i];
	return NULL;
}

json_object *
replay_status(struct app *app, const char *task_id, int block_s, struct derr *e)
{
	int64_t end = mono_us() + (int64_t)block_s * 1000000;
	json_object *o = NULL;
	struct run *r;

	pthread_mutex_lock(&rp.mu);
	while ((r = run_of(task_id)) != NULL && r->running && !rp.stopped && mono_us() < end) {
		struct timespec ts;
		int64_t left = end - mono_us();

		clock_gettime(CLOCK_REALTIME, &ts);
		left = left > 500000 ? 500000 : left;
		ts.tv_sec += (time_t)(left / 1000000);
		ts.tv_nsec += (long)(left % 1000000) * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&rp.cv, &rp.mu, &ts);
	}
	if (r != NULL && r->snap != NULL)
		o = json_tokener_parse(r->snap);
	pthread_mutex_unlock(&rp.mu);
	if (o != NULL)
		return o;
	if (replay_state_get(app->store, task_id, &o, e) != 0)
		return NULL;
	if (o == NULL)
		derr_set(e, DERR_NOT_FOUND, "task_id", "task %s is no replay", task_id);
	else if (strcmp(sget(o, "status"), "running") == 0)
		interrupted_set(o, -1, LOST_WHY);       /* no run of it here: not running (replay_init missed it) */
	return o;
}

/* A replay left "running" by a detmd that ended under it: interrupted,
 * its task cancelled (it is not running, and its display is gone). */
static void
sweep_one(struct app *app, const char *id)
{
	struct task_patch p = { .status = TASK_CANCELLED };
	json_object *o = NULL, *meta = NULL, *n;
	struct derr e;
	char msg[600];
	int st = -1;

	if (replay_state_get(app->store, id, &o, &e) != 0 || o == NULL)
		goto out;
	interrupted_set(o, -1, LOST_WHY);
	n = json_object_object_get(o, "interrupted");
	if (replay_state_set(app->store, id, o, &e) != 0) {
		log_warn("replay %s: could not mark it interrupted: %s", id, e.message);
		goto out;
	}
	log_info("replay %s was running when detmd ended: interrupted at step %d", id,
	    json_object_get_int(json_object_object_get(n, "step")));
	if (task_meta(app->store, id, &st, &meta, &e) != 0 || task_status_final(st))
		goto out;
	interrupted_msg(msg, sizeof msg, sget(o, "source"), o);
	p.message = msg;
	if (task_update(app->store, id, &p, &e) != 0)
		log_warn("replay %s: could not end its task: %s", id, e.message);
out:
	json_object_put(meta);
	json_object_put(o);
}

int
replay_init(struct app *app, struct derr *e)
{
	json_object *ids = NULL;

	pthread_mutex_lock(&rp.mu);
	rp.stopped = false;
	pthread_mutex_unlock(&rp.mu);
	if (replay_running_ids(app->store, &ids, e) != 0)
		return -1;
	for (size_t i = 0; i < jx_alen(ids); i++)
		sweep_one(app, json_object_get_string(json_object_array_get_idx(ids, i)));
	json_object_put(ids);
	return 0;
}

void
replay_shutdown(void)
{
	pthread_mutex_lock(&rp.mu);
	rp.stopped = true;
	for (int i = 0; i < REPLAY_RUNNING_MAX; i++)
		if (rp.runs[i].used)
			atomic_store(&rp.runs[i].stop, 1);
	pthread_mutex_unlock(&rp.mu);
	for (int i = 0; i < REPLAY_RUNNING_MAX; i++) {
		struct run *r = &rp.runs[i];

		if (r->used && !r->joined) {
			pthread_join(r->th, NULL);
			r->joined = true;
		}
		json_object_put(r->steps);
		json_object_put(r->params);
		json_object_put(r->state);
		free(r->snap);
		r->snap = NULL;
		r->steps = r->params = r->state = NULL;
	}
}
