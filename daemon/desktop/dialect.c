/*
 * dialect.c - the dialect family table and what the dialects share (see
 * dialect.h, dialect_int.h): one desktop action run through desktop_run
 * and its verdict read back, screenshots sized to a model's image budget,
 * zooms, Gemini's grid, DOM key names.
 *
 * Invariants: every input of every dialect goes through dl_act, hence
 * desktop_run (checked, verified, logged on the task); a screenshot's
 * pixels never pass the family's budget (long side, total pixels); image
 * coordinates are mapped to the screen once, by desktop_run's look, or by
 * dl_grid / dl_zoom for what desktop_run does not map.
 *
 * Does not: parse a provider's calls or build its answers (dialect_*.c).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/cancel.h"
#include "core/jx.h"
#include "desktop.h"
#include "dialect_int.h"
#include "utf8.h"

/* The families. Budgets: Anthropic's models read images of at most 1568
 * px on the long side and about 1.15 megapixels without resizing them;
 * OpenAI's refuse images past 2000 px; Gemini's tool plans on a 1440x900
 * reference screen. */
static const struct dl_family families[] = {
	{ "anthropic", 1568, 1150000L, dl_anthropic_run, dl_anthropic_look },
	{ "openai",    1920, 0,        dl_openai_run,    dl_openai_look },
	{ "gemini",    1440, 0,        dl_gemini_run,    dl_gemini_look },
};

/* detm's input actions: they get a verdict ("unknown" when the result has
 * none). */
static const char *const input_actions[] = {
	"click", "double_click", "right_click", "middle_click", "mouse_move", "drag", "scroll",
	"mouse_down", "mouse_up", "type", "press_key", NULL
};

static const struct dl_family *
family(const char *name)
{
	for (size_t i = 0; name != NULL && i < ARRAY_LEN(families); i++)
		if (strcmp(families[i].name, name) == 0)
			return &families[i];
	return NULL;
}

bool
dialect_known(const char *name)
{
	return family(name) != NULL;
}

const char *
dialect_name(size_t i)
{
	return i < ARRAY_LEN(families) ? families[i].name : NULL;
}

void
dl_oneline(const char *text, char *out, size_t cap)
{
	size_t n = utf8_fix(out, cap, text, strlen(text));

	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20)
			out[i] = ' ';
}

/* ---- one desktop action ---- */

static bool
is_input(const char *action)
{
	for (size_t i = 0; input_actions[i] != NULL; i++)
		if (strcmp(input_actions[i], action) == 0)
			return true;
	return false;
}

/* The verdict of an input's result: h-effect's "effect" when the result
 * has one, else the accessibility check's "verified", else unknown. */
static void
res_verdict(const char *action, json_object *data, const char *observation, struct dl_res *r)
{
	json_object *v, *why = NULL, *sum = NULL;
	char extra[200] = "";

	snprintf(r->line, sizeof r->line, "%s", observation);
	if (!is_input(action))
		return;
	if (json_object_object_get_ex(data, "effect", &v) && json_object_is_type(v, json_type_string)) {
		snprintf(r->verdict, sizeof r->verdict, "%s", json_object_get_string(v));
	} else if (json_object_object_get_ex(data, "verified", &v)) {
		snprintf(r->verdict, sizeof r->verdict, "%s", v == NULL ? "unknown" :
		    json_object_get_boolean(v) ? "verified" : "not_verified");
		if (json_object_object_get_ex(data, "verification", &why) &&
		    json_object_object_get_ex(why, "reason", &why) &&
		    json_object_is_type(why, json_type_string))
			dl_oneline(json_object_get_string(why), extra, sizeof extra);
	} else {
		snprintf(r->verdict, sizeof r->verdict, "unknown");
	}
	if (json_object_object_get_ex(data, "summary", &sum) && json_object_is_type(sum, json_type_string)) {
		dl_oneline(json_object_get_string(sum), r->line, sizeof r->line);
		return;
	}
	snprintf(r->line, sizeof r->line, "%s; effect: %s%s%s", observation, r->verdict,
	    extra[0] ? ": " : "", extra);
}

static void
verdicts_add(struct dl *d, const char *v)
{
	size_t n = strlen(d->verdicts);

	if (n + strlen(v) + 2 < sizeof d->verdicts)
		snprintf(d->verdicts + n, sizeof d->verdicts - n, "%s%s", n ? "," : "", v);
}

/* detm's record of one action (dialect_out.detm). */
static void
record(struct dl *d, const char *action, const struct dl_res *r, double ms, const struct derr *err)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "action", json_object_new_string(action));
	json_object_object_add(o, "ok", json_object_new_boolean(err == NULL));
	if (err == NULL) {
		json_object_object_add(o, "observation", json_object_new_string(r->line));
		if (r->verdict[0])
			json_object_object_add(o, "verdict", json_object_new_string(r->verdict));
	} else {
		derr_add_json(o, err);
	}
	json_object_object_add(o, "duration_ms", json_object_new_double(round(ms * 1000) / 1000));
	json_object_array_add(d->detm, o);
	verdicts_add(d, err != NULL ? "error" : r->verdict[0] ? r->verdict : "-");
}

int
dl_act(struct dl *d, const char *action, json_object *params, bool image_coords,
    struct dl_res *r, struct derr *e)
{
	struct desk_out out;
	int rc;

	memset(r, 0, sizeof *r);
	rc = desktop_run(d->app, d->o->task_id, action, params, image_coords, &out, e);
	json_object_put(params);
	if (rc != 0) {
		record(d, action, r, out.duration_ms, e);
		d->err_recorded = true;
		return -1;
	}
	r->data = out.data;
	res_verdict(action, out.data, out.observation, r);
	record(d, action, r, out.duration_ms, NULL);
	return 0;
}

void
dl_fail(struct dl *d, const char *what, const struct derr *e)
{
	struct dl_res r = { 0 };

	if (!d->err_recorded)
		record(d, what != NULL ? what : "?", &r, 0, e);
	if (d->error[0] == '\0')
		utf8_fix(d->error, sizeof d->error, e->message, strlen(e->message));
	d->err_recorded = true;
	d->failed = true;
}

int
dl_wait(struct dl *d, long ms, struct dl_res *r, struct derr *e)
{
	json_object *in = json_object_new_object(), *out = json_object_new_object();
	int64_t t0 = mono_us();
	long left = ms;
	double took;
	int rc = 0;

	memset(r, 0, sizeof *r);
	while (left > 0) {
		long step = left > 100 ? 100 : left;

		if (cancel_requested()) {
			rc = derr_set(e, DERR_UNAVAILABLE, NULL, "the wait was cut short: the client left");
			break;
		}
		sleep_ms(step);
		left -= step;
	}
	took = (double)(mono_us() - t0) / 1000.0;
	snprintf(r->line, sizeof r->line, "waited %ld ms", ms - left);
	json_object_object_add(in, "action", json_object_new_string("wait"));
	json_object_object_add(in, "ms", json_object_new_int64(ms));
	if (rc == 0)
		json_object_object_add(out, "ms", json_object_new_int64(ms));
	else
		derr_add_json(out, e);
	if (d->o->task_id != NULL)
		desktop_log(d->app, d->o->task_id, "wait", rc == 0 ? "wait: waited" : "wait: cut short",
		    rc == 0, in, out, took);
	json_object_put(in);
	json_object_put(out);
	record(d, "wait", r, took, rc == 0 ? NULL : e);
	if (rc != 0)
		d->err_recorded = true;
	return rc;
}

void
dl_res_free(struct dl_res *r)
{
	if (r == NULL)
		return;
	json_object_put(r->data);
	r->data = NULL;
}

json_object *
dl_xy(int x, int y)
{
	json_object *p = json_object_new_object();

	if (x > -100000) {
		json_object_object_add(p, "x", json_object_new_int(x));
		json_object_object_add(p, "y", json_object_new_int(y));
	}
	return p;
}

int
dl_num(json_object *o, const char *key, bool required, double min, double max, double *out,
    bool *present, struct derr *e)
{
	json_object *v = NULL;
	double n;

	if (present != NULL)
		*present = false;
	if (!json_object_object_get_ex(o, key, &v) || v == NULL) {
		if (required)
			return derr_set(e, DERR_INVALID, key, "%s is required", key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return derr_set(e, DERR_INVALID, key, "%s must be a number", key);
	n = json_object_get_double(v);
	if (!(n >= min && n <= max))
		return derr_set(e, DERR_INVALID, key, "%s must be %g..%g (got %g)", key, min, max, n);
	*out = n;
	if (present != NULL)
		*present = true;
	return 0;
}

/* ---- the screen, screenshots, zooms ---- */

int
dl_screen(struct dl *d, struct derr *e)
{
	struct display_lease l;

	if (d->screen_w > 0)
		return 0;
	if (desktop_lease(d->app, d->o->task_id, &l, e) != 0)
		return -1;
	d->screen_w = l.width;
	d->screen_h = l.height;
	display_unlease(&l);
	return 0;
}

/* The width to capture w x h at so that the image keeps within max_side
 * (long side) and max_pixels, as xcap's scaler rounds the height. */
static int
fit_width(int w, int h, int max_side, long max_pixels)
{
	double s = 1.0;
	int side = w > h ? w : h, tw;

	if (max_side > 0 && side > max_side)
		s = (double)max_side / side;
	if (max_pixels > 0 && (double)w * h * s * s > (double)max_pixels)
		s = sqrt((double)max_pixels / ((double)w * h));
	tw = (int)floor(w * s);
	if (tw > w)
		tw = w;
	for (; tw > 16; tw--) {
		long th = ((long)h * tw + w / 2) / w;

		if ((max_pixels <= 0 || (long)tw * th <= max_pixels) && (max_side <= 0 ||
		    (tw <= max_side && th <= max_side)))
			break;
	}
	return tw < 16 ? 16 : tw;
}

static int
budget_side(const struct dl *d)
{
	return d->o->max_side > 0 ? d->o->max_side : d->fam->max_side;
}

static int
img_from_meta(json_object *meta, struct dl_img *img)
{
	json_object *v, *o;

	if (!json_object_object_get_ex(meta, "image_b64", &v))
		return -1;
	img->b64 = xstrdup(json_object_get_string(v));
	if (json_object_object_get_ex(meta, "image_size", &o)) {
		img->w = json_object_get_int(json_object_object_get(o, "width"));
		img->h = json_object_get_int(json_object_object_get(o, "height"));
	}
	if (json_object_object_get_ex(meta, "screen_size", &o)) {
		img->screen_w = json_object_get_int(json_object_object_get(o, "width"));
		img->screen_h = json_object_get_int(json_object_object_get(o, "height"));
	}
	if (json_object_object_get_ex(meta, "region", &o)) {
		img->x = json_object_get_int(json_object_object_get(o, "x"));
		img->y = json_object_get_int(json_object_object_get(o, "y"));
	}
	img->scale = json_object_get_double(json_object_object_get(meta, "scale"));
	return 0;
}

int
dl_shot(struct dl *d, struct dl_img *img, struct derr *e)
{
	struct dl_res r;
	json_object *p;
	int rc;

	memset(img, 0, sizeof *img);
	if (dl_screen(d, e) != 0)
		return -1;
	p = json_object_new_object();
	json_object_object_add(p, "format", json_object_new_string("png"));
	json_object_object_add(p, "max_width", json_object_new_int(fit_width(d->screen_w,
	    d->screen_h, budget_side(d), d->o->max_side > 0 ? 0 : d->fam->max_pixels)));
	if (dl_act(d, "screenshot", p, false, &r, e) != 0)
		return -1;
	rc = img_from_meta(r.data, img);
	dl_res_free(&r);
	if (rc != 0)
		return derr_set(e, DERR_INTERNAL, NULL, "the screenshot has no image");
	return 0;
}

/* The last look, read under a short lease. */
static int
look_read(struct dl *d, struct display_look *lk, struct derr *e)
{
	struct display_lease l;

	if (desktop_lease(d->app, d->o->task_id, &l, e) != 0)
		return -1;
	*lk = *l.look;
	d->screen_w = l.width;
	d->screen_h = l.height;
	display_unlease(&l);
	return 0;
}

static int
clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The zoom's row in the task's action log, like a desktop action's. */
static void
zoom_log(struct dl *d, const int *region, const struct desk_shot *q, json_object *meta,
    double ms, const struct derr *err)
{
	json_object *in = json_object_new_object(), *out = json_object_new_object(), *a;
	char summary[320];

	a = json_object_new_array();
	for (int i = 0; i < 4; i++)
		json_object_array_add(a, json_object_new_int(region[i]));
	json_object_object_add(in, "action", json_object_new_string("zoom"));
	json_object_object_add(in, "region", a);
	if (err == NULL) {
		json_object_object_foreach(meta, k, v) {
			if (strcmp(k, "image_b64") != 0)
				json_object_object_add(out, k, json_object_get(v));
		}
		snprintf(summary, sizeof summary, "zoom: %dx%d at (%d,%d) at full resolution",
		    q->w, q->h, q->x, q->y);
	} else {
		derr_add_json(out, err);
		snprintf(summary, sizeof summary, "zoom failed: %.*s", utf8_prec(err->message, 200),
		    err->message);
	}
	if (d->o->task_id != NULL)
		desktop_log(d->app, d->o->task_id, "zoom", summary, err == NULL, in, out, ms);
	json_object_put(in);
	json_object_put(out);
}

int
dl_zoom(struct dl *d, int x0, int y0, int x1, int y1, struct dl_img *img, struct derr *e)
{
	struct display_look lk;
	struct desk_shot q = { .task_id = d->o->task_id, .format = XCAP_PNG };
	struct xcap_image xi = { 0 };
	struct dl_res r = { 0 };
	json_object *meta = NULL;
	int region[4] = { x0, y0, x1, y1 }, sx0, sy0, sx1, sy1, rc;
	int64_t t0 = mono_us();

	memset(img, 0, sizeof *img);
	if (look_read(d, &lk, e) != 0)
		return -1;
	sx0 = clampi(lk.x + (int)lround((x0 < x1 ? x0 : x1) * lk.scale), 0, d->screen_w);
	sx1 = clampi(lk.x + (int)lround((x0 < x1 ? x1 : x0) * lk.scale), 0, d->screen_w);
	sy0 = clampi(lk.y + (int)lround((y0 < y1 ? y0 : y1) * lk.scale), 0, d->screen_h);
	sy1 = clampi(lk.y + (int)lround((y0 < y1 ? y1 : y0) * lk.scale), 0, d->screen_h);
	if (sx1 - sx0 < 1 || sy1 - sy0 < 1)
		return derr_set(e, DERR_INVALID, "region",
		    "the region [%d, %d, %d, %d] is empty on the screen", x0, y0, x1, y1);
	q.x = sx0;
	q.y = sy0;
	q.w = sx1 - sx0;
	q.h = sy1 - sy0;
	q.max_width = fit_width(q.w, q.h, budget_side(d), d->fam->max_pixels);
	rc = desktop_shot(d->app, &q, &xi, &meta, e);
	if (rc == 0) {
		char *b64 = b64_encode(xi.data, xi.len, NULL);

		json_object_object_add(meta, "image_b64", json_object_new_string(b64));
		free(b64);
		img_from_meta(meta, img);
		snprintf(r.line, sizeof r.line, "zoomed on %dx%d at (%d,%d): a %dx%d image", q.w, q.h,
		    q.x, q.y, img->w, img->h);
	}
	zoom_log(d, region, &q, meta, (double)(mono_us() - t0) / 1000.0, rc == 0 ? NULL : e);
	record(d, "zoom", &r, (double)(mono_us() - t0) / 1000.0, rc == 0 ? NULL : e);
	xcap_image_free(&xi);
	json_object_put(meta);
	return rc;
}

void
dl_img_free(struct dl_img *img)
{
	if (img == NULL)
		return;
	free(img->b64);
	img->b64 = NULL;
}

char *
dl_data_url(const struct dl_img *img)
{
	return xasprintf("data:image/png;base64,%s", img->b64);
}

int
dl_grid(struct dl *d, double gx, double gy, const char *fx, const char *fy, int *x, int *y,
    struct derr *e)
{
	if (!(gx >= 0 && gx <= 1000))
		return derr_set(e, DERR_INVALID, fx, "%s=%g is off Gemini's 0-1000 grid", fx, gx);
	if (!(gy >= 0 && gy <= 1000))
		return derr_set(e, DERR_INVALID, fy, "%s=%g is off Gemini's 0-1000 grid", fy, gy);
	if (dl_screen(d, e) != 0)
		return -1;
	*x = clampi((int)floor(gx * d->screen_w / 1000.0), 0, d->screen_w - 1);
	*y = clampi((int)floor(gy * d->screen_h / 1000.0), 0, d->screen_h - 1);
	return 0;
}

/* ---- keys ---- */

/* DOM / Playwright and OpenAI key names (lower case) to detm's. */
static const struct {
	const char *dom, *detm;
} key_alias[] = {
	{ "control", "ctrl" }, { "ctrl", "ctrl" }, { "shift", "shift" }, { "alt", "alt" },
	{ "option", "alt" }, { "meta", "super" }, { "cmd", "super" }, { "command", "super" },
	{ "super", "super" }, { "win", "super" }, { "windows", "super" }, { "os", "super" },
	{ "enter", "Return" }, { "return", "Return" }, { "esc", "Escape" }, { "escape", "Escape" },
	{ "backspace", "BackSpace" }, { "delete", "Delete" }, { "del", "Delete" }, { "tab", "Tab" },
	{ "space", "space" }, { " ", "space" }, { "spacebar", "space" },
	{ "arrowleft", "Left" }, { "arrowright", "Right" }, { "arrowup", "Up" },
	{ "arrowdown", "Down" }, { "left", "Left" }, { "right", "Right" }, { "up", "Up" },
	{ "down", "Down" }, { "pageup", "Prior" }, { "pagedown", "Next" }, { "home", "Home" },
	{ "end", "End" }, { "insert", "Insert" }, { "capslock", "Caps_Lock" },
	{ "+", "plus" }, { "/", "slash" }, { "divide", "slash" }, { "\\", "backslash" },
	{ "backslash", "backslash" },
};

int
dl_chord(const char *const *names, size_t n, const char *field, char *out, size_t cap,
    struct derr *e)
{
	size_t o = 0;

	out[0] = '\0';
	if (n == 0)
		return derr_set(e, DERR_INVALID, field, "no key given");
	for (size_t i = 0; i < n; i++) {
		const char *name = names[i], *use = name;
		char low[32], one[2];
		size_t len = strlen(name), k;
		int w;

		if (len == 0)
			return derr_set(e, DERR_INVALID, field, "an empty key name");
		for (k = 0; k < len && k + 1 < sizeof low; k++)
			low[k] = (char)tolower((unsigned char)name[k]);
		low[k] = '\0';
		for (k = 0; len < sizeof low && k < ARRAY_LEN(key_alias); k++)
			if (strcmp(low, key_alias[k].dom) == 0) {
				use = key_alias[k].detm;
				break;
			}
		/* ["CTRL", "A"]: the key a, not ctrl+shift+a. */
		if (use == name && len == 1 && n > 1 && isupper((unsigned char)name[0])) {
			one[0] = (char)tolower((unsigned char)name[0]);
			one[1] = '\0';
			use = one;
		}
		w = snprintf(out + o, cap - o, "%s%s", i ? "+" : "", use);
		if (w < 0 || (size_t)w >= cap - o)
			return derr_set(e, DERR_INVALID, field, "too many keys at once");
		o += (size_t)w;
	}
	return 0;
}

/* ---- the entry points ---- */

int
dialect_run(struct app *app, const char *dialect, json_object *body, const struct dialect_opts *o,
    struct dialect_out *out, struct derr *e)
{
	struct dl d = { .app = app, .o = o, .fam = family(dialect) };
	int rc;

	memset(out, 0, sizeof *out);
	if (d.fam == NULL)
		return derr_set(e, DERR_NOT_FOUND, "dialect", "no computer dialect '%.*s' "
		    "(anthropic, openai, gemini)", utf8_prec(dialect, 32), dialect);
	d.detm = json_object_new_array();
	rc = d.fam->run(&d, body, out, e);
	snprintf(out->verdicts, sizeof out->verdicts, "%s", d.verdicts);
	snprintf(out->error, sizeof out->error, "%s", d.error);
	if (rc != 0) {
		json_object_put(d.detm);
		json_object_put(out->answer);
		out->answer = NULL;
		return -1;
	}
	out->detm = d.detm;
	return 0;
}

int
dialect_look(struct app *app, const char *dialect, const struct dialect_opts *o, json_object **out,
    struct derr *e)
{
	struct dl d = { .app = app, .o = o, .fam = family(dialect) };
	struct dl_img img;
	json_object *r, *v;

	*out = NULL;
	if (d.fam == NULL)
		return derr_set(e, DERR_NOT_FOUND, "dialect", "no computer dialect '%.*s' "
		    "(anthropic, openai, gemini)", utf8_prec(dialect, 32), dialect);
	d.detm = json_object_new_array();
	if (dl_shot(&d, &img, e) != 0) {
		json_object_put(d.detm);
		return -1;
	}
	r = json_object_new_object();
	json_object_object_add(r, "dialect", json_object_new_string(d.fam->name));
	v = json_object_new_object();
	json_object_object_add(v, "width", json_object_new_int(img.w));
	json_object_object_add(v, "height", json_object_new_int(img.h));
	json_object_object_add(r, "image_size", v);
	v = json_object_new_object();
	json_object_object_add(v, "width", json_object_new_int(img.screen_w));
	json_object_object_add(v, "height", json_object_new_int(img.screen_h));
	json_object_object_add(r, "screen_size", v);
	json_object_object_add(r, "scale", json_object_new_double(round(img.scale * 10000) / 10000));
	d.fam->look(&d, &img, r);
	dl_img_free(&img);
	json_object_put(d.detm);
	*out = r;
	return 0;
}

void
dialect_out_free(struct dialect_out *out)
{
	if (out == NULL)
		return;
	json_object_put(out->answer);
	json_object_put(out->detm);
	out->answer = out->detm = NULL;
}
