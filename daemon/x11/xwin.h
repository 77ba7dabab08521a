/*
 * xwin.h - top-level windows of one display: list, find, focus, move,
 * resize, minimise, close (EWMH when a window manager is running, plain
 * ICCCM/Xlib when none is).
 *
 * Same threading rule as xinput.h: the caller holds the connection
 * exclusively; every function XSyncs before returning and reports X errors
 * as derr values (an unknown window id is DERR_NOT_FOUND field "window_id").
 *
 * "Top-level window": _NET_CLIENT_LIST when a window manager publishes it,
 * else the mapped children of the root (and, for a reparenting WM, the
 * client window found through WM_STATE).
 */
#ifndef DETM_XWIN_H
#define DETM_XWIN_H

#include <stdbool.h>
#include <stddef.h>

#include <X11/Xlib.h>

#include "core/util.h"
#include "derr.h"

struct xwin {
	unsigned long id;
	char title[256];        /* _NET_WM_NAME (UTF-8), else WM_NAME; "" if none */
	char wm_class[128];     /* WM_CLASS class part (e.g. "XTerm"); "" if none */
	char wm_instance[128];  /* WM_CLASS instance part (e.g. "xterm") */
	int pid;                /* _NET_WM_PID, 0 if unknown */
	int x, y, width, height;/* root-relative outer geometry of the client */
	bool focused;           /* has input focus (or is _NET_ACTIVE_WINDOW) */
	bool visible;           /* mapped (viewable) and not minimised */
};

/* All top-level windows, bottom to top. *out is malloc'd (free() it); *n may
 * be 0. At most 1024 windows. */
int xwin_list(Display *d, struct xwin **out, size_t *n, struct derr *e);
/* One window's info. */
int xwin_get(Display *d, unsigned long id, struct xwin *out, struct derr *e);
/* The first visible window (topmost first) whose title, class or instance
 * contains needle (case-insensitive). DERR_NOT_FOUND field "window_name". */
int xwin_find(Display *d, const char *needle, struct xwin *out, struct derr *e);
/* The focused/active top-level window; DERR_NOT_FOUND if none. */
int xwin_active(Display *d, struct xwin *out, struct derr *e);
/* The top-level window typed keys reach now: the one holding the input
 * focus (XGetInputFocus, up to its top-level), or with the focus on
 * PointerRoot or the root, the one under the pointer. 1 with *out filled
 * (a window that is not a listed top-level, such as a popup menu, gets
 * only id and title); 0 when no window gets them (the focus is None, or
 * the pointer is over the bare root): keys typed now go nowhere. */
int xwin_key_target(Display *d, struct xwin *out, struct derr *e);
/* Raise and give input focus (maps it if minimised). */
int xwin_focus(Display *d, unsigned long id, struct derr *e);
int xwin_move(Display *d, unsigned long id, int x, int y, struct derr *e);
int xwin_resize(Display *d, unsigned long id, int width, int height,
    struct derr *e);
/* Iconify (WM_CHANGE_STATE) when a WM runs, else unmap. */
int xwin_minimize(Display *d, unsigned long id, struct derr *e);
/* Graceful: WM_DELETE_WINDOW if the window supports it, else (or when
 * force) XKillClient. *how is set to "delete" or "kill". */
int xwin_close(Display *d, unsigned long id, bool force, const char **how,
    struct derr *e);

#endif
