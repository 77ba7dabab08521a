/*
 * a11y.h - the accessibility (AT-SPI2) side of a task display: its private
 * D-Bus session bus, the environment its programs need, and its element
 * tree read through a detm-a11y helper process.
 *
 * Cost model: a11y_start runs one dbus-daemon (a private session bus) for
 * the display; nothing else. The AT-SPI bus launcher and registry daemon
 * are started by D-Bus activation only when something asks for them: an
 * accessible application starting on the display (GTK's atk-bridge asks
 * org.a11y.Bus for the bus) or the first a11y_elements call. The helper
 * starts on the first a11y_elements call and lives until a11y_stop. A
 * display whose programs expose no tree costs one idle dbus-daemon.
 *
 * All functions are thread-safe. Displays are keyed by their number.
 * Errors are logged (start) or returned in a struct derr (elements).
 */
#ifndef DETM_A11Y_H
#define DETM_A11Y_H

#include <stdbool.h>

#include <json-c/json.h>

#include "derr.h"

/* Starts the session bus of display `name` (number n), whose cookie file is
 * xauth; dir is DATA_DIR/displays (files go to dir/N.a11y, logs to
 * dir/../logs). Removes what a crashed detmd left for this number first.
 * Returns 0, or -1 (logged; the display works without accessibility). */
int a11y_start(int n, const char *name, const char *xauth, const char *dir);
/* Once at start-up, before any display: kills the bus groups a previous
 * detmd with this data dir left (dir/N.a11y/bus.pid, checked against the
 * process's command line) and removes their directories. */
void a11y_cleanup(const char *dir);
/* Stops the helper, the session bus and every process it activated (bus
 * launcher, accessibility bus, registry), and removes dir/N.a11y. Waits
 * for a request in flight on that display to end (the helper is killed
 * first, so that is quick). No-op for a number without a bus. */
void a11y_stop(int n);
/* Adds to o (a display's description) "env" (what a program started on
 * the display needs: DISPLAY, XAUTHORITY, DBUS_SESSION_BUS_ADDRESS,
 * AT_SPI_BUS_ADDRESS once the accessibility bus runs, and the switches
 * that turn accessibility on in GTK and Qt) and "a11y" (state, pids, the
 * Chromium/Electron flags). Adds nothing for a number without a bus. */
void a11y_describe(int n, json_object *o);

struct a11y_query {
	const char *window;     /* top-level window's accessible name or X title contains this (any case), or NULL */
	const char *role;       /* role name equals this (any case), e.g. "push button" */
	const char *name;       /* element name contains this (any case) */
	json_object *states;    /* array of state names that must all be set, or NULL (borrowed) */
	int max;                /* 1..LIM_A11Y_ELEMENTS */
};

/* The visible, showing elements of display n matching q, with a screen
 * area: *out (caller owns) is {"elements":[{role,name,label?,description,
 * states,actions,bounds{x,y,width,height},depth,text?,value?,window_index,
 * window,application,xid?}],"windows":[{name,application,pid,toolkit?,
 * bounds?,x_title?,xid?}],"count","truncated","truncated_by"?,"visited",
 * "visible","windows_seen","windows_walked","applications"} (what is
 * walked, the budgets and a11y_reply_hint for an empty one: a11y/walk.c).
 * Every string is capped (LIM_A11Y_STR; an element's window and
 * application LIM_A11Y_EL_WINDOW), and the answer stops before
 * LIM_A11Y_REPLY_BYTES with truncated true (a11y_reply.h, a11y/walk.c).
 * Errors: DERR_CONFLICT (no bus for n), DERR_UNAVAILABLE (the helper is
 * missing, died or missed its deadline; it is restarted on the next
 * call). */
int a11y_elements(int n, const struct a11y_query *q, json_object **out, struct derr *e);

/* Whether display n's accessibility bus runs (an accessible application
 * asked for it, or an earlier call did): without it there is no tree to
 * read, and callers that only try the tree skip it at no cost (nothing is
 * started). Never blocks on the helper. */
bool a11y_active(int n);
/* What is under screen point (x, y): *out {"element":{...}|null,"path":
 * [{role,name}...]} (the deepest element, its ancestors from the window
 * down). Errors as a11y_elements. */
int a11y_at_point(int n, int x, int y, json_object **out, struct derr *e);
/* Runs el's own click/press/activate action (el: an element of an
 * a11y_elements answer; found again by role, name and bounds): *out
 * {"done":true,"action":s}. DERR_UNAVAILABLE when it is gone or has none. */
int a11y_action(int n, json_object *el, json_object **out, struct derr *e);

#endif
