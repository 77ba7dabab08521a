/*
 * xinput.c - synthetic keyboard and mouse input through XTest (xinput.h).
 *
 * Owns: nothing across calls. Each call works on the caller's Display (held
 * exclusively), sends XTest requests and ends with xerr_end, which XSyncs,
 * so the server has processed the input when the call returns.
 *
 * Keyboard: text and key names become keysyms. A keysym already in the
 * keyboard map is sent as its keycode, with Shift and/or ISO_Level3_Shift
 * held as its column needs. Any other keysym is sent by binding it to a
 * spare keycode (NoSymbol in every column) for the duration of the call.
 * The spare pool is derived from the server's map on every call, so there
 * is no per-Display state and no global other than const tables.
 *
 * Invariants:
 *  - every key and button this module presses is released in the same call
 *    (keys in reverse order), whatever fails; requests are only buffered
 *    between a press and its release, so nothing can stop half-way;
 *  - the keyboard map is what it was on entry when a call returns (spare
 *    keycodes go back to NoSymbol), unless the X server itself went away;
 *  - a spare keycode is never rebound while clients may still be
 *    translating events for its previous keysym: a rebind or the final
 *    restore waits SETTLE_MS after the last key event first (clients fetch
 *    the new map lazily, after the MappingNotify, when they next translate);
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
#include <X11/Xutil.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>

#include "humanize.h"
#include "util.h"
#include "xerr.h"
#include "xinput.h"

#define TYPE_MAX_BYTES   (64 * 1024)   /* xinput_type text */
#define TYPE_CHUNK       50            /* characters between XSyncs */
#define KEYS_MAX_BYTES   1024          /* xinput_keys combo */
#define KEYS_MAX_CHORDS  64
#define CHORD_MAX_KEYS   8             /* names in one chord */
#define CHORD_MAX_PRESS  (CHORD_MAX_KEYS + 2)  /* plus implied Shift, Level3 */
#define KEY_NAME_MAX     64
#define POOL_MAX         256           /* spare keycodes (all of them) */
#define CACHE_MAX        256           /* displays with kept bindings */
#define QUIET_MS         500           /* a binding's last use, before rebinding it */
#define CLICK_MAX        3
#define BUTTON_MAX       7
#define SCROLL_MAX       100
#define DRAG_STEPS       10
#define DRAG_STEP_MS     5

/* What a keycode needs held to produce a keysym. */
#define NEED_SHIFT  1u
#define NEED_LEVEL3 2u

/* Columns of the core keyboard map, in XKB's canonical order: 0 = group 1
 * level 1, 1 = level 2 (Shift), 4 = level 3 (ISO_Level3_Shift), 5 = level 4.
 * Columns 2-3 are group 2, which this module does not switch to. */
static const struct {
	int col;
	unsigned need;
} columns[] = {
	{ 0, 0 },
	{ 1, NEED_SHIFT },
	{ 4, NEED_LEVEL3 },
	{ 5, NEED_SHIFT | NEED_LEVEL3 },
};

struct kcache;

/* One call's view of the keyboard map plus its spare-keycode pool. */
struct keymap {
	Display *d;
	struct kcache *cache;           /* the display's kept bindings */
	int min, max, per;
	KeySym *syms;                   /* XGetKeyboardMapping, pool blanked; XFree */
	KeyCode shift, level3;          /* 0 when the map has none */
	int npool;                      /* pool[0..nowned) came bound from the cache */
	int nowned;
	KeyCode pool[POOL_MAX];         /* spare keycodes */
	KeySym bound[POOL_MAX];         /* what each is bound to (NoSymbol: free) */
	int64_t used[POOL_MAX];         /* ms (monotonic) its last event reached the server */
	unsigned stamp[POOL_MAX];       /* batch that last planned to use it */
	bool dirty[POOL_MAX];           /* bound[] not yet sent */
};

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

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
		    "button must be 1..%d (1 left, 2 middle, 3 right)", BUTTON_MAX);
	return 0;
}

/* True if an EWMH window manager runs: the root's _NET_SUPPORTING_WM_CHECK
 * names a window that carries the same property. */
static bool
has_wm(Display *d)
{
	Atom check = XInternAtom(d, "_NET_SUPPORTING_WM_CHECK", True);
	Window w = None, again = None;
	Atom type;
	int format;
	unsigned long n, after;
	unsigned char *p;

	if (check == None)
		return false;
	for (int i = 0; i < 2; i++) {
		Window on = i == 0 ? DefaultRootWindow(d) : w;
		Window got = None;

		p = NULL;
		if (XGetWindowProperty(d, on, check, 0, 1, False, XA_WINDOW, &type,
		    &format, &n, &after, &p) == Success && p != NULL) {
			if (type == XA_WINDOW && format == 32 && n == 1)
				got = (Window)((unsigned long *)(void *)p)[0];
			XFree(p);
		}
		if (i == 0)
			w = got;
		else
			again = got;
		if (got == None)
			break;
	}
	return w != None && again == w;
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

/* Click-to-focus for a display without a window manager: focus (as ICCCM
 * asks: input hint, WM_TAKE_FOCUS) and raise the top-level window under the
 * pointer. Best effort: the window may vanish meanwhile, so X errors here
 * are bracketed and dropped; the caller starts its own bracket afterwards. */
static void
focus_under_pointer(Display *d)
{
	Window root = DefaultRootWindow(d), r, child = None;
	int rx, ry, wx, wy;
	unsigned int mask;
	XWindowAttributes wa;
	XWMHints *hints;
	bool input = true;
	Atom take_focus;

	xerr_begin();
	if (has_wm(d))
		goto out;
	if (!XQueryPointer(d, root, &r, &child, &rx, &ry, &wx, &wy, &mask) || child == None)
		goto out;
	{
		/* Already focused (focus on it or inside it): nothing to do. */
		Window f = None, fr, fp, *kids = NULL;
		unsigned int nk;
		int revert;

		XGetInputFocus(d, &f, &revert);
		while (f != None && f != PointerRoot && f != root && f != child) {
			if (!XQueryTree(d, f, &fr, &fp, &kids, &nk))
				break;
			if (kids != NULL)
				XFree(kids);
			f = fp;
		}
		if (f == child)
			goto out;
	}
	if (!XGetWindowAttributes(d, child, &wa) || wa.map_state != IsViewable ||
	    wa.override_redirect || wa.class != InputOutput)
		goto out;
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
out:
	XSync(d, False);
	xerr_begin();
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
	XTestFakeMotionEvent(d, DefaultScreen(d), x, y, 0);
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
	XTestFakeMotionEvent(d, DefaultScreen(d), x, y, 0);
	return xerr_end(d, e, "move pointer");
}

int
xinput_button(Display *d, int button, int down, struct derr *e)
{
	if (check_button(button, e) != 0)
		return -1;
	if (down)
		focus_under_pointer(d);
	xerr_begin();
	XTestFakeButtonEvent(d, (unsigned int)button, down ? True : False, 0);
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
	 * XQueryPointer sees the new position). */
	XTestFakeMotionEvent(d, DefaultScreen(d), x, y, 0);
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
	focus_under_pointer(d);
	if (humanize_enabled())
		return click_slow(d, button, count, e);
	xerr_begin();
	for (int i = 0; i < count; i++) {
		XTestFakeButtonEvent(d, (unsigned int)button, True, 0);
		XTestFakeButtonEvent(d, (unsigned int)button, False, 0);
	}
	return xerr_end(d, e, "click");
}

/* Humanised drag: glide to the start, press, glide to the end, release. */
static int
drag_slow(Display *d, int x1, int y1, int x2, int y2, int button, struct derr *e)
{
	uint64_t rng = humanize_seed();
	int rc;

	if (glide(d, x1, y1, &rng, e) != 0)
		return -1;
	focus_under_pointer(d);
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
	if (xerr_end(d, e, "drag") != 0)
		return -1;
	focus_under_pointer(d);
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
		XTestFakeButtonEvent(d, button, True, 0);
		XTestFakeButtonEvent(d, button, False, 0);
	}
	return xerr_end(d, e, "scroll");
}

int
xinput_pointer(Display *d, int *x, int *y, struct derr *e)
{
	Window r, child;
	int rx = 0, ry = 0, wx, wy;
	unsigned int mask;

	xerr_begin();
	XQueryPointer(d, DefaultRootWindow(d), &r, &child, &rx, &ry, &wx, &wy, &mask);
	if (xerr_end(d, e, "query pointer") != 0)
		return -1;
	*x = rx;
	*y = ry;
	return 0;
}

/* ---- keyboard map ----------------------------------------------------- */

/* The spare keycodes this module bound on one display, kept across calls
 * (see the invariants at the top). Reached through `caches` under
 * caches_lock; the contents are only touched by the thread holding the
 * Display (the caller's lease). */
struct kslot {
	KeyCode kc;
	KeySym sym;             /* bound in both core columns of kc */
	int64_t used_ms;        /* when its last key event reached the server */
};

struct kcache {
	Display *d;
	int n;
	struct kslot slot[POOL_MAX];
	int64_t last_ms;        /* the latest used_ms (0: none) */
};

static pthread_mutex_t caches_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kcache *caches[CACHE_MAX];

/* d's cache, created if `create` and there is room; NULL otherwise. */
static struct kcache *
cache_get(Display *d, bool create)
{
	struct kcache *c = NULL;
	int room = -1;

	pthread_mutex_lock(&caches_lock);
	for (int i = 0; i < CACHE_MAX && c == NULL; i++) {
		if (caches[i] != NULL && caches[i]->d == d)
			c = caches[i];
		else if (caches[i] == NULL && room < 0)
			room = i;
	}
	if (c == NULL && create && room >= 0) {
		c = xcalloc(1, sizeof *c);
		c->d = d;
		caches[room] = c;
	}
	pthread_mutex_unlock(&caches_lock);
	return c;
}

static KeySym
map_at(const struct keymap *km, int kc, int col)
{
	return km->syms[(size_t)(kc - km->min) * (size_t)km->per + (size_t)col];
}

static KeyCode
find_col0(const struct keymap *km, KeySym sym)
{
	for (int k = km->min; k <= km->max; k++)
		if (map_at(km, k, 0) == sym)
			return (KeyCode)k;
	return 0;
}

/* True if the server's map still has kc bound to sym as pool_write left
 * it (XKB may copy the pair into the group 2 columns). */
static bool
still_bound(const struct keymap *km, int kc, KeySym sym)
{
	if (kc < km->min || kc > km->max || map_at(km, kc, 0) != sym)
		return false;
	for (int c = 1; c < km->per; c++)
		if (map_at(km, kc, c) != sym && map_at(km, kc, c) != NoSymbol)
			return false;
	return true;
}

static bool
all_empty(const struct keymap *km, int kc)
{
	for (int c = 0; c < km->per; c++)
		if (map_at(km, kc, c) != NoSymbol)
			return false;
	return true;
}

static int
map_read(Display *d, struct keymap *km, struct derr *e)
{
	XDisplayKeycodes(d, &km->min, &km->max);
	if (km->min < 8 || km->max > 255 || km->min > km->max)
		return derr_set(e, DERR_INTERNAL, NULL, "the X server reports no keycodes");
	xerr_begin();
	km->syms = XGetKeyboardMapping(d, (KeyCode)km->min, km->max - km->min + 1, &km->per);
	if (xerr_end(d, e, "read keyboard map") != 0 || km->syms == NULL || km->per < 1) {
		bool xfailed = xerr_last() != 0 || xerr_io_dead(d);

		if (km->syms != NULL)
			XFree(km->syms);
		km->syms = NULL;
		if (!xfailed)
			derr_set(e, DERR_INTERNAL, NULL, "cannot read the keyboard map");
		return -1;
	}
	return 0;
}

/* Reads the map, finds Shift and Level3, and builds the pool: the keycodes
 * the cache holds that still carry their binding (blanked in km->syms, so
 * map_find never returns them) plus every keycode with no symbol at all.
 * Bindings someone else changed since are dropped from the cache. */
static int
keymap_load(Display *d, struct keymap *km, struct derr *e)
{
	struct kcache *c;

	memset(km, 0, sizeof *km);
	km->d = d;
	c = cache_get(d, true);
	if (c == NULL)
		return derr_set(e, DERR_UNAVAILABLE, NULL,
		    "more than %d displays take keyboard input at once", CACHE_MAX);
	km->cache = c;
	if (map_read(d, km, e) != 0)
		return -1;
	km->shift = find_col0(km, XK_Shift_L);
	if (km->shift == 0)
		km->shift = find_col0(km, XK_Shift_R);
	km->level3 = find_col0(km, XK_ISO_Level3_Shift);
	for (int i = 0; i < c->n && km->npool < POOL_MAX; i++) {
		const struct kslot *s = &c->slot[i];

		if (!still_bound(km, s->kc, s->sym))
			continue;
		for (int col = 0; col < km->per; col++)
			km->syms[(size_t)(s->kc - km->min) * (size_t)km->per + (size_t)col] = NoSymbol;
		km->pool[km->npool] = s->kc;
		km->bound[km->npool] = s->sym;
		km->used[km->npool] = s->used_ms;
		km->npool++;
	}
	km->nowned = km->npool;
	for (int k = km->min; k <= km->max && km->npool < POOL_MAX; k++) {
		bool owned = false;

		for (int s = 0; s < km->nowned; s++)
			owned = owned || km->pool[s] == k;
		if (!owned && all_empty(km, k))
			km->pool[km->npool++] = (KeyCode)k;
	}
	return 0;
}

/* The keycode that types sym from the map (outside the pool), and what
 * must be held with it. */
static bool
map_find(const struct keymap *km, KeySym sym, KeyCode *kc, unsigned *need)
{
	for (size_t c = 0; c < ARRAY_LEN(columns); c++) {
		int col = columns[c].col;
		unsigned n = columns[c].need;

		if (col >= km->per || ((n & NEED_SHIFT) && km->shift == 0) ||
		    ((n & NEED_LEVEL3) && km->level3 == 0))
			continue;
		for (int k = km->min; k <= km->max; k++)
			if (map_at(km, k, col) == sym) {
				*kc = (KeyCode)k;
				*need = n;
				return true;
			}
	}
	return false;
}

static int
pool_find(const struct keymap *km, KeySym sym)
{
	for (int s = 0; s < km->npool; s++)
		if (km->bound[s] == sym)
			return s;
	return -1;
}

/* Binds sym to a pool keycode not used by batch `stamp`: a free one, else
 * the least recently used binding, if its last key event reached the server
 * QUIET_MS ago or more. Returns the slot, or -1 with *wait_ms > 0 (retry
 * after that long) or 0 (every keycode is in this batch). */
static int
pool_take(struct keymap *km, KeySym sym, unsigned stamp, int *wait_ms)
{
	int best = -1;
	int64_t now = mono_us() / 1000;

	*wait_ms = 0;
	for (int s = 0; s < km->npool; s++) {
		if (km->stamp[s] == stamp)
			continue;
		if (km->bound[s] == NoSymbol) {
			best = s;
			break;
		}
		if (best < 0 || km->used[s] < km->used[best])
			best = s;
	}
	if (best < 0)
		return -1;
	if (km->bound[best] != NoSymbol && now - km->used[best] < QUIET_MS) {
		*wait_ms = (int)(km->used[best] + QUIET_MS - now);
		return -1;
	}
	km->bound[best] = sym;
	km->stamp[best] = stamp;
	km->dirty[best] = true;
	return best;
}

/* Marks the slots of batch `stamp` used now: call once its key events
 * reached the server (after an XSync). */
static void
pool_used(struct keymap *km, unsigned stamp)
{
	int64_t now = mono_us() / 1000;

	for (int s = 0; s < km->npool; s++)
		if (km->stamp[s] == stamp && km->bound[s] != NoSymbol)
			km->used[s] = now;
}

/* Sends the pending bindings, one keysym in both levels so neither Shift
 * nor a lower/upper case pair changes it. Inside the caller's error
 * bracket; the key events that follow on this connection are processed
 * after it, and every client gets its MappingNotify before them. */
static void
pool_write(struct keymap *km)
{
	int64_t now = mono_us() / 1000;

	for (int s = 0; s < km->npool; s++) {
		KeySym two[2];

		if (!km->dirty[s])
			continue;
		two[0] = two[1] = km->bound[s];
		XChangeKeyboardMapping(km->d, km->pool[s], 2, two, 1);
		km->dirty[s] = false;
		km->used[s] = now;      /* in case no key follows (an error) */
	}
}

/* Our own MappingNotify events would pile up in the queue of a connection
 * nobody reads events from. */
static void
drain_mapping(Display *d)
{
	XEvent ev;

	while (XCheckTypedEvent(d, MappingNotify, &ev))
		XRefreshKeyboardMapping(&ev.xmapping);
}

/* Keeps the pool's bindings in the display's cache (nothing is restored
 * here: see xinput_idle) and frees the map. */
static void
keymap_done(struct keymap *km)
{
	struct kcache *c = km->cache;

	if (c != NULL) {
		c->n = 0;
		for (int s = 0; s < km->npool; s++) {
			if (km->bound[s] == NoSymbol || km->dirty[s])
				continue;
			c->slot[c->n].kc = km->pool[s];
			c->slot[c->n].sym = km->bound[s];
			c->slot[c->n].used_ms = km->used[s];
			if (km->used[s] > c->last_ms)
				c->last_ms = km->used[s];
			c->n++;
		}
		if (!xerr_io_dead(km->d))
			drain_mapping(km->d);
	}
	if (km->syms != NULL)
		XFree(km->syms);
	km->syms = NULL;
}

/* Puts the cache's keycodes that still carry our binding back to NoSymbol
 * (what they were before we bound them) and empties the cache. */
static void
cache_restore(Display *d, struct kcache *c)
{
	struct keymap km;
	struct derr e;
	KeySym none[2] = { NoSymbol, NoSymbol };

	memset(&km, 0, sizeof km);
	if (c->n > 0 && !xerr_io_dead(d) && map_read(d, &km, &e) == 0) {
		xerr_begin();
		for (int i = 0; i < c->n; i++)
			if (still_bound(&km, c->slot[i].kc, c->slot[i].sym))
				XChangeKeyboardMapping(d, c->slot[i].kc, 2, none, 1);
		XSync(d, False);
		drain_mapping(d);
		xerr_end(d, &e, "restore keyboard map");
		XFree(km.syms);
	}
	c->n = 0;
	c->last_ms = 0;
}

int
xinput_idle(Display *d, int idle_ms)
{
	struct kcache *c = cache_get(d, false);

	if (c == NULL || c->n == 0 || mono_us() / 1000 - c->last_ms < idle_ms)
		return 0;
	cache_restore(d, c);
	return 1;
}

void
xinput_forget(Display *d)
{
	struct kcache *c = cache_get(d, false);

	if (c == NULL)
		return;
	cache_restore(d, c);
	pthread_mutex_lock(&caches_lock);
	for (int i = 0; i < CACHE_MAX; i++)
		if (caches[i] == c)
			caches[i] = NULL;
	pthread_mutex_unlock(&caches_lock);
	free(c);
}

/* Presses kc with what it needs held, releases in reverse. */
static void
tap(const struct keymap *km, KeyCode kc, unsigned need)
{
	Display *d = km->d;

	if (need & NEED_SHIFT)
		XTestFakeKeyEvent(d, km->shift, True, 0);
	if (need & NEED_LEVEL3)
		XTestFakeKeyEvent(d, km->level3, True, 0);
	XTestFakeKeyEvent(d, kc, True, 0);
	XTestFakeKeyEvent(d, kc, False, 0);
	if (need & NEED_LEVEL3)
		XTestFakeKeyEvent(d, km->level3, False, 0);
	if (need & NEED_SHIFT)
		XTestFakeKeyEvent(d, km->shift, False, 0);
}

/* ---- text ------------------------------------------------------------- */

/* Next code point of valid UTF-8 at s[*i], advancing *i. */
static uint32_t
utf8_next(const char *s, size_t *i)
{
	const unsigned char *u = (const unsigned char *)s + *i;
	uint32_t cp;
	size_t n;

	if (u[0] < 0x80) {
		cp = u[0];
		n = 0;
	} else if ((u[0] & 0xe0) == 0xc0) {
		cp = u[0] & 0x1fu;
		n = 1;
	} else if ((u[0] & 0xf0) == 0xe0) {
		cp = u[0] & 0x0fu;
		n = 2;
	} else {
		cp = u[0] & 0x07u;
		n = 3;
	}
	for (size_t k = 1; k <= n; k++)
		cp = (cp << 6) | (u[k] & 0x3fu);
	*i += n + 1;
	return cp;
}

/* The keysym that types code point cp, or NoSymbol for a control character
 * with no key. */
static KeySym
cp_keysym(uint32_t cp)
{
	switch (cp) {
	case '\n':
	case '\r':
		return XK_Return;
	case '\t':
		return XK_Tab;
	case '\b':
		return XK_BackSpace;
	case 0x1b:
		return XK_Escape;
	case 0x7f:
		return XK_Delete;
	default:
		break;
	}
	if (cp < 0x20 || (cp >= 0x80 && cp < 0xa0))
		return NoSymbol;
	if (cp < 0x100)
		return (KeySym)cp;              /* Latin-1 keysyms are the code point */
	return (KeySym)(0x01000000u | cp);
}

/* Text -> keysyms ("\r\n" is one Return). *out is xmalloc'd. */
static int
text_keysyms(const char *s, size_t len, KeySym **out, size_t *n, struct derr *e)
{
	KeySym *syms;
	size_t i = 0, k = 0;

	if (len > TYPE_MAX_BYTES)
		return derr_set(e, DERR_INVALID, "text", "text is longer than %d bytes",
		    TYPE_MAX_BYTES);
	if (len > 0 && (s == NULL || !utf8_valid(s, len)))
		return derr_set(e, DERR_INVALID, "text", "text is not valid UTF-8");
	syms = xmalloc((len + 1) * sizeof *syms);
	while (i < len) {
		size_t at = i;
		uint32_t cp = utf8_next(s, &i);
		KeySym sym = cp_keysym(cp);

		if (sym == NoSymbol) {
			free(syms);
			return derr_set(e, DERR_INVALID, "text",
			    "text has control character U+%04X at byte %zu, which no key types",
			    (unsigned)cp, at);
		}
		if (cp == '\n' && at > 0 && s[at - 1] == '\r')
			continue;
		syms[k++] = sym;
	}
	*out = syms;
	*n = k;
	return 0;
}

/* Plans keys syms[i..*end) as batch `stamp`: at most `chunk` of them, with
 * pool keycodes bound as needed. *end == i with *wait_ms > 0: nothing can
 * be planned before a binding has been quiet that long. */
static int
plan_chunk(struct keymap *km, const KeySym *syms, size_t i, size_t n, size_t chunk,
    unsigned stamp, size_t *end, int *wait_ms, struct derr *e)
{
	size_t k = i;

	*wait_ms = 0;
	while (k < n && k - i < chunk) {
		KeyCode kc;
		unsigned need;
		int slot;

		if (map_find(km, syms[k], &kc, &need)) {
			k++;
			continue;
		}
		slot = pool_find(km, syms[k]);
		if (slot < 0 && km->npool == 0)
			return derr_set(e, DERR_INTERNAL, NULL,
			    "the keyboard map has no spare keycode to type keysym 0x%lx",
			    (unsigned long)syms[k]);
		if (slot < 0 && (slot = pool_take(km, syms[k], stamp, wait_ms)) < 0)
			break;
		km->stamp[slot] = stamp;
		k++;
	}
	if (k == i && *wait_ms <= 0)
		return derr_set(e, DERR_INTERNAL, NULL, "no spare keycode is free");
	*end = k;
	return 0;
}

int
xinput_type(Display *d, const char *s, size_t len, size_t *sent, struct derr *e)
{
	struct keymap km;
	KeySym *syms = NULL;
	size_t n = 0, i = 0;
	unsigned stamp = 0;
	bool loaded = false, slow = humanize_enabled();
	size_t chunk = slow ? 1 : TYPE_CHUNK;
	uint64_t rng = humanize_seed();
	int rc = -1;

	if (sent != NULL)
		*sent = 0;
	if (text_keysyms(s, len, &syms, &n, e) != 0)
		return -1;
	if (slow && n > HUMANIZE_TYPE_MAX) {
		derr_set(e, DERR_INVALID, "text",
		    "humanized typing takes at most %d characters per call (about %d s); "
		    "split the text or turn humanize off", HUMANIZE_TYPE_MAX,
		    HUMANIZE_TYPE_MAX * 130 / 1000);
		goto out;
	}
	if (keymap_load(d, &km, e) != 0)
		goto out;
	loaded = true;
	while (i < n) {
		size_t end = i;
		int wait_ms = 0;

		if (plan_chunk(&km, syms, i, n, chunk, ++stamp, &end, &wait_ms, e) != 0)
			goto out;
		if (end == i) {
			/* More distinct keysyms than spare keycodes: every
			 * binding is in use; the text waits until the oldest
			 * has been quiet for QUIET_MS. */
			sleep_ms(wait_ms);
			continue;
		}
		xerr_begin();
		pool_write(&km);
		for (; i < end; i++) {
			KeyCode kc;
			unsigned need = 0;

			if (!map_find(&km, syms[i], &kc, &need))
				kc = km.pool[pool_find(&km, syms[i])];
			tap(&km, kc, need);
		}
		if (xerr_end(d, e, "type") != 0)
			goto out;
		pool_used(&km, stamp);
		if (sent != NULL)
			*sent = i;
		if (slow && i < n)
			sleep_ms(humanize_key_gap_ms(&rng,
			    syms[i - 1] == XK_space || syms[i - 1] == XK_Return));
	}
	rc = 0;
out:
	if (loaded)
		keymap_done(&km);
	free(syms);
	return rc;
}

/* ---- key chords ------------------------------------------------------- */

struct key {
	KeySym sym;
	bool modifier;
};

struct chord {
	int n;
	struct key keys[CHORD_MAX_KEYS];
};

static const struct {
	const char *name;
	KeySym sym;
} modifier_names[] = {
	{ "ctrl", XK_Control_L }, { "control", XK_Control_L },
	{ "shift", XK_Shift_L },
	{ "alt", XK_Alt_L },
	{ "meta", XK_Meta_L },
	{ "super", XK_Super_L }, { "win", XK_Super_L }, { "cmd", XK_Super_L },
	{ "hyper", XK_Hyper_L },
	{ "altgr", XK_ISO_Level3_Shift },
};

/* Case-insensitive fallbacks for names XStringToKeysym does not know as
 * written. */
static const struct {
	const char *name;
	KeySym sym;
} key_names[] = {
	{ "enter", XK_Return }, { "return", XK_Return },
	{ "esc", XK_Escape }, { "escape", XK_Escape },
	{ "del", XK_Delete }, { "delete", XK_Delete },
	{ "pgup", XK_Prior }, { "pageup", XK_Prior }, { "prior", XK_Prior },
	{ "pgdn", XK_Next }, { "pagedown", XK_Next }, { "next", XK_Next },
	{ "space", XK_space }, { "tab", XK_Tab },
	{ "backspace", XK_BackSpace }, { "bksp", XK_BackSpace },
	{ "up", XK_Up }, { "down", XK_Down }, { "left", XK_Left }, { "right", XK_Right },
	{ "home", XK_Home }, { "end", XK_End },
	{ "insert", XK_Insert }, { "ins", XK_Insert },
	{ "menu", XK_Menu }, { "print", XK_Print }, { "pause", XK_Pause },
	{ "capslock", XK_Caps_Lock }, { "numlock", XK_Num_Lock },
	{ "scrolllock", XK_Scroll_Lock },
	{ "plus", XK_plus }, { "minus", XK_minus },
	{ "ctrl_l", XK_Control_L }, { "ctrl_r", XK_Control_R },
	{ "shift_l", XK_Shift_L }, { "shift_r", XK_Shift_R },
	{ "alt_l", XK_Alt_L }, { "alt_r", XK_Alt_R },
	{ "super_l", XK_Super_L }, { "super_r", XK_Super_R },
};

/* One key name -> keysym; NoSymbol if unknown. */
static KeySym
name_keysym(const char *name, bool *modifier)
{
	KeySym sym;
	size_t len = strlen(name);

	*modifier = false;
	for (size_t i = 0; i < ARRAY_LEN(modifier_names); i++)
		if (strcasecmp(name, modifier_names[i].name) == 0) {
			*modifier = true;
			return modifier_names[i].sym;
		}
	sym = XStringToKeysym(name);
	if (sym == NoSymbol) {
		for (size_t i = 0; i < ARRAY_LEN(key_names); i++)
			if (strcasecmp(name, key_names[i].name) == 0) {
				sym = key_names[i].sym;
				break;
			}
	}
	if (sym == NoSymbol && (name[0] == 'f' || name[0] == 'F') && len >= 2 && len <= 3) {
		int num = 0;

		for (size_t i = 1; i < len; i++)
			num = name[i] >= '0' && name[i] <= '9' ? num * 10 + (name[i] - '0') : -1000;
		if (num >= 1 && num <= 35)
			sym = XK_F1 + (KeySym)(num - 1);
	}
	if (sym == NoSymbol && len > 0 && len <= 4 && utf8_valid(name, len)) {
		size_t i = 0;
		uint32_t cp = utf8_next(name, &i);

		if (i == len && cp >= 0x20)
			sym = cp_keysym(cp);
	}
	if (sym != NoSymbol && IsModifierKey(sym))
		*modifier = true;
	return sym;
}

/* Parses "ctrl+shift+t alt+F4 Return" into chords. A '+' where a key name
 * starts is the key '+' ("ctrl++"). */
static int
parse_combo(const char *combo, struct chord *chords, int *nchords, struct derr *e)
{
	const char *p = combo;
	int nc = 0;

	if (combo == NULL || strlen(combo) > KEYS_MAX_BYTES)
		return derr_set(e, DERR_INVALID, "keys", "keys must be 1..%d bytes",
		    KEYS_MAX_BYTES);
	for (;;) {
		struct chord *c;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (*p == '\0')
			break;
		if (nc == KEYS_MAX_CHORDS)
			return derr_set(e, DERR_INVALID, "keys", "at most %d chords at once",
			    KEYS_MAX_CHORDS);
		c = &chords[nc++];
		c->n = 0;
		for (;;) {
			char name[KEY_NAME_MAX + 1];
			const char *start = p;
			size_t len;
			KeySym sym;
			bool modifier;

			if (*p == '+')
				p++;
			else
				while (*p != '\0' && *p != '+' && *p != ' ' && *p != '\t' && *p != '\n')
					p++;
			len = (size_t)(p - start);
			if (len == 0)
				return derr_set(e, DERR_INVALID, "keys",
				    "empty key name in \"%.*s\"", utf8_prec(combo, 100), combo);
			if (len > KEY_NAME_MAX)
				return derr_set(e, DERR_INVALID, "keys", "key name \"%.*s...\" is too long",
				    32, start);
			memcpy(name, start, len);
			name[len] = '\0';
			sym = name_keysym(name, &modifier);
			if (sym == NoSymbol)
				return derr_set(e, DERR_INVALID, "keys", "unknown key name \"%s\"", name);
			if (c->n == CHORD_MAX_KEYS)
				return derr_set(e, DERR_INVALID, "keys", "at most %d keys in one chord",
				    CHORD_MAX_KEYS);
			c->keys[c->n].sym = sym;
			c->keys[c->n].modifier = modifier;
			c->n++;
			if (*p != '+')
				break;
			p++;                    /* the separator */
			if (*p == '\0' || *p == ' ' || *p == '\t' || *p == '\n')
				return derr_set(e, DERR_INVALID, "keys",
				    "\"%.*s\" ends a chord with '+'", utf8_prec(combo, 100), combo);
		}
	}
	if (nc == 0)
		return derr_set(e, DERR_INVALID, "keys", "no key given");
	*nchords = nc;
	return 0;
}

/* A modifier keysym: the key that has it in column 0; else, when a key
 * carries it at another level (Xvfb: Meta_L, Hyper_L), a column-0 modifier
 * key bound to the same modifier bit (Mod1 for Meta, Mod4 for Hyper), since
 * that bit is what applications see; else a key in the modifier map that
 * carries it at any level, pressed as is. */
static bool
modifier_find(const struct keymap *km, const XModifierKeymap *mm, KeySym sym,
    KeyCode *kc)
{
	int per = mm->max_keypermod;

	*kc = find_col0(km, sym);
	if (*kc != 0)
		return true;
	for (int c = 1; c < km->per; c++)
		for (int k = km->min; k <= km->max; k++) {
			if (map_at(km, k, c) != sym)
				continue;
			for (int row = 0; row < 8; row++) {
				bool has = false;

				for (int j = 0; j < per; j++)
					if (mm->modifiermap[row * per + j] == k)
						has = true;
				if (!has)
					continue;
				for (int j = 0; j < per; j++) {
					KeyCode o = mm->modifiermap[row * per + j];

					if (o >= km->min && o <= km->max &&
					    IsModifierKey(map_at(km, o, 0))) {
						*kc = o;
						return true;
					}
				}
				*kc = (KeyCode)k;
				return true;
			}
		}
	return false;
}

static bool
pressed_has(const KeyCode *list, int n, KeyCode kc)
{
	for (int i = 0; i < n; i++)
		if (list[i] == kc)
			return true;
	return false;
}

/* Where key k of the combo goes: keycode and what it needs held. */
struct resolved {
	KeyCode kc;
	unsigned need;
};

int
xinput_keys(Display *d, const char *combo, struct derr *e)
{
	struct chord *chords = NULL;
	struct resolved *res = NULL;
	XModifierKeymap *mm = NULL;
	struct keymap km;
	int nchords = 0, nkeys = 0, rc = -1;
	bool loaded = false, sent = false;

	chords = xcalloc(KEYS_MAX_CHORDS, sizeof *chords);
	if (parse_combo(combo, chords, &nchords, e) != 0)
		goto out;
	if (keymap_load(d, &km, e) != 0)
		goto out;
	loaded = true;
	xerr_begin();
	mm = XGetModifierMapping(d);
	if (mm == NULL) {
		derr_set(e, DERR_INTERNAL, NULL, "cannot read the modifier map");
		goto out;
	}
	res = xcalloc((size_t)KEYS_MAX_CHORDS * CHORD_MAX_KEYS, sizeof *res);
	/* Resolve everything (binding spares as one batch) before any key goes
	 * down. */
	for (int c = 0; c < nchords; c++)
		for (int k = 0; k < chords[c].n; k++) {
			const struct key *key = &chords[c].keys[k];
			struct resolved *r = &res[nkeys++];
			bool found;
			int slot, wait_ms = 0;

			r->need = 0;
			if (key->modifier)
				found = modifier_find(&km, mm, key->sym, &r->kc);
			else
				found = map_find(&km, key->sym, &r->kc, &r->need);
			if (found)
				continue;
			slot = pool_find(&km, key->sym);
			while (slot < 0 && (slot = pool_take(&km, key->sym, 1, &wait_ms)) < 0 &&
			    wait_ms > 0)
				sleep_ms(wait_ms);      /* nothing sent yet: safe to wait */
			if (slot < 0) {
				derr_set(e, DERR_INVALID, "keys",
				    "too many keys missing from the keyboard map (at most %d)",
				    km.npool);
				goto out;
			}
			km.stamp[slot] = 1;
			r->kc = km.pool[slot];
		}
	pool_write(&km);
	nkeys = 0;
	for (int c = 0; c < nchords; c++) {
		KeyCode down[CHORD_MAX_PRESS];
		int ndown = 0;

		for (int k = 0; k < chords[c].n; k++) {
			const struct resolved *r = &res[nkeys++];
			KeyCode want[3];
			int nwant = 0;

			if (r->need & NEED_SHIFT)
				want[nwant++] = km.shift;
			if (r->need & NEED_LEVEL3)
				want[nwant++] = km.level3;
			want[nwant++] = r->kc;
			for (int w = 0; w < nwant; w++) {
				if (ndown == CHORD_MAX_PRESS || pressed_has(down, ndown, want[w]))
					continue;
				XTestFakeKeyEvent(d, want[w], True, 0);
				down[ndown++] = want[w];
			}
		}
		while (ndown > 0)
			XTestFakeKeyEvent(d, down[--ndown], False, 0);
		sent = true;
	}
	rc = 0;
out:
	if (mm != NULL)
		XFreeModifiermap(mm);
	if (loaded) {
		if (rc == 0)
			rc = xerr_end(d, e, "keys");
		else
			XSync(d, False);
		if (sent)
			pool_used(&km, 1);
		keymap_done(&km);
	}
	free(res);
	free(chords);
	return rc;
}
