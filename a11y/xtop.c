/*
 * xtop.c - the X side of accessible windows for detm-a11y: the display's
 * top-level windows (title, pid, where they are), and which of them an
 * accessible window is.
 *
 * Why: list_windows names windows by their X title, which need not be the
 * accessible name (a browser's frame is named after its page); GTK 4
 * reports areas relative to its window, not the screen (4.8 has no screen
 * coordinates over AT-SPI), so its elements are placed by their X window's
 * position.
 *
 * Top-level windows are found as daemon/x11/xwin.c does it: the window
 * manager's _NET_CLIENT_LIST when it publishes one, else the root's mapped
 * children (the client holding WM_STATE under a reparenting frame). Titles
 * are read capped (A11Y_STR bytes) whatever the property's length; X
 * errors of windows that vanish meanwhile are ignored. The connection is
 * opened on first use and kept; when X cannot be reached the list is
 * empty and the walk goes on without it.
 *
 * Matching an accessible window to an X window (xtop_match): the process
 * ids must agree when both are known; then, for a toolkit that reports
 * window-relative areas, the nearest size (CSD margins aside), else the
 * largest overlap (at least half); the same title breaks ties and alone
 * is enough.
 *
 * Does not: list windows for detmd (daemon/x11/xwin.c does), or act on
 * windows.
 */
#include <stdlib.h>
#include <string.h>

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include "helper.h"
#include "utf8.h"

#define XTOP_MAX 1024
#define RELATIVE_SLACK 120      /* px: CSD shadows and borders around a GTK 4 window */

static Display *dpy;
static bool dpy_failed;

static int
ignore_error(Display *d, XErrorEvent *ev)
{
	(void)d;
	(void)ev;
	return 0;
}

static Display *
display(void)
{
	if (dpy == NULL && !dpy_failed) {
		dpy = XOpenDisplay(NULL);
		dpy_failed = dpy == NULL;
		if (dpy != NULL)
			XSetErrorHandler(ignore_error);
	}
	return dpy;
}

/* Up to longs 32-bit units of w's property; NULL when absent (XFree). */
static unsigned char *
prop(Window w, const char *name, Atom type, long longs, unsigned long *n, int *fmt)
{
	Atom real = None, a = XInternAtom(dpy, name, False);
	unsigned long after = 0;
	unsigned char *data = NULL;

	*n = 0;
	if (XGetWindowProperty(dpy, w, a, 0, longs, False, type, &real, fmt, n, &after, &data) != Success)
		return NULL;
	if (data != NULL && (real == None || *n == 0)) {
		XFree(data);
		data = NULL;
	}
	return data;
}

/* Up to nv CARDINALs of w's property into v (-1 for each one absent). */
static void
prop_cards(Window w, const char *name, int *v, int nv)
{
	unsigned long n;
	int fmt;
	unsigned char *d = prop(w, name, XA_CARDINAL, nv, &n, &fmt);

	for (int i = 0; i < nv; i++)
		v[i] = d != NULL && fmt == 32 && (unsigned long)i < n ? (int)((unsigned long *)(void *)d)[i] : -1;
	if (d != NULL)
		XFree(d);
}

/* The title, capped: _NET_WM_NAME (UTF-8), else WM_NAME (Latin-1 read as
 * bytes, repaired). At most A11Y_STR bytes are read: a longer title does
 * not fit with its NUL, so utf8_clip marks the cut. malloc'd. */
static char *
title_of(Window w)
{
	unsigned long n;
	int fmt;
	unsigned char *d = prop(w, "_NET_WM_NAME", XInternAtom(dpy, "UTF8_STRING", False), A11Y_STR / 4, &n,
	    &fmt);
	char *out = malloc(A11Y_STR);
	const char *text;

	if (d == NULL)
		d = prop(w, "WM_NAME", AnyPropertyType, A11Y_STR / 4, &n, &fmt);
	if (out == NULL)
		abort();
	text = d != NULL && fmt == 8 ? (const char *)d : "";
	utf8_clip(out, A11Y_STR, text, strnlen(text, n), NULL);    /* Xlib NUL-ends the data */
	if (d != NULL)
		XFree(d);
	return out;
}

/* w, or the child of w holding WM_STATE (a reparenting WM's frame). */
static Window
client_of(Window w)
{
	Window root, parent, *kids = NULL, found = w;
	unsigned int nk = 0;
	unsigned long n;
	int fmt;
	unsigned char *d = prop(w, "WM_STATE", AnyPropertyType, 2, &n, &fmt);

	if (d != NULL) {
		XFree(d);
		return w;
	}
	if (XQueryTree(dpy, w, &root, &parent, &kids, &nk) == 0)
		return w;
	for (unsigned int i = 0; i < nk; i++) {
		d = prop(kids[i], "WM_STATE", AnyPropertyType, 2, &n, &fmt);
		if (d != NULL) {
			XFree(d);
			found = kids[i];
			break;
		}
	}
	if (kids != NULL)
		XFree(kids);
	return found;
}

static void
add_window(struct xtops *x, Window w)
{
	XWindowAttributes at;
	Window child;
	struct xtop *t;
	int rx, ry;

	if (x->n >= XTOP_MAX || !XGetWindowAttributes(dpy, w, &at) || at.map_state != IsViewable ||
	    at.override_redirect || at.class == InputOnly)
		return;
	if (!XTranslateCoordinates(dpy, w, DefaultRootWindow(dpy), 0, 0, &rx, &ry, &child))
		return;
	t = &x->v[x->n++];
	t->id = w;
	t->title = title_of(w);
	prop_cards(w, "_NET_WM_PID", &t->pid, 1);
	t->pid = t->pid < 0 ? 0 : t->pid;
	t->r = (struct rect){ rx, ry, at.width, at.height };
	prop_cards(w, "_GTK_FRAME_EXTENTS", t->margin, 4);
}

void
xtops_read(struct xtops *x)
{
	Window root, parent, *kids = NULL;
	unsigned int nk = 0;
	unsigned long n = 0;
	int fmt;
	unsigned char *d;

	x->v = NULL;
	x->n = 0;
	if (display() == NULL)
		return;
	x->v = calloc(XTOP_MAX, sizeof *x->v);
	if (x->v == NULL)
		abort();
	root = DefaultRootWindow(dpy);
	d = prop(root, "_NET_CLIENT_LIST", XA_WINDOW, XTOP_MAX, &n, &fmt);
	if (d != NULL && fmt == 32) {
		for (unsigned long i = 0; i < n; i++)
			add_window(x, (Window)((unsigned long *)(void *)d)[i]);
	} else if (XQueryTree(dpy, root, &root, &parent, &kids, &nk) != 0) {
		for (unsigned int i = 0; i < nk; i++)
			add_window(x, client_of(kids[i]));
	}
	if (d != NULL)
		XFree(d);
	if (kids != NULL)
		XFree(kids);
}

void
xtops_free(struct xtops *x)
{
	for (size_t i = 0; x->v != NULL && i < x->n; i++)
		free(x->v[i].title);
	free(x->v);
	x->v = NULL;
	x->n = 0;
}

static double
overlap(const struct rect *a, const struct rect *b)
{
	int64_t x0 = a->x > b->x ? a->x : b->x, y0 = a->y > b->y ? a->y : b->y;
	int64_t x1 = (int64_t)a->x + a->w < (int64_t)b->x + b->w ? (int64_t)a->x + a->w : (int64_t)b->x + b->w;
	int64_t y1 = (int64_t)a->y + a->h < (int64_t)b->y + b->h ? (int64_t)a->y + a->h : (int64_t)b->y + b->h;
	double inter = x1 > x0 && y1 > y0 ? (double)(x1 - x0) * (double)(y1 - y0) : 0;
	double uni = (double)a->w * a->h + (double)b->w * b->h - inter;

	return uni > 0 ? inter / uni : 0;
}

/* How well t fits the accessible window (pid, area r, name): 0 not at all. */
static double
fit(const struct xtop *t, int pid, const struct rect *r, bool relative, const char *name)
{
	bool same_title = name[0] != '\0' && strcmp(name, t->title) == 0;
	double geo = 0;

	if (pid > 0 && t->pid > 0 && pid != t->pid)
		return 0;
	if (r->w > 0 && relative) {
		int d = abs(t->r.w - r->w) + abs(t->r.h - r->h);

		geo = t->r.w >= r->w && t->r.h >= r->h && d <= RELATIVE_SLACK ? 1.0 - (double)d / (RELATIVE_SLACK + 1) : 0;
	} else if (r->w > 0)
		geo = overlap(&t->r, r);
	if (geo < 0.5 && !same_title)
		return 0;
	return (geo >= 0.5 ? geo : 0) + (same_title ? 1 : 0) + (pid > 0 && pid == t->pid ? 0.5 : 0);
}

const struct xtop *
xtop_match(const struct xtops *x, int pid, const struct rect *r, bool relative, const char *name)
{
	const struct xtop *best = NULL;
	double best_fit = 0;

	for (size_t i = 0; x != NULL && i < x->n; i++) {
		double f = fit(&x->v[i], pid, r, relative, name);

		if (f > best_fit) {
			best_fit = f;
			best = &x->v[i];
		}
	}
	return best;
}
