/*
 * helper.h - detm-a11y's parts (one program: helper.c reads requests,
 * walk.c lists elements, point.c finds and acts on one, node.c reads one
 * node and its window).
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

/* What the walk knows of one accessible window. */
struct wctx {
	char *name;             /* the accessible name, capped (g_free) */
	char *app;              /* its application's name, capped (g_free) */
	char *toolkit;          /* "GTK 4.8.3" (g_free), or NULL */
	int pid;                /* its application's; 0 unknown */
	struct rect area;       /* its screen area (offsets applied) */
	int dx, dy;             /* added to what the toolkit reports (GTK 4: window-relative) */
	bool relaxed;           /* children visible but not showing count (GTK 4.8 sets no showing) */
	int index;              /* in the reply's windows table; -1 none */
};

/* Fills c for window win of app (app_name, pid, toolkit read once per app
 * by the caller and copied). */
void wctx_setup(struct wctx *c, AtspiAccessible *win, const char *app_name, int pid,
    const char *toolkit);
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
