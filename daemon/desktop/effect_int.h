/*
 * effect_int.h - what the effect verdict's files share (desktop/ only;
 * effect.h is the contract):
 *
 *   effect.c        lifecycle, the watch loop, the verdict and its JSON
 *   effect_px.c     pixels: the picture before, the changed regions after,
 *                   the carets and animations discounted, observe images
 *   effect_check.c  windows (before/after lists, popups) and `expect`
 *
 * One struct effect per watched input; one thread (the lease holder).
 */
#ifndef DETM_EFFECT_INT_H
#define DETM_EFFECT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "effect.h"
#include "expect.h"
#include "x11/xcap.h"
#include "x11/xhist.h"
#include "x11/xwatch.h"
#include "x11/xwin.h"

#define EFFECT_MAX_CHANGES 8
#define EFFECT_MAX_ANIM 8
#define EFFECT_MAX_TARGET 16

/* The bits of struct effect's mask, one byte per screen pixel. */
#define FX_TARGET 1             /* in a window of the application the input went to */
#define FX_ANIM 2               /* changing on its own: the baseline saw it move, or the
                                 * history says it draws all the time (continuous) */
#define FX_PERIODIC 4           /* the history says it draws every so often (a caret, a clock) */

/* A rectangle of the screen. */
struct fx_rect {
	int x, y, w, h;
};

/* A region whose pixels changed for good. */
struct fx_region {
	int x, y, w, h;         /* the changed pixels' bounding box */
	long pixels;            /* how many changed */
	int64_t first_us;       /* its first drawing */
};

struct effect {
	struct effect_opts o;
	struct expect x;
	bool has_x;
	struct xwatch w;
	int number;             /* the task display's number (a11y), or -1 */
	int px, py;             /* the input's point, px < 0: none */
	bool prep_changed;      /* the preparation moved the pointer or the focus: a longer baseline */
	int prep_min_ms;        /* ... and its shortest */
	int sw, sh;             /* the screen */
	/* before the input */
	struct xcap_frame before, after, mid;   /* mid: halfway through a baseline still drawing */
	bool have_before, have_mid;
	uint8_t *mask;          /* sw*sh FX_* bits, or NULL (no picture) */
	struct fx_rect target[EFFECT_MAX_TARGET];       /* the input's application's windows */
	int ntarget;
	struct fx_rect keys_rect;       /* keys: the focused window (w 0: none known) */
	char target_desc[200];  /* "the window \"Effect test\"" or "" (no window) */
	struct xwin target_win; /* a pointer input: the window under the point before it */
	bool has_target_win;
	struct xhist *hist;     /* the display's drawing history, or NULL */
	struct xhist_area areas[XHIST_MAX_AREAS];       /* its busy areas before the input */
	int nareas;
	int64_t t_arm;
	struct xwatch_box busy[EFFECT_MAX_ANIM];        /* still drawing when the baseline ended */
	int nbusy;
	struct fx_rect anim[EFFECT_MAX_ANIM];           /* where its pixels moved */
	int nanim;
	struct xwin *win0, *win1;       /* top-level windows before / after */
	size_t nwin0, nwin1;
	int64_t t_input, t_end;
	/* what the watch found */
	struct fx_region chg[EFFECT_MAX_CHANGES];
	int nchg;
	long changed;           /* changed pixels counted (in the target, not animated) */
	long elsewhere;         /* ... in other applications' windows or the desktop */
	long masked;            /* ... where the screen was changing before the input */
	long periodic;          /* ... in areas that draw every so often, away from the input */
	bool masked_at_point;   /* ... some in a drawn box holding the input's point (keys: meeting
	                         * the focused window, or anywhere when none is known) */
	long discounted_caret;  /* regions discounted as carets (or too small) */
	long px_checked;        /* xwatch rects at the last full pixel check */
	int64_t px_hw;          /* the latest box end a partial check looked at */
	bool transient;         /* drawn in the target, but it ended as it was */
	bool dead;              /* the connection died */
	char win_ev[400];       /* window evidence in words, "" none */
	int64_t win_us;         /* its first event */
	json_object *windows;   /* [{change,id,title}] */
	int wx0, wy0, wx1, wy1; /* the windows that appeared: their union (wx1 > wx0) */
	int expect_met;         /* 1 met, 0 not, -1 cannot tell */
	bool x_dirty;           /* something new to check the expectation against */
	char expect_why[400];
	int64_t expect_us;
};

/* effect_px.c */
/* The loop detector's signature of the picture before (have_before and a
 * mask needed): each grid cell's mean luma over its pixels not marked
 * FX_ANIM or FX_PERIODIC (0 when all are). */
void fx_signature(const struct effect *f, uint8_t out[LOOPDET_SIG_N]);
/* The picture halfway through a baseline that is still drawing. */
void fx_mid(struct effect *f, struct display_lease *l);
/* The history's busy areas into the mask (FX_ANIM continuous,
 * FX_PERIODIC), and the baseline's boxes still drawing at its end
 * (FX_ANIM). */
void fx_history(struct effect *f);
/* The picture before (full screen); with the mid one, FX_ANIM on the
 * pixels that changed between them in the boxes still drawing (grown by
 * MASK_GROW), with f->anim their boxes. 0, or -1 (no picture: pixels
 * unknown). Needs f->mask (fx_target). */
int fx_before(struct effect *f, struct display_lease *l);
/* Checks drawn boxes against the picture before. all: every box, the
 * findings recomputed (chg, changed, elsewhere, masked, transient); else
 * only the boxes that stopped drawing EFFECT_QUIET_MS ago and were not
 * looked at yet, their regions added. */
void fx_pixels(struct effect *f, struct display_lease *l, bool all, int64_t now);
/* b meets an area the history says draws all the time (an animation that
 * was there before this input). */
bool fx_box_idle_anim(const struct effect *f, const struct xwatch_box *b);
/* When the input's own drawing was last seen (0: none): drawing in other
 * applications, animations and periodic areas away from the input left
 * out. */
int64_t fx_last_drawing(const struct effect *f, int64_t now);
/* The "observed" object (image or why not). */
json_object *fx_observe(struct effect *f, struct display_lease *l);

/* effect_check.c */
/* The windows now, into f->win1 (after) or f->win0 (before). */
void fx_windows(struct effect *f, struct display_lease *l, bool after);
/* Where the input goes (after fx_windows before): f->mask with FX_TARGET
 * on the windows of the application under the point (or, for keys, of
 * the focused window), f->target, f->target_desc. */
void fx_target(struct effect *f, struct display_lease *l);
/* Window evidence from f->win0 / f->win1 and the watch's popups: fills
 * f->win_ev, f->windows; true when there is some. */
bool fx_window_evidence(struct effect *f, struct display_lease *l);
/* Checks f->x now: f->expect_met, f->expect_why. */
void fx_expect(struct effect *f, struct display_lease *l);
/* Whether the input had any effect seen so far (pixels or windows). */
bool fx_any(const struct effect *f);

#endif
