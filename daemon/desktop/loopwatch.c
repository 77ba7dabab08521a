/*
 * loopwatch.c - loop detection's glue: logged actions in, loop events,
 * wake-ups and pauses out. See loopwatch.h.
 *
 * Owns: the table of per-task detector states (LOOPWATCH_TASKS, the least
 * recently used one dropped for a new task) under one mutex, held only
 * while a state is fed; never while writing, waking or pausing.
 *
 * Invariants: the hook always takes the thread's screen signature (so a
 * stale one never reaches a later row); an action without an effect
 * verdict is no input (it counts only for its plan item); a `human`
 * action or a status change forgets the task's runs.
 *
 * Does not: decide what a loop is (task/loopdet.c) or write rows itself
 * (task/loop_rows.c).
 */
#include "loopwatch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "core/log.h"
#include "effect.h"
#include "takeover.h"
#include "task/completion.h"
#include "task/loopdet.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "task/wake.h"

#define TARGET_MAX 512

struct slot {
	char task_id[ID_LEN];
	struct loopdet *d;
	int64_t used;
};

static struct {
	pthread_mutex_t mu;
	const struct app *app;
	struct loopdet_opts o;
	struct slot slots[LOOPWATCH_TASKS];
	int64_t tick;
	atomic_bool on;
} lw = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* mu held: task_id's state, made (the least recently used dropped) when
 * make; NULL when none (or out of memory). */
static struct loopdet *
state_of(const char *task_id, bool make)
{
	struct slot *old = NULL;

	for (int i = 0; i < LOOPWATCH_TASKS; i++) {
		struct slot *s = &lw.slots[i];

		if (s->d != NULL && strcmp(s->task_id, task_id) == 0) {
			s->used = ++lw.tick;
			return s->d;
		}
		if (old == NULL || (old->d != NULL && (s->d == NULL || s->used < old->used)))
			old = s;
	}
	if (!make)
		return NULL;
	loopdet_free(old->d);
	snprintf(old->task_id, sizeof old->task_id, "%s", task_id);
	old->d = loopdet_new();
	old->used = ++lw.tick;
	return old->d;
}

static void
forget(const char *task_id)
{
	struct loopdet *d;

	pthread_mutex_lock(&lw.mu);
	if ((d = state_of(task_id, false)) != NULL)
		loopdet_reset(d);
	pthread_mutex_unlock(&lw.mu);
}

/* Parameters that change nothing about what an input is aimed at. */
static bool
volatile_key(const char *k)
{
	static const char *const keys[] = { "action", "tool", "x", "y", "task_id", "settle_ms",
		"expect", "observe", "image_coords", NULL };

	for (size_t i = 0; keys[i] != NULL; i++)
		if (strcmp(k, keys[i]) == 0)
			return true;
	return false;
}

/* The input's name, point and target (its other parameters as JSON). */
static void
parse_input(json_object *in, const char *type, struct loopdet_act *a, char *target, size_t cap)
{
	json_object *rest = json_object_new_object(), *v;

	a->name = type != NULL ? type : "action";
	if (json_object_is_type(in, json_type_object)) {
		if ((json_object_object_get_ex(in, "action", &v) || json_object_object_get_ex(in, "tool", &v)) &&
		    json_object_is_type(v, json_type_string))
			a->name = json_object_get_string(v);
		if (json_object_object_get_ex(in, "x", &v) && json_object_is_type(v, json_type_int)) {
			a->has_point = true;
			a->x = json_object_get_int(v);
			a->y = json_object_object_get_ex(in, "y", &v) ? json_object_get_int(v) : 0;
		}
		json_object_object_foreach(in, k, val) {
			if (!volatile_key(k))
				json_object_object_add(rest, k, json_object_get(val));
		}
	}
	snprintf(target, cap, "%s", json_object_object_length(rest) > 0 ? jx_string(rest, NULL) : "");
	a->target = target;
	json_object_put(rest);
}

/* The task's limit: metadata loop_pause_after (an integer >= 0), else the
 * option. */
static long
pause_limit(const char *task_id, int *status)
{
	json_object *meta = NULL, *v;
	struct derr e;
	long limit = lw.app->cfg->loop_pause_after;

	*status = -1;
	if (task_meta(lw.app->store, task_id, status, &meta, &e) != 0)
		return 0;
	if (json_object_object_get_ex(meta, "loop_pause_after", &v) &&
	    json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0)
		limit = (long)json_object_get_int64(v);
	json_object_put(meta);
	return limit;
}

static void
pause_for_loops(const char *task_id, const struct loopdet_hit *h, int64_t count, long limit)
{
	char *why = xasprintf("%lld loop%s (the limit is %ld); the latest: %s", (long long)count,
	    count == 1 ? "" : "s", limit, h->sentence);
	char *help = xasprintf("detm's loop detection paused this task: %s.", why);
	json_object *r;
	struct derr e;

	if (task_control_by(lw.app->store, task_id, TASK_PAUSED, "Loop detection", why, &e) != 0)
		log_warn("loops: cannot pause task %s: %s", task_id, e.message);
	else if (loop_mark_paused(lw.app->store, task_id, &e) != 0)
		log_warn("loops: task %s: %s", task_id, e.message);
	r = takeover_help(task_id, help, "Look at the task's screen and its last actions: the agent "
	    "repeats itself without progress. Do the step it cannot, or tell it what to do "
	    "differently, then hand back and resume the task.", &e);
	if (r == NULL)
		log_warn("loops: cannot ask for a human on task %s: %s", task_id, e.message);
	json_object_put(r);
	free(why);
	free(help);
}

static void
on_loop(const char *task_id, const char *action_id, const struct loopdet_hit *h)
{
	struct loop_rec rec = { .hit = h, .action_id = action_id };
	json_object *p;
	struct derr e;
	char *text;
	long limit;
	int status;

	if (loop_record(lw.app->store, task_id, &rec, &e) != 0) {
		log_warn("loops: cannot record a loop on task %s: %s", task_id, e.message);
		return;
	}
	if (!rec.wrote)
		return;
	limit = pause_limit(task_id, &status);
	text = xasprintf("Task %s: loop detected: %s. Do something different (another target, "
	    "another way), check with a screenshot, or ask for a human (request_human).%s", task_id,
	    h->sentence, limit > 0 && rec.count >= limit && status == TASK_ACTIVE ?
	    " The task is paused: a human has been asked for." : "");
	p = json_object_new_object();
	jx_add_str(p, "signal", loopdet_signal_name(h->signal));
	jx_add_str(p, "what", h->what);
	json_object_object_add(p, "times", json_object_new_int(h->times));
	jx_add_time(p, "since", h->since_ms);
	json_object_object_add(p, "count", json_object_new_int64(rec.count));
	json_object_object_add(p, "action_id", action_id ? json_object_new_string(action_id) : NULL);
	log_info("loops: %s", text);
	wake_post("task_loop", task_id, text, p);
	free(text);
	if (limit > 0 && rec.count >= limit && status == TASK_ACTIVE)
		pause_for_loops(task_id, h, rec.count, limit);
}

static void
on_action(const struct task_action_note *n, void *arg)
{
	const struct action_new *a = n->a;
	uint8_t sig[LOOPDET_SIG_N];
	bool has_sig = effect_take_sig(sig), hit = false;
	struct loopdet_act in = { .ordinal = n->ordinal, .at_ms = now_ms() };
	struct loopdet_hit h;
	struct loopdet *d;
	char target[TARGET_MAX];
	json_object *ij;

	(void)arg;
	if (!lw.on)
		return;
	if (a->type != NULL && strcmp(a->type, "human") == 0) {
		forget(n->task_id);
		return;
	}
	in.effect = completion_effect(a->output_json);
	in.input = in.effect != NULL;
	ij = a->input_json != NULL ? json_tokener_parse(a->input_json) : NULL;
	parse_input(ij, a->type, &in, target, sizeof target);
	in.sig = has_sig && in.input ? sig : NULL;
	pthread_mutex_lock(&lw.mu);
	if (lw.on && (d = state_of(n->task_id, true)) != NULL)
		hit = loopdet_feed(d, &lw.o, &in, &h);
	pthread_mutex_unlock(&lw.mu);
	json_object_put(ij);
	if (hit)
		on_loop(n->task_id, n->action_id, &h);
}

static void
on_status(const char *task_id, int from, int to, void *arg)
{
	(void)arg;
	if (from != to)
		forget(task_id);
}

int
loopwatch_init(const struct app *app, struct derr *e)
{
	const struct config *c = app->cfg;

	(void)e;
	lw.app = app;
	lw.o = (struct loopdet_opts){ .repeats = (int)c->loop_repeats, .noops = (int)c->loop_noops,
		.item_factor = (int)c->loop_item_factor, .item_min = (int)c->loop_item_min,
		.px = (int)c->loop_px };
	lw.on = c->loop_detection;
	task_action_hook_set(on_action, NULL);
	task_hook_add(on_status, NULL);
	return 0;
}

void
loopwatch_shutdown(void)
{
	pthread_mutex_lock(&lw.mu);
	lw.on = false;
	for (int i = 0; i < LOOPWATCH_TASKS; i++) {
		loopdet_free(lw.slots[i].d);
		lw.slots[i].d = NULL;
	}
	pthread_mutex_unlock(&lw.mu);
}
