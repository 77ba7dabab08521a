/*
 * dialect_anthropic.c - Anthropic's computer tools on a detm display: the
 * members of computer_toolset_20260801 (tool_use blocks named by the
 * member, toolset_name "computer") and the single `computer` tool of
 * computer_20251124 / computer_20250124 (name "computer", the member in
 * input.action). One table row per member: its detm actions and the
 * acknowledgment the SDK's own driver answers with.
 *
 * Takes: one tool_use block, an array of content blocks (blocks that are
 * not a computer tool_use are skipped: the harness answers its other
 * tools), or a message / Messages response (its "content"). Answers: an
 * array of tool_result blocks, one per computer tool_use, in order:
 *   {type:"tool_result", tool_use_id, toolset_name (members only),
 *    content:[text...] | [image, text], is_error (errors only)}
 * A pure action answers the SDK's acknowledgment ("Clicked.") and a line
 * of detm's: what happened and its verdict. screenshot and zoom answer a
 * PNG and a line stating its size and scale. An error answers is_error
 * with text only, and every later block "Not executed: an earlier computer
 * action in this turn failed." (the SDK's words).
 *
 * Screenshots after actions (dialect_opts.shots): AUTO adds one after the
 * request's last action for the single `computer` tool (its reference
 * loop shows the screen after an action) and none for toolset members
 * (the model calls screenshot, as with the SDK's driver).
 *
 * Does not: run input itself (dl_act), or talk HTTP.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "dialect_int.h"

#define NOT_EXECUTED "Not executed: an earlier computer action in this turn failed."
#define KEY_REPEAT_CHUNK 32     /* chords per press_key when a key repeats */

struct an_ctx {
	struct dl *d;
	json_object *in;        /* the block's input (borrowed) */
	json_object *content;   /* the tool_result's content being built */
	const char *member;
	bool looked;            /* the member was a look (its content has the screen) */
	bool inputs;            /* it sent input */
};

struct member;
typedef int (*an_fn)(struct an_ctx *c, const struct member *m, struct derr *e);

/* One row of the table: a member, its handler and its words. */
struct member {
	const char *name;
	an_fn fn;
	const char *ack;        /* the SDK driver's acknowledgment; NULL: none */
	const char *action;     /* the detm action of the click family */
	int count;              /* click count */
};

/* ---- content ---- */

static void
add_text(struct an_ctx *c, const char *text)
{
	json_object *t = json_object_new_object();

	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(text));
	json_object_array_add(c->content, t);
}

static void
add_image(json_object *content, const struct dl_img *img)
{
	json_object *b = json_object_new_object(), *s = json_object_new_object();

	json_object_object_add(s, "type", json_object_new_string("base64"));
	json_object_object_add(s, "media_type", json_object_new_string("image/png"));
	json_object_object_add(s, "data", json_object_new_string(img->b64));
	json_object_object_add(b, "type", json_object_new_string("image"));
	json_object_object_add(b, "source", s);
	json_object_array_add(content, b);
}

/* The image, and a line saying what it is and how its pixels map. */
static void
add_look(json_object *content, const struct dl_img *img, bool zoom)
{
	json_object *t = json_object_new_object();
	char line[300];

	add_image(content, img);
	if (zoom)
		snprintf(line, sizeof line, "Zoom: %dx%d px of the screen at (%d,%d), %.4g screen px "
		    "per image px. Coordinates stay in the last screenshot's pixels.", img->w, img->h,
		    img->x, img->y, img->scale);
	else
		snprintf(line, sizeof line, "Screenshot: %dx%d px of the %dx%d screen, %.4g screen px "
		    "per image px. Coordinates are in this image's pixels.", img->w, img->h,
		    img->screen_w, img->screen_h, img->scale);
	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(line));
	json_object_array_add(content, t);
}

/* The acknowledgment template filled from the input: {text},
 * {duration}, {scroll_direction} (one pass; a value stays data). */
static void
ack_fill(const char *tpl, json_object *in, char *out, size_t cap)
{
	size_t o = 0;

	out[0] = '\0';
	for (const char *p = tpl; *p != '\0' && o + 1 < cap;) {
		static const char *const keys[] = { "text", "duration", "scroll_direction" };
		char val[200] = "";
		size_t k;

		for (k = 0; k < ARRAY_LEN(keys); k++) {
			size_t n = strlen(keys[k]);

			if (p[0] == '{' && strncmp(p + 1, keys[k], n) == 0 && p[n + 1] == '}')
				break;
		}
		if (k == ARRAY_LEN(keys)) {
			out[o++] = *p++;
			out[o] = '\0';
			continue;
		}
		{
			json_object *v = json_object_object_get(in, keys[k]);

			if (json_object_is_type(v, json_type_string))
				dl_oneline(json_object_get_string(v), val, sizeof val);
			else if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
				snprintf(val, sizeof val, "%g", json_object_get_double(v));
		}
		o += (size_t)snprintf(out + o, cap - o, "%s", val);
		if (o >= cap)
			o = cap - 1;
		p += strlen(keys[k]) + 2;
	}
}

/* ---- arguments ---- */

/* An (x, y) array of two numbers under key. */
static int
arg_point(struct an_ctx *c, const char *key, bool required, int *x, int *y, bool *has,
    struct derr *e)
{
	json_object *v = NULL, *a, *b;

	*has = false;
	if (!json_object_object_get_ex(c->in, key, &v) || v == NULL) {
		if (required)
			return derr_set(e, DERR_INVALID, key, "%s ([x, y]) is required for %s", key,
			    c->member);
		return 0;
	}
	if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) != 2)
		return derr_set(e, DERR_INVALID, key, "%s must be [x, y]", key);
	a = json_object_array_get_idx(v, 0);
	b = json_object_array_get_idx(v, 1);
	if ((!json_object_is_type(a, json_type_int) && !json_object_is_type(a, json_type_double)) ||
	    (!json_object_is_type(b, json_type_int) && !json_object_is_type(b, json_type_double)) ||
	    fabs(json_object_get_double(a)) > 100000 || fabs(json_object_get_double(b)) > 100000)
		return derr_set(e, DERR_INVALID, key, "%s must be [x, y] in pixels", key);
	*x = (int)lround(json_object_get_double(a));
	*y = (int)lround(json_object_get_double(b));
	*has = true;
	return 0;
}

static int
arg_text(struct an_ctx *c, const char *key, bool required, const char **out, struct derr *e)
{
	return jx_str(c->in, key, required, 0, 64 * 1024, out, e);
}

/* Runs a detm action and adds the acknowledgment's line of detm's. */
static int
act(struct an_ctx *c, const char *action, json_object *p, bool image_coords, struct derr *e)
{
	struct dl_res r;
	char line[600];

	if (dl_act(c->d, action, p, image_coords, &r, e) != 0)
		return -1;
	c->inputs = c->inputs || r.verdict[0] != '\0';
	snprintf(line, sizeof line, "detm: %s", r.line);
	add_text(c, line);
	dl_res_free(&r);
	return 0;
}

/* "text" on a pointer member: modifier keys held during it. */
static void
held(struct an_ctx *c, json_object *p)
{
	const char *t = NULL;
	struct derr e2;

	if (jx_str(c->in, "text", false, 1, 256, &t, &e2) == 0 && t != NULL)
		json_object_object_add(p, "hold", json_object_new_string(t));
}

/* ---- members ---- */

/* left/right/middle/double/triple click, at coordinate or the pointer. */
static int
m_click(struct an_ctx *c, const struct member *m, struct derr *e)
{
	json_object *p;
	int x = 0, y = 0;
	bool at;

	if (arg_point(c, "coordinate", false, &x, &y, &at, e) != 0)
		return -1;
	p = dl_xy(at ? x : -100000, y);
	if (m->count == 3)
		json_object_object_add(p, "count", json_object_new_int(3));
	held(c, p);
	return act(c, m->action, p, true, e);
}

static int
m_move(struct an_ctx *c, const struct member *m, struct derr *e)
{
	json_object *p;
	int x, y;
	bool at;

	(void)m;
	if (arg_point(c, "coordinate", true, &x, &y, &at, e) != 0)
		return -1;
	p = dl_xy(x, y);
	held(c, p);
	return act(c, "mouse_move", p, true, e);
}

/* left_mouse_down / left_mouse_up: at the pointer (or coordinate, which
 * the older tool may send). */
static int
m_button(struct an_ctx *c, const struct member *m, struct derr *e)
{
	json_object *p;
	int x = 0, y = 0;
	bool at;

	if (arg_point(c, "coordinate", false, &x, &y, &at, e) != 0)
		return -1;
	p = dl_xy(at ? x : -100000, y);
	held(c, p);
	return act(c, m->action, p, true, e);
}

static int
m_drag(struct an_ctx *c, const struct member *m, struct derr *e)
{
	json_object *p;
	struct dl_res r;
	int x, y, x2, y2;
	bool from, to;

	(void)m;
	if (arg_point(c, "start_coordinate", false, &x, &y, &from, e) != 0 ||
	    arg_point(c, "coordinate", true, &x2, &y2, &to, e) != 0)
		return -1;
	if (!from) {    /* computer_20241022: from where the pointer is */
		if (dl_act(c->d, "get_mouse_position", json_object_new_object(), true, &r, e) != 0)
			return -1;
		x = json_object_get_int(json_object_object_get(r.data, "x"));
		y = json_object_get_int(json_object_object_get(r.data, "y"));
		dl_res_free(&r);
	}
	p = dl_xy(x, y);
	json_object_object_add(p, "x2", json_object_new_int(x2));
	json_object_object_add(p, "y2", json_object_new_int(y2));
	held(c, p);
	return act(c, "drag", p, true, e);
}

static int
m_scroll(struct an_ctx *c, const struct member *m, struct derr *e)
{
	const char *dir = NULL;
	json_object *p;
	double amount;
	int x = 0, y = 0;
	bool at;

	(void)m;
	if (jx_str(c->in, "scroll_direction", true, 1, 8, &dir, e) != 0 ||
	    dl_num(c->in, "scroll_amount", true, 0, 100, &amount, NULL, e) != 0 ||
	    arg_point(c, "coordinate", false, &x, &y, &at, e) != 0)
		return -1;
	if (lround(amount) < 1) {       /* nothing to scroll: the pointer goes there */
		if (!at) {
			add_text(c, "detm: scrolled by 0: nothing sent");
			return 0;
		}
		p = dl_xy(x, y);
		held(c, p);
		return act(c, "mouse_move", p, true, e);
	}
	p = dl_xy(at ? x : -100000, y);
	json_object_object_add(p, "direction", json_object_new_string(dir));
	json_object_object_add(p, "amount", json_object_new_int((int)lround(amount)));
	held(c, p);
	return act(c, "scroll", p, true, e);
}

static int
m_type(struct an_ctx *c, const struct member *m, struct derr *e)
{
	const char *text = NULL;
	json_object *p;

	(void)m;
	if (arg_text(c, "text", true, &text, e) != 0)
		return -1;
	if (text[0] == '\0') {
		add_text(c, "detm: nothing to type");
		return 0;
	}
	p = json_object_new_object();
	json_object_object_add(p, "text", json_object_new_string(text));
	return act(c, "type", p, false, e);
}

/* key: text, pressed repeat times (KEY_REPEAT_CHUNK chords a call). */
static int
m_key(struct an_ctx *c, const struct member *m, struct derr *e)
{
	const char *text = NULL;
	double rep = 1;
	int left;

	(void)m;
	if (jx_str(c->in, "text", true, 1, 256, &text, e) != 0 ||
	    dl_num(c->in, "repeat", false, 1, 100, &rep, NULL, e) != 0)
		return -1;
	for (left = (int)lround(rep); left > 0;) {
		int n = left > KEY_REPEAT_CHUNK ? KEY_REPEAT_CHUNK : left;
		size_t cap = (size_t)n * (strlen(text) + 1) + 1, o = 0;
		char *keys = xmalloc(cap);
		json_object *p = json_object_new_object();

		for (int i = 0; i < n; i++)
			o += (size_t)snprintf(keys + o, cap - o, "%s%s", i ? " " : "", text);
		json_object_object_add(p, "keys", json_object_new_string(keys));
		free(keys);
		if (act(c, "press_key", p, false, e) != 0)
			return -1;
		left -= n;
	}
	return 0;
}

static int
m_hold_key(struct an_ctx *c, const struct member *m, struct derr *e)
{
	const char *text = NULL;
	json_object *p;
	double s;

	(void)m;
	if (jx_str(c->in, "text", true, 1, 256, &text, e) != 0 ||
	    dl_num(c->in, "duration", true, 0, 60, &s, NULL, e) != 0)
		return -1;
	p = json_object_new_object();
	json_object_object_add(p, "keys", json_object_new_string(text));
	json_object_object_add(p, "hold_ms", json_object_new_int((int)lround(s * 1000)));
	return act(c, "press_key", p, false, e);
}

static int
m_wait(struct an_ctx *c, const struct member *m, struct derr *e)
{
	struct dl_res r;
	char line[600];
	double s;

	(void)m;
	if (dl_num(c->in, "duration", true, 0, DL_WAIT_MAX_S, &s, NULL, e) != 0 ||
	    dl_wait(c->d, lround(s * 1000), &r, e) != 0)
		return -1;
	snprintf(line, sizeof line, "detm: %s", r.line);
	add_text(c, line);
	return 0;
}

static int
m_cursor(struct an_ctx *c, const struct member *m, struct derr *e)
{
	struct dl_res r;
	char line[64];

	(void)m;
	if (dl_act(c->d, "get_mouse_position", json_object_new_object(), true, &r, e) != 0)
		return -1;
	snprintf(line, sizeof line, "X=%d,Y=%d", json_object_get_int(json_object_object_get(r.data, "x")),
	    json_object_get_int(json_object_object_get(r.data, "y")));
	add_text(c, line);
	dl_res_free(&r);
	return 0;
}

static int
m_screenshot(struct an_ctx *c, const struct member *m, struct derr *e)
{
	struct dl_img img;

	(void)m;
	if (dl_shot(c->d, &img, e) != 0)
		return -1;
	add_look(c->content, &img, false);
	dl_img_free(&img);
	c->looked = true;
	return 0;
}

static int
m_zoom(struct an_ctx *c, const struct member *m, struct derr *e)
{
	json_object *v = NULL;
	struct dl_img img;
	int r[4];

	(void)m;
	if (!json_object_object_get_ex(c->in, "region", &v) || !json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) != 4)
		return derr_set(e, DERR_INVALID, "region", "region must be [x0, y0, x1, y1]");
	for (size_t i = 0; i < 4; i++) {
		json_object *n = json_object_array_get_idx(v, i);

		if ((!json_object_is_type(n, json_type_int) && !json_object_is_type(n, json_type_double)) ||
		    fabs(json_object_get_double(n)) > 100000)
			return derr_set(e, DERR_INVALID, "region", "region must be [x0, y0, x1, y1] in pixels");
		r[i] = (int)lround(json_object_get_double(n));
	}
	if (dl_zoom(c->d, r[0], r[1], r[2], r[3], &img, e) != 0)
		return -1;
	add_look(c->content, &img, true);
	dl_img_free(&img);
	c->looked = true;
	return 0;
}

static const struct member members[] = {
	{ "key",             m_key,        "Pressed {text}.",              NULL, 0 },
	{ "hold_key",        m_hold_key,   "Held {text} for {duration}s.", NULL, 0 },
	{ "type",            m_type,       "Typed.",                       NULL, 0 },
	{ "cursor_position", m_cursor,     NULL,                           NULL, 0 },
	{ "mouse_move",      m_move,       "Moved the mouse.",             NULL, 0 },
	{ "left_mouse_down", m_button,     "Left mouse button pressed.",   "mouse_down", 0 },
	{ "left_mouse_up",   m_button,     "Left mouse button released.",  "mouse_up", 0 },
	{ "left_click",      m_click,      "Clicked.",                     "click", 1 },
	{ "left_click_drag", m_drag,       "Dragged.",                     NULL, 0 },
	{ "right_click",     m_click,      "Right-clicked.",               "right_click", 1 },
	{ "middle_click",    m_click,      "Middle-clicked.",              "middle_click", 1 },
	{ "double_click",    m_click,      "Double-clicked.",              "double_click", 2 },
	{ "triple_click",    m_click,      "Triple-clicked.",              "click", 3 },
	{ "scroll",          m_scroll,     "Scrolled {scroll_direction}.", NULL, 0 },
	{ "wait",            m_wait,       "Waited {duration}s.",          NULL, 0 },
	{ "screenshot",      m_screenshot, NULL,                           NULL, 0 },
	{ "zoom",            m_zoom,       NULL,                           NULL, 0 },
};

/* ---- one block ---- */

static json_object *
result_block(json_object *block, bool toolset, json_object *content, bool is_error)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "type", json_object_new_string("tool_result"));
	json_object_object_add(r, "tool_use_id", json_object_get(json_object_object_get(block, "id")));
	if (toolset)
		json_object_object_add(r, "toolset_name", json_object_new_string("computer"));
	json_object_object_add(r, "content", content);
	if (is_error)
		json_object_object_add(r, "is_error", json_object_new_boolean(1));
	return r;
}

static json_object *
error_content(const char *text)
{
	json_object *a = json_object_new_array(), *t = json_object_new_object();

	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(text));
	json_object_array_add(a, t);
	return a;
}

/* Runs one computer tool_use; its tool_result goes into results. */
static void
run_block(struct dl *d, json_object *block, bool toolset, json_object *results, bool *inputs,
    bool *looked)
{
	struct an_ctx c = { .d = d };
	struct derr e = { 0 };
	json_object *in = json_object_object_get(block, "input");
	const char *name = json_object_get_string(json_object_object_get(block, "name"));
	size_t i;
	int rc = -1;

	if (!toolset && jx_str(in, "action", true, 1, 64, &name, &e) != 0)
		name = NULL;
	c.in = in;
	c.member = name;
	c.content = json_object_new_array();
	if (name != NULL && in != NULL && !json_object_is_type(in, json_type_object))
		derr_set(&e, DERR_INVALID, "input", "input must be an object");
	else if (name != NULL) {
		for (i = 0; i < ARRAY_LEN(members) && strcmp(members[i].name, name) != 0; i++)
			;
		if (i == ARRAY_LEN(members)) {
			derr_set(&e, DERR_INVALID, "name", "detm has no computer action '%.*s' "
			    "(it runs the 17 members of computer_toolset_20260801)", utf8_prec(name, 64), name);
		} else {
			char ack[300];

			if (members[i].ack != NULL) {
				ack_fill(members[i].ack, in, ack, sizeof ack);
				add_text(&c, ack);
			}
			rc = members[i].fn(&c, &members[i], &e);
		}
	}
	if (rc != 0) {
		json_object_put(c.content);
		dl_fail(d, name, &e);
		json_object_array_add(results, result_block(block, toolset, error_content(e.message), true));
		return;
	}
	*inputs = c.inputs;
	*looked = c.looked;
	json_object_array_add(results, result_block(block, toolset, c.content, false));
}

/* ---- the request ---- */

/* The blocks of body: a tool_use, an array of blocks, or a message. */
static int
blocks_of(json_object *body, json_object **blocks, struct derr *e)
{
	json_object *v;

	if (json_object_is_type(body, json_type_array)) {
		*blocks = json_object_get(body);
		return 0;
	}
	if (json_object_is_type(body, json_type_object) &&
	    json_object_object_get_ex(body, "content", &v) && json_object_is_type(v, json_type_array)) {
		*blocks = json_object_get(v);
		return 0;
	}
	if (json_object_is_type(body, json_type_object)) {
		*blocks = json_object_new_array();
		json_object_array_add(*blocks, json_object_get(body));
		return 0;
	}
	return derr_set(e, DERR_INVALID, NULL, "give a tool_use block, an array of content blocks, "
	    "or the assistant message");
}

/* Whether block is a computer tool_use (of the toolset, or the single
 * tool); -1 (with e) for a tool_use without an id. */
static int
is_computer(json_object *block, size_t i, bool *toolset, struct derr *e)
{
	json_object *v;
	const char *tn;

	if (!json_object_is_type(block, json_type_object) ||
	    !json_object_object_get_ex(block, "type", &v) ||
	    strcmp(json_object_get_string(v), "tool_use") != 0)
		return 0;
	tn = json_object_get_string(json_object_object_get(block, "toolset_name"));
	*toolset = tn != NULL && strcmp(tn, "computer") == 0;
	if (!*toolset && (tn != NULL || !json_object_object_get_ex(block, "name", &v) ||
	    strcmp(json_object_get_string(v), "computer") != 0))
		return 0;
	if (!json_object_object_get_ex(block, "id", &v) || !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0)
		return derr_set(e, DERR_INVALID, "id", "tool_use block %zu has no id", i);
	if (*toolset && (!json_object_object_get_ex(block, "name", &v) ||
	    !json_object_is_type(v, json_type_string)))
		return derr_set(e, DERR_INVALID, "name", "tool_use block %zu has no name", i);
	return 1;
}

/* AUTO: a screenshot after the last action for the single tool only. */
static bool
shot_after(const struct dl *d, bool last, bool toolset)
{
	switch (d->o->shots) {
	case DIALECT_SHOTS_EACH:
		return true;
	case DIALECT_SHOTS_LAST:
		return last;
	case DIALECT_SHOTS_NONE:
		return false;
	default:
		return last && !toolset;
	}
}

int
dl_anthropic_run(struct dl *d, json_object *body, struct dialect_out *out, struct derr *e)
{
	json_object *blocks = NULL, *results = json_object_new_array();
	size_t n, i, last = 0, count = 0;
	int rc = -1;

	if (blocks_of(body, &blocks, e) != 0)
		goto out;
	n = json_object_array_length(blocks);
	for (i = 0; i < n; i++) {
		bool ts;
		int k = is_computer(json_object_array_get_idx(blocks, i), i, &ts, e);

		if (k < 0)
			goto out;
		if (k == 1) {
			last = i;
			count++;
		}
	}
	if (count == 0) {
		derr_set(e, DERR_INVALID, NULL, "no computer tool_use block (toolset_name \"computer\", "
		    "or name \"computer\") in the body");
		goto out;
	}
	if (count > DL_CALLS_MAX) {
		derr_set(e, DERR_INVALID, NULL, "at most %d computer tool_use blocks at once (got %zu)",
		    DL_CALLS_MAX, count);
		goto out;
	}
	for (i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(blocks, i), *res;
		bool ts = false, inputs = false, looked = false;
		struct dl_img img;
		struct derr e2;

		if (is_computer(b, i, &ts, e) != 1)
			continue;
		out->calls++;
		if (d->failed) {
			json_object_array_add(results, result_block(b, ts, error_content(NOT_EXECUTED), true));
			out->failed++;
			continue;
		}
		run_block(d, b, ts, results, &inputs, &looked);
		if (d->failed) {
			out->failed++;
			continue;
		}
		if (!inputs || looked || !shot_after(d, i == last, ts))
			continue;
		res = json_object_array_get_idx(results, json_object_array_length(results) - 1);
		if (dl_shot(d, &img, &e2) == 0) {
			add_look(json_object_object_get(res, "content"), &img, false);
			dl_img_free(&img);
		}
	}
	out->answer = results;
	results = NULL;
	rc = 0;
out:
	json_object_put(blocks);
	json_object_put(results);
	return rc;
}

int
dl_anthropic_look(struct dl *d, const struct dl_img *img, json_object *out)
{
	json_object *content = json_object_new_array(), *tool = json_object_new_object();

	(void)d;
	add_look(content, img, false);
	json_object_object_add(out, "content", content);
	/* The single tool's declaration that matches this picture; the toolset
	 * ({"type":"computer_toolset_20260801"}) takes no sizes. */
	json_object_object_add(tool, "type", json_object_new_string("computer_20251124"));
	json_object_object_add(tool, "name", json_object_new_string("computer"));
	json_object_object_add(tool, "display_width_px", json_object_new_int(img->w));
	json_object_object_add(tool, "display_height_px", json_object_new_int(img->h));
	json_object_object_add(out, "tool", tool);
	return 0;
}
