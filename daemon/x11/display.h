/*
 * display.h - the X displays detmd drives: the shared desktop and the
 * per-task Xvfb servers it starts, owns and stops.
 *
 * The shared desktop is the display named by config "display" (DISPLAY,
 * default :99); detmd only connects to it. A per-task display is an Xvfb
 * started by display_start with -displayfd (numbers from :100 up),
 * -nolisten tcp, its own MIT-MAGIC-COOKIE (DATA_DIR/displays/N.auth, also
 * the XAUTHORITY for clients the agent starts there), GLX off unless
 * configured, and the configured window manager (openbox by default, which
 * places new windows on screen and focuses them). Its pid is written
 * to DATA_DIR/displays/N.pid so a later detmd can remove what a crashed one
 * left behind (display_init).
 *
 * Threading rule: each display has ONE cached Xlib connection (plus its
 * capture state), used by one thread at a time. display_lease() locks the
 * display's mutex and opens (or re-opens) the connection; display_unlease()
 * unlocks. Keep a lease short (one action, one capture) and never hold two
 * leases at once. A display stopped while leased is torn down when the
 * lease ends; later leases fail cleanly. A lease waiting for a display
 * another thread holds waits as long as the X server answers (a probe,
 * xalive.h); once it has been silent for --display-wait-ms (the holder is
 * stuck in Xlib on a stopped or hung server) the lease fails with
 * DERR_DISPLAY_UNRESPONSIVE, as does opening a connection to it.
 */
#ifndef DETM_DISPLAY_H
#define DETM_DISPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include <X11/Xlib.h>
#include <json-c/json.h>

#include "core/config.h"
#include "core/util.h"
#include "derr.h"

struct dentry;
struct xcap;

/* The last image a client looked at (desktop_look): image pixel (ix, iy)
 * is screen pixel (x + ix * scale, y + iy * scale). */
struct display_look {
	double scale;           /* 1.0 before any look */
	int x, y;               /* the image's origin on the screen */
};

struct display_lease {
	Display *d;             /* the connection; valid until display_unlease */
	struct xcap *cap;       /* capture state for d */
	int width, height;      /* screen size */
	const char *name;       /* ":101" */
	bool managed;           /* a per-task Xvfb (false: the shared desktop) */
	struct display_look *look;   /* read/write under the lease */
	bool damage;            /* XDamage watches this display: damage_seq is valid */
	uint64_t damage_seq;    /* bumps whenever something on screen was drawn;
	                         * unchanged since an earlier lease = nothing drawn */
	struct dentry *entry;   /* private */
};

/* Once, before the server starts: X error handlers, DATA_DIR/displays,
 * and removal of displays a previous detmd left running. Returns 0 or -1. */
int display_init(const struct config *cfg, struct derr *e);
/* Stops every per-task display (daemon shutdown). */
void display_shutdown(void);

/* Starts a display for task_id (width/height 0: the configured size).
 * Fails with DERR_CONFLICT if the task already has a running display,
 * DERR_UNAVAILABLE if Xvfb is missing, cannot start, or too many run.
 * On success *info (caller owns) describes it (see display_json). */
int display_start(const char *task_id, int width, int height,
    json_object **info, struct derr *e);
/* Stops the task's display. Returns 0 if one was stopped, 1 if the task
 * had none. Never fails; safe from any thread, including while leased. */
int display_stop(const char *task_id);

/* How a lease picks its display: a task's own display, or the shared one. */
enum display_pick {
	DISPLAY_SHARED,         /* the shared desktop */
	DISPLAY_TASK_OR_SHARED, /* the task's display if it has one running, else shared */
	DISPLAY_TASK,           /* the task's display; error if it has none running */
};
/* Locks and returns the display. Errors: DERR_CONFLICT (the task has no
 * running display), DERR_UNAVAILABLE (the X server is not reachable or
 * died; a died per-task display is forgotten so the task can start a new
 * one), DERR_DISPLAY_UNRESPONSIVE (held by a thread stuck on a silent X
 * server, or a connection to open to one: see the top comment). In nowait
 * mode (nowait.h) it refuses instead of waiting: when
 * another thread holds the display, or its connection must be opened. */
int display_lease(const char *task_id, enum display_pick pick,
    struct display_lease *l, struct derr *e);
void display_unlease(struct display_lease *l);   /* NULL or unleased ok */
/* The display's drawing history (xhist.h), or NULL (none could start).
 * Valid while the lease is held. */
struct xhist *display_hist(const struct display_lease *l);
/* For a lease holder that reads events off l->d itself (xwatch.c): hands
 * one event to the display, which counts its own XDamage reports
 * (damage_seq) and re-arms them; any other event is ignored. */
void display_event(struct display_lease *l, const XEvent *ev);

/* Under a lease: a new connection of the caller's own to l's display
 * (with its cookie), not the lease's cached one, for a module that needs
 * its own event stream or a thread of its own (the clipboard, clip.c).
 * NULL when the server refuses. The caller owns it, may use it after the
 * lease ends, and closes it with display_close_extra (NULL ok). */
Display *display_open_extra(const struct display_lease *l);
void display_close_extra(Display *d);
/* Under a lease: what tells l's display from a later one of the same name
 * (a per-task display's start time; 0 for the shared desktop). */
int64_t display_lease_gen(const struct display_lease *l);

/* Without blocking: reads what the X server sent on the display a lease
 * for task_id would pick (its own running display, else the shared one)
 * and sets *seq to its damage counter (see display_lease.damage_seq).
 * Returns 1, or 0 when it cannot tell right now: the display is leased
 * (the holder drains the damage), has no open connection (nothing has
 * leased it yet; a peek never connects) or no XDamage. Any thread. */
int display_damage_peek(const char *task_id, uint64_t *seq);
/* True if task_id has a per-task display registered (running or died). */
bool display_has(const char *task_id);
/* The number of task_id's own running display (101 for ":101"), or -1
 * (none, not running, or task_id NULL). */
int display_task_number(const char *task_id);
/* {"displays":[...], "shared":{...}, "max":N} (caller owns). */
json_object *display_list(void);
/* Xvfb found in PATH (or as configured). */
bool display_xvfb_found(void);
/* The window manager of detmd's displays (display_wm.c): {"command"
 * (null: none), "found", "path"?, "note"? (what is missing and what that
 * means), "config"? (detm's openbox configuration)}. Caller owns it. */
json_object *display_wm_json(void);
/* The shared desktop's name (":99"). */
const char *display_shared_name(void);

#endif
