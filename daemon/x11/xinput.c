/*
 * xinput.c - synthetic keyboard and mouse input through XTest (xinput.h):
 * the pointer here; the keyboard in xinput_keymap.c (the keyboard map and
 * its spare-keycode pool) and xinput_keys.c (text and key chords), over
 * the private header xinput_int.h. What follows holds for all three.
 *
 * Owns: nothing across calls. Each call works on the caller's Display (held
 * exclusively), sends XTest requests and ends with xerr_end, which XSyncs,
 * so the server has processed the input when the call returns.
 *
 * Nowait mode (nowait.h, an HTTP worker running a quick action): the
 * pointer's round trips (a click's facts, the focus check, the pointer
 * query, the closing sync) go through xerr_reply with its deadline; a
 * click that must move the focus first (Xlib round trips without one)
 * refuses before it presses anything. Only the motion may already have
 * been sent then, and the rerun sends the same one.
 *
 * Keyboard: text and key names become keysyms. A keysym already in the
 * keyboard map is sent as its keycode, with Shift and/or ISO_Level3_Shift
 * held as its column needs. Any other keysym is sent by binding it to a
 * spare keycode (NoSymbol in every column, or one borrowed that carries
 * only vendor keysyms: xinput_keymap.c). Those bindings are kept per
 * Display for later calls (xinput_keymap.c's cache) until xinput_idle or
 * xinput_forget puts them back as they were.
 *
 * Invariants:
 *  - every key and button this module presses is released in the same call
 *    (keys in reverse order), whatever fails; requests are only buffered
 *    between a press and its release, so nothing can stop half-way;
 *  - the keyboard map is what it was on entry when a call returns, plus the
 *    spare keycodes kept bound for later calls, unless the X server itself
 *    went away;
 *  - a spare keycode is never rebound while clients may still be
 *    translating events for its previous keysym: a rebind waits QUIET_MS
 *    after its last key event first (clients fetch the new map lazily,
 *    after the MappingNotify, when they next translate);
 *  - sizes a client controls are capped: text bytes, chords, keys per
 *    chord, click count, scroll amount.
 *
 * Without a window manager (no _NET_SUPPORTING_WM_CHECK on the root), a
 * button press first focuses and raises the top-level window under the
 * pointer, as a click-to-focus window manager would.
 *
 * When humanize_enabled() (humanize.h), moves glide along a curved path in
 * timed steps, clicks land within a couple of pixels and hold the button,
 * and text goes one character at a time with human gaps; the caller's
 * lease is held for that long. Scrolls and key chords are unchanged.
 *
 * Does not: spawn xdotool, scale image coordinates, log actions, pick the
 * display, undo Caps Lock or modifiers latched by others, or add a
 * modifier-map entry for a modifier keysym that had to be bound to a spare
 * keycode (it is then an ordinary key).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xlib-xcb.h>
#include <xcb/xtest.h>
#include <X11/Xutil.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>

#include "core/nowait.h"
#include "humanize.h"
#include "xerr.h"
#include "xinput.h"
#include "xinput_int.h"
#include "xwin.h"

/* ---- pointer ---------------------------------------------------------- */

/* The size Xlib learnt at connection time (kept current by Xlib when a
 * RandR-aware client processes ConfigureNotify; Xvfb screens do not
 * change size), so a bounds check costs no round trip. */
static int
screen_size(Display *d, int *w, int *h, struct derr *e)
{
	(void)e;
	*w = DisplayWidth(d, DefaultScreen(d));
	*h = DisplayHeight(d, DefaultScreen(d));
	return 0;
}

static int
check_point(Display *d, int x, int y, struct derr *e)
{
	int w = 0, h = 0;

	if (screen_size(d, &w, &h, e) != 0)
		return -1;
	if (x < 0 || x >= w)
		return derr_set(e, DERR_INVALID, "x",
		    "x %d is off the screen (%dx%d: x must be 0..%d)", x, w, h, w - 1);
	if (y < 0 || y >= h)
		return derr_set(e, DERR_INVALID, "y",
		    "y %d is off the screen (%dx%d: y must be 0..%d)", y, w, h, h - 1);
	return 0;
}

static int
check_button(int button, struct derr *e)
{
	if (button < 1 || button > BUTTON_MAX)
		return derr_set(e, DERR_INVALID, "button",
		    "button must be 1..%d (1 left, 2 middle, 3 right, 8 back, 9 forward)", BUTTON_MAX);
	return 0;
}

/* XTest events of the quick paths go through XCB, so that they leave in
 * one write with the requests XCB sends after them (a click's facts, the
 * closing sync): through Xlib, each switch between the two libraries
 * flushed and polled the socket on its own (about ten system calls a
 * click). Only if the server has XTEST: XCB closes a connection that sends
 * a request of a missing extension, so Xlib's XTest (an X error) is used
 * then. xinput_prepare fetched the extension's data, so finding it here
 * never waits for the server on a display.c connection. */
static bool
xtest_xcb(Display *d)
{
	const xcb_query_extension_reply_t *x = xcb_get_extension_data(XGetXCBConnection(d), &xcb_test_id);

	return x != NULL && x->present;
}

static void
fake_motion(Display *d, int x, int y)
{
	if (!xtest_xcb(d)) {
		XTestFakeMotionEvent(d, DefaultScreen(d), x, y, 0);
		return;
	}
	xcb_test_fake_input(XGetXCBConnection(d), XCB_MOTION_NOTIFY, 0, XCB_CURRENT_TIME,
	    (xcb_window_t)DefaultRootWindow(d), (int16_t)x, (int16_t)y, 0);
}

static void
fake_button(Display *d, int button, bool down)
{
	if (!xtest_xcb(d)) {
		XTestFakeButtonEvent(d, (unsigned int)button, down ? True : False, 0);
		return;
	}
	xcb_test_fake_input(XGetXCBConnection(d), down ? XCB_BUTTON_PRESS : XCB_BUTTON_RELEASE,
	    (uint8_t)button, XCB_CURRENT_TIME, XCB_NONE, 0, 0, 0);
}

void
xinput_prepare(Display *d)
{
	(void)xcb_get_extension_data(XGetXCBConnection(d), &xcb_test_id);
}

/* What a click needs to know before it presses, asked in one round trip:
 * Xlib waits for each reply before it sends the next request, XCB lets the
 * requests go out together (on the same connection, after the requests
 * Xlib has buffered: Xlib hands its queue to XCB first). A click used to
 * wait for five round trips to the X server; each costs a context switch to
 * it and back (~50 us here). */
struct click_facts {
	Window wm_check;        /* the root's _NET_SUPPORTING_WM_CHECK, or None */
	Window child;           /* the top-level window under the pointer, or None */
	Window focus;           /* the input focus (None, PointerRoot or a window) */
	bool ok;                /* all asked were answered */
};

/* The facts; the window manager check only if `wm` (it needs an atom,
 * which costs a round trip of its own the first time on a connection).
 * -1 with e only when the server went silent or away (xerr_reply). */
static int
facts_get(Display *d, bool wm, struct click_facts *f, struct derr *e)
{
	xcb_connection_t *c = XGetXCBConnection(d);
	xcb_window_t root = (xcb_window_t)DefaultRootWindow(d);
	/* Interned, not only_if_exists: Xlib caches an atom it got, so only
	 * the first click pays for it; without a window manager
	 * only_if_exists answers None, which is not cached. */
	Atom check = wm ? XInternAtom(d, "_NET_SUPPORTING_WM_CHECK", False) : None;
	xcb_get_property_cookie_t pc = { 0 };
	xcb_query_pointer_cookie_t qc;
	xcb_get_input_focus_cookie_t fc;
	xcb_get_property_reply_t *pr = NULL;
	xcb_query_pointer_reply_t *qr = NULL;
	xcb_get_input_focus_reply_t *fr = NULL;
	int rc = -1;

	memset(f, 0, sizeof *f);
	if (check != None)
		pc = xcb_get_property(c, 0, root, (xcb_atom_t)check, XCB_ATOM_WINDOW, 0, 1);
	qc = xcb_query_pointer(c, root);
	fc = xcb_get_input_focus(c);
	/* Replies come in order: once the last is in, the others are too. */
	if (xerr_reply(d, fc.sequence, (void **)&fr, e, "click") != 0 ||
	    xerr_reply(d, qc.sequence, (void **)&qr, e, "click") != 0 ||
	    (check != None && xerr_reply(d, pc.sequence, (void **)&pr, e, "click") != 0))
		goto out;
	rc = 0;
	f->ok = (!wm || pr != NULL) && qr != NULL && fr != NULL;
	if (!f->ok)
		goto out;
	if (pr != NULL && pr->type == XCB_ATOM_WINDOW && pr->format == 32 &&
	    xcb_get_property_value_length(pr) == 4)
		f->wm_check = *(xcb_window_t *)xcb_get_property_value(pr);
	f->child = qr->child;
	f->focus = fr->focus;
out:
	free(pr);
	free(qr);
	free(fr);
	return rc;
}

/* True if an EWMH window manager runs: the root names a window (facts)
 * that carries the same property. */
static bool
has_wm(Display *d, Window named)
{
	Atom check = XInternAtom(d, "_NET_SUPPORTING_WM_CHECK", False), type;
	Window again = None;
	int format;
	unsigned long n, after;
	unsigned char *p = NULL;

	if (named == None)
		return false;
	if (XGetWindowProperty(d, named, check, 0, 1, False, XA_WINDOW, &type,
	    &format, &n, &after, &p) == Success && p != NULL) {
		if (type == XA_WINDOW && format == 32 && n == 1)
			again = (Window)((unsigned long *)(void *)p)[0];
		XFree(p);
	}
	return again == named;
}

/* 1 if the focus f is child or inside it, 0 if not (or a window vanished),
 * -1 with e when the server went silent or away. */
static int
focus_within(Display *d, Window f, Window child, struct derr *e)
{
	xcb_connection_t *c = XGetXCBConnection(d);
	Window root = DefaultRootWindow(d);

	for (int depth = 0; f != None && f != PointerRoot && f != root && f != child; depth++) {
		xcb_query_tree_cookie_t ck;
		xcb_query_tree_reply_t *r;

		if (depth == 64)
			return 0;       /* no real tree is this deep */
		ck = xcb_query_tree(c, (xcb_window_t)f);
		if (xerr_reply(d, ck.sequence, (void **)&r, e, "click") != 0)
			return -1;
		if (r == NULL)
			return 0;
		f = r->parent;
		free(r);
	}
	return f == child;
}

static bool
wants_take_focus(Display *d, Window w, Atom *take_focus)
{
	Atom *protos = NULL;
	int n = 0;
	bool r = false;

	*take_focus = XInternAtom(d, "WM_TAKE_FOCUS", False);
	if (XGetWMProtocols(d, w, &protos, &n) && protos != NULL) {
		for (int i = 0; i < n; i++)
			if (protos[i] == *take_focus)
				r = true;
		XFree(protos);
	}
	return r;
}

/* Focuses (as ICCCM asks: input hint, WM_TAKE_FOCUS) and raises child.
 * True if requests without replies went out. */
static bool
focus_give(Display *d, Window child)
{
	XWindowAttributes wa;
	XWMHints *hints;
	bool input = true;
	Atom take_focus;

	if (!XGetWindowAttributes(d, child, &wa) || wa.map_state != IsViewable ||
	    wa.override_redirect || wa.class != InputOutput)
		return false;
	hints = XGetWMHints(d, child);
	if (hints != NULL) {
		if ((hints->flags & InputHint) && !hints->input)
			input = false;
		XFree(hints);
	}
	XRaiseWindow(d, child);
	if (input)
		XSetInputFocus(d, child, RevertToPointerRoot, CurrentTime);
	if (wants_take_focus(d, child, &take_focus)) {
		XEvent ev;

		memset(&ev, 0, sizeof ev);
		ev.xclient.type = ClientMessage;
		ev.xclient.window = child;
		ev.xclient.message_type = XInternAtom(d, "WM_PROTOCOLS", False);
		ev.xclient.format = 32;
		ev.xclient.data.l[0] = (long)take_focus;
		ev.xclient.data.l[1] = CurrentTime;
		XSendEvent(d, child, False, NoEventMask, &ev);
	}
	return true;
}

/* Click-to-focus for a display without a window manager: focus and raise
 * the top-level window under the pointer. Best effort: the window may
 * vanish meanwhile, so X errors here are bracketed and dropped; the caller
 * starts its own bracket afterwards. -1 with e only when the server went
 * silent or away, or, in nowait mode (nowait.h), when the focus has to
 * move: that takes round trips without a deadline (Xlib's), so it is
 * refused before anything is pressed and the click runs again where
 * waiting is allowed. Nowait mode also skips the window manager check (an
 * atom to intern): when the focus is already inside the window, a window
 * manager would change nothing either. */
static int
focus_under_pointer(Display *d, struct derr *e)
{
	bool quick = nowait_active(), sent = false;
	struct click_facts facts;
	int in;

	xerr_begin();
	if (facts_get(d, !quick, &facts, e) != 0)
		return -1;
	if (!facts.ok || facts.child == None || (!quick && has_wm(d, facts.wm_check)))
		goto out;
	if ((in = focus_within(d, facts.focus, facts.child, e)) < 0)
		return -1;
	if (in == 1)
		goto out;
	if (quick)
		return nowait_refuse(e, "the click moves the focus first");
	sent = focus_give(d, facts.child);
out:
	/* Errors of requests without replies arrive later: wait for them only
	 * when such requests were sent (a reply already brought any before it). */
	if (sent)
		XSync(d, False);
	xerr_begin();
	return 0;
}

int
xinput_focus_pointer(Display *d, struct derr *e)
{
	struct click_facts facts;
	struct derr ignored = { 0 };
	int in, r = 0;

	xerr_begin();
	if (facts_get(d, true, &facts, e) != 0)
		return -1;
	if (!facts.ok || facts.child == None)
		goto out;
	if ((in = focus_within(d, facts.focus, facts.child, e)) < 0)
		return -1;
	if (in == 1)
		goto out;
	if (has_wm(d, facts.wm_check))
		r = xwin_focus(d, facts.child, &ignored) == 0;  /* a frame: its client */
	else if (focus_give(d, facts.child)) {
		XSync(d, False);
		r = 1;
	}
out:
	xerr_begin();
	return r;
}

/* Humanised: from wherever the pointer is to (x, y) along humanize_path,
 * one motion event per step. The last event is exactly (x, y). */
static int
glide(Display *d, int x, int y, uint64_t *rng, struct derr *e)
{
	struct hpoint pts[HUMANIZE_PATH_MAX];
	int x0 = x, y0 = y, w = 0, h = 0, n, step_ms;

	if (xinput_pointer(d, &x0, &y0, e) != 0)
		return -1;
	screen_size(d, &w, &h, e);
	n = humanize_path(x0, y0, x, y, w, h, rng, pts, &step_ms);
	xerr_begin();
	for (int i = 0; i < n; i++) {
		if (i > 0)
			sleep_ms(step_ms);
		XTestFakeMotionEvent(d, DefaultScreen(d), pts[i].x, pts[i].y, 0);
		XFlush(d);
		if (xerr_io_dead(d))
			break;
	}
	return xerr_end(d, e, "move pointer");
}

int
xinput_move(Display *d, int x, int y, struct derr *e)
{
	if (check_point(d, x, y, e) != 0)
		return -1;
	if (humanize_enabled()) {
		uint64_t rng = humanize_seed();

		return glide(d, x, y, &rng, e);
	}
	xerr_begin();
	fake_motion(d, x, y);
	return xerr_end(d, e, "move pointer");
}

/* A human's own pointer motion (takeover_input.c): at once, never
 * humanised, whatever humanize_enabled() says. */
int
xinput_move_now(Display *d, int x, int y, struct derr *e)
{
	if (check_point(d, x, y, e) != 0)
		return -1;
	xerr_begin();
	fake_motion(d, x, y);
	return xerr_end(d, e, "move pointer");
}

int
xinput_button(Display *d, int button, int down, struct derr *e)
{
	if (check_button(button, e) != 0)
		return -1;
	if (down && focus_under_pointer(d, e) != 0)
		return -1;
	xerr_begin();
	fake_button(d, button, down);
	return xerr_end(d, e, down ? "press button" : "release button");
}

int
xinput_click_at(Display *d, int x, int y, int button, int count, struct derr *e)
{
	if (check_point(d, x, y, e) != 0 || check_button(button, e) != 0)
		return -1;
	if (count < 1 || count > CLICK_MAX)
		return derr_set(e, DERR_INVALID, "count", "count must be 1..%d", CLICK_MAX);
	if (humanize_enabled()) {
		uint64_t rng = humanize_seed();
		int w = 0, h = 0;
		struct hpoint p;

		screen_size(d, &w, &h, e);
		p = humanize_jitter(x, y, w, h, &rng);
		if (glide(d, p.x, p.y, &rng, e) != 0)
			return -1;
		return xinput_click(d, button, count, e);
	}
	/* No sync between the motion and the buttons: requests on one
	 * connection are processed in order (focus_under_pointer's
	 * QueryPointer sees the new position). */
	fake_motion(d, x, y);
	return xinput_click(d, button, count, e);
}

/* Humanised clicks: each press held 40-120 ms (shorter inside a double
 * click, so the pair stays within the usual double-click time). */
static int
click_slow(Display *d, int button, int count, struct derr *e)
{
	uint64_t rng = humanize_seed();

	xerr_begin();
	for (int i = 0; i < count; i++) {
		int hold = count > 1 ? humanize_uniform(&rng, 30, 60) : humanize_hold_ms(&rng);

		if (i > 0)
			sleep_ms(humanize_uniform(&rng, 50, 80));
		XTestFakeButtonEvent(d, (unsigned int)button, True, 0);
		XFlush(d);
		sleep_ms(hold);
		/* Always released, whatever the sleep did. */
		XTestFakeButtonEvent(d, (unsigned int)button, False, 0);
		XFlush(d);
	}
	return xerr_end(d, e, "click");
}

int
xinput_click(Display *d, int button, int count, struct derr *e)
{
	if (check_button(button, e) != 0)
		return -1;
	if (count < 1 || count > CLICK_MAX)
		return derr_set(e, DERR_INVALID, "count", "count must be 1..%d", CLICK_MAX);
	if (focus_under_pointer(d, e) != 0)
		return -1;
	if (humanize_enabled())
		return click_slow(d, button, count, e);
	xerr_begin();
	for (int i = 0; i < count; i++) {
		fake_button(d, button, true);
		fake_button(d, button, false);
	}
	return xerr_end(d, e, "click");
}

/* Humanised drag: glide to the start, press, glide to the end, release. */
static int
drag_slow(Display *d, int x1, int y1, int x2, int y2, int button, struct derr *e)
{
	uint64_t rng = humanize_seed();
	int rc;

	if (glide(d, x1, y1, &rng, e) != 0 || focus_under_pointer(d, e) != 0)
		return -1;
	xerr_begin();
	XTestFakeButtonEvent(d, (unsigned int)button, True, 0);
	XFlush(d);
	sleep_ms(humanize_hold_ms(&rng));
	if (xerr_end(d, e, "drag") != 0)
		rc = -1;
	else
		rc = glide(d, x2, y2, &rng, e);
	/* Always released, even if a step failed. */
	xerr_begin();
	XTestFakeButtonEvent(d, (unsigned int)button, False, 0);
	if (xerr_end(d, e, "drag") != 0)
		rc = -1;
	return rc;
}

int
xinput_drag(Display *d, int x1, int y1, int x2, int y2, int button,
    struct derr *e)
{
	int screen = DefaultScreen(d);

	if (check_button(button, e) != 0 || check_point(d, x1, y1, e) != 0 ||
	    check_point(d, x2, y2, e) != 0)
		return -1;
	if (humanize_enabled())
		return drag_slow(d, x1, y1, x2, y2, button, e);
	xerr_begin();
	XTestFakeMotionEvent(d, screen, x1, y1, 0);
	if (xerr_end(d, e, "drag") != 0 || focus_under_pointer(d, e) != 0)
		return -1;
	xerr_begin();
	XTestFakeButtonEvent(d, (unsigned int)button, True, 0);
	XSync(d, False);
	for (int i = 1; i <= DRAG_STEPS; i++) {
		long x = x1 + (long)(x2 - x1) * i / DRAG_STEPS;
		long y = y1 + (long)(y2 - y1) * i / DRAG_STEPS;

		sleep_ms(DRAG_STEP_MS);
		XTestFakeMotionEvent(d, screen, (int)x, (int)y, 0);
		XSync(d, False);
		if (xerr_io_dead(d))
			break;
	}
	/* Always released, even if a step failed. */
	XTestFakeButtonEvent(d, (unsigned int)button, False, 0);
	return xerr_end(d, e, "drag");
}

int
xinput_scroll(Display *d, const char *direction, int amount, struct derr *e)
{
	static const struct {
		const char *name;
		unsigned int button;
	} dirs[] = { { "up", 4 }, { "down", 5 }, { "left", 6 }, { "right", 7 } };
	unsigned int button = 0;

	for (size_t i = 0; direction != NULL && i < ARRAY_LEN(dirs); i++)
		if (strcasecmp(direction, dirs[i].name) == 0)
			button = dirs[i].button;
	if (button == 0)
		return derr_set(e, DERR_INVALID, "direction",
		    "direction must be up, down, left or right");
	if (amount < 1 || amount > SCROLL_MAX)
		return derr_set(e, DERR_INVALID, "amount", "amount must be 1..%d", SCROLL_MAX);
	xerr_begin();
	for (int i = 0; i < amount; i++) {
		fake_button(d, (int)button, true);
		fake_button(d, (int)button, false);
	}
	return xerr_end(d, e, "scroll");
}

int
xinput_pointer(Display *d, int *x, int *y, struct derr *e)
{
	xcb_query_pointer_cookie_t ck = xcb_query_pointer(XGetXCBConnection(d),
	    (xcb_window_t)DefaultRootWindow(d));
	xcb_query_pointer_reply_t *r = NULL;

	xerr_begin();
	if (xerr_reply(d, ck.sequence, (void **)&r, e, "query pointer") != 0)
		return -1;
	if (r == NULL)
		return derr_set(e, DERR_INTERNAL, NULL, "query pointer: the X server refused it");
	*x = r->root_x;
	*y = r->root_y;
	free(r);
	return 0;
}
