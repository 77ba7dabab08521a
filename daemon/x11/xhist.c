/*
 * xhist.c - a display's drawing history (see xhist.h).
 *
 * Owns: its connection (opened by display.c for it, closed here), its
 * thread, its ring of rectangles and the marks of detm's own inputs.
 * Invariants: the ring holds the latest XHIST_CAP rectangles in time
 * order; the thread is the only reader of the connection; h->mu guards
 * the ring and the marks and is never held across a system call of the
 * thread's. The thread ends when asked (a byte on its pipe) or when the
 * connection dies (the server went away).
 *
 * Does not: decide what an input did (desktop/effect.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <X11/extensions/Xdamage.h>

#include "core/log.h"
#include "core/util.h"
#include "xerr.h"
#include "xhist.h"

#define MARKS 64
#define WORK_AREAS 64
#define AREA_PAD 4

struct hrect {
	int64_t t;
	int16_t x, y;
	uint16_t w, h;
};

struct xhist {
	Display *d;
	char name[16];
	pthread_t th;
	int stop[2];            /* the pipe that ends the thread */
	Damage dmg;
	int dmg_event;
	pthread_mutex_t mu;
	struct hrect ring[XHIST_CAP];
	size_t head, n;         /* next write, count */
	struct {
		int64_t from, to;
		struct xhist_rect r[XHIST_MARK_RECTS];
		int n;
	} mark[MARKS];
	int nmark, mnext;
};

static void
push(struct xhist *h, const XRectangle *a, int64_t now)
{
	pthread_mutex_lock(&h->mu);
	h->ring[h->head] = (struct hrect){ now, a->x, a->y, a->width, a->height };
	h->head = (h->head + 1) % XHIST_CAP;
	if (h->n < XHIST_CAP)
		h->n++;
	pthread_mutex_unlock(&h->mu);
}

static void *
run(void *arg)
{
	struct xhist *h = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = ConnectionNumber(h->d), .events = POLLIN },
			{ .fd = h->stop[0], .events = POLLIN } };

		while (XEventsQueued(h->d, QueuedAfterReading) > 0) {
			XEvent ev;

			XNextEvent(h->d, &ev);
			if (ev.type == h->dmg_event)
				push(h, &((XDamageNotifyEvent *)(void *)&ev)->area, mono_us());
		}
		if (xerr_io_dead(h->d))
			break;
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents != 0 || (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)))
			break;
	}
	return NULL;
}

struct xhist *
xhist_start(Display *d, const char *name)
{
	struct xhist *h;
	int ev, err;

	if (d == NULL)
		return NULL;
	if (!XDamageQueryExtension(d, &ev, &err)) {
		XCloseDisplay(d);
		return NULL;
	}
	h = xcalloc(1, sizeof *h);
	h->d = d;
	snprintf(h->name, sizeof h->name, "%s", name);
	pthread_mutex_init(&h->mu, NULL);
	h->dmg_event = ev + XDamageNotify;
	h->dmg = XDamageCreate(d, DefaultRootWindow(d), XDamageReportRawRectangles);
	XSync(d, False);
	/* The whole root reported at creation (for compositors) is no drawing. */
	while (XEventsQueued(d, QueuedAlready) > 0) {
		XEvent e2;

		XNextEvent(d, &e2);
	}
	if (pipe2(h->stop, O_CLOEXEC) != 0 || pthread_create(&h->th, NULL, run, h) != 0) {
		log_warn("display %s: no drawing history (%s)", name, strerror(errno));
		if (h->stop[0] > 0) {
			close(h->stop[0]);
			close(h->stop[1]);
		}
		XCloseDisplay(d);
		pthread_mutex_destroy(&h->mu);
		free(h);
		return NULL;
	}
	return h;
}

void
xhist_stop(struct xhist *h)
{
	if (h == NULL)
		return;
	if (write(h->stop[1], "x", 1) < 0)
		log_warn("display %s: cannot stop the drawing history thread: %s", h->name, strerror(errno));
	pthread_join(h->th, NULL);
	close(h->stop[0]);
	close(h->stop[1]);
	xerr_forget(h->d);
	XCloseDisplay(h->d);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

void
xhist_mark(struct xhist *h, int64_t from_us, int64_t to_us, const struct xhist_rect *r, int n)
{
	if (h == NULL || n <= 0)
		return;
	if (n > XHIST_MARK_RECTS)
		n = XHIST_MARK_RECTS;
	pthread_mutex_lock(&h->mu);
	h->mark[h->mnext].from = from_us;
	h->mark[h->mnext].to = to_us;
	memcpy(h->mark[h->mnext].r, r, (size_t)n * sizeof *r);
	h->mark[h->mnext].n = n;
	h->mnext = (h->mnext + 1) % MARKS;
	if (h->nmark < MARKS)
		h->nmark++;
	pthread_mutex_unlock(&h->mu);
}

/* ---- analysis ---- */

struct warea {
	int x0, y0, x1, y1;
	int64_t last, start, longest;
	int bursts;
	int64_t last_any;       /* the last drawing, detm's inputs' included */
};

static bool
meets(const struct warea *a, const struct hrect *r)
{
	return r->x <= a->x1 + AREA_PAD && a->x0 <= r->x + r->w + AREA_PAD &&
	    r->y <= a->y1 + AREA_PAD && a->y0 <= r->y + r->h + AREA_PAD;
}

static void
area_join(struct warea *a, const struct warea *b)
{
	a->x0 = b->x0 < a->x0 ? b->x0 : a->x0;
	a->y0 = b->y0 < a->y0 ? b->y0 : a->y0;
	a->x1 = b->x1 > a->x1 ? b->x1 : a->x1;
	a->y1 = b->y1 > a->y1 ? b->y1 : a->y1;
	a->bursts = b->bursts > a->bursts ? b->bursts : a->bursts;
	a->longest = b->longest > a->longest ? b->longest : a->longest;
	if (b->last > a->last) {
		a->last = b->last;
		a->start = b->start;
	}
}

static int64_t
warea_size(int x0, int y0, int x1, int y1)
{
	return (int64_t)(x1 - x0) * (int64_t)(y1 - y0);
}

/* How much a's box grows to take r. */
static int64_t
growth(const struct warea *a, const struct hrect *r)
{
	int x0 = r->x < a->x0 ? r->x : a->x0, y0 = r->y < a->y0 ? r->y : a->y0;
	int x1 = r->x + r->w > a->x1 ? r->x + r->w : a->x1, y1 = r->y + r->h > a->y1 ? r->y + r->h : a->y1;

	return warea_size(x0, y0, x1, y1) - warea_size(a->x0, a->y0, a->x1, a->y1);
}

/* The area r belongs to: among those it meets, the one that grows least
 * (then the smallest), so a one-off rectangle across two windows (an
 * expose after a raise) never joins a spinner's area to its window's;
 * -1 when it meets none. */
static int
area_pick(const struct warea *w, int n, const struct hrect *r)
{
	int best = -1;
	int64_t bg = 0, bs = 0;

	for (int i = 0; i < n; i++) {
		int64_t g, sz;

		if (!meets(&w[i], r))
			continue;
		g = growth(&w[i], r);
		sz = warea_size(w[i].x0, w[i].y0, w[i].x1, w[i].y1);
		if (best < 0 || g < bg || (g == bg && sz < bs)) {
			best = i;
			bg = g;
			bs = sz;
		}
	}
	return best;
}

/* One rectangle into the areas (w, *n of WORK_AREAS). */
static void
area_add(struct warea *w, int *n, const struct hrect *r)
{
	struct warea nw = { r->x, r->y, r->x + r->w, r->y + r->h, r->t, r->t, 0, 1, r->t };
	int hit = area_pick(w, *n, r);

	if (hit < 0 && *n == WORK_AREAS)
		hit = 0;                        /* full: the oldest area grows (rare) */
	if (hit < 0) {
		w[(*n)++] = nw;
		return;
	}
	if (r->t - w[hit].last > (int64_t)XHIST_BURST_GAP_MS * 1000) {
		w[hit].bursts++;
		w[hit].start = r->t;
	}
	nw.bursts = w[hit].bursts;
	nw.start = w[hit].start;
	nw.longest = w[hit].longest;
	area_join(&w[hit], &nw);
	if (w[hit].last - w[hit].start > w[hit].longest)
		w[hit].longest = w[hit].last - w[hit].start;
}

static bool
marked(const struct xhist *h, const struct hrect *r)
{
	for (int i = 0; i < h->nmark; i++) {
		if (r->t < h->mark[i].from || r->t > h->mark[i].to)
			continue;
		for (int k = 0; k < h->mark[i].n; k++) {
			const struct xhist_rect *m = &h->mark[i].r[k];

			if (r->x < m->x + m->w && m->x < r->x + r->w && r->y < m->y + m->h && m->y < r->y + r->h)
				return true;
		}
	}
	return false;
}

int
xhist_areas(struct xhist *h, int64_t since_us, int64_t until_us, struct xhist_area *out, int cap)
{
	struct warea *w;
	int n = 0, k = 0;

	if (h == NULL)
		return 0;
	w = xcalloc(WORK_AREAS, sizeof *w);
	pthread_mutex_lock(&h->mu);
	for (size_t i = 0; i < h->n; i++) {
		const struct hrect *r = &h->ring[(h->head + XHIST_CAP - h->n + i) % XHIST_CAP];

		if (r->t < since_us || r->t > until_us || r->w <= 0 || r->h <= 0)
			continue;
		if (!marked(h, r))
			area_add(w, &n, r);
		else {          /* an input's time: whether an area still draws, not what it is */
			int k2 = area_pick(w, n, r);

			if (k2 >= 0 && r->t > w[k2].last_any)
				w[k2].last_any = r->t;
		}
	}
	pthread_mutex_unlock(&h->mu);
	for (int i = 0; i < n && k < cap; i++) {
		int64_t last = w[i].last_any > w[i].last ? w[i].last_any : w[i].last;
		bool going = last >= until_us - (int64_t)XHIST_BURST_GAP_MS * 1000;
		bool cont = going && w[i].longest >= (int64_t)XHIST_CONTINUOUS_MS * 1000;
		bool per = w[i].bursts >= XHIST_PERIODIC_BURSTS;

		if (!cont && !per)
			continue;
		out[k++] = (struct xhist_area){ w[i].x0, w[i].y0, w[i].x1 - w[i].x0, w[i].y1 - w[i].y0,
			w[i].bursts, w[i].longest, cont, per };
	}
	free(w);
	return k;
}
