/*
 * desktop.c - the desktop action table and its runner (see desktop.h).
 *
 * Owns: the table of actions (name -> parameter check + Xlib work + result
 * shape), coordinate mapping from image to screen pixels, the choice of
 * display for a task, and the `gui` action row written for each run on a
 * task. Every action runs under one display lease (display.h) that is given
 * back before the database is touched, so a slow disk never holds a display.
 *
 * Does not: talk HTTP (api_desktop.c), or know how input/windows/capture
 * work (xinput.c, xwin.c, xcap.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/jx.h"
#include "core/log.h"
#include "core/nowait.h"
#include "desktop.h"
#include "effect.h"
#include "takeover.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "x11/humanize.h"
#include "x11/xinput.h"
#include "x11/xwin.h"

#define TYPE_MAX_BYTES (64 * 1024)
#define SLEEP_MAX_MS 60000

struct dctx {
	struct app *app;
	struct display_lease *l;
	json_object *p;         /* parameters (borrowed) */
	bool image_coords;
	json_object *data;      /* result (owned until handed out) */
	char *obs;              /* observation buffer */
	size_t obs_len;
	int button;             /* for the click family */
	int count;
	struct effect_opts fxo; /* the effect watch asked for (effect.h) */
	struct effect *fx;      /* armed by fx_prepare, judged by desktop_run */
	bool fx_armed;
};

typedef int (*act_fn)(struct dctx *c, struct derr *e);

struct act {
	const char *name;
	act_fn fn;
	int button, count;      /* click family */
	bool quick;             /* a few round trips to X: may run in nowait mode */
	bool input;             /* sends input: its effect is watched (effect.h) */
	const char *summary;
};

/* Every parameter any action takes; anything else is a typo worth a 400. */
const char *const desktop_params[] = {
	"action", "task_id", "x", "y", "x2", "y2", "button", "text", "keys", "key",
	"hold", "hold_ms", "count",
	"direction", "amount", "window_id", "window_name", "width", "height", "force",
	"ms", "max_width", "quality", "format", "w", "h", "coords", "settle_ms", "expect", "observe",
	"param",        /* a type action's name for its text in a replay (gui/replay.h) */
	NULL
};

static void
observe(struct dctx *c, const char *fmt, ...) DETM_PRINTF(2, 3);

static void
observe(struct dctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->obs, c->obs_len, fmt, ap);
	va_end(ap);
}

static int
check_params(json_object *p, struct derr *e)
{
	json_object_object_foreach(p, key, val) {
		size_t i;

		(void)val;
		for (i = 0; desktop_params[i] != NULL; i++)
			if (strcmp(key, desktop_params[i]) == 0)
				break;
		if (desktop_params[i] == NULL)
			return derr_set(e, DERR_INVALID, key, "unknown parameter '%.*s'",
			    utf8_prec(key, 64), key);
	}
	return 0;
}

/* ---- parameters ---- */

static int
p_int(struct dctx *c, const char *key, bool required, int64_t min, int64_t max,
    int64_t def, int *out, bool *present, struct derr *e)
{
	int64_t v = def;
	bool has = false;

	if (jx_int(c->p, key, required, min, max, &v, &has, e) != 0)
		return -1;
	*out = (int)(has ? v : def);
	if (present != NULL)
		*present = has;
	return 0;
}

/* A point: image or screen pixels in, screen pixels out, on screen. */
static int
p_point(struct dctx *c, const char *kx, const char *ky, bool required, int *x, int *y,
    bool *present, struct derr *e)
{
	bool hx = false, hy = false;
	int ix, iy;

	if (p_int(c, kx, required, -100000, 100000, 0, &ix, &hx, e) != 0 ||
	    p_int(c, ky, required || hx, -100000, 100000, 0, &iy, &hy, e) != 0)
		return -1;
	if (hy && !hx)
		return derr_set(e, DERR_INVALID, kx, "%s is required with %s", kx, ky);
	if (present != NULL)
		*present = hx;
	if (!hx)
		return 0;
	if (c->image_coords) {
		const struct display_look *lk = c->l->look;

		ix = lk->x + (int)lround(ix * lk->scale);
		iy = lk->y + (int)lround(iy * lk->scale);
	}
	if (ix < 0 || ix >= c->l->width)
		return derr_set(e, DERR_INVALID, kx, "%s=%d is off screen (the screen %s is %dx%d)",
		    kx, ix, c->l->name, c->l->width, c->l->height);
	if (iy < 0 || iy >= c->l->height)
		return derr_set(e, DERR_INVALID, ky, "%s=%d is off screen (the screen %s is %dx%d)",
		    ky, iy, c->l->name, c->l->width, c->l->height);
	*x = ix;
	*y = iy;
	return 0;
}

int
desktop_window_id(json_object *v, unsigned long *out, struct derr *e)
{
	const char *s;
	char *end;
	unsigned long long n;

	if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);

		if (i <= 0 || i > 0xffffffffLL)
			return derr_set(e, DERR_INVALID, "window_id", "window_id is out of range");
		*out = (unsigned long)i;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return derr_set(e, DERR_INVALID, "window_id",
		    "window_id must be a string (\"0x1a00003\") or an integer");
	s = json_object_get_string(v);
	n = strtoull(s, &end, 0);
	if (end == s || *end != '\0' || n == 0 || n > 0xffffffffULL)
		return derr_set(e, DERR_INVALID, "window_id",
		    "window_id '%.*s' is not a window id (like 0x1a00003 or 27262979)",
		    utf8_prec(s, 32), s);
	*out = (unsigned long)n;
	return 0;
}

/* window_id, else window_name (first visible match), else an error. */
static int
p_window(struct dctx *c, bool required, unsigned long *id, struct derr *e)
{
	json_object *v;
	const char *name = NULL;
	struct xwin w;

	*id = 0;
	if (json_object_object_get_ex(c->p, "window_id", &v) && !json_object_is_type(v, json_type_null))
		return desktop_window_id(v, id, e);
	if (jx_str(c->p, "window_name", false, 1, 256, &name, e) != 0)
		return -1;
	if (name != NULL) {
		if (xwin_find(c->l->d, name, &w, e) != 0)
			return -1;
		*id = w.id;
		return 0;
	}
	if (!required)
		return 0;
	return derr_set(e, DERR_INVALID, "window_id", "give window_id or window_name");
}

static json_object *
win_json(const struct xwin *w)
{
	json_object *o = json_object_new_object();
	char id[24];

	snprintf(id, sizeof id, "0x%lx", w->id);
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "title", json_object_new_string(w->title));
	json_object_object_add(o, "class", json_object_new_string(w->wm_class));
	json_object_object_add(o, "instance", json_object_new_string(w->wm_instance));
	json_object_object_add(o, "pid", w->pid > 0 ? json_object_new_int(w->pid) : NULL);
	json_object_object_add(o, "x", json_object_new_int(w->x));
	json_object_object_add(o, "y", json_object_new_int(w->y));
	json_object_object_add(o, "width", json_object_new_int(w->width));
	json_object_object_add(o, "height", json_object_new_int(w->height));
	json_object_object_add(o, "focused", json_object_new_boolean(w->focused));
	json_object_object_add(o, "visible", json_object_new_boolean(w->visible));
	return o;
}

static void
add_xy(struct dctx *c, int x, int y)
{
	const struct display_look *lk = c->l->look;

	/* Positions come back in the space the caller's came in, named. */
	if (c->image_coords && lk->scale > 0) {
		json_object_object_add(c->data, "x", json_object_new_int((int)lround((x - lk->x) / lk->scale)));
		json_object_object_add(c->data, "y", json_object_new_int((int)lround((y - lk->y) / lk->scale)));
		json_object_object_add(c->data, "screen_x", json_object_new_int(x));
		json_object_object_add(c->data, "screen_y", json_object_new_int(y));
	} else {
		json_object_object_add(c->data, "x", json_object_new_int(x));
		json_object_object_add(c->data, "y", json_object_new_int(y));
	}
	json_object_object_add(c->data, "coords", json_object_new_string(c->image_coords ? "image" : "screen"));
	json_object_object_add(c->data, "scale", json_object_new_double(round(lk->scale * 10000) / 10000));
}

/* ---- the effect watch (effect.h) ---- */

/* Right before an input whose effect is watched: arms the watch, then the
 * preparation (the pointer to (x, y) when move; for a press, the focus to
 * the window under the pointer), then the baseline. Without a watch, only
 * the motion (when move). */
static int
fx_prepare(struct dctx *c, int x, int y, bool move, bool press, struct derr *e)
{
	int ox = -1, oy = -1;

	if (!effect_wanted(&c->fxo))
		return move ? xinput_move(c->l->d, x, y, e) : 0;
	if (effect_start(&c->fx, c->l, &c->fxo, e) != 0)
		return -1;
	c->fx_armed = true;
	if (move && (xinput_pointer(c->l->d, &ox, &oy, e) != 0 || xinput_move(c->l->d, x, y, e) != 0))
		return -1;
	if (move && (ox != x || oy != y))
		effect_prep_changed(c->fx, false);      /* hover highlights fade in */
	if (press) {
		int moved = xinput_focus_pointer(c->l->d, e);

		if (moved < 0)
			return -1;
		if (moved == 1)
			effect_prep_changed(c->fx, true);
	}
	return effect_ready(c->fx, c->l, x, y, e);
}

/* ---- actions ---- */

static int
a_click(struct dctx *c, struct derr *e)
{
	int x = 0, y = 0, button = c->button;
	bool at = false;
	int count = c->count;

	if (p_point(c, "x", "y", false, &x, &y, &at, e) != 0)
		return -1;
	/* Plain click: any button but the wheel's (8 back, 9 forward), and a
	 * count (3: a triple click). */
	if (c->button == 1 && c->count == 1 &&
	    (p_int(c, "button", false, 1, 9, 1, &button, NULL, e) != 0 ||
	    p_int(c, "count", false, 1, 3, 1, &count, NULL, e) != 0))
		return -1;
	if (button >= 4 && button <= 7)
		return derr_set(e, DERR_INVALID, "button",
		    "buttons 4-7 are the wheel's: use the scroll action");
	if (!effect_wanted(&c->fxo) && at) {
		/* Not watched: the one-call path (one round trip less). */
		if (xinput_click_at(c->l->d, x, y, button, count, e) != 0)
			return -1;
	} else if ((!at && xinput_pointer(c->l->d, &x, &y, e) != 0) ||
	    fx_prepare(c, x, y, at, true, e) != 0 || xinput_click(c->l->d, button, count, e) != 0)
		return -1;
	add_xy(c, x, y);
	json_object_object_add(c->data, "button", json_object_new_int(button));
	if (count != 1)
		json_object_object_add(c->data, "count", json_object_new_int(count));
	observe(c, "%s (%d, %d)", count == 3 ? "triple-clicked" : count == 2 ? "double-clicked" :
	    button == 3 ? "right-clicked" : button == 2 ? "middle-clicked" : button == 8 ?
	    "back-clicked" : button == 9 ? "forward-clicked" : "clicked", x, y);
	return 0;
}

static int
a_move(struct dctx *c, struct derr *e)
{
	int x, y;

	if (p_point(c, "x", "y", true, &x, &y, NULL, e) != 0 || fx_prepare(c, x, y, false, false, e) != 0 ||
	    xinput_move(c->l->d, x, y, e) != 0)
		return -1;
	add_xy(c, x, y);
	observe(c, "moved the pointer to (%d, %d)", x, y);
	return 0;
}

static int
a_drag(struct dctx *c, struct derr *e)
{
	int x, y, x2, y2, button;

	if (p_point(c, "x", "y", true, &x, &y, NULL, e) != 0 ||
	    p_point(c, "x2", "y2", true, &x2, &y2, NULL, e) != 0 ||
	    p_int(c, "button", false, 1, 3, 1, &button, NULL, e) != 0 ||
	    (effect_wanted(&c->fxo) && fx_prepare(c, x, y, true, true, e) != 0) ||
	    xinput_drag(c->l->d, x, y, x2, y2, button, e) != 0)
		return -1;
	add_xy(c, x, y);
	json_object_object_add(c->data, "x2", json_object_new_int(x2));
	json_object_object_add(c->data, "y2", json_object_new_int(y2));
	observe(c, "dragged from (%d, %d) to (%d, %d)", x, y, x2, y2);
	return 0;
}

static int
a_scroll(struct dctx *c, struct derr *e)
{
	const char *dir = "down";
	int amount, x, y;
	bool at;

	if (jx_str(c->p, "direction", false, 1, 8, &dir, e) != 0 ||
	    p_int(c, "amount", false, 1, 100, 3, &amount, NULL, e) != 0 ||
	    p_point(c, "x", "y", false, &x, &y, &at, e) != 0)
		return -1;
	if (dir == NULL)
		dir = "down";
	if (fx_prepare(c, at ? x : -1, at ? y : -1, at, false, e) != 0)
		return -1;
	if (xinput_scroll(c->l->d, dir, amount, e) != 0)
		return -1;
	json_object_object_add(c->data, "direction", json_object_new_string(dir));
	json_object_object_add(c->data, "amount", json_object_new_int(amount));
	observe(c, "scrolled %s by %d", dir, amount);
	return 0;
}

static int
a_button(struct dctx *c, struct derr *e)
{
	int x, y, button;
	bool at;

	if (p_point(c, "x", "y", false, &x, &y, &at, e) != 0 ||
	    p_int(c, "button", false, 1, 3, 1, &button, NULL, e) != 0)
		return -1;
	if (fx_prepare(c, at ? x : -1, at ? y : -1, at, c->count != 0, e) != 0)
		return -1;
	if (xinput_button(c->l->d, button, c->count, e) != 0)
		return -1;
	json_object_object_add(c->data, "button", json_object_new_int(button));
	observe(c, "button %d %s", button, c->count ? "down" : "up");
	return 0;
}

void
desktop_key_focus(Display *d, json_object *data, const char *prep, char *out, size_t cap)
{
	struct xwin w;
	struct derr e;
	json_object *o;
	char id[24], title[160];
	int r;

	out[0] = '\0';
	derr_clear(&e);
	if ((r = xwin_key_target(d, &w, &e)) < 0)
		return;         /* unknown: said nothing */
	if (r == 0) {
		json_object_object_add(data, "focus_window", NULL);
		snprintf(out, cap, "; no window had the keyboard focus: the keys went nowhere");
		return;
	}
	o = json_object_new_object();
	snprintf(id, sizeof id, "0x%lx", w.id);
	snprintf(title, sizeof title, "%.*s", utf8_prec(w.title, sizeof title - 1), w.title);
	utf8_fix_in_place(title, sizeof title);
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "title", json_object_new_string(title));
	json_object_object_add(o, "class", json_object_new_string(w.wm_class));
	json_object_object_add(data, "focus_window", o);
	snprintf(out, cap, " %s \"%s\" (%s)", prep, title[0] ? title : "(untitled)", id);
}

static int
a_type(struct dctx *c, struct derr *e)
{
	const char *text = NULL;
	size_t len, sent = 0;
	char where[260];

	if (jx_str(c->p, "text", true, 1, TYPE_MAX_BYTES, &text, e) != 0)
		return -1;
	len = strlen(text);
	desktop_key_focus(c->l->d, c->data, "into", where, sizeof where);
	if (xinput_type_check(text, len, e) != 0 || fx_prepare(c, -1, -1, false, false, e) != 0 ||
	    xinput_type(c->l->d, text, len, &sent, e) != 0)
		return -1;
	json_object_object_add(c->data, "chars", json_object_new_int64((int64_t)utf8_chars(text)));
	/* Keys sent and processed by the server ("\r\n" is one Return). */
	json_object_object_add(c->data, "chars_sent", json_object_new_int64((int64_t)sent));
	observe(c, "typed %zu characters%s", utf8_chars(text), where);
	return 0;
}

/* hold_ms: one chord held down that long, then released (released also
 * when the wait is cut short). */
static int
key_hold(struct dctx *c, const char *keys, int hold_ms, struct derr *e)
{
	struct derr e2;

	if (xinput_keys_check(keys, e) != 0 || fx_prepare(c, -1, -1, false, false, e) != 0)
		return -1;
	if (xinput_keys_hold(c->l->d, keys, 1, e) != 0) {
		(void)xinput_keys_hold(c->l->d, keys, 0, &e2);
		return -1;
	}
	sleep_ms(hold_ms);
	if (xinput_keys_hold(c->l->d, keys, 0, e) != 0)
		return -1;
	json_object_object_add(c->data, "keys", json_object_new_string(keys));
	json_object_object_add(c->data, "hold_ms", json_object_new_int(hold_ms));
	observe(c, "held %s for %d ms", keys, hold_ms);
	return 0;
}

static int
a_key(struct dctx *c, struct derr *e)
{
	const char *keys = NULL;
	int hold_ms;
	char where[260];

	/* `keys` (detm), `key` or `text` (the Python DETM's name). */
	if (jx_str(c->p, "keys", false, 1, 256, &keys, e) != 0)
		return -1;
	if (keys == NULL && jx_str(c->p, "key", false, 1, 256, &keys, e) != 0)
		return -1;
	if (keys == NULL && jx_str(c->p, "text", false, 1, 256, &keys, e) != 0)
		return -1;
	if (keys == NULL)
		keys = "Return";
	if (p_int(c, "hold_ms", false, 0, SLEEP_MAX_MS, -1, &hold_ms, NULL, e) != 0)
		return -1;
	if (hold_ms >= 0)
		return key_hold(c, keys, hold_ms, e);
	desktop_key_focus(c->l->d, c->data, "in", where, sizeof where);
	if (xinput_keys_check(keys, e) != 0 || fx_prepare(c, -1, -1, false, false, e) != 0 ||
	    xinput_keys(c->l->d, keys, e) != 0)
		return -1;
	json_object_object_add(c->data, "keys", json_object_new_string(keys));
	observe(c, "pressed %s%s", keys, where);
	return 0;
}

static int
a_pointer(struct dctx *c, struct derr *e)
{
	int x, y;

	if (xinput_pointer(c->l->d, &x, &y, e) != 0)
		return -1;
	add_xy(c, x, y);
	observe(c, "the pointer is at (%d,%d)", x, y);
	return 0;
}

static int
a_list(struct dctx *c, struct derr *e)
{
	struct xwin *w = NULL;
	json_object *arr;
	size_t n = 0, i;

	if (xwin_list(c->l->d, &w, &n, e) != 0)
		return -1;
	arr = json_object_new_array();
	for (i = n; i-- > 0;)   /* topmost first */
		json_object_array_add(arr, win_json(&w[i]));
	free(w);
	json_object_object_add(c->data, "windows", arr);
	json_object_object_add(c->data, "count", json_object_new_int((int)n));
	observe(c, "%zu windows", n);
	return 0;
}

static int
a_find(struct dctx *c, struct derr *e)
{
	const char *name = NULL;
	struct xwin w;

	if (jx_str(c->p, "window_name", true, 1, 256, &name, e) != 0 ||
	    xwin_find(c->l->d, name, &w, e) != 0)
		return -1;
	json_object_object_add(c->data, "found", json_object_new_boolean(1));
	json_object_object_add(c->data, "window", win_json(&w));
	observe(c, "found window 0x%lx '%.*s'", w.id, utf8_prec(w.title, 100), w.title);
	return 0;
}

static int
a_active(struct dctx *c, struct derr *e)
{
	struct xwin w;

	if (xwin_active(c->l->d, &w, e) != 0)
		return -1;
	json_object_object_add(c->data, "window", win_json(&w));
	observe(c, "active window 0x%lx '%.*s'", w.id, utf8_prec(w.title, 100), w.title);
	return 0;
}

/* The window-changing actions share one shape: find, act, report. */
static int
win_done(struct dctx *c, unsigned long id, const char *verb, struct derr *e)
{
	struct xwin w;

	if (xwin_get(c->l->d, id, &w, e) != 0)
		return -1;
	json_object_object_add(c->data, "window", win_json(&w));
	observe(c, "%s window 0x%lx '%.*s'", verb, id, utf8_prec(w.title, 100), w.title);
	return 0;
}

static int
a_focus(struct dctx *c, struct derr *e)
{
	unsigned long id;

	if (p_window(c, true, &id, e) != 0 || xwin_focus(c->l->d, id, e) != 0)
		return -1;
	return win_done(c, id, "focused", e);
}

static int
a_wmove(struct dctx *c, struct derr *e)
{
	unsigned long id;
	int x, y;

	if (p_window(c, true, &id, e) != 0 ||
	    p_int(c, "x", true, -16384, 16384, 0, &x, NULL, e) != 0 ||
	    p_int(c, "y", true, -16384, 16384, 0, &y, NULL, e) != 0 ||
	    xwin_move(c->l->d, id, x, y, e) != 0)
		return -1;
	return win_done(c, id, "moved", e);
}

static int
a_resize(struct dctx *c, struct derr *e)
{
	unsigned long id;
	int w, h;

	if (p_window(c, true, &id, e) != 0 ||
	    p_int(c, "width", true, 1, 16384, 0, &w, NULL, e) != 0 ||
	    p_int(c, "height", true, 1, 16384, 0, &h, NULL, e) != 0 ||
	    xwin_resize(c->l->d, id, w, h, e) != 0)
		return -1;
	return win_done(c, id, "resized", e);
}

static int
a_minimize(struct dctx *c, struct derr *e)
{
	unsigned long id;

	if (p_window(c, true, &id, e) != 0 || xwin_minimize(c->l->d, id, e) != 0)
		return -1;
	return win_done(c, id, "minimised", e);
}

static int
a_close(struct dctx *c, struct derr *e)
{
	unsigned long id;
	bool force = false, has;
	const char *how = "delete";
	char sid[24];

	if (p_window(c, true, &id, e) != 0 || jx_bool(c->p, "force", &force, &has, e) != 0 ||
	    xwin_close(c->l->d, id, force, &how, e) != 0)
		return -1;
	snprintf(sid, sizeof sid, "0x%lx", id);
	json_object_object_add(c->data, "window_id", json_object_new_string(sid));
	json_object_object_add(c->data, "how", json_object_new_string(how));
	observe(c, "closed window %s (%s)", sid, strcmp(how, "kill") == 0 ?
	    "killed its client" : "asked it to close");
	return 0;
}

static int
a_sleep(struct dctx *c, struct derr *e)
{
	int ms;
	struct timespec ts;

	if (p_int(c, "ms", true, 0, SLEEP_MAX_MS, 0, &ms, NULL, e) != 0)
		return -1;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0)
		;
	json_object_object_add(c->data, "ms", json_object_new_int(ms));
	observe(c, "waited %d ms", ms);
	return 0;
}

static int a_screenshot(struct dctx *c, struct derr *e);

static const struct act acts[] = {
	{ "click",              a_click,      1, 1, true,  true,  "click at x,y (or where the pointer is)" },
	{ "double_click",       a_click,      1, 2, true,  true,  "double-click" },
	{ "right_click",        a_click,      3, 1, true,  true,  "right-click" },
	{ "middle_click",       a_click,      2, 1, true,  true,  "middle-click" },
	{ "mouse_move",         a_move,       0, 0, true,  true,  "move the pointer to x,y" },
	{ "drag",               a_drag,       0, 0, false, true,  "drag from x,y to x2,y2" },
	{ "scroll",             a_scroll,     0, 0, true,  true,  "scroll direction by amount" },
	{ "mouse_down",         a_button,     0, 1, true,  true,  "press a button" },
	{ "mouse_up",           a_button,     0, 0, true,  true,  "release a button" },
	{ "type",               a_type,       0, 0, false, true,  "type text (any Unicode)" },
	{ "press_key",          a_key,        0, 0, false, true,  "press a key or chord (ctrl+s)" },
	{ "get_mouse_position", a_pointer,    0, 0, true,  false, "where the pointer is" },
	{ "list_windows",       a_list,       0, 0, false, false, "top-level windows" },
	{ "find_window",        a_find,       0, 0, false, false, "first window whose title/class matches" },
	{ "active_window",      a_active,     0, 0, false, false, "the focused window" },
	{ "focus_window",       a_focus,      0, 0, false, false, "raise and focus a window" },
	{ "move_window",        a_wmove,      0, 0, false, false, "move a window to x,y" },
	{ "resize_window",      a_resize,     0, 0, false, false, "resize a window" },
	{ "minimize_window",    a_minimize,   0, 0, false, false, "minimise a window" },
	{ "close_window",       a_close,      0, 0, false, false, "close a window (force: kill)" },
	{ "screenshot",         a_screenshot, 0, 0, false, false, "capture the screen (JPEG, base64)" },
	{ "sleep",              a_sleep,      0, 0, false, false, "wait ms milliseconds" },
};

const char *
desktop_action_name(size_t i)
{
	return i < ARRAY_LEN(acts) ? acts[i].name : NULL;
}

static const struct act *
act_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(acts); i++)
		if (strcmp(acts[i].name, name) == 0)
			return &acts[i];
	return NULL;
}

/* ---- display choice ---- */

int
desktop_lease(struct app *app, const char *task_id, struct display_lease *l,
    struct derr *e)
{
	json_object *meta = NULL, *v;
	int status, rc = -1;

	if (task_id == NULL)
		return display_lease(NULL, DISPLAY_SHARED, l, e);
	if (display_has(task_id))
		return display_lease(task_id, DISPLAY_TASK, l, e);
	if (task_meta(app->store, task_id, &status, &meta, e) != 0)
		return -1;
	if (json_object_object_get_ex(meta, "display_number", &v)) {
		json_object_object_get_ex(meta, "display", &v);
		derr_set(e, DERR_CONFLICT, "task_id",
		    "task %s had display %s, which is no longer running (%s); start a new one "
		    "with POST /api/tasks/%s/display", task_id, json_object_get_string(v),
		    task_status_final(status) ? "released when the task ended" :
		    "stopped, or lost in a daemon restart", task_id);
		goto out;
	}
	/* A task without a display of its own works on the shared desktop. */
	rc = display_lease(NULL, DISPLAY_SHARED, l, e);
out:
	json_object_put(meta);
	return rc;
}

int
desktop_lease_agent(struct app *app, const char *task_id, bool input, struct display_lease *l,
    struct derr *e)
{
	if (desktop_lease(app, task_id, l, e) != 0)
		return -1;
	if ((input ? takeover_gate(task_id, e) : takeover_gate_look(task_id, e)) != 0) {
		display_unlease(l);
		return -1;
	}
	return 0;
}

/* ---- screenshots ---- */

static int
shot_on_lease(struct display_lease *l, const struct desk_shot *q, struct xcap_image *img,
    json_object **meta, struct derr *e)
{
	struct xcap_req xr = { 0 };
	struct xcap_frame f = { 0 };
	struct xwin w;
	json_object *m, *o;
	bool adapt = q->quality == 0 && q->format == XCAP_JPEG;
	int rc = -1;

	xr.window = q->window;
	if (xr.window == 0 && q->window_name != NULL) {
		if (xwin_find(l->d, q->window_name, &w, e) != 0)
			return -1;
		xr.window = w.id;
	}
	if (xr.window != 0 && xwin_focus(l->d, xr.window, e) != 0)
		return -1;
	xr.x = q->x;
	xr.y = q->y;
	xr.w = q->w;
	xr.h = q->h;
	xr.max_width = q->max_width;
	xr.max_side = q->max_width ? 0 : DESKTOP_LOOK_SIDE;
	xr.quality = q->quality ? q->quality : DESKTOP_LOOK_QUALITY;
	xr.format = q->format;
	if (xcap_grab(l->cap, &xr, &f, e) != 0)
		goto out;
	if (xcap_encode(&f, xr.format, xr.quality, img, e) != 0)
		goto out;
	/* Default settings promise an image under 1 MB: a noisy screen gets
	 * a lower quality rather than a bigger reply. */
	while (adapt && img->len > DESKTOP_LOOK_MAX_BYTES && xr.quality > 30) {
		xr.quality -= 15;
		xcap_image_free(img);
		if (xcap_encode(&f, xr.format, xr.quality, img, e) != 0)
			goto out;
	}
	if (q->remember) {
		l->look->scale = f.scale;
		l->look->x = f.src_x;
		l->look->y = f.src_y;
	}
	m = json_object_new_object();
	o = json_object_new_object();
	json_object_object_add(o, "width", json_object_new_int(f.width));
	json_object_object_add(o, "height", json_object_new_int(f.height));
	json_object_object_add(m, "image_size", o);
	o = json_object_new_object();
	json_object_object_add(o, "width", json_object_new_int(f.screen_w));
	json_object_object_add(o, "height", json_object_new_int(f.screen_h));
	json_object_object_add(m, "screen_size", o);
	json_object_object_add(m, "scale", json_object_new_double(round(f.scale * 10000) / 10000));
	o = json_object_new_object();
	json_object_object_add(o, "x", json_object_new_int(f.src_x));
	json_object_object_add(o, "y", json_object_new_int(f.src_y));
	json_object_object_add(o, "width", json_object_new_int(f.src_w));
	json_object_object_add(o, "height", json_object_new_int(f.src_h));
	json_object_object_add(m, "region", o);
	json_object_object_add(m, "quality", json_object_new_int(xr.quality));
	json_object_object_add(m, "bytes", json_object_new_int64((int64_t)img->len));
	json_object_object_add(m, "mime_type", json_object_new_string(img->mime));
	json_object_object_add(m, "display", json_object_new_string(l->name));
	*meta = m;
	rc = 0;
out:
	if (rc != 0)
		xcap_image_free(img);
	xcap_frame_free(&f);
	return rc;
}

int
desktop_shot(struct app *app, const struct desk_shot *q, struct xcap_image *img,
    json_object **meta, struct derr *e)
{
	struct display_lease l;
	int rc;

	memset(img, 0, sizeof *img);
	*meta = NULL;
	if (desktop_lease_agent(app, q->task_id, false, &l, e) != 0)
		return -1;
	rc = shot_on_lease(&l, q, img, meta, e);
	display_unlease(&l);
	return rc;
}

static int
a_screenshot(struct dctx *c, struct derr *e)
{
	struct desk_shot q = { .remember = true };
	struct xcap_image img = { 0 };
	const char *fmt = NULL, *name = NULL;
	json_object *meta = NULL, *v;
	char *b64;

	if (p_int(c, "max_width", false, 16, 16384, 0, &q.max_width, NULL, e) != 0 ||
	    p_int(c, "quality", false, 1, 100, 0, &q.quality, NULL, e) != 0 ||
	    p_int(c, "x", false, 0, 16384, 0, &q.x, NULL, e) != 0 ||
	    p_int(c, "y", false, 0, 16384, 0, &q.y, NULL, e) != 0 ||
	    p_int(c, "w", false, 0, 16384, 0, &q.w, NULL, e) != 0 ||
	    p_int(c, "h", false, 0, 16384, 0, &q.h, NULL, e) != 0 ||
	    jx_str(c->p, "format", false, 1, 8, &fmt, e) != 0 ||
	    jx_str(c->p, "window_name", false, 1, 256, &name, e) != 0)
		return -1;
	if (json_object_object_get_ex(c->p, "window_id", &v) &&
	    desktop_window_id(v, &q.window, e) != 0)
		return -1;
	q.window_name = name;
	if (fmt != NULL && strcmp(fmt, "png") == 0)
		q.format = XCAP_PNG;
	else if (fmt != NULL && strcmp(fmt, "jpeg") != 0 && strcmp(fmt, "jpg") != 0)
		return derr_set(e, DERR_INVALID, "format", "format must be jpeg or png");
	if (shot_on_lease(c->l, &q, &img, &meta, e) != 0)
		return -1;
	b64 = b64_encode(img.data, img.len, NULL);
	json_object_put(c->data);
	c->data = meta;
	json_object_object_add(c->data, "image_b64", json_object_new_string(b64));
	json_object_object_add(c->data, "media_type", json_object_new_string(img.mime));
	observe(c, "took a %zu-byte screenshot of %s", img.len, c->l->name);
	free(b64);
	xcap_image_free(&img);
	return 0;
}

/* ---- runner ---- */

void
desktop_log(struct app *app, const char *task_id, const char *what, const char *summary,
    bool ok, json_object *in, json_object *out, double ms)
{
	struct action_new a = { .type = "gui", .duration_ms = ms, .summary = summary };
	char id[ID_LEN];
	struct derr e2;
	int64_t ord;

	a.status = ok ? "completed" : "failed";
	a.input_json = jx_string(in, NULL);
	a.output_json = jx_string(out, NULL);
	if (task_action_add(app->store, task_id, &a, id, &ord, &e2) != 0)
		log_warn("could not log %s on task %s: %s", what, task_id, e2.message);
}

void
desktop_log_observed(json_object *row, json_object *observed)
{
	json_object *o;

	if (observed == NULL)
		return;
	o = json_object_new_object();
	json_object_object_foreach(observed, k, v) {
		if (strcmp(k, "image_b64") != 0)
			json_object_object_add(o, k, json_object_get(v));
	}
	json_object_object_add(row, "observed", o);
}

/* The action's input and output as JSON text for the gui action row; the
 * image (if any) is left out. */
static void
log_action(struct app *app, const char *task_id, const char *action, json_object *params,
    const struct desk_out *out, const struct derr *err)
{
	json_object *in = json_object_new_object(), *res = json_object_new_object();
	char summary[320];

	json_object_object_add(in, "action", json_object_new_string(action));
	json_object_object_foreach(params, k, v) {
		if (strcmp(k, "action") != 0 && strcmp(k, "task_id") != 0)
			json_object_object_add(in, k, json_object_get(v));
	}
	if (err == NULL) {
		json_object_object_foreach(out->data, k2, v2) {
			if (strcmp(k2, "image_b64") != 0 && strcmp(k2, "observed") != 0)
				json_object_object_add(res, k2, json_object_get(v2));
		}
		desktop_log_observed(res, json_object_object_get(out->data, "observed"));
		snprintf(summary, sizeof summary, "%s: %.300s", action,
		    json_object_object_get(out->data, "summary") != NULL ?
		    json_object_get_string(json_object_object_get(out->data, "summary")) : out->observation);
	} else {
		derr_add_json(res, err);
		snprintf(summary, sizeof summary, "%s failed: %.*s", action,
		    utf8_prec(err->message, 200), err->message);
	}
	json_object_object_add(res, "display", json_object_new_string(out->display));
	desktop_log(app, task_id, action, summary, err == NULL, in, res, out->duration_ms);
	json_object_put(in);
	json_object_put(res);
}

/* "hold": keys held down during a pointer action (a shift-click, a
 * ctrl-drag): one chord, checked before anything is sent. */
static int
hold_check(const struct act *a, json_object *params, const char **hold, struct derr *e)
{
	*hold = NULL;
	if (jx_str(params, "hold", false, 1, 256, hold, e) != 0)
		return -1;
	if (*hold == NULL)
		return 0;
	if (a->fn != a_click && a->fn != a_move && a->fn != a_drag && a->fn != a_scroll &&
	    a->fn != a_button)
		return derr_set(e, DERR_INVALID, "hold",
		    "hold (keys held during the action) is for pointer actions, not %s", a->name);
	if (xinput_keys_check(*hold, e) != 0)
		return derr_refield(e, "hold");
	return 0;
}

/* The action, with its hold keys down around it: released whatever the
 * action did. */
static int
run_held(struct dctx *c, const struct act *a, const char *hold, struct derr *e)
{
	struct derr e2;
	int rc;

	if (hold == NULL)
		return a->fn(c, e);
	if (xinput_keys_hold(c->l->d, hold, 1, e) != 0) {
		(void)xinput_keys_hold(c->l->d, hold, 0, &e2);
		return derr_refield(e, "hold");
	}
	rc = a->fn(c, e);
	if (xinput_keys_hold(c->l->d, hold, 0, rc == 0 ? e : &e2) != 0 && rc == 0)
		rc = derr_refield(e, "hold");
	if (rc == 0)
		json_object_object_add(c->data, "hold", json_object_new_string(hold));
	return rc;
}

/* In nowait mode (nowait.h: run on an HTTP worker), only a quick action
 * goes ahead; every other one is refused before anything happens. So is an
 * input whose effect is watched: the watch waits for events. */
static int
nowait_check(const struct act *a, const struct effect_opts *fxo, struct derr *e)
{
	if (!nowait_active())
		return 0;
	if (!a->quick)
		return nowait_refuse(e, "not a quick action");
	if (humanize_enabled())
		return nowait_refuse(e, "humanized input takes its time");
	if (a->input && effect_wanted(fxo))
		return nowait_refuse(e, "the input's effect is watched (settle_ms)");
	return 0;
}

/* "Clicked (412, 230)": the observation, capitalised, for the verdict's line. */
static void
did_of(const char *obs, char *out, size_t len)
{
	snprintf(out, len, "%s", obs);
	if (out[0] >= 'a' && out[0] <= 'z')
		out[0] = (char)(out[0] - 'a' + 'A');
}

int
desktop_run(struct app *app, const char *task_id, const char *action, json_object *params,
    bool image_coords, struct desk_out *out, struct derr *e)
{
	const struct act *a;
	struct display_lease l;
	struct dctx c = { 0 };
	const char *hold = NULL;
	int64_t t0 = mono_us();
	char did[300];
	int rc = -1;

	memset(out, 0, sizeof *out);
	if ((a = act_find(action)) == NULL) {
		char list[512] = "";
		size_t i, o = 0;

		for (i = 0; i < ARRAY_LEN(acts) && o < sizeof list; i++)
			o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", acts[i].name);
		return derr_set(e, DERR_INVALID, "action", "unknown action '%.*s' (one of: %s)",
		    utf8_prec(action, 64), action, list);
	}
	if (check_params(params, e) != 0 || hold_check(a, params, &hold, e) != 0 ||
	    (a->input && effect_opts_parse(params, &c.fxo, e) != 0) || nowait_check(a, &c.fxo, e) != 0)
		return -1;
	if (nowait_active() && (hold != NULL || json_object_object_get_ex(params, "hold_ms", NULL)))
		return nowait_refuse(e, "keys are held");
	if (desktop_lease_agent(app, task_id, true, &l, e) != 0)
		return -1;
	c.app = app;
	c.l = &l;
	c.p = params;
	c.image_coords = image_coords;
	c.data = json_object_new_object();
	c.obs = out->observation;
	c.obs_len = sizeof out->observation;
	c.button = a->button;
	c.count = a->count;
	snprintf(out->display, sizeof out->display, "%s", l.name);
	rc = run_held(&c, a, hold, e);
	/* Input went out (or may have): a rerun would send it again, so the
	 * rest (the watch, the log write) finishes here even if it has to wait. */
	if (!nowait_refused())
		nowait_pass();
	if (rc == 0 && a->input) {
		did_of(out->observation, did, sizeof did);
		effect_judge(c.fx, &l, did, c.data);
		json_object_object_add(c.data, "verified", effect_verified(c.data));
	}
	if (!c.fx_armed)
		effect_mark_unwatched(&l, t0);
	effect_free(c.fx, &l);
	display_unlease(&l);
	out->duration_ms = (double)(mono_us() - t0) / 1000.0;
	out->data = c.data;
	/* A refusal in nowait mode is no outcome: the action runs again on a
	 * side worker, which logs it. */
	if (task_id != NULL && !nowait_refused())
		log_action(app, task_id, action, params, out, rc == 0 ? NULL : e);
	if (rc != 0) {
		json_object_put(out->data);
		out->data = NULL;
	}
	return rc;
}
