/*
 * dialect_openai.c - OpenAI's `computer` tool (Responses API, GA) on a
 * detm display: a computer_call's batched `actions` (or the older single
 * `action`), one table row per action type, then one screenshot for the
 * computer_call_output.
 *
 * Takes: a computer_call item, an array of items, or a response (its
 * "output"); items that are not computer_call are skipped. Answers: the
 * computer_call_output item (for one item), or an array of them in order:
 *   {type:"computer_call_output", call_id,
 *    output:{type:"computer_screenshot", image_url:"data:image/png;base64,..."},
 *    acknowledged_safety_checks (only when the caller gave them),
 *    status:"incomplete" (only when an action failed or was not run)}
 * The output has no room for text: detm's verdicts and errors go in
 * dialect_out (the HTTP headers, ?detm=1, the task's log).
 *
 * Safety checks: a computer_call with pending_safety_checks runs only if
 * the caller, having shown them to the user, adds
 * acknowledged_safety_checks (the same ids) to the item; else nothing of
 * the request runs (DERR_CONFLICT). What was acknowledged is echoed.
 *
 * Mapping: click buttons left/right/wheel/back/forward to detm's click,
 * right_click, middle_click and buttons 8/9; `keys` on a pointer action are
 * held during it; drag along a path of two points is one drag, a longer
 * path mouse_down, a mouse_move per point and mouse_up; scroll_x/scroll_y
 * are pixels, DL_SCROLL_PX to a wheel click; wait is 2 s (the tool gives
 * no duration); screenshot sends nothing (the output is one).
 *
 * Does not: run input itself (dl_act), or talk HTTP.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "dialect_int.h"

#define OA_WAIT_MS 2000

typedef int (*oa_fn)(struct dl *d, json_object *a, struct derr *e);

/* ---- arguments ---- */

static int
arg_xy(json_object *a, int *x, int *y, struct derr *e)
{
	double fx, fy;

	if (dl_num(a, "x", true, -100000, 100000, &fx, NULL, e) != 0 ||
	    dl_num(a, "y", true, -100000, 100000, &fy, NULL, e) != 0)
		return -1;
	*x = (int)lround(fx);
	*y = (int)lround(fy);
	return 0;
}

/* A list of key names (keypress "keys", a pointer action's held "keys")
 * as one detm chord. *chord "" when absent or empty and !required. */
static int
arg_keys(json_object *a, bool required, char *chord, size_t cap, struct derr *e)
{
	json_object *v = NULL;
	const char *names[16];
	size_t n;

	chord[0] = '\0';
	if (!json_object_object_get_ex(a, "keys", &v) || v == NULL ||
	    (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0 && !required)) {
		if (required)
			return derr_set(e, DERR_INVALID, "keys", "keys (an array of key names) is required");
		return 0;
	}
	if (!json_object_is_type(v, json_type_array))
		return derr_set(e, DERR_INVALID, "keys", "keys must be an array of key names");
	n = json_object_array_length(v);
	if (n > ARRAY_LEN(names))
		return derr_set(e, DERR_INVALID, "keys", "at most %zu keys at once", ARRAY_LEN(names));
	for (size_t i = 0; i < n; i++) {
		json_object *k = json_object_array_get_idx(v, i);

		if (!json_object_is_type(k, json_type_string))
			return derr_set(e, DERR_INVALID, "keys", "keys must be an array of key names");
		names[i] = json_object_get_string(k);
	}
	return dl_chord(names, n, "keys", chord, cap, e);
}

static int
with_held(json_object *a, json_object *p, struct derr *e)
{
	char chord[256];

	if (arg_keys(a, false, chord, sizeof chord, e) != 0) {
		json_object_put(p);
		return -1;
	}
	if (chord[0] != '\0')
		json_object_object_add(p, "hold", json_object_new_string(chord));
	return 0;
}

static int
run(struct dl *d, const char *action, json_object *p, bool image_coords, struct derr *e)
{
	struct dl_res r;

	if (dl_act(d, action, p, image_coords, &r, e) != 0)
		return -1;
	dl_res_free(&r);
	return 0;
}

/* ---- actions ---- */

static int
a_click(struct dl *d, json_object *a, struct derr *e)
{
	static const struct {
		const char *button, *action;
		int number;
	} buttons[] = {
		{ "left", "click", 0 }, { "right", "right_click", 0 }, { "wheel", "middle_click", 0 },
		{ "middle", "middle_click", 0 }, { "back", "click", 8 }, { "forward", "click", 9 },
	};
	const char *button = NULL;
	json_object *p;
	size_t i;
	int x, y;

	if (jx_str(a, "button", false, 1, 16, &button, e) != 0 || arg_xy(a, &x, &y, e) != 0)
		return -1;
	if (button == NULL)
		button = "left";
	for (i = 0; i < ARRAY_LEN(buttons) && strcmp(buttons[i].button, button) != 0; i++)
		;
	if (i == ARRAY_LEN(buttons))
		return derr_set(e, DERR_INVALID, "button",
		    "button must be left, right, wheel, back or forward (got '%.*s')",
		    utf8_prec(button, 16), button);
	p = dl_xy(x, y);
	if (buttons[i].number)
		json_object_object_add(p, "button", json_object_new_int(buttons[i].number));
	if (with_held(a, p, e) != 0)
		return -1;
	return run(d, buttons[i].action, p, true, e);
}

static int
a_double(struct dl *d, json_object *a, struct derr *e)
{
	json_object *p;
	int x, y;

	if (arg_xy(a, &x, &y, e) != 0)
		return -1;
	p = dl_xy(x, y);
	if (with_held(a, p, e) != 0)
		return -1;
	return run(d, "double_click", p, true, e);
}

static int
a_move(struct dl *d, json_object *a, struct derr *e)
{
	json_object *p;
	int x, y;

	if (arg_xy(a, &x, &y, e) != 0)
		return -1;
	p = dl_xy(x, y);
	if (with_held(a, p, e) != 0)
		return -1;
	return run(d, "mouse_move", p, true, e);
}

/* The path's points, checked before anything is sent. */
static int
path_points(json_object *a, int (*pt)[2], size_t max, size_t *n, struct derr *e)
{
	json_object *path = NULL;

	if (!json_object_object_get_ex(a, "path", &path) || !json_object_is_type(path, json_type_array))
		return derr_set(e, DERR_INVALID, "path", "path must be an array of {x, y}");
	*n = json_object_array_length(path);
	if (*n < 2 || *n > max)
		return derr_set(e, DERR_INVALID, "path", "path must have 2..%zu points (got %zu)", max, *n);
	for (size_t i = 0; i < *n; i++)
		if (arg_xy(json_object_array_get_idx(path, i), &pt[i][0], &pt[i][1], e) != 0)
			return derr_refield(e, "path");
	return 0;
}

static int
a_drag(struct dl *d, json_object *a, struct derr *e)
{
	int pt[64][2];
	char chord[256];
	json_object *p;
	size_t n = 0;

	if (path_points(a, pt, ARRAY_LEN(pt), &n, e) != 0 ||
	    arg_keys(a, false, chord, sizeof chord, e) != 0)
		return -1;
	if (n == 2) {
		p = dl_xy(pt[0][0], pt[0][1]);
		json_object_object_add(p, "x2", json_object_new_int(pt[1][0]));
		json_object_object_add(p, "y2", json_object_new_int(pt[1][1]));
		if (chord[0] != '\0')
			json_object_object_add(p, "hold", json_object_new_string(chord));
		return run(d, "drag", p, true, e);
	}
	if (chord[0] != '\0')
		return derr_set(e, DERR_INVALID, "keys", "detm holds keys during a drag of two points, "
		    "not along a path of %zu", n);
	if (run(d, "mouse_down", dl_xy(pt[0][0], pt[0][1]), true, e) != 0)
		goto release;
	for (size_t i = 1; i < n; i++)
		if (run(d, "mouse_move", dl_xy(pt[i][0], pt[i][1]), true, e) != 0)
			goto release;
	return run(d, "mouse_up", json_object_new_object(), true, e);
release:
	{
		struct derr e2;

		(void)run(d, "mouse_up", json_object_new_object(), true, &e2);
	}
	return -1;
}

static int
a_keypress(struct dl *d, json_object *a, struct derr *e)
{
	char chord[256];
	json_object *p;

	if (arg_keys(a, true, chord, sizeof chord, e) != 0)
		return -1;
	p = json_object_new_object();
	json_object_object_add(p, "keys", json_object_new_string(chord));
	return run(d, "press_key", p, false, e);
}

static int
scroll_axis(struct dl *d, json_object *a, int x, int y, double px, const char *neg, const char *pos,
    struct derr *e)
{
	json_object *p;
	long clicks = lround(fabs(px) / DL_SCROLL_PX);

	if (px == 0)
		return 0;
	p = dl_xy(x, y);
	json_object_object_add(p, "direction", json_object_new_string(px < 0 ? neg : pos));
	json_object_object_add(p, "amount", json_object_new_int(clicks < 1 ? 1 : clicks > 100 ? 100 :
	    (int)clicks));
	if (with_held(a, p, e) != 0)
		return -1;
	return run(d, "scroll", p, true, e);
}

static int
a_scroll(struct dl *d, json_object *a, struct derr *e)
{
	double sx = 0, sy = 0;
	json_object *p;
	int x, y;

	if (arg_xy(a, &x, &y, e) != 0 ||
	    dl_num(a, "scroll_x", false, -1e6, 1e6, &sx, NULL, e) != 0 ||
	    dl_num(a, "scroll_y", false, -1e6, 1e6, &sy, NULL, e) != 0)
		return -1;
	if (sx == 0 && sy == 0) {       /* nothing to scroll: the pointer goes there */
		p = dl_xy(x, y);
		if (with_held(a, p, e) != 0)
			return -1;
		return run(d, "mouse_move", p, true, e);
	}
	if (scroll_axis(d, a, x, y, sy, "up", "down", e) != 0)
		return -1;
	return scroll_axis(d, a, x, y, sx, "left", "right", e);
}

static int
a_type(struct dl *d, json_object *a, struct derr *e)
{
	const char *text = NULL;
	json_object *p;

	if (jx_str(a, "text", true, 0, 64 * 1024, &text, e) != 0)
		return -1;
	if (text[0] == '\0')
		return 0;
	p = json_object_new_object();
	json_object_object_add(p, "text", json_object_new_string(text));
	return run(d, "type", p, false, e);
}

static int
a_wait(struct dl *d, json_object *a, struct derr *e)
{
	struct dl_res r;

	(void)a;
	return dl_wait(d, OA_WAIT_MS, &r, e);
}

static int
a_screenshot(struct dl *d, json_object *a, struct derr *e)
{
	(void)d;
	(void)a;
	(void)e;
	return 0;       /* the output is the screenshot */
}

static const struct {
	const char *type;
	oa_fn fn;
} actions[] = {
	{ "click", a_click }, { "double_click", a_double }, { "drag", a_drag },
	{ "keypress", a_keypress }, { "move", a_move }, { "screenshot", a_screenshot },
	{ "scroll", a_scroll }, { "type", a_type }, { "wait", a_wait },
};

static int
run_action(struct dl *d, json_object *a, size_t i, struct derr *e)
{
	const char *type = NULL;
	size_t k;

	if (!json_object_is_type(a, json_type_object) || jx_str(a, "type", true, 1, 64, &type, e) != 0)
		return derr_set(e, DERR_INVALID, "actions", "action %zu has no type", i);
	for (k = 0; k < ARRAY_LEN(actions) && strcmp(actions[k].type, type) != 0; k++)
		;
	if (k == ARRAY_LEN(actions))
		return derr_set(e, DERR_INVALID, "type", "detm has no computer action '%.*s' (click, "
		    "double_click, drag, keypress, move, screenshot, scroll, type, wait)",
		    utf8_prec(type, 64), type);
	return actions[k].fn(d, a, e);
}

/* ---- items ---- */

/* The actions of a computer_call: "actions" (GA), else "action". */
static int
item_actions(json_object *item, size_t i, json_object **acts, struct derr *e)
{
	json_object *v;

	if (json_object_object_get_ex(item, "actions", &v) && json_object_is_type(v, json_type_array)) {
		if (json_object_array_length(v) > DL_ACTIONS_MAX)
			return derr_set(e, DERR_INVALID, "actions", "at most %d actions in a computer_call",
			    DL_ACTIONS_MAX);
		*acts = json_object_get(v);
		return 0;
	}
	if (json_object_object_get_ex(item, "action", &v) && json_object_is_type(v, json_type_object)) {
		*acts = json_object_new_array();
		json_object_array_add(*acts, json_object_get(v));
		return 0;
	}
	return derr_set(e, DERR_INVALID, "actions", "computer_call %zu has neither actions nor action",
	    i);
}

/* Every pending safety check of item is in its acknowledged_safety_checks. */
static int
item_safety(json_object *item, struct derr *e)
{
	json_object *pend = NULL, *ack = NULL;

	if (!json_object_object_get_ex(item, "pending_safety_checks", &pend) ||
	    !json_object_is_type(pend, json_type_array))
		return 0;
	json_object_object_get_ex(item, "acknowledged_safety_checks", &ack);
	for (size_t i = 0; i < json_object_array_length(pend); i++) {
		json_object *pc = json_object_array_get_idx(pend, i);
		const char *id = json_object_get_string(json_object_object_get(pc, "id"));
		const char *msg = json_object_get_string(json_object_object_get(pc, "message"));
		bool found = false;

		for (size_t j = 0; id != NULL && json_object_is_type(ack, json_type_array) &&
		    j < json_object_array_length(ack); j++) {
			const char *aid = json_object_get_string(json_object_object_get(
			    json_object_array_get_idx(ack, j), "id"));

			found = found || (aid != NULL && strcmp(aid, id) == 0);
		}
		if (!found)
			return derr_set(e, DERR_CONFLICT, "pending_safety_checks", "computer_call has the "
			    "pending safety check %.*s (%.*s): show it to the user, and send the item again "
			    "with acknowledged_safety_checks if they agree", utf8_prec(id, 64), id ? id : "?",
			    utf8_prec(msg, 200), msg ? msg : "no message");
	}
	return 0;
}

static int
check_item(json_object *item, size_t i, struct derr *e)
{
	json_object *v, *acts = NULL;

	if (!json_object_object_get_ex(item, "call_id", &v) || !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0)
		return derr_set(e, DERR_INVALID, "call_id", "computer_call %zu has no call_id", i);
	if (item_actions(item, i, &acts, e) != 0)
		return -1;
	json_object_put(acts);
	return item_safety(item, e);
}

static json_object *
output_item(json_object *item, const struct dl_img *img, bool complete)
{
	json_object *o = json_object_new_object(), *shot = json_object_new_object(), *ack;
	char *url = dl_data_url(img);

	json_object_object_add(o, "type", json_object_new_string("computer_call_output"));
	json_object_object_add(o, "call_id", json_object_get(json_object_object_get(item, "call_id")));
	json_object_object_add(shot, "type", json_object_new_string("computer_screenshot"));
	json_object_object_add(shot, "image_url", json_object_new_string(url));
	json_object_object_add(o, "output", shot);
	if (json_object_object_get_ex(item, "acknowledged_safety_checks", &ack) &&
	    json_object_is_type(ack, json_type_array))
		json_object_object_add(o, "acknowledged_safety_checks", json_object_get(ack));
	if (!complete)
		json_object_object_add(o, "status", json_object_new_string("incomplete"));
	free(url);
	return o;
}

/* Runs one computer_call's actions (unless an earlier one failed) and
 * answers it with the screen after them. */
static int
run_item(struct dl *d, json_object *item, size_t i, json_object **answer, struct dialect_out *out,
    struct derr *e)
{
	json_object *acts = NULL;
	struct dl_img img;
	struct derr ae = { 0 };
	bool ok = !d->failed;

	out->calls++;
	if (item_actions(item, i, &acts, e) != 0)
		return -1;
	for (size_t k = 0; ok && k < json_object_array_length(acts); k++)
		if (run_action(d, json_object_array_get_idx(acts, k), k, &ae) != 0) {
			ok = false;
			dl_fail(d, json_object_get_string(json_object_object_get(
			    json_object_array_get_idx(acts, k), "type")), &ae);
		}
	json_object_put(acts);
	if (!ok)
		out->failed++;
	if (dl_shot(d, &img, e) != 0)
		return -1;
	*answer = output_item(item, &img, ok);
	dl_img_free(&img);
	return 0;
}

/* The computer_call items of body and whether the answer is one item. */
static int
items_of(json_object *body, json_object **items, bool *single, struct derr *e)
{
	json_object *v;

	*single = false;
	if (json_object_is_type(body, json_type_array)) {
		*items = json_object_get(body);
		return 0;
	}
	if (json_object_is_type(body, json_type_object) &&
	    json_object_object_get_ex(body, "output", &v) && json_object_is_type(v, json_type_array) &&
	    !json_object_object_get_ex(body, "call_id", NULL)) {
		*items = json_object_get(v);
		return 0;
	}
	if (json_object_is_type(body, json_type_object)) {
		*items = json_object_new_array();
		json_object_array_add(*items, json_object_get(body));
		*single = true;
		return 0;
	}
	return derr_set(e, DERR_INVALID, NULL, "give a computer_call item, an array of items, or the "
	    "response");
}

static bool
is_call(json_object *item)
{
	json_object *v;

	return json_object_is_type(item, json_type_object) && json_object_object_get_ex(item, "type", &v) &&
	    strcmp(json_object_get_string(v), "computer_call") == 0;
}

int
dl_openai_run(struct dl *d, json_object *body, struct dialect_out *out, struct derr *e)
{
	json_object *items = NULL, *answers = json_object_new_array();
	size_t n, i, count = 0;
	bool single;
	int rc = -1;

	if (items_of(body, &items, &single, e) != 0)
		goto out;
	n = json_object_array_length(items);
	/* Everything is checked (shapes, safety checks) before anything runs. */
	for (i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i);

		if (!is_call(it))
			continue;
		if (check_item(it, i, e) != 0)
			goto out;
		count++;
	}
	if (count == 0 || count > DL_CALLS_MAX) {
		derr_set(e, DERR_INVALID, NULL, count ? "at most %d computer_call items at once" :
		    "no computer_call item (type \"computer_call\") in the body", DL_CALLS_MAX);
		goto out;
	}
	for (i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i), *ans = NULL;

		if (!is_call(it))
			continue;
		if (run_item(d, it, i, &ans, out, e) != 0)
			goto out;
		json_object_array_add(answers, ans);
	}
	out->answer = single ? json_object_get(json_object_array_get_idx(answers, 0)) : json_object_get(answers);
	rc = 0;
out:
	json_object_put(items);
	json_object_put(answers);
	return rc;
}

int
dl_openai_look(struct dl *d, const struct dl_img *img, json_object *out)
{
	json_object *part = json_object_new_object(), *tool = json_object_new_object();
	char *url = dl_data_url(img);

	(void)d;
	/* A user message's image part, for the first request. */
	json_object_object_add(part, "type", json_object_new_string("input_image"));
	json_object_object_add(part, "image_url", json_object_new_string(url));
	json_object_object_add(part, "detail", json_object_new_string("original"));
	json_object_object_add(out, "content", part);
	json_object_object_add(tool, "type", json_object_new_string("computer"));
	json_object_object_add(out, "tool", tool);
	free(url);
	return 0;
}
