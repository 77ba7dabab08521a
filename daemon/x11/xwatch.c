/*
 * xwatch.c - XDamage rectangles and top-level window events on a leased
 * connection, between an armed watch and its stop (see xwatch.h).
 *
 * Owns: the watch's XDamage object and its event selections, for the
 * length of one watch; nothing between watches (no thread, no state).
 * Invariants: every selection xwatch_start made is taken back by
 * xwatch_stop (this connection selects nothing else on those windows:
 * detmd selects no input anywhere else); boxes never exceed
 * XWATCH_MAX_BOXES; waiting is poll() on the connection's socket with the
 * caller's deadline.
 *
 * Does not: decide what counts as an effect, read pixels, or send input.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <X11/Xlib.h>
#include <X11/extensions/Xdamage.h>

#include "core/util.h"
#include "xerr.h"
#include "xwatch.h"

#define SEL_MAX 512             /* root children we select focus events on */
#define BOX_NEAR 8              /* rectangles this close join a box */
#define CHILD_MASK (FocusChangeMask | PropertyChangeMask)
#define ROOT_MASK (SubstructureNotifyMask | PropertyChangeMask)

int
xwatch_start(struct xwatch *w, struct display_lease *l, struct derr *e)
{
	Display *d = l->d;
	Window root = DefaultRootWindow(d), r, p, *kids = NULL;
	unsigned int n = 0;
	int ev, err;

	static const char *const names[] = { "WM_NAME", "_NET_WM_NAME", "_NET_ACTIVE_WINDOW",
		"_NET_CLIENT_LIST", "WM_STATE", "_NET_WM_STATE" };
	Atom atoms[ARRAY_LEN(names)];

	memset(w, 0, sizeof *w);
	/* Interned before: Xlib caches them, so later watches pay nothing. */
	if (XInternAtoms(d, (char **)(uintptr_t)names, (int)ARRAY_LEN(names), False, atoms))
		for (size_t i = 0; i < ARRAY_LEN(names); i++)
			w->atoms[i] = atoms[i];
	xerr_begin();
	if (XDamageQueryExtension(d, &ev, &err)) {
		w->dmg = XDamageCreate(d, root, XDamageReportRawRectangles);
		w->dmg_event = ev + XDamageNotify;
	}
	XSelectInput(d, root, ROOT_MASK);
	if (XQueryTree(d, root, &r, &p, &kids, &n) && kids != NULL) {
		w->sel = xcalloc(n < SEL_MAX ? n : SEL_MAX, sizeof *w->sel);
		for (unsigned int i = 0; i < n && w->nsel < SEL_MAX; i++) {
			XSelectInput(d, kids[i], CHILD_MASK);
			w->sel[w->nsel++] = kids[i];
		}
		XFree(kids);
	}
	/* Windows that vanished meanwhile give BadWindow: harmless. A failed
	 * XDamageCreate gives BadAlloc or the like: no drawing is seen. */
	XSync(d, False);
	if (xerr_io_dead(d))
		return derr_set(e, DERR_UNAVAILABLE, NULL, "the X server is gone");
	w->damage = w->dmg != 0 && xerr_last() == 0;
	if (!w->damage && w->dmg != 0) {
		xerr_begin();
		XDamageDestroy(d, w->dmg);
		XSync(d, False);
		w->dmg = 0;
	}
	/* XDamageCreate reports the whole root as damaged at once (for
	 * compositors): that report came before the sync's reply. */
	while (w->damage && XEventsQueued(d, QueuedAlready) > 0) {
		XEvent e2;

		XNextEvent(d, &e2);
		if (e2.type != w->dmg_event || ((XDamageNotifyEvent *)(void *)&e2)->damage != w->dmg)
			display_event(l, &e2);
	}
	xerr_begin();
	w->armed = true;
	return 0;
}

static long
area(int w, int h)
{
	return (long)w * (long)h;
}

/* The union of a and b, in a. */
static void
box_join(struct xwatch_box *a, const struct xwatch_box *b)
{
	int x0 = a->x < b->x ? a->x : b->x, y0 = a->y < b->y ? a->y : b->y;
	int x1 = a->x + a->w > b->x + b->w ? a->x + a->w : b->x + b->w;
	int y1 = a->y + a->h > b->y + b->h ? a->y + a->h : b->y + b->h;

	a->x = x0;
	a->y = y0;
	a->w = x1 - x0;
	a->h = y1 - y0;
	a->rects += b->rects;
	if (b->first_us < a->first_us)
		a->first_us = b->first_us;
	if (b->last_us > a->last_us)
		a->last_us = b->last_us;
}

static bool
near(const struct xwatch_box *a, const struct xwatch_box *b)
{
	return a->x <= b->x + b->w + BOX_NEAR && b->x <= a->x + a->w + BOX_NEAR &&
	    a->y <= b->y + b->h + BOX_NEAR && b->y <= a->y + a->h + BOX_NEAR;
}

/* Merges the two boxes whose union grows the least (all slots used). */
static void
merge_cheapest(struct xwatch *w)
{
	int bi = 0, bj = 1;
	long best = LONG_MAX;

	for (int i = 0; i < w->nbox; i++)
		for (int j = i + 1; j < w->nbox; j++) {
			struct xwatch_box u = w->box[i];
			long grow;

			box_join(&u, &w->box[j]);
			grow = area(u.w, u.h) - area(w->box[i].w, w->box[i].h) - area(w->box[j].w, w->box[j].h);
			if (grow < best) {
				best = grow;
				bi = i;
				bj = j;
			}
		}
	box_join(&w->box[bi], &w->box[bj]);
	w->box[bj] = w->box[--w->nbox];
}

static void
add_rect(struct xwatch *w, int x, int y, int bw, int bh, int64_t now)
{
	struct xwatch_box b = { .x = x, .y = y, .w = bw, .h = bh, .first_us = now, .last_us = now,
		.rects = 1 };
	bool joined;

	if (bw <= 0 || bh <= 0)
		return;
	w->rects++;
	if (w->first_dmg_us == 0)
		w->first_dmg_us = now;
	w->last_dmg_us = now;
	/* Join every box it touches (a growing box may reach others). */
	do {
		joined = false;
		for (int i = 0; i < w->nbox; i++)
			if (near(&w->box[i], &b)) {
				box_join(&b, &w->box[i]);
				w->box[i] = w->box[--w->nbox];
				joined = true;
				break;
			}
	} while (joined);
	if (w->nbox == XWATCH_MAX_BOXES)
		merge_cheapest(w);
	w->box[w->nbox++] = b;
}

/* A window, focus or property event: when the first came, how many. */
static void
note_win(struct xwatch *w, int64_t now)
{
	if (w->first_win_us == 0)
		w->first_win_us = now;
	w->wevents++;
}

static void
add_win(struct xwatch *w, unsigned long id, char what, bool override, int64_t now)
{
	note_win(w, now);
	if (w->nwin == XWATCH_MAX_WINS)
		return;
	w->win[w->nwin++] = (struct xwatch_win){ .id = id, .what = what, .override = override,
		.at_us = now };
}

/* One event: 1 if it is the watch's, else 0 (handed to the display). */
static int
handle(struct xwatch *w, struct display_lease *l, XEvent *ev, int64_t now)
{
	Window root = DefaultRootWindow(l->d);

	if (w->damage && ev->type == w->dmg_event &&
	    ((XDamageNotifyEvent *)(void *)ev)->damage == w->dmg) {
		XRectangle *a = &((XDamageNotifyEvent *)(void *)ev)->area;

		add_rect(w, a->x, a->y, a->width, a->height, now);
		return 1;
	}
	switch (ev->type) {
	case MapNotify:
		if (ev->xmap.event != root)
			return 0;
		add_win(w, ev->xmap.window, 'm', ev->xmap.override_redirect, now);
		return 1;
	case UnmapNotify:
		if (ev->xunmap.event != root)
			return 0;
		add_win(w, ev->xunmap.window, 'u', false, now);
		return 1;
	case CreateNotify:
		if (ev->xcreatewindow.parent != root)
			return 0;
		add_win(w, ev->xcreatewindow.window, 'c', ev->xcreatewindow.override_redirect, now);
		return 1;
	case DestroyNotify:
		if (ev->xdestroywindow.event != root)
			return 0;
		add_win(w, ev->xdestroywindow.window, 'd', false, now);
		return 1;
	case FocusIn:
	case FocusOut:
		if (ev->xfocus.detail == NotifyPointer || ev->xfocus.mode != NotifyNormal)
			return 0;       /* grabs and the pointer's own focus: not a change */
		w->focus = true;
		note_win(w, now);
		return 1;
	case PropertyNotify:
		for (size_t i = 0; i < ARRAY_LEN(w->atoms); i++)
			if (ev->xproperty.atom == w->atoms[i]) {
				w->props = true;
				note_win(w, now);
				return 1;
			}
		return 0;
	default:
		display_event(l, ev);
		return 0;
	}
}

int
xwatch_pump(struct xwatch *w, struct display_lease *l, int64_t until_us)
{
	Display *d = l->d;
	int got = 0;

	XFlush(d);
	for (;;) {
		struct pollfd pfd = { .fd = ConnectionNumber(d), .events = POLLIN };
		int64_t left;

		while (XEventsQueued(d, QueuedAfterReading) > 0) {
			XEvent ev;

			XNextEvent(d, &ev);
			got += handle(w, l, &ev, mono_us());
		}
		if (xerr_io_dead(d))
			return -1;
		if (got > 0)
			return got;
		left = until_us - mono_us();
		if (left <= 0)
			return 0;
		/* Round up: a poll that wakes before the deadline only loops. */
		if (poll(&pfd, 1, (int)((left + 999) / 1000)) < 0 && errno != EINTR)
			return -1;
		if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
			return -1;
	}
}

void
xwatch_clear(struct xwatch *w)
{
	w->nbox = 0;
	w->rects = 0;
	w->first_dmg_us = w->last_dmg_us = 0;
	w->nwin = 0;
	w->focus = w->props = false;
	w->first_win_us = 0;
}

void
xwatch_stop(struct xwatch *w, struct display_lease *l)
{
	Display *d;

	if (w == NULL || !w->armed)
		goto out;
	w->armed = false;
	d = l->d;
	if (d == NULL || xerr_io_dead(d))
		goto out;
	xerr_begin();
	if (w->dmg != 0)
		XDamageDestroy(d, w->dmg);
	XSelectInput(d, DefaultRootWindow(d), NoEventMask);
	for (int i = 0; i < w->nsel; i++)
		XSelectInput(d, w->sel[i], NoEventMask);
	/* BadWindow for the windows that went: harmless; sync so the errors
	 * land in this bracket, not in the next caller's. */
	XSync(d, False);
	xerr_begin();
out:
	if (w != NULL) {
		free(w->sel);
		w->sel = NULL;
		w->nsel = 0;
		w->dmg = 0;
	}
}
