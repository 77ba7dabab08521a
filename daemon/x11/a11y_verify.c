/*
 * a11y_verify.c - grounding a target in words through a task display's
 * accessibility tree, and whether a window without a tree covers the
 * element grounded (the rules are in a11y_verify.h).
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
