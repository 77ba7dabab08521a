/*
 * dialect_gemini.c - Gemini's computer use on a detm display: its
 * predefined functions (click_at, type_text_at, scroll_document,
 * scroll_at, key_combination, drag_and_drop, hover_at, navigate, search,
 * go_back, go_forward, wait_5_seconds, open_web_browser), one table row
 * each, with coordinates on a 0-1000 grid over the screen (dl_grid).
 *
 * Takes: a FunctionCall ({name, args, id}), a Part ({functionCall}), an
 * array of either, a Content ({role, parts}) or a GenerateContentResponse
 * (its first candidate's content); parts that are not function calls are
 * skipped. Answers: the Content to append to `contents`:
 *   {role:"user", parts:[{functionResponse:{id (when the call had one),
 *    name, response:{output, effect} | {error}, parts:[{inlineData:
 *    {mimeType:"image/png", data}}]}}]}
 * A call after a failed one is answered {error: "Not executed: ..."}.
 *
 * The browser functions act through the focused browser's keys: navigate
 * is ctrl+L, the URL typed, Return; search opens https://www.google.com
 * that way (as Google's reference harness does); go_back / go_forward are
 * alt+Left / alt+Right. open_web_browser starts the first allowed browser
 * on a task's own display through desktop_launch (launch.h: its
 * allow-list, its log on the task), unless one the task launched runs
 * already; on the shared desktop it starts nothing. No URL is answered:
 * detm cannot read the browser's.
 *
 * Safety: a call whose args carry safety_decision {decision:
 * "require_confirmation"} runs only if the caller, having asked the user,
 * adds "safety_acknowledgement": true beside its args (on the
 * FunctionCall); else nothing of the request runs (DERR_CONFLICT). The
 * response then says safety_acknowledgement "true".
 *
 * Screenshots (dialect_opts.shots): AUTO answers every function response
 * with the screen after it, as the reference harness does.
 *
 * Does not: run input itself (dl_act), or talk HTTP.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "core/launchpol.h"
#include "core/proc.h"
#include "launch.h"
#include "dialect_int.h"

#define NOT_EXECUTED "Not executed: an earlier action in this turn failed."
#define SEARCH_URL "https://www.google.com"
#define MAGNITUDE_DEFAULT 800
#define DOC_SCROLL_CLICKS 10

struct gm_ctx {
	struct dl *d;
	json_object *args;      /* borrowed */
	char line[1024];        /* what happened, for response.output */
	char verdict[32];       /* the last input's verdict */
};

typedef int (*gm_fn)(struct gm_ctx *c, struct derr *e);

/* ---- helpers ---- */

static int
act(struct gm_ctx *c, const char *action, json_object *p, bool image_coords, struct derr *e)
{
	struct dl_res r;
	size_t n = strlen(c->line);

	if (dl_act(c->d, action, p, image_coords, &r, e) != 0)
		return -1;
	snprintf(c->line + n, sizeof c->line - n, "%s%s", n ? "; " : "", r.line);
	if (r.verdict[0])
		snprintf(c->verdict, sizeof c->verdict, "%s", r.verdict);
	dl_res_free(&r);
	return 0;
}

static int
keys(struct gm_ctx *c, const char *chord, struct derr *e)
{
	json_object *p = json_object_new_object();

	json_object_object_add(p, "keys", json_object_new_string(chord));
	return act(c, "press_key", p, false, e);
}

static int
type_text(struct gm_ctx *c, const char *text, struct derr *e)
{
	json_object *p;

	if (text[0] == '\0')
		return 0;
	p = json_object_new_object();
	json_object_object_add(p, "text", json_object_new_string(text));
	return act(c, "type", p, false, e);
}

/* args kx, ky on the grid to screen pixels. */
static int
point(struct gm_ctx *c, const char *kx, const char *ky, int *x, int *y, struct derr *e)
{
	double gx, gy;

	if (dl_num(c->args, kx, true, -1e9, 1e9, &gx, NULL, e) != 0 ||
	    dl_num(c->args, ky, true, -1e9, 1e9, &gy, NULL, e) != 0)
		return -1;
	return dl_grid(c->d, gx, gy, kx, ky, x, y, e);
}

static int
address_bar(struct gm_ctx *c, const char *url, struct derr *e)
{
	if (keys(c, "ctrl+l", e) != 0 || type_text(c, url, e) != 0)
		return -1;
	return keys(c, "Return", e);
}

/* ---- functions ---- */

static const char *const gm_browsers[] = { "chromium", "firefox-esr", "firefox" };

static const char *
sget(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : "";
}

/* A browser this task launched that still runs (its name in name), or NULL. */
static const char *
browser_running(const char *task_id, char *name, size_t cap)
{
	json_object *l = launch_list(task_id), *p;
	const char *prog = NULL, *base;

	for (size_t i = 0; l != NULL && i < json_object_array_length(l) && prog == NULL; i++) {
		p = json_object_array_get_idx(l, i);
		base = strrchr(sget(p, "program"), '/') ? strrchr(sget(p, "program"), '/') + 1 : sget(p, "program");
		for (size_t k = 0; k < ARRAY_LEN(gm_browsers) && prog == NULL; k++)
			if (strcmp(sget(p, "status"), "running") == 0 && strcmp(base, gm_browsers[k]) == 0) {
				snprintf(name, cap, "%s", base);
				prog = name;
			}
	}
	json_object_put(l);
	return prog;
}

/* open_web_browser: on a task display, the first allowed browser is
 * started through desktop_launch (its governance, its log), unless one
 * the task launched runs already. Never on the shared desktop. */
static int
f_open_browser(struct gm_ctx *c, struct derr *e)
{
	const char *tid = c->d->o->task_id;
	char why[256], name[64], path[512];
	json_object *out = NULL;
	struct launch_req q = { .task_id = tid, .wait_ms = LAUNCH_WAIT_DEFAULT_MS };

	if (tid == NULL) {
		snprintf(c->line, sizeof c->line, "nothing started: the shared desktop runs what its user "
		    "starts (a task with a display of its own can start a browser)");
		return 0;
	}
	if (browser_running(tid, name, sizeof name) != NULL) {
		snprintf(c->line, sizeof c->line, "the browser (%s) is open already", name);
		return 0;
	}
	if (!launchpol_enabled(c->d->app->cfg, why, sizeof why)) {
		snprintf(c->line, sizeof c->line, "nothing started: %s", why);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_LEN(gm_browsers) && q.command == NULL; i++)
		if (launchpol_listed(c->d->app->cfg, gm_browsers[i]) && proc_find(gm_browsers[i], path, sizeof path))
			q.command = gm_browsers[i];
	if (q.command == NULL)
		return derr_set(e, DERR_NOT_FOUND, "name", "open_web_browser: no browser on the "
		    "allow-list is installed (chromium, firefox-esr)");
	if (launch_start(c->d->app, &q, &out, e) != 0)
		return -1;
	snprintf(c->line, sizeof c->line, "%s", sget(out, "observation")[0] ? sget(out, "observation") : "started");
	json_object_put(out);
	return 0;
}

static int
f_wait5(struct gm_ctx *c, struct derr *e)
{
	struct dl_res r;

	if (dl_wait(c->d, 5000, &r, e) != 0)
		return -1;
	snprintf(c->line, sizeof c->line, "%s", r.line);
	return 0;
}

static int
f_back(struct gm_ctx *c, struct derr *e)
{
	return keys(c, "alt+Left", e);
}

static int
f_forward(struct gm_ctx *c, struct derr *e)
{
	return keys(c, "alt+Right", e);
}

static int
f_search(struct gm_ctx *c, struct derr *e)
{
	return address_bar(c, SEARCH_URL, e);
}

static int
f_navigate(struct gm_ctx *c, struct derr *e)
{
	const char *url = NULL;

	if (jx_str(c->args, "url", true, 1, 8192, &url, e) != 0)
		return -1;
	return address_bar(c, url, e);
}

static int
f_click(struct gm_ctx *c, struct derr *e)
{
	int x, y;

	if (point(c, "x", "y", &x, &y, e) != 0)
		return -1;
	return act(c, "click", dl_xy(x, y), false, e);
}

static int
f_hover(struct gm_ctx *c, struct derr *e)
{
	int x, y;

	if (point(c, "x", "y", &x, &y, e) != 0)
		return -1;
	return act(c, "mouse_move", dl_xy(x, y), false, e);
}

static int
f_type_at(struct gm_ctx *c, struct derr *e)
{
	const char *text = NULL;
	bool enter = true, clear = true;
	int x, y;

	/* Both default to true (absent leaves them). */
	if (point(c, "x", "y", &x, &y, e) != 0 ||
	    jx_str(c->args, "text", true, 0, 64 * 1024, &text, e) != 0 ||
	    jx_bool(c->args, "press_enter", &enter, NULL, e) != 0 ||
	    jx_bool(c->args, "clear_before_typing", &clear, NULL, e) != 0)
		return -1;
	if (act(c, "click", dl_xy(x, y), false, e) != 0)
		return -1;
	if (clear && keys(c, "ctrl+a BackSpace", e) != 0)
		return -1;
	if (type_text(c, text, e) != 0)
		return -1;
	return enter ? keys(c, "Return", e) : 0;
}

/* "Control+Shift+T", "Enter": Playwright's names, '+' between keys; a
 * '+' where a name starts is the key '+' ("Control++"). */
static int
f_keys(struct gm_ctx *c, struct derr *e)
{
	const char *k = NULL;
	const char *names[16];
	char buf[256], chord[256];
	size_t n = 0, i = 0;

	if (jx_str(c->args, "keys", true, 1, 200, &k, e) != 0)
		return -1;
	snprintf(buf, sizeof buf, "%s", k);
	while (buf[i] != '\0' && n < ARRAY_LEN(names)) {
		size_t start = i;

		if (buf[i] == '+') {
			names[n++] = "+";
			i += buf[i + 1] == '+' ? 2 : 1;
			continue;
		}
		while (buf[i] != '\0' && buf[i] != '+')
			i++;
		names[n++] = buf + start;
		if (buf[i] == '+')
			buf[i++] = '\0';
	}
	if (dl_chord(names, n, "keys", chord, sizeof chord, e) != 0)
		return -1;
	return keys(c, chord, e);
}

static int
f_scroll_doc(struct gm_ctx *c, struct derr *e)
{
	const char *dir = NULL;
	json_object *p;

	if (jx_str(c->args, "direction", true, 1, 8, &dir, e) != 0)
		return -1;
	if (strcmp(dir, "down") == 0)
		return keys(c, "Next", e);
	if (strcmp(dir, "up") == 0)
		return keys(c, "Prior", e);
	if (strcmp(dir, "left") != 0 && strcmp(dir, "right") != 0)
		return derr_set(e, DERR_INVALID, "direction", "direction must be up, down, left or right");
	p = json_object_new_object();
	json_object_object_add(p, "direction", json_object_new_string(dir));
	json_object_object_add(p, "amount", json_object_new_int(DOC_SCROLL_CLICKS));
	return act(c, "scroll", p, false, e);
}

static int
f_scroll_at(struct gm_ctx *c, struct derr *e)
{
	const char *dir = NULL;
	double mag = MAGNITUDE_DEFAULT, px;
	json_object *p;
	long clicks;
	int x, y;
	bool vertical;

	if (point(c, "x", "y", &x, &y, e) != 0 ||
	    jx_str(c->args, "direction", true, 1, 8, &dir, e) != 0 ||
	    dl_num(c->args, "magnitude", false, 0, 1000, &mag, NULL, e) != 0)
		return -1;
	vertical = strcmp(dir, "up") == 0 || strcmp(dir, "down") == 0;
	if (!vertical && strcmp(dir, "left") != 0 && strcmp(dir, "right") != 0)
		return derr_set(e, DERR_INVALID, "direction", "direction must be up, down, left or right");
	px = mag / 1000.0 * (vertical ? c->d->screen_h : c->d->screen_w);
	clicks = lround(px / DL_SCROLL_PX);
	p = dl_xy(x, y);
	json_object_object_add(p, "direction", json_object_new_string(dir));
	json_object_object_add(p, "amount", json_object_new_int(clicks < 1 ? 1 : clicks > 100 ? 100 :
	    (int)clicks));
	return act(c, "scroll", p, false, e);
}

static int
f_drag(struct gm_ctx *c, struct derr *e)
{
	json_object *p;
	int x, y, x2, y2;

	if (point(c, "x", "y", &x, &y, e) != 0 ||
	    point(c, "destination_x", "destination_y", &x2, &y2, e) != 0)
		return -1;
	p = dl_xy(x, y);
	json_object_object_add(p, "x2", json_object_new_int(x2));
	json_object_object_add(p, "y2", json_object_new_int(y2));
	return act(c, "drag", p, false, e);
}

static const struct {
	const char *name;
	gm_fn fn;
} functions[] = {
	{ "open_web_browser", f_open_browser }, { "wait_5_seconds", f_wait5 },
	{ "go_back", f_back }, { "go_forward", f_forward }, { "search", f_search },
	{ "navigate", f_navigate }, { "click_at", f_click }, { "hover_at", f_hover },
	{ "type_text_at", f_type_at }, { "key_combination", f_keys },
	{ "scroll_document", f_scroll_doc }, { "scroll_at", f_scroll_at },
	{ "drag_and_drop", f_drag },
};

/* ---- calls ---- */

/* The FunctionCall of a part or call object, or NULL. */
static json_object *
call_of(json_object *v)
{
	json_object *fc;

	if (!json_object_is_type(v, json_type_object))
		return NULL;
	if (json_object_object_get_ex(v, "functionCall", &fc) ||
	    json_object_object_get_ex(v, "function_call", &fc))
		return json_object_is_type(fc, json_type_object) ? fc : NULL;
	return json_object_object_get_ex(v, "name", NULL) ? v : NULL;
}

/* The list (parts or calls) body holds. */
static int
list_of(json_object *body, json_object **list, struct derr *e)
{
	json_object *v = body, *c;

	if (json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, "candidates", &c) &&
	    json_object_is_type(c, json_type_array) && json_object_array_length(c) > 0)
		v = json_object_object_get(json_object_array_get_idx(c, 0), "content");
	if (json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, "parts", &c) &&
	    json_object_is_type(c, json_type_array))
		v = c;
	if (json_object_is_type(v, json_type_array)) {
		*list = json_object_get(v);
		return 0;
	}
	if (call_of(v) != NULL) {
		*list = json_object_new_array();
		json_object_array_add(*list, json_object_get(v));
		return 0;
	}
	return derr_set(e, DERR_INVALID, NULL, "give a FunctionCall, a Part, an array of them, the "
	    "model's Content or the GenerateContentResponse");
}

/* The call needs the user's confirmation; *acked when the caller gave it. */
static bool
needs_confirmation(json_object *part, json_object *fc, bool *acked)
{
	json_object *sd, *v;
	const char *dec;

	*acked = false;
	if (!json_object_object_get_ex(json_object_object_get(fc, "args"), "safety_decision", &sd))
		return false;
	dec = json_object_get_string(json_object_object_get(sd, "decision"));
	if (dec == NULL || strcmp(dec, "require_confirmation") != 0)
		return false;
	if ((json_object_object_get_ex(fc, "safety_acknowledgement", &v) ||
	    json_object_object_get_ex(part, "safety_acknowledgement", &v)) &&
	    (json_object_get_boolean(v) || (json_object_is_type(v, json_type_string) &&
	    strcmp(json_object_get_string(v), "true") == 0)))
		*acked = true;
	return true;
}

static int
check_call(json_object *part, json_object *fc, size_t i, struct derr *e)
{
	json_object *v;
	bool acked;

	if (!json_object_object_get_ex(fc, "name", &v) || !json_object_is_type(v, json_type_string))
		return derr_set(e, DERR_INVALID, "name", "function call %zu has no name", i);
	if (json_object_object_get_ex(fc, "args", &v) && v != NULL &&
	    !json_object_is_type(v, json_type_object))
		return derr_set(e, DERR_INVALID, "args", "function call %zu: args must be an object", i);
	if (needs_confirmation(part, fc, &acked) && !acked)
		return derr_set(e, DERR_CONFLICT, "safety_decision", "%.*s needs the user's confirmation "
		    "(safety_decision require_confirmation): ask them, and send the call again with "
		    "\"safety_acknowledgement\": true if they agree",
		    utf8_prec(json_object_get_string(json_object_object_get(fc, "name")), 64),
		    json_object_get_string(json_object_object_get(fc, "name")));
	return 0;
}

static bool
shot_after(const struct dl *d, bool last)
{
	return d->o->shots == DIALECT_SHOTS_AUTO || d->o->shots == DIALECT_SHOTS_EACH ||
	    (d->o->shots == DIALECT_SHOTS_LAST && last);
}

static json_object *
response_part(json_object *fc, json_object *resp, const struct dl_img *img)
{
	json_object *part = json_object_new_object(), *fr = json_object_new_object(), *id;

	if (json_object_object_get_ex(fc, "id", &id) && json_object_is_type(id, json_type_string))
		json_object_object_add(fr, "id", json_object_get(id));
	json_object_object_add(fr, "name", json_object_get(json_object_object_get(fc, "name")));
	json_object_object_add(fr, "response", resp);
	if (img != NULL) {
		json_object *parts = json_object_new_array(), *p = json_object_new_object();
		json_object *blob = json_object_new_object();

		json_object_object_add(blob, "mimeType", json_object_new_string("image/png"));
		json_object_object_add(blob, "data", json_object_new_string(img->b64));
		json_object_object_add(p, "inlineData", blob);
		json_object_array_add(parts, p);
		json_object_object_add(fr, "parts", parts);
	}
	json_object_object_add(part, "functionResponse", fr);
	return part;
}

/* Runs one call (unless an earlier one failed); its response part goes
 * into parts. */
static void
run_call(struct dl *d, json_object *part, json_object *fc, bool last, json_object *parts,
    struct dialect_out *out)
{
	struct gm_ctx c = { .d = d, .args = json_object_object_get(fc, "args") };
	const char *name = json_object_get_string(json_object_object_get(fc, "name"));
	json_object *resp = json_object_new_object();
	struct dl_img img = { 0 };
	struct derr e = { 0 }, e2;
	bool acked, shot;
	size_t k;
	int rc = -1;

	out->calls++;
	if (d->failed) {
		json_object_object_add(resp, "error", json_object_new_string(NOT_EXECUTED));
		json_object_array_add(parts, response_part(fc, resp, NULL));
		out->failed++;
		return;
	}
	for (k = 0; k < ARRAY_LEN(functions) && strcmp(functions[k].name, name) != 0; k++)
		;
	if (k == ARRAY_LEN(functions))
		derr_set(&e, DERR_INVALID, "name", "detm has no computer function '%.*s'",
		    utf8_prec(name, 64), name);
	else
		rc = functions[k].fn(&c, &e);
	if (rc != 0) {
		dl_fail(d, name, &e);
		out->failed++;
		json_object_object_add(resp, "error", json_object_new_string(e.message));
	} else {
		json_object_object_add(resp, "output", json_object_new_string(c.line));
		if (c.verdict[0])
			json_object_object_add(resp, "effect", json_object_new_string(c.verdict));
	}
	if (needs_confirmation(part, fc, &acked) && acked)
		json_object_object_add(resp, "safety_acknowledgement", json_object_new_string("true"));
	shot = shot_after(d, last) && dl_shot(d, &img, &e2) == 0;
	json_object_array_add(parts, response_part(fc, resp, shot ? &img : NULL));
	dl_img_free(&img);
}

int
dl_gemini_run(struct dl *d, json_object *body, struct dialect_out *out, struct derr *e)
{
	json_object *list = NULL, *parts = json_object_new_array(), *content;
	size_t n, i, count = 0, last = 0;
	int rc = -1;

	if (list_of(body, &list, e) != 0)
		goto out;
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		json_object *pt = json_object_array_get_idx(list, i), *fc = call_of(pt);

		if (fc == NULL)
			continue;
		if (check_call(pt, fc, i, e) != 0)
			goto out;
		count++;
		last = i;
	}
	if (count == 0 || count > DL_CALLS_MAX) {
		derr_set(e, DERR_INVALID, NULL, count ? "at most %d function calls at once" :
		    "no function call in the body", DL_CALLS_MAX);
		goto out;
	}
	for (i = 0; i < n; i++) {
		json_object *pt = json_object_array_get_idx(list, i), *fc = call_of(pt);

		if (fc != NULL)
			run_call(d, pt, fc, i == last, parts, out);
	}
	content = json_object_new_object();
	json_object_object_add(content, "role", json_object_new_string("user"));
	json_object_object_add(content, "parts", parts);
	parts = NULL;
	out->answer = content;
	rc = 0;
out:
	json_object_put(list);
	json_object_put(parts);
	return rc;
}

int
dl_gemini_look(struct dl *d, const struct dl_img *img, json_object *out)
{
	json_object *part = json_object_new_object(), *blob = json_object_new_object();
	json_object *tool = json_object_new_object(), *cu = json_object_new_object();

	(void)d;
	json_object_object_add(blob, "mimeType", json_object_new_string("image/png"));
	json_object_object_add(blob, "data", json_object_new_string(img->b64));
	json_object_object_add(part, "inlineData", blob);
	json_object_object_add(out, "content", part);
	json_object_object_add(cu, "environment", json_object_new_string("ENVIRONMENT_BROWSER"));
	json_object_object_add(tool, "computerUse", cu);
	json_object_object_add(out, "tool", tool);
	return 0;
}
