/*
 * xwatch.h - what a display draws and which windows come and go while an
 * input is watched: XDamage rectangles and X window events read on the
 * leased connection, waited for with poll() and a deadline (never a sleep).
 *
 * A watch is armed on a held lease (display.h) BEFORE the input is sent on
 * the same connection: the X server handles requests in order, so every
 * drawing and every window event the input causes is reported to it.
 * What it subscribes to, for as long as it runs:
 *   - an XDamage object on the root with raw rectangles (every drawing
 *     operation, in root coordinates, inferiors included);
 *   - SubstructureNotify and PropertyChange on the root (top-level windows
 *     created, mapped, unmapped, destroyed; _NET_ACTIVE_WINDOW and
 *     _NET_CLIENT_LIST under a window manager);
 *   - FocusChange and PropertyChange on every child of the root (the focus
 *     moving into or out of a top-level window; titles of unreparented
 *     windows).
 * xwatch_stop takes all of it back. Events of the display's own damage
 * counter (display_lease.damage_seq) that arrive meanwhile are handed to
 * display_event, so the wait engine still sees the drawing.
 *
 * Rectangles are kept as at most XWATCH_MAX_BOXES boxes: a rectangle that
 * overlaps or nearly touches a box grows it; when all are used the two
 * boxes whose union grows least are merged.
 *
 * Threading: the lease's rule (one thread). Does not: judge what the
 * drawing means (desktop/effect.c), capture pixels, or send input.
 */
#ifndef DETM_XWATCH_H
#define DETM_XWATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "display.h"

#define XWATCH_MAX_BOXES 32
#define XWATCH_MAX_WINS 16

struct xwatch_box {
	int x, y, w, h;
	int64_t first_us;       /* the first rectangle of this box arrived (mono_us) */
	int64_t last_us;        /* ... the last one */
	long rects;             /* rectangles merged into it */
};

/* A top-level window event (root children only). */
struct xwatch_win {
	unsigned long id;       /* the root child (a WM frame, or the client) */
	char what;              /* 'm' mapped, 'u' unmapped, 'c' created, 'd' destroyed */
	bool override;          /* override-redirect (menus, popups, tooltips) */
	int64_t at_us;
};

struct xwatch {
	bool armed;
	bool damage;            /* the XDamage object exists: drawing is seen */
	unsigned long dmg;      /* its handle */
	int dmg_event;          /* XDamageNotify's event type */
	unsigned long *sel;     /* root children we selected input on */
	int nsel;
	struct xwatch_box box[XWATCH_MAX_BOXES];
	int nbox;
	long rects;             /* rectangles seen since the last xwatch_clear */
	int64_t first_dmg_us, last_dmg_us;      /* 0: none */
	struct xwatch_win win[XWATCH_MAX_WINS];
	int nwin;
	bool focus;             /* a FocusIn/FocusOut on a top-level */
	bool props;             /* a window property of interest changed */
	int64_t first_win_us;   /* the first window, focus or property event */
	long wevents;           /* window, focus and property events so far */
	unsigned long atoms[6]; /* the properties that matter (titles, WM lists, state) */
};

/* Arms w on the lease (see the top comment). Without XDamage w->damage is
 * false and only window events are seen. 0, or -1 with e (the connection
 * died). w is zeroed first; xwatch_stop must follow either way. */
int xwatch_start(struct xwatch *w, struct display_lease *l, struct derr *e);
/* Reads what arrived, waiting (poll on the connection) until something
 * does or until mono_us() >= until_us. Returns the number of events of the
 * watch handled (0: the deadline passed), or -1 when the connection died. */
int xwatch_pump(struct xwatch *w, struct display_lease *l, int64_t until_us);
/* Forgets the boxes and events seen so far (the baseline is over). */
void xwatch_clear(struct xwatch *w);
/* Unsubscribes everything xwatch_start subscribed (NULL or unarmed ok). */
void xwatch_stop(struct xwatch *w, struct display_lease *l);

#endif
