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
 * Does not: act on elements, watch events, or see more than one display.
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

/* Screen bounds; false when the element has no component or no area. */
static bool
bounds_of(AtspiAccessible *a, json_object **out)
{
	AtspiComponent *c = atspi_accessible_get_component_iface(a);
	AtspiRect *r;
	bool ok = false;

	*out = NULL;
	if (c == NULL)
		return false;
	r = atspi_component_get_extents(c, ATSPI_COORD_TYPE_SCREEN, NULL);
	if (r != NULL && r->width > 0 && r->height > 0) {
		*out = json_object_new_object();
		json_object_object_add(*out, "x", json_object_new_int(r->x));
		json_object_object_add(*out, "y", json_object_new_int(r->y));
		json_object_object_add(*out, "width", json_object_new_int(r->width));
		json_object_object_add(*out, "height", json_object_new_int(r->height));
		ok = true;
	}
	g_free(r);
	g_object_unref(c);
	return ok;
}

static json_object *
str_or_empty(gchar *s)
{
	json_object *o = json_object_new_string(s != NULL ? s : "");

	g_free(s);
	return o;
}

/* Adds a, if it matches the query, to w->out. */
static void
consider(struct walk *w, AtspiAccessible *a, const char *role, const char *name,
    json_object *states, int depth)
{
	const struct query *q = w->q;
	json_object *el, *bounds;

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
	el = json_object_new_object();
	json_object_object_add(el, "role", json_object_new_string(role));
	json_object_object_add(el, "name", json_object_new_string(name));
	json_object_object_add(el, "description", str_or_empty(atspi_accessible_get_description(a, NULL)));
	json_object_object_add(el, "states", json_object_get(states));
	json_object_object_add(el, "actions", actions_json(a));
	json_object_object_add(el, "bounds", bounds);
	json_object_object_add(el, "application", json_object_new_string(w->app));
	json_object_object_add(el, "window", json_object_new_string(w->win));
	json_object_object_add(el, "depth", json_object_new_int(depth));
	json_object_array_add(w->out, el);
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
