/*
 * effect.h - what an input did: the effect verdict of every input action
 * (desktop_action, /api/commands, gui_do), from events, not from sleeping.
 *
 * Use, on one held display lease (display.h), around the input:
 *
 *     effect_start(&f, &l, &opts, e)       arm the watch (xwatch.h)
 *     ... move the pointer / focus first (the preparation, not the input;
 *         effect_prep_changed(f) when the pointer or the focus moved)
 *     effect_ready(f, &l, x, y, e)         baseline, picture and windows before
 *     ... send the input (XTest)
 *     effect_judge(f, &l, "Clicked (412, 230)", result)
 *     effect_free(f, &l)
 *
 * The verdict (result "effect"):
 *   confirmed       something the input caused was seen: a top-level window
 *                   appeared or went, a menu or popup opened, a title
 *                   changed, the focus moved to another window, or pixels
 *                   of the input's application changed for good (drawn,
 *                   and different from the picture before the input once
 *                   that drawing stopped); with `expect`, only that
 *                   expectation met confirms.
 *   suspected_noop  nothing at all changed within settle_ms: no window
 *                   event, no drawing (or only drawing the rules below
 *                   discount).
 *   unverifiable    detm cannot tell: the display reports no drawing
 *                   (no XDamage), the input was not watched (settle_ms 0),
 *                   the app drew and ended as it was (a flash, a press
 *                   animation), the area keeps drawing anyway (an animation
 *                   under the point), or `expect` could not be checked or
 *                   was not met while other things changed (or while
 *                   the screen drew only where the rules below discount
 *                   it: the same reasons as without expect).
 * Only confirmed is proof; unverifiable never counts as success.
 *
 * Rules against drawing that is not the input's effect:
 *   - preparation first: the pointer motion (hover highlight) and, for a
 *     press, the focus moving to the window under the pointer happen
 *     before the baseline, so their drawing is in the picture before;
 *   - the baseline: before the input the screen is watched until it has
 *     been still for EFFECT_QUIET_MS, known animations aside (at most
 *     EFFECT_BASELINE_MS, EFFECT_BASELINE_PREP_MS when the preparation
 *     moved the pointer or the focus: hover and focus fades end first);
 *     when it does not settle, what still drew at its end (and the pixels
 *     a picture halfway and the one at its end show moving) is an
 *     animation, and changes there after the input are discounted;
 *   - the drawing history (x11/xhist.h): areas that drew on their own in
 *     the last XHIST_WINDOW_MS, away from detm's own inputs: changes in
 *     areas that draw all the time (spinners, video) are discounted; in
 *     areas that draw every so often (a caret, a clock) they count only
 *     at the input (the box holding its point; for keys the focused
 *     window), and drawing there never makes a "flash";
 *   - carets: a change whose changed pixels fit in a box at most
 *     EFFECT_CARET_PX wide or high (a caret blinking or moving) is
 *     discounted; so is a region with fewer than EFFECT_MIN_PIXELS changed;
 *   - the target: pixels count only in the windows of the application the
 *     input went to (the root's child under the point and the topmost
 *     window there, by X client; for keys the focused window's), so
 *     another program's clock is no evidence (counted as other_windows);
 *   - a flash (drawing that left the screen as it was) counts only where
 *     the input was (the box holding its point; for keys the focused
 *     window), outside animations and periodic areas;
 *   - tooltips (_NET_WM_WINDOW_TYPE_TOOLTIP popups) are not evidence.
 * Every watch marks where its input drew (its window, the window that had
 * the focus, what changed, its point) in the history for that time and
 * EFFECT_TAIL_MS after; an action that is not watched marks the whole
 * screen (effect_mark_unwatched), so detm's own inputs never look like
 * idle drawing to the next watch.
 *
 * effect_ms: from the input to the first event of the evidence (the first
 * drawing of the region that changed, the window event); the call returns
 * as soon as the evidence is in (for pixels: once the drawing has been
 * still for EFFECT_QUIET_MS), or at settle_ms.
 *
 * `expect` (expect.h), met when:
 *   window:"T"        a visible window whose title contains T exists after
 *                     the input and did not before; window-gone: the reverse
 *   text:"P"          OCR finds P in a region that changed, after the input,
 *                     and not in the same region before it; text-gone: the
 *                     reverse (text elsewhere on the screen is not read)
 *   element:...       the input had an effect and the element is in the
 *                     task display's accessibility tree afterwards (one
 *                     targeted lookup once the screen is still; the tree is
 *                     never read before the input); element-gone: not in it
 *   settled:N         the input had an effect and then nothing drew for N ms
 * With expect, settle_ms defaults to EFFECT_EXPECT_SETTLE_MS.
 *
 * observe: "region" adds the changed region (new windows included), padded,
 * as a JPEG at most EFFECT_REGION_WIDTH wide; "screen" the whole screen at
 * most DESKTOP_LOOK_WIDTH wide (result "observed": image_b64, media_type,
 * region, scale, image_size).
 *
 * Cost: the lease is held for the watch (up to settle_ms after the input,
 * plus the baseline before it); one full-screen capture before the input
 * and one capture of the changed region after it.
 *
 * Does not: send the input, log actions, or read the accessibility tree
 * before the input.
 */
#ifndef DETM_EFFECT_H
#define DETM_EFFECT_H

#include <stdbool.h>

#include <json-c/json.h>

#include "derr.h"
#include "task/loopdet.h"
#include "x11/display.h"
#include "x11/xwin.h"

#define EFFECT_SETTLE_MS 300            /* settle_ms default */
#define EFFECT_EXPECT_SETTLE_MS 2000    /* ... with expect */
#define EFFECT_SETTLE_MAX_MS 10000
#define EFFECT_QUIET_MS 25              /* drawing still this long: the frame is done */
#define EFFECT_BASELINE_MS 100          /* the longest baseline */
#define EFFECT_BASELINE_PREP_MS 300     /* ... after the preparation moved the pointer or the focus */
#define EFFECT_PREP_MIN_MS 50           /* the shortest baseline after the pointer moved */
#define EFFECT_FOCUS_MIN_MS 150         /* ... after the focus moved */
#define EFFECT_CARET_PX 3
#define EFFECT_MIN_PIXELS 8
#define EFFECT_REGION_WIDTH 800
#define EFFECT_TAIL_MS 300              /* after a watch: its drawing may go on (fades) */
#define EFFECT_SIG_FRESH_MS 5000        /* effect_take_sig: a signature older than this is stale */

enum effect_observe { EFFECT_OBSERVE_NONE, EFFECT_OBSERVE_REGION, EFFECT_OBSERVE_SCREEN };

struct effect_opts {
	int settle_ms;                  /* 0: not watched (effect unverifiable) */
	bool settle_given;
	const char *expect;             /* borrowed, or NULL */
	enum effect_observe observe;
};

/* settle_ms, expect and observe from an action's parameters (absent:
 * defaults). 0, or -1 with DERR_INVALID naming the field. expect is
 * borrowed from params. */
int effect_opts_parse(json_object *params, struct effect_opts *o, struct derr *e);
/* Whether o asks for a watch at all (settle_ms > 0). */
bool effect_wanted(const struct effect_opts *o);

struct effect;

/* Arms the watch on the held lease. *out NULL (and 0) when o asks for no
 * watch. -1 with e only for a bad expect or a dead connection. */
int effect_start(struct effect **out, struct display_lease *l, const struct effect_opts *o,
    struct derr *e);
/* The preparation moved the pointer to another place, or (focus) moved the
 * focus (xinput_focus_pointer said 1): what is under the pointer
 * highlights itself, windows redraw themselves as focused or not
 * (toolkits fade both in), and a busy application starts late: the
 * baseline lasts at least EFFECT_PREP_MIN_MS (EFFECT_FOCUS_MIN_MS after
 * a focus change) and may wait up to EFFECT_BASELINE_PREP_MS. f may be
 * NULL. */
void effect_prep_changed(struct effect *f, bool focus);
/* After the preparation, right before the input: the baseline, the
 * picture and the windows before. (x, y): the input's point, or x < 0. */
int effect_ready(struct effect *f, struct display_lease *l, int x, int y, struct derr *e);
/* After the input: watches and adds to r "effect", "evidence", "effect_ms",
 * "expect" (when given), "observed" (when asked) and "summary" (did + ": "
 * + the verdict in words: "Clicked (412, 230): confirmed in 38 ms: a
 * window \"Save As\" appeared"). f may be NULL (not watched). */
/* evidence.window's shape for w: {id, title, class, x, y, width, height}
 * (the window under a pointer input's point before it, for replays,
 * desktop/target.h). Returns a new object. */
json_object *effect_win_json(const struct xwin *w);
void effect_judge(struct effect *f, struct display_lease *l, const char *did, json_object *r);
/* Unarms and frees (NULL ok). */
void effect_free(struct effect *f, struct display_lease *l);
/* An action that was not watched (settle_ms 0, a window action) ran on
 * the lease from t0_us until now: whatever the display draws meanwhile
 * and for a moment after is no idle drawing to later watches (xhist.h). */
void effect_mark_unwatched(struct display_lease *l, int64_t t0_us);
/* The loop detector's screen signature (task/loopdet.h) of the screen
 * before the latest input effect_judge watched on this thread, taken once:
 * true and out filled when there is one (judged less than
 * EFFECT_SIG_FRESH_MS ago, with a picture from before the input), then
 * forgotten. Areas animating or drawing every so often (a caret, a
 * clock: the drawing history) are left out of it. The action row that
 * input logs is written on the same thread right after (desktop_run,
 * gui_do), which is where the loop watch (loopwatch.c) takes it. */
bool effect_take_sig(uint8_t out[LOOPDET_SIG_N]);
/* The "verified" compatibility field of the verdict in r: true for
 * confirmed, false for suspected_noop, null otherwise. */
json_object *effect_verified(json_object *r);

#endif
