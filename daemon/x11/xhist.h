/*
 * xhist.h - a display's drawing history: where it drew in the last
 * seconds, kept by a thread on a connection of its own (xhist.c), so that
 * an input's watch (desktop/effect.h) knows which areas draw on their own
 * (a blinking caret, a clock, a spinner) without waiting before the input.
 *
 * The thread subscribes to XDamage raw rectangles on the root and keeps
 * the last XHIST_CAP rectangles with their time. Analysis (xhist_areas)
 * groups the rectangles of a time range into areas (overlapping ones
 * join) and splits each area's drawing into bursts (XHIST_BURST_GAP_MS of
 * quiet ends one):
 *   continuous  drawing at the end of the range, in an area that drew for
 *               XHIST_CONTINUOUS_MS or more in one burst (spinners,
 *               video, progress bars; a pause or a marked input splits
 *               the bursts, not the area's nature)
 *   periodic    XHIST_PERIODIC_BURSTS bursts or more (a caret, a clock)
 * Drawing of detm's own inputs (where each drew, while it was in flight:
 * xhist_mark) is left out of the bursts, so an action's own effect never
 * makes its area look busy to the next one; it still tells that an area
 * known to draw all the time is drawing now.
 *
 * Cost: one X connection and one thread blocked in poll() per display;
 * it wakes once per batch of drawing. Threading: all functions are
 * thread-safe (one mutex, held only to copy the ring).
 *
 * Does not: judge an input (desktop/effect.c) or read pixels.
 */
#ifndef DETM_XHIST_H
#define DETM_XHIST_H

#include <stdbool.h>
#include <stdint.h>

#include <X11/Xlib.h>

#define XHIST_CAP 8192
#define XHIST_WINDOW_MS 3000            /* how far back an input's watch looks */
#define XHIST_BURST_GAP_MS 300          /* a spinner's frames late under load stay one burst */
#define XHIST_CONTINUOUS_MS 600        /* longer than a toolkit fade (GTK: 200 ms), a few in a row */
#define XHIST_PERIODIC_BURSTS 3
#define XHIST_MAX_AREAS 16

struct xhist;

struct xhist_area {
	int x, y, w, h;
	int bursts;
	int64_t longest_us;     /* the longest burst */
	bool continuous, periodic;
};

/* Starts the history on d, a connection of the caller's that the history
 * now owns (closed by xhist_stop, or here on failure). NULL without
 * XDamage or a thread. */
struct xhist *xhist_start(Display *d, const char *name);
/* Stops the thread and closes its connection (NULL ok). */
void xhist_stop(struct xhist *h);
#define XHIST_MARK_RECTS 8

struct xhist_rect {
	int x, y, w, h;
};

/* Drawing that meets one of the n rectangles (at most XHIST_MARK_RECTS)
 * between from_us and to_us (mono_us; to_us may be in the future) was
 * detm's own input's doing: not idle drawing. */
void xhist_mark(struct xhist *h, int64_t from_us, int64_t to_us, const struct xhist_rect *r, int n);
/* The busy areas (continuous or periodic) of the drawing between since_us
 * and until_us, into out (cap entries). Returns how many. */
int xhist_areas(struct xhist *h, int64_t since_us, int64_t until_us, struct xhist_area *out, int cap);

#endif
