/*
 * node.c - reading one accessible node for detm-a11y: its states, screen
 * area, name, and the element JSON the replies carry; and the context of
 * the window it is in.
 *
 * Invariant: every string that leaves this file for a reply is capped
 * (jstr, str_capped: A11Y_STR bytes, cut between characters, ending with
 * an ellipsis). libatspi hands over whatever the application sent (a
 * window title can be a megabyte); one copy of it lives only as long as
 * the call that read it.
 *
 * Does not: walk the tree (walk.c, point.c) or decide what is listed.
 */
#include <ctype.h>
#include <string.h>

#include "helper.h"
#include "utf8.h"

#define ACTIONS_MAX 16

static GEnumClass *state_class;

bool
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

char *
str_capped(const char *s)
{
	char *out = g_malloc(A11Y_STR);

	utf8_clip(out, A11Y_STR, s != NULL ? s : "", s != NULL ? strlen(s) : 0, NULL);
	return out;
}

json_object *
jstr(const char *s)
{
	char *c = str_capped(s);
	json_object *o = json_object_new_string(c);

	g_free(c);
	return o;
}

static const char *
state_name(AtspiStateType s)
{
	GEnumValue *v;

	if (state_class == NULL)
		state_class = g_type_class_ref(atspi_state_type_get_type());
	v = g_enum_get_value(state_class, (gint)s);
	return v != NULL ? v->value_nick : "unknown";
}

unsigned
node_flags(AtspiAccessible *a, json_object **names)
{
	AtspiStateSet *set = atspi_accessible_get_state_set(a);
	unsigned f = 0;
	GArray *st;

	if (names != NULL)
		*names = json_object_new_array();
	if (set == NULL)
		return 0;
	if (names != NULL) {
		st = atspi_state_set_get_states(set);
		for (guint i = 0; st != NULL && i < st->len; i++)
			json_object_array_add(*names, json_object_new_string(state_name(g_array_index(st,
			    AtspiStateType, i))));
		if (st != NULL)
			g_array_free(st, TRUE);
	}
	f |= atspi_state_set_contains(set, ATSPI_STATE_VISIBLE) ? NODE_VISIBLE : 0;
	f |= atspi_state_set_contains(set, ATSPI_STATE_SHOWING) ? NODE_SHOWING : 0;
	f |= atspi_state_set_contains(set, ATSPI_STATE_MANAGES_DESCENDANTS) ? NODE_MANAGES : 0;
	f |= atspi_state_set_contains(set, ATSPI_STATE_ACTIVE) ? NODE_ACTIVE : 0;
	g_object_unref(set);
	return f;
}

bool
node_extents(AtspiAccessible *a, const struct wctx *c, struct rect *out)
{
	AtspiComponent *comp = atspi_accessible_get_component_iface(a);
	AtspiRect *r;
	bool ok = false;

	if (comp == NULL)
		return false;
	r = atspi_component_get_extents(comp, ATSPI_COORD_TYPE_SCREEN, NULL);
	if (r != NULL && r->width > 0 && r->height > 0 && r->x > -1000000 && r->y > -1000000) {
		out->x = r->x + (c != NULL ? c->dx : 0);
		out->y = r->y + (c != NULL ? c->dy : 0);
		out->w = r->width;
		out->h = r->height;
		ok = true;
	}
	g_free(r);
	g_object_unref(comp);
	return ok;
}

bool
rect_meets(const struct rect *a, const struct rect *b)
{
	return a->x < (int64_t)b->x + b->w && b->x < (int64_t)a->x + a->w &&
	    a->y < (int64_t)b->y + b->h && b->y < (int64_t)a->y + a->h;
}

bool
rect_has(const struct rect *r, int x, int y)
{
	return x >= r->x && y >= r->y && x < (int64_t)r->x + r->w && y < (int64_t)r->y + r->h;
}

char *
node_name(AtspiAccessible *a, const struct wctx *c, char **desc)
{
	gchar *name = atspi_accessible_get_name(a, NULL);
	char *out = str_capped(name);

	(void)c;
	g_free(name);
	if (desc != NULL) {
		gchar *d = atspi_accessible_get_description(a, NULL);

		*desc = str_capped(d);
		g_free(d);
	}
	return out;
}

/* The name of what labels a (its LABELLED_BY relation), for fields that
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

static json_object *
actions_json(AtspiAccessible *a)
{
	AtspiAction *act = atspi_accessible_get_action_iface(a);
	json_object *arr = json_object_new_array();
	gint n;

	if (act == NULL)
		return arr;
	n = atspi_action_get_n_actions(act, NULL);
	for (gint i = 0; i < n && i < ACTIONS_MAX; i++) {
		gchar *name = atspi_action_get_action_name(act, i, NULL);

		if (name != NULL && name[0] != '\0')
			json_object_array_add(arr, jstr(name));
		g_free(name);
	}
	g_object_unref(act);
	return arr;
}

static json_object *
bounds_json(const struct rect *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "x", json_object_new_int(r->x));
	json_object_object_add(o, "y", json_object_new_int(r->y));
	json_object_object_add(o, "width", json_object_new_int(r->w));
	json_object_object_add(o, "height", json_object_new_int(r->h));
	return o;
}

json_object *
node_element(AtspiAccessible *a, const char *role, const char *name, const char *desc,
    json_object *states, const struct rect *r, int depth)
{
	json_object *el = json_object_new_object();

	json_object_object_add(el, "role", jstr(role));
	json_object_object_add(el, "name", jstr(name));
	if (name[0] == '\0') {
		gchar *label = label_of(a, role);

		if (label != NULL && label[0] != '\0')
			json_object_object_add(el, "label", jstr(label));
		g_free(label);
	}
	json_object_object_add(el, "description", jstr(desc));
	json_object_object_add(el, "states", states);
	json_object_object_add(el, "actions", actions_json(a));
	json_object_object_add(el, "bounds", r != NULL ? bounds_json(r) : NULL);
	json_object_object_add(el, "depth", json_object_new_int(depth));
	return el;
}

/* ---- windows ---- */

void
app_info(AtspiAccessible *app, char **name, int *pid, char **toolkit)
{
	gchar *n = atspi_accessible_get_name(app, NULL);
	gchar *tk = atspi_accessible_get_toolkit_name(app, NULL);
	gchar *ver = tk != NULL ? atspi_accessible_get_toolkit_version(app, NULL) : NULL;

	*name = str_capped(n);
	*pid = (int)atspi_accessible_get_process_id(app, NULL);
	*toolkit = NULL;
	if (tk != NULL) {
		char *both = g_strdup_printf("%s %s", tk, ver != NULL ? ver : "");

		*toolkit = str_capped(both);
		g_free(both);
	}
	g_free(n);
	g_free(tk);
	g_free(ver);
}

void
wctx_setup(struct wctx *c, AtspiAccessible *win, const char *app_name, int pid, const char *toolkit)
{
	gchar *name = atspi_accessible_get_name(win, NULL);

	memset(c, 0, sizeof *c);
	c->index = -1;
	c->name = str_capped(name);
	g_free(name);
	c->app = g_strdup(app_name);
	c->toolkit = toolkit != NULL ? g_strdup(toolkit) : NULL;
	c->pid = pid;
	if (!node_extents(win, c, &c->area))
		memset(&c->area, 0, sizeof c->area);
}

void
wctx_clear(struct wctx *c)
{
	g_free(c->name);
	g_free(c->app);
	g_free(c->toolkit);
	c->name = c->app = c->toolkit = NULL;
}
