/*
 * gui.c - the GUI agent (see gui.h): the capture -> ground -> act -> log
 * pipeline of gui_find and gui_do. Instruction parsing is gui_parse.c.
 *
 * Invariants: a lease is held only while capturing or acting, never while
 * a model is asked; a point reaches XTest only after it was checked to be
 * on the screen.
 *
 * Does not: parse instructions (gui_parse.c), know model wire formats
 * (ground.c) or HTTP (api_gui.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "desktop/desktop.h"
#include "desktop/effect.h"
#include "gui.h"
#include "gui_int.h"
#include "task/shots.h"
#include "task/usage.h"
#include "x11/a11y.h"
#include "x11/a11y_verify.h"
#include "x11/display.h"
#include "x11/xcap.h"
#include "x11/xinput.h"

#define GUI_THUMB_QUALITY 60

/* ---- the pipeline ---- */

struct shot {
	struct xcap_frame f;
	struct xcap_image img;
	int screen_w, screen_h;
	char display[16];
};

static double
ms_since(int64_t t0)
{
	return (double)(mono_us() - t0) / 1000.0;
}

static json_object *
size_json(int w, int h)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "width", json_object_new_int(w));
	json_object_object_add(o, "height", json_object_new_int(h));
	return o;
}

static json_object *
num3(double v)
{
	char s[32];

	snprintf(s, sizeof s, "%.3f", v);
	return json_object_new_double_s(round(v * 1000) / 1000, s);
}

/* The grounding screenshot, on a held lease: longest side at most
 * grounding_max_dim (claude_cu: 1280, where its computer tool is accurate). */
static int
capture(struct app *app, struct display_lease *l, struct shot *s, struct derr *e)
{
	const struct config *cfg = app->cfg;
	struct xcap_req q = { 0 };
	long dim = ground_max_dim(cfg);

	q.max_width = l->width >= l->height ? (int)dim : (int)(dim * l->width / l->height);
	if (q.max_width >= l->width)
		q.max_width = 0;
	q.format = XCAP_JPEG;
	q.quality = (int)cfg->grounding_quality;
	if (xcap_grab(l->cap, &q, &s->f, e) != 0)
		return -1;
	return xcap_encode(&s->f, XCAP_JPEG, q.quality, &s->img, e);
}

/* Grounds desc on the shot and maps the answer to the screen. *g (caller
 * owns) describes it; on a model error *g still says what came back. */
static int
ground_on(struct app *app, const struct shot *s, const char *desc, int *sx, int *sy,
    json_object **g, double *ground_ms, struct derr *e)
{
	struct ground_req q = { .description = desc, .jpeg = s->img.data, .len = s->img.len,
		.width = s->f.width, .height = s->f.height };
	struct ground_result r;
	double kx = (double)s->f.src_w / s->f.width, ky = (double)s->f.src_h / s->f.height;
	int64_t t0 = mono_us();
	json_object *o = json_object_new_object(), *pt;
	int rc;

	rc = ground_run(app->cfg, &q, &r, e);
	*ground_ms += ms_since(t0);
	json_object_object_add(o, "target", json_object_new_string(desc));
	json_object_object_add(o, "backend", json_object_new_string(r.backend));
	json_object_object_add(o, "provider", json_object_new_string(r.provider));
	json_object_object_add(o, "model", json_object_new_string(r.model));
	json_object_object_add(o, "raw", json_object_new_string(r.raw));
	json_object_object_add(o, "image_size", size_json(s->f.width, s->f.height));
	json_object_object_add(o, "screen_size", size_json(s->screen_w, s->screen_h));
	json_object_object_add(o, "scale", num3(s->f.scale));
	json_object_object_add(o, "model_ms", num3((double)r.latency_us / 1000.0));
	*g = o;
	if (rc != 0)
		return -1;
	pt = json_object_new_object();
	json_object_object_add(pt, "x", num3(r.x));
	json_object_object_add(pt, "y", num3(r.y));
	json_object_object_add(o, "image_point", pt);
	*sx = s->f.src_x + (int)lround(r.x * kx);
	*sy = s->f.src_y + (int)lround(r.y * ky);
	json_object_object_add(o, "x", json_object_new_int(*sx));
	json_object_object_add(o, "y", json_object_new_int(*sy));
	if (r.has_box) {
		json_object *b = json_object_new_object();

		json_object_object_add(b, "x1", json_object_new_int(s->f.src_x + (int)lround(r.box[0] * kx)));
		json_object_object_add(b, "y1", json_object_new_int(s->f.src_y + (int)lround(r.box[1] * ky)));
		json_object_object_add(b, "x2", json_object_new_int(s->f.src_x + (int)lround(r.box[2] * kx)));
		json_object_object_add(b, "y2", json_object_new_int(s->f.src_y + (int)lround(r.box[3] * ky)));
		json_object_object_add(o, "box", b);
	}
	if (r.confidence >= 0)
		json_object_object_add(o, "confidence", num3(r.confidence));
	if (r.element[0] != '\0')
		json_object_object_add(o, "element", json_object_new_string(r.element));
	if (*sx < 0 || *sy < 0 || *sx >= s->screen_w || *sy >= s->screen_h)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "%s answered '%.*s', which maps to (%d, %d), "
		    "off the %dx%d screen; nothing was done", r.backend, utf8_prec(r.raw, 200),
		    r.raw, *sx, *sy,
		    s->screen_w, s->screen_h);
	return 0;
}

/* One gui action row on the task; failures are logged, never fatal. */
static void
log_gui(struct app *app, const char *task_id, const char *tool, const char *text,
    json_object *result, const struct derr *err, double ms)
{
	json_object *in = json_object_new_object(), *out = json_object_new_object();
	char summary[400];
	const char *backend = "direct", *model = "";
	json_object *v;

	if (task_id == NULL)
		goto out;
	json_object_object_add(in, "tool", json_object_new_string(tool));
	json_object_object_add(in, tool[4] == 'f' ? "description" : "instruction",
	    json_object_new_string(text));
	if (result != NULL) {
		json_object_object_foreach(result, k, val) {
			if (strcmp(k, "after") != 0 && strcmp(k, "observed") != 0)
				json_object_object_add(out, k, json_object_get(val));
		}
		desktop_log_observed(out, json_object_object_get(result, "observed"));
		/* The after-screenshot is kept as a file, not in the row. */
		if (json_object_object_get_ex(result, "after", &v) &&
		    json_object_object_get_ex(v, "url", &v))
			json_object_object_add(out, "screenshot", json_object_get(v));
		if (json_object_object_get_ex(result, "backend", &v))
			backend = json_object_get_string(v);
		if (json_object_object_get_ex(result, "model", &v) && v != NULL)
			model = json_object_get_string(v);
	}
	if (err != NULL)
		derr_add_json(out, err);
	if (err == NULL)
		snprintf(summary, sizeof summary, "%s (%s%s%s): %.*s", tool, backend, model[0] ? " " : "",
		    model, utf8_prec(json_object_get_string(json_object_object_get(result,
		    "observation")), 300), json_object_get_string(json_object_object_get(result, "observation")));
	else
		snprintf(summary, sizeof summary, "%s (%s) failed: %.*s", tool, backend,
		    utf8_prec(err->message, 300), err->message);
	desktop_log(app, task_id, tool, summary, err == NULL, in, out, ms);
out:
	json_object_put(in);
	json_object_put(out);
}

/* What the accessibility tree said about a target (the result's "tree"). */
static json_object *
tree_json(const struct tree_pick *p, bool matched)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "matched", json_object_new_boolean(matched));
	if (!matched)
		jx_add_str(o, "why", p->why);
	json_object_object_add(o, "ms", num3(p->ms));
	return o;
}

/* gui_find through the task display's tree: the reply, or NULL (p->why
 * says why, and vision takes over). "element" is the tree's element (an
 * object; a vision backend's "element" is the text it named, a string,
 * which is why gui_find's outputSchema does not declare it). */
static json_object *
find_tree(const char *task_id, const char *description, struct tree_pick *p, int64_t t0)
{
	int number = display_task_number(task_id);
	json_object *g, *timing;
	char obs[160], name[16];

	if (tree_ground(number, description, p) != 1)
		return NULL;
	snprintf(name, sizeof name, ":%d", number);
	g = json_object_new_object();
	jx_add_str(g, "target", description);
	jx_add_str(g, "grounded_by", "accessibility");
	jx_add_str(g, "backend", "accessibility");
	json_object_object_add(g, "model", NULL);
	json_object_object_add(g, "x", json_object_new_int(p->x));
	json_object_object_add(g, "y", json_object_new_int(p->y));
	json_object_object_add(g, "scale", num3(1));
	json_object_object_add(g, "element", p->element);
	json_object_object_add(g, "tree", tree_json(p, true));
	jx_add_str(g, "display", name);
	timing = json_object_new_object();
	json_object_object_add(timing, "ground_ms", num3(p->ms));
	json_object_object_add(timing, "total_ms", num3(ms_since(t0)));
	json_object_object_add(g, "timing", timing);
	snprintf(obs, sizeof obs, "found at (%d,%d) in the accessibility tree", p->x, p->y);
	jx_add_str(g, "observation", obs);
	p->element = NULL;
	return g;
}

int
gui_find(struct app *app, const char *task_id, const char *description,
    json_object **out, struct derr *e)
{
	struct display_lease l;
	struct shot s;
	json_object *g = NULL, *timing;
	int64_t t0 = mono_us();
	double cap_ms, ground_ms = 0;
	struct tree_pick tp;
	int x, y, rc = -1;

	memset(&s, 0, sizeof s);
	*out = NULL;
	if (strlen(description) > GROUND_MAX_DESCRIPTION)
		return derr_set(e, DERR_INVALID, "description", "description is over %d bytes",
		    GROUND_MAX_DESCRIPTION);
	if ((*out = find_tree(task_id, description, &tp, t0)) != NULL) {
		log_gui(app, task_id, "gui_find", description, *out, NULL, ms_since(t0));
		return 0;
	}
	if (!ground_has_model(app->cfg))
		return derr_set(e, DERR_INVALID, "description", "the accessibility tree did not find "
		    "'%.*s' (%s) and the direct backend has no model to find it; start detmd with "
		    "ACU_GUI_AGENT_BACKEND=uitars, claude_cu or omniparser (gui_do accepts explicit "
		    "coordinates: %s)", utf8_prec(description, 100), description, tp.why, GUI_FORMS);
	if (usage_scope(task_id, "ground", e) != 0)     /* usage.h: the task's model calls, its budget */
		return -1;
	if (desktop_lease_agent(app, task_id, false, &l, e) != 0)
		return -1;
	s.screen_w = l.width;
	s.screen_h = l.height;
	snprintf(s.display, sizeof s.display, "%s", l.name);
	rc = capture(app, &l, &s, e);
	display_unlease(&l);
	cap_ms = ms_since(t0);
	if (rc != 0)
		goto out;
	rc = ground_on(app, &s, description, &x, &y, &g, &ground_ms, e);
	if (g == NULL)
		goto out;
	json_object_object_add(g, "display", json_object_new_string(s.display));
	jx_add_str(g, "grounded_by", app->cfg->gui_backend);
	json_object_object_add(g, "tree", tree_json(&tp, false));
	timing = json_object_new_object();
	json_object_object_add(timing, "capture_ms", num3(cap_ms));
	json_object_object_add(timing, "ground_ms", num3(ground_ms));
	json_object_object_add(timing, "total_ms", num3(ms_since(t0)));
	json_object_object_add(g, "timing", timing);
	if (rc == 0) {
		char obs[128];

		snprintf(obs, sizeof obs, "found at (%d,%d)", x, y);
		json_object_object_add(g, "observation", json_object_new_string(obs));
	}
out:
	log_gui(app, task_id, "gui_find", description, g, rc == 0 ? NULL : e, ms_since(t0));
	if (rc == 0)
		*out = g;
	else
		json_object_put(g);
	xcap_image_free(&s.img);
	xcap_frame_free(&s.f);
	return rc;
}

static int
check_point(const struct display_lease *l, const char *what, int x, int y, struct derr *e)
{
	if (x < 0 || y < 0 || x >= l->width || y >= l->height)
		return derr_set(e, DERR_INVALID, "instruction", "%s (%d, %d) is off screen (the screen "
		    "%s is %dx%d; x 0..%d, y 0..%d); nothing was done", what, x, y, l->name, l->width,
		    l->height, l->width - 1, l->height - 1);
	return 0;
}

/* Performs c on a held lease; fills r and obs. */
static int
act(struct display_lease *l, const struct gui_cmd *c, json_object *r, char *obs, size_t obslen,
    struct derr *e)
{
	int x = c->x, y = c->y, button = 1, count = 1;
	size_t sent = 0;
	char where[260];

	switch (c->verb) {
	case GUI_CLICK: case GUI_DOUBLE_CLICK: case GUI_RIGHT_CLICK: case GUI_MIDDLE_CLICK:
		button = c->verb == GUI_RIGHT_CLICK ? 3 : c->verb == GUI_MIDDLE_CLICK ? 2 : 1;
		count = c->verb == GUI_DOUBLE_CLICK ? 2 : 1;
		if (c->at ? xinput_click_at(l->d, x, y, button, count, e) != 0 :
		    xinput_pointer(l->d, &x, &y, e) != 0 || xinput_click(l->d, button, count, e) != 0)
			return -1;
		json_object_object_add(r, "button", json_object_new_int(button));
		json_object_object_add(r, "clicks", json_object_new_int(count));
		snprintf(obs, obslen, "%s (%d, %d)", count == 2 ? "double-clicked" : button == 3 ?
		    "right-clicked" : button == 2 ? "middle-clicked" : "clicked", x, y);
		break;
	case GUI_MOVE:
		if (xinput_move(l->d, x, y, e) != 0)
			return -1;
		snprintf(obs, obslen, "moved the pointer to (%d, %d)", x, y);
		break;
	case GUI_TYPE:
		if (c->at && xinput_click_at(l->d, x, y, 1, 1, e) != 0)
			return -1;
		desktop_key_focus(l->d, r, "into", where, sizeof where);
		if (xinput_type(l->d, c->text, strlen(c->text), &sent, e) != 0)
			return -1;
		json_object_object_add(r, "chars", json_object_new_int64((int64_t)utf8_chars(c->text)));
		json_object_object_add(r, "chars_sent", json_object_new_int64((int64_t)sent));
		if (c->at)
			snprintf(obs, obslen, "clicked (%d, %d) and typed %zu characters%s", x, y,
			    utf8_chars(c->text), where);
		else
			snprintf(obs, obslen, "typed %zu characters%s", utf8_chars(c->text), where);
		break;
	case GUI_PRESS:
		desktop_key_focus(l->d, r, "in", where, sizeof where);
		if (xinput_keys(l->d, c->text, e) != 0)
			return -1;
		json_object_object_add(r, "keys", json_object_new_string(c->text));
		snprintf(obs, obslen, "pressed %.*s%s", utf8_prec(c->text, 100), c->text, where);
		break;
	case GUI_SCROLL:
		if (c->at && xinput_move(l->d, x, y, e) != 0)
			return -1;
		if (!c->at && xinput_pointer(l->d, &x, &y, e) != 0)
			return -1;
		if (xinput_scroll(l->d, c->dir, c->amount, e) != 0)
			return -1;
		json_object_object_add(r, "direction", json_object_new_string(c->dir));
		json_object_object_add(r, "amount", json_object_new_int(c->amount));
		snprintf(obs, obslen, "scrolled %s by %d at (%d, %d)", c->dir, c->amount, x, y);
		break;
	case GUI_DRAG:
		if (xinput_drag(l->d, x, y, c->x2, c->y2, 1, e) != 0)
			return -1;
		json_object_object_add(r, "x2", json_object_new_int(c->x2));
		json_object_object_add(r, "y2", json_object_new_int(c->y2));
		snprintf(obs, obslen, "dragged from (%d, %d) to (%d, %d)", x, y, c->x2, c->y2);
		break;
	}
	if (c->verb != GUI_PRESS && (c->at || c->verb <= GUI_MIDDLE_CLICK || c->verb == GUI_SCROLL)) {
		json_object_object_add(r, "x", json_object_new_int(x));
		json_object_object_add(r, "y", json_object_new_int(y));
	}
	return 0;
}

/* A small after-screenshot: JPEG <= GUI_THUMB_WIDTH px wide, base64. */
static json_object *
thumb(struct display_lease *l, const char *task_id, struct derr *e)
{
	struct xcap_req q = { .max_width = GUI_THUMB_WIDTH, .quality = GUI_THUMB_QUALITY,
		.format = XCAP_JPEG };
	struct xcap_frame f = { 0 };
	struct xcap_image img = { 0 };
	json_object *o = NULL;
	char *b64, url[SHOTS_URL_LEN];

	if (xcap_shot(l->cap, &q, &f, &img, e) == 0) {
		o = size_json(f.width, f.height);
		b64 = b64_encode(img.data, img.len, NULL);
		json_object_object_add(o, "media_type", json_object_new_string(img.mime));
		json_object_object_add(o, "scale", num3(f.scale));
		json_object_object_add(o, "image_b64", json_object_new_string(b64));
		free(b64);
		if (task_id != NULL && shots_save(task_id, img.data, img.len, url) == 0)
			json_object_object_add(o, "url", json_object_new_string(url));
	}
	xcap_image_free(&img);
	xcap_frame_free(&f);
	return o;
}

/* Step 1 of gui_do: parse the instruction and decide what needs grounding
 * (*need1: the target, *need2: a drag's end). */
static int
do_parse(const char *instruction, struct gui_cmd *c, json_object *r, bool *need1, bool *need2,
    struct derr *e)
{
	if (gui_parse(instruction, c, e) != 0)
		return -1;
	json_object_object_add(r, "action", json_object_new_string(gui_verb_name(c->verb)));
	*need1 = !c->at && c->target[0] != '\0';
	*need2 = c->verb == GUI_DRAG && !c->at2 && c->target2[0] != '\0';
	return 0;
}

/* Step 1b: targets in words through the task display's accessibility
 * tree, no model; each one it grounds is one need less. *el: the first
 * target's element (caller owns). What is left needs a model: refused
 * here (DERR_INVALID) when there is none. */
static int
do_tree(struct app *app, int number, struct gui_cmd *c, bool *need1, bool *need2, json_object *r,
    json_object **el, double *tree_ms, struct derr *e)
{
	struct tree_pick p = { 0 };
	bool tried = *need1 || *need2, ok1 = false;

	if (*need1 && (ok1 = tree_ground(number, c->target, &p) == 1)) {
		c->x = p.x;
		c->y = p.y;
		c->at = true;
		*need1 = false;
		*el = p.element;
		json_object_object_add(r, "element", json_object_get(p.element));
	}
	if (*need1 || !*need2) {
		if (tried)
			json_object_object_add(r, "tree", tree_json(&p, ok1));
	} else {
		struct tree_pick p2;

		if (tree_ground(number, c->target2, &p2) == 1) {
			c->x2 = p2.x;
			c->y2 = p2.y;
			c->at2 = true;
			*need2 = false;
			json_object_object_add(r, "element_end", p2.element);
		}
		json_object_object_add(r, "tree", tree_json(&p2, !*need2));
		p = p2;
	}
	*tree_ms = p.ms;
	if (tried && !*need1 && !*need2) {
		jx_add_str(r, "grounded_by", "accessibility");
		jx_add_str(r, "backend", "accessibility");
	}
	if ((*need1 || *need2) && !ground_has_model(app->cfg))
		return derr_set(e, DERR_INVALID, "instruction", "the accessibility tree did not find "
		    "'%.*s' (%s) and the direct backend needs coordinates for it: use %s, or start detmd "
		    "with ACU_GUI_AGENT_BACKEND=uitars, claude_cu or omniparser",
		    utf8_prec(*need1 ? c->target : c->target2, 100), *need1 ? c->target : c->target2,
		    p.why, GUI_FORMS);
	return 0;
}

/* The lease again after it was let go: the same display, the same size,
 * else DERR_CONFLICT; a human who took over meanwhile is 409 human_control
 * (the gate is checked under the lease). */
static int
lease_again(struct app *app, const char *task_id, struct display_lease *l, bool *leased,
    const struct shot *s, struct derr *e)
{
	if (desktop_lease_agent(app, task_id, true, l, e) != 0)
		return -1;
	*leased = true;
	if (strcmp(l->name, s->display) != 0 || l->width != s->screen_w || l->height != s->screen_h)
		return derr_set(e, DERR_CONFLICT, "task_id", "the display changed while grounding "
		    "(%s %dx%d, now %s %dx%d); nothing was done", s->display, s->screen_w, s->screen_h,
		    l->name, l->width, l->height);
	return 0;
}

/* Step 2 of gui_do: capture the leased display, let go of it while the
 * model grounds the target(s) into c's coordinates, and lease it again;
 * a display that changed meanwhile is DERR_CONFLICT. *leased says whether
 * l is held on return (whatever happened). */
static int
do_ground(struct app *app, const char *task_id, struct display_lease *l, bool *leased,
    struct shot *s, struct gui_cmd *c, bool need1, bool need2, json_object *r,
    double *cap_ms, double *ground_ms, struct derr *e)
{
	int64_t t1 = mono_us();
	json_object *g1 = NULL, *g2 = NULL;
	int rc;

	if (capture(app, l, s, e) != 0)
		return -1;
	*cap_ms = ms_since(t1);
	display_unlease(l);
	*leased = false;
	json_object_object_add(r, "backend", json_object_new_string(app->cfg->gui_backend));
	jx_add_str(r, "grounded_by", app->cfg->gui_backend);
	json_object_object_add(r, "model", json_object_new_string(ground_model(app->cfg)));
	if (need1) {
		rc = ground_on(app, s, c->target, &c->x, &c->y, &g1, ground_ms, e);
		json_object_object_add(r, "grounding", g1);
		if (rc != 0)
			return -1;
		json_object_object_add(r, "model", json_object_get(json_object_object_get(g1, "model")));
		c->at = true;
	}
	if (need2) {
		rc = ground_on(app, s, c->target2, &c->x2, &c->y2, &g2, ground_ms, e);
		json_object_object_add(r, "grounding_end", g2);
		if (rc != 0)
			return -1;
		c->at2 = true;
	}
	return lease_again(app, task_id, l, leased, s, e);
}

static json_object *
timing_json(double cap_ms, double ground_ms, double act_ms, double total_ms)
{
	json_object *t = json_object_new_object();

	json_object_object_add(t, "capture_ms", num3(cap_ms));
	json_object_object_add(t, "ground_ms", num3(ground_ms));
	json_object_object_add(t, "act_ms", num3(act_ms));
	json_object_object_add(t, "total_ms", num3(total_ms));
	return t;
}

/* The preparation of c's input for a watch (effect.h): the pointer to its
 * point (a move is itself the input), and for a press the focus to the
 * window there (a focus that moved lengthens fx's baseline). *px, *py: the
 * input's point, or -1. */
static int
act_prepare(struct display_lease *l, const struct gui_cmd *c, struct effect *fx, int *px, int *py,
    struct derr *e)
{
	int moved;

	bool press = c->verb <= GUI_MIDDLE_CLICK || c->verb == GUI_DRAG || (c->verb == GUI_TYPE && c->at);
	bool pointer = c->verb <= GUI_MOVE || c->verb == GUI_SCROLL || c->verb == GUI_DRAG ||
	    (c->verb == GUI_TYPE && c->at);

	*px = *py = -1;
	if (!pointer)
		return 0;
	if (c->at) {
		*px = c->x;
		*py = c->y;
	} else if (xinput_pointer(l->d, px, py, e) != 0)
		return -1;
	if (c->at && c->verb != GUI_MOVE) {
		int ox = -1, oy = -1;

		if (xinput_pointer(l->d, &ox, &oy, e) != 0 || xinput_move(l->d, c->x, c->y, e) != 0)
			return -1;
		if (ox != c->x || oy != c->y)
			effect_prep_changed(fx, false); /* hover highlights fade in */
	}
	if (!press)
		return 0;
	if ((moved = xinput_focus_pointer(l->d, e)) < 0)
		return -1;
	if (moved == 1)
		effect_prep_changed(fx, true);
	return 0;
}

static bool
has_actions(json_object *el)
{
	json_object *a = json_object_object_get(el, "actions");

	return a != NULL && json_object_array_length(a) > 0;
}

/* The verdict's first words: the observation, capitalised. */
static void
did_of(json_object *r, char *out, size_t len)
{
	const char *obs = json_object_get_string(json_object_object_get(r, "observation"));

	snprintf(out, len, "%s", obs != NULL ? obs : "Acted");
	if (out[0] >= 'a' && out[0] <= 'z')
		out[0] = (char)(out[0] - 'a' + 'A');
}

/* The compatibility fields of the verdict: "verified" (true confirmed,
 * false suspected_noop, null unverifiable) and "verification". */
static void
verdict_compat(json_object *r)
{
	json_object *v = json_object_new_object(), *ev = json_object_object_get(r, "evidence");
	const char *fx = json_object_get_string(json_object_object_get(r, "effect"));

	json_object_object_add(r, "verified", effect_verified(r));
	jx_add_str(v, "result", fx == NULL ? "unknown" : strcmp(fx, "confirmed") == 0 ? "hit" :
	    strcmp(fx, "suspected_noop") == 0 ? "miss" : "unknown");
	jx_add_str(v, "reason", json_object_get_string(json_object_object_get(ev, "summary")));
	jx_add_str(v, "effect", fx);
	json_object_object_add(v, "ms", json_object_get(json_object_object_get(ev, "watched_ms")));
	json_object_object_add(r, "verification", v);
}

/* Step 3: act through XTest on the held lease, or, for a left click on a
 * tree-grounded element that a window with no tree covers, through the
 * element's own action; either way watched (effect.h) on the lease. */
static int
do_act(int number, struct display_lease *l, struct gui_cmd *c, json_object *el,
    const struct effect_opts *fxo, json_object *r, struct derr *e)
{
	struct click_check k = { .number = number, .x = c->x, .y = c->y };
	struct effect *fx = NULL;
	json_object *res = NULL;
	char obs[300] = "", did[320];
	const char *how;
	int64_t t0 = mono_us();
	int px, py, rc = -1;

	if (el != NULL && c->verb == GUI_CLICK)
		verify_xtop(&k, l->d);
	if (effect_start(&fx, l, fxo, e) != 0)
		return -1;
	if (!(el != NULL && c->verb == GUI_CLICK && verify_covered(&k, el) && has_actions(el))) {
		if ((fx != NULL && (act_prepare(l, c, fx, &px, &py, e) != 0 || effect_ready(fx, l, px, py, e) != 0)) ||
		    act(l, c, r, obs, sizeof obs, e) != 0)
			goto out;
		jx_add_str(r, "acted_by", "xtest");
		jx_add_str(r, "observation", obs);
	} else {
		/* under the lease, so a takeover (which drains it) never lands between */
		if (effect_ready(fx, l, c->x, c->y, e) != 0 || a11y_action(number, el, &res, e) != 0)
			goto out;
		how = json_object_get_string(json_object_object_get(res, "action"));
		jx_add_str(r, "acted_by", "accessibility action");
		snprintf(obs, sizeof obs, "ran the %s's own \"%s\" action (the window \"%.100s\" covers it)",
		    json_object_get_string(json_object_object_get(el, "role")), how ? how : "?", k.xtop);
		jx_add_str(r, "observation", obs);
		json_object_object_add(r, "x", json_object_new_int(c->x));
		json_object_object_add(r, "y", json_object_new_int(c->y));
	}
	did_of(r, did, sizeof did);
	effect_judge(fx, l, did, r);
	verdict_compat(r);
	rc = 0;
out:
	if (fx == NULL)
		effect_mark_unwatched(l, t0);
	effect_free(fx, l);
	json_object_put(res);
	return rc;
}

int
gui_do(struct app *app, const char *task_id, const char *instruction, bool after_shot,
    json_object *opts, json_object **out, struct derr *e)
{
	struct gui_cmd *c = calloc(1, sizeof *c);
	struct display_lease l;
	struct shot s;
	struct effect_opts fxo;
	bool leased = false, need1 = false, need2 = false;
	struct derr ae;
	json_object *r = json_object_new_object(), *after, *el = NULL;
	int64_t t0 = mono_us(), t1;
	double cap_ms = 0, ground_ms = 0, act_ms = 0;
	int number = display_task_number(task_id);
	int rc = -1;

	memset(&s, 0, sizeof s);
	*out = NULL;
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	json_object_object_add(r, "instruction", json_object_new_string(instruction));
	json_object_object_add(r, "backend", json_object_new_string("direct"));
	json_object_object_add(r, "model", NULL);
	if (c == NULL) {
		derr_set(e, DERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (effect_opts_parse(opts, &fxo, e) != 0 || do_parse(instruction, c, r, &need1, &need2, e) != 0 ||
	    do_tree(app, number, c, &need1, &need2, r, &el, &ground_ms, e) != 0 ||
	    ((need1 || need2) && usage_scope(task_id, "ground", e) != 0) ||  /* usage.h */
	    desktop_lease_agent(app, task_id, true, &l, e) != 0)
		goto out;
	leased = true;
	s.screen_w = l.width;
	s.screen_h = l.height;
	snprintf(s.display, sizeof s.display, "%s", l.name);
	json_object_object_add(r, "display", json_object_new_string(l.name));
	json_object_object_add(r, "screen_size", size_json(l.width, l.height));
	if ((c->at && check_point(&l, c->verb == GUI_DRAG ? "the drag start" : "the point",
	    c->x, c->y, e) != 0) || (c->at2 && check_point(&l, "the drag end", c->x2, c->y2, e) != 0))
		goto out;
	if ((need1 || need2) && do_ground(app, task_id, &l, &leased, &s, c, need1, need2, r, &cap_ms,
	    &ground_ms, e) != 0)
		goto out;
	json_object_object_add(r, "grounded", json_object_new_boolean(el != NULL || need1 || need2 ||
	    json_object_object_get(r, "element_end") != NULL));
	t1 = mono_us();
	if (do_act(number, &l, c, el, &fxo, r, e) != 0)
		goto out;
	act_ms = ms_since(t1);
	/* the picture after: none if a human took over meanwhile (ae: not an
	 * error of the step, which is done) */
	if (after_shot && (leased || desktop_lease_agent(app, task_id, false, &l, &ae) == 0)) {
		leased = true;
		if ((after = thumb(&l, task_id, e)) != NULL)
			json_object_object_add(r, "after", after);
	}
	if (leased)
		display_unlease(&l);
	leased = false;
	json_object_object_add(r, "timing", timing_json(cap_ms, ground_ms, act_ms, ms_since(t0)));
	rc = 0;
out:
	if (leased)
		display_unlease(&l);
	json_object_put(el);
	log_gui(app, task_id, "gui_do", instruction, r, rc == 0 ? NULL : e, ms_since(t0));
	if (rc == 0)
		*out = r;
	else
		json_object_put(r);
	xcap_image_free(&s.img);
	xcap_frame_free(&s.f);
	free(c);
	return rc;
}
