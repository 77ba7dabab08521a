/*
 * takeover.c - the driver of each task's display (takeover.h): a table-driven
 * state machine per task, the gate the agent's input paths call, the idle
 * timer, and the counters that become the agent's summary on release.
 *
 * Owns: a list of `struct drv` under `mu`, one per task whose driver is not
 * the plain agent (helping or human); an entry goes away when the task is
 * back to `agent`. The idle thread (one) releases humans who stopped typing
 * and clicking for idle_s.
 *
 * Invariants (takeover_check): a task has at most one entry; no entry is in
 * state agent; a human entry has a lease id and a start time; only a human
 * entry has input in flight or counts; a helping entry has a request id; no
 * two human entries share a display key. Thread messages are written while
 * `mu` is held, so the thread shows takeover, the human's actions and the
 * release in the order they happened; release waits for input in flight.
 *
 * Not here: injecting the input (takeover_input.c), HTTP (api_takeover.c).
 */
#include "takeover.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/jx.h"
#include "core/log.h"
#include "takeover_int.h"
#include "task/events.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "task/wake.h"
#include "x11/display.h"
#include "x11/xwin.h"

static const char *const state_names[TAKEOVER__STATES] = { "agent", "helping", "human" };

/* moves[from][event]: the next state + 1 (0: refused). */
static const signed char moves[TAKEOVER__STATES][TKE__EVENTS] = {
	[TAKEOVER_AGENT] = { [TKE_TAKEOVER] = TAKEOVER_HUMAN + 1, [TKE_HELP] = TAKEOVER_HELPING + 1,
	    [TKE_TASK_END] = TAKEOVER_AGENT + 1 },
	[TAKEOVER_HELPING] = { [TKE_TAKEOVER] = TAKEOVER_HUMAN + 1, [TKE_HELP] = TAKEOVER_HELPING + 1,
	    [TKE_RELEASE] = TAKEOVER_AGENT + 1, [TKE_FORCE] = TAKEOVER_AGENT + 1,
	    [TKE_TASK_END] = TAKEOVER_AGENT + 1 },
	[TAKEOVER_HUMAN] = { [TKE_RELEASE] = TAKEOVER_AGENT + 1, [TKE_FORCE] = TAKEOVER_AGENT + 1,
	    [TKE_IDLE] = TAKEOVER_AGENT + 1, [TKE_TASK_END] = TAKEOVER_AGENT + 1,
	    [TKE_HELP] = TAKEOVER_HUMAN + 1 },
};

struct drv {
	char task_id[ID_LEN];
	char key[ID_LEN];           /* the display: the task id, "" for the shared one */
	char display[16];
	int state;
	char lease[SECRET_LEN];     /* human only: secret_new, never shown but to the taker */
	int64_t since_ms, last_us;
	char *reason;
	bool allow_shots, releasing;
	int inflight;
	struct takeover_counts n;
	long typed;                 /* an open run of typed text, not yet audited */
	unsigned long *wins;        /* top-level windows at takeover */
	size_t nwins;
	char help_id[ID_LEN];       /* helping (and human, if it was asked for) */
	char *help_reason, *help_instr;
	int64_t help_ms;
	struct drv *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct drv *drivers;
static atomic_int nhuman;       /* human entries: the gate's fast path */
static struct store *store;
static long idle_s;
static bool stopping, started;
static pthread_t timer;

int
takeover_next(int from, int ev)
{
	if (from < 0 || from >= TAKEOVER__STATES || ev < 0 || ev >= TKE__EVENTS)
		return -1;
	return moves[from][ev] - 1;
}

const char *
takeover_state_name(int st)
{
	return st >= 0 && st < TAKEOVER__STATES ? state_names[st] : "unknown";
}

static struct drv *
find(const char *task_id)
{
	struct drv *d;

	for (d = drivers; d != NULL; d = d->next)
		if (strcmp(d->task_id, task_id) == 0)
			return d;
	return NULL;
}

static void
drv_free(struct drv *d)
{
	if (d == NULL)
		return;
	free(d->reason);
	free(d->wins);
	free(d->help_reason);
	free(d->help_instr);
	free(d);
}

/* True when lease is d's (a human's): compared in constant time. */
static bool
lease_is(const struct drv *d, const char *lease)
{
	unsigned char diff = 0;

	if (lease == NULL || strlen(lease) != SECRET_LEN - 1 || strlen(d->lease) != SECRET_LEN - 1)
		return false;
	for (size_t i = 0; i < SECRET_LEN - 1; i++)
		diff |= (unsigned char)(lease[i] ^ d->lease[i]);
	return diff == 0;
}

static void
unlink_drv(struct drv *d)
{
	struct drv **pp;

	for (pp = &drivers; *pp != NULL; pp = &(*pp)->next)
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	if (d->state == TAKEOVER_HUMAN)
		atomic_fetch_sub(&nhuman, 1);
	drv_free(d);
}

bool
takeover_check(char *why, size_t cap)
{
	const struct drv *d, *o;
	static const struct takeover_counts zero;

	for (d = drivers; d != NULL; d = d->next) {
		bool human = d->state == TAKEOVER_HUMAN;

		if (d->state <= TAKEOVER_AGENT || d->state >= TAKEOVER__STATES)
			return snprintf(why, cap, "task %s: entry in state %d", d->task_id, d->state), false;
		if (human != (strlen(d->lease) == SECRET_LEN - 1 && d->since_ms > 0))
			return snprintf(why, cap, "task %s: lease/start do not match %s", d->task_id,
			    state_names[d->state]), false;
		if (!human && (d->inflight != 0 || memcmp(&d->n, &zero, sizeof zero) != 0))
			return snprintf(why, cap, "task %s: input counted while %s", d->task_id,
			    state_names[d->state]), false;
		if (d->inflight < 0)
			return snprintf(why, cap, "task %s: %d input batches in flight", d->task_id,
			    d->inflight), false;
		if (d->state == TAKEOVER_HELPING && !id_valid(d->help_id))
			return snprintf(why, cap, "task %s: helping without a request id", d->task_id), false;
		for (o = d->next; o != NULL; o = o->next) {
			if (strcmp(o->task_id, d->task_id) == 0)
				return snprintf(why, cap, "task %s: two entries", d->task_id), false;
			if (human && o->state == TAKEOVER_HUMAN && strcmp(o->key, d->key) == 0)
				return snprintf(why, cap, "tasks %s and %s: two humans on one display",
				    d->task_id, o->task_id), false;
		}
	}
	return true;
}

/* After each transition (mu held). */
static void
checked(const char *what)
{
	char why[256];

	if (!takeover_check(why, sizeof why))
		log_error("takeover invariant broken after %s: %s", what, why);
}

/* The display key a task's input reaches: its own display, else shared. */
static void
key_of(const char *task_id, char key[ID_LEN])
{
	snprintf(key, ID_LEN, "%s", task_id != NULL && display_has(task_id) ? task_id : "");
}

/* Top-level window ids of the display task_id uses (malloc'd), or -1. */
static int
windows(const char *task_id, unsigned long **ids, size_t *n, char name[16], struct derr *e)
{
	struct display_lease l;
	struct xwin *w = NULL;
	size_t i;
	int rc;

	*ids = NULL;
	*n = 0;
	if (display_lease(task_id, DISPLAY_TASK_OR_SHARED, &l, e) != 0)
		return -1;
	if (name != NULL)
		snprintf(name, 16, "%s", l.name);
	rc = xwin_list(l.d, &w, n, e);
	display_unlease(&l);
	if (rc != 0)
		return -1;
	*ids = xcalloc(*n ? *n : 1, sizeof **ids);
	for (i = 0; i < *n; i++)
		(*ids)[i] = w[i].id;
	free(w);
	return 0;
}

static bool
has_id(const unsigned long *ids, size_t n, unsigned long id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static const char *
since_text(int64_t ms, char out[ISO_TIME_LEN])
{
	iso_time(ms, out);
	return out;
}

/* The audit action's input (a `human` action): actor, event and details. */
static char *
audit_input(const char *event, const char *k1, const char *v1, const char *k2, json_object *v2)
{
	json_object *o = json_object_new_object();
	char *s;

	json_object_object_add(o, "actor", json_object_new_string("human"));
	json_object_object_add(o, "event", json_object_new_string(event));
	jx_add_str(o, k1, v1);
	if (k2 != NULL)
		json_object_object_add(o, k2, v2);
	s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

static int
note(const char *task_id, const char *msg, const char *summary, char *input, struct derr *e)
{
	struct action_new a = { .type = "human", .summary = summary, .status = "completed",
	    .input_json = input, .duration_ms = -1 };
	int rc = task_driver_note(store, task_id, msg, &a, e);

	free(input);
	return rc;
}

static int
live_task(const char *task_id, struct derr *e)
{
	json_object *meta;
	int st;

	if (task_meta(store, task_id, &st, &meta, e) != 0)
		return -1;
	json_object_put(meta);
	if (task_status_final(st))
		return derr_set(e, DERR_CONFLICT, "task_id", "task %s is %s: there is no desktop to hand "
		    "over", task_id, task_status_name(st));
	return 0;
}

/* A number printed with one decimal. */
static json_object *
num1(double v)
{
	char s[32];

	snprintf(s, sizeof s, "%.1f", v);
	return json_object_new_double_s(v, s);
}

static json_object *
drv_json(const struct drv *d)
{
	json_object *o = json_object_new_object(), *h;

	json_object_object_add(o, "driver", json_object_new_string(d ? d->state == TAKEOVER_HUMAN ?
	    "human" : "agent" : "agent"));
	json_object_object_add(o, "state", json_object_new_string(d ? state_names[d->state] : "agent"));
	if (d == NULL)
		return o;
	if (d->state == TAKEOVER_HUMAN) {
		jx_add_time(o, "since", d->since_ms);
		jx_add_str(o, "reason", d->reason);
		jx_add_str(o, "display", d->display);
		json_object_object_add(o, "allow_screenshots", json_object_new_boolean(d->allow_shots));
		json_object_object_add(o, "idle_s", num1((double)(mono_us() - d->last_us) / 1e6));
	}
	if (d->help_id[0] != '\0') {
		h = json_object_new_object();
		jx_add_str(h, "request_id", d->help_id);
		jx_add_str(h, "reason", d->help_reason);
		jx_add_str(h, "instructions", d->help_instr);
		jx_add_time(h, "at", d->help_ms);
		json_object_object_add(o, "help", h);
		json_object_object_add(o, "needs_human", json_object_new_boolean(d->state != TAKEOVER_HUMAN));
	}
	return o;
}

json_object *
takeover_status(const char *task_id)
{
	json_object *o;

	pthread_mutex_lock(&mu);
	o = drv_json(task_id ? find(task_id) : NULL);
	pthread_mutex_unlock(&mu);
	return o;
}

/* Someone else drives the display key (mu held): CONFLICT. */
static int
display_busy(const struct drv *self, const char *key, struct derr *e)
{
	char at[ISO_TIME_LEN];

	for (const struct drv *d = drivers; d != NULL; d = d->next)
		if (d != self && d->state == TAKEOVER_HUMAN && strcmp(d->key, key) == 0)
			return derr_set(e, DERR_CONFLICT, "task_id", "a human already drives this display "
			    "(%s, taken over for task %s at %s); one human driver per display: watch "
			    "read-only or release it first", d->display, d->task_id, since_text(d->since_ms, at));
	return 0;
}

/* mu held: the entry turns human and the thread says so. */
static int
become_human(struct drv *d, const char *reason, bool allow, struct derr *e)
{
	char *msg, *sum;
	int rc;

	msg = xasprintf("Operator took over the desktop (display %s)%s%s. The agent's input is "
	    "refused until the operator hands it back%s.", d->display, reason ? ": " : "",
	    reason ? reason : "", allow ? "" : "; its screenshots too");
	sum = xasprintf("human: took over the desktop%s%s", reason ? " — " : "", reason ? reason : "");
	rc = note(d->task_id, msg, sum, audit_input("takeover", "reason", reason, NULL, NULL), e);
	free(msg);
	free(sum);
	if (rc != 0)
		return -1;
	d->state = TAKEOVER_HUMAN;
	secret_new(d->lease);
	d->since_ms = now_ms();
	d->last_us = mono_us();
	free(d->reason);
	d->reason = reason ? xstrdup(reason) : NULL;
	d->allow_shots = allow;
	atomic_fetch_add(&nhuman, 1);
	return 0;
}

/* After the human took over: waits for the display's lease once. An agent
 * step checks the gate under that lease (desktop_lease_agent), so one that
 * passed it before the takeover has finished when this returns, and every
 * later one sees the human: nothing of the agent's lands after the
 * takeover's reply. */
static void
drain_agent(const char *task_id)
{
	struct display_lease l;
	struct derr e;

	if (display_lease(task_id, DISPLAY_TASK_OR_SHARED, &l, &e) == 0)
		display_unlease(&l);
}

json_object *
takeover_start(const char *task_id, const char *reason, bool allow_shots, struct derr *e)
{
	struct drv *d, *made = NULL;
	unsigned long *wins;
	size_t nwins;
	char key[ID_LEN], name[16];
	json_object *o = NULL;

	if (live_task(task_id, e) != 0 || windows(task_id, &wins, &nwins, name, e) != 0)
		return NULL;
	key_of(task_id, key);
	pthread_mutex_lock(&mu);
	d = find(task_id);
	if (d != NULL && takeover_next(d->state, TKE_TAKEOVER) < 0) {
		char at[ISO_TIME_LEN];

		derr_set(e, DERR_CONFLICT, "task_id", "a human already drives task %s (since %s): one "
		    "human driver per display; this browser can watch read-only", task_id,
		    since_text(d->since_ms, at));
		goto out;
	}
	if (display_busy(d, key, e) != 0)
		goto out;
	if (d == NULL) {
		d = made = xcalloc(1, sizeof *d);
		snprintf(d->task_id, sizeof d->task_id, "%s", task_id);
	}
	snprintf(d->key, sizeof d->key, "%s", key);
	snprintf(d->display, sizeof d->display, "%s", name);
	if (become_human(d, reason, allow_shots, e) != 0) {
		drv_free(made);
		goto out;
	}
	if (made != NULL) {
		made->next = drivers;
		drivers = made;
	}
	d->wins = wins;
	d->nwins = nwins;
	wins = NULL;
	o = drv_json(d);
	jx_add_str(o, "task_id", task_id);
	jx_add_str(o, "lease", d->lease);
	checked("takeover");
out:
	pthread_mutex_unlock(&mu);
	free(wins);
	if (o != NULL) {
		drain_agent(task_id);
		events_publish("takeover", "created", task_id, NULL);
	}
	return o;
}

/* The summary of a human's turn, for the thread, the reply and the wake. */
struct summary {
	double secs;
	struct takeover_counts n;
	long opened, closed;        /* -1: unknown (the display is gone) */
	char *reason;
};

static json_object *
summary_json(const char *task_id, const struct summary *s, const char *note_text, int ev)
{
	json_object *o = json_object_new_object();

	jx_add_str(o, "task_id", task_id);
	json_object_object_add(o, "driver", json_object_new_string("agent"));
	json_object_object_add(o, "ended_by", json_object_new_string(ev == TKE_IDLE ? "idle_timeout" :
	    ev == TKE_TASK_END ? "task_ended" : ev == TKE_FORCE ? "forced_release" : "release"));
	json_object_object_add(o, "forced", json_object_new_boolean(ev == TKE_FORCE));
	json_object_object_add(o, "duration_s", num1(s->secs));
	json_object_object_add(o, "clicks", json_object_new_int64(s->n.clicks));
	json_object_object_add(o, "keystrokes", json_object_new_int64(s->n.keystrokes));
	json_object_object_add(o, "chords", json_object_new_int64(s->n.chords));
	json_object_object_add(o, "scrolls", json_object_new_int64(s->n.scrolls));
	json_object_object_add(o, "drags", json_object_new_int64(s->n.drags));
	json_object_object_add(o, "windows_opened", s->opened < 0 ? NULL : json_object_new_int64(s->opened));
	json_object_object_add(o, "windows_closed", s->closed < 0 ? NULL : json_object_new_int64(s->closed));
	jx_add_str(o, "note", note_text);
	jx_add_str(o, "takeover_reason", s->reason);
	return o;
}

static char *
summary_text(const struct summary *s, const char *note_text, int ev)
{
	char win[96];

	if (s->opened < 0)
		snprintf(win, sizeof win, "windows not counted (the display is gone)");
	else
		snprintf(win, sizeof win, "%ld window(s) opened, %ld closed", s->opened, s->closed);
	return xasprintf("%s after %.0f s: %ld click(s), %ld keystroke(s), %ld key chord(s), "
	    "%ld scroll(s), %ld drag(s), %s.%s%s%s",
	    ev == TKE_IDLE ? "The takeover ended by itself (no human input for the idle timeout, "
	    "ACU_TAKEOVER_IDLE_S)" : ev == TKE_TASK_END ? "The takeover ended with the task" :
	    ev == TKE_FORCE ? "The takeover was FORCED to end without the human's lease "
	    "(release with force:true, not from the browser that took over)" :
	    "Operator handed the desktop back", s->secs, s->n.clicks, s->n.keystrokes, s->n.chords,
	    s->n.scrolls, s->n.drags, win, note_text ? " Note: " : "", note_text ? note_text : "",
	    ev == TKE_TASK_END ? "" : " The agent drives again.");
}

/* mu held, d human and drained: counts the windows (without mu), writes
 * the release. */
static json_object *
hand_back(struct drv *d, const char *note_text, int ev, char **text, struct derr *e)
{
	struct summary s = { .secs = (double)(now_ms() - d->since_ms) / 1000.0, .n = d->n,
	    .opened = -1, .closed = -1 };
	unsigned long *now = NULL, *before = d->wins;
	size_t nnow = 0, nbefore = d->nwins, i;
	struct derr we;
	char *sum;
	json_object *o;

	pthread_mutex_unlock(&mu);
	if (windows(d->task_id, &now, &nnow, NULL, &we) == 0) {
		s.opened = s.closed = 0;
		for (i = 0; i < nnow; i++)
			s.opened += !has_id(before, nbefore, now[i]);
		for (i = 0; i < nbefore; i++)
			s.closed += !has_id(now, nnow, before[i]);
	}
	free(now);
	pthread_mutex_lock(&mu);
	if (d->typed > 0) {         /* the last run of text, as a count */
		char *ts = xasprintf("human: typed %ld character%s", d->typed, d->typed == 1 ? "" : "s");
		struct action_new a = { .type = "human", .summary = ts, .status = "completed",
		    .input_json = "{\"actor\":\"human\"}", .duration_ms = -1 };
		char aid[ID_LEN];
		int64_t ord;

		if (task_action_add(store, d->task_id, &a, aid, &ord, &we) != 0)
			log_warn("task %s: human typing not audited: %s", d->task_id, we.message);
		free(ts);
	}
	s.reason = d->reason;
	*text = summary_text(&s, note_text, ev);
	o = summary_json(d->task_id, &s, note_text, ev);
	sum = xasprintf("human: %s (%.0f s, %ld clicks, %ld keystrokes)", ev == TKE_FORCE ?
	    "takeover FORCED to end without the lease" : "handed the desktop back", s.secs,
	    s.n.clicks, s.n.keystrokes);
	if (note(d->task_id, *text, sum, audit_input(ev == TKE_FORCE ? "forced_release" : "release",
	    "note", note_text, "summary", json_object_get(o)), e) != 0 &&
	    (ev == TKE_RELEASE || ev == TKE_FORCE))
		log_warn("task %s: the release was not written: %s", d->task_id, e->message);
	free(sum);
	return o;
}

json_object *
takeover_release(const char *task_id, const char *lease, const char *note_text, int ev,
    struct derr *e)
{
	struct drv *d;
	json_object *o = NULL;
	char *text = NULL;

	pthread_mutex_lock(&mu);
	d = find(task_id);
	if (d == NULL || takeover_next(d->state, ev) < 0 || d->releasing) {
		derr_set(e, DERR_CONFLICT, "task_id", "no human drives task %s: nothing to release "
		    "(the agent drives)", task_id);
		goto out;
	}
	if (d->state == TAKEOVER_HUMAN && ev == TKE_RELEASE && !lease_is(d, lease)) {
		derr_set(e, DERR_FORBIDDEN, "lease", "%s: only the browser that took task %s over may "
		    "hand it back (send the lease its POST .../takeover returned); an operator can end "
		    "it anyway with {\"force\":true}, which is recorded as a forced release", lease == NULL ||
		    lease[0] == '\0' ? "no lease given" : "this lease does not hold the takeover", task_id);
		goto out;
	}
	if (d->state == TAKEOVER_HELPING) {   /* the operator dismisses the request */
		char *msg = xasprintf("Operator dismissed the request for a human%s%s.",
		    note_text ? ": " : "", note_text ? note_text : "");

		if (ev != TKE_TASK_END)
			json_object_put(task_message_add(store, task_id, "system", "control", msg, e));
		free(msg);
		o = drv_json(NULL);
		unlink_drv(d);
		goto out;
	}
	d->releasing = true;
	while (d->inflight > 0)
		pthread_cond_wait(&cv, &mu);
	o = hand_back(d, note_text, ev, &text, e);
	unlink_drv(d);
	checked("release");
out:
	pthread_mutex_unlock(&mu);
	if (o != NULL) {
		events_publish("takeover", "deleted", task_id, NULL);
		if (text != NULL)
			wake_post("human_released", task_id, text, json_object_get(o));
	}
	free(text);
	return o;
}

json_object *
takeover_help(const char *task_id, const char *reason, const char *instructions, struct derr *e)
{
	struct drv *d, *made = NULL;
	json_object *o = NULL, *m, *p;
	char *msg, *text;

	if (live_task(task_id, e) != 0)
		return NULL;
	msg = xasprintf("The agent asks for a human: %s%s%s", reason, instructions ? " — " : "",
	    instructions ? instructions : "");
	pthread_mutex_lock(&mu);
	if ((d = find(task_id)) == NULL) {
		d = made = xcalloc(1, sizeof *d);
		snprintf(d->task_id, sizeof d->task_id, "%s", task_id);
		d->state = TAKEOVER_AGENT;
	}
	if ((m = task_message_add(store, task_id, "agent", "help", msg, e)) == NULL) {
		drv_free(made);
		goto out;
	}
	json_object_put(m);
	d->state = takeover_next(d->state, TKE_HELP);
	id_new(d->help_id);
	free(d->help_reason);
	free(d->help_instr);
	d->help_reason = xstrdup(reason);
	d->help_instr = instructions ? xstrdup(instructions) : NULL;
	d->help_ms = now_ms();
	if (made != NULL) {
		made->next = drivers;
		drivers = made;
	}
	o = drv_json(d);
	jx_add_str(o, "task_id", task_id);
	jx_add_str(o, "request_id", d->help_id);
	checked("help");
out:
	pthread_mutex_unlock(&mu);
	if (o != NULL) {
		events_publish("takeover", "updated", task_id, NULL);
		events_publish("task", "updated", task_id, NULL);
		text = xasprintf("Task %s needs a human: %s", task_id, msg + strlen("The agent asks for a human: "));
		p = json_object_new_object();
		jx_add_str(p, "request_id", json_object_get_string(json_object_object_get(o, "request_id")));
		jx_add_str(p, "reason", reason);
		jx_add_str(p, "instructions", instructions);
		wake_post("human_needed", task_id, text, p);
		free(text);
	}
	free(msg);
	return o;
}

static int
gate(const char *task_id, bool look, struct derr *e)
{
	char key[ID_LEN], at[ISO_TIME_LEN];
	const struct drv *d;
	int rc = 0;

	if (atomic_load(&nhuman) == 0)
		return 0;
	key_of(task_id, key);
	pthread_mutex_lock(&mu);
	for (d = drivers; d != NULL; d = d->next) {
		if (d->state != TAKEOVER_HUMAN || strcmp(d->key, key) != 0 || (look && d->allow_shots))
			continue;
		rc = derr_set(e, DERR_HUMAN_CONTROL, "task_id", "A human is driving this desktop (display "
		    "%s, task %s) since %s (%.0f s ago)%s%s, so %s. You will be woken when they hand it "
		    "back; meanwhile wait (smart_wait, or poll task_summary until driver is agent).",
		    d->display, d->task_id, since_text(d->since_ms, at),
		    (double)(now_ms() - d->since_ms) / 1000.0, d->reason ? ": " : "",
		    d->reason ? d->reason : "", look ? "screenshots for the agent are refused (the "
		    "operator did not allow them)" : "your input was refused and nothing was done");
		break;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

int
takeover_gate(const char *task_id, struct derr *e)
{
	return gate(task_id, false, e);
}

int
takeover_gate_look(const char *task_id, struct derr *e)
{
	return gate(task_id, true, e);
}

int
takeover_live_interval_ms(const char *key)
{
	int ms = 0;

	if (atomic_load(&nhuman) == 0)
		return 0;
	pthread_mutex_lock(&mu);
	for (const struct drv *d = drivers; d != NULL && ms == 0; d = d->next)
		if (d->state == TAKEOVER_HUMAN && (strcmp(d->key, key) == 0 || strcmp(d->task_id, key) == 0))
			ms = mono_us() - d->last_us < 500000 ? TAKEOVER_LIVE_HOT_MS : TAKEOVER_LIVE_MS;
	pthread_mutex_unlock(&mu);
	return ms;
}

int
takeover_input_begin(const char *task_id, const char *lease, struct store **st, long *typed,
    struct derr *e)
{
	struct drv *d;
	int rc = -1;

	pthread_mutex_lock(&mu);
	d = find(task_id);
	if (d == NULL || d->state != TAKEOVER_HUMAN || d->releasing)
		derr_set(e, DERR_CONFLICT, "lease", "no human drives task %s: take it over first", task_id);
	else if (!lease_is(d, lease))
		derr_set(e, DERR_CONFLICT, "lease", "another browser drives task %s: this view is "
		    "read-only (one human driver per display)", task_id);
	else {
		d->inflight++;
		d->last_us = mono_us();
		*st = store;
		*typed = d->typed;
		d->typed = 0;
		rc = 0;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

void
takeover_input_end(const char *task_id, const struct takeover_counts *c, long typed)
{
	struct drv *d;

	pthread_mutex_lock(&mu);
	if ((d = find(task_id)) != NULL && d->inflight > 0) {
		d->inflight--;
		d->n.clicks += c->clicks;
		d->n.keystrokes += c->keystrokes;
		d->n.chords += c->chords;
		d->n.scrolls += c->scrolls;
		d->n.drags += c->drags;
		d->typed += typed;
		d->last_us = mono_us();
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
}

/* The idle timer: releases humans without input for idle_s. */
static void *
idle_loop(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	while (!stopping) {
		struct timespec ts;
		char due[ID_LEN] = "";

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&cv, &mu, &ts);
		for (const struct drv *d = drivers; d != NULL && !stopping; d = d->next)
			if (d->state == TAKEOVER_HUMAN && !d->releasing && d->inflight == 0 &&
			    mono_us() - d->last_us >= (int64_t)idle_s * 1000000)
				snprintf(due, sizeof due, "%s", d->task_id);
		if (due[0] != '\0') {
			struct derr e;
			json_object *o;

			pthread_mutex_unlock(&mu);
			log_info("task %s: takeover idle for %ld s, released", due, idle_s);
			o = takeover_release(due, NULL, NULL, TKE_IDLE, &e);
			json_object_put(o);
			pthread_mutex_lock(&mu);
		}
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void
on_task(const char *task_id, int from, int to, void *arg)
{
	struct derr e;
	bool gone = to == TASK_HOOK_DELETED;
	struct drv *d;

	(void)from;
	(void)arg;
	if (!gone && !task_status_final(to))
		return;
	if (gone) {
		pthread_mutex_lock(&mu);
		if ((d = find(task_id)) != NULL && d->inflight == 0 && !d->releasing)
			unlink_drv(d);
		pthread_mutex_unlock(&mu);
		return;
	}
	json_object_put(takeover_release(task_id, NULL, NULL, TKE_TASK_END, &e));
}

int
takeover_init(struct store *st, long idle, struct derr *e)
{
	int err;

	store = st;
	idle_s = idle;
	stopping = false;
	task_hook_add(on_task, NULL);
	if (idle_s <= 0)
		return 0;
	if ((err = pthread_create(&timer, NULL, idle_loop, NULL)) != 0)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot start the takeover timer: %s",
		    strerror(err));
	started = true;
	return 0;
}

void
takeover_shutdown(void)
{
	pthread_mutex_lock(&mu);
	stopping = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	if (started)
		pthread_join(timer, NULL);
	started = false;
	pthread_mutex_lock(&mu);
	while (drivers != NULL)
		unlink_drv(drivers);
	pthread_mutex_unlock(&mu);
}
