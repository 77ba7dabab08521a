/*
 * xwin.c - top-level windows of one display. See xwin.h.
 *
 * Owns: nothing across calls. Every call interns its atoms, decides afresh
 * whether an EWMH window manager runs, and computes the top-level list.
 *
 * Which windows are "top-level":
 *   - EWMH WM (root _NET_SUPPORTING_WM_CHECK names a window whose own
 *     _NET_SUPPORTING_WM_CHECK points at itself): _NET_CLIENT_LIST_STACKING
 *     (bottom to top), else _NET_CLIENT_LIST.
 *   - Otherwise: XQueryTree on the root (bottom to top), skipping
 *     override-redirect and InputOnly children. A child carrying WM_STATE,
 *     or with a descendant carrying it (the client of a reparenting,
 *     non-EWMH WM, found as xprop/xdotool do), is listed unless withdrawn;
 *     a child without WM_STATE is listed while it is viewable.
 * With no WM at all, xwin_minimize acts as a minimal WM would: it sets
 * WM_STATE to IconicState and unmaps, so the window stays listed with
 * visible=false; xwin_focus maps it again and sets NormalState.
 *
 * Invariants: ids handed out and accepted are client windows (the window
 * the application created), never WM frames. Every function taking an id
 * accepts only an id in the current top-level list (a frame id is mapped to
 * its client); anything else, the root included, is DERR_NOT_FOUND
 * "window_id" without any request touching that id. A window that vanishes
 * mid-call is skipped while listing and is DERR_NOT_FOUND for actions.
 * Every XGetWindowProperty/XQueryTree result is XFree'd on every path.
 * Geometry: x,y is the root position of the client's outer (border) corner,
 * width,height its inside size (decorations excluded); xwin_move(x,y) then
 * xwin_get reports x,y (under a WM, once it has acted: the frame is moved
 * by the client's distance to x,y), and xwin_resize(w,h) reports w,h
 * unless a WM applies size hints (xterm's character cells).
 *
 * Does not: keep caches, select events, wait for a WM to act (focus, move
 * and minimise under a WM are requests the WM carries out asynchronously),
 * or manage windows beyond what minimise/focus need without a WM.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include "core/log.h"
#include "xerr.h"
#include "xwin.h"

#define MAX_WINDOWS 1024
#define MAX_NEEDLE 256
#define MAX_COORD 16384
#define MAX_SIZE 16384
#define CLIENT_SEARCH_DEPTH 4
#define FOCUS_CHAIN_MAX 64
/* Property reads are capped (in 32-bit units): 1024 bytes of text. */
#define TEXT_LONGS 256

enum {
	A_NET_SUPPORTING_WM_CHECK,
	A_NET_SUPPORTED,
	A_NET_CLIENT_LIST,
	A_NET_CLIENT_LIST_STACKING,
	A_NET_ACTIVE_WINDOW,
	A_NET_WM_NAME,
	A_NET_WM_PID,
	A_NET_WM_STATE,
	A_NET_WM_STATE_HIDDEN,
	A_NET_MOVERESIZE_WINDOW,
	A_UTF8_STRING,
	A_WM_STATE,
	A_WM_PROTOCOLS,
	A_WM_DELETE_WINDOW,
	A__COUNT
};

static const char *const atom_names[A__COUNT] = {
	[A_NET_SUPPORTING_WM_CHECK] = "_NET_SUPPORTING_WM_CHECK",
	[A_NET_SUPPORTED] = "_NET_SUPPORTED",
	[A_NET_CLIENT_LIST] = "_NET_CLIENT_LIST",
	[A_NET_CLIENT_LIST_STACKING] = "_NET_CLIENT_LIST_STACKING",
	[A_NET_ACTIVE_WINDOW] = "_NET_ACTIVE_WINDOW",
	[A_NET_WM_NAME] = "_NET_WM_NAME",
	[A_NET_WM_PID] = "_NET_WM_PID",
	[A_NET_WM_STATE] = "_NET_WM_STATE",
	[A_NET_WM_STATE_HIDDEN] = "_NET_WM_STATE_HIDDEN",
	[A_NET_MOVERESIZE_WINDOW] = "_NET_MOVERESIZE_WINDOW",
	[A_UTF8_STRING] = "UTF8_STRING",
	[A_WM_STATE] = "WM_STATE",
	[A_WM_PROTOCOLS] = "WM_PROTOCOLS",
	[A_WM_DELETE_WINDOW] = "WM_DELETE_WINDOW",
};

/* The per-call view of the display. */
struct ctx {
	Display *d;
	Window root;
	Atom a[A__COUNT];
	bool wm;                /* an EWMH window manager runs */
};

/* One top-level window: the client and the root child that holds it. */
struct top {
	Window client;
	Window frame;           /* == client when not reparented */
	bool visible;
};

/* Whose input focus it is, computed once per call. */
struct focus {
	Window chain[FOCUS_CHAIN_MAX];  /* the focus window and its ancestors */
	int n;
	Window active;          /* _NET_ACTIVE_WINDOW, 0 if none or no WM */
};

/* ---- properties ---- */

/* Reads up to max_longs 32-bit units of w's property prop, which must have
 * type `type` (AnyPropertyType: any) and format fmt. Returns the data (XFree
 * it) with *n items and *type_out, or NULL if absent, mismatched or on error. */
static unsigned char *
prop_read(const struct ctx *c, Window w, Atom prop, Atom type, int fmt,
    long max_longs, unsigned long *n, Atom *type_out)
{
	Atom real_type = None;
	int real_fmt = 0;
	unsigned long items = 0, after = 0;
	unsigned char *data = NULL;

	if (XGetWindowProperty(c->d, w, prop, 0, max_longs, False, type,
	    &real_type, &real_fmt, &items, &after, &data) != Success)
		return NULL;
	if (data == NULL)
		return NULL;
	if (real_type == None || real_fmt != fmt || items == 0 ||
	    (type != AnyPropertyType && real_type != type)) {
		XFree(data);
		return NULL;
	}
	*n = items;
	if (type_out)
		*type_out = real_type;
	return data;
}

/* The first 32-bit item of a property, or false if absent. */
static bool
prop_long(const struct ctx *c, Window w, Atom prop, Atom type, unsigned long *out)
{
	unsigned long n = 0;
	unsigned char *data = prop_read(c, w, prop, type, 32, 1, &n, NULL);

	if (data == NULL)
		return false;
	*out = ((unsigned long *)(void *)data)[0];
	XFree(data);
	return true;
}

/* WM_STATE's state field, or -1 when w has no WM_STATE. */
static int
wm_state(const struct ctx *c, Window w)
{
	unsigned long v;

	if (!prop_long(c, w, c->a[A_WM_STATE], c->a[A_WM_STATE], &v))
		return -1;
	return (int)(v & 0xff);
}

static bool
prop_has_atom(const struct ctx *c, Window w, Atom prop, Atom want)
{
	unsigned long n = 0;
	unsigned char *data = prop_read(c, w, prop, XA_ATOM, 32, 1024, &n, NULL);
	bool r = false;

	if (data == NULL)
		return false;
	for (unsigned long i = 0; i < n && !r; i++)
		r = ((unsigned long *)(void *)data)[i] == want;
	XFree(data);
	return r;
}

/* ---- text ---- */

/* Copies src[0..len) (stopping at a NUL) into dst[cap] as UTF-8 with the
 * one repair rule of common/utf8.c: valid sequences are kept, invalid bytes
 * become U+FFFD, and it stops before a sequence that would not fit. */
static void
put_utf8(char *dst, size_t cap, const char *src, size_t len)
{
	utf8_fix(dst, cap, src, strnlen(src, len));
}

/* Latin-1 (ICCCM STRING) to UTF-8, same truncation rule as put_utf8. */
static void
put_latin1(char *dst, size_t cap, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0;

	for (size_t i = 0; i < len && s[i] != '\0'; i++) {
		if (s[i] < 0x80) {
			if (o + 1 >= cap)
				break;
			dst[o++] = (char)s[i];
		} else {
			if (o + 2 >= cap)
				break;
			dst[o++] = (char)(0xc0 | (s[i] >> 6));
			dst[o++] = (char)(0x80 | (s[i] & 0x3f));
		}
	}
	dst[o] = '\0';
}

/* _NET_WM_NAME, else WM_NAME in whatever encoding it has. */
static void
read_title(const struct ctx *c, Window w, char *dst, size_t cap)
{
	unsigned long n = 0;
	Atom type = None;
	unsigned char *data;
	char **list = NULL;
	int count = 0;

	dst[0] = '\0';
	data = prop_read(c, w, c->a[A_NET_WM_NAME], c->a[A_UTF8_STRING], 8,
	    TEXT_LONGS, &n, NULL);
	if (data) {
		put_utf8(dst, cap, (const char *)data, n);
		XFree(data);
		return;
	}
	data = prop_read(c, w, XA_WM_NAME, AnyPropertyType, 8, TEXT_LONGS, &n, &type);
	if (data == NULL)
		return;
	if (type == XA_STRING) {
		put_latin1(dst, cap, (const char *)data, n);
	} else if (type == c->a[A_UTF8_STRING]) {
		put_utf8(dst, cap, (const char *)data, n);
	} else {
		XTextProperty tp = { data, type, 8, n };

		if (Xutf8TextPropertyToTextList(c->d, &tp, &list, &count) >= Success &&
		    list != NULL && count > 0)
			put_utf8(dst, cap, list[0], strlen(list[0]));
		else    /* unknown encoding: keep the ASCII we can be sure of */
			put_latin1(dst, cap, (const char *)data, n);
		if (list)
			XFreeStringList(list);
	}
	XFree(data);
}

/* WM_CLASS is "instance\0class\0" in STRING encoding. */
static void
read_class(const struct ctx *c, Window w, struct xwin *o)
{
	unsigned long n = 0;
	unsigned char *data = prop_read(c, w, XA_WM_CLASS, XA_STRING, 8, 64, &n, NULL);
	size_t first;

	o->wm_instance[0] = o->wm_class[0] = '\0';
	if (data == NULL)
		return;
	first = strnlen((const char *)data, n);
	put_latin1(o->wm_instance, sizeof o->wm_instance, (const char *)data, first);
	if (first + 1 < n)
		put_latin1(o->wm_class, sizeof o->wm_class,
		    (const char *)data + first + 1, n - first - 1);
	XFree(data);
}

/* ---- context, WM, top-level list ---- */

static void
ctx_init(struct ctx *c, Display *d)
{
	Window check = 0;
	unsigned long v;

	memset(c, 0, sizeof *c);
	c->d = d;
	c->root = DefaultRootWindow(d);
	XInternAtoms(d, (char **)(uintptr_t)atom_names, A__COUNT, False, c->a);
	/* A stale check window gives BadWindow: that is "no WM". */
	xerr_begin();
	if (prop_long(c, c->root, c->a[A_NET_SUPPORTING_WM_CHECK], XA_WINDOW, &v) &&
	    v != 0 &&
	    prop_long(c, (Window)v, c->a[A_NET_SUPPORTING_WM_CHECK], XA_WINDOW, &check))
		c->wm = check == v && xerr_last() == 0;
	xerr_begin();
}

/* w itself or the first descendant (breadth-first, bounded) with WM_STATE. */
static Window
find_client(const struct ctx *c, Window w, int depth)
{
	Window root, parent, *kids = NULL, found = 0;
	unsigned int n = 0;

	if (wm_state(c, w) >= 0)
		return w;
	if (depth <= 0 || !XQueryTree(c->d, w, &root, &parent, &kids, &n))
		return 0;
	for (unsigned int i = n; i-- > 0 && !found;)
		if (wm_state(c, kids[i]) >= 0)
			found = kids[i];
	for (unsigned int i = n; i-- > 0 && !found;)
		found = find_client(c, kids[i], depth - 1);
	if (kids)
		XFree(kids);
	return found;
}

/* The ancestor of w that is a child of the root (w itself if it is one). */
static Window
frame_of(const struct ctx *c, Window w)
{
	for (int i = 0; i < FOCUS_CHAIN_MAX; i++) {
		Window root, parent = 0, *kids = NULL;
		unsigned int n = 0;

		if (!XQueryTree(c->d, w, &root, &parent, &kids, &n))
			return w;
		if (kids)
			XFree(kids);
		if (parent == root || parent == 0)
			return w;
		w = parent;
	}
	return w;
}

/* Fills *t for EWMH client w; false if it vanished. */
static bool
ewmh_top(const struct ctx *c, Window w, struct top *t)
{
	XWindowAttributes wa;
	bool hidden;

	xerr_begin();
	if (!XGetWindowAttributes(c->d, w, &wa) || xerr_last() != 0)
		return false;
	hidden = wm_state(c, w) == IconicState ||
	    prop_has_atom(c, w, c->a[A_NET_WM_STATE], c->a[A_NET_WM_STATE_HIDDEN]);
	t->client = w;
	t->frame = frame_of(c, w);
	t->visible = wa.map_state == IsViewable && !hidden;
	return xerr_last() == 0;
}

/* Fills *t for root child k when it is top-level (see the top comment). */
static bool
plain_top(const struct ctx *c, Window k, struct top *t)
{
	XWindowAttributes wa;
	Window client;
	int state;

	xerr_begin();
	if (!XGetWindowAttributes(c->d, k, &wa) || xerr_last() != 0)
		return false;
	if (wa.override_redirect || wa.class == InputOnly)
		return false;
	client = find_client(c, k, CLIENT_SEARCH_DEPTH);
	state = client ? wm_state(c, client) : -1;
	if (xerr_last() != 0)
		return false;
	if (client == 0) {
		if (wa.map_state != IsViewable)
			return false;
		client = k;
	} else if (state == WithdrawnState ||
	    (state != IconicState && wa.map_state != IsViewable)) {
		return false;
	}
	t->client = client;
	t->frame = k;
	t->visible = wa.map_state == IsViewable && state != IconicState;
	return true;
}

/* The top-level windows, bottom to top, at most MAX_WINDOWS (the topmost
 * ones). *out is malloc'd. Protocol errors are absorbed (vanished windows
 * are skipped); xerr state is reset on return. */
static void
tops_list(const struct ctx *c, struct top **out, size_t *count)
{
	struct top *tops = xcalloc(MAX_WINDOWS, sizeof *tops);
	size_t got = 0;
	unsigned long n = 0;
	unsigned char *data = NULL;

	if (c->wm) {
		xerr_begin();
		data = prop_read(c, c->root, c->a[A_NET_CLIENT_LIST_STACKING],
		    XA_WINDOW, 32, MAX_WINDOWS, &n, NULL);
		if (data == NULL)
			data = prop_read(c, c->root, c->a[A_NET_CLIENT_LIST],
			    XA_WINDOW, 32, MAX_WINDOWS, &n, NULL);
		for (unsigned long i = n; data && i-- > 0 && got < MAX_WINDOWS;) {
			Window w = (Window)((unsigned long *)(void *)data)[i];

			if (xerr_io_dead(c->d))
				break;
			if (ewmh_top(c, w, &tops[got]))
				got++;
		}
	} else {
		Window root, parent, *kids = NULL;
		unsigned int nk = 0;

		xerr_begin();
		if (XQueryTree(c->d, c->root, &root, &parent, &kids, &nk))
			data = (unsigned char *)kids;
		for (unsigned int i = nk; data && i-- > 0 && got < MAX_WINDOWS;) {
			if (xerr_io_dead(c->d))
				break;
			if (plain_top(c, kids[i], &tops[got]))
				got++;
		}
	}
	if (data)
		XFree(data);
	xerr_begin();
	/* Collected top to bottom; the contract is bottom to top. */
	for (size_t i = 0; i < got / 2; i++) {
		struct top tmp = tops[i];

		tops[i] = tops[got - 1 - i];
		tops[got - 1 - i] = tmp;
	}
	*out = tops;
	*count = got;
}

/* Looks up id (a client, or a frame holding one) in the top-level list. */
static int
resolve(const struct ctx *c, unsigned long id, struct top *t, struct derr *e)
{
	struct top *tops;
	size_t n;
	int rc = -1;

	if (id == 0 || id > 0x1fffffffUL)       /* X ids are 29 bits */
		return derr_set(e, DERR_NOT_FOUND, "window_id", "no window 0x%lx", id);
	tops_list(c, &tops, &n);
	for (size_t i = 0; i < n; i++)
		if (tops[i].client == id || tops[i].frame == id) {
			*t = tops[i];
			rc = 0;
			break;
		}
	free(tops);
	if (rc != 0) {
		if (xerr_io_dead(c->d))
			return derr_set(e, DERR_UNAVAILABLE, NULL, "the X server is gone");
		return derr_set(e, DERR_NOT_FOUND, "window_id",
		    "no top-level window 0x%lx", id);
	}
	return 0;
}

/* ---- focus and window info ---- */

static void
focus_read(const struct ctx *c, struct focus *f)
{
	Window w = 0;
	int revert;
	unsigned long v;

	memset(f, 0, sizeof *f);
	xerr_begin();
	if (c->wm && prop_long(c, c->root, c->a[A_NET_ACTIVE_WINDOW], XA_WINDOW, &v))
		f->active = (Window)v;
	XGetInputFocus(c->d, &w, &revert);
	while (w != None && w != PointerRoot && w != c->root &&
	    f->n < FOCUS_CHAIN_MAX) {
		Window root, parent = 0, *kids = NULL;
		unsigned int n = 0;

		f->chain[f->n++] = w;
		if (!XQueryTree(c->d, w, &root, &parent, &kids, &n))
			break;
		if (kids)
			XFree(kids);
		w = parent;
	}
	xerr_begin();
}

static bool
focus_has(const struct focus *f, const struct top *t)
{
	if (f->active != 0)
		return f->active == t->client;
	for (int i = 0; i < f->n; i++)
		if (f->chain[i] == t->client || f->chain[i] == t->frame)
			return true;
	return false;
}

/* Fills *o for t; false if the window vanished meanwhile. */
static bool
info_fill(const struct ctx *c, const struct top *t, const struct focus *f,
    struct xwin *o)
{
	XWindowAttributes wa;
	Window child;
	int rx = 0, ry = 0;
	unsigned long pid = 0;

	memset(o, 0, sizeof *o);
	xerr_begin();
	if (!XGetWindowAttributes(c->d, t->client, &wa) ||
	    !XTranslateCoordinates(c->d, t->client, c->root, 0, 0, &rx, &ry, &child))
		return false;
	o->id = t->client;
	read_title(c, t->client, o->title, sizeof o->title);
	read_class(c, t->client, o);
	if (prop_long(c, t->client, c->a[A_NET_WM_PID], XA_CARDINAL, &pid) &&
	    pid > 0 && pid <= INT32_MAX)
		o->pid = (int)pid;
	o->x = rx - wa.border_width;
	o->y = ry - wa.border_width;
	o->width = wa.width;
	o->height = wa.height;
	o->focused = focus_has(f, t);
	o->visible = t->visible;
	return xerr_last() == 0;
}

/* Info for every top-level window, bottom to top. */
static int
infos(Display *d, struct xwin **out, size_t *count, struct derr *e)
{
	struct ctx c;
	struct focus f;
	struct top *tops = NULL;
	struct xwin *v = NULL;
	size_t n = 0, got = 0;
	int rc = -1;

	ctx_init(&c, d);
	tops_list(&c, &tops, &n);
	focus_read(&c, &f);
	v = xcalloc(n ? n : 1, sizeof *v);
	for (size_t i = 0; i < n; i++)
		if (info_fill(&c, &tops[i], &f, &v[got]))
			got++;
	xerr_begin();
	if (xerr_end(d, e, "list windows") != 0)
		goto out;
	*out = v;
	*count = got;
	v = NULL;
	rc = 0;
out:
	free(v);
	free(tops);
	return rc;
}

int
xwin_list(Display *d, struct xwin **out, size_t *n, struct derr *e)
{
	*out = NULL;
	*n = 0;
	return infos(d, out, n, e);
}

int
xwin_get(Display *d, unsigned long id, struct xwin *out, struct derr *e)
{
	struct ctx c;
	struct focus f;
	struct top t;

	ctx_init(&c, d);
	if (resolve(&c, id, &t, e) != 0)
		return -1;
	focus_read(&c, &f);
	if (!info_fill(&c, &t, &f, out)) {
		if (xerr_end(d, e, "get window") != 0)
			return -1;
		return derr_set(e, DERR_NOT_FOUND, "window_id", "window 0x%lx is gone", id);
	}
	return xerr_end(d, e, "get window");
}

int
xwin_find(Display *d, const char *needle, struct xwin *out, struct derr *e)
{
	struct xwin *v = NULL;
	size_t n = 0, len = needle ? strnlen(needle, MAX_NEEDLE + 1) : 0;
	int rc = -1;

	if (len == 0)
		return derr_set(e, DERR_INVALID, "window_name", "window name is empty");
	if (len > MAX_NEEDLE)
		return derr_set(e, DERR_INVALID, "window_name",
		    "window name is longer than %d bytes", MAX_NEEDLE);
	if (infos(d, &v, &n, e) != 0)
		return -1;
	for (size_t i = n; i-- > 0;) {
		if (!v[i].visible)
			continue;
		if (strcasestr(v[i].title, needle) || strcasestr(v[i].wm_class, needle) ||
		    strcasestr(v[i].wm_instance, needle)) {
			*out = v[i];
			rc = 0;
			goto out;
		}
	}
	rc = derr_set(e, DERR_NOT_FOUND, "window_name", "no window matches '%.*s'",
	    (int)len, needle);
out:
	free(v);
	return rc;
}

int
xwin_active(Display *d, struct xwin *out, struct derr *e)
{
	struct xwin *v = NULL;
	size_t n = 0;
	int rc = -1;

	if (infos(d, &v, &n, e) != 0)
		return -1;
	for (size_t i = n; i-- > 0;)
		if (v[i].focused) {
			*out = v[i];
			rc = 0;
			goto out;
		}
	rc = derr_set(e, DERR_NOT_FOUND, NULL, "no window has the focus");
out:
	free(v);
	return rc;
}

/* The windows typed keys reach now, innermost first (at most
 * FOCUS_CHAIN_MAX): the focus window and its ancestors, or (focus on
 * PointerRoot or the root) the root's child under the pointer. 0 of them:
 * the keys go nowhere (focus None, or the pointer over the bare root). */
static int
key_chain(const struct ctx *c, Window *chain)
{
	Window w = None, root, child = 0;
	int revert, n = 0, rx, ry, wx, wy;
	unsigned int mask;

	XGetInputFocus(c->d, &w, &revert);
	if (w == None)
		return 0;
	if (w == PointerRoot || w == c->root) {
		if (!XQueryPointer(c->d, c->root, &root, &child, &rx, &ry, &wx, &wy, &mask) ||
		    child == None)
			return 0;
		chain[0] = child;
		return 1;
	}
	while (w != None && w != c->root && n < FOCUS_CHAIN_MAX) {
		Window parent = 0, *kids = NULL;
		unsigned int nk = 0;

		chain[n++] = w;
		if (!XQueryTree(c->d, w, &root, &parent, &kids, &nk))
			break;
		if (kids)
			XFree(kids);
		w = parent;
	}
	return n;
}

/* Whether root child w (no listed top-level) is something keys could be
 * meant for: mapped, on the screen, and not the window manager's own
 * focus holder (openbox focuses its 1x1 check window at -100,-100 when no
 * client has focus). Under a window manager it must be override-redirect
 * (a popup menu): any other such root child is the manager's own, e.g.
 * the frame of a client that was destroyed while it had the focus (X
 * reverts the focus to the frame until the manager moves it on; openbox
 * under load took seconds, and keys "went into" that untitled window). */
static bool
shown(const struct ctx *c, Window w)
{
	XWindowAttributes wa;
	unsigned long check = 0;

	if (c->wm && prop_long(c, c->root, c->a[A_NET_SUPPORTING_WM_CHECK], XA_WINDOW, &check) &&
	    (Window)check == w)
		return false;
	if (!XGetWindowAttributes(c->d, w, &wa) || wa.map_state != IsViewable ||
	    (c->wm && !wa.override_redirect))
		return false;
	return wa.x + wa.width > 0 && wa.y + wa.height > 0 &&
	    wa.x < DisplayWidth(c->d, DefaultScreen(c->d)) &&
	    wa.y < DisplayHeight(c->d, DefaultScreen(c->d));
}

int
xwin_key_target(Display *d, struct xwin *out, struct derr *e)
{
	Window chain[FOCUS_CHAIN_MAX];
	struct ctx c;
	struct focus f;
	struct top *tops = NULL;
	size_t nt = 0;
	int n, found = 0;

	memset(out, 0, sizeof *out);
	ctx_init(&c, d);
	xerr_begin();
	n = key_chain(&c, chain);
	if (n > 0) {
		tops_list(&c, &tops, &nt);
		focus_read(&c, &f);
		for (size_t i = 0; i < nt && !found; i++)
			for (int k = 0; k < n && !found; k++)
				if (tops[i].client == chain[k] || tops[i].frame == chain[k])
					found = info_fill(&c, &tops[i], &f, out) ? 1 : 0;
		if (!found && shown(&c, chain[n - 1])) {
			/* not a listed top-level (a popup menu): name what it is */
			out->id = chain[n - 1];
			read_title(&c, chain[0], out->title, sizeof out->title);
			found = 1;
		}
		free(tops);
	}
	xerr_begin();           /* a window gone meanwhile is no error; a dead server is */
	if (xerr_end(d, e, "read the keyboard focus") != 0)
		return -1;
	return found;
}

/* ---- actions ---- */

static void
send_root_message(const struct ctx *c, Window w, Atom type, long l0, long l1,
    long l2, long l3, long l4)
{
	XEvent ev;

	memset(&ev, 0, sizeof ev);
	ev.xclient.type = ClientMessage;
	ev.xclient.window = w;
	ev.xclient.message_type = type;
	ev.xclient.format = 32;
	ev.xclient.data.l[0] = l0;
	ev.xclient.data.l[1] = l1;
	ev.xclient.data.l[2] = l2;
	ev.xclient.data.l[3] = l3;
	ev.xclient.data.l[4] = l4;
	XSendEvent(c->d, c->root, False,
	    SubstructureRedirectMask | SubstructureNotifyMask, &ev);
}

/* Without a WM, this module is the one keeping WM_STATE for direct root
 * children it minimises (so the list keeps them). */
static void
set_wm_state(const struct ctx *c, Window w, long state)
{
	long data[2] = { state, None };

	XChangeProperty(c->d, w, c->a[A_WM_STATE], c->a[A_WM_STATE], 32,
	    PropModeReplace, (unsigned char *)data, 2);
}

int
xwin_focus(Display *d, unsigned long id, struct derr *e)
{
	struct ctx c;
	struct top t;
	XWindowAttributes wa;
	Window got = 0;
	int revert;

	ctx_init(&c, d);
	if (resolve(&c, id, &t, e) != 0)
		return -1;
	xerr_begin();
	if (c.wm) {
		/* Source indication 2: a pager, which WMs obey without
		 * focus-stealing checks. */
		send_root_message(&c, t.client, c.a[A_NET_ACTIVE_WINDOW], 2,
		    CurrentTime, 0, 0, 0);
		XRaiseWindow(d, t.client);
		return xerr_end(d, e, "focus window");
	}
	/* Reparented (a non-EWMH WM): map/raise requests on the client go to
	 * the WM, which de-iconifies and raises the frame. */
	if (!t.visible) {
		if (t.frame == t.client)
			set_wm_state(&c, t.client, NormalState);
		XMapRaised(d, t.client);
	}
	XRaiseWindow(d, t.client);
	if (xerr_end(d, e, "focus window") != 0)
		return -1;
	/* A non-EWMH reparenting WM maps asynchronously: focus only what is
	 * viewable (else BadMatch). */
	xerr_begin();
	if (XGetWindowAttributes(d, t.client, &wa) && wa.map_state == IsViewable)
		XSetInputFocus(d, t.client, RevertToParent, CurrentTime);
	if (xerr_end(d, e, "focus window") != 0)
		return -1;
	XGetInputFocus(d, &got, &revert);
	if (got != t.client)
		log_debug("focus on 0x%lx did not take (focus is 0x%lx)", id,
		    (unsigned long)got);
	return 0;
}

static int
check_range(const char *field, int v, int lo, int hi, struct derr *e)
{
	if (v < lo || v > hi)
		return derr_set(e, DERR_INVALID, field, "%s must be %d..%d, not %d",
		    field, lo, hi, v);
	return 0;
}

int
xwin_move(Display *d, unsigned long id, int x, int y, struct derr *e)
{
	struct ctx c;
	struct top t;
	XWindowAttributes fa, ca;
	Window child;
	int cx = 0, cy = 0, fx, fy;

	if (check_range("x", x, -MAX_COORD, MAX_COORD, e) != 0 ||
	    check_range("y", y, -MAX_COORD, MAX_COORD, e) != 0)
		return -1;
	ctx_init(&c, d);
	if (resolve(&c, id, &t, e) != 0)
		return -1;
	xerr_begin();
	if (!c.wm) {
		XMoveWindow(d, t.client, x, y);
		return xerr_end(d, e, "move window");
	}
	/* A WM places the frame (NorthWest gravity: its outer corner), so move
	 * the frame by the distance the client has to go; the decorations
	 * stay the same size. */
	if (!XGetWindowAttributes(d, t.frame, &fa) ||
	    !XTranslateCoordinates(d, t.client, c.root, 0, 0, &cx, &cy, &child) ||
	    !XGetWindowAttributes(d, t.client, &ca))
		return xerr_end(d, e, "move window");
	fx = fa.x + (x - (cx - ca.border_width));
	fy = fa.y + (y - (cy - ca.border_width));
	if (prop_has_atom(&c, c.root, c.a[A_NET_SUPPORTED], c.a[A_NET_MOVERESIZE_WINDOW]))
		/* flags: NorthWestGravity, x and y present, source: pager */
		send_root_message(&c, t.client, c.a[A_NET_MOVERESIZE_WINDOW],
		    NorthWestGravity | 1L << 8 | 1L << 9 | 2L << 12, fx, fy, 0, 0);
	else
		XMoveWindow(d, t.client, fx, fy);
	return xerr_end(d, e, "move window");
}

int
xwin_resize(Display *d, unsigned long id, int width, int height,
    struct derr *e)
{
	struct ctx c;
	struct top t;

	if (check_range("width", width, 1, MAX_SIZE, e) != 0 ||
	    check_range("height", height, 1, MAX_SIZE, e) != 0)
		return -1;
	ctx_init(&c, d);
	if (resolve(&c, id, &t, e) != 0)
		return -1;
	xerr_begin();
	XResizeWindow(d, t.client, (unsigned)width, (unsigned)height);
	return xerr_end(d, e, "resize window");
}

/* A WM iconifies a window when it gets to the request: wait (at most
 * MINIMIZE_SETTLE_MS) until the client is no longer viewable, so the
 * window state the caller reads next is the outcome, not the moment
 * before it. A WM that never does it leaves the window visible, and the
 * reply says so. */
#define MINIMIZE_SETTLE_MS 1000
static void
minimize_settle(Display *d, Window client)
{
	XWindowAttributes wa;
	struct derr ignored = { 0 };

	for (int waited = 0; waited < MINIMIZE_SETTLE_MS; waited += 5) {
		int ok;

		xerr_begin();
		ok = XGetWindowAttributes(d, client, &wa);
		if (xerr_end(d, &ignored, "minimise settle") != 0 || !ok || wa.map_state != IsViewable)
			return;
		usleep(5000);
	}
}

int
xwin_minimize(Display *d, unsigned long id, struct derr *e)
{
	struct ctx c;
	struct top t;

	ctx_init(&c, d);
	if (resolve(&c, id, &t, e) != 0)
		return -1;
	xerr_begin();
	if (c.wm || t.frame != t.client) {
		/* WM_CHANGE_STATE to the root: the WM iconifies it. */
		XIconifyWindow(d, t.client, DefaultScreen(d));
	} else {
		set_wm_state(&c, t.client, IconicState);
		XUnmapWindow(d, t.client);
	}
	if (xerr_end(d, e, "minimise window") != 0)
		return -1;
	minimize_settle(d, t.client);
	return 0;
}

int
xwin_close(Display *d, unsigned long id, bool force, const char **how,
    struct derr *e)
{
	struct ctx c;
	struct top t;
	Atom *protos = NULL;
	int nprotos = 0;
	bool can_delete = false;
	int rc = -1;

	*how = NULL;
	ctx_init(&c, d);
	if (resolve(&c, id, &t, e) != 0)
		return -1;
	xerr_begin();
	if (!force && XGetWMProtocols(d, t.client, &protos, &nprotos)) {
		for (int i = 0; i < nprotos; i++)
			if (protos[i] == c.a[A_WM_DELETE_WINDOW])
				can_delete = true;
	}
	if (can_delete) {
		XEvent ev;

		memset(&ev, 0, sizeof ev);
		ev.xclient.type = ClientMessage;
		ev.xclient.window = t.client;
		ev.xclient.message_type = c.a[A_WM_PROTOCOLS];
		ev.xclient.format = 32;
		ev.xclient.data.l[0] = (long)c.a[A_WM_DELETE_WINDOW];
		ev.xclient.data.l[1] = CurrentTime;
		XSendEvent(d, t.client, False, NoEventMask, &ev);
	} else {
		/* The client's id, never the frame's: that would kill the WM. */
		XKillClient(d, t.client);
	}
	if (xerr_end(d, e, "close window") != 0)
		goto out;
	*how = can_delete ? "delete" : "kill";
	rc = 0;
out:
	if (protos)
		XFree(protos);
	return rc;
}
