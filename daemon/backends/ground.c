/*
 * ground.c - the grounding backends (see ground.h): request bodies for
 * UI-TARS (OpenRouter / Ollama), Claude computer use and OmniParser plus
 * its picker, and the parsers that turn each answer into one image point.
 *
 * Invariants: every string copied into a result is truncated to its
 * buffer; a point leaves this file only when it lies inside the image;
 * every HTTP call goes through httpc (the one pooled client).
 *
 * Does not: capture, scale to the screen, act, or log (gui.c does).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "ground.h"
#include "httpc.h"

#define UITARS_MAX_TOKENS 100
#define CLAUDE_CU_MAX_TOKENS 1024
#define PICKER_MAX_TOKENS 10
#define ELEMENT_TEXT_MAX 100

static const char uitars_prompt[] =
    "You are a GUI agent. You are given a task and your action history, with screenshots. "
    "You need to perform the next action to complete the task.\n\n"
    "## Output Format\n\nAction: ...\n\n"
    "## Action Space\nclick(point='<point>x1 y1</point>')\n\n"
    "## User Instruction\n";

/* ---- small helpers ---- */

static void
copy_trim(char *dst, size_t cap, const char *s)
{
	size_t n, i;

	while (*s != '\0' && isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= cap)
		n = cap - 1;
	for (i = 0; i < n; i++)   /* one line in logs and messages */
		dst[i] = s[i] == '\n' || s[i] == '\r' || s[i] == '\t' ? ' ' : s[i];
	dst[n] = '\0';
}

static char *
join_url(const char *base, const char *path)
{
	size_t n = strlen(base);

	while (n > 0 && base[n - 1] == '/')
		n--;
	return xasprintf("%.*s%s", (int)n, base, path);
}

/* One POST; *reply is the 2xx JSON body (caller puts it). */
static int
post(const char *who, const char *url, const char *const *headers, json_object *body,
    long timeout_ms, json_object **reply, int64_t *latency, struct derr *e)
{
	struct httpc_req rq = { .method = "POST", .url = url, .headers = headers, .body = body,
		.timeout_ms = timeout_ms };
	struct httpc_resp rs;
	int rc;

	memset(&rs, 0, sizeof rs);
	*reply = NULL;
	rc = httpc_do(&rq, &rs);
	*latency += rs.latency_us;
	if (rc < 0)
		derr_set(e, DERR_UNAVAILABLE, NULL, "%s: %s: %.*s", who,
		    rc == HTTPC_ETIMEOUT ? "timed out" : rc == HTTPC_EREFUSED ? "not called" :
		    rc == HTTPC_ECANCELLED ? "abandoned" : "cannot reach the server",
		    utf8_prec(rs.error, 200), rs.error);
	else if (rs.status < 200 || rs.status >= 300)
		derr_set(e, DERR_UNAVAILABLE, NULL, "%s answered HTTP %ld: %.*s%s", who, rs.status,
		    utf8_prec(rs.excerpt, 200), rs.excerpt,
		    rs.status == 401 || rs.status == 403 ? " (check the API key)" : "");
	else if (rs.json == NULL)
		derr_set(e, DERR_UNAVAILABLE, NULL, "%s answered something that is not JSON: %.*s",
		    who, utf8_prec(rs.excerpt, 200), rs.excerpt);
	else {
		*reply = json_object_get(rs.json);
		rc = 0;
	}
	if (*reply == NULL)
		rc = -1;
	httpc_resp_free(&rs);
	return rc;
}

static json_object *
jpath(json_object *o, const char *k1, const char *k2)
{
	json_object *v = NULL;

	if (o == NULL || !json_object_object_get_ex(o, k1, &v))
		return NULL;
	if (k2 != NULL && !json_object_object_get_ex(v, k2, &v))
		return NULL;
	return v;
}

static char *
data_url(const struct ground_req *q)
{
	char *b64 = b64_encode(q->jpeg, q->len, NULL), *u;

	u = xasprintf("data:image/jpeg;base64,%s", b64);
	free(b64);
	return u;
}

static json_object *
anthropic_image(const char *b64)
{
	json_object *img = json_object_new_object(), *src = json_object_new_object();

	json_object_object_add(src, "type", json_object_new_string("base64"));
	json_object_object_add(src, "media_type", json_object_new_string("image/jpeg"));
	json_object_object_add(src, "data", json_object_new_string(b64));
	json_object_object_add(img, "type", json_object_new_string("image"));
	json_object_object_add(img, "source", src);
	return img;
}

static json_object *
text_part(const char *text)
{
	json_object *t = json_object_new_object();

	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(text));
	return t;
}

/* ---- the UI-TARS answer ----
 *
 * Read the way @ui-tars/action-parser 1.2.3 (ByteDance's parser, the one
 * UI-TARS-desktop uses) reads it: the text after the last "Action:" (or
 * "Action" and the full-width colon U+FF1A), else the whole text; its
 * first action (up to a blank line, or the end of its call's line); in
 * that name(...) call, the last start_box=, start_point= or point=
 * argument; its value (x,y), [x,y], (x1,y1,x2,y2),
 * <bbox>x1 y1 x2 y2</bbox>, <bbox>x y</bbox> or <point>x y</point>, quoted
 * or not, <|box_start|>/<|box_end|> ignored. A box is its centre.
 *
 * Read by detm only (the official parser refuses them): a leading
 * <think>...</think>, blank lines right after "Action:", a bare value or
 * key=value with no call around it, a call whose only argument is the value
 * (click(x, y)), blanks between the numbers of a plain (x y). Prose is
 * refused even when it holds numbers; so are 1, 3 or 5+ numbers.
 */

#define UITARS_FACTOR     28.0                 /* Qwen2.5-VL: patch 14 x merge 2 */
#define UITARS_MIN_PIXELS (100.0 * 28 * 28)
#define UITARS_MAX_PIXELS (16384.0 * 28 * 28)  /* UI-TARS 1.5 */
#define UITARS_MAX_RATIO  200.0

static const char fw_colon[] = "\xef\xbc\x9a";   /* U+FF1A FULLWIDTH COLON */

void
ground_uitars_resize(int w, int h, int *mw, int *mh)
{
	double f = UITARS_FACTOR, wb, hb, beta, lo = w < h ? w : h, hi = w < h ? h : w;

	*mw = w;
	*mh = h;
	if (lo <= 0 || hi / lo > UITARS_MAX_RATIO)
		return;
	wb = fmax(f, round(w / f) * f);
	hb = fmax(f, round(h / f) * f);
	if (wb * hb > UITARS_MAX_PIXELS) {
		beta = sqrt((double)w * h / UITARS_MAX_PIXELS);
		hb = floor(h / beta / f) * f;
		wb = floor(w / beta / f) * f;
	} else if (wb * hb < UITARS_MIN_PIXELS) {
		beta = sqrt(UITARS_MIN_PIXELS / ((double)w * h));
		hb = ceil(h * beta / f) * f;
		wb = ceil(w * beta / f) * f;
	}
	*mw = (int)wb;
	*mh = (int)hb;
}

/* The answer's first action: sets *a, returns its length (trimmed). */
static size_t
uitars_action(const char *text, const char **a)
{
	const char *p = text, *q, *end;

	while (isspace((unsigned char)*p))
		p++;
	if (strncmp(p, "<think>", 7) == 0 && (q = strstr(p, "</think>")) != NULL)
		p = q + 8;
	for (q = p; (q = strstr(q, "Action")) != NULL; q += 6)
		if (q[6] == ':')
			p = q + 7;
		else if (strncmp(q + 6, fw_colon, 3) == 0)
			p = q + 9;
	while (isspace((unsigned char)*p))
		p++;
	if ((end = strstr(p, "\n\n")) == NULL)
		end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	*a = p;
	return (size_t)(end - p);
}

static bool
has_at(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

/* Is the text before '=' ([k, end)) the start point's key? Whatever holds
 * start_box, or ends in point (point=, start_point=) but not end_point. */
static bool
uitars_key(const char *k, const char *end)
{
	const char *p;

	for (p = k; p < end; p++)
		if (has_at(p, end, "start_box"))
			return true;
	return end - k >= 5 && has_at(end - 5, end, "point") &&
	    !(end - k >= 9 && has_at(end - 9, end, "end_point"));
}

/* The numbers of a coordinate value [p, end): separated by commas or
 * blanks, among brackets and the tags UI-TARS wraps them in; one quote
 * each side dropped. Returns 2 (a point) or 4 (a box), else -1. */
static int
uitars_value(const char *p, const char *end, double v[4])
{
	static const char *const tags[] = { "<|box_start|>", "<|box_end|>", "<bbox>", "</bbox>",
		"<point>", "</point>" };
	int n = 0;
	size_t i;
	char *e;

	while (p < end && isspace((unsigned char)*p))
		p++;
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	if (p < end && (*p == '\'' || *p == '"'))
		p++;
	if (end > p && (end[-1] == '\'' || end[-1] == '"'))
		end--;
	while (p < end) {
		if (isspace((unsigned char)*p) || strchr(",()[]", *p) != NULL) {
			p++;
			continue;
		}
		for (i = 0; i < sizeof tags / sizeof tags[0] && !has_at(p, end, tags[i]); i++)
			;
		if (i < sizeof tags / sizeof tags[0]) {
			p += strlen(tags[i]);
			continue;
		}
		if (n == 4 || !(isdigit((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.'))
			return -1;
		v[n] = strtod(p, &e);
		if (e == p || e > end || !isfinite(v[n]) || memchr(p, 'x', (size_t)(e - p)) != NULL ||
		    memchr(p, 'X', (size_t)(e - p)) != NULL)
			return -1;
		n++;
		p = e;
	}
	return n == 2 || n == 4 ? n : -1;
}

/* Is [a, end) a call name(args)? Its args are [*args, *aend). The call
 * ends at the ')' matching its '(' (quotes skipped); anything after must
 * start on a new line (a next action), else it is no call. */
static bool
uitars_call(const char *a, const char *end, const char **args, const char **aend)
{
	const char *p = a, *q;
	bool quoted = false;
	int depth = 0;

	while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
		p++;
	if (p == a || p == end || *p != '(')
		return false;
	*args = p + 1;
	for (q = p; q < end; q++) {
		if (*q == '\'')
			quoted = !quoted;
		else if (!quoted && *q == '(')
			depth++;
		else if (!quoted && *q == ')' && --depth == 0)
			break;
	}
	if (q == end)
		return false;
	*aend = q;
	for (q++; q < end && (*q == ' ' || *q == '\t' || *q == '\r'); q++)
		;
	return q == end || *q == '\n';
}

/* The coordinates of one action [a, a + n). Returns 2, 4 or -1. */
static int
uitars_numbers(const char *a, size_t n, double v[4])
{
	const char *end = a + n, *args, *aend, *s, *q, *eq, *val = NULL, *vend = NULL;
	bool quoted = false, keyed = false;

	if (!uitars_call(a, end, &args, &aend)) {   /* a bare value, maybe after its key */
		eq = memchr(a, '=', n);
		if (eq == NULL)
			return uitars_value(a, end, v);
		for (q = a; q < eq && (isalnum((unsigned char)*q) || *q == '_'); q++)
			;
		return q == eq && uitars_key(a, eq) ? uitars_value(eq + 1, end, v) : -1;
	}
	end = aend;
	/* Arguments split at commas outside single quotes; the last key wins. */
	for (s = q = args;; q++) {
		if (q < end && *q == '\'')
			quoted = !quoted;
		if (q < end && (quoted || *q != ','))
			continue;
		if ((eq = memchr(s, '=', (size_t)(q - s))) != NULL) {
			keyed = true;
			if (uitars_key(s, eq)) {
				val = eq + 1;
				vend = q;
			}
		}
		if (q >= end)
			break;
		s = q + 1;
	}
	if (val != NULL)
		return uitars_value(val, vend, v);
	return keyed ? -1 : uitars_value(args, end, v);
}

int
ground_parse_uitars(const char *text, int w, int h, bool rel1000, double *x, double *y,
    bool *has_box, double box[4], char *err, size_t errlen)
{
	const char *a;
	size_t len = uitars_action(text, &a);
	double v[4];
	int n = uitars_numbers(a, len, v), mw = 1000, mh = 1000;

	*has_box = false;
	if (n < 0) {
		snprintf(err, errlen, "no coordinates in the answer: its first action has no "
		    "start_box/point of 2 or 4 numbers");
		return -1;
	}
	if (!rel1000)
		ground_uitars_resize(w, h, &mw, &mh);
	for (int i = 0; i < n; i++)
		v[i] = (i % 2) == 0 ? v[i] * w / mw : v[i] * h / mh;
	if (n == 4) {
		*has_box = true;
		memcpy(box, v, sizeof v);
		*x = (v[0] + v[2]) / 2;
		*y = (v[1] + v[3]) / 2;
	} else {
		*x = v[0];
		*y = v[1];
	}
	/* The far edge itself is accepted as its last pixel; beyond is wrong. */
	if (*x >= w && *x <= w + 0.5)
		*x = w - 1;
	if (*y >= h && *y <= h + 0.5)
		*y = h - 1;
	if (*x < 0 || *y < 0 || *x >= w || *y >= h) {
		snprintf(err, errlen, "the point (%.1f, %.1f) is outside the %dx%d image (answer space "
		    "%dx%d%s)", *x, *y, w, h, mw, mh, rel1000 ? ", 0..1000 relative" : "");
		return -1;
	}
	return 0;
}

/* ---- backends ---- */

static int
g_uitars(const struct config *cfg, const struct ground_req *q, struct ground_result *r,
    struct derr *e)
{
	bool openrouter = cfg->openrouter_api_key[0] != '\0';
	json_object *body = json_object_new_object(), *msgs = json_object_new_array();
	json_object *m = json_object_new_object(), *reply = NULL, *t;
	char *prompt = xasprintf("%s%s", uitars_prompt, q->description), *url = NULL, *auth = NULL;
	char who[64], why[160];
	const char *headers[3] = { NULL, NULL, NULL };
	const char *text = NULL;
	int rc = -1;

	snprintf(who, sizeof who, "uitars (%s)", r->provider);
	json_object_object_add(body, "model", json_object_new_string(r->model));
	json_object_object_add(m, "role", json_object_new_string("user"));
	if (openrouter) {
		json_object *content = json_object_new_array(), *img = json_object_new_object();
		json_object *iu = json_object_new_object();
		char *du = data_url(q);

		json_object_object_add(iu, "url", json_object_new_string(du));
		free(du);
		json_object_object_add(img, "type", json_object_new_string("image_url"));
		json_object_object_add(img, "image_url", iu);
		json_object_array_add(content, img);
		json_object_array_add(content, text_part(prompt));
		json_object_object_add(m, "content", content);
		json_object_object_add(body, "max_tokens", json_object_new_int(UITARS_MAX_TOKENS));
		json_object_object_add(body, "temperature", json_object_new_int(0));
		url = join_url(cfg->openrouter_url, "/chat/completions");
		auth = xasprintf("Authorization: Bearer %s", cfg->openrouter_api_key);
		headers[0] = auth;
	} else {
		json_object *imgs = json_object_new_array(), *opt = json_object_new_object();
		char *b64 = b64_encode(q->jpeg, q->len, NULL);

		json_object_array_add(imgs, json_object_new_string(b64));
		free(b64);
		json_object_object_add(m, "content", json_object_new_string(prompt));
		json_object_object_add(m, "images", imgs);
		json_object_object_add(body, "stream", json_object_new_boolean(0));
		json_object_object_add(body, "keep_alive", json_object_new_string(cfg->uitars_keep_alive));
		json_object_object_add(opt, "temperature", json_object_new_int(0));
		json_object_object_add(opt, "num_predict", json_object_new_int(UITARS_MAX_TOKENS));
		json_object_object_add(body, "options", opt);
		url = join_url(cfg->ollama_url, "/api/chat");
	}
	json_object_array_add(msgs, m);
	json_object_object_add(body, "messages", msgs);
	if (post(who, url, headers, body, cfg->grounding_timeout_ms, &reply, &r->latency_us, e) != 0)
		goto out;
	if ((t = jpath(reply, "model", NULL)) != NULL && json_object_is_type(t, json_type_string))
		snprintf(r->model, sizeof r->model, "%s", json_object_get_string(t));
	if (openrouter) {
		t = jpath(reply, "choices", NULL);
		t = t != NULL && json_object_is_type(t, json_type_array) ?
		    json_object_array_get_idx(t, 0) : NULL;
		t = jpath(t, "message", "content");
	} else {
		t = jpath(reply, "message", "content");
	}
	if (t == NULL || !json_object_is_type(t, json_type_string)) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "%s answered without a message text: %.*s", who,
		    utf8_prec(jx_string(reply, NULL), 200), jx_string(reply, NULL));
		goto out;
	}
	text = json_object_get_string(t);
	copy_trim(r->raw, sizeof r->raw, text);
	if (ground_parse_uitars(text, q->width, q->height, strcmp(cfg->uitars_coords, "1000") == 0,
	    &r->x, &r->y, &r->has_box, r->box, why, sizeof why) != 0) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "%s: unusable answer (%s): '%.*s'", who, why,
		    utf8_prec(r->raw, 200), r->raw);
		goto out;
	}
	rc = 0;
out:
	json_object_put(body);
	json_object_put(reply);
	free(prompt);
	free(url);
	free(auth);
	return rc;
}

/* Anthropic Messages call; *reply is the body (caller puts). */
static int
anthropic_call(const struct config *cfg, const char *who, json_object *body, bool computer_use,
    json_object **reply, int64_t *latency, struct derr *e)
{
	char *url = join_url(cfg->claude_url, "/v1/messages");
	char *key = xasprintf("x-api-key: %s", cfg->anthropic_api_key);
	const char *headers[] = { key, "anthropic-version: 2023-06-01",
		computer_use ? "anthropic-beta: computer-use-2025-01-24" : NULL, NULL };
	int rc;

	rc = post(who, url, headers, body, cfg->grounding_timeout_ms, reply, latency, e);
	free(url);
	free(key);
	return rc;
}

static int
g_claude_cu(const struct config *cfg, const struct ground_req *q, struct ground_result *r,
    struct derr *e)
{
	json_object *body = json_object_new_object(), *tools = json_object_new_array();
	json_object *tool = json_object_new_object(), *msgs = json_object_new_array();
	json_object *m = json_object_new_object(), *content = json_object_new_array();
	json_object *tc = json_object_new_object(), *reply = NULL, *blocks, *use = NULL, *coord;
	char *b64 = NULL, *prompt = NULL;
	const char *action = NULL;
	int rc = -1;
	size_t i;

	if (cfg->anthropic_api_key[0] == '\0') {
		derr_set(e, DERR_UNAVAILABLE, NULL,
		    "the claude_cu backend needs ANTHROPIC_API_KEY (not set)");
		goto out;
	}
	json_object_object_add(tool, "type", json_object_new_string("computer_20250124"));
	json_object_object_add(tool, "name", json_object_new_string("computer"));
	json_object_object_add(tool, "display_width_px", json_object_new_int(q->width));
	json_object_object_add(tool, "display_height_px", json_object_new_int(q->height));
	json_object_array_add(tools, tool);
	json_object_object_add(tc, "type", json_object_new_string("any"));
	b64 = b64_encode(q->jpeg, q->len, NULL);
	prompt = xasprintf("This screenshot is the current screen (%dx%d). Do not take another "
	    "screenshot. Use the computer tool once: left_click at the centre of this element: %s",
	    q->width, q->height, q->description);
	json_object_array_add(content, anthropic_image(b64));
	json_object_array_add(content, text_part(prompt));
	json_object_object_add(m, "role", json_object_new_string("user"));
	json_object_object_add(m, "content", content);
	json_object_array_add(msgs, m);
	json_object_object_add(body, "model", json_object_new_string(r->model));
	json_object_object_add(body, "max_tokens", json_object_new_int(CLAUDE_CU_MAX_TOKENS));
	json_object_object_add(body, "tools", tools);
	json_object_object_add(body, "tool_choice", tc);
	json_object_object_add(body, "messages", msgs);
	if (anthropic_call(cfg, "claude_cu", body, true, &reply, &r->latency_us, e) != 0)
		goto out;
	if ((coord = jpath(reply, "model", NULL)) != NULL && json_object_is_type(coord, json_type_string))
		snprintf(r->model, sizeof r->model, "%s", json_object_get_string(coord));
	blocks = jpath(reply, "content", NULL);
	for (i = 0; blocks != NULL && json_object_is_type(blocks, json_type_array) &&
	    i < json_object_array_length(blocks); i++) {
		json_object *b = json_object_array_get_idx(blocks, i), *ty = jpath(b, "type", NULL);

		if (ty != NULL && strcmp(json_object_get_string(ty), "tool_use") == 0) {
			use = jpath(b, "input", NULL);
			break;
		}
		if (ty != NULL && strcmp(json_object_get_string(ty), "text") == 0 && r->raw[0] == '\0')
			copy_trim(r->raw, sizeof r->raw, json_object_get_string(jpath(b, "text", NULL)));
	}
	if (use == NULL) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "claude_cu answered without a tool_use: '%.*s'",
		    utf8_prec(r->raw[0] ? r->raw : jx_string(reply, NULL), 200),
		    r->raw[0] ? r->raw : jx_string(reply, NULL));
		goto out;
	}
	copy_trim(r->raw, sizeof r->raw, jx_string(use, NULL));
	if ((coord = jpath(use, "action", NULL)) != NULL)
		action = json_object_get_string(coord);
	coord = jpath(use, "coordinate", NULL);
	if (action == NULL || (strcmp(action, "left_click") != 0 && strcmp(action, "double_click") != 0 &&
	    strcmp(action, "right_click") != 0 && strcmp(action, "mouse_move") != 0 &&
	    strcmp(action, "middle_click") != 0 && strcmp(action, "triple_click") != 0) ||
	    coord == NULL || !json_object_is_type(coord, json_type_array) ||
	    json_object_array_length(coord) != 2) {
		derr_set(e, DERR_UNAVAILABLE, NULL,
		    "claude_cu answered no click coordinate: %.*s", utf8_prec(r->raw, 200), r->raw);
		goto out;
	}
	r->x = json_object_get_double(json_object_array_get_idx(coord, 0));
	r->y = json_object_get_double(json_object_array_get_idx(coord, 1));
	if (r->x < 0 || r->y < 0 || r->x >= q->width || r->y >= q->height) {
		derr_set(e, DERR_UNAVAILABLE, NULL,
		    "claude_cu answered (%.0f, %.0f), outside the %dx%d display it was given: %.*s",
		    r->x, r->y, q->width, q->height, utf8_prec(r->raw, 200), r->raw);
		goto out;
	}
	rc = 0;
out:
	json_object_put(body);
	json_object_put(reply);
	free(b64);
	free(prompt);
	return rc;
}

/* Words of s (lower case, alphanumeric runs of 2+) found in t. */
static int
word_score(const char *s, const char *t)
{
	char word[64], low[ELEMENT_TEXT_MAX * 4 + 1];
	size_t i, n = 0;
	int score = 0;

	for (i = 0; t[i] != '\0' && i < sizeof low - 1; i++)
		low[i] = (char)tolower((unsigned char)t[i]);
	low[i] = '\0';
	for (;; s++) {
		if (isalnum((unsigned char)*s) && n < sizeof word - 1) {
			word[n++] = (char)tolower((unsigned char)*s);
			continue;
		}
		if (n >= 2) {
			word[n] = '\0';
			if (strstr(low, word) != NULL)
				score++;
		}
		n = 0;
		if (*s == '\0')
			break;
	}
	return score;
}

/* OmniParser step 1: POST the screenshot to /parse/; *list gets its
 * parsed_content_list (a reference of the caller's), *n how many of its
 * elements count (at most GROUND_MAX_ELEMENTS, at least 1). */
static int
omni_parse(const struct config *cfg, const char *b64, json_object **reply, json_object **list,
    size_t *n, struct ground_result *r, struct derr *e)
{
	json_object *body = json_object_new_object(), *l;
	char *url = join_url(cfg->omniparser_url, "/parse/");
	int rc;

	json_object_object_add(body, "base64_image", json_object_new_string(b64));
	rc = post("omniparser", url, NULL, body, cfg->grounding_timeout_ms, reply, &r->latency_us, e);
	json_object_put(body);
	free(url);
	if (rc != 0)
		return -1;
	l = jpath(*reply, "parsed_content_list", NULL);
	if (l == NULL || !json_object_is_type(l, json_type_array))
		return derr_set(e, DERR_UNAVAILABLE, NULL, "omniparser answered without parsed_content_list: %.*s",
		    utf8_prec(jx_string(*reply, NULL), 200), jx_string(*reply, NULL));
	*list = json_object_get(l);   /* outlives the parse reply (the picker replaces it) */
	*n = json_object_array_length(l);
	if (*n > GROUND_MAX_ELEMENTS)
		*n = GROUND_MAX_ELEMENTS;
	if (*n == 0)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "omniparser found no elements on the screen");
	return 0;
}

/* Step 2: the element list, numbered as OmniParser's overlay numbers them
 * (malloc'd; NULL when out of memory). */
static char *
omni_list_text(json_object *list, size_t n)
{
	size_t cap = n * (ELEMENT_TEXT_MAX + 32) + 1, len = 0;
	char *p = malloc(cap);

	if (p == NULL)
		return NULL;
	p[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		json_object *el = json_object_array_get_idx(list, i);
		const char *c = json_object_get_string(jpath(el, "content", NULL));
		const char *ty = json_object_get_string(jpath(el, "type", NULL));

		len += (size_t)snprintf(p + len, cap - len, "%zu: %s: %.*s\n", i,
		    ty ? ty : "element", ELEMENT_TEXT_MAX, c ? c : "");
	}
	return p;
}

/* Step 3a: Claude names the element by number, shown the overlay image
 * (som_image_base64 of the parse reply, else the screenshot). */
static int
omni_pick_claude(const struct config *cfg, const struct ground_req *q, const char *b64,
    json_object *parse_reply, const char *els, size_t n, long *chosen, struct ground_result *r,
    struct derr *e)
{
	json_object *pick = json_object_new_object(), *m = json_object_new_object();
	json_object *content = json_object_new_array(), *msgs = json_object_new_array();
	json_object *reply = NULL, *blocks, *t;
	const char *som = json_object_get_string(jpath(parse_reply, "som_image_base64", NULL));
	char *prompt, *end;
	size_t i;
	int rc = -1;

	prompt = xasprintf("The screenshot's interactive elements, numbered as in the overlay:\n%s\n"
	    "Which element number best matches: %s\nAnswer with the number only.", els, q->description);
	json_object_array_add(content, anthropic_image(som != NULL && som[0] ? som : b64));
	json_object_array_add(content, text_part(prompt));
	json_object_object_add(m, "role", json_object_new_string("user"));
	json_object_object_add(m, "content", content);
	json_object_array_add(msgs, m);
	json_object_object_add(pick, "model", json_object_new_string(r->model));
	json_object_object_add(pick, "max_tokens", json_object_new_int(PICKER_MAX_TOKENS));
	json_object_object_add(pick, "messages", msgs);
	if (anthropic_call(cfg, "omniparser picker (claude)", pick, false, &reply,
	    &r->latency_us, e) != 0)
		goto out;
	blocks = jpath(reply, "content", NULL);
	t = blocks != NULL && json_object_is_type(blocks, json_type_array) ?
	    jpath(json_object_array_get_idx(blocks, 0), "text", NULL) : NULL;
	copy_trim(r->raw, sizeof r->raw, t != NULL ? json_object_get_string(t) : "");
	for (i = 0; r->raw[i] != '\0' && !isdigit((unsigned char)r->raw[i]); i++)
		;
	*chosen = r->raw[i] ? strtol(r->raw + i, &end, 10) : -1;
	if (*chosen < 0 || (size_t)*chosen >= n) {
		derr_set(e, DERR_UNAVAILABLE, NULL,
		    "the omniparser picker answered '%.*s', not an element number 0..%zu",
		    utf8_prec(r->raw, 200), r->raw, n - 1);
		goto out;
	}
	rc = 0;
out:
	json_object_put(pick);
	json_object_put(reply);
	free(prompt);
	return rc;
}

/* Step 3b, without a key: the caption sharing the most words. */
static int
omni_pick_words(const struct ground_req *q, json_object *list, size_t n, long *chosen,
    struct ground_result *r, struct derr *e)
{
	int best = 0;

	*chosen = -1;
	for (size_t i = 0; i < n; i++) {
		const char *c = json_object_get_string(jpath(json_object_array_get_idx(list, i),
		    "content", NULL));
		int s = c != NULL ? word_score(q->description, c) : 0;

		if (s > best) {
			best = s;
			*chosen = (long)i;
		}
	}
	snprintf(r->raw, sizeof r->raw, "%ld", *chosen);
	if (*chosen < 0)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "no OmniParser element caption (of %zu) shares a "
		    "word with '%.*s' (set ANTHROPIC_API_KEY for a model picker)", n,
		    utf8_prec(q->description, 100), q->description);
	return 0;
}

/* Step 4: the chosen element's box (0..1 ratios) in image pixels; its
 * centre is the point. */
static int
omni_point(const struct ground_req *q, json_object *list, long chosen, struct ground_result *r,
    struct derr *e)
{
	json_object *el = json_object_array_get_idx(list, (size_t)chosen);
	json_object *v = jpath(el, "bbox", NULL);
	double bx[4];

	if (v == NULL || !json_object_is_type(v, json_type_array) || json_object_array_length(v) != 4)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "omniparser element %ld has no 4-number bbox", chosen);
	for (size_t i = 0; i < 4; i++)
		bx[i] = json_object_get_double(json_object_array_get_idx(v, i)) *
		    ((i % 2) == 0 ? q->width : q->height);
	v = jpath(el, "content", NULL);
	copy_trim(r->element, sizeof r->element, v != NULL ? json_object_get_string(v) : "");
	r->has_box = true;
	memcpy(r->box, bx, sizeof bx);
	r->x = (bx[0] + bx[2]) / 2;
	r->y = (bx[1] + bx[3]) / 2;
	if (r->x < 0 || r->y < 0 || r->x >= q->width || r->y >= q->height)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "omniparser element %ld's box centre (%.0f, %.0f) is "
		    "outside the %dx%d image", chosen, r->x, r->y, q->width, q->height);
	return 0;
}

static int
g_omniparser(const struct config *cfg, const struct ground_req *q, struct ground_result *r,
    struct derr *e)
{
	json_object *reply = NULL, *list = NULL;
	char *b64 = NULL, *els = NULL;
	long chosen = -1;
	size_t n = 0;
	int rc = -1;

	if (cfg->omniparser_url[0] == '\0') {
		derr_set(e, DERR_UNAVAILABLE, NULL,
		    "the omniparser backend needs ACU_OMNIPARSER_URL (an OmniParser server, POST /parse/)");
		goto out;
	}
	b64 = b64_encode(q->jpeg, q->len, NULL);
	if (omni_parse(cfg, b64, &reply, &list, &n, r, e) != 0)
		goto out;
	if ((els = omni_list_text(list, n)) == NULL) {
		derr_set(e, DERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (cfg->anthropic_api_key[0] != '\0') {
		if (omni_pick_claude(cfg, q, b64, reply, els, n, &chosen, r, e) != 0)
			goto out;
	} else if (omni_pick_words(q, list, n, &chosen, r, e) != 0) {
		goto out;
	}
	rc = omni_point(q, list, chosen, r, e);
out:
	json_object_put(list);
	json_object_put(reply);
	free(b64);
	free(els);
	return rc;
}

/* ---- entry points ---- */

static const char *
model_uitars(const struct config *cfg)
{
	return cfg->openrouter_api_key[0] ? cfg->uitars_openrouter_model : cfg->uitars_ollama_model;
}

static const char *
model_claude_cu(const struct config *cfg)
{
	return cfg->claude_model;
}

static const char *
model_omniparser(const struct config *cfg)
{
	return cfg->anthropic_api_key[0] ? cfg->omniparser_picker_model : "word-match";
}

static const char *
provider_uitars(const struct config *cfg)
{
	return cfg->openrouter_api_key[0] ? "openrouter" : "ollama";
}

static const char *
provider_claude_cu(const struct config *cfg)
{
	return "anthropic";
}

static const char *
provider_omniparser(const struct config *cfg)
{
	return cfg->anthropic_api_key[0] ? "omniparser+claude" : "omniparser+words";
}

/* The grounding backends: one row each; nothing else in ground.c names
 * one. run NULL: no model (direct); ground_run fills r's backend, provider
 * and model from the row before it calls run. */
static const struct ground_backend {
	const char *name;
	int max_dim;            /* cap on the screenshot's longest side; 0: none of its own */
	const char *(*model)(const struct config *cfg);
	const char *(*provider)(const struct config *cfg);
	int (*run)(const struct config *cfg, const struct ground_req *q, struct ground_result *r,
	    struct derr *e);
} backends[] = {
	{ "direct", 0, NULL, NULL, NULL },
	{ "uitars", 0, model_uitars, provider_uitars, g_uitars },
	/* 1280: its computer tool's accurate size */
	{ "claude_cu", 1280, model_claude_cu, provider_claude_cu, g_claude_cu },
	{ "omniparser", 0, model_omniparser, provider_omniparser, g_omniparser },
};

static const struct ground_backend *
backend_of(const struct config *cfg)
{
	for (size_t i = 0; i < ARRAY_LEN(backends); i++)
		if (strcmp(cfg->gui_backend, backends[i].name) == 0)
			return &backends[i];
	return &backends[0];    /* ground_check refused anything else at start */
}

int
ground_check(const struct config *cfg, struct derr *e)
{
	char names[128] = "";
	size_t len = 0;
	bool ok = false;

	for (size_t i = 0; i < ARRAY_LEN(backends); i++) {
		ok = ok || strcmp(cfg->gui_backend, backends[i].name) == 0;
		len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
		    i == 0 ? "" : i + 1 == ARRAY_LEN(backends) ? " or " : ", ", backends[i].name);
		if (len >= sizeof names)
			len = sizeof names - 1;
	}
	if (!ok)
		return derr_set(e, DERR_INVALID, "gui-agent-backend", "unknown GUI agent backend '%s' "
		    "(%s)", cfg->gui_backend, names);
	if (strcmp(cfg->uitars_coords, "image") != 0 && strcmp(cfg->uitars_coords, "1000") != 0)
		return derr_set(e, DERR_INVALID, "uitars-coords", "ACU_UITARS_COORDS must be image or "
		    "1000, not '%s'", cfg->uitars_coords);
	return 0;
}

const char *
ground_model(const struct config *cfg)
{
	const struct ground_backend *b = backend_of(cfg);

	return b->model != NULL ? b->model(cfg) : "";
}

const char *
ground_provider(const struct config *cfg)
{
	const struct ground_backend *b = backend_of(cfg);

	return b->provider != NULL ? b->provider(cfg) : "";
}

bool
ground_has_model(const struct config *cfg)
{
	return backend_of(cfg)->run != NULL;
}

long
ground_max_dim(const struct config *cfg)
{
	const struct ground_backend *b = backend_of(cfg);
	long dim = cfg->grounding_max_dim;

	return b->max_dim > 0 && dim > b->max_dim ? b->max_dim : dim;
}

int
ground_run(const struct config *cfg, const struct ground_req *q, struct ground_result *r,
    struct derr *e)
{
	const struct ground_backend *b = backend_of(cfg);

	memset(r, 0, sizeof *r);
	r->confidence = -1;
	snprintf(r->backend, sizeof r->backend, "%s", b->name);
	if (q->description == NULL || q->description[0] == '\0' ||
	    strlen(q->description) > GROUND_MAX_DESCRIPTION)
		return derr_set(e, DERR_INVALID, "description", "a target description of 1..%d bytes is "
		    "required", GROUND_MAX_DESCRIPTION);
	snprintf(r->provider, sizeof r->provider, "%s", ground_provider(cfg));
	snprintf(r->model, sizeof r->model, "%s", ground_model(cfg));
	if (b->run != NULL)
		return b->run(cfg, q, r, e);
	return derr_set(e, DERR_INVALID, "description", "the direct backend has no model to find "
	    "'%.*s': give coordinates, or start detmd with ACU_GUI_AGENT_BACKEND=uitars, claude_cu "
	    "or omniparser", utf8_prec(q->description, 100), q->description);
}
