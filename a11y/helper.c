/*
 * helper.c - detm-a11y: reads one display's accessibility tree (AT-SPI2)
 * for detmd, which never links libatspi itself.
 *
 * Why a process of its own: libatspi keeps one bus connection per process
 * (it finds the bus through AT_SPI_BUS_ADDRESS, the X root window or the
 * session bus, once). detmd starts one helper per task display
 * (daemon/a11y.c), with that display's DISPLAY, XAUTHORITY and private
 * DBUS_SESSION_BUS_ADDRESS in its environment, so two displays' trees can
 * never mix.
 *
 * Protocol: one JSON object per line on stdin, one JSON object per line on
 * stdout, strictly in turn. A request is
 *   {"op":"elements","window":s?,"role":s?,"name":s?,"states":[s]?,
 *    "max":n,"depth":n,"visit":n}
 * and its answer {"elements":[...],"count":n,"truncated":b,"visited":n,
 * "applications":[s]}, or {"error":"..."}. {"op":"ping"} answers
 * {"ok":true} (the first one also connects to the accessibility bus).
 * EOF on stdin ends the helper.
 *
 * Every call into an application has a timeout (atspi_set_timeout), so a
 * hung application costs a bounded wait; detmd applies its own deadline
 * to the whole answer on top and kills a helper that misses it.
 *
 * Does not: watch events, move the pointer, or see more than one display.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atspi/atspi.h>
#include <json-c/json.h>

#define LINE_MAX_BYTES (64 * 1024)
#define CALL_TIMEOUT_MS 1500
#define STARTUP_TIMEOUT_MS 5000

struct query {
	const char *window, *role, *name;
	json_object *states;    /* array of strings, or NULL */
	int max, depth, visit;
};

struct walk {
	const struct query *q;
	json_object *out;       /* the elements array */
	int visited;
	bool truncated;
	const char *app, *win;  /* names of the current application and window */
};

static GEnumClass *state_class;

/* Case-insensitive substring test; an empty or NULL needle matches. */
static bool
contains_ci(const char *hay, const char *needle)
{
	size_t n, i;

	if (needle == NULL || needle[0] == '\0')
		return true;
	if (hay == NULL)
		return false;
	n = strlen(needle);
	for (; *hay != '\0'; hay++) {
		for (i = 0; i < n && hay[i] != '\0' &&
		    tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]); i++)
			;
		if (i == n)
			return true;
	}
	return false;
}

static const char *
state_name(AtspiStateType s)
{
	GEnumValue *v = g_enum_get_value(state_class, (gint)s);

	return v != NULL ? v->value_nick : "unknown";
}

/* The element's states as names; *visible: both visible and showing. */
static json_object *
states_json(AtspiAccessible *a, bool *visible)
{
	AtspiStateSet *set = atspi_accessible_get_state_set(a);
	json_object *arr = json_object_new_array();
	GArray *st;

	*visible = false;
	if (set == NULL)
		return arr;
	st = atspi_state_set_get_states(set);
	for (guint i = 0; st != NULL && i < st->len; i++)
		json_object_array_add(arr, json_object_new_string(state_name(g_array_index(st, AtspiStateType, i))));
	*visible = atspi_state_set_contains(set, ATSPI_STATE_VISIBLE) &&
	    atspi_state_set_contains(set, ATSPI_STATE_SHOWING);
	if (st != NULL)
		g_array_free(st, TRUE);
	g_object_unref(set);
	return arr;
}

static bool
has_states(json_object *have, json_object *want)
{
	for (size_t i = 0; want != NULL && i < json_object_array_length(want); i++) {
		const char *w = json_object_get_string(json_object_array_get_idx(want, i));
		bool found = false;

		for (size_t j = 0; !found && j < json_object_array_length(have); j++)
			found = strcasecmp(json_object_get_string(json_object_array_get_idx(have, j)), w) == 0;
		if (!found)
			return false;
	}
	return true;
}

static json_object *
actions_json(AtspiAccessible *a)
{
	AtspiAction *act = atspi_accessible_get_action_iface(a);
	json_object *arr = json_object_new_array();
	gint n;

	if (act == NULL)
		return arr;
	n = atspi_action_get_n_actions(act, NULL);
	for (gint i = 0; i < n && i < 16; i++) {
		gchar *name = atspi_action_get_action_name(act, i, NULL);

		if (name != NULL && name[0] != '\0')
			json_object_array_add(arr, json_object_new_string(name));
		g_free(name);
	}
	g_object_unref(act);
	return arr;
}

/* Screen extents of a; false when it has no component or no area. */
static bool
extents_of(AtspiAccessible *a, AtspiRect *out)
{
	AtspiComponent *c = atspi_accessible_get_component_iface(a);
	AtspiRect *r;
	bool ok = false;

	if (c == NULL)
		return false;
	r = atspi_component_get_extents(c, ATSPI_COORD_TYPE_SCREEN, NULL);
	if (r != NULL && r->width > 0 && r->height > 0) {
		*out = *r;
		ok = true;
	}
	g_free(r);
	g_object_unref(c);
	return ok;
}

/* The same as JSON {x, y, width, height} in *out (NULL when false). */
static bool
bounds_of(AtspiAccessible *a, json_object **out)
{
	AtspiRect r;

	*out = NULL;
	if (!extents_of(a, &r))
		return false;
	*out = json_object_new_object();
	json_object_object_add(*out, "x", json_object_new_int(r.x));
	json_object_object_add(*out, "y", json_object_new_int(r.y));
	json_object_object_add(*out, "width", json_object_new_int(r.width));
	json_object_object_add(*out, "height", json_object_new_int(r.height));
	return true;
}

static json_object *
str_or_empty(gchar *s)
{
	json_object *o = json_object_new_string(s != NULL ? s : "");

	g_free(s);
	return o;
}

/* The name of what a labels (its LABELLED_BY relation), for fields that
 * have no name of their own; NULL when none (g_free). */
static gchar *
label_of(AtspiAccessible *a, const char *role)
{
	static const char *const fields[] = { "text", "entry", "password text", "spin button", "combo box",
		"check box", "slider" };
	GArray *rels;
	gchar *label = NULL;
	size_t i;

	for (i = 0; i < sizeof fields / sizeof fields[0] && strcmp(role, fields[i]) != 0; i++)
		;
	if (i == sizeof fields / sizeof fields[0])
		return NULL;
	rels = atspi_accessible_get_relation_set(a, NULL);
	for (guint k = 0; rels != NULL && k < rels->len && label == NULL; k++) {
		AtspiRelation *rel = g_array_index(rels, AtspiRelation *, k);

		if (atspi_relation_get_relation_type(rel) == ATSPI_RELATION_LABELLED_BY &&
		    atspi_relation_get_n_targets(rel) > 0) {
			AtspiAccessible *t = atspi_relation_get_target(rel, 0);

			if (t != NULL) {
				label = atspi_accessible_get_name(t, NULL);
				g_object_unref(t);
			}
		}
	}
	for (guint k = 0; rels != NULL && k < rels->len; k++)
		g_object_unref(g_array_index(rels, AtspiRelation *, k));
	if (rels != NULL)
		g_array_free(rels, TRUE);
	return label;
}

/* One element as JSON; takes bounds, borrows states. An element with no
 * name of its own gets "label": the name of what labels it. */
static json_object *
element_json(AtspiAccessible *a, const char *role, const char *name, json_object *states,
    json_object *bounds, const char *app, const char *win, int depth)
{
	json_object *el = json_object_new_object();

	json_object_object_add(el, "role", json_object_new_string(role));
	json_object_object_add(el, "name", json_object_new_string(name));
	if (name[0] == '\0') {
		gchar *label = label_of(a, role);

		if (label != NULL && label[0] != '\0')
			json_object_object_add(el, "label", json_object_new_string(label));
		g_free(label);
	}
	json_object_object_add(el, "description", str_or_empty(atspi_accessible_get_description(a, NULL)));
	json_object_object_add(el, "states", json_object_get(states));
	json_object_object_add(el, "actions", actions_json(a));
	json_object_object_add(el, "bounds", bounds);
	json_object_object_add(el, "application", json_object_new_string(app));
	json_object_object_add(el, "window", json_object_new_string(win));
	json_object_object_add(el, "depth", json_object_new_int(depth));
	return el;
}

/* Adds a, if it matches the query, to w->out. */
static void
consider(struct walk *w, AtspiAccessible *a, const char *role, const char *name,
    json_object *states, int depth)
{
	const struct query *q = w->q;
	json_object *bounds;

	if (q->role != NULL && q->role[0] != '\0' && strcasecmp(role, q->role) != 0)
		return;
	if (!contains_ci(name, q->name) || !has_states(states, q->states))
		return;
	if (!bounds_of(a, &bounds))
		return;
	if ((int)json_object_array_length(w->out) >= q->max) {
		json_object_put(bounds);
		w->truncated = true;
		return;
	}
	json_object_array_add(w->out, element_json(a, role, name, states, bounds, w->app, w->win, depth));
}

/* Depth-first over the showing part of the tree under a. */
static void
walk_node(struct walk *w, AtspiAccessible *a, int depth)
{
	gchar *role, *name;
	json_object *states;
	bool visible;
	gint n;

	if (w->visited >= w->q->visit || depth > w->q->depth) {
		w->truncated = true;
		return;
	}
	w->visited++;
	states = states_json(a, &visible);
	if (!visible) {         /* hidden: nothing under it shows either */
		json_object_put(states);
		return;
	}
	role = atspi_accessible_get_role_name(a, NULL);
	name = atspi_accessible_get_name(a, NULL);
	if (depth == 0)
		w->win = name != NULL ? name : "";
	consider(w, a, role != NULL ? role : "unknown", name != NULL ? name : "", states, depth);
	json_object_put(states);
	n = atspi_accessible_get_child_count(a, NULL);
	for (gint i = 0; i < n && w->visited < w->q->visit; i++) {
		AtspiAccessible *c = atspi_accessible_get_child_at_index(a, i, NULL);

		if (c != NULL) {
			walk_node(w, c, depth + 1);
			g_object_unref(c);
		}
	}
	if (depth == 0)
		w->win = "";
	g_free(role);
	g_free(name);
}

static void
walk_app(struct walk *w, AtspiAccessible *app, json_object *apps)
{
	gchar *aname = atspi_accessible_get_name(app, NULL);
	gint n = atspi_accessible_get_child_count(app, NULL);

	w->app = aname != NULL ? aname : "";
	json_object_array_add(apps, json_object_new_string(w->app));
	for (gint i = 0; i < n; i++) {
		AtspiAccessible *win = atspi_accessible_get_child_at_index(app, i, NULL);
		gchar *title;

		if (win == NULL)
			continue;
		title = atspi_accessible_get_name(win, NULL);
		if (contains_ci(title != NULL ? title : "", w->q->window))
			walk_node(w, win, 0);
		g_free(title);
		g_object_unref(win);
	}
	w->app = "";
	g_free(aname);
}

static json_object *
elements(const struct query *q)
{
	AtspiAccessible *desk = atspi_get_desktop(0);
	struct walk w = { .q = q, .out = json_object_new_array(), .app = "", .win = "" };
	json_object *apps = json_object_new_array(), *r = json_object_new_object();
	gint n;

	if (desk == NULL) {
		json_object_put(w.out);
		json_object_put(apps);
		json_object_object_add(r, "error", json_object_new_string("no accessibility desktop (registry unreachable)"));
		return r;
	}
	n = atspi_accessible_get_child_count(desk, NULL);
	for (gint i = 0; i < n; i++) {
		AtspiAccessible *app = atspi_accessible_get_child_at_index(desk, i, NULL);

		if (app != NULL) {
			walk_app(&w, app, apps);
			g_object_unref(app);
		}
	}
	g_object_unref(desk);
	json_object_object_add(r, "count", json_object_new_int((int)json_object_array_length(w.out)));
	json_object_object_add(r, "truncated", json_object_new_boolean(w.truncated));
	json_object_object_add(r, "visited", json_object_new_int(w.visited));
	json_object_object_add(r, "applications", apps);
	json_object_object_add(r, "elements", w.out);
	return r;
}

/* ---- what is under a point, and acting on an element ---- */


static bool
showing(AtspiAccessible *a)
{
	bool visible;
	json_object *st = states_json(a, &visible);

	json_object_put(st);
	return visible;
}

static bool
rect_has(const AtspiRect *r, int x, int y)
{
	return x >= r->x && y >= r->y && x < r->x + r->width && y < r->y + r->height;
}

/* The child of a under (x, y): GetAccessibleAtPoint, else the last showing
 * child whose extents hold the point (toolkits that do not implement it).
 * A new reference, or NULL. */
static AtspiAccessible *
child_at(AtspiAccessible *a, int x, int y)
{
	AtspiComponent *c = atspi_accessible_get_component_iface(a);
	AtspiAccessible *hit = NULL;
	AtspiRect r;
	gint n;

	if (c != NULL) {
		hit = atspi_component_get_accessible_at_point(c, x, y, ATSPI_COORD_TYPE_SCREEN, NULL);
		g_object_unref(c);
	}
	if (hit == a) {
		g_object_unref(hit);
		hit = NULL;
	}
	if (hit != NULL)
		return hit;
	n = atspi_accessible_get_child_count(a, NULL);
	for (gint i = 0; i < n && i < 2000; i++) {
		AtspiAccessible *k = atspi_accessible_get_child_at_index(a, i, NULL);

		if (k == NULL)
			continue;
		if (showing(k) && extents_of(k, &r) && rect_has(&r, x, y)) {
			if (hit != NULL)
				g_object_unref(hit);
			hit = k;
		} else
			g_object_unref(k);
	}
	return hit;
}

/* The showing top-level window under (x, y): an active one first. Sets
 * *app_out (g_free) and returns a new reference, or NULL. */
static AtspiAccessible *
window_at(int x, int y, gchar **app_out)
{
	AtspiAccessible *desk = atspi_get_desktop(0), *best = NULL;
	bool best_active = false;
	gint n = desk != NULL ? atspi_accessible_get_child_count(desk, NULL) : 0;

	*app_out = NULL;
	for (gint i = 0; i < n && !best_active; i++) {
		AtspiAccessible *app = atspi_accessible_get_child_at_index(desk, i, NULL);
		gint nw = app != NULL ? atspi_accessible_get_child_count(app, NULL) : 0;

		for (gint k = 0; k < nw && !best_active; k++) {
			AtspiAccessible *win = atspi_accessible_get_child_at_index(app, k, NULL);
			AtspiStateSet *set;
			AtspiRect r;
			bool active;

			if (win == NULL)
				continue;
			if (!showing(win) || !extents_of(win, &r) || !rect_has(&r, x, y)) {
				g_object_unref(win);
				continue;
			}
			set = atspi_accessible_get_state_set(win);
			active = set != NULL && atspi_state_set_contains(set, ATSPI_STATE_ACTIVE);
			if (set != NULL)
				g_object_unref(set);
			if (best != NULL && !active) {
				g_object_unref(win);
				continue;
			}
			if (best != NULL)
				g_object_unref(best);
			g_free(*app_out);
			best = win;
			best_active = active;
			*app_out = atspi_accessible_get_name(app, NULL);
		}
		if (app != NULL)
			g_object_unref(app);
	}
	if (desk != NULL)
		g_object_unref(desk);
	return best;
}

/* {"element":{...}|null,"path":[{role,name}...]} for what is under (x, y):
 * the deepest element, and its ancestors from the window down. */
static json_object *
at_point(int x, int y)
{
	gchar *app = NULL, *title;
	AtspiAccessible *cur = window_at(x, y, &app);
	json_object *r = json_object_new_object(), *path = json_object_new_array(), *states, *bounds;
	int depth = 0;

	if (cur == NULL) {
		json_object_object_add(r, "element", NULL);
		json_object_object_add(r, "path", path);
		return r;
	}
	title = atspi_accessible_get_name(cur, NULL);
	for (;;) {
		AtspiAccessible *next = depth < 60 ? child_at(cur, x, y) : NULL;
		gchar *role, *name;
		json_object *step;

		if (next == NULL)
			break;
		role = atspi_accessible_get_role_name(cur, NULL);
		name = atspi_accessible_get_name(cur, NULL);
		step = json_object_new_object();
		json_object_object_add(step, "role", json_object_new_string(role ? role : "unknown"));
		json_object_object_add(step, "name", json_object_new_string(name ? name : ""));
		json_object_array_add(path, step);
		g_free(role);
		g_free(name);
		g_object_unref(cur);
		cur = next;
		depth++;
	}
	{
		bool visible;
		gchar *role = atspi_accessible_get_role_name(cur, NULL), *name = atspi_accessible_get_name(cur, NULL);

		states = states_json(cur, &visible);
		if (!bounds_of(cur, &bounds))
			bounds = NULL;
		json_object_object_add(r, "element", element_json(cur, role ? role : "unknown", name ? name : "",
		    states, bounds, app ? app : "", title ? title : "", depth));
		json_object_put(states);
		g_free(role);
		g_free(name);
	}
	json_object_object_add(r, "path", path);
	g_object_unref(cur);
	g_free(app);
	g_free(title);
	return r;
}

struct target {
	const char *role, *name;
	AtspiRect r;
};

/* The showing element under a with t's role, name and extents (a new
 * reference), or NULL. */
static AtspiAccessible *
find_el(AtspiAccessible *a, const struct target *t, int depth, int *budget)
{
	AtspiAccessible *hit = NULL;
	gchar *role, *name;
	AtspiRect r;
	gint n;

	if (depth > 60 || --*budget <= 0 || !showing(a))
		return NULL;
	role = atspi_accessible_get_role_name(a, NULL);
	name = atspi_accessible_get_name(a, NULL);
	if (role != NULL && name != NULL && strcmp(role, t->role) == 0 && strcmp(name, t->name) == 0 &&
	    extents_of(a, &r) && r.x == t->r.x && r.y == t->r.y && r.width == t->r.width &&
	    r.height == t->r.height)
		hit = g_object_ref(a);
	g_free(role);
	g_free(name);
	n = atspi_accessible_get_child_count(a, NULL);
	for (gint i = 0; hit == NULL && i < n; i++) {
		AtspiAccessible *c = atspi_accessible_get_child_at_index(a, i, NULL);

		if (c != NULL) {
			hit = find_el(c, t, depth + 1, budget);
			g_object_unref(c);
		}
	}
	return hit;
}

/* Runs the element's first action among click, press, activate, jump,
 * toggle: {"done":true,"action":name} or {"error":...}. */
static json_object *
do_action(const struct target *t)
{
	static const char *const wanted[] = { "click", "press", "activate", "jump", "toggle" };
	AtspiAccessible *desk = atspi_get_desktop(0), *el = NULL;
	json_object *r = json_object_new_object();
	int budget = 20000;
	gint n = desk != NULL ? atspi_accessible_get_child_count(desk, NULL) : 0;
	AtspiAction *act;

	for (gint i = 0; el == NULL && i < n; i++) {
		AtspiAccessible *app = atspi_accessible_get_child_at_index(desk, i, NULL);
		gint nw = app != NULL ? atspi_accessible_get_child_count(app, NULL) : 0;

		for (gint k = 0; el == NULL && k < nw; k++) {
			AtspiAccessible *win = atspi_accessible_get_child_at_index(app, k, NULL);

			if (win != NULL) {
				el = find_el(win, t, 0, &budget);
				g_object_unref(win);
			}
		}
		if (app != NULL)
			g_object_unref(app);
	}
	if (desk != NULL)
		g_object_unref(desk);
	act = el != NULL ? atspi_accessible_get_action_iface(el) : NULL;
	if (act != NULL) {
		gint na = atspi_action_get_n_actions(act, NULL);

		for (size_t w = 0; w < sizeof wanted / sizeof wanted[0] && !json_object_object_get_ex(r, "done", NULL); w++)
			for (gint i = 0; i < na && i < 16; i++) {
				gchar *an = atspi_action_get_action_name(act, i, NULL);
				bool same = an != NULL && strcasecmp(an, wanted[w]) == 0;

				g_free(an);
				if (!same)
					continue;
				if (atspi_action_do_action(act, i, NULL)) {
					json_object_object_add(r, "done", json_object_new_boolean(1));
					json_object_object_add(r, "action", json_object_new_string(wanted[w]));
				}
				break;
			}
		g_object_unref(act);
	}
	if (!json_object_object_get_ex(r, "done", NULL))
		json_object_object_add(r, "error", json_object_new_string(el == NULL ?
		    "the element is no longer there" : "the element has no click, press or activate action"));
	if (el != NULL)
		g_object_unref(el);
	return r;
}

static int
get_int(json_object *req, const char *key, int def, int lo, int hi)
{
	json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(req, key, &v) || !json_object_is_type(v, json_type_int))
		return def;
	n = json_object_get_int64(v);
	return n < lo ? lo : n > hi ? hi : (int)n;
}

static const char *
get_str(json_object *req, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(req, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static json_object *
answer(json_object *req)
{
	const char *op = get_str(req, "op");
	struct query q;
	json_object *r;

	if (op != NULL && strcmp(op, "ping") == 0) {
		r = json_object_new_object();
		json_object_object_add(r, "ok", json_object_new_boolean(1));
		return r;
	}
	if (op != NULL && strcmp(op, "at_point") == 0)
		return at_point(get_int(req, "x", 0, -100000, 100000), get_int(req, "y", 0, -100000, 100000));
	if (op != NULL && strcmp(op, "action") == 0) {
		struct target t = { get_str(req, "role"), get_str(req, "name"),
			{ get_int(req, "x", 0, -100000, 100000), get_int(req, "y", 0, -100000, 100000),
			  get_int(req, "width", 0, 0, 100000), get_int(req, "height", 0, 0, 100000) } };

		if (t.role != NULL && t.name != NULL)
			return do_action(&t);
	}
	if (op == NULL || strcmp(op, "elements") != 0) {
		r = json_object_new_object();
		json_object_object_add(r, "error", json_object_new_string("unknown op"));
		return r;
	}
	q.window = get_str(req, "window");
	q.role = get_str(req, "role");
	q.name = get_str(req, "name");
	if (!json_object_object_get_ex(req, "states", &q.states) ||
	    !json_object_is_type(q.states, json_type_array))
		q.states = NULL;
	q.max = get_int(req, "max", 200, 1, 100000);
	q.depth = get_int(req, "depth", 40, 1, 1000);
	q.visit = get_int(req, "visit", 20000, 1, 1000000);
	return elements(&q);
}

int
main(void)
{
	static char line[LINE_MAX_BYTES];

	if (atspi_init() < 0) {
		fprintf(stderr, "detm-a11y: atspi_init failed\n");
		return 1;
	}
	atspi_set_timeout(CALL_TIMEOUT_MS, STARTUP_TIMEOUT_MS);
	state_class = g_type_class_ref(atspi_state_type_get_type());
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof line, stdin) != NULL) {
		json_object *req = json_tokener_parse(line), *r;

		r = req != NULL ? answer(req) : NULL;
		if (r == NULL) {
			r = json_object_new_object();
			json_object_object_add(r, "error", json_object_new_string("request is not JSON"));
		}
		fputs(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN), stdout);
		fputc('\n', stdout);
		fflush(stdout);
		json_object_put(r);
		json_object_put(req);
	}
	g_type_class_unref(state_class);
	return atspi_exit() < 0 ? 1 : 0;
}
