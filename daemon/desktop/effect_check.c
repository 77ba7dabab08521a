/*
 * effect_check.c - the window side of the effect verdict and the checks of
 * `expect` (effect.h has the rules): top-level windows before and after
 * the input, popups the watch saw mapped, and each kind of expectation.
 *
 * Owns: f->win0/win1, the window findings of f (win_ev, windows, the
 * appeared windows' union) and f->expect_*. The one OCR engine of
 * expectations (ocr.h: not thread-safe, ~20 MB, ~0.1 s to make) is made at
 * the first text expectation and kept; calls take its mutex.
 *
 * Does not: wait for events (effect.c) or compare pixels (effect_px.c).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xlib-xcb.h>
#include <xcb/xcb.h>

#include "backends/ocr.h"
#include "core/jx.h"
#include "core/util.h"
#include "effect_int.h"
#include "x11/a11y.h"
#include "x11/xerr.h"

#define OCR_PAD 8
#define OCR_SCALE 2
#define POPUP_MIN 4

static pthread_mutex_t ocr_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ocr *ocr_engine;

void
fx_windows(struct effect *f, struct display_lease *l, bool after)
{
	struct xwin **v = after ? &f->win1 : &f->win0;
	size_t *n = after ? &f->nwin1 : &f->nwin0;
	struct derr e = { 0 };
	struct xwin *got = NULL;
	size_t ng = 0;

	if (xwin_list(l->d, &got, &ng, &e) != 0) {
		/* cannot tell: the list before stays the list after (no window
		 * "went" because the list could not be read) */
		free(got);
		if (after && f->win1 == NULL && f->nwin0 > 0) {
			f->win1 = xcalloc(f->nwin0, sizeof *f->win1);
			memcpy(f->win1, f->win0, f->nwin0 * sizeof *f->win1);
			f->nwin1 = f->nwin0;
		}
		return;
	}
	free(*v);
	*v = got;
	*n = ng;
}

static const struct xwin *
win_find(const struct xwin *v, size_t n, unsigned long id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return &v[i];
	return NULL;
}

static const struct xwin *
win_focused(const struct xwin *v, size_t n)
{
	for (size_t i = n; i-- > 0;)
		if (v[i].focused)
			return &v[i];
	return NULL;
}

/* ---- where the input goes ---- */

static void
target_add(struct effect *f, int x, int y, int w, int h)
{
	if (f->ntarget < EFFECT_MAX_TARGET && w > 0 && h > 0)
		f->target[f->ntarget++] = (struct fx_rect){ x, y, w, h };
}

/* The topmost visible top-level window holding (x, y), or NULL. */
static const struct xwin *
win_at(const struct xwin *v, size_t n, int x, int y)
{
	for (size_t i = n; i-- > 0;)
		if (v[i].visible && x >= v[i].x && y >= v[i].y && x < v[i].x + v[i].width &&
		    y < v[i].y + v[i].height)
			return &v[i];
	return NULL;
}

/* The root's child at (x, y) (a WM frame, an override-redirect popup or a
 * plain window): its rectangle joins the target; its client's id base is
 * returned (0 none). */
static unsigned long
child_at(struct effect *f, Display *d, int x, int y, unsigned long rmask)
{
	Window root = DefaultRootWindow(d), child = None, r;
	int dx, dy, gx, gy;
	unsigned int gw, gh, bw, depth;

	xerr_begin();
	if (!XTranslateCoordinates(d, root, root, x, y, &dx, &dy, &child) || child == None ||
	    !XGetGeometry(d, child, &r, &gx, &gy, &gw, &gh, &bw, &depth) || xerr_last() != 0) {
		xerr_begin();
		return 0;
	}
	target_add(f, gx, gy, (int)(gw + 2 * bw), (int)(gh + 2 * bw));
	return child & ~rmask;
}

/* Keys: the focused window; with the focus following the pointer, the
 * point under it. NULL and *x < 0 when the keys go nowhere visible. */
static const struct xwin *
keys_target(struct effect *f, Display *d, int *x, int *y, unsigned long *base, unsigned long rmask)
{
	const struct xwin *t = win_focused(f->win0, f->nwin0);
	Window fw = None, root = DefaultRootWindow(d), r, c;
	int revert, wx, wy;
	unsigned int m;

	*x = *y = -1;
	if (t != NULL)
		return t;
	XGetInputFocus(d, &fw, &revert);
	if (fw == PointerRoot && XQueryPointer(d, root, &r, &c, x, y, &wx, &wy, &m))
		return NULL;
	if (fw != None && fw != PointerRoot && fw != root)
		*base = fw & ~rmask;
	return NULL;
}

void
fx_target(struct effect *f, struct display_lease *l)
{
	Display *d = l->d;
	unsigned long rmask = xcb_get_setup(XGetXCBConnection(d))->resource_id_mask, bases[3] = { 0, 0, 0 };
	const struct xwin *top = NULL;
	int x = f->px, y = f->py;

	f->mask = xcalloc((size_t)f->sw * (size_t)f->sh, 1);
	f->ntarget = 0;
	if (x < 0)
		top = keys_target(f, d, &x, &y, &bases[0], rmask);
	if (x >= 0) {
		bases[1] = child_at(f, d, x, y, rmask);
		top = win_at(f->win0, f->nwin0, x, y);
	}
	if (top != NULL) {
		bases[2] = top->id & ~rmask;
		target_add(f, top->x, top->y, top->width, top->height);
		if (f->px < 0)
			f->keys_rect = (struct fx_rect){ top->x, top->y, top->width, top->height };
	}
	snprintf(f->target_desc, sizeof f->target_desc, top != NULL ? "the window \"%.120s\"" : "",
	    top != NULL ? top->title : "");
	f->has_target_win = top != NULL && f->px >= 0;
	if (f->has_target_win)
		f->target_win = *top;
	for (size_t i = 0; i < f->nwin0; i++) {
		unsigned long b = f->win0[i].id & ~rmask;

		if (f->win0[i].visible && b != 0 && (b == bases[0] || b == bases[1] || b == bases[2]))
			target_add(f, f->win0[i].x, f->win0[i].y, f->win0[i].width, f->win0[i].height);
	}
	for (int i = 0; i < f->ntarget; i++) {
		struct fx_rect t = f->target[i];
		int x1 = t.x + t.w > f->sw ? f->sw : t.x + t.w, y1 = t.y + t.h > f->sh ? f->sh : t.y + t.h;

		for (int yy = t.y < 0 ? 0 : t.y; yy < y1; yy++)
			for (int xx = t.x < 0 ? 0 : t.x; xx < x1; xx++)
				f->mask[(size_t)yy * (size_t)f->sw + (size_t)xx] |= FX_TARGET;
	}
}

static void
change_add(struct effect *f, const char *what, unsigned long id, const char *title)
{
	json_object *o = json_object_new_object();
	char sid[24];

	snprintf(sid, sizeof sid, "0x%lx", id);
	jx_add_str(o, "change", what);
	jx_add_str(o, "id", sid);
	jx_add_str(o, "title", title);
	json_object_array_add(f->windows, o);
}

static void
grow_union(struct effect *f, int x, int y, int w, int h)
{
	if (f->wx1 <= f->wx0) {
		f->wx0 = x;
		f->wy0 = y;
		f->wx1 = x + w;
		f->wy1 = y + h;
		return;
	}
	f->wx0 = x < f->wx0 ? x : f->wx0;
	f->wy0 = y < f->wy0 ? y : f->wy0;
	f->wx1 = x + w > f->wx1 ? x + w : f->wx1;
	f->wy1 = y + h > f->wy1 ? y + h : f->wy1;
}

/* The first sentence of the evidence, by weight: appeared, went, popup,
 * title, focus (the first of each kind). */
static void
say(struct effect *f, int weight, int *best, const char *fmt, ...) DETM_PRINTF(4, 5);

static void
say(struct effect *f, int weight, int *best, const char *fmt, ...)
{
	va_list ap;

	if (weight >= *best)
		return;
	*best = weight;
	va_start(ap, fmt);
	vsnprintf(f->win_ev, sizeof f->win_ev, fmt, ap);
	va_end(ap);
}

/* A popup the watch saw mapped: not a tooltip, on screen, big enough. */
static bool
popup_real(Display *d, unsigned long id, XWindowAttributes *wa)
{
	Atom type = XInternAtom(d, "_NET_WM_WINDOW_TYPE", False), tip = XInternAtom(d,
	    "_NET_WM_WINDOW_TYPE_TOOLTIP", False), got;
	unsigned char *p = NULL;
	unsigned long n = 0, after;
	int fmt;
	bool tooltip = false;

	xerr_begin();
	if (!XGetWindowAttributes(d, (Window)id, wa) || xerr_last() != 0)
		return false;
	if (XGetWindowProperty(d, (Window)id, type, 0, 16, False, XA_ATOM, &got, &fmt, &n, &after, &p) ==
	    Success && p != NULL) {
		for (unsigned long i = 0; fmt == 32 && i < n; i++)
			tooltip = tooltip || ((Atom *)(void *)p)[i] == tip;
		XFree(p);
	}
	xerr_begin();
	return !tooltip && wa->width >= POPUP_MIN && wa->height >= POPUP_MIN &&
	    wa->map_state == IsViewable && wa->x + wa->width > 0 && wa->y + wa->height > 0;
}

static void
popups(struct effect *f, struct display_lease *l, int *best)
{
	for (int i = 0; i < f->w.nwin; i++) {
		XWindowAttributes wa;

		if (f->w.win[i].what != 'm' || !f->w.win[i].override || !popup_real(l->d, f->w.win[i].id, &wa))
			continue;
		change_add(f, "popup", f->w.win[i].id, "");
		grow_union(f, wa.x, wa.y, wa.width, wa.height);
		say(f, 2, best, "a menu or popup opened at (%d, %d), %dx%d", wa.x, wa.y, wa.width, wa.height);
	}
}

bool
fx_window_evidence(struct effect *f, struct display_lease *l)
{
	const struct xwin *a, *b, *fa, *fb;
	int best = 99;

	json_object_put(f->windows);
	f->windows = json_object_new_array();
	f->win_ev[0] = '\0';
	f->wx0 = f->wy0 = f->wx1 = f->wy1 = 0;
	for (size_t i = 0; i < f->nwin1; i++) {
		a = &f->win1[i];
		b = win_find(f->win0, f->nwin0, a->id);
		/* Under a window manager the after-list can catch a new
		 * client focused before its frame is mapped: a window that was
		 * not there and now has the focus appeared too. */
		if ((a->visible || (b == NULL && a->focused)) && (b == NULL || !b->visible)) {
			change_add(f, "appeared", a->id, a->title);
			grow_union(f, a->x, a->y, a->width, a->height);
			say(f, 0, &best, "a window \"%.120s\" appeared", a->title);
		} else if (b != NULL && strcmp(a->title, b->title) != 0) {
			change_add(f, "title", a->id, a->title);
			say(f, 3, &best, "the window title \"%.80s\" became \"%.80s\"", b->title, a->title);
		}
	}
	for (size_t i = 0; i < f->nwin0; i++) {
		b = &f->win0[i];
		a = win_find(f->win1, f->nwin1, b->id);
		if (b->visible && (a == NULL || !a->visible)) {
			change_add(f, "went", b->id, b->title);
			say(f, 1, &best, "the window \"%.120s\" went away", b->title);
		}
	}
	popups(f, l, &best);
	fa = win_focused(f->win1, f->nwin1);
	fb = win_focused(f->win0, f->nwin0);
	if (fa != NULL && (fb == NULL || fb->id != fa->id)) {
		change_add(f, "focus", fa->id, fa->title);
		say(f, 4, &best, "the focus moved to the window \"%.120s\"", fa->title);
	}
	if (f->win_ev[0] != '\0' && f->win_us == 0)
		f->win_us = f->w.first_win_us != 0 ? f->w.first_win_us : mono_us();
	return f->win_ev[0] != '\0';
}

bool
fx_any(const struct effect *f)
{
	return f->nchg > 0 || f->win_ev[0] != '\0';
}

/* ---- expect ---- */

static void
met(struct effect *f, int v, const char *fmt, ...) DETM_PRINTF(3, 4);

static void
met(struct effect *f, int v, const char *fmt, ...)
{
	va_list ap;

	f->expect_met = v;
	va_start(ap, fmt);
	vsnprintf(f->expect_why, sizeof f->expect_why, fmt, ap);
	va_end(ap);
	if (v == 1 && f->expect_us == 0)
		f->expect_us = mono_us();
}

static bool
title_in(const struct xwin *v, size_t n, const char *t)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].visible && strcasestr(v[i].title, t) != NULL)
			return true;
	return false;
}

static void
check_window(struct effect *f)
{
	bool was = title_in(f->win0, f->nwin0, f->x.phrase), is = title_in(f->win1, f->nwin1, f->x.phrase);

	if (!f->x.gone && is && !was)
		met(f, 1, "a window \"%.120s\" appeared", f->x.phrase);
	else if (!f->x.gone)
		met(f, 0, was ? "a window \"%.120s\" was already open before the input" :
		    "no window \"%.120s\" appeared", f->x.phrase);
	else if (was && !is)
		met(f, 1, "the window \"%.120s\" went away", f->x.phrase);
	else
		met(f, 0, was ? "the window \"%.120s\" is still open" :
		    "no window \"%.120s\" was open before the input", f->x.phrase);
}

/* OCR of rectangle (x, y, w, h) of the screen as frame fr has it
 * (clipped to fr): 1 when the phrase is in it, 0 not, -1 with e. *seen:
 * what OCR read (the first line of the last one asked), for the reason. */
static int
ocr_has(const struct xcap_frame *fr, int x, int y, int w, int h, const char *phrase, char *seen,
    size_t seen_len, struct derr *e)
{
	char *text = NULL;
	int x1 = x + w, y1 = y + h, rc;

	x = x < fr->src_x ? fr->src_x : x;
	y = y < fr->src_y ? fr->src_y : y;
	x1 = x1 > fr->src_x + fr->width ? fr->src_x + fr->width : x1;
	y1 = y1 > fr->src_y + fr->height ? fr->src_y + fr->height : y1;
	if (x1 <= x || y1 <= y)
		return 0;
	if (ocr_engine == NULL && (ocr_engine = ocr_new("eng", e)) == NULL)
		return -1;
	if (ocr_text(ocr_engine, fr->rgb, fr->width, fr->height, x - fr->src_x, y - fr->src_y, x1 - x, y1 - y,
	    (x1 - x) * (y1 - y) * OCR_SCALE * OCR_SCALE <= OCR_MAX_PIXELS ? OCR_SCALE : 1, &text, NULL, e) != 0)
		return -1;
	rc = ocr_match(text, phrase) ? 1 : 0;
	snprintf(seen, seen_len, "%s", text);
	for (char *p = seen; *p != '\0'; p++)
		if (*p == '\n')
			*p = ' ';
	free(text);
	return rc;
}

/* One changed region, padded: the phrase before (*b) and after (*a) the
 * input, read from the picture before and a fresh capture. -1 with e. */
static int
ocr_region(struct effect *f, struct display_lease *l, const struct fx_region *c, int *b, int *a,
    char *seen, size_t seen_len, struct derr *e)
{
	struct xcap_req q = { .x = c->x - OCR_PAD, .y = c->y - OCR_PAD, .w = c->w + 2 * OCR_PAD,
		.h = c->h + 2 * OCR_PAD };
	struct xcap_frame now = { 0 };
	int rc = -1;

	q.x = q.x < 0 ? 0 : q.x;
	q.y = q.y < 0 ? 0 : q.y;
	if (xcap_grab(l->cap, &q, &now, e) != 0)
		goto out;
	if ((*b = ocr_has(&f->before, q.x, q.y, q.w, q.h, f->x.phrase, seen, seen_len, e)) < 0 ||
	    (*a = ocr_has(&now, now.src_x, now.src_y, now.width, now.height, f->x.phrase, seen, seen_len, e)) < 0)
		goto out;
	rc = 0;
out:
	xcap_frame_free(&now);
	return rc;
}

/* text: in a changed region after the input and not before it (text-gone:
 * the reverse). Only the regions that changed are read. */
static void
check_text(struct effect *f, struct display_lease *l)
{
	struct derr e = { 0 };
	char seen[120] = "";
	bool before = false, after = false;
	int b = 0, a = 0;

	if (f->nchg == 0) {
		met(f, 0, "no region changed, so the text \"%.120s\" did not %s", f->x.phrase,
		    f->x.gone ? "go" : "appear");
		return;
	}
	pthread_mutex_lock(&ocr_mu);
	for (int i = 0; i < f->nchg; i++) {
		if (ocr_region(f, l, &f->chg[i], &b, &a, seen, sizeof seen, &e) != 0)
			break;
		before = before || b;
		after = after || a;
	}
	pthread_mutex_unlock(&ocr_mu);
	if (e.code != DERR_OK)
		met(f, -1, "OCR could not read the changed region: %.300s", e.message);
	else if (!f->x.gone && after && !before)
		met(f, 1, "the text \"%.120s\" appeared (OCR, in the region that changed)", f->x.phrase);
	else if (!f->x.gone)
		met(f, 0, after ? "the text \"%.120s\" was there before the input too" :
		    "OCR does not read \"%.120s\" in the regions that changed (it read: %.100s)", f->x.phrase, seen);
	else if (before && !after)
		met(f, 1, "the text \"%.120s\" went away (OCR, in the region that changed)", f->x.phrase);
	else
		met(f, 0, before ? "the text \"%.120s\" is still there (OCR read: %.100s)" :
		    "OCR did not read \"%.120s\" in the changed regions before the input", f->x.phrase, seen);
}

/* element: one targeted lookup in the task display's tree, after an effect. */
static void
check_element(struct effect *f)
{
	struct a11y_query q = { .max = 50 };
	json_object *all = NULL, *arr;
	struct derr e = { 0 };
	char what[A11Y_NAME_MAX + 40];
	bool found = false;

	snprintf(what, sizeof what, "%s \"%s\"", f->x.words.role_word[0] ? f->x.words.role_word :
	    "element", f->x.words.name);
	if (f->number < 0 || !a11y_active(f->number)) {
		met(f, -1, "cannot check %s: %s", what, f->number < 0 ? "the shared desktop has no "
		    "accessibility tree of detm's" : "no accessible application runs on the display");
		return;
	}
	if (!fx_any(f)) {
		met(f, 0, "the input had no effect, so %s cannot be its doing", what);
		return;
	}
	q.name = f->x.words.name[0] != '\0' ? f->x.words.name : NULL;
	if (a11y_elements(f->number, &q, &all, &e) != 0) {
		met(f, -1, "the accessibility tree could not be read: %.300s", e.message);
		return;
	}
	arr = json_object_object_get(all, "elements");
	for (size_t i = 0; i < json_object_array_length(arr) && !found; i++)
		found = a11y_el_matches(&f->x.words, json_object_array_get_idx(arr, i), true);
	json_object_put(all);
	if (found != f->x.gone)
		met(f, 1, "%s is %s the accessibility tree", what, found ? "in" : "no longer in");
	else
		met(f, 0, "%s is %s the accessibility tree", what, found ? "still in" : "not in");
}

static void
check_settled(struct effect *f)
{
	int64_t last = fx_last_drawing(f, mono_us());

	last = last > f->win_us ? last : f->win_us;

	if (!fx_any(f))
		met(f, 0, "nothing changed, so nothing settled");
	else if (mono_us() - last >= (int64_t)f->x.settled_ms * 1000)
		met(f, 1, "the screen changed and then stayed still for %d ms", f->x.settled_ms);
	else
		met(f, 0, "the screen did not stay still for %d ms", f->x.settled_ms);
}

void
fx_expect(struct effect *f, struct display_lease *l)
{
	if (!f->has_x || f->expect_met == 1)
		return;
	switch (f->x.kind) {
	case EXPECT_WINDOW:
		check_window(f);
		break;
	case EXPECT_TEXT:
		check_text(f, l);
		break;
	case EXPECT_ELEMENT:
		check_element(f);
		break;
	case EXPECT_SETTLED:
		check_settled(f);
		break;
	default:
		met(f, -1, "nothing to check");
	}
}
