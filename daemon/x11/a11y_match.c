/*
 * a11y_match.c - a target in words ("the Save button", "the Name field",
 * "OK") or an element condition (element:button "OK") matched against the
 * elements of an accessibility tree (a11y_match.h has the rule).
 *
 * Owns: the role-word table (words people use -> AT-SPI role names) and
 * the normalisation of names. Pure functions over json-c values: no
 * AT-SPI, no X, no locks, so tests/unit checks them directly.
 *
 * Does not: read trees (a11y.c), act (gui.c) or judge waits (waits_*.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a11y_match.h"

/* Role words, longest phrase first where one is a prefix of another. */
static const struct {
	const char *word;
	const char *roles[7];
} role_words[] = {
	{ "push button", { "push button", NULL } },
	{ "toggle button", { "toggle button", NULL } },
	{ "radio button", { "radio button", "radio menu item", NULL } },
	{ "check box", { "check box", "check menu item", NULL } },
	{ "text field", { "text", "entry", "password text", "spin button", NULL } },
	{ "text box", { "text", "entry", "password text", NULL } },
	{ "menu item", { "menu item", "check menu item", "radio menu item", NULL } },
	{ "combo box", { "combo box", NULL } },
	{ "list item", { "list item", "table cell", "tree item", NULL } },
	{ "button", { "push button", "toggle button", "radio button", "push button menu", NULL } },
	{ "checkbox", { "check box", "check menu item", NULL } },
	{ "radio", { "radio button", "radio menu item", NULL } },
	{ "toggle", { "toggle button", "check box", NULL } },
	{ "switch", { "toggle button", "check box", NULL } },
	{ "field", { "text", "entry", "password text", "spin button", "combo box", NULL } },
	{ "entry", { "text", "entry", "password text", "spin button", NULL } },
	{ "input", { "text", "entry", "password text", "spin button", NULL } },
	{ "textbox", { "text", "entry", "password text", NULL } },
	{ "dropdown", { "combo box", NULL } },
	{ "combo", { "combo box", NULL } },
	{ "menu", { "menu", NULL } },
	{ "tab", { "page tab", NULL } },
	{ "link", { "link", NULL } },
	{ "slider", { "slider", NULL } },
	{ "item", { "list item", "table cell", "tree item", "menu item", NULL } },
	{ "label", { "label", NULL } },
	{ "icon", { "icon", NULL } },
	{ "dialog", { "dialog", "alert", "file chooser", "frame", "window", NULL } },
	{ "alert", { "alert", "dialog", NULL } },
	{ "window", { "frame", "window", "dialog", "alert", "file chooser", NULL } },
	{ "heading", { "heading", NULL } },
};

static const char *const fillers[] = { "the", "a", "an", "called", "named", "labelled", "labeled",
	"titled" };

/* Lower case, runs of space as one, mnemonic underscores, surrounding
 * quotes and a trailing ellipsis or colon dropped. */
void
a11y_norm(const char *in, char *out, size_t cap)
{
	size_t o = 0;
	bool space = true;
	size_t n;

	for (; *in != '\0' && o + 1 < cap; in++) {
		unsigned char ch = (unsigned char)*in;

		if (ch == '_' || ch == '"' ||
		    (ch == '\'' && (space || in[1] == '\0' || isspace((unsigned char)in[1]))))
			continue;
		if (isspace(ch)) {
			if (!space)
				out[o++] = ' ';
			space = true;
			continue;
		}
		out[o++] = (char)tolower(ch);
		space = false;
	}
	out[o] = '\0';
	for (n = o; n > 0;) {
		if (out[n - 1] == ' ' || out[n - 1] == ':' || out[n - 1] == '.')
			out[--n] = '\0';
		else if (n >= 3 && strcmp(out + n - 3, "\xe2\x80\xa6") == 0)
			out[n -= 3] = '\0';
		else
			break;
	}
}

static bool
word_at(const char *s, const char *w)
{
	size_t n = strlen(w);

	return strncmp(s, w, n) == 0 && (s[n] == '\0' || s[n] == ' ');
}

static bool
filler(const char *s, size_t *len)
{
	for (size_t i = 0; i < sizeof fillers / sizeof fillers[0]; i++)
		if (word_at(s, fillers[i])) {
			*len = strlen(fillers[i]);
			return true;
		}
	return false;
}

/* Appends n bytes of word to w->name with one space between words. */
static void
name_add(struct a11y_words *w, const char *word, size_t n)
{
	size_t o = strlen(w->name);

	if (o + n + 2 >= sizeof w->name)
		return;
	if (o > 0)
		w->name[o++] = ' ';
	memcpy(w->name + o, word, n);
	w->name[o + n] = '\0';
}

/* The unquoted form: role words anywhere, fillers dropped, the rest is
 * the name. A role word that is the only word is a role ("button"). */
static void
parse_words(const char *s, struct a11y_words *w)
{
	while (*s != '\0') {
		size_t n = 0, i;

		while (*s == ' ')
			s++;
		if (*s == '\0')
			break;
		for (i = 0; i < sizeof role_words / sizeof role_words[0]; i++)
			if (w->role_word[0] == '\0' && word_at(s, role_words[i].word))
				break;
		if (i < sizeof role_words / sizeof role_words[0]) {
			snprintf(w->role_word, sizeof w->role_word, "%s", role_words[i].word);
			w->roles = role_words[i].roles;
			s += strlen(role_words[i].word);
			continue;
		}
		if (filler(s, &n) && w->name[0] == '\0') {
			s += n;
			continue;
		}
		while (s[n] != '\0' && s[n] != ' ')
			n++;
		name_add(w, s, n);
		s += n;
	}
}

int
a11y_words_parse(const char *text, struct a11y_words *w)
{
	char norm[A11Y_NAME_MAX * 2];
	const char *q1 = strchr(text, '"'), *q2 = q1 != NULL ? strchr(q1 + 1, '"') : NULL;

	memset(w, 0, sizeof *w);
	if (q1 != NULL && q2 != NULL && q2 > q1 + 1) {
		/* the quoted part is the name; the words around it may name a role */
		char rest[A11Y_NAME_MAX * 2], name[A11Y_NAME_MAX * 2];
		size_t a = (size_t)(q1 - text), b = (size_t)(q2 - q1 - 1);

		snprintf(name, sizeof name, "%.*s", (int)(b < sizeof name - 1 ? b : sizeof name - 1), q1 + 1);
		a11y_norm(name, w->name, sizeof w->name);
		snprintf(rest, sizeof rest, "%.*s %s", (int)(a < sizeof rest / 2 ? a : sizeof rest / 2), text, q2 + 1);
		a11y_norm(rest, norm, sizeof norm);
		for (size_t i = 0; i < sizeof role_words / sizeof role_words[0] && w->roles == NULL; i++)
			if (strstr(norm, role_words[i].word) != NULL) {
				snprintf(w->role_word, sizeof w->role_word, "%s", role_words[i].word);
				w->roles = role_words[i].roles;
			}
		w->quoted = true;
	} else {
		a11y_norm(text, norm, sizeof norm);
		parse_words(norm, w);
		snprintf(norm, sizeof norm, "%s", w->name);     /* "name:" before a role word */
		a11y_norm(norm, w->name, sizeof w->name);
	}
	return w->name[0] != '\0' || w->roles != NULL ? 0 : -1;
}

static const char *
el_str(json_object *el, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(el, k, &v) && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : "";
}

bool
a11y_role_ok(const struct a11y_words *w, const char *role)
{
	if (w->roles == NULL)
		return true;
	for (size_t i = 0; i < 7 && w->roles[i] != NULL; i++)
		if (strcmp(w->roles[i], role) == 0)
			return true;
	return false;
}

bool
a11y_el_matches(const struct a11y_words *w, json_object *el, bool contains)
{
	char name[A11Y_NAME_MAX * 2], label[A11Y_NAME_MAX * 2];

	if (!a11y_role_ok(w, el_str(el, "role")))
		return false;
	if (w->name[0] == '\0')
		return true;
	a11y_norm(el_str(el, "name"), name, sizeof name);
	a11y_norm(el_str(el, "label"), label, sizeof label);
	if (contains)
		return (name[0] != '\0' && strstr(name, w->name) != NULL) ||
		    (label[0] != '\0' && strstr(label, w->name) != NULL);
	return strcmp(name, w->name) == 0 || (name[0] == '\0' && strcmp(label, w->name) == 0);
}

static bool
actionable(json_object *el)
{
	json_object *a;

	return json_object_object_get_ex(el, "actions", &a) && json_object_is_type(a, json_type_array) &&
	    json_object_array_length(a) > 0;
}

/* b lies within a (bounds). */
static bool
inside(json_object *a, json_object *b)
{
	json_object *ba, *bb;
	int ax, ay, aw, ah, bx, by, bw, bh;

	if (!json_object_object_get_ex(a, "bounds", &ba) || !json_object_object_get_ex(b, "bounds", &bb))
		return false;
	ax = json_object_get_int(json_object_object_get(ba, "x"));
	ay = json_object_get_int(json_object_object_get(ba, "y"));
	aw = json_object_get_int(json_object_object_get(ba, "width"));
	ah = json_object_get_int(json_object_object_get(ba, "height"));
	bx = json_object_get_int(json_object_object_get(bb, "x"));
	by = json_object_get_int(json_object_object_get(bb, "y"));
	bw = json_object_get_int(json_object_object_get(bb, "width"));
	bh = json_object_get_int(json_object_object_get(bb, "height"));
	return bx >= ax && by >= ay && bx + bw <= ax + aw && by + bh <= ay + ah;
}

int
a11y_pick(const struct a11y_words *w, json_object *elements, int *count)
{
	size_t n = json_object_array_length(elements), i, k;
	int cand[64], nc = 0, act = 0, keep = 0;

	for (i = 0; i < n && nc < (int)(sizeof cand / sizeof cand[0]); i++)
		if (a11y_el_matches(w, json_object_array_get_idx(elements, i), false))
			cand[nc++] = (int)i;
	for (i = 0; i < (size_t)nc; i++)
		act += actionable(json_object_array_get_idx(elements, cand[i]));
	/* Elements that take actions win over inert ones (a button's own label). */
	for (i = 0; i < (size_t)nc; i++)
		if (act == 0 || actionable(json_object_array_get_idx(elements, cand[i])))
			cand[keep++] = cand[i];
	nc = keep;
	/* One element nested in another with the same name is the outer one. */
	for (i = 0, keep = 0; i < (size_t)nc; i++) {
		bool nested = false;

		for (k = 0; k < (size_t)nc && !nested; k++)
			nested = k != i && inside(json_object_array_get_idx(elements, cand[k]),
			    json_object_array_get_idx(elements, cand[i])) &&
			    !inside(json_object_array_get_idx(elements, cand[i]),
			    json_object_array_get_idx(elements, cand[k]));
		if (!nested)
			cand[keep++] = cand[i];
	}
	*count = keep;
	if (keep == 1)
		return cand[0];
	return keep == 0 ? -1 : -2;
}

bool
a11y_condition(const char *criteria, struct a11y_words *w, bool *gone)
{
	const char *p = criteria;

	while (isspace((unsigned char)*p))
		p++;
	if (strncasecmp(p, "element-gone:", 13) == 0) {
		*gone = true;
		p += 13;
	} else if (strncasecmp(p, "element:", 8) == 0) {
		*gone = false;
		p += 8;
	} else
		return false;
	return a11y_words_parse(p, w) == 0;
}
