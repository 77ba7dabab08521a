/*
 * api_osworld_at.c - GET /osworld/{task_id}/accessibility: the task
 * display's accessibility tree (a11y.c, through its detm-a11y helper) as
 * OSWorld's AT-SPI dump: {"AT": "<desktop-frame xmlns:st=... ...>
 * <application name=...><frame ...><push-button name=... st:enabled=
 * "true" cp:screencoord="(x, y)" cp:size="(w, h)">text</push-button>
 * ...</desktop-frame>"} with OSWorld's namespaces (st, attr, cp, doc,
 * docattr, txt, val, act) and its role names (blanks as '-').
 *
 * What is in it: what a11y_elements gives (visible, showing elements with
 * an area, at most LIM_A11Y_ELEMENTS), nested by their depth under their
 * window's application, so OSWorld's own tree filters (linearize_
 * accessibility_tree and its kin, which keep showing elements with an
 * area) see what they would keep from a full dump.
 *
 * Invariants: the XML is well formed (names made XML names, values
 * escaped, characters XML 1.0 forbids dropped) and valid UTF-8; at most
 * OSW_AT_BYTES (a cut tree is closed properly and says so in a comment).
 * Does not: read the shared desktop (it has no bus of detm's).
 */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "core/buf.h"
#include "desktop/takeover.h"
#include "lim.h"
#include "x11/a11y.h"
#include "x11/display.h"

#define OSW_AT_BYTES (8L * 1024 * 1024)
#define NS "https://accessibility.ubuntu.example.org/ns/"
#define DEPTH_MAX 64

static void
put(struct buf *b, const char *s)
{
	if (buf_append(b, s, strlen(s)) != 0)
		return;         /* over the cap: the caller sees b->len and stops */
}

/* s escaped for an attribute or text: & < > " as entities, control
 * characters XML forbids dropped. */
static void
esc(struct buf *b, const char *s)
{
	for (; s != NULL && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '&')
			put(b, "&amp;");
		else if (c == '<')
			put(b, "&lt;");
		else if (c == '>')
			put(b, "&gt;");
		else if (c == '"')
			put(b, "&quot;");
		else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			continue;
		else if (buf_append(b, s, 1) != 0)
			return;
	}
}

/* A role as an XML name: blanks and other odd characters as '-'. */
static void
tag(const char *role, char *out, size_t cap)
{
	size_t o = 0;

	if (role == NULL || role[0] == '\0')
		role = "unknown";
	if (!((role[0] >= 'a' && role[0] <= 'z') || (role[0] >= 'A' && role[0] <= 'Z')))
		o = (size_t)snprintf(out, cap, "tag");
	for (; *role && o + 1 < cap; role++) {
		char c = *role;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.';

		out[o++] = ok ? c : '-';
	}
	out[o] = '\0';
}

static void
attr(struct buf *b, const char *name, const char *v)
{
	put(b, " ");
	put(b, name);
	put(b, "=\"");
	esc(b, v);
	put(b, "\"");
}

/* One element's start tag (and text): el as a11y_elements gives it. */
static void
open_el(struct buf *b, json_object *el, char *t, size_t cap)
{
	json_object *st = json_object_object_get(el, "states"), *bd = json_object_object_get(el, "bounds");
	json_object *acts = json_object_object_get(el, "actions"), *v;
	char s[160];

	tag(json_object_get_string(json_object_object_get(el, "role")), t, cap);
	put(b, "<");
	put(b, t);
	attr(b, "name", json_object_get_string(json_object_object_get(el, "name")));
	for (size_t i = 0; i < json_object_array_length(st); i++) {
		snprintf(s, sizeof s, "st:%s", json_object_get_string(json_object_array_get_idx(st, i)));
		for (char *p = s; *p; p++)
			if (*p == ' ')
				*p = '-';
		attr(b, s, "true");
	}
	for (size_t i = 0; i < json_object_array_length(acts); i++) {
		snprintf(s, sizeof s, "act:%s_desc", json_object_get_string(json_object_array_get_idx(acts, i)));
		for (char *p = s; *p; p++)
			if (*p == ' ')
				*p = '-';
		attr(b, s, "");
	}
	if (bd != NULL) {
		int x = json_object_get_int(json_object_object_get(bd, "x"));
		int y = json_object_get_int(json_object_object_get(bd, "y"));

		snprintf(s, sizeof s, "(%d, %d)", x, y);
		attr(b, "cp:screencoord", s);
		snprintf(s, sizeof s, "(%d, %d)", json_object_get_int(json_object_object_get(bd, "width")),
		    json_object_get_int(json_object_object_get(bd, "height")));
		attr(b, "cp:size", s);
	}
	if (json_object_object_get_ex(el, "description", &v) && json_object_get_string(v)[0] != '\0')
		attr(b, "attr:description", json_object_get_string(v));
	if (json_object_object_get_ex(el, "value", &v) && v != NULL)
		attr(b, "val:value", json_object_get_string(v));
	put(b, ">");
	if (json_object_object_get_ex(el, "text", &v) && v != NULL)
		esc(b, json_object_get_string(v));
	else if (strcmp(t, "label") == 0)       /* a label's text is its name (AT-SPI Text) */
		esc(b, json_object_get_string(json_object_object_get(el, "name")));
}

static void
close_tag(struct buf *b, const char *t)
{
	put(b, "</");
	put(b, t);
	put(b, ">");
}

/* Window wi's elements, nested by depth, inside its application. */
static void
window_xml(struct buf *b, json_object *els, json_object *win, int wi)
{
	char tags[DEPTH_MAX][64];
	int depths[DEPTH_MAX], top = 0;

	put(b, "<application");
	attr(b, "name", json_object_get_string(json_object_object_get(win, "application")));
	put(b, ">");
	for (size_t i = 0; i < json_object_array_length(els); i++) {
		json_object *el = json_object_array_get_idx(els, i);
		int d = json_object_get_int(json_object_object_get(el, "depth"));

		if (json_object_get_int(json_object_object_get(el, "window_index")) != wi)
			continue;
		while (top > 0 && depths[top - 1] >= d)
			close_tag(b, tags[--top]);
		if (top == DEPTH_MAX)
			close_tag(b, tags[--top]);
		open_el(b, el, tags[top], sizeof tags[top]);
		depths[top++] = d;
	}
	while (top > 0)
		close_tag(b, tags[--top]);
	put(b, "</application>");
}

int
api_osw_accessibility(struct req *r, struct derr *e)
{
	struct a11y_query q = { .max = LIM_A11Y_ELEMENTS };
	json_object *out = NULL, *wins, *o;
	struct buf b;
	const char *id;
	int n;

	if (api_known_task(r, &id, e) != 0 || takeover_gate_look(id, e) != 0)
		return -1;
	if ((n = display_task_number(id)) < 0)
		return derr_set(e, DERR_CONFLICT, "task_id", "task %s has no display of its own running", id);
	if (a11y_elements(n, &q, &out, e) != 0)
		return -1;
	buf_init(&b, OSW_AT_BYTES);
	put(&b, "<desktop-frame xmlns:st=\"" NS "state\" xmlns:attr=\"" NS "attributes\" xmlns:cp=\""
	    NS "component\" xmlns:doc=\"" NS "document\" xmlns:docattr=\"" NS "document/attributes\" "
	    "xmlns:txt=\"" NS "text\" xmlns:val=\"" NS "value\" xmlns:act=\"" NS "action\">");
	wins = json_object_object_get(out, "windows");
	for (size_t i = 0; i < json_object_array_length(wins) && b.len + 4096 < OSW_AT_BYTES; i++)
		window_xml(&b, json_object_object_get(out, "elements"), json_object_array_get_idx(wins, i),
		    (int)i);
	if (json_object_get_boolean(json_object_object_get(out, "truncated")))
		put(&b, "<!-- detm: the tree was cut at its element budget -->");
	put(&b, "</desktop-frame>");
	json_object_put(out);
	o = json_object_new_object();
	json_object_object_add(o, "AT", json_object_new_string_len(b.data ? b.data : "", (int)b.len));
	buf_free(&b);
	return req_reply(r, 200, o);
}
