/*
 * a11y_verify.c - grounding a target in words through a task display's
 * accessibility tree, and checking a click through it (the rules are in
 * a11y_verify.h).
 *
 * Owns nothing between calls: each call asks the display's detm-a11y
 * helper (a11y.c) and returns. States: none.
 *
 * Does not: move the pointer or press (gui.c, desktop.c), match words
 * (a11y_match.c), or talk AT-SPI (the helper does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a11y.h"
#include "a11y_match.h"
#include "a11y_reply.h"
#include "a11y_verify.h"
#include "core/jx.h"
#include "core/util.h"
#include "lim.h"
#include "xwin.h"

#define EFFECT_STEP_MS 50

static double
ms_since(int64_t t0)
{
	return (double)(mono_us() - t0) / 1000.0;
}

static int
bint(json_object *el, const char *k)
{
	return json_object_get_int(json_object_object_get(json_object_object_get(el, "bounds"), k));
}

static const char *
estr(json_object *el, const char *k)
{
	const char *s = json_object_get_string(json_object_object_get(el, k));

	return s != NULL ? s : "";
}

int
tree_ground(int number, const char *words, struct tree_pick *p)
{
	struct a11y_query q = { .max = LIM_A11Y_ELEMENTS };
	struct a11y_words w;
	json_object *all = NULL, *arr;
	struct derr e = { 0 };
	int64_t t0 = mono_us();
	int idx, count = 0;

	memset(p, 0, sizeof *p);
	if (number < 0 || !a11y_active(number)) {
		snprintf(p->why, sizeof p->why, "%s", number < 0 ? "no task display (the shared desktop "
		    "has no accessibility bus of detm's)" : "no accessible application on the display");
		return 0;
	}
	if (a11y_words_parse(words, &w) != 0) {
		snprintf(p->why, sizeof p->why, "the words name no element");
		return 0;
	}
	if (a11y_elements(number, &q, &all, &e) != 0) {
		snprintf(p->why, sizeof p->why, "the tree could not be read: %.240s", e.message);
		p->ms = ms_since(t0);
		return 0;
	}
	arr = json_object_object_get(all, "elements");
	idx = a11y_pick(&w, arr, &count);
	p->ms = ms_since(t0);
	if (idx < 0) {
		if (idx == -1) {
			char what[A11Y_NAME_MAX + 40];

			snprintf(what, sizeof what, "%s named \"%.100s\"", w.role_word[0] ? w.role_word : "element",
			    w.name);
			a11y_reply_hint(all, what, p->why, sizeof p->why);
		} else
			snprintf(p->why, sizeof p->why, "%d elements match %s \"%.100s\"; not one to be sure of",
			    count, w.role_word[0] ? w.role_word : "the name", w.name);
		json_object_put(all);
		return 0;
	}
	p->element = json_object_get(json_object_array_get_idx(arr, (size_t)idx));
	p->x = bint(p->element, "x") + bint(p->element, "width") / 2;
	p->y = bint(p->element, "y") + bint(p->element, "height") / 2;
	json_object_put(all);
	return 1;
}

/* "role|name|x,y,wxh": one element's identity. */
static void
key_of(json_object *el, char *out, size_t len)
{
	snprintf(out, len, "%s|%.150s|%d,%d,%dx%d", estr(el, "role"), estr(el, "name"), bint(el, "x"),
	    bint(el, "y"), bint(el, "width"), bint(el, "height"));
}

/* The keys of the focused elements (a new array), or NULL. */
static json_object *
focus_keys(int number)
{
	struct a11y_query q = { .max = 8 };
	json_object *st = json_object_new_array(), *all = NULL, *arr, *keys;
	struct derr e = { 0 };
	char k[256];

	json_object_array_add(st, json_object_new_string("focused"));
	q.states = st;
	if (a11y_elements(number, &q, &all, &e) != 0) {
		json_object_put(st);
		return NULL;
	}
	json_object_put(st);
	arr = json_object_object_get(all, "elements");
	keys = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		key_of(json_object_array_get_idx(arr, i), k, sizeof k);
		json_object_array_add(keys, json_object_new_string(k));
	}
	json_object_put(all);
	return keys;
}

void
verify_before(int number, int x, int y, struct click_check *k)
{
	struct derr e = { 0 };
	int64_t t0 = mono_us();

	memset(k, 0, sizeof *k);
	k->number = -1;
	k->x = x;
	k->y = y;
	if (number < 0 || !a11y_active(number))
		return;
	if (a11y_at_point(number, x, y, &k->before, &e) != 0)
		return;
	k->number = number;
	k->focus = focus_keys(number);
	k->ms = ms_since(t0);
}

/* The element as it is now: 1 found (*states: its states, new ref), 0 gone,
 * -1 cannot tell. */
static int
element_now(int number, json_object *el, json_object **states)
{
	struct a11y_query q = { .max = 50 };
	json_object *all = NULL, *arr;
	struct derr e = { 0 };
	char want[256], k[256];
	int rc = 0;

	*states = NULL;
	q.role = estr(el, "role");
	q.name = estr(el, "name")[0] != '\0' ? estr(el, "name") : NULL;
	if (a11y_elements(number, &q, &all, &e) != 0)
		return -1;
	key_of(el, want, sizeof want);
	arr = json_object_object_get(all, "elements");
	for (size_t i = 0; i < json_object_array_length(arr) && rc == 0; i++) {
		key_of(json_object_array_get_idx(arr, i), k, sizeof k);
		if (strcmp(k, want) == 0) {
			*states = json_object_get(json_object_object_get(json_object_array_get_idx(arr, i), "states"));
			rc = 1;
		}
	}
	json_object_put(all);
	return rc;
}

static bool
same_json(json_object *a, json_object *b)
{
	return strcmp(json_object_to_json_string(a), json_object_to_json_string(b)) == 0;
}

/* Watches for an effect of the click for up to ms: "gone",
 * "states changed", "focus moved" or "none". */
static const char *
effect_of(struct click_check *k, json_object *el, int ms)
{
	int64_t end = mono_us() + ms * 1000LL;

	do {
		json_object *st = NULL, *fk;
		int r = el != NULL ? element_now(k->number, el, &st) : -1;
		bool changed = r == 1 && !same_json(st, json_object_object_get(el, "states"));

		json_object_put(st);
		if (r == 0)
			return "gone";
		if (changed)
			return "states changed";
		fk = focus_keys(k->number);
		changed = fk != NULL && k->focus != NULL && !same_json(fk, k->focus);
		json_object_put(fk);
		if (changed)
			return "focus moved";
		sleep_ms(EFFECT_STEP_MS);
	} while (mono_us() < end);
	return "none";
}

/* at lies within (or is) want. */
static bool
hit_of(json_object *at, json_object *want)
{
	int ax = bint(at, "x"), ay = bint(at, "y"), wx = bint(want, "x"), wy = bint(want, "y");

	if (strcmp(estr(at, "role"), estr(want, "role")) == 0 && strcmp(estr(at, "name"), estr(want, "name")) == 0 &&
	    ax == wx && ay == wy)
		return true;
	return ax >= wx && ay >= wy && ax + bint(at, "width") <= wx + bint(want, "width") &&
	    ay + bint(at, "height") <= wy + bint(want, "height");
}

static json_object *
brief(json_object *el)
{
	json_object *o = json_object_new_object();

	jx_add_str(o, "role", estr(el, "role"));
	jx_add_str(o, "name", estr(el, "name"));
	json_object_object_add(o, "bounds", json_object_get(json_object_object_get(el, "bounds")));
	if (json_object_object_get(el, "window") != NULL)
		jx_add_str(o, "window", estr(el, "window"));
	return o;
}

void
verify_xtop(struct click_check *k, Display *d)
{
	struct xwin *v = NULL;
	struct derr e = { 0 };
	size_t n = 0;

	k->xtop_known = false;
	if (k->number < 0 || xwin_list(d, &v, &n, &e) != 0)
		return;
	for (size_t i = n; i-- > 0;)            /* topmost first */
		if (v[i].visible && k->x >= v[i].x && k->y >= v[i].y && k->x < v[i].x + v[i].width &&
		    k->y < v[i].y + v[i].height) {
			snprintf(k->xtop, sizeof k->xtop, "%s", v[i].title);
			k->xtop_id = v[i].id;
			k->xtop_known = v[i].title[0] != '\0' || v[i].id != 0;
			break;
		}
	free(v);
}

bool
verify_covered(const struct click_check *k, json_object *el)
{
	const char *win = el != NULL ? estr(el, "window") : "";
	json_object *xid = el != NULL ? json_object_object_get(el, "xid") : NULL;

	if (!k->xtop_known)
		return false;
	if (xid != NULL && k->xtop_id != 0)
		return (unsigned long)json_object_get_int64(xid) != k->xtop_id;
	return k->xtop[0] != '\0' && win[0] != '\0' && strcmp(win, k->xtop) != 0;
}

/* The verdict (1, 0, -1 unknown) and its reason. */
static int
judge(json_object *at, json_object *expected, const char *words, const char *effect,
    char *why, size_t len)
{
	struct a11y_words w;
	json_object *acts = json_object_object_get(at, "actions");
	bool actionable = acts != NULL && json_object_array_length(acts) > 0;

	if (expected != NULL) {
		bool hit = hit_of(at, expected);

		snprintf(why, len, hit ? "the element under the point is the %s \"%.80s\" meant" :
		    "the element under the point is %s \"%.80s\", not the %s \"%.80s\" meant",
		    hit ? estr(expected, "role") : estr(at, "role"), hit ? estr(expected, "name") : estr(at, "name"),
		    estr(expected, "role"), estr(expected, "name"));
		return hit;
	}
	if (words != NULL && a11y_words_parse(words, &w) == 0 && w.name[0] != '\0' &&
	    a11y_el_matches(&w, at, true)) {
		snprintf(why, len, "the element under the point, %s \"%.80s\", matches \"%.80s\"",
		    estr(at, "role"), estr(at, "name"), words);
		return 1;
	}
	snprintf(why, len, "the element under the point is %s %s \"%.80s\"%s; effect: %s",
	    actionable ? "the clickable" : "an inert", estr(at, "role"), estr(at, "name"),
	    words != NULL ? " (the words do not name it)" : "", effect);
	return actionable || strcmp(effect, "none") != 0;
}

/* Puts the verdict into r ("verified": true, false or null, and the
 * "verification" object: result, reason, the element at the point and the
 * one expected, the effect, what was checked (taken), how long it took),
 * and lets go of k's probes. */
static void
verdict_put(struct click_check *k, json_object *r, int verdict, const char *why, json_object *at,
    json_object *expected, const char *effect, json_object *checked, int64_t t0)
{
	json_object *v = json_object_new_object();

	json_object_object_add(r, "verified", verdict < 0 ? NULL : json_object_new_boolean(verdict));
	jx_add_str(v, "result", verdict < 0 ? "unknown" : verdict ? "hit" : "miss");
	jx_add_str(v, "reason", why);
	json_object_object_add(v, "at_point", at != NULL ? brief(at) : NULL);
	json_object_object_add(v, "expected", expected != NULL ? brief(expected) : NULL);
	jx_add_str(v, "effect", effect);
	json_object_object_add(v, "checked", checked);
	json_object_object_add(v, "ms", json_object_new_double((double)(int64_t)((k->ms + ms_since(t0)) * 10) / 10));
	json_object_object_add(r, "verification", v);
	json_object_put(k->before);
	json_object_put(k->focus);
	k->before = k->focus = NULL;
}

void
verify_after(struct click_check *k, json_object *expected, const char *words, json_object *r)
{
	json_object *checked = json_object_new_array(), *at;
	const char *effect = "not checked";
	int64_t t0 = mono_us();
	char why[400], line[300];
	int verdict = -1;

	at = k->before != NULL ? json_object_object_get(k->before, "element") : NULL;
	if (k->number < 0)
		snprintf(why, sizeof why, "no accessibility tree on this display (no accessible application "
		    "runs there, or it is the shared desktop)");
	else if (at == NULL)
		snprintf(why, sizeof why, "no accessible window under (%d, %d): the tree does not know what "
		    "is there", k->x, k->y);
	else {
		effect = effect_of(k, at, VERIFY_EFFECT_MS);
		verdict = judge(at, expected, words, effect, why, sizeof why);
		if (verify_covered(k, at)) {
			verdict = 0;
			snprintf(why, sizeof why, "the window \"%.100s\" covers %s \"%.80s\" of \"%.80s\" at the "
			    "point: the click went to it", k->xtop, estr(at, "role"), estr(at, "name"),
			    estr(at, "window"));
		}
		snprintf(line, sizeof line, "before the press: %s \"%.100s\" under (%d, %d) (GetAccessibleAtPoint)",
		    estr(at, "role"), estr(at, "name"), k->x, k->y);
		json_object_array_add(checked, json_object_new_string(line));
		snprintf(line, sizeof line, "after it, within %d ms: %s", VERIFY_EFFECT_MS,
		    strcmp(effect, "gone") == 0 ? "the element went away (its window closed or changed)" :
		    strcmp(effect, "states changed") == 0 ? "its states changed" :
		    strcmp(effect, "focus moved") == 0 ? "the focus moved" : "no state or focus change seen");
		json_object_array_add(checked, json_object_new_string(line));
	}
	verdict_put(k, r, verdict, why, at, expected, effect, checked, t0);
}

void
verify_after_action(struct click_check *k, json_object *el, const char *action, json_object *r)
{
	json_object *checked = json_object_new_array();
	const char *effect;
	char why[400], line[300];
	int64_t t0 = mono_us();
	int verdict;

	effect = k->number >= 0 ? effect_of(k, el, VERIFY_ACTION_MS) : "not checked";
	verdict = strcmp(effect, "none") == 0 || k->number < 0 ? -1 : 1;
	snprintf(why, sizeof why, "the window \"%.100s\" covers it, so its own \"%s\" action ran; effect: %s",
	    k->xtop, action, effect);
	snprintf(line, sizeof line, "the X window on top at (%d, %d) is \"%.100s\", not \"%.100s\"", k->x, k->y,
	    k->xtop, estr(el, "window"));
	json_object_array_add(checked, json_object_new_string(line));
	snprintf(line, sizeof line, "after the action, within %d ms: %s", VERIFY_ACTION_MS, effect);
	json_object_array_add(checked, json_object_new_string(line));
	verdict_put(k, r, verdict, why, NULL, el, effect, checked, t0);
}
