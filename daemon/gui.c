/*
 * gui.c - the GUI agent (see gui.h): instruction parsing, grounding
 * requests and their parsing, coordinate mapping, acting, logging.
 *
 * Order of one gui_do: parse; if a target must be found, lease the
 * display, grab at ACU_GROUNDING_MAX_DIM, give the lease back, ask the
 * backend (no lock held), parse its answer into image pixels, map them to
 * the screen (x = region.x + ix * scale); lease again and act through
 * XTest; grab a 320 px thumbnail of the result; log one `gui` action on
 * the task with the backend, model, scale and coordinates.
 *
 * Does not: retry a model (the agent decides), or keep state between calls.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "desktop.h"
#include "display.h"
#include "gui.h"
#include "httpc.h"
#include "jx.h"
#include "log.h"
#include "task.h"
#include "xcap.h"
#include "xinput.h"

#define GROUND_TIMEOUT_MS 60000
#define AFTER_WIDTH 320

/* ---- parsing ---- */

static const struct { const char *name; enum gui_verb verb; } verbs[] = {
	{ "double_click", GUI_DOUBLE }, { "double click", GUI_DOUBLE }, { "doubleclick", GUI_DOUBLE },
	{ "right_click", GUI_RIGHT }, { "right click", GUI_RIGHT }, { "rightclick", GUI_RIGHT },
	{ "middle_click", GUI_MIDDLE }, { "middle click", GUI_MIDDLE },
	{ "left_click", GUI_CLICK }, { "left click", GUI_CLICK }, { "click", GUI_CLICK },
	{ "tap", GUI_CLICK }, { "select", GUI_CLICK }, { "open", GUI_DOUBLE },
	{ "mouse_move", GUI_MOVE }, { "move to", GUI_MOVE }, { "move", GUI_MOVE }, { "hover over", GUI_MOVE },
	{ "hover", GUI_MOVE }, { "drag", GUI_DRAG }, { "type", GUI_TYPE }, { "write", GUI_TYPE },
	{ "press", GUI_KEY }, { "hotkey", GUI_KEY }, { "key", GUI_KEY }, { "scroll", GUI_SCROLL },
};

static const char *
skip_ws(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* A quoted string ("..." or '...') at p into out; returns the end or NULL. */
static const char *
quoted(const char *p, char *out, size_t len)
{
	char q = *p;
	size_t o = 0;

	if (q != '"' && q != '\'')
		return NULL;
	for (p++; *p != '\0' && *p != q; p++) {
		char ch = *p;

		if (ch == '\\' && p[1] != '\0') {
			p++;
			ch = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
		}
		if (o + 1 < len)
			out[o++] = ch;
	}
	out[o] = '\0';
	return *p == q ? p + 1 : NULL;
}

/* Up to 4 integers "(a, b[, c, d])" at p; returns how many, or -1. */
static int
int_args(const char *p, int *v, const char **end)
{
	int n = 0;

	p = skip_ws(p);
	if (*p != '(')
		return -1;
	p++;
	for (;;) {
		char *e;
		long x;

		p = skip_ws(p);
		x = strtol(p, &e, 10);
		if (e == p || n == 4 || x < -100000 || x > 100000)
			return -1;
		v[n++] = (int)x;
		p = skip_ws(e);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == ')') {
			*end = p + 1;
			return n;
		}
		return -1;
	}
}

int
gui_parse(const char *instr, struct gui_cmd *out, struct derr *e)
{
	const char *p = skip_ws(instr), *rest = NULL, *end;
	size_t i, n;
	int v[4];

	memset(out, 0, sizeof *out);
	out->amount = 3;
	for (i = 0; i < ARRAY_LEN(verbs); i++) {
		n = strlen(verbs[i].name);
		if (strncasecmp(p, verbs[i].name, n) == 0 &&
		    (p[n] == '\0' || p[n] == '(' || isspace((unsigned char)p[n]))) {
			out->verb = verbs[i].verb;
			rest = skip_ws(p + n);
			break;
		}
	}
	if (rest == NULL)
		return derr_set(e, DERR_INVALID, "instruction", "cannot tell what to do in '%.80s': start with "
		    "click, double click, right click, move, drag, type, press or scroll (or a form such as "
		    "click(847, 523), type(\"hello\"), press(\"ctrl+s\"))", instr);
	switch (out->verb) {
	case GUI_TYPE:
		if (*rest == '(') {
			rest = skip_ws(rest + 1);
			if ((end = quoted(rest, out->text, sizeof out->text)) == NULL ||
			    *skip_ws(end) != ')')
				return derr_set(e, DERR_INVALID, "instruction", "type(\"...\") needs a quoted string");
			return 0;
		}
		if ((end = quoted(rest, out->text, sizeof out->text)) != NULL) {
			end = skip_ws(end);
			if (strncasecmp(end, "into ", 5) == 0 || strncasecmp(end, "in ", 3) == 0)
				snprintf(out->target, sizeof out->target, "%s", skip_ws(strchr(end, ' ')));
			return 0;
		}
		if (*rest == '\0')
			return derr_set(e, DERR_INVALID, "instruction", "type what? e.g. type \"hello\"");
		snprintf(out->text, sizeof out->text, "%s", rest);
		return 0;
	case GUI_KEY:
		if (*rest == '(') {
			rest = skip_ws(rest + 1);
			if ((end = quoted(rest, out->text, sizeof out->text)) == NULL || *skip_ws(end) != ')')
				return derr_set(e, DERR_INVALID, "instruction", "press(\"...\") needs a quoted key");
			return 0;
		}
		if (quoted(rest, out->text, sizeof out->text) == NULL)
			snprintf(out->text, sizeof out->text, "%s", rest);
		if (out->text[0] == '\0')
			return derr_set(e, DERR_INVALID, "instruction", "press which key? e.g. press ctrl+s");
		return 0;
	case GUI_SCROLL: {
		char dir[16] = "";
		long amount = 3;

		if (*rest == '(')
			rest = skip_ws(rest + 1);
		for (i = 0; i + 1 < sizeof dir && isalpha((unsigned char)rest[i]); i++)
			dir[i] = (char)tolower((unsigned char)rest[i]);
		rest += i;
		while (*rest == ',' || *rest == ' ' || *rest == '\t')
			rest++;
		if (isdigit((unsigned char)*rest))
			amount = strtol(rest, NULL, 10);
		if (strcmp(dir, "up") != 0 && strcmp(dir, "down") != 0 && strcmp(dir, "left") != 0 &&
		    strcmp(dir, "right") != 0)
			return derr_set(e, DERR_INVALID, "instruction", "scroll up, down, left or right, not '%s'", dir);
		if (amount < 1 || amount > 100)
			return derr_set(e, DERR_INVALID, "instruction", "scroll amount must be 1..100");
		snprintf(out->text, sizeof out->text, "%s", dir);
		out->amount = amount;
		return 0;
	}
	default:
		break;
	}
	if (*rest == '(') {
		int k = int_args(rest, v, &end);

		if (k < 0 || *skip_ws(end) != '\0' || (out->verb == GUI_DRAG ? k != 4 : k != 2))
			return derr_set(e, DERR_INVALID, "instruction", "malformed coordinates in '%.80s': write "
			    "%s", instr, out->verb == GUI_DRAG ? "drag(x1, y1, x2, y2)" : "click(x, y)");
		out->has_xy = true;
		out->x = v[0];
		out->y = v[1];
		if (k == 4) {
			out->has_xy2 = true;
			out->x2 = v[2];
			out->y2 = v[3];
		}
		return 0;
	}
	if (out->verb == GUI_DRAG)
		return derr_set(e, DERR_INVALID, "instruction", "drag needs coordinates: drag(x1, y1, x2, y2)");
	if (strncasecmp(rest, "on ", 3) == 0 || strncasecmp(rest, "at ", 3) == 0)
		rest = skip_ws(rest + 3);
	if (*rest == '\0')
		return derr_set(e, DERR_INVALID, "instruction", "%s what? name the element or give (x, y)",
		    verbs[i].name);
	snprintf(out->target, sizeof out->target, "%s", rest);
	return 0;
}

/* ---- grounding ---- */

struct ground {
	const char *backend;
	char model[128];
	int ix, iy;             /* image pixels */
	double confidence;
	char raw[300];          /* the model's answer, an excerpt */
	int64_t model_us;
};

static const char UITARS_PROMPT[] =
    "You are a GUI agent. You are given a task and a screenshot. Output the next action.\n\n"
    "## Output Format\n\nAction: click(start_box='(x,y)')\n\n"
    "## Action Space\nclick(start_box='(x,y)') # x, y in pixels of this screenshot\n\n"
    "## User Instruction\nClick on: %s";

/* The coordinate in a model answer, in the order UI-TARS variants write
 * it: start_box='(x,y)' (also with <|box_start|>), <point>x y</point>, a
 * (x1,y1,x2,y2) box (its centre), any (x, y). */
static int
parse_point(const char *s, int *x, int *y)
{
	static const char *const marks[] = { "start_box", "<point>", "(" };
	size_t m;

	for (m = 0; m < ARRAY_LEN(marks); m++) {
		const char *p = s;

		while ((p = strstr(p, marks[m])) != NULL) {
			double v[4];
			int n = 0;
			const char *q = p + strlen(marks[m]);

			while (*q != '\0' && n < 4 && *q != ')' && *q != '<') {
				if (isdigit((unsigned char)*q) || (*q == '-' && isdigit((unsigned char)q[1]))) {
					char *e;

					v[n++] = strtod(q, &e);
					q = e;
				} else if (strchr(" ,'=(|_xboxstart", *q) != NULL || isspace((unsigned char)*q))
					q++;
				else
					break;
			}
			if (n == 2 || n == 4) {
				*x = (int)lround(n == 4 ? (v[0] + v[2]) / 2 : v[0]);
				*y = (int)lround(n == 4 ? (v[1] + v[3]) / 2 : v[1]);
				return 0;
			}
			p += strlen(marks[m]);
		}
	}
	return -1;
}

static int
ground_uitars(const struct config *cfg, const char *target, const char *b64,
    struct ground *g, struct derr *e)
{
	char prompt[GUI_TEXT_MAX + 600], url[600], auth[300], err[256] = "";
	const char *hdr[3] = { NULL, NULL, NULL };
	json_object *body = json_object_new_object(), *msgs = json_object_new_array(), *m;
	json_object *reply = NULL, *v;
	bool router = cfg->openrouter_api_key[0] != '\0';
	const char *text = NULL;
	long status = 0;
	int rc = -1;
	int64_t t0 = mono_us();

	snprintf(prompt, sizeof prompt, UITARS_PROMPT, target);
	m = json_object_new_object();
	json_object_object_add(m, "role", json_object_new_string("user"));
	if (router) {
		json_object *content = json_object_new_array(), *part = json_object_new_object(), *iu;
		char *data = xasprintf("data:image/jpeg;base64,%s", b64);

		snprintf(g->model, sizeof g->model, "%s", cfg->uitars_openrouter_model);
		json_object_object_add(part, "type", json_object_new_string("image_url"));
		iu = json_object_new_object();
		json_object_object_add(iu, "url", json_object_new_string(data));
		json_object_object_add(part, "image_url", iu);
		json_object_array_add(content, part);
		part = json_object_new_object();
		json_object_object_add(part, "type", json_object_new_string("text"));
		json_object_object_add(part, "text", json_object_new_string(prompt));
		json_object_array_add(content, part);
		json_object_object_add(m, "content", content);
		json_object_object_add(body, "max_tokens", json_object_new_int(100));
		json_object_object_add(body, "temperature", json_object_new_int(0));
		snprintf(url, sizeof url, "%s/chat/completions", cfg->openrouter_url);
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", cfg->openrouter_api_key);
		hdr[0] = auth;
		free(data);
	} else {
		json_object *imgs = json_object_new_array(), *opt = json_object_new_object();

		snprintf(g->model, sizeof g->model, "%s", cfg->uitars_ollama_model);
		json_object_object_add(m, "content", json_object_new_string(prompt));
		json_object_array_add(imgs, json_object_new_string(b64));
		json_object_object_add(m, "images", imgs);
		json_object_object_add(body, "stream", json_object_new_boolean(0));
		json_object_object_add(body, "keep_alive", json_object_new_string(cfg->uitars_keep_alive));
		json_object_object_add(opt, "temperature", json_object_new_int(0));
		json_object_object_add(body, "options", opt);
		snprintf(url, sizeof url, "%s/api/chat", cfg->ollama_url);
	}
	json_object_array_add(msgs, m);
	json_object_object_add(body, "model", json_object_new_string(g->model));
	json_object_object_add(body, "messages", msgs);
	if (httpc_post_json(url, hdr, body, GROUND_TIMEOUT_MS, &status, &reply, err, sizeof err) != 0 ||
	    status / 100 != 2) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "uitars (%s): %s%s%ld %.200s", router ? "openrouter" : "ollama",
		    err, status ? " HTTP " : "", status, reply ? json_object_to_json_string(reply) : "");
		goto out;
	}
	if (router) {
		v = json_object_array_get_idx(json_object_object_get(reply, "choices"), 0);
		text = json_object_get_string(json_object_object_get(json_object_object_get(v, "message"), "content"));
	} else
		text = json_object_get_string(json_object_object_get(json_object_object_get(reply, "message"), "content"));
	snprintf(g->raw, sizeof g->raw, "%s", text ? text : "");
	if (text == NULL || parse_point(text, &g->ix, &g->iy) != 0) {
		derr_set(e, DERR_UNAVAILABLE, "target", "uitars answered without a coordinate: '%.200s'",
		    text ? text : "(no text)");
		goto out;
	}
	g->confidence = 0.8;
	rc = 0;
out:
	g->model_us = mono_us() - t0;
	json_object_put(body);
	json_object_put(reply);
	return rc;
}

static int
ground_claude(const struct config *cfg, const char *target, const char *b64, int iw, int ih,
    struct ground *g, struct derr *e)
{
	char url[600], key[300], err[256] = "", text[GUI_TEXT_MAX + 200];
	const char *hdr[] = { key, "anthropic-version: 2023-06-01",
		"anthropic-beta: computer-use-2025-01-24", NULL };
	json_object *body = json_object_new_object(), *tools = json_object_new_array(), *tool;
	json_object *msgs = json_object_new_array(), *m, *content, *part, *src, *reply = NULL, *blocks;
	long status = 0;
	size_t i;
	int rc = -1;
	int64_t t0 = mono_us();

	if (cfg->anthropic_api_key[0] == '\0') {
		json_object_put(body);
		json_object_put(tools);
		json_object_put(msgs);
		return derr_set(e, DERR_UNAVAILABLE, NULL, "claude_cu needs ANTHROPIC_API_KEY");
	}
	snprintf(g->model, sizeof g->model, "%s", cfg->claude_model);
	snprintf(key, sizeof key, "x-api-key: %s", cfg->anthropic_api_key);
	snprintf(url, sizeof url, "%s/v1/messages", cfg->claude_url);
	tool = json_object_new_object();
	json_object_object_add(tool, "type", json_object_new_string("computer_20250124"));
	json_object_object_add(tool, "name", json_object_new_string("computer"));
	json_object_object_add(tool, "display_width_px", json_object_new_int(iw));
	json_object_object_add(tool, "display_height_px", json_object_new_int(ih));
	json_object_array_add(tools, tool);
	content = json_object_new_array();
	part = json_object_new_object();
	src = json_object_new_object();
	json_object_object_add(src, "type", json_object_new_string("base64"));
	json_object_object_add(src, "media_type", json_object_new_string("image/jpeg"));
	json_object_object_add(src, "data", json_object_new_string(b64));
	json_object_object_add(part, "type", json_object_new_string("image"));
	json_object_object_add(part, "source", src);
	json_object_array_add(content, part);
	part = json_object_new_object();
	snprintf(text, sizeof text, "This screenshot is the whole %dx%d display. Click on: %s. Use the "
	    "computer tool's left_click at the centre of that element.", iw, ih, target);
	json_object_object_add(part, "type", json_object_new_string("text"));
	json_object_object_add(part, "text", json_object_new_string(text));
	json_object_array_add(content, part);
	m = json_object_new_object();
	json_object_object_add(m, "role", json_object_new_string("user"));
	json_object_object_add(m, "content", content);
	json_object_array_add(msgs, m);
	json_object_object_add(body, "model", json_object_new_string(g->model));
	json_object_object_add(body, "max_tokens", json_object_new_int(1024));
	json_object_object_add(body, "tools", tools);
	json_object_object_add(body, "messages", msgs);
	if (httpc_post_json(url, hdr, body, GROUND_TIMEOUT_MS, &status, &reply, err, sizeof err) != 0 ||
	    status / 100 != 2) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "claude_cu: %s%s%ld %.200s", err, status ? " HTTP " : "",
		    status, reply ? json_object_to_json_string(reply) : "");
		goto out;
	}
	blocks = json_object_object_get(reply, "content");
	for (i = 0; i < json_object_array_length(blocks); i++) {
		json_object *b = json_object_array_get_idx(blocks, i), *in, *c;
		const char *type = json_object_get_string(json_object_object_get(b, "type"));

		if (type != NULL && strcmp(type, "tool_use") == 0 &&
		    (in = json_object_object_get(b, "input")) != NULL &&
		    (c = json_object_object_get(in, "coordinate")) != NULL &&
		    json_object_array_length(c) == 2) {
			g->ix = json_object_get_int(json_object_array_get_idx(c, 0));
			g->iy = json_object_get_int(json_object_array_get_idx(c, 1));
			snprintf(g->raw, sizeof g->raw, "%s", json_object_to_json_string(in));
			g->confidence = 0.7;
			rc = 0;
			goto out;
		}
		if (type != NULL && strcmp(type, "text") == 0) {
			const char *t = json_object_get_string(json_object_object_get(b, "text"));

			snprintf(g->raw, sizeof g->raw, "%s", t ? t : "");
			if (t != NULL && parse_point(t, &g->ix, &g->iy) == 0) {
				g->confidence = 0.5;
				rc = 0;
				goto out;
			}
		}
	}
	derr_set(e, DERR_UNAVAILABLE, "target", "claude_cu answered without a left_click coordinate: '%.200s'",
	    g->raw[0] ? g->raw : json_object_to_json_string(reply));
out:
	g->model_us = mono_us() - t0;
	json_object_put(body);
	json_object_put(reply);
	return rc;
}

int
gui_init(const struct config *cfg, struct derr *e)
{
	if (strcmp(cfg->gui_backend, "direct") != 0 && strcmp(cfg->gui_backend, "uitars") != 0 &&
	    strcmp(cfg->gui_backend, "claude_cu") != 0)
		return derr_set(e, DERR_INVALID, "gui-agent-backend",
		    "unknown GUI agent backend '%s' (direct, uitars, claude_cu; omniparser is not built yet)",
		    cfg->gui_backend);
	return 0;
}

json_object *
gui_manifest(const struct config *cfg)
{
	json_object *o = json_object_new_object();

	jx_add_str(o, "backend", cfg->gui_backend);
	if (strcmp(cfg->gui_backend, "uitars") == 0)
		jx_add_str(o, "model", cfg->openrouter_api_key[0] ? cfg->uitars_openrouter_model :
		    cfg->uitars_ollama_model);
	else if (strcmp(cfg->gui_backend, "claude_cu") == 0)
		jx_add_str(o, "model", cfg->claude_model);
	return o;
}

/* Screenshot -> backend -> screen point. Fills the grounding fields of o. */
static int
locate(struct app *app, const char *task_id, const char *target, int *sx, int *sy,
    json_object *o, struct derr *e)
{
	const struct config *cfg = app->cfg;
	struct display_lease l;
	struct xcap_req q = { .max_width = (int)cfg->grounding_max_dim, .quality = (int)cfg->grounding_quality };
	struct xcap_frame f = { 0 };
	struct xcap_image img = { 0 };
	struct ground g = { .backend = cfg->gui_backend };
	json_object *sz;
	char *b64 = NULL;
	int rc = -1, r;
	int64_t t0 = mono_us();

	if (strcmp(cfg->gui_backend, "direct") == 0)
		return derr_set(e, DERR_INVALID, "instruction", "the direct backend has no model to find '%.80s': "
		    "give coordinates, e.g. click(847, 523), or set ACU_GUI_AGENT_BACKEND", target);
	if (desktop_lease(app, task_id, &l, e) != 0)
		return -1;
	if (q.max_width > l.width)
		q.max_width = l.width;
	r = xcap_grab(l.cap, &q, &f, e);
	display_unlease(&l);
	if (r != 0 || xcap_encode(&f, XCAP_JPEG, q.quality, &img, e) != 0)
		goto out;
	b64 = b64_encode(img.data, img.len, NULL);
	json_object_object_add(o, "capture_ms", json_object_new_double((double)(mono_us() - t0) / 1000.0));
	if (strcmp(cfg->gui_backend, "uitars") == 0)
		r = ground_uitars(cfg, target, b64, &g, e);
	else
		r = ground_claude(cfg, target, b64, f.width, f.height, &g, e);
	jx_add_str(o, "backend", g.backend);
	jx_add_str(o, "model", g.model);
	json_object_object_add(o, "model_ms", json_object_new_double((double)g.model_us / 1000.0));
	if (r != 0)
		goto out;
	if (g.ix < 0 || g.iy < 0 || g.ix >= f.width || g.iy >= f.height) {
		derr_set(e, DERR_UNAVAILABLE, "target", "%s answered (%d, %d), outside the %dx%d image it was "
		    "sent: '%.150s'", g.backend, g.ix, g.iy, f.width, f.height, g.raw);
		goto out;
	}
	*sx = f.src_x + (int)lround(g.ix * f.scale);
	*sy = f.src_y + (int)lround(g.iy * f.scale);
	if (*sx >= f.src_x + f.src_w)
		*sx = f.src_x + f.src_w - 1;
	if (*sy >= f.src_y + f.src_h)
		*sy = f.src_y + f.src_h - 1;
	sz = json_object_new_object();
	json_object_object_add(sz, "width", json_object_new_int(f.width));
	json_object_object_add(sz, "height", json_object_new_int(f.height));
	json_object_object_add(o, "image_size", sz);
	sz = json_object_new_object();
	json_object_object_add(sz, "width", json_object_new_int(f.screen_w));
	json_object_object_add(sz, "height", json_object_new_int(f.screen_h));
	json_object_object_add(o, "screen_size", sz);
	json_object_object_add(o, "scale", json_object_new_double(round(f.scale * 10000) / 10000));
	json_object_object_add(o, "image_x", json_object_new_int(g.ix));
	json_object_object_add(o, "image_y", json_object_new_int(g.iy));
	json_object_object_add(o, "confidence", json_object_new_double(g.confidence));
	jx_add_str(o, "raw", g.raw);
	rc = 0;
out:
	free(b64);
	xcap_image_free(&img);
	xcap_frame_free(&f);
	return rc;
}

/* One gui action row on the task. */
static void
log_gui(struct app *app, const char *task_id, const char *what, const char *input,
    json_object *result, const struct derr *err, double ms)
{
	struct action_new a = { .type = "gui", .duration_ms = ms };
	json_object *in = json_object_new_object(), *out = json_object_new_object();
	char summary[400], id[ID_LEN];
	struct derr e2;
	int64_t ord;

	if (task_id == NULL)
		return;
	jx_add_str(in, what, input);
	jx_add_str(in, "backend", app->cfg->gui_backend);
	if (err == NULL) {
		json_object_object_foreach(result, k, v)
			if (strcmp(k, "after") != 0)
				json_object_object_add(out, k, json_object_get(v));
		snprintf(summary, sizeof summary, "gui_%s: %.300s", what[0] == 'd' ? "find" : "do", input);
	} else {
		json_object_object_add(out, "error", derr_to_json(err));
		snprintf(summary, sizeof summary, "gui_%s failed: %.300s", what[0] == 'd' ? "find" : "do",
		    err->message);
	}
	a.summary = summary;
	a.status = err == NULL ? "completed" : "failed";
	a.input_json = jx_string(in, NULL);
	a.output_json = jx_string(out, NULL);
	if (task_action_add(app->store, task_id, &a, id, &ord, &e2) != 0)
		log_warn("could not log a gui action on %s: %s", task_id, e2.message);
	json_object_put(in);
	json_object_put(out);
}

json_object *
gui_find(struct app *app, const char *task_id, const char *description, struct derr *e)
{
	json_object *o = json_object_new_object();
	int64_t t0 = mono_us();
	int x, y;

	if (locate(app, task_id, description, &x, &y, o, e) != 0) {
		log_gui(app, task_id, "description", description, NULL, e, (double)(mono_us() - t0) / 1000.0);
		json_object_put(o);
		return NULL;
	}
	json_object_object_add(o, "x", json_object_new_int(x));
	json_object_object_add(o, "y", json_object_new_int(y));
	jx_add_str(o, "description", description);
	log_gui(app, task_id, "description", description, o, NULL, (double)(mono_us() - t0) / 1000.0);
	return o;
}

/* Acts on the display (lease held briefly) and adds a small thumbnail of
 * the result. */
static int
act(struct app *app, const char *task_id, const struct gui_cmd *c, int x, int y, json_object *o,
    struct derr *e)
{
	static const int buttons[] = { [GUI_CLICK] = 1, [GUI_DOUBLE] = 1, [GUI_RIGHT] = 3, [GUI_MIDDLE] = 2 };
	struct display_lease l;
	struct xcap_req q = { .max_width = AFTER_WIDTH, .quality = 60 };
	struct xcap_image img = { 0 };
	int rc = -1;

	if (desktop_lease(app, task_id, &l, e) != 0)
		return -1;
	jx_add_str(o, "display", l.name);
	switch (c->verb) {
	case GUI_CLICK:
	case GUI_DOUBLE:
	case GUI_RIGHT:
	case GUI_MIDDLE:
		if (x < 0 || y < 0 || x >= l.width || y >= l.height) {
			derr_set(e, DERR_INVALID, "instruction", "(%d, %d) is off the %dx%d screen", x, y, l.width,
			    l.height);
			goto out;
		}
		rc = xinput_click_at(l.d, x, y, buttons[c->verb], c->verb == GUI_DOUBLE ? 2 : 1, e);
		break;
	case GUI_MOVE:
		rc = xinput_move(l.d, x, y, e);
		break;
	case GUI_DRAG:
		rc = xinput_drag(l.d, x, y, c->x2, c->y2, 1, e);
		break;
	case GUI_TYPE:
		rc = (c->target[0] ? xinput_click_at(l.d, x, y, 1, 1, e) : 0) ||
		    xinput_type(l.d, c->text, strlen(c->text), e) ? -1 : 0;
		break;
	case GUI_KEY:
		rc = xinput_keys(l.d, c->text, e);
		break;
	case GUI_SCROLL:
		rc = xinput_scroll(l.d, c->text, c->amount, e);
		break;
	}
	if (rc == 0 && xcap_shot(l.cap, &q, NULL, &img, e) == 0) {
		char *b64 = b64_encode(img.data, img.len, NULL);
		json_object *after = json_object_new_object();

		jx_add_str(after, "image_b64", b64);
		jx_add_str(after, "mime_type", img.mime);
		json_object_object_add(o, "after", after);
		free(b64);
	}
	rc = rc == 0 ? 0 : -1;
out:
	display_unlease(&l);
	xcap_image_free(&img);
	return rc;
}

json_object *
gui_do(struct app *app, const char *task_id, const char *instruction, struct derr *e)
{
	static const char *const names[] = { "click", "double_click", "right_click", "middle_click",
		"mouse_move", "drag", "type", "press_key", "scroll" };
	json_object *o = json_object_new_object();
	struct gui_cmd c;
	int64_t t0 = mono_us(), t1;
	int x = 0, y = 0;

	if (gui_parse(instruction, &c, e) != 0)
		goto fail;
	jx_add_str(o, "action", names[c.verb]);
	if (c.has_xy) {
		x = c.x;
		y = c.y;
		jx_add_str(o, "backend", "direct");
	} else if (c.target[0] != '\0') {
		if (locate(app, task_id, c.target, &x, &y, o, e) != 0)
			goto fail;
		jx_add_str(o, "target", c.target);
	} else if (c.verb != GUI_TYPE && c.verb != GUI_KEY && c.verb != GUI_SCROLL) {
		derr_set(e, DERR_INVALID, "instruction", "nothing to act on in '%.80s'", instruction);
		goto fail;
	}
	t1 = mono_us();
	if (act(app, task_id, &c, x, y, o, e) != 0)
		goto fail;
	if (c.has_xy || c.target[0] != '\0') {
		json_object_object_add(o, "x", json_object_new_int(x));
		json_object_object_add(o, "y", json_object_new_int(y));
	}
	if (c.verb == GUI_TYPE)
		jx_add_str(o, "text", c.text);
	if (c.verb == GUI_KEY || c.verb == GUI_SCROLL)
		jx_add_str(o, "keys", c.text);
	json_object_object_add(o, "act_ms", json_object_new_double((double)(mono_us() - t1) / 1000.0));
	json_object_object_add(o, "total_ms", json_object_new_double((double)(mono_us() - t0) / 1000.0));
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	log_gui(app, task_id, "instruction", instruction, o, NULL, (double)(mono_us() - t0) / 1000.0);
	return o;
fail:
	log_gui(app, task_id, "instruction", instruction, NULL, e, (double)(mono_us() - t0) / 1000.0);
	json_object_put(o);
	return NULL;
}
