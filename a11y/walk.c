/*
 * walk.c - the "elements" op of detm-a11y: the visible elements of every
 * accessible window of the display that match a query.
 *
 * Reply: {"windows":[{name, application, pid, toolkit?, bounds?, x_title?,
 * xid?}], "elements":[{role, name, label?, description, states, actions,
 * bounds, depth, text?, value?, window_index}], "count", "truncated",
 * "truncated_by"?, "visited", "visible", "windows_seen" (showing top-level
 * windows), "windows_walked" (those the window filter wanted),
 * "applications":[s]}. A window and an application are named once, in the
 * windows table; an element points at its window by index.
 *
 * What is walked, in two passes:
 *   1. Under each showing top-level window whose accessible name or X
 *      title contains q->window: depth first, the nodes that show (visible
 *      and showing; GTK 4: visible inside the window, see wctx_shows) and
 *      whose area meets the window's (a node with no area is passed
 *      through). A node that manages its descendants (tables, sheets, long
 *      lists) is listed itself, and its children are left for pass 2.
 *   2. The children of those, only the ones inside the visible area
 *      (managed.c), so a sheet of 2^31-1 cells costs the cells on screen,
 *      after every window's toolbars, tabs and dialogs.
 * "visible" counts the elements that showed with an area, matched or not.
 *
 * Budgets (each sets truncated true and truncated_by, the first one
 * spent): max elements ("max": one more matched; the walk stops), nodes
 * visited ("nodes"), depth ("depth": deeper nodes skipped, the rest
 * walked), the reply's bytes ("bytes": the next element would pass
 * q->bytes), time ("time"), windows ("windows": more than fit the table),
 * and the children of one container ("containers": more visible ones than
 * its cap). Every string is capped (node.c), so an element costs at most
 * a few KB whatever the application sends.
 *
 * Does not: find what is under a point or act (point.c).
 */
#include <string.h>
#include <time.h>

#include "helper.h"

#define WIN_MAX 64              /* windows in the table */
#define WALK_WINDOWS 256        /* windows walked */
#define APPS_MAX 64             /* names in "applications" */
#define DEFER_MAX 128           /* containers left for pass 2 */
#define MANAGED_CAP 1000        /* children visited in one of them */

struct deferred {
	AtspiAccessible *a;
	int win, depth;
};

struct walk {
	const struct query *q;
	json_object *elements, *windows, *apps;
	struct xtops xs;
	struct wctx wins[WALK_WINDOWS];
	int nwins;
	struct deferred def[DEFER_MAX];
	int ndef;
	int visited, visible;
	int windows_seen;       /* showing top-level windows, wanted or not */
	size_t bytes;           /* the reply so far, as JSON */
	int64_t deadline_us;
	const char *cut;        /* why the walk stopped short; NULL: it did not */
	bool stop;              /* no more elements: a budget is spent */
};

static int64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The walk stops short for why (the first reason is kept); stop: nothing
 * more is added at all. */
static void
cut(struct walk *w, const char *why, bool stop)
{
	if (w->cut == NULL)
		w->cut = why;
	w->stop = w->stop || stop;
}

static size_t
json_len(json_object *o)
{
	size_t n = 0;

	json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
	return n + 1;   /* the comma */
}

static bool
has_states(json_object *have, json_object *want)
{
	for (size_t i = 0; want != NULL && i < json_object_array_length(want); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(want, i));
		bool found = false;

		for (size_t j = 0; !found && j < json_object_array_length(have); j++)
			found = strcasecmp(json_object_get_string(json_object_array_get_idx(have, j)), s) == 0;
		if (!found)
			return false;
	}
	return true;
}

static json_object *
window_json(const struct wctx *c)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", jstr(c->name));
	json_object_object_add(o, "application", jstr(c->app));
	json_object_object_add(o, "pid", json_object_new_int(c->pid));
	if (c->toolkit != NULL)
		json_object_object_add(o, "toolkit", jstr(c->toolkit));
	if (c->area.w > 0) {
		json_object *b = json_object_new_object();

		json_object_object_add(b, "x", json_object_new_int(c->area.x));
		json_object_object_add(b, "y", json_object_new_int(c->area.y));
		json_object_object_add(b, "width", json_object_new_int(c->area.w));
		json_object_object_add(b, "height", json_object_new_int(c->area.h));
		json_object_object_add(o, "bounds", b);
	}
	if (c->x != NULL) {
		json_object_object_add(o, "x_title", jstr(c->x->title));
		json_object_object_add(o, "xid", json_object_new_int64((int64_t)c->x->id));
	}
	return o;
}

/* c's entry in the windows table (added on first use). -1 when full. */
static int
window_index(struct walk *w, struct wctx *c)
{
	json_object *o;

	if (c->index >= 0)
		return c->index;
	if (json_object_array_length(w->windows) >= WIN_MAX) {
		cut(w, "windows", false);
		return -1;
	}
	o = window_json(c);
	w->bytes += json_len(o);
	json_object_array_add(w->windows, o);
	c->index = (int)json_object_array_length(w->windows) - 1;
	return c->index;
}

/* Adds a (area r), if it matches the query, to the elements. Takes states. */
static void
consider(struct walk *w, AtspiAccessible *a, struct wctx *c, json_object *states, const struct rect *r,
    int depth)
{
	const struct query *q = w->q;
	gchar *role = atspi_accessible_get_role_name(a, NULL);
	char *name = NULL, *desc = NULL;
	json_object *el = NULL;
	size_t len;
	int wi;

	w->visible++;
	if (q->role != NULL && q->role[0] != '\0' && strcasecmp(role != NULL ? role : "", q->role) != 0)
		goto out;
	name = node_name(a, c, &desc);
	if (!contains_ci(name, q->name) || !has_states(states, q->states))
		goto out;
	if ((int)json_object_array_length(w->elements) >= q->max) {
		cut(w, "max", true);    /* one more than max matched */
		goto out;
	}
	if ((wi = window_index(w, c)) < 0)
		goto out;
	el = node_element(a, role != NULL ? role : "unknown", name, desc, json_object_get(states), r, depth);
	json_object_object_add(el, "window_index", json_object_new_int(wi));
	len = json_len(el);
	if (w->bytes + len > q->bytes) {
		cut(w, "bytes", true);
		goto out;
	}
	w->bytes += len;
	json_object_array_add(w->elements, el);
	el = NULL;
out:
	json_object_put(el);
	json_object_put(states);
	g_free(role);
	g_free(name);
	g_free(desc);
}

/* A budget that ends the whole walk is spent (and recorded). */
static bool
spent(struct walk *w)
{
	if (w->stop)
		return true;
	if (w->visited >= w->q->visit)
		cut(w, "nodes", true);
	else if ((w->visited & 15) == 0 && now_us() > w->deadline_us)
		cut(w, "time", true);
	return w->stop;
}

static void
defer(struct walk *w, AtspiAccessible *a, int win, int depth)
{
	if (w->ndef >= DEFER_MAX) {
		cut(w, "containers", false);
		return;
	}
	w->def[w->ndef++] = (struct deferred){ g_object_ref(a), win, depth };
}

/* Depth first over what shows of the tree under a, in window win. */
static void
walk_node(struct walk *w, AtspiAccessible *a, int win, int depth)
{
	struct wctx *c = &w->wins[win];
	json_object *states;
	struct rect r;
	bool has_area;
	unsigned f;
	gint n;

	if (spent(w))
		return;
	if (depth > w->q->depth) {
		cut(w, "depth", false);
		return;
	}
	w->visited++;
	f = node_flags(a, &states);
	if (!wctx_shows(c, a, f)) {
		json_object_put(states);        /* hidden: nothing under it shows either */
		return;
	}
	has_area = node_extents(a, c, &r);
	if (has_area && depth > 0 && c->area.w > 0 && !rect_meets(&r, &c->area)) {
		json_object_put(states);        /* outside its window: scrolled away or off screen */
		return;
	}
	if (has_area)
		consider(w, a, c, states, &r, depth);
	else
		json_object_put(states);
	if ((f & NODE_MANAGES) && depth > 0) {
		defer(w, a, win, depth);        /* its visible children after every window (pass 2) */
		return;
	}
	n = atspi_accessible_get_child_count(a, NULL);
	for (gint i = 0; i < n && !w->stop; i++) {
		AtspiAccessible *k = atspi_accessible_get_child_at_index(a, i, NULL);

		if (k != NULL) {
			walk_node(w, k, win, depth + 1);
			g_object_unref(k);
		}
	}
}

/* The window c is wanted by the query: its accessible name or X title. */
static bool
window_wanted(const struct walk *w, const struct wctx *c)
{
	return contains_ci(c->name, w->q->window) || (c->x != NULL && w->q->window != NULL &&
	    w->q->window[0] != '\0' && contains_ci(c->x->title, w->q->window));
}

static void
walk_app(struct walk *w, AtspiAccessible *app)
{
	char *aname, *toolkit;
	int pid;
	gint n;

	app_info(app, &aname, &pid, &toolkit);
	if (json_object_array_length(w->apps) < APPS_MAX) {
		char short_name[A11Y_APP_NAME];

		g_strlcpy(short_name, aname, sizeof short_name);
		json_object_array_add(w->apps, jstr(short_name));
	}
	n = atspi_accessible_get_child_count(app, NULL);
	for (gint i = 0; i < n && !spent(w); i++) {
		AtspiAccessible *win = atspi_accessible_get_child_at_index(app, i, NULL);
		unsigned f;

		if (win == NULL)
			continue;
		w->visited++;   /* every window counts, walked or not */
		f = node_flags(win, NULL);
		if ((f & (NODE_VISIBLE | NODE_SHOWING)) != (NODE_VISIBLE | NODE_SHOWING)) {
			g_object_unref(win);
			continue;
		}
		w->windows_seen++;
		if (w->nwins >= WALK_WINDOWS) {
			cut(w, "windows", false);
			g_object_unref(win);
			break;
		}
		wctx_setup(&w->wins[w->nwins], win, aname, pid, toolkit, &w->xs);
		if (window_wanted(w, &w->wins[w->nwins])) {
			w->visited--;   /* walk_node counts it */
			walk_node(w, win, w->nwins++, 0);
		} else
			wctx_clear(&w->wins[w->nwins]);
		g_object_unref(win);
	}
	g_free(aname);
	g_free(toolkit);
}

/* Pass 2: one deferred container's children, through managed.c. */
struct pass2 {
	struct walk *w;
	int win, depth;
};

static void
pass2_visit(void *ctx, AtspiAccessible *child)
{
	struct pass2 *p = ctx;

	walk_node(p->w, child, p->win, p->depth + 1);
}

static bool
pass2_stopped(void *ctx)
{
	return spent(((struct pass2 *)ctx)->w);
}

static void
pass2(struct walk *w)
{
	for (int i = 0; i < w->ndef && !spent(w); i++) {   /* ndef grows with nested containers */
		struct pass2 p = { w, w->def[i].win, w->def[i].depth };
		struct wctx *c = &w->wins[p.win];
		struct rect area;

		if (!node_extents(w->def[i].a, c, &area))
			continue;
		if (c->area.w > 0) {    /* the part inside its window */
			int x1 = area.x + area.w < c->area.x + c->area.w ? area.x + area.w : c->area.x + c->area.w;
			int y1 = area.y + area.h < c->area.y + c->area.h ? area.y + area.h : c->area.y + c->area.h;

			area.x = area.x > c->area.x ? area.x : c->area.x;
			area.y = area.y > c->area.y ? area.y : c->area.y;
			area.w = x1 - area.x;
			area.h = y1 - area.y;
			if (area.w <= 0 || area.h <= 0)
				continue;
		}
		if (!managed_children(w->def[i].a, c, &area, MANAGED_CAP, pass2_visit, pass2_stopped, &p))
			cut(w, "containers", false);
	}
}

static json_object *
reply_of(struct walk *w)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "count", json_object_new_int((int)json_object_array_length(w->elements)));
	json_object_object_add(r, "truncated", json_object_new_boolean(w->cut != NULL));
	if (w->cut != NULL)
		json_object_object_add(r, "truncated_by", json_object_new_string(w->cut));
	json_object_object_add(r, "visited", json_object_new_int(w->visited));
	json_object_object_add(r, "visible", json_object_new_int(w->visible));
	json_object_object_add(r, "windows_seen", json_object_new_int(w->windows_seen));
	json_object_object_add(r, "windows_walked", json_object_new_int(w->nwins));
	json_object_object_add(r, "applications", w->apps);
	json_object_object_add(r, "windows", w->windows);
	json_object_object_add(r, "elements", w->elements);
	return r;
}

json_object *
walk_elements(const struct query *q)
{
	AtspiAccessible *desk = atspi_get_desktop(0);
	struct walk *w;
	json_object *r;
	gint n;

	if (desk == NULL) {
		r = json_object_new_object();
		json_object_object_add(r, "error", json_object_new_string("no accessibility desktop (registry unreachable)"));
		return r;
	}
	w = g_new0(struct walk, 1);
	w->q = q;
	w->elements = json_object_new_array();
	w->windows = json_object_new_array();
	w->apps = json_object_new_array();
	w->deadline_us = now_us() + (int64_t)q->time_ms * 1000;
	xtops_read(&w->xs);
	n = atspi_accessible_get_child_count(desk, NULL);
	for (gint i = 0; i < n && !spent(w); i++) {
		AtspiAccessible *app = atspi_accessible_get_child_at_index(desk, i, NULL);

		if (app != NULL) {
			walk_app(w, app);
			g_object_unref(app);
		}
	}
	g_object_unref(desk);
	pass2(w);
	r = reply_of(w);
	for (int i = 0; i < w->ndef; i++)
		g_object_unref(w->def[i].a);
	for (int i = 0; i < w->nwins; i++)
		wctx_clear(&w->wins[i]);
	xtops_free(&w->xs);
	g_free(w);
	return r;
}
