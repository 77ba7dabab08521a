/*
 * point.c - the "at_point" and "action" ops of detm-a11y: what is under a
 * screen point, and running an element's own action.
 *
 * at_point answers {"element":{...,window, application}|null,"path":
 * [{role,name}...]}: the deepest element under the point (GetAccessibleAt
 * Point, else the last showing child whose area holds it) and its
 * ancestors from the window down. Strings are capped as everywhere.
 *
 * action finds the element again by role, name and bounds (as the
 * elements op listed them) and runs its first action among click, press,
 * activate, jump, toggle: {"done":true,"action":s} or {"error":s}.
 *
 * Does not: list elements (walk.c).
 */
#include <string.h>

#include "helper.h"

#define PATH_MAX_DEPTH 60
#define SCAN_CHILDREN 2000
#define FIND_BUDGET 20000

static bool
shows(const struct wctx *c, AtspiAccessible *a)
{
	return wctx_shows(c, a, node_flags(a, NULL));
}

/* The child of a under (x, y): GetAccessibleAtPoint, else the last showing
 * child whose area holds the point (toolkits that do not implement it).
 * A new reference, or NULL. */
static AtspiAccessible *
child_at(AtspiAccessible *a, const struct wctx *c, int x, int y)
{
	AtspiComponent *comp = atspi_accessible_get_component_iface(a);
	AtspiAccessible *hit = NULL;
	struct rect r;
	gint n;

	if (comp != NULL) {
		hit = atspi_component_get_accessible_at_point(comp, x - c->dx, y - c->dy, ATSPI_COORD_TYPE_SCREEN, NULL);
		g_object_unref(comp);
	}
	if (hit == a) {
		g_object_unref(hit);
		hit = NULL;
	}
	if (hit != NULL)
		return hit;
	n = atspi_accessible_get_child_count(a, NULL);
	for (gint i = 0; i < n && i < SCAN_CHILDREN; i++) {
		AtspiAccessible *k = atspi_accessible_get_child_at_index(a, i, NULL);

		if (k == NULL)
			continue;
		if (shows(c, k) && node_extents(k, c, &r) && rect_has(&r, x, y)) {
			if (hit != NULL)
				g_object_unref(hit);
			hit = k;
		} else
			g_object_unref(k);
	}
	return hit;
}

/* The showing top-level window under (x, y): an active one first. Fills
 * *c (wctx_clear it) and returns a new reference, or NULL. */
static AtspiAccessible *
window_at(int x, int y, const struct xtops *xs, struct wctx *c)
{
	AtspiAccessible *desk = atspi_get_desktop(0), *best = NULL;
	bool best_active = false;
	gint n = desk != NULL ? atspi_accessible_get_child_count(desk, NULL) : 0;

	memset(c, 0, sizeof *c);
	for (gint i = 0; i < n && !best_active; i++) {
		AtspiAccessible *app = atspi_accessible_get_child_at_index(desk, i, NULL);
		gint nw = app != NULL ? atspi_accessible_get_child_count(app, NULL) : 0;
		char *aname = NULL, *toolkit = NULL;
		int pid = 0;

		if (nw > 0)
			app_info(app, &aname, &pid, &toolkit);
		for (gint k = 0; k < nw && !best_active; k++) {
			AtspiAccessible *win = atspi_accessible_get_child_at_index(app, k, NULL);
			struct wctx wc;
			unsigned f;

			if (win == NULL)
				continue;
			f = node_flags(win, NULL);
			if ((f & (NODE_VISIBLE | NODE_SHOWING)) != (NODE_VISIBLE | NODE_SHOWING) ||
			    (best != NULL && !(f & NODE_ACTIVE))) {
				g_object_unref(win);
				continue;
			}
			wctx_setup(&wc, win, aname, pid, toolkit, xs);
			if (wc.area.w <= 0 || !rect_has(&wc.area, x, y)) {
				wctx_clear(&wc);
				g_object_unref(win);
				continue;
			}
			if (best != NULL)
				g_object_unref(best);
			wctx_clear(c);
			*c = wc;
			best = win;
			best_active = (f & NODE_ACTIVE) != 0;
		}
		g_free(aname);
		g_free(toolkit);
		if (app != NULL)
			g_object_unref(app);
	}
	if (desk != NULL)
		g_object_unref(desk);
	return best;
}

static json_object *
step_json(AtspiAccessible *a, const struct wctx *c)
{
	json_object *step = json_object_new_object();
	gchar *role = atspi_accessible_get_role_name(a, NULL);
	char *name = node_name(a, c, NULL);

	json_object_object_add(step, "role", jstr(role != NULL ? role : "unknown"));
	json_object_object_add(step, "name", json_object_new_string(name));
	g_free(role);
	g_free(name);
	return step;
}

json_object *
point_at(int x, int y)
{
	struct xtops xs;
	struct wctx c;
	AtspiAccessible *cur;
	json_object *r = json_object_new_object(), *path = json_object_new_array(), *states, *el;
	gchar *role;
	char *name, *desc;
	struct rect b;
	int depth = 0;

	xtops_read(&xs);
	cur = window_at(x, y, &xs, &c);
	if (cur == NULL) {
		json_object_object_add(r, "element", NULL);
		json_object_object_add(r, "path", path);
		xtops_free(&xs);
		return r;
	}
	for (;;) {
		AtspiAccessible *next = depth < PATH_MAX_DEPTH ? child_at(cur, &c, x, y) : NULL;

		if (next == NULL)
			break;
		json_object_array_add(path, step_json(cur, &c));
		g_object_unref(cur);
		cur = next;
		depth++;
	}
	role = atspi_accessible_get_role_name(cur, NULL);
	name = node_name(cur, &c, &desc);
	node_flags(cur, &states);
	el = node_element(cur, role != NULL ? role : "unknown", name, desc, states,
	    node_extents(cur, &c, &b) ? &b : NULL, depth);
	json_object_object_add(el, "application", jstr(c.app));
	json_object_object_add(el, "window", jstr(c.name));
	if (c.x != NULL) {
		json_object_object_add(el, "x_title", jstr(c.x->title));
		json_object_object_add(el, "xid", json_object_new_int64((int64_t)c.x->id));
	}
	json_object_object_add(r, "element", el);
	json_object_object_add(r, "path", path);
	g_free(role);
	g_free(name);
	g_free(desc);
	g_object_unref(cur);
	wctx_clear(&c);
	xtops_free(&xs);
	return r;
}

/* The showing element under a with t's role, name and area (a new
 * reference), or NULL. */
static AtspiAccessible *
find_el(AtspiAccessible *a, const struct wctx *c, const struct target *t, int depth, int *budget)
{
	AtspiAccessible *hit = NULL;
	gchar *role;
	char *name;
	struct rect r;
	gint n;

	if (depth > PATH_MAX_DEPTH || --*budget <= 0 || !shows(c, a))
		return NULL;
	role = atspi_accessible_get_role_name(a, NULL);
	name = node_name(a, c, NULL);
	if (role != NULL && strcmp(role, t->role) == 0 && strcmp(name, t->name) == 0 &&
	    node_extents(a, c, &r) && r.x == t->r.x && r.y == t->r.y && r.w == t->r.w && r.h == t->r.h)
		hit = g_object_ref(a);
	g_free(role);
	g_free(name);
	n = atspi_accessible_get_child_count(a, NULL);
	for (gint i = 0; hit == NULL && i < n && *budget > 0; i++) {
		AtspiAccessible *k = atspi_accessible_get_child_at_index(a, i, NULL);

		if (k != NULL) {
			hit = find_el(k, c, t, depth + 1, budget);
			g_object_unref(k);
		}
	}
	return hit;
}

/* The element t names, in any window (a new reference), or NULL. */
static AtspiAccessible *
find_target(const struct target *t)
{
	AtspiAccessible *desk = atspi_get_desktop(0), *el = NULL;
	int budget = FIND_BUDGET;
	gint n = desk != NULL ? atspi_accessible_get_child_count(desk, NULL) : 0;
	struct xtops xs;

	xtops_read(&xs);
	for (gint i = 0; el == NULL && i < n && budget > 0; i++) {
		AtspiAccessible *app = atspi_accessible_get_child_at_index(desk, i, NULL);
		gint nw = app != NULL ? atspi_accessible_get_child_count(app, NULL) : 0;
		char *aname = NULL, *toolkit = NULL;
		int pid = 0;

		if (nw > 0)
			app_info(app, &aname, &pid, &toolkit);
		for (gint k = 0; el == NULL && k < nw && budget > 0; k++) {
			AtspiAccessible *win = atspi_accessible_get_child_at_index(app, k, NULL);
			struct wctx c;

			if (win == NULL)
				continue;
			wctx_setup(&c, win, aname, pid, toolkit, &xs);
			el = find_el(win, &c, t, 0, &budget);
			wctx_clear(&c);
			g_object_unref(win);
		}
		g_free(aname);
		g_free(toolkit);
		if (app != NULL)
			g_object_unref(app);
	}
	if (desk != NULL)
		g_object_unref(desk);
	xtops_free(&xs);
	return el;
}

json_object *
point_action(const struct target *t)
{
	static const char *const wanted[] = { "click", "press", "activate", "jump", "toggle" };
	AtspiAccessible *el = find_target(t);
	AtspiAction *act = el != NULL ? atspi_accessible_get_action_iface(el) : NULL;
	json_object *r = json_object_new_object();
	gint na = act != NULL ? atspi_action_get_n_actions(act, NULL) : 0;
	const char *done = NULL;

	for (size_t w = 0; w < sizeof wanted / sizeof wanted[0] && done == NULL; w++)
		for (gint i = 0; i < na && i < 16; i++) {
			gchar *an = atspi_action_get_action_name(act, i, NULL);
			bool same = an != NULL && strcasecmp(an, wanted[w]) == 0;

			g_free(an);
			if (!same)
				continue;
			if (atspi_action_do_action(act, i, NULL))
				done = wanted[w];
			break;
		}
	if (act != NULL)
		g_object_unref(act);
	if (done != NULL) {
		json_object_object_add(r, "done", json_object_new_boolean(1));
		json_object_object_add(r, "action", json_object_new_string(done));
	} else
		json_object_object_add(r, "error", json_object_new_string(el == NULL ?
		    "the element is no longer there" : "the element has no click, press or activate action"));
	if (el != NULL)
		g_object_unref(el);
	return r;
}
