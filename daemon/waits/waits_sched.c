/*
 * waits_sched.c - the smart-wait scheduler: the thread that queues due
 * jobs and times them out, the XDamage peeks that turn drawing into due
 * ticks, the worker pool, the backend health thread, and one tick of a job.
 *
 * Owns: when a job runs next (next_us, wake, the damage counters it peeks)
 * and, while a worker runs a job, that job's frame buffers (nobody else
 * touches them). States and invariants are waits.c's: a job is scheduled,
 * queued (in waits_engine.queue, which only ever holds jobs of the table), running
 * (one worker) or done; the scheduler never queues a done, queued or
 * running job; a worker that finds its job done after a tick hands it to
 * wjob_release_locked.
 *
 * One tick, step by step: lease the display; skip when XDamage saw nothing
 * drawn since the frame last judged; grab the thumbnail and gate it
 * against the one last judged; passthrough tracks movement, a judge skips
 * an unchanged screen judged recently; else the frame is judged
 * (waits_judge.c) outside any lock and lease, and the verdict recorded.
 *
 * The OCR re-read: OCR reads the regions that changed (widened to their
 * lines); when that says NO, the wait owes one read of the whole target
 * (j->reread), due REREAD_US later, which neither XDamage nor the gate may
 * skip: text replaced in place on a screen that then stays still is read
 * in full once, instead of never again. A tick that finds the screen still
 * changing reads changed regions again and keeps the debt (the usual
 * intervals and drawing bring the next tick), for at most REREAD_MAX_US; a
 * whole read pays it, whatever it says.
 *
 * OCR at most once a second (OCR_MIN_US): a busy screen (a terminal that
 * scrolls, a clock) wakes a text wait at every drawing; a tick sooner than
 * a second after the last judgement is put off to that second before it
 * grabs anything (tick_soon: that tick compares with the frame last
 * judged, so no drawing is lost), and a judgement the gate found due is
 * owed (j->ocr_owed), so neither XDamage nor the gate skips it. A forced
 * re-evaluation is not put off. What is read is shared: ocr_read_lines
 * keeps each text line's reading by its pixels, for every wait (issue 39).
 *
 * Does not: write rows (waits_store.c), decide which judge takes a
 * condition (waits_judge.c), or talk HTTP.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/vision.h"
#include "core/jx.h"
#include "core/log.h"
#include "desktop/desktop.h"
#include "desktop/expect.h"
#include "task/usage.h"
#include "waits_int.h"
#include "x11/display.h"
#include "x11/gate.h"
#include "x11/xcap.h"
#include "x11/xwin.h"

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
#define A11Y_POLL_US      1000000   /* an element condition: read the tree every second */
#define REREAD_US          300000   /* OCR said NO on changed regions: the whole target then */
#define REREAD_MAX_US    10000000   /* ... even if the screen still changes, after this long */
#define OCR_MIN_US        1000000   /* OCR judges a wait at most once a second (a busy screen) */

/* One tick: what it took under mu at its start, and what its steps share.
 * Each step returns the interval to the next tick, -1 when j finished, or
 * GO_ON for the next step. A step that returns anything else has given the
 * lease back. */
struct tick {
	struct job *j;
	const struct config *cfg;
	struct display_lease l;
	struct derr e;
	char *criteria;
	const char *cause;
	int64_t now;
	size_t npix;
	bool force, use_ocr, pass, changed_ref;
	bool reread;            /* an OCR re-read is owed: nothing skips this tick */
	bool owed;              /* an OCR judgement put off by OCR_MIN_US: nor this one */
	char reason[600];
};

#define GO_ON INT64_MIN
#define HUMAN_RETRY_US 1000000      /* a human drives the display: look again then */

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
	pthread_mutex_lock(&waits_engine.mu);
	waits_engine.health_kick = true;
	pthread_cond_signal(&waits_engine.health_cv);
	pthread_mutex_unlock(&waits_engine.mu);
}

/* Passthrough: resolved once the screen has changed since the wait began
 * and then stayed still for the settle period. */
static bool
pass_settled(struct tick *t)
{
	struct job *j = t->j;

	if (!j->changed_once || t->now - j->last_change_us < t->cfg->settle_s * 1000000LL)
		return false;
	snprintf(t->reason, sizeof t->reason, "the screen changed and then stayed still for %ld s "
	    "(passthrough: look for yourself)", t->cfg->settle_s);
	wstore_finish(j, "resolved", "CHANGED", t->reason);
	return true;
}

/* Step 1: lease the display; failing to counts towards wait_max_fails.
 * While a human drives it (takeover.h) the wait does not look (it judges
 * screens for the agent, which may not see a password being typed) unless
 * the operator allowed screenshots: it looks again a second later, and
 * that is no failure. */
static int64_t
tick_lease(struct tick *t)
{
	struct job *j = t->j;

	if (desktop_lease_agent(waits_engine.app, j->task_id[0] ? j->task_id : NULL, false, &t->l, &t->e) == 0)
		return GO_ON;
	if (t->e.code == DERR_HUMAN_CONTROL) {
		pthread_mutex_lock(&waits_engine.mu);
		j->human_skips++;
		pthread_mutex_unlock(&waits_engine.mu);
		return HUMAN_RETRY_US;
	}
	if (++j->fails >= t->cfg->wait_max_fails) {
		snprintf(t->reason, sizeof t->reason, "cannot watch the display: %.500s", t->e.message);
		wstore_finish(j, "failed", NULL, t->reason);
		return -1;
	}
	return backoff(j->fails);
}

/* Step 2: XDamage says nothing was drawn since the last grab: the frame is
 * the one we have; no grab, no model call (unless it is time for the
 * forced re-evaluation). */
static int64_t
tick_undrawn(struct tick *t)
{
	struct job *j = t->j;

	if (!(t->l.damage && j->damage_valid && t->l.damage_seq == j->damage_seen && j->ref != NULL &&
	    !t->force && !t->reread && !t->owed && (t->pass || (j->judged_valid && t->l.damage_seq == j->damage_judged) ||
	    t->now - j->last_eval_us < t->cfg->wait_rejudge_s * 1000000LL)))
		return GO_ON;
	display_unlease(&t->l);
	pthread_mutex_lock(&waits_engine.mu);
	j->skipped++;
	j->model_saved += !t->pass && !t->use_ocr;
	pthread_mutex_unlock(&waits_engine.mu);
	if (t->pass && pass_settled(t))
		return -1;
	return t->pass ? 1000000 : next_interval(j, t->now, false);
}

/* Step 2b: an OCR judgement less than OCR_MIN_US after the last one is put
 * off before any grab (a busy screen wakes the wait at every drawing): the
 * tick at that second grabs and compares with the frame last judged, so
 * drawing in between is not lost; nothing is owed. Forced re-evaluations
 * are not put off. */
static int64_t
tick_soon(struct tick *t)
{
	struct job *j = t->j;

	if (!t->use_ocr || t->pass || t->force || j->ref == NULL || t->now - j->last_eval_us >= OCR_MIN_US)
		return GO_ON;
	display_unlease(&t->l);
	pthread_mutex_lock(&waits_engine.mu);
	j->skipped++;
	pthread_mutex_unlock(&waits_engine.mu);
	j->ocr_owed = j->ocr_owed || t->owed;   /* a debt already owed stays owed */
	return j->last_eval_us + OCR_MIN_US - t->now;
}

/* Step 3: the greyscale thumbnail, compared with the one last judged. */
static int64_t
tick_thumb(struct tick *t)
{
	struct job *j = t->j;
	int r;

	j->damage_seen = t->l.damage_seq;
	j->damage_valid = t->l.damage;
	r = grab(&t->l, j->target, (int)t->cfg->diff_width, &j->thumb, &t->e);
	if (r != 0) {
		display_unlease(&t->l);
		if (r < 0 && ++j->fails >= t->cfg->wait_max_fails) {
			snprintf(t->reason, sizeof t->reason, "cannot capture %.64s: %.400s", j->target,
			    t->e.message);
			wstore_finish(j, "failed", NULL, t->reason);
			return -1;
		}
		pthread_mutex_lock(&waits_engine.mu);
		j->skipped++;
		snprintf(j->reason, sizeof j->reason, "%.500s",
		    r > 0 ? "the window is not there (yet)" : t->e.message);
		pthread_mutex_unlock(&waits_engine.mu);
		return MISSING_US;
	}
	t->npix = (size_t)j->thumb.width * (size_t)j->thumb.height;
	if (t->npix != j->npix) {  /* first tick, or the target changed size */
		free(j->ref);
		free(j->cur);
		free(j->prev);
		j->ref = j->prev = NULL;
		j->cur = xmalloc(t->npix);
		j->npix = t->npix;
		j->last_change_us = t->now;
	}
	gate_grey(&j->thumb, j->cur);
	t->changed_ref = j->ref == NULL || gate_diff(j->ref, j->cur, t->npix, GATE_PIXEL_THRESHOLD) >
	    (t->use_ocr ? GATE_TEXT_FRACTION : GATE_CHANGED_FRACTION);
	return GO_ON;
}

/* Step 4, passthrough (no model): track whether and when the screen moved. */
static int64_t
tick_pass(struct tick *t)
{
	struct job *j = t->j;
	size_t npix = t->npix;

	display_unlease(&t->l);
	if (j->ref == NULL) {
		j->ref = xmalloc(npix);
		j->prev = xmalloc(npix);
		memcpy(j->ref, j->cur, npix);
	} else {
		if (gate_diff(j->prev, j->cur, npix, GATE_PIXEL_THRESHOLD) > GATE_CHANGED_FRACTION)
			j->last_change_us = t->now;        /* still moving */
		if (t->changed_ref)
			j->changed_once = true;
	}
	memcpy(j->prev, j->cur, npix);
	pthread_mutex_lock(&waits_engine.mu);
	j->evaluations++;
	j->last_frame_ms = now_ms();
	pthread_mutex_unlock(&waits_engine.mu);
	return pass_settled(t) ? -1 : 1000000;
}

/* Step 4, with a judge: unchanged and recently judged is skipped (a
 * model call the gate saved); so is a model judgement the task's budget
 * holds back (usage.h: over its budget the wait watches without judging). */
static int64_t
tick_gate(struct tick *t)
{
	struct job *j = t->j;
	bool eval, held;

	if (t->changed_ref)
		j->last_change_us = t->now;
	eval = t->force || t->reread || t->owed || j->ref == NULL || t->changed_ref ||
	    t->now - j->last_eval_us >= t->cfg->wait_rejudge_s * 1000000LL;
	if (eval && t->use_ocr && !t->force && j->ref != NULL && t->now - j->last_eval_us < OCR_MIN_US) {
		display_unlease(&t->l);         /* a busy screen: OCR at most once a second */
		j->ocr_owed = true;
		pthread_mutex_lock(&waits_engine.mu);
		j->skipped++;
		pthread_mutex_unlock(&waits_engine.mu);
		return j->last_eval_us + OCR_MIN_US - t->now;
	}
	held = eval && !t->use_ocr && usage_scope(j->task_id, "wait", &t->e) != 0;
	if (eval && !held)
		return GO_ON;
	display_unlease(&t->l);
	pthread_mutex_lock(&waits_engine.mu);
	j->skipped++;
	j->model_saved += !held && !t->use_ocr;
	j->last_frame_ms = now_ms();
	pthread_mutex_unlock(&waits_engine.mu);
	return next_interval(j, t->now, false);
}

/* Step 5b: a judgement that failed counts towards wait_max_fails. */
static int64_t
judge_failed(struct tick *t)
{
	struct job *j = t->j;

	if (++j->fails >= t->cfg->wait_max_fails) {
		snprintf(t->reason, sizeof t->reason, "the %s backend failed %d times: %.400s",
		    t->use_ocr ? "ocr" : waits_engine.backend, j->fails, t->e.message);
		wstore_finish(j, "failed", "ERROR", t->reason);
		return -1;
	}
	log_warn("wait %s: evaluation failed (%d): %s", j->id, j->fails, t->e.message);
	if (!t->use_ocr && t->e.code == DERR_UNAVAILABLE)
		health_kick();
	return backoff(j->fails);
}

/* After an OCR NO: a read of changed regions only owes a whole read, due
 * REREAD_US later (woken as "reread"); owed already (the screen still
 * changes), the usual interval, drawing waking it sooner. A whole read
 * pays the debt. Returns the interval to the next tick. */
static int64_t
ocr_no(struct tick *t, bool partial, bool partial_verdict)
{
	struct job *j = t->j;

	if (!partial) {
		j->reread = false;
		return next_interval(j, t->now, partial_verdict);
	}
	if (j->reread)
		return next_interval(j, t->now, partial_verdict);
	j->reread = true;
	j->reread_us = t->now;
	pthread_mutex_lock(&waits_engine.mu);
	j->wake = "reread";
	pthread_mutex_unlock(&waits_engine.mu);
	return REREAD_US;
}

/* Step 5: the frame to judge (full resolution for OCR, <= frame_max_dim
 * for a model), judged with no lock and no lease; the verdict recorded.
 * An owed OCR re-read reads the whole target once the screen is still
 * (or REREAD_MAX_US after it was owed). */
static int64_t
tick_judge(struct tick *t)
{
	struct job *j = t->j;
	struct xcap_image jpeg = { 0 };
	struct vision_image img[2];
	struct vision_result vr;
	int64_t next;
	size_t nimg = 0;
	int r;
	bool whole = t->reread && (!t->changed_ref || t->now - j->reread_us >= REREAD_MAX_US);
	bool partial = false;

	if (whole)              /* whatever woke this tick (drawing may have), it is the re-read */
		t->cause = "reread";

	r = grab(&t->l, j->target, t->use_ocr ? 0 : (int)t->cfg->frame_max_dim, &j->full, &t->e);
	display_unlease(&t->l);
	if (r != 0 || (!t->use_ocr &&
	    xcap_encode(&j->full, XCAP_JPEG, (int)t->cfg->frame_quality, &jpeg, &t->e) != 0)) {
		xcap_image_free(&jpeg);
		xcap_frame_free(&j->full);
		return MISSING_US;
	}
	if (j->prev_jpeg != NULL) {
		img[nimg].jpeg = j->prev_jpeg;
		img[nimg++].len = j->prev_len;
	}
	img[nimg].jpeg = jpeg.data;
	img[nimg++].len = jpeg.len;
	if ((t->use_ocr ? wjudge_ocr(j, t->criteria, whole, &partial, &vr, &t->e) :
	    vision_eval_at(waits_engine.vision, t->criteria, (double)(now_ms() - j->created_ms) / 1e3, img, nimg,
	    &vr, &t->e)) != 0) {
		xcap_image_free(&jpeg);
		xcap_frame_free(&j->full);
		return judge_failed(t);
	}
	xcap_frame_free(&j->full);      /* 2.7 MB at 720p: not held between judgements (issue 39) */
	j->fails = 0;
	j->last_eval_us = t->now;
	j->damage_judged = j->damage_seen;
	j->judged_valid = j->damage_valid;
	if (j->ref == NULL)
		j->ref = xmalloc(t->npix);
	memcpy(j->ref, j->cur, t->npix);
	if (jpeg.data != NULL) {
		free(j->prev_jpeg);
		j->prev_jpeg = jpeg.data;
		j->prev_len = jpeg.len;
		jpeg.data = NULL;
	}
	if (wstore_judged(j, &vr, t->use_ocr, t->cause))
		next = -1;
	else
		next = t->use_ocr ? ocr_no(t, partial, vr.verdict == VISION_PARTIAL) :
		    next_interval(j, t->now, vr.verdict == VISION_PARTIAL);
	xcap_image_free(&jpeg);
	return next;
}

/* A tick of an element condition: the task display's tree, no lease, no
 * frame, no model; checked every poll_interval (default A11Y_POLL_US) and
 * whenever the display draws. */
static int64_t
tick_a11y(struct tick *t)
{
	struct job *j = t->j;
	struct vision_result vr;

	if (wjudge_a11y(j, t->criteria, &vr, &t->e) != 0) {
		t->use_ocr = true;      /* not the model's failure: no health check */
		return judge_failed(t);
	}
	j->fails = 0;
	j->last_eval_us = t->now;
	if (wstore_judged(j, &vr, true, t->cause))
		return -1;
	return j->poll_s > 0 ? (int64_t)(j->poll_s * 1e6) : A11Y_POLL_US;
}

/* A tick of a settled condition (desktop/expect.h): resolved once nothing
 * has drawn on the display for its N ms. Drawing is known from the
 * display's XDamage counter (display_lease.damage_seq): read at this
 * tick's lease and by the scheduler's peeks (dmg_last_us); a change is
 * dated when it was seen, never earlier, so the wait never resolves early.
 * No frame, no model, no OCR. */
static int64_t
tick_settled(struct tick *t, int ms)
{
	struct job *j = t->j;
	struct outcome o;
	int64_t last, next;
	int r = -1;
	bool yes;

	if ((next = tick_lease(t)) != GO_ON)
		return next;
	if (!t->l.damage) {
		display_unlease(&t->l);
		wstore_finish(j, "failed", "ERROR", "the display reports no drawing (no XDamage): settled "
		    "cannot be judged");
		return -1;
	}
	if (!j->damage_valid || t->l.damage_seq != j->damage_seen)
		j->last_change_us = t->now;     /* the first look, or drawing since the last */
	j->damage_seen = t->l.damage_seq;
	j->damage_valid = true;
	display_unlease(&t->l);
	/* The verdict and the finish in one hold of mu (waits_int.h: snapshots). */
	pthread_mutex_lock(&waits_engine.mu);
	last = j->dmg_last_us > j->last_change_us ? j->dmg_last_us : j->last_change_us;
	yes = t->now - last >= ms * 1000LL;
	j->evaluations++;
	j->last_frame_ms = now_ms();
	snprintf(j->verdict, sizeof j->verdict, "%s", yes ? "YES" : "NO");
	snprintf(j->reason, sizeof j->reason, "the display last drew %lld ms ago (settled needs %d ms)",
	    (long long)((t->now - last) / 1000), ms);
	snprintf(t->reason, sizeof t->reason, "nothing drew on the display for %d ms", ms);
	if (yes)
		r = wjob_finish_locked(j, "resolved", "YES", t->reason, &o);
	pthread_mutex_unlock(&waits_engine.mu);
	if (yes) {
		wstore_finish_rest(j, r, &o);
		return -1;
	}
	return last + ms * 1000LL - t->now;
}

/* Runs one tick of j (a worker owns it). Returns the interval to the next
 * tick, or -1 when j finished. */
static int64_t
tick(struct job *j)
{
	struct tick t = { .j = j, .cfg = waits_engine.app->cfg, .now = mono_us() };
	int64_t next;
	int settled_ms;

	pthread_mutex_lock(&waits_engine.mu);
	t.criteria = xstrdup(j->criteria);
	t.force = j->force;
	j->force = false;
	t.use_ocr = j->use_ocr;
	t.cause = j->wake != NULL ? j->wake : "poll";
	j->wake = NULL;
	j->peek_live = j->sched_valid;
	pthread_mutex_unlock(&waits_engine.mu);
	if (!t.use_ocr)         /* the condition went to the model since: nothing owed */
		j->reread = false;
	t.reread = j->reread;
	t.owed = j->ocr_owed && t.use_ocr;
	j->ocr_owed = false;
	t.pass = wjudge_passthrough(t.use_ocr);

	if (expect_settled(t.criteria, &settled_ms))
		next = tick_settled(&t, settled_ms);
	else if (wjudge_is_a11y(t.criteria))
		next = tick_a11y(&t);
	else if ((next = tick_lease(&t)) == GO_ON && (next = tick_undrawn(&t)) == GO_ON &&
	    (next = tick_soon(&t)) == GO_ON && (next = tick_thumb(&t)) == GO_ON) {
		if (t.pass)
			next = tick_pass(&t);
		else if ((next = tick_gate(&t)) == GO_ON)
			next = tick_judge(&t);
	}
	free(t.criteria);
	return next;
}

void *
wsched_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&waits_engine.mu);
	for (;;) {
		struct job *j;
		int64_t next;

		while (!waits_engine.stopping && waits_engine.qlen == 0)
			pthread_cond_wait(&waits_engine.work_cv, &waits_engine.mu);
		if (waits_engine.stopping)
			break;
		j = waits_engine.queue[waits_engine.qhead];
		waits_engine.qhead = (waits_engine.qhead + 1) % (size_t)waits_engine.app->cfg->max_waits;
		waits_engine.qlen--;
		j->queued = false;
		if (j->done) {
			wjob_release_locked(j);
			WAITS_CHECK_LOCKED();
			continue;
		}
		j->running = true;
		WAITS_CHECK_LOCKED();
		pthread_mutex_unlock(&waits_engine.mu);
		next = tick(j);
		pthread_mutex_lock(&waits_engine.mu);
		j->running = false;
		if (j->done) {
			wjob_release_locked(j);  /* else its finisher frees it */
			WAITS_CHECK_LOCKED();
			continue;
		}
		j->next_us = mono_us() + (next > 0 ? next : CHANGING_US);
		WAITS_CHECK_LOCKED();
		pthread_cond_signal(&waits_engine.sched_cv);
	}
	pthread_mutex_unlock(&waits_engine.mu);
	wjudge_thread_end();
	return NULL;
}

static void
health_refresh(void)
{
	json_object *h;

	if (waits_engine.ocr_mode) {
		h = json_object_new_object();
		jx_add_str(h, "backend", "ocr");
		json_object_object_add(h, "ok", json_object_new_boolean(1));
		jx_add_str(h, "model", "tesseract eng");
		jx_add_str(h, "detail", "in process; judges text conditions only");
	} else if (waits_engine.vision == NULL) {
		h = json_object_new_object();
		jx_add_str(h, "backend", waits_engine.backend);
		json_object_object_add(h, "ok", json_object_new_boolean(0));
		json_object_object_add(h, "reachable", json_object_new_boolean(0));
		jx_add_str(h, "detail", waits_engine.model_err);
	} else
		h = vision_health(waits_engine.vision);
	jx_add_time(h, "checked_at", now_ms());

	pthread_mutex_lock(&waits_engine.mu);
	json_object_put(waits_engine.health);
	waits_engine.health = h;
	waits_engine.health_at_us = mono_us();
	pthread_mutex_unlock(&waits_engine.mu);
}

/* The backend health check, off every request's path: at start, every
 * minute (every 10 s while the model is unreachable), and when a model
 * call failed. */
void *
wsched_health(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&waits_engine.mu);
	while (!waits_engine.stopping) {
		json_object *v;
		bool down;
		struct timespec ts;

		waits_engine.health_kick = false;
		pthread_mutex_unlock(&waits_engine.mu);
		health_refresh();
		pthread_mutex_lock(&waits_engine.mu);
		down = waits_engine.health != NULL && json_object_object_get_ex(waits_engine.health, "reachable", &v) &&
		    !json_object_get_boolean(v);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (down ? HEALTH_RETRY_US : HEALTH_EVERY_US) / 1000000;
		while (!waits_engine.stopping && !waits_engine.health_kick)
			if (pthread_cond_timedwait(&waits_engine.health_cv, &waits_engine.mu, &ts) == ETIMEDOUT)
				break;
	}
	pthread_mutex_unlock(&waits_engine.mu);
	return NULL;
}

/* mu held (dropped while peeking), from the scheduler: reads the XDamage
 * counter of every watched display and turns drawing into due ticks: once
 * a peek sees no new drawing, or DAMAGE_MAX_US into a run of it. */
static void
damage_scan_locked(int64_t now)
{
	size_t max = (size_t)waits_engine.app->cfg->max_waits, n = 0, i, k;
	uint64_t *seq = waits_engine.peek_seq;     /* allocated once at start: this runs every 100 ms */
	bool *ok = waits_engine.peek_ok;

	waits_engine.peek_at_us = now;
	for (i = 0; i < max; i++) {
		struct job *j = waits_engine.jobs[i];

		if (j == NULL || j->done)
			continue;
		for (k = 0; k < n && strcmp(waits_engine.peek_ids[k], j->task_id) != 0; k++)
			;
		if (k == n)
			memcpy(waits_engine.peek_ids[n++], j->task_id, ID_LEN);
	}
	pthread_mutex_unlock(&waits_engine.mu);
	for (k = 0; k < n; k++)
		ok[k] = display_damage_peek(waits_engine.peek_ids[k], &seq[k]) == 1;
	pthread_mutex_lock(&waits_engine.mu);
	for (i = 0; i < max; i++) {
		struct job *j = waits_engine.jobs[i];

		if (j == NULL || j->done)
			continue;
		for (k = 0; k < n && strcmp(waits_engine.peek_ids[k], j->task_id) != 0; k++)
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

void *
wsched_main(void *arg)
{
	struct job *expired[64];
	size_t nexp, i;

	(void)arg;
	pthread_mutex_lock(&waits_engine.mu);
	while (!waits_engine.stopping) {
		int64_t now = mono_us(), wall = now_ms(), wake = now + 1000000;
		struct timespec ts;
		bool any = false;

		nexp = 0;
		for (i = 0; i < (size_t)waits_engine.app->cfg->max_waits && !any; i++)
			any = waits_engine.jobs[i] != NULL && !waits_engine.jobs[i]->done;
		if (any && now - waits_engine.peek_at_us >= DAMAGE_PEEK_US) {
			damage_scan_locked(now);
			continue;
		}
		if (any)
			wake = waits_engine.peek_at_us + DAMAGE_PEEK_US;
		for (i = 0; i < (size_t)waits_engine.app->cfg->max_waits; i++) {
			struct job *j = waits_engine.jobs[i];

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
				waits_engine.queue[(waits_engine.qhead + waits_engine.qlen) % (size_t)waits_engine.app->cfg->max_waits] = j;
				waits_engine.qlen++;
				WAITS_CHECK_LOCKED();
				pthread_cond_signal(&waits_engine.work_cv);
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
			r = wjob_finish_locked(expired[i], "timed_out", "TIMEOUT", reason, &o);
			if (r < 0)
				continue;
			pthread_mutex_unlock(&waits_engine.mu);
			wstore_outcome_write(&o);
			pthread_mutex_lock(&waits_engine.mu);
			wjob_finish_end_locked(expired[i], &o);
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
		pthread_cond_timedwait(&waits_engine.sched_cv, &waits_engine.mu, &ts);
	}
	pthread_mutex_unlock(&waits_engine.mu);
	return NULL;
}
