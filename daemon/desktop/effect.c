/*
 * effect.c - the effect verdict of an input (see effect.h for the rules):
 * its options, the baseline before the input, the watch after it, the
 * verdict and its JSON.
 *
 * Owns: struct effect, from effect_start to effect_free, on one thread
 * (the lease holder). The watch loop blocks only in xwatch_pump (poll on
 * the X connection with a deadline): it wakes for events, for the end of a
 * quiet period (drawing done: look at the pixels), for a settled
 * expectation's time, and for settle_ms.
 *
 * Does not: send input (desktop.c, gui.c), compare pixels (effect_px.c) or
 * look at windows and expectations (effect_check.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/jx.h"
#include "core/util.h"
#include "effect_int.h"

#define US(ms) ((int64_t)(ms) * 1000)

int
effect_opts_parse(json_object *params, struct effect_opts *o, struct derr *e)
{
	const char *obs = NULL;
	struct expect x;
	int64_t v = 0;

	memset(o, 0, sizeof *o);
	o->settle_ms = EFFECT_SETTLE_MS;
	if (params == NULL)
		return 0;
	if (jx_int(params, "settle_ms", false, 0, EFFECT_SETTLE_MAX_MS, &v, &o->settle_given, e) != 0 ||
	    jx_str(params, "expect", false, 1, EXPECT_MAX, &o->expect, e) != 0 ||
	    jx_str(params, "observe", false, 1, 16, &obs, e) != 0)
		return -1;
	if (o->expect != NULL && expect_parse(o->expect, &x, e) != 0)
		return -1;
	if (obs == NULL || strcasecmp(obs, "none") == 0)
		o->observe = EFFECT_OBSERVE_NONE;
	else if (strcasecmp(obs, "region") == 0)
		o->observe = EFFECT_OBSERVE_REGION;
	else if (strcasecmp(obs, "screen") == 0)
		o->observe = EFFECT_OBSERVE_SCREEN;
	else
		return derr_set(e, DERR_INVALID, "observe", "observe must be none, region or screen");
	o->settle_ms = o->settle_given ? (int)v : o->expect != NULL ? EFFECT_EXPECT_SETTLE_MS : EFFECT_SETTLE_MS;
	if (o->settle_ms == 0 && o->expect != NULL)
		return derr_set(e, DERR_INVALID, "settle_ms", "expect needs a watch: settle_ms must be over 0");
	return 0;
}

bool
effect_wanted(const struct effect_opts *o)
{
	return o != NULL && o->settle_ms > 0;
}

int
effect_start(struct effect **out, struct display_lease *l, const struct effect_opts *o,
    struct derr *e)
{
	struct effect *f;

	*out = NULL;
	if (!effect_wanted(o))
		return 0;
	f = xcalloc(1, sizeof *f);
	f->o = *o;
	f->px = f->py = -1;
	f->number = -1;
	f->sw = l->width;
	f->sh = l->height;
	if (o->expect != NULL) {
		if (expect_parse(o->expect, &f->x, e) != 0) {
			free(f);
			return -1;
		}
		f->has_x = true;
	}
	if (l->managed && l->name[0] == ':')
		f->number = atoi(l->name + 1);
	f->t_arm = mono_us();
	f->hist = display_hist(l);
	f->nareas = xhist_areas(f->hist, f->t_arm - US(XHIST_WINDOW_MS), f->t_arm, f->areas, XHIST_MAX_AREAS);
	if (xwatch_start(&f->w, l, e) != 0) {
		effect_free(f, l);
		return -1;
	}
	*out = f;
	return 0;
}

/* The baseline: until the screen has been still for EFFECT_QUIET_MS, at
 * most EFFECT_BASELINE_MS. Still drawing halfway: a second picture (mid),
 * and the boxes drawn from then on are the ones the mask looks in. true
 * when it settled. -1 dead. */
/* The last drawing the baseline waits for: known animations (the
 * history's continuous areas) aside. */
static int64_t
base_last(const struct effect *f)
{
	int64_t last = 0;

	for (int i = 0; i < f->w.nbox; i++)
		if (f->w.box[i].last_us > last && !fx_box_idle_anim(f, &f->w.box[i]))
			last = f->w.box[i].last_us;
	return last;
}

static int
baseline(struct effect *f, struct display_lease *l)
{
	int64_t t0 = mono_us(), cap = US(f->prep_changed ? EFFECT_BASELINE_PREP_MS : EFFECT_BASELINE_MS);
	int64_t until = t0 + cap, half = t0 + cap / 2, carried = 0;

	for (;;) {
		int64_t last = base_last(f) > carried ? base_last(f) : carried, now, wake;
		int64_t still = last > t0 ? last : t0;

		wake = still + US(EFFECT_QUIET_MS);
		if (wake < t0 + US(f->prep_min_ms))
			wake = t0 + US(f->prep_min_ms);
		if (wake > until)
			wake = until;
		if (!f->have_mid && half < wake)
			wake = half;
		if (xwatch_pump(&f->w, l, wake) < 0)
			return -1;
		now = mono_us();
		last = base_last(f) > carried ? base_last(f) : carried;
		still = last > t0 ? last : t0;
		if (now - still >= US(EFFECT_QUIET_MS) && now - t0 >= US(f->prep_min_ms))
			return 1;
		if (!f->have_mid && now >= half) {
			fx_mid(f, l);
			xwatch_clear(&f->w);    /* the mask looks in what draws from here on */
			carried = last;         /* the quiet period still counts from it */
		}
		if (now >= until)
			return 0;
	}
}

void
effect_prep_changed(struct effect *f, bool focus)
{
	int min = focus ? EFFECT_FOCUS_MIN_MS : EFFECT_PREP_MIN_MS;

	if (f == NULL)
		return;
	f->prep_changed = true;
	if (min > f->prep_min_ms)
		f->prep_min_ms = min;
}

/* The boxes still drawing when the baseline ended (known animations
 * aside: the history's mask has them). */
static void
note_busy(struct effect *f, int64_t end)
{
	for (int i = 0; i < f->w.nbox && f->nbusy < EFFECT_MAX_ANIM; i++)
		if (f->w.box[i].last_us >= end - US(2 * EFFECT_QUIET_MS) && !fx_box_idle_anim(f, &f->w.box[i]))
			f->busy[f->nbusy++] = f->w.box[i];
}

int
effect_ready(struct effect *f, struct display_lease *l, int x, int y, struct derr *e)
{
	int r;

	if (f == NULL)
		return 0;
	f->px = x;
	f->py = y;
	if ((r = baseline(f, l)) < 0)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "the X server is gone");
	if (r == 1)
		f->have_mid = false;    /* it settled: nothing moves, no mask */
	else
		note_busy(f, mono_us());
	fx_windows(f, l, false);
	fx_target(f, l);
	fx_history(f);
	(void)fx_before(f, l);
	/* What the capture's round trip queued is still before the input. */
	if (xwatch_pump(&f->w, l, 0) < 0)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "the X server is gone");
	xwatch_clear(&f->w);
	f->t_input = mono_us();
	return 0;
}

/* One pass over what the watch has: windows after new window events,
 * pixels once the drawing has been still, the expectation. */
static void
look(struct effect *f, struct display_lease *l, long *wseen, int64_t now)
{
	bool fresh = false, quiet = now - f->w.last_dmg_us >= US(EFFECT_QUIET_MS);
	bool still = now - fx_last_drawing(f, now) >= US(EFFECT_QUIET_MS);

	if (f->w.wevents != *wseen) {
		*wseen = f->w.wevents;
		fx_windows(f, l, true);
		fx_window_evidence(f, l);
		fresh = true;
	}
	if (f->w.rects > f->px_checked) {
		int before = f->nchg;

		/* Still drawing: the boxes that stopped (a label that changed
		 * while a button still fades); else all of them. */
		fx_pixels(f, l, quiet, now);
		fresh = fresh || quiet || f->nchg != before;
	}
	f->x_dirty = f->x_dirty || fresh;
	if (f->has_x && ((f->x_dirty && still) || f->x.kind == EXPECT_SETTLED) &&
	    (f->x.kind != EXPECT_ELEMENT || fx_any(f))) {
		fx_expect(f, l);
		f->x_dirty = false;
	}
}

/* Done before settle_ms: the expectation met, or (without one) evidence in
 * and, for a picture, the drawing still. */
static bool
done(const struct effect *f, int64_t now)
{
	if (f->has_x)
		return f->expect_met == 1;
	if (!fx_any(f))
		return false;
	return f->o.observe == EFFECT_OBSERVE_NONE || now - fx_last_drawing(f, now) >= US(EFFECT_QUIET_MS);
}

static int64_t
next_wake(const struct effect *f, int64_t deadline)
{
	int64_t wake = deadline;

	if (f->w.rects > f->px_checked && f->w.last_dmg_us + US(EFFECT_QUIET_MS) < wake)
		wake = f->w.last_dmg_us + US(EFFECT_QUIET_MS);
	if (f->has_x && f->x.kind == EXPECT_SETTLED && fx_any(f)) {
		int64_t last = fx_last_drawing(f, mono_us());

		last = last > f->win_us ? last : f->win_us;

		if (last + US(f->x.settled_ms) < wake)
			wake = last + US(f->x.settled_ms);
	}
	return wake;
}

static void
watch(struct effect *f, struct display_lease *l)
{
	int64_t deadline = f->t_input + US(f->o.settle_ms);
	long wseen = 0;

	if (f->has_x && f->x.kind == EXPECT_SETTLED && deadline < f->t_input + US(f->x.settled_ms + 1000))
		deadline = f->t_input + US(f->x.settled_ms + 1000);
	for (;;) {
		int64_t now;

		if (xwatch_pump(&f->w, l, next_wake(f, deadline)) < 0) {
			f->dead = true;
			return;
		}
		now = mono_us();
		look(f, l, &wseen, now);
		if (done(f, now) || now >= deadline)
			break;
	}
	/* The last look: drawing not yet still, titles and focus that moved
	 * without an event the watch subscribed to. */
	if (f->w.rects > f->px_checked)
		fx_pixels(f, l, true, mono_us());
	if (!done(f, mono_us())) {
		fx_windows(f, l, true);
		fx_window_evidence(f, l);
	}
	if (f->has_x && f->expect_met != 1)
		fx_expect(f, l);
}

/* When the first evidence came: a window event or the first drawing of a
 * region that changed (0: none). */
static int64_t
first_evidence(const struct effect *f)
{
	int64_t first = f->win_ev[0] != '\0' ? f->win_us : 0;

	for (int i = 0; i < f->nchg; i++)
		if (first == 0 || f->chg[i].first_us < first)
			first = f->chg[i].first_us;
	return first;
}

/* True (and why) when no evidence counted but detm cannot say nothing
 * happened: no XDamage, no picture before, drawing only where the screen
 * was already changing at the input (a window still drawing its first
 * frames looks like an animation), or drawing that ended as it began. */
static bool
cannot_tell(const struct effect *f, char *why, size_t len)
{
	if (!f->w.damage) {
		snprintf(why, len, "the display reports no drawing (no XDamage) and no window changed");
		return true;
	}
	if (f->w.rects > 0 && !f->have_before) {
		snprintf(why, len, "the screen drew, but there is no picture from before the input to compare");
		return true;
	}
	if (f->masked_at_point) {
		snprintf(why, len, "pixels changed only where the screen was already changing before the "
		    "input (%ld pixels: an animation, a hover transition or a window still drawing): an effect "
		    "there cannot be told apart", f->masked);
		return true;
	}
	if (f->transient) {
		snprintf(why, len, "the application drew (%ld rectangles) but the screen ended as it was",
		    f->w.rects);
		return true;
	}
	return false;
}

/* The verdict in words, into why; returns it. *ev_us: when the evidence
 * came (0: none). */
static const char *
verdict(struct effect *f, char *why, size_t len, int64_t *ev_us)
{
	*ev_us = 0;
	if (f->dead) {
		snprintf(why, len, "the connection to the X server died while watching");
		return "unverifiable";
	}
	if (f->has_x) {
		char want[300], tail[400];

		expect_describe(&f->x, want, sizeof want);
		if (f->expect_met == 1) {
			*ev_us = first_evidence(f);
			*ev_us = *ev_us != 0 ? *ev_us : f->expect_us;
			snprintf(why, len, "%s", f->expect_why);
			return "confirmed";
		}
		if (f->expect_met < 0) {
			snprintf(why, len, "cannot check the expectation (%.200s): %.300s", want, f->expect_why);
			return "unverifiable";
		}
		if (fx_any(f)) {
			snprintf(why, len, "expected %.200s, not met: %.250s; something else changed: %.200s", want,
			    f->expect_why, f->win_ev[0] ? f->win_ev : "pixels");
			return "unverifiable";
		}
		if (cannot_tell(f, tail, sizeof tail)) {
			snprintf(why, len, "expected %.150s, not met: %.150s; but %.250s", want, f->expect_why, tail);
			return "unverifiable";
		}
		snprintf(why, len, "expected %.200s, not met: %.300s; nothing changed within %d ms", want,
		    f->expect_why, f->o.settle_ms);
		return "suspected_noop";
	}
	if (f->win_ev[0] != '\0') {
		*ev_us = f->win_us;
		snprintf(why, len, "%s", f->win_ev);
		return "confirmed";
	}
	if (f->nchg > 0) {
		*ev_us = first_evidence(f);
		snprintf(why, len, "%ld pixels changed in %d region%s (largest %dx%d at (%d, %d))", f->changed,
		    f->nchg, f->nchg == 1 ? "" : "s", f->chg[0].w, f->chg[0].h, f->chg[0].x, f->chg[0].y);
		return "confirmed";
	}
	if (cannot_tell(f, why, len))
		return "unverifiable";
	snprintf(why, len, "nothing changed within %d ms%s", f->o.settle_ms,
	    f->discounted_caret > 0 ? " (only a caret-sized change, discounted)" : "");
	return "suspected_noop";
}

static json_object *
ms_json(double ms)
{
	char s[32];

	snprintf(s, sizeof s, "%.1f", ms);
	return json_object_new_double_s(ms, s);
}

static json_object *
regions_json(const struct effect *f)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < f->nchg; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "x", json_object_new_int(f->chg[i].x));
		json_object_object_add(o, "y", json_object_new_int(f->chg[i].y));
		json_object_object_add(o, "width", json_object_new_int(f->chg[i].w));
		json_object_object_add(o, "height", json_object_new_int(f->chg[i].h));
		json_object_object_add(o, "pixels", json_object_new_int64(f->chg[i].pixels));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *
anim_json(const struct effect *f)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < f->nanim; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "x", json_object_new_int(f->anim[i].x));
		json_object_object_add(o, "y", json_object_new_int(f->anim[i].y));
		json_object_object_add(o, "width", json_object_new_int(f->anim[i].w));
		json_object_object_add(o, "height", json_object_new_int(f->anim[i].h));
		json_object_array_add(a, o);
	}
	return a;
}

/* "evidence": what was seen, whatever the verdict. */
static json_object *
evidence_json(struct effect *f, const char *why)
{
	json_object *ev = json_object_new_object(), *px = json_object_new_object(),
	    *dr = json_object_new_object();

	jx_add_str(ev, "summary", why);
	json_object_object_add(ev, "windows", f->windows != NULL ? json_object_get(f->windows) :
	    json_object_new_array());
	json_object_object_add(px, "changed", json_object_new_int64(f->changed));
	json_object_object_add(px, "regions", regions_json(f));
	json_object_object_add(ev, "pixels", px);
	json_object_object_add(dr, "seen", json_object_new_boolean(f->w.damage));
	json_object_object_add(dr, "rectangles", json_object_new_int64(f->w.rects));
	json_object_object_add(dr, "transient", json_object_new_boolean(f->transient));
	json_object_object_add(dr, "discounted_caret", json_object_new_int64(f->discounted_caret));
	json_object_object_add(dr, "discounted_animation", json_object_new_int64(f->masked));
	json_object_object_add(dr, "discounted_periodic", json_object_new_int64(f->periodic));
	json_object_object_add(dr, "other_windows", json_object_new_int64(f->elsewhere));
	json_object_object_add(dr, "animated_areas", anim_json(f));
	json_object_object_add(ev, "drawing", dr);
	json_object_object_add(ev, "watched_ms", ms_json((double)(f->t_end - f->t_input) / 1000.0));
	json_object_object_add(ev, "settle_ms", json_object_new_int(f->o.settle_ms));
	return ev;
}

/* An input that was not watched (settle_ms 0). */
static void
judge_unwatched(const char *did, json_object *r)
{
	char line[600];
	json_object *ev = json_object_new_object();

	jx_add_str(r, "effect", "unverifiable");
	jx_add_str(ev, "summary", "not watched (settle_ms 0)");
	json_object_object_add(r, "evidence", ev);
	json_object_object_add(r, "effect_ms", NULL);
	snprintf(line, sizeof line, "%s: unverifiable: not watched (settle_ms 0)", did);
	jx_add_str(r, "summary", line);
}

/* The screen signature of the latest input judged on this thread, for
 * the loop detector (effect_take_sig). */
static _Thread_local struct {
	bool have;
	int64_t at_us;
	uint8_t sig[LOOPDET_SIG_N];
} fx_last;

bool
effect_take_sig(uint8_t out[LOOPDET_SIG_N])
{
	bool have = fx_last.have && mono_us() - fx_last.at_us < EFFECT_SIG_FRESH_MS * 1000;

	if (have)
		memcpy(out, fx_last.sig, LOOPDET_SIG_N);
	fx_last.have = false;
	return have;
}

json_object *
effect_win_json(const struct xwin *w)
{
	json_object *o = json_object_new_object();
	char id[24];

	snprintf(id, sizeof id, "0x%lx", w->id);
	jx_add_str(o, "id", id);
	jx_add_str(o, "title", w->title);
	jx_add_str(o, "class", w->wm_class);
	json_object_object_add(o, "x", json_object_new_int(w->x));
	json_object_object_add(o, "y", json_object_new_int(w->y));
	json_object_object_add(o, "width", json_object_new_int(w->width));
	json_object_object_add(o, "height", json_object_new_int(w->height));
	return o;
}

void
effect_judge(struct effect *f, struct display_lease *l, const char *did, json_object *r)
{
	char why[700], line[900];
	const char *v;
	int64_t ev_us;
	json_object *ev;

	fx_last.have = false;
	if (f == NULL) {
		judge_unwatched(did, r);
		return;
	}
	watch(f, l);
	f->t_end = mono_us();
	v = verdict(f, why, sizeof why, &ev_us);
	if (f->have_before && f->mask != NULL) {     /* after the watch: it is never delayed */
		fx_signature(f, fx_last.sig);
		fx_last.have = true;
		fx_last.at_us = mono_us();
	}
	jx_add_str(r, "effect", v);
	json_object_object_add(r, "evidence", ev = evidence_json(f, why));
	if (f->has_target_win)
		json_object_object_add(ev, "window", effect_win_json(&f->target_win));
	json_object_object_add(r, "effect_ms", ev_us > 0 ? ms_json((double)(ev_us - f->t_input) / 1000.0) : NULL);
	if (f->has_x) {
		json_object *x = json_object_new_object();

		jx_add_str(x, "condition", f->x.text);
		json_object_object_add(x, "met", f->expect_met < 0 ? NULL : json_object_new_boolean(f->expect_met));
		jx_add_str(x, "why", f->expect_why);
		json_object_object_add(r, "expect", x);
	}
	if (f->o.observe != EFFECT_OBSERVE_NONE && !f->dead)
		json_object_object_add(r, "observed", fx_observe(f, l));
	if (ev_us > 0)
		snprintf(line, sizeof line, "%s: %s in %.0f ms: %s", did, v, (double)(ev_us - f->t_input) / 1000.0, why);
	else
		snprintf(line, sizeof line, "%s: %s: %s", did, v, why);
	jx_add_str(r, "summary", line);
}

json_object *
effect_verified(json_object *r)
{
	const char *v = json_object_get_string(json_object_object_get(r, "effect"));

	if (v != NULL && strcmp(v, "confirmed") == 0)
		return json_object_new_boolean(1);
	if (v != NULL && strcmp(v, "suspected_noop") == 0)
		return json_object_new_boolean(0);
	return NULL;
}

static void
mark_add(const struct effect *f, struct xhist_rect *r, int *n, int x, int y, int w, int h)
{
	if (*n < XHIST_MARK_RECTS && w > 0 && h > 0 &&
	    !fx_box_idle_anim(f, &(struct xwatch_box){ .x = x, .y = y, .w = w, .h = h }))
		r[(*n)++] = (struct xhist_rect){ x, y, w, h };
}

/* Where this input drew (and may go on drawing for a moment) is no idle
 * drawing to the next input's watch: the window it went to and the one
 * that had the focus, its changed regions, the windows that appeared, the
 * drawn boxes at its point; never
 * an area the history knows draws all the time (that would hide it). */
static void
mark_own(const struct effect *f)
{
	struct xhist_rect r[XHIST_MARK_RECTS];
	int n = 0;

	if (f->ntarget > 0)
		mark_add(f, r, &n, f->target[0].x, f->target[0].y, f->target[0].w, f->target[0].h);
	for (size_t i = 0; i < f->nwin0; i++)          /* it redraws itself as it loses the focus */
		if (f->win0[i].focused && f->win0[i].visible)
			mark_add(f, r, &n, f->win0[i].x, f->win0[i].y, f->win0[i].width, f->win0[i].height);
	for (int i = 0; i < f->nchg; i++)
		mark_add(f, r, &n, f->chg[i].x, f->chg[i].y, f->chg[i].w, f->chg[i].h);
	if (f->wx1 > f->wx0)
		mark_add(f, r, &n, f->wx0, f->wy0, f->wx1 - f->wx0, f->wy1 - f->wy0);
	for (int i = 0; i < f->w.nbox && f->px >= 0; i++) {
		const struct xwatch_box *b = &f->w.box[i];

		if (f->px >= b->x && f->py >= b->y && f->px < b->x + b->w && f->py < b->y + b->h)
			mark_add(f, r, &n, b->x, b->y, b->w, b->h);
	}
	if (f->px >= 0)         /* the hover of the preparation */
		mark_add(f, r, &n, f->px - 1, f->py - 1, 3, 3);
	xhist_mark(f->hist, f->t_arm, (f->t_end ? f->t_end : mono_us()) + US(EFFECT_TAIL_MS), r, n);
}

void
effect_mark_unwatched(struct display_lease *l, int64_t t0_us)
{
	struct xhist_rect all = { 0, 0, l->width, l->height };

	xhist_mark(display_hist(l), t0_us, mono_us() + US(EFFECT_TAIL_MS), &all, 1);
}

void
effect_free(struct effect *f, struct display_lease *l)
{
	if (f == NULL)
		return;
	mark_own(f);
	xwatch_stop(&f->w, l);
	xcap_frame_free(&f->before);
	xcap_frame_free(&f->after);
	xcap_frame_free(&f->mid);
	free(f->mask);
	free(f->win0);
	free(f->win1);
	json_object_put(f->windows);
	free(f);
}
