/*
 * walk.c - the "elements" op of detm-a11y: the visible elements of every
 * accessible window of the display that match a query.
 *
 * Reply: {"windows":[{name, application, pid, toolkit?, bounds}],
 * "elements":[{role, name, label?, description, states, actions, bounds,
 * depth, window_index}], "count", "truncated", "truncated_by"?, "visited",
 * "visible", "applications":[s]}. A window and an application are named
 * once, in the windows table; an element points at its window by index.
 *
 * Budgets (each ends the walk with truncated true and truncated_by naming
 * it): max elements ("max": one more matched), nodes visited ("nodes"),
 * depth ("depth": deeper nodes skipped, the rest walked), the reply's bytes
 * ("bytes": the next element would pass q->bytes), time ("time"), windows
 * ("windows"). Every string is capped (node.c), so an element costs at
 * most a few KB whatever the application sends.
 *
 * Does not: find what is under a point or act (point.c).
 */
#include <string.h>
#include <time.h>

#include "helper.h"

#define WIN_MAX 64              /* windows in the table */
#define APPS_MAX 64             /* names in "applications" */

struct walk {
	const struct query *q;
	json_object *elements, *windows, *apps;
	int visited, visible;
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
	o = json_object_new_object();
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
	w->bytes += json_len(o);
	json_object_array_add(w->windows, o);
	c->index = (int)json_object_array_length(w->windows) - 1;
	return c->index;
}

/* Adds a, if it matches the query, to the elements. Takes states. */
static void
consider(struct walk *w, AtspiAccessible *a, struct wctx *c, json_object *states, int depth)
{
	const struct query *q = w->q;
	gchar *role = atspi_accessible_get_role_name(a, NULL);
	char *name = NULL, *desc = NULL;
	json_object *el = NULL;
	struct rect r;
	size_t len;
	int wi;

	if (!node_extents(a, c, &r))
		goto out;
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
	el = node_element(a, role != NULL ? role : "unknown", name, desc, json_object_get(states), &r, depth);
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

/* Depth-first over the showing part of the tree under a. */
static void
walk_node(struct walk *w, AtspiAccessible *a, struct wctx *c, int depth)
{
	json_object *states;
	gint n;

	if (w->stop)
		return;
	if (w->visited >= w->q->visit || now_us() > w->deadline_us) {
		cut(w, w->visited >= w->q->visit ? "nodes" : "time", true);
		return;
	}
	if (depth > w->q->depth) {
		cut(w, "depth", false);
		return;
	}
	w->visited++;
	if ((node_flags(a, &states) & (NODE_VISIBLE | NODE_SHOWING)) != (NODE_VISIBLE | NODE_SHOWING)) {
		json_object_put(states);        /* hidden: nothing under it shows either */
		return;
	}
	consider(w, a, c, states, depth);
	n = atspi_accessible_get_child_count(a, NULL);
	for (gint i = 0; i < n && !w->stop; i++) {
		AtspiAccessible *k = atspi_accessible_get_child_at_index(a, i, NULL);

		if (k != NULL) {
			walk_node(w, k, c, depth + 1);
			g_object_unref(k);
		}
	}
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
	for (gint i = 0; i < n && !w->stop; i++) {
		AtspiAccessible *win = atspi_accessible_get_child_at_index(app, i, NULL);
		struct wctx c;

		if (win == NULL)
			continue;
		wctx_setup(&c, win, aname, pid, toolkit);
		if (contains_ci(c.name, w->q->window))
			walk_node(w, win, &c, 0);
		else if (++w->visited >= w->q->visit)   /* windows filtered out count too */
			cut(w, "nodes", true);
		wctx_clear(&c);
		g_object_unref(win);
	}
	g_free(aname);
	g_free(toolkit);
}

json_object *
walk_elements(const struct query *q)
{
	AtspiAccessible *desk = atspi_get_desktop(0);
	struct walk w = { .q = q, .elements = json_object_new_array(), .windows = json_object_new_array(),
		.apps = json_object_new_array(), .deadline_us = now_us() + (int64_t)q->time_ms * 1000 };
	json_object *r = json_object_new_object();
	gint n;

	if (desk == NULL) {
		json_object_put(w.elements);
		json_object_put(w.windows);
		json_object_put(w.apps);
		json_object_object_add(r, "error", json_object_new_string("no accessibility desktop (registry unreachable)"));
		return r;
	}
	n = atspi_accessible_get_child_count(desk, NULL);
	for (gint i = 0; i < n && !w.stop; i++) {
		AtspiAccessible *app = atspi_accessible_get_child_at_index(desk, i, NULL);

		if (app != NULL) {
			walk_app(&w, app);
			g_object_unref(app);
		}
	}
	g_object_unref(desk);
	json_object_object_add(r, "count", json_object_new_int((int)json_object_array_length(w.elements)));
	json_object_object_add(r, "truncated", json_object_new_boolean(w.cut != NULL));
	if (w.cut != NULL)
		json_object_object_add(r, "truncated_by", json_object_new_string(w.cut));
	json_object_object_add(r, "visited", json_object_new_int(w.visited));
	json_object_object_add(r, "visible", json_object_new_int(w.visible));
	json_object_object_add(r, "applications", w.apps);
	json_object_object_add(r, "windows", w.windows);
	json_object_object_add(r, "elements", w.elements);
	return r;
}
