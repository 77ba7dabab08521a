/*
 * helper.h - detm-a11y's parts (one program: helper.c reads requests,
 * walk.c lists elements (managed.c: the visible children of tables and
 * long lists), point.c finds and acts on one, node.c reads one node and its
 * window, xtop.c ties accessible windows to X windows).
 *
 * Every string a reply carries is capped (A11Y_STR bytes, cut between
 * characters, ending with an ellipsis): an application decides how long its
 * names are, detm decides how much of them it copies.
 */
#ifndef DETM_A11Y_HELPER_H
#define DETM_A11Y_HELPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <atspi/atspi.h>
#include <json-c/json.h>

#include "lim.h"

#define A11Y_STR LIM_A11Y_STR   /* bytes of any one string, its ellipsis included */
#define A11Y_APP_NAME 256       /* bytes of an application name in "applications" */

struct rect {
	int x, y, w, h;         /* w or h 0: unknown */
};

/* ---- xtop.c: the X side of accessible windows ---- */

struct xtop {
	unsigned long id;
	char *title;            /* _NET_WM_NAME, else WM_NAME; capped (malloc'd) */
	int pid;                /* _NET_WM_PID; 0 unknown */
	struct rect r;          /* the client's root position and size */
	int margin[4];          /* _GTK_FRAME_EXTENTS left, right, top, bottom; -1 none */
};

struct xtops {
	struct xtop *v;
	size_t n;
};

/* The display's top-level client windows (at most 1024); none when X
 * cannot be reached (the walk goes on without X titles). */
void xtops_read(struct xtops *x);
void xtops_free(struct xtops *x);
/* The X window of an accessible window of process pid (0 unknown) with
 * area r (relative: only its size means something) and name; NULL when
 * none fits. */
const struct xtop *xtop_match(const struct xtops *x, int pid, const struct rect *r, bool relative,
    const char *name);

/* What the walk knows of one accessible window. */
struct wctx {
	char *name;             /* the accessible name, capped (g_free) */
	char *app;              /* its application's name, capped (g_free) */
	char *toolkit;          /* "GTK 4.8.3" (g_free), or NULL */
	int pid;                /* its application's; 0 unknown */
	struct rect area;       /* its screen area (offsets applied) */
	int dx, dy;             /* added to what the toolkit reports (GTK 4: window-relative) */
	/* GTK 4 (4.8): areas are relative to the window (placed through its X
	 * window), children are visible but never showing (visible ones inside
	 * the window count), and a button's name says its label twice ("1 1"). */
	bool gtk4;
	const struct xtop *x;   /* its X window, or NULL (borrowed from the caller's xtops) */
	int index;              /* in the reply's windows table; -1 none */
};

/* Fills c for window win of app (app_name, pid, toolkit read once per app
 * by the caller and copied). */
void wctx_setup(struct wctx *c, AtspiAccessible *win, const char *app_name, int pid,
    const char *toolkit, const struct xtops *xs);
/* a shows in c's window: visible and showing, or (GTK 4) visible with an
 * area inside the window's. flags: node_flags(a). */
bool wctx_shows(const struct wctx *c, AtspiAccessible *a, unsigned flags);
void wctx_clear(struct wctx *c);
/* Reads app's name, pid and toolkit ("GTK 4.8.3": g_free) for wctx_setup. */
void app_info(AtspiAccessible *app, char **name, int *pid, char **toolkit);

/* ---- node.c: one node ---- */

enum {
	NODE_VISIBLE = 1,
	NODE_SHOWING = 2,
	NODE_MANAGES = 4,       /* STATE_MANAGES_DESCENDANTS: children are made on demand */
	NODE_ACTIVE = 8,
};

/* A new string of s (NULL: ""), capped. */
json_object *jstr(const char *s);
/* A g_malloc'd capped copy of s (NULL: ""). */
char *str_capped(const char *s);
/* a's state flags (NODE_*); *names (may be NULL) gets them as a new array. */
unsigned node_flags(AtspiAccessible *a, json_object **names);
/* a's screen area, c's offsets applied (c may be NULL); false when it has
 * no component or no area. */
bool node_extents(AtspiAccessible *a, const struct wctx *c, struct rect *out);
bool rect_meets(const struct rect *a, const struct rect *b);
bool rect_has(const struct rect *r, int x, int y);
/* a's name as detm lists it (capped; g_free): a GTK 4 type name ("GtkButton")
 * is no name, a name said twice by GTK 4 ("1 1") is said once, a name that
 * ends with the description drops it. *desc (may be NULL) gets the capped
 * description (g_free). */
char *node_name(AtspiAccessible *a, const struct wctx *c, char **desc);
/* One element: {role, name, label?, description, states, actions, bounds,
 * depth, text?, value?}. Takes states. */
json_object *node_element(AtspiAccessible *a, const char *role, const char *name, const char *desc,
    json_object *states, const struct rect *r, int depth);
/* Case-insensitive substring test; an empty or NULL needle matches. */
bool contains_ci(const char *hay, const char *needle);

/* ---- managed.c ---- */

/* Calls visit(ctx, child) for the children of a (which manages its
 * descendants) whose area meets area (c's offsets applied), at most cap,
 * while !stopped(ctx). True when it got past the last visible one (or
 * stopped() said stop), false when its budget ended first. */
bool managed_children(AtspiAccessible *a, const struct wctx *c, const struct rect *area, int cap,
    void (*visit)(void *ctx, AtspiAccessible *child), bool (*stopped)(void *ctx), void *ctx);

/* ---- walk.c, point.c: the ops ---- */

struct query {
	const char *window, *role, *name;
	json_object *states;    /* array of strings, or NULL */
	int max, depth, visit;
	size_t bytes;           /* reply cap */
	int time_ms;
};

json_object *walk_elements(const struct query *q);
json_object *point_at(int x, int y);

struct target {
	const char *role, *name;
	struct rect r;
};

json_object *point_action(const struct target *t);

#endif
