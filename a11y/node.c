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
#define TEXT_CHARS 2048         /* characters of a text widget read (then capped in bytes) */

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

/* A GTK 4 widget type standing in for a name ("GtkButton", "AdwGizmo"). */
static bool
type_name(const char *s)
{
	if (strncmp(s, "Gtk", 3) != 0 && strncmp(s, "Adw", 3) != 0)
		return false;
	if (!isupper((unsigned char)s[3]))
		return false;
	for (s += 3; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s))
			return false;
	return true;
}

char *
node_name(AtspiAccessible *a, const struct wctx *c, char **desc)
{
	gchar *raw = atspi_accessible_get_name(a, NULL), *d = atspi_accessible_get_description(a, NULL);
	char *name = str_capped(raw);
	size_t n = strlen(name), nd = d != NULL ? strlen(d) : 0, half = n / 2;

	if (c != NULL && c->gtk4 && type_name(name))
		name[0] = '\0';
	else if (c != NULL && c->gtk4 && n >= 3 && n % 2 == 1 && name[half] == ' ' &&
	    memcmp(name, name + half + 1, half) == 0)
		name[half] = '\0';     /* "1 1": GTK 4.8 says a button's label twice */
	else if (nd > 0 && n > nd + 1 && name[n - nd - 1] == ' ' && strcmp(name + n - nd, d) == 0)
		name[n - nd - 1] = '\0';       /* "Save Save the file": the description again */
	if (desc != NULL)
		*desc = str_capped(d);
	g_free(raw);
	g_free(d);
	return name;
}

bool
wctx_shows(const struct wctx *c, AtspiAccessible *a, unsigned flags)
{
	struct rect r;

	if (!(flags & NODE_VISIBLE))
		return false;
	if (flags & NODE_SHOWING)
		return true;
	return c != NULL && c->gtk4 && c->area.w > 0 && node_extents(a, c, &r) && rect_meets(&r, &c->area);
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

static bool
has_state(json_object *states, const char *want)
{
	for (size_t i = 0; i < json_object_array_length(states); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(states, i)), want) == 0)
			return true;
	return false;
}

/* Adds "text" (a text widget's content, capped; never a password field's)
 * and "value" (a slider's, spin button's... current value) to el. */
static void
add_content(json_object *el, AtspiAccessible *a, const char *role, json_object *states)
{
	static const char *const text_roles[] = { "text", "entry", "spin button", "combo box", "paragraph",
		"table cell", "terminal", "editbar", "document text" };
	AtspiText *t = NULL;
	AtspiValue *v;
	size_t i;

	for (i = 0; i < sizeof text_roles / sizeof text_roles[0] && strcmp(role, text_roles[i]) != 0; i++)
		;
	if (i < sizeof text_roles / sizeof text_roles[0])     /* "password text" is not one */
		t = atspi_accessible_get_text_iface(a);
	if (t != NULL) {
		gint count = atspi_text_get_character_count(t, NULL);
		gchar *text = count > 0 ? atspi_text_get_text(t, 0, count < TEXT_CHARS ? count : TEXT_CHARS, NULL) : NULL;
		char *more = g_strdup_printf("%s%s", text != NULL ? text : "", count > TEXT_CHARS ? UTF8_ELLIPSIS : "");

		if (more[0] != '\0' || has_state(states, "editable"))
			json_object_object_add(el, "text", jstr(more));
		g_free(more);
		g_free(text);
		g_object_unref(t);
	}
	v = atspi_accessible_get_value_iface(a);
	if (v != NULL) {
		json_object_object_add(el, "value", json_object_new_double(atspi_value_get_current_value(v, NULL)));
		g_object_unref(v);
	}
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
	add_content(el, a, role, states);
	return el;
}

/* ---- windows ---- */

/* One string property of the application interface, asked of the
 * application itself with a blocking call that dispatches nothing else
 * (other messages wait in libdbus's queue for the main loop). libatspi
 * 2.46's own accessors (atspi_accessible_get_toolkit_name/_version) cannot
 * be used: they read obj->parent.app again after their D-Bus call, and a
 * signal dispatched during that call (the application's bus name
 * vanishing) disposes the application and leaves it NULL: a SEGV at 0x40,
 * seen twice under ASan when mousepad quit during a walk. NULL when the
 * application is gone, does not answer in 1 s or has no such property. */
static gchar *
app_prop(AtspiApplication *ap, const char *path, const char *prop)
{
	static const char *const iface = "org.a11y.atspi.Application";
	DBusMessage *m, *r = NULL;
	DBusMessageIter it, v;
	const char *val = NULL;
	gchar *out = NULL;

	if (ap->bus == NULL || ap->bus_name == NULL || path == NULL)
		return NULL;
	m = dbus_message_new_method_call(ap->bus_name, path, "org.freedesktop.DBus.Properties", "Get");
	if (m == NULL)
		return NULL;
	if (dbus_message_append_args(m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &prop, DBUS_TYPE_INVALID))
		r = dbus_connection_send_with_reply_and_block(ap->bus, m, 1000, NULL);
	dbus_message_unref(m);
	if (r == NULL)
		return NULL;
	if (dbus_message_iter_init(r, &it) && dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_VARIANT) {
		dbus_message_iter_recurse(&it, &v);
		if (dbus_message_iter_get_arg_type(&v) == DBUS_TYPE_STRING) {
			dbus_message_iter_get_basic(&v, &val);
			out = g_strdup(val);
		}
	}
	dbus_message_unref(r);
	return out;
}

/* "ToolkitName Version" of an application by its unique bus name, which the
 * bus never gives out twice: asked once per application, not on every
 * walk (an element wait walks about every second); NULL, not kept, when
 * it does not answer.
 * At most TOOLKITS_MAX names are kept; the table starts over past it. */
#define TOOLKITS_MAX 256
static GHashTable *toolkits;

static char *
app_toolkit(AtspiApplication *ap, const char *path)
{
	const char *hit;
	gchar *tk, *ver;
	char *both;

	if (ap->bus_name == NULL)
		return NULL;
	if (toolkits == NULL)
		toolkits = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	hit = g_hash_table_lookup(toolkits, ap->bus_name);
	if (hit != NULL)
		return str_capped(hit);
	tk = app_prop(ap, path, "ToolkitName");
	ver = tk != NULL ? app_prop(ap, path, "Version") : NULL;
	if (tk == NULL)         /* gone, slow or none: asked again next walk */
		return NULL;
	both = g_strdup_printf("%s %s", tk, ver != NULL ? ver : "");
	g_free(tk);
	g_free(ver);
	if (g_hash_table_size(toolkits) >= TOOLKITS_MAX)
		g_hash_table_remove_all(toolkits);
	g_hash_table_insert(toolkits, g_strdup(ap->bus_name), both);
	return str_capped(both);
}

void
app_info(AtspiAccessible *app, char **name, int *pid, char **toolkit)
{
	gchar *n = atspi_accessible_get_name(app, NULL);
	/* our own reference: the application object outlives a dispose that
	 * a later dispatch may run (its fields are freed only at finalize) */
	AtspiApplication *ap = app->parent.app != NULL ? g_object_ref(app->parent.app) : NULL;

	*name = str_capped(n);
	*pid = (int)atspi_accessible_get_process_id(app, NULL);
	*toolkit = ap != NULL ? app_toolkit(ap, app->parent.path) : NULL;
	if (ap != NULL)
		g_object_unref(ap);
	g_free(n);
}

void
wctx_setup(struct wctx *c, AtspiAccessible *win, const char *app_name, int pid, const char *toolkit,
    const struct xtops *xs)
{
	gchar *name = atspi_accessible_get_name(win, NULL);
	struct rect raw = { 0, 0, 0, 0 };
	const struct xtop *x;

	memset(c, 0, sizeof *c);
	c->index = -1;
	c->name = str_capped(name);
	g_free(name);
	c->app = g_strdup(app_name);
	c->toolkit = toolkit != NULL ? g_strdup(toolkit) : NULL;
	c->pid = pid;
	c->gtk4 = toolkit != NULL && g_ascii_strncasecmp(toolkit, "GTK 4.", 6) == 0;
	if (!node_extents(win, NULL, &raw))
		memset(&raw, 0, sizeof raw);
	c->x = x = xtop_match(xs, pid, &raw, c->gtk4, c->name);
	if (c->gtk4 && x != NULL && raw.w > 0) {
		/* the window's origin on the screen: the X window's, past its CSD margins */
		c->dx = x->r.x - raw.x + (x->margin[0] >= 0 ? x->margin[0] : (x->r.w - raw.w) / 2);
		c->dy = x->r.y - raw.y + (x->margin[2] >= 0 ? x->margin[2] : (x->r.h - raw.h) / 2);
	}
	c->area = raw;
	c->area.x += c->dx;
	c->area.y += c->dy;
}

void
wctx_clear(struct wctx *c)
{
	g_free(c->name);
	g_free(c->app);
	g_free(c->toolkit);
	c->name = c->app = c->toolkit = NULL;
}
