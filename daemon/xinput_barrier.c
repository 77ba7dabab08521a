/*
 * xinput_barrier.c - proof that the window typed into has consumed every
 * key event sent so far, so a spare keycode used by those events can be
 * rebound without changing what they type.
 *
 * Why a proof and not a delay. Xlib (and so xterm, Xt, Motif, Tk) applies
 * a keymap change when it *reads* the notify from its socket (it sets a
 * "map pending" flag in the wire-to-event converter) and fetches the new
 * map at the next XLookupString. A client that reads a batch holding key
 * events for keycode K and, after them, the notify of K's rebinding
 * translates those earlier key events with the new map: the text arrives
 * with characters substituted. How long that takes depends only on when
 * the client gets the CPU, so no quiet time is safe (the x11 suite saw
 * 558 bytes where 544 were typed; tests/x11 input_type_stopped_client
 * stops the xterm for longer than any quiet time and sees it every run).
 * XSync proves only that the server processed the events.
 *
 * The proof. Xt dispatches a MappingNotify in event order and, unless the
 * event's serial is older than its last fetch, fetches the map again
 * (core GetKeyboardMapping): that request proves every event queued before
 * the notify was dispatched, and Xt translates key events when it
 * dispatches them. With RECORD this module watches, in server order, our
 * own ChangeKeyboardMapping requests and the focus client's
 * GetKeyboardMapping requests, and makes two no-op changes: the fetch
 * that follows the first (whatever notify caused it) moves the client's
 * "last fetch" serial past every earlier notify, so the fetch that follows
 * the second can only come from dispatching the second, which was queued
 * after every key event typed so far.
 *
 * Toolkits that translate keys in event order with their own keymap
 * (GTK, Qt and Chromium through xkbcommon) cannot mix maps this way; they
 * fetch through XKB, not the core request, so they give no proof: after a
 * short probe their window is remembered as silent and xinput_keymap.c
 * falls back to QUIET_MS. A plain Xlib program that never fetches the core
 * map is unprotected the same way (see README).
 *
 * Owns: per display (struct xbar, in xinput_keymap.c's cache) a second
 * connection for RECORD's data, opened through the connector display.c
 * registers (it knows the cookie), a GC naming our connection to RECORD,
 * and the focus windows known to answer or to stay silent.
 * Invariants: a context is enabled only inside xbar_prove and disabled and
 * drained before it returns; nothing but the two no-op changes (which
 * rewrite one keycode with what it already holds) is sent meanwhile.
 *
 * Does not: bind keycodes, type, or decide which keycodes need the proof
 * (xinput_keymap.c).
 */
#include <poll.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <X11/Xlib.h>
#include <X11/Xproto.h>
#include <X11/extensions/record.h>

#include "util.h"
#include "xerr.h"
#include "xinput.h"
#include "xinput_int.h"

#define KNOWN_MAX        16
#define PROBE_MS         3000   /* an unknown window's first answer */
#define ANSWER_MS        60000  /* a window that answered before */
#define DRAIN_MS         2000

struct xbar {
	Display *rec;                   /* RECORD data connection */
	GC gc;                          /* a resource of d: records d's requests */
	Window answers[KNOWN_MAX];      /* focus windows that fetched before */
	int nanswers;
	Window silent[KNOWN_MAX];       /* focus windows that never did */
	int nsilent;
};

/* What the data connection showed during one proof. */
struct watch {
	bool started, ended;
	bool have_ours;
	XID ours;                       /* d's client id base */
	unsigned changes;               /* our ChangeKeyboardMapping requests */
	unsigned fetches;               /* their fetches since our last change */
};

static Display *(*connector)(Display *d);

void
xinput_set_connector(Display *(*fn)(Display *d))
{
	connector = fn;
}

static Display *
connect_default(Display *d)
{
	Display *r = XOpenDisplay(DisplayString(d));

	if (r != NULL)
		xerr_watch(r);
	return r;
}

void
xbar_free(Display *d, struct xbar *b)
{
	if (b == NULL)
		return;
	if (b->gc != NULL && d != NULL && !xerr_io_dead(d))
		XFreeGC(d, b->gc);
	if (b->rec != NULL) {
		xerr_forget(b->rec);
		XCloseDisplay(b->rec);
	}
	free(b);
}

static bool
known(const Window *list, int n, Window w)
{
	for (int i = 0; i < n; i++)
		if (list[i] == w)
			return true;
	return false;
}

static void
remember(Window *list, int *n, Window w)
{
	if (known(list, *n, w))
		return;
	if (*n == KNOWN_MAX) {
		memmove(list, list + 1, (KNOWN_MAX - 1) * sizeof *list);
		(*n)--;
	}
	list[(*n)++] = w;
}

static void
on_data(XPointer closure, XRecordInterceptData *data)
{
	struct watch *w = (struct watch *)closure;

	if (data->category == XRecordStartOfData)
		w->started = true;
	else if (data->category == XRecordEndOfData)
		w->ended = true;
	else if (data->category == XRecordFromClient && data->data_len > 0) {
		unsigned op = ((const unsigned char *)data->data)[0];

		if (getenv("DETM_BAR_DEBUG"))
			fprintf(stderr, "  rec op %u/%u base %#lx t %lld\n", op, ((const unsigned char *)data->data)[1], data->id_base, (long long)(mono_us() / 1000 % 100000));

		if (op == X_ChangeKeyboardMapping) {
			/* Only d changes the map while the context is on. */
			w->ours = data->id_base;
			w->have_ours = true;
			w->changes++;
			w->fetches = 0;
		} else if (op == X_GetKeyboardMapping && w->have_ours &&
		    data->id_base != w->ours) {
			w->fetches++;
		}
	}
	XRecordFreeData(data);
}

/* Reads the data connection until done(w) or the deadline; false then. */
static bool
pump(Display *rec, struct watch *w, bool (*done)(const struct watch *, unsigned),
    unsigned arg, int ms)
{
	int64_t end = mono_us() / 1000 + ms;

	for (;;) {
		struct pollfd p = { .fd = ConnectionNumber(rec), .events = POLLIN };
		int64_t left;

		XRecordProcessReplies(rec);
		if (done(w, arg))
			return true;
		if (xerr_io_dead(rec))
			return false;
		left = end - mono_us() / 1000;
		if (left <= 0)
			return false;
		(void)poll(&p, 1, left > 50 ? 50 : (int)left);
	}
}

static bool
is_started(const struct watch *w, unsigned arg)
{
	(void)arg;
	return w->started;
}

static bool
is_ended(const struct watch *w, unsigned arg)
{
	(void)arg;
	return w->ended;
}

/* Our change number `arg` was seen, and a fetch of theirs after it. */
static bool
is_answered(const struct watch *w, unsigned arg)
{
	return w->changes >= arg && w->fetches > 0;
}

/* The window key events go to: the focus, or the top-level under the
 * pointer when the focus follows the pointer. 0 if none. */
static Window
key_window(Display *d)
{
	Window focus = None, root, child = None;
	int revert, rx, ry, wx, wy;
	unsigned mask;

	XGetInputFocus(d, &focus, &revert);
	if (focus != None && focus != PointerRoot && focus != DefaultRootWindow(d))
		return focus;
	if (!XQueryPointer(d, DefaultRootWindow(d), &root, &child, &rx, &ry, &wx, &wy, &mask))
		return 0;
	return child;
}

/* The two no-op changes, each followed by a fetch of theirs. */
static bool
prove_steps(Display *d, struct xbar *b, struct watch *w, KeyCode kc,
    const KeySym two[2], int ms)
{
	for (unsigned step = 1; step <= 2; step++) {
		XChangeKeyboardMapping(d, kc, 2, (KeySym *)(uintptr_t)two, 1);
		XFlush(d);
		if (!pump(b->rec, w, is_answered, w->changes + 1, ms))
			return false;
	}
	return true;
}

static struct xbar *
bar_open(Display *d, struct xbar **slot)
{
	struct xbar *b = *slot;

	if (b == NULL)
		b = *slot = xcalloc(1, sizeof *b);
	if (b->rec == NULL || xerr_io_dead(b->rec)) {
		if (b->rec != NULL) {
			xerr_forget(b->rec);
			XCloseDisplay(b->rec);
		}
		b->rec = (connector != NULL ? connector : connect_default)(d);
	}
	if (b->gc == NULL && b->rec != NULL)
		b->gc = XCreateGC(d, DefaultRootWindow(d), 0, NULL);
	return b->rec != NULL ? b : NULL;
}

int
xbar_prove(Display *d, struct xbar **slot, KeyCode kc, const KeySym two[2],
    struct derr *e)
{
	XRecordClientSpec spec[2];
	XRecordRange *range;
	XRecordContext ctx;
	struct watch w = { 0 };
	struct xbar *b;
	Window target;
	bool ok, answered;
	int rc = 0;

	target = key_window(d);
	if (getenv("DETM_BAR_DEBUG"))
		fprintf(stderr, "bar: key window %#lx\n", target);
	if (target == 0 || (b = bar_open(d, slot)) == NULL || known(b->silent, b->nsilent, target))
		return 0;
	answered = known(b->answers, b->nanswers, target);
	spec[0] = target;
	spec[1] = XGContextFromGC(b->gc);
	XSync(d, False);                /* the GC exists before RECORD names it */
	if ((range = XRecordAllocRange()) == NULL)
		return 0;
	range->core_requests.first = X_ChangeKeyboardMapping;
	range->core_requests.last = X_GetKeyboardMapping;
	if (getenv("DETM_BAR_ALL")) {
		range->core_requests.first = 1;
		range->core_requests.last = 127;
		range->ext_requests.ext_major.first = 128;
		range->ext_requests.ext_major.last = 255;
		range->ext_requests.ext_minor.last = 255;
	}
	xerr_begin();
	ctx = XRecordCreateContext(b->rec, 0, spec, 2, &range, 1);
	XFree(range);
	XSync(b->rec, False);
	if (ctx == 0 || xerr_last() != 0) {
		xerr_end(b->rec, e, "record");
		return 0;
	}
	if (!XRecordEnableContextAsync(b->rec, ctx, on_data, (XPointer)&w) ||
	    !pump(b->rec, &w, is_started, 0, DRAIN_MS)) {
		XRecordFreeContext(d, ctx);
		xbar_reset(d, slot);
		return 0;
	}
	ok = prove_steps(d, b, &w, kc, two, answered ? ANSWER_MS : PROBE_MS);
	XRecordDisableContext(d, ctx);
	XRecordFreeContext(d, ctx);
	XSync(d, False);
	if (!pump(b->rec, &w, is_ended, 0, DRAIN_MS))
		xbar_reset(d, slot);    /* a half-read stream: start afresh */
	if (getenv("DETM_BAR_DEBUG"))
		fprintf(stderr, "bar: target %#lx ok %d answered %d changes %u fetches %u\n",
		    target, ok, answered, w.changes, w.fetches);
	if (ok) {
		remember(b->answers, &b->nanswers, target);
		rc = 1;
	} else if (answered) {
		rc = derr_set(e, DERR_UNAVAILABLE, NULL,
		    "the focused window took no keys for %d s; typing stopped there so "
		    "no character is changed", ANSWER_MS / 1000);
	} else {
		remember(b->silent, &b->nsilent, target);
	}
	xerr_end(d, e, "keyboard barrier");
	return rc;
}

/* Forgets the data connection (after a stream left half-read). */
void
xbar_reset(Display *d, struct xbar **slot)
{
	struct xbar *b = *slot;

	(void)d;
	if (b != NULL && b->rec != NULL) {
		xerr_forget(b->rec);
		XCloseDisplay(b->rec);
		b->rec = NULL;
	}
}
