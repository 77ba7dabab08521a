/*
 * gui.c - the GUI agent (see gui.h): instruction parsing, and the
 * capture -> ground -> act -> log pipeline of gui_find and gui_do.
 *
 * Invariants: a lease is held only while capturing or acting, never while
 * a model is asked; a point reaches XTest only after it was checked to be
 * on the screen; every parsed string is copied into a bounded buffer.
 *
 * Does not: know model wire formats (ground.c) or HTTP (api_gui.c).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "desktop.h"
#include "display.h"
#include "gui.h"
#include "shots.h"
#include "jx.h"
#include "log.h"
#include "task.h"
#include "util.h"
#include "xcap.h"
#include "xinput.h"

#define GUI_FORMS "click(x, y), double_click(x, y), right_click(x, y), middle_click(x, y), " \
	"move(x, y), drag(x1, y1, x2, y2), scroll(x, y, \"down\", 3), type(\"text\"), press(\"ctrl+s\")"
#define GUI_WORDS "'click the Save button', 'double click X', 'right click X', 'hover over X', " \
	"'type \"hello\" [into X]', 'press ctrl+s', 'scroll down [3] [on X]', 'drag X to Y'"
#define GUI_THUMB_QUALITY 60
#define SCROLL_DEFAULT 3
#define MAX_ARGS 5

static const char *const verb_names[] = {
	"click", "double_click", "right_click", "middle_click", "move", "type", "press", "scroll", "drag",
};

const char *
gui_verb_name(enum gui_verb v)
{
	return (size_t)v < ARRAY_LEN(verb_names) ? verb_names[v] : "?";
}

/* ---- parsing ---- */

static const char *
skip_ws(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* s starts with word (any case) followed by a non-word character. */
static const char *
word(const char *s, const char *w)
{
	size_t n = strlen(w);

	if (strncasecmp(s, w, n) != 0 || isalnum((unsigned char)s[n]) || s[n] == '_')
		return NULL;
	return skip_ws(s + n);
}

static void
copy_span(char *dst, size_t cap, const char *s, size_t n)
{
	while (n > 0 && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* A quoted string at *s (" or '), with \" \' \\ \n \t escapes. */
static int
quoted(const char **s, char *out, size_t cap)
{
	char q = **s;
	const char *p = *s + 1;
	size_t n = 0;

	if (q != '"' && q != '\'')
		return -1;
	for (; *p != '\0' && *p != q; p++) {
		char ch = *p;

		if (ch == '\\' && p[1] != '\0') {
			p++;
			ch = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
		}
		if (n + 1 >= cap)
			return -1;
		out[n++] = ch;
	}
	if (*p != q)
		return -1;
	out[n] = '\0';
	*s = p + 1;
	return 0;
}

static bool
whole_int(const char *s, int *out)
{
	char *end;
	long v;

	s = skip_ws(s);
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || errno != 0 || v < -1000000 || v > 1000000)
		return false;
	if (*skip_ws(end) != '\0')
		return false;
	*out = (int)v;
	return true;
}

/* "847, 523", "(847, 523)", "847 523", "at 847,523", "x=847, y=523". */
static bool
xy_text(const char *s, int *x, int *y)
{
	char buf[64], *p, *sep;
	size_t n;

	s = skip_ws(s);
	if (word(s, "at") != NULL)
		s = word(s, "at");
	n = strlen(s);
	if (n == 0 || n >= sizeof buf)
		return false;
	memcpy(buf, s, n + 1);
	p = buf;
	if ((*p == '(' || *p == '[') && n >= 2 && (buf[n - 1] == ')' || buf[n - 1] == ']')) {
		buf[n - 1] = '\0';
		p++;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (strncasecmp(p, "x=", 2) == 0)
		p += 2;
	sep = strpbrk(p, ", ");
	if (sep == NULL)
		return false;
	*sep++ = '\0';
	while (isspace((unsigned char)*sep))
		sep++;
	if (*sep == ',')
		sep++;
	while (isspace((unsigned char)*sep))
		sep++;
	if (strncasecmp(sep, "y=", 2) == 0)
		sep += 2;
	return whole_int(p, x) && whole_int(sep, y);
}

/* A target: coordinates if it is only coordinates, else words. */
static int
set_target(const char *s, size_t n, bool *at, int *x, int *y, char *dst, size_t cap,
    struct derr *e)
{
	copy_span(dst, cap, s, n);
	if (xy_text(dst, x, y)) {
		*at = true;
		dst[0] = '\0';
		return 0;
	}
	if (strlen(dst) > GROUND_MAX_DESCRIPTION)
		return derr_set(e, DERR_INVALID, "instruction", "the target description is over %d bytes",
		    GROUND_MAX_DESCRIPTION);
	return 0;
}

struct arg {
	bool is_int, is_str;
	int v;
	char s[GUI_MAX_TEXT + 1];
};

/* Comma-separated arguments: integers, quoted strings or bare words;
 * a leading `name=` (UI-TARS: content='...', start_box='...') is dropped. */
static int
split_args(const char *s, struct arg *a, int *na)
{
	*na = 0;
	s = skip_ws(s);
	if (*s == '\0')
		return 0;
	for (;;) {
		struct arg *x;
		const char *p = s, *start;

		if (*na == MAX_ARGS)
			return -1;
		x = &a[(*na)++];
		memset(x, 0, sizeof *x);
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (p > s && *skip_ws(p) == '=')
			s = skip_ws(skip_ws(p) + 1);
		if (*s == '"' || *s == '\'') {
			if (quoted(&s, x->s, sizeof x->s) != 0)
				return -1;
			x->is_str = true;
			s = skip_ws(s);
		} else {
			start = s;
			while (*s != '\0' && *s != ',')
				s++;
			copy_span(x->s, sizeof x->s, start, (size_t)(s - start));
			if (x->s[0] == '\0')
				return -1;
			if (whole_int(x->s, &x->v))
				x->is_int = true;
			else
				x->is_str = true;
		}
		if (*s == '\0')
			return 0;
		if (*s != ',')
			return -1;
		s = skip_ws(s + 1);
	}
}

static int
bad_call(const char *name, const char *want, struct derr *e)
{
	return derr_set(e, DERR_INVALID, "instruction", "malformed %s(...): expected %s "
	    "(explicit forms: %s)", name, want, GUI_FORMS);
}

static bool
direction(const char *s, char out[8])
{
	static const char *const dirs[] = { "up", "down", "left", "right" };
	size_t i;

	for (i = 0; i < ARRAY_LEN(dirs); i++)
		if (strcasecmp(s, dirs[i]) == 0) {
			snprintf(out, 8, "%s", dirs[i]);
			return true;
		}
	return false;
}

static int
parse_call(const char *name, const char *args, struct gui_cmd *c, struct derr *e)
{
	static const struct { const char *name; enum gui_verb v; } names[] = {
		{ "click", GUI_CLICK }, { "left_click", GUI_CLICK }, { "tap", GUI_CLICK },
		{ "double_click", GUI_DOUBLE_CLICK }, { "doubleclick", GUI_DOUBLE_CLICK },
		{ "left_double", GUI_DOUBLE_CLICK }, { "right_click", GUI_RIGHT_CLICK },
		{ "right_single", GUI_RIGHT_CLICK }, { "middle_click", GUI_MIDDLE_CLICK },
		{ "move", GUI_MOVE }, { "mouse_move", GUI_MOVE }, { "move_to", GUI_MOVE },
		{ "hover", GUI_MOVE }, { "type", GUI_TYPE }, { "type_text", GUI_TYPE },
		{ "press", GUI_PRESS }, { "key", GUI_PRESS }, { "hotkey", GUI_PRESS },
		{ "press_key", GUI_PRESS }, { "scroll", GUI_SCROLL }, { "drag", GUI_DRAG },
		{ "left_click_drag", GUI_DRAG },
	};
	struct arg *a;
	int na = 0, rc = -1;
	size_t i;

	for (i = 0; i < ARRAY_LEN(names); i++)
		if (strcasecmp(name, names[i].name) == 0)
			break;
	if (i == ARRAY_LEN(names))
		return derr_set(e, DERR_INVALID, "instruction", "unknown action '%.*s(...)' (explicit "
		    "forms: %s; or words: %s)", utf8_prec(name, 40), name, GUI_FORMS, GUI_WORDS);
	c->verb = names[i].v;
	a = calloc(MAX_ARGS, sizeof *a);
	if (a == NULL)
		return derr_set(e, DERR_INTERNAL, NULL, "out of memory");
	if (split_args(args, a, &na) != 0) {
		bad_call(name, "comma-separated numbers or quoted strings", e);
		goto out;
	}
	switch (c->verb) {
	case GUI_CLICK: case GUI_DOUBLE_CLICK: case GUI_RIGHT_CLICK: case GUI_MIDDLE_CLICK:
	case GUI_MOVE:
		if (na == 2 && a[0].is_int && a[1].is_int) {
			c->at = true;
			c->x = a[0].v;
			c->y = a[1].v;
		} else if (na == 1 && a[0].is_str) {
			if (set_target(a[0].s, strlen(a[0].s), &c->at, &c->x, &c->y, c->target,
			    sizeof c->target, e) != 0)
				goto out;
		} else if (!(na == 0 && c->verb != GUI_MOVE)) {
			bad_call(name, "two integers (x, y)", e);
			goto out;
		}
		break;
	case GUI_TYPE:
		if (na != 1 || !a[0].is_str || a[0].s[0] == '\0') {
			bad_call(name, "one quoted string: type(\"hello\")", e);
			goto out;
		}
		snprintf(c->text, sizeof c->text, "%s", a[0].s);
		break;
	case GUI_PRESS:
		if (na != 1 || a[0].s[0] == '\0') {
			bad_call(name, "one key or chord: press(\"ctrl+s\")", e);
			goto out;
		}
		snprintf(c->text, sizeof c->text, "%s", a[0].s);
		break;
	case GUI_SCROLL: {
		int k = 0;

		if (na >= 2 && a[0].is_int && a[1].is_int) {
			c->at = true;
			c->x = a[0].v;
			c->y = a[1].v;
			k = 2;
		}
		if (k >= na || !direction(a[k].s, c->dir) || na > k + 2 ||
		    (na == k + 2 && (!a[k + 1].is_int || a[k + 1].v < 1 || a[k + 1].v > 100))) {
			bad_call(name, "[x, y,] \"up|down|left|right\"[, amount 1..100]", e);
			goto out;
		}
		c->amount = na == k + 2 ? a[k + 1].v : SCROLL_DEFAULT;
		break;
	}
	case GUI_DRAG:
		if (na == 4 && a[0].is_int && a[1].is_int && a[2].is_int && a[3].is_int) {
			c->at = c->at2 = true;
			c->x = a[0].v;
			c->y = a[1].v;
			c->x2 = a[2].v;
			c->y2 = a[3].v;
		} else if (na == 2 && a[0].is_str && a[1].is_str) {
			if (set_target(a[0].s, strlen(a[0].s), &c->at, &c->x, &c->y, c->target,
			    sizeof c->target, e) != 0 ||
			    set_target(a[1].s, strlen(a[1].s), &c->at2, &c->x2, &c->y2, c->target2,
			    sizeof c->target2, e) != 0)
				goto out;
		} else {
			bad_call(name, "four integers (x1, y1, x2, y2)", e);
			goto out;
		}
		break;
	}
	rc = 0;
out:
	free(a);
	return rc;
}

/* click / move in words: "[on|at] <target>". */
static int
words_point(const char *rest, struct gui_cmd *c, struct derr *e)
{
	const char *p;

	if ((p = word(rest, "on")) != NULL || (p = word(rest, "at")) != NULL)
		rest = p;
	if (*rest == '\0' && c->verb == GUI_MOVE)
		return derr_set(e, DERR_INVALID, "instruction", "say where to move: 'hover over X'");
	return set_target(rest, strlen(rest), &c->at, &c->x, &c->y, c->target, sizeof c->target, e);
}

/* type in words: "\"text\" [into|in|on|at <target>]", or the rest as text. */
static int
words_type(const char *rest, struct gui_cmd *c, struct derr *e)
{
	const char *p;

	if (*rest == '"' || *rest == '\'') {
		if (quoted(&rest, c->text, sizeof c->text) != 0)
			return derr_set(e, DERR_INVALID, "instruction", "type: unterminated quote, or "
			    "text over %d bytes", GUI_MAX_TEXT);
		rest = skip_ws(rest);
		if ((p = word(rest, "into")) != NULL || (p = word(rest, "in")) != NULL ||
		    (p = word(rest, "on")) != NULL || (p = word(rest, "at")) != NULL)
			return set_target(p, strlen(p), &c->at, &c->x, &c->y, c->target,
			    sizeof c->target, e);
		if (*rest != '\0')
			return derr_set(e, DERR_INVALID, "instruction", "type \"text\" may be followed "
			    "only by 'into <target>', not '%.*s'", utf8_prec(rest, 60),
			    rest);
	} else {
		if (strlen(rest) > GUI_MAX_TEXT)
			return derr_set(e, DERR_INVALID, "instruction", "text over %d bytes", GUI_MAX_TEXT);
		snprintf(c->text, sizeof c->text, "%s", rest);
	}
	if (c->text[0] == '\0')
		return derr_set(e, DERR_INVALID, "instruction", "type what? type \"hello\"");
	return 0;
}

/* press in words: a key or chord, quoted or not. */
static int
words_press(const char *rest, struct gui_cmd *c, struct derr *e)
{
	if (*rest == '"' || *rest == '\'') {
		if (quoted(&rest, c->text, sizeof c->text) != 0)
			return derr_set(e, DERR_INVALID, "instruction", "press: unterminated quote");
	} else {
		copy_span(c->text, sizeof c->text, rest, strlen(rest));
	}
	if (c->text[0] == '\0' || strlen(c->text) > 256)
		return derr_set(e, DERR_INVALID, "instruction", "press what? press ctrl+s");
	return 0;
}

/* scroll in words: "<direction> [by] [N [times|clicks|lines]] [on|in|over|at <target>]". */
static int
words_scroll(const char *rest, struct gui_cmd *c, struct derr *e)
{
	char dir[16];
	size_t n = strcspn(rest, " \t");
	const char *p;
	char *end;
	long amount = SCROLL_DEFAULT;

	copy_span(dir, sizeof dir, rest, n < sizeof dir ? n : sizeof dir - 1);
	if (!direction(dir, c->dir))
		return derr_set(e, DERR_INVALID, "instruction", "scroll up, down, left or right "
		    "(scroll down 3 on the list)");
	rest = skip_ws(rest + n);
	if ((p = word(rest, "by")) != NULL)
		rest = p;
	if (isdigit((unsigned char)*rest)) {
		amount = strtol(rest, &end, 10);
		if (amount < 1 || amount > 100)
			return derr_set(e, DERR_INVALID, "instruction", "scroll amount must be 1..100");
		rest = skip_ws(end);
		if ((p = word(rest, "times")) != NULL || (p = word(rest, "clicks")) != NULL ||
		    (p = word(rest, "lines")) != NULL)
			rest = p;
	}
	c->amount = (int)amount;
	if ((p = word(rest, "on")) != NULL || (p = word(rest, "in")) != NULL ||
	    (p = word(rest, "over")) != NULL || (p = word(rest, "at")) != NULL)
		rest = p;
	return set_target(rest, strlen(rest), &c->at, &c->x, &c->y, c->target, sizeof c->target, e);
}

/* drag in words: "[from] <target> to <target>" (split at the last " to "). */
static int
words_drag(const char *rest, struct gui_cmd *c, struct derr *e)
{
	const char *to = NULL, *p, *q;

	if ((p = word(rest, "from")) != NULL)
		rest = p;
	for (q = rest; (q = strcasestr(q, " to ")) != NULL; q++)
		to = q;     /* the last " to " */
	if (to == NULL || to == rest)
		return derr_set(e, DERR_INVALID, "instruction", "drag X to Y (or drag(x1, y1, x2, y2))");
	if (set_target(rest, (size_t)(to - rest), &c->at, &c->x, &c->y, c->target,
	    sizeof c->target, e) != 0 ||
	    set_target(to + 4, strlen(to + 4), &c->at2, &c->x2, &c->y2, c->target2,
	    sizeof c->target2, e) != 0)
		return -1;
	if ((!c->at && c->target[0] == '\0') || (!c->at2 && c->target2[0] == '\0'))
		return derr_set(e, DERR_INVALID, "instruction", "drag X to Y: both ends are needed");
	return 0;
}

/* An instruction in words: the verb (longest phrases first), then the
 * verb's own reading of the rest. */
static int
parse_words(const char *s, struct gui_cmd *c, struct derr *e)
{
	static const struct { const char *w; enum gui_verb v; } verbs[] = {
		{ "double click", GUI_DOUBLE_CLICK }, { "double-click", GUI_DOUBLE_CLICK },
		{ "doubleclick", GUI_DOUBLE_CLICK }, { "right click", GUI_RIGHT_CLICK },
		{ "right-click", GUI_RIGHT_CLICK }, { "rightclick", GUI_RIGHT_CLICK },
		{ "middle click", GUI_MIDDLE_CLICK }, { "middle-click", GUI_MIDDLE_CLICK },
		{ "left click", GUI_CLICK }, { "left-click", GUI_CLICK }, { "click", GUI_CLICK },
		{ "tap", GUI_CLICK }, { "hover over", GUI_MOVE }, { "hover", GUI_MOVE },
		{ "move the mouse to", GUI_MOVE }, { "move the pointer to", GUI_MOVE },
		{ "move to", GUI_MOVE }, { "point at", GUI_MOVE }, { "type", GUI_TYPE },
		{ "press", GUI_PRESS }, { "hit", GUI_PRESS }, { "scroll", GUI_SCROLL },
		{ "drag", GUI_DRAG },
	};
	const char *rest = NULL;
	size_t i;

	for (i = 0; i < ARRAY_LEN(verbs) && rest == NULL; i++)
		if ((rest = word(s, verbs[i].w)) != NULL)
			c->verb = verbs[i].v;
	if (rest == NULL)
		return derr_set(e, DERR_INVALID, "instruction", "cannot read the instruction '%.*s': "
		    "start with an action (explicit forms: %s; or words: %s)", utf8_prec(s, 80),
		    s, GUI_FORMS, GUI_WORDS);
	switch (c->verb) {
	case GUI_CLICK: case GUI_DOUBLE_CLICK: case GUI_RIGHT_CLICK: case GUI_MIDDLE_CLICK:
	case GUI_MOVE:
		return words_point(rest, c, e);
	case GUI_TYPE:
		return words_type(rest, c, e);
	case GUI_PRESS:
		return words_press(rest, c, e);
	case GUI_SCROLL:
		return words_scroll(rest, c, e);
	case GUI_DRAG:
		return words_drag(rest, c, e);
	}
	return 0;
}

/* Whether "name(...)" is one call: 0 when the first ')' outside quotes
 * is followed by more words ("drag (1, 2) to (3, 4)" is words), else 1. */
static int
call_close(const char *open)
{
	char q = 0;
	const char *p;

	for (p = open + 1; *p != '\0'; p++) {
		if (q != 0) {
			if (*p == '\\' && p[1] != '\0')
				p++;
			else if (*p == q)
				q = 0;
		} else if (*p == '"' || *p == '\'') {
			q = *p;
		} else if (*p == ')') {
			p = skip_ws(p + 1);
			while (*p == ';' || isspace((unsigned char)*p))
				p++;
			return *p == '\0';
		}
	}
	return 1;   /* no ')': a malformed call */
}

int
gui_parse(const char *s, struct gui_cmd *c, struct derr *e)
{
	char name[32];
	const char *p, *open;
	size_t n;

	memset(c, 0, sizeof *c);
	if (s == NULL || strlen(s) > GUI_MAX_INSTRUCTION)
		return derr_set(e, DERR_INVALID, "instruction", "instruction must be 1..%d bytes",
		    GUI_MAX_INSTRUCTION);
	s = skip_ws(s);
	if (*s == '\0')
		return derr_set(e, DERR_INVALID, "instruction", "instruction is empty (explicit forms: "
		    "%s; or words: %s)", GUI_FORMS, GUI_WORDS);
	/* name( ... ) : an explicit call. */
	for (p = s; isalnum((unsigned char)*p) || *p == '_'; p++)
		;
	open = skip_ws(p);
	if (p > s && *open == '(' && call_close(open) != 0) {
		char *args;
		int rc;

		n = strlen(open);
		while (n > 0 && (isspace((unsigned char)open[n - 1]) || open[n - 1] == ';'))
			n--;
		if (n < 2 || open[n - 1] != ')')
			return derr_set(e, DERR_INVALID, "instruction", "malformed '%.*s': a call must end "
			    "with ')' (explicit forms: %s)", utf8_prec(s, 60), s, GUI_FORMS);
		copy_span(name, sizeof name, s, (size_t)(p - s) < sizeof name ? (size_t)(p - s) : sizeof name - 1);
		args = xasprintf("%.*s", (int)(n - 2), open + 1);
		rc = parse_call(name, args, c, e);
		free(args);
		return rc;
	}
	return parse_words(s, c, e);
}

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
			if (strcmp(k, "after") != 0)
				json_object_object_add(out, k, json_object_get(val));
		}
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

int
gui_find(struct app *app, const char *task_id, const char *description,
    json_object **out, struct derr *e)
{
	struct display_lease l;
	struct shot s;
	json_object *g = NULL, *timing;
	int64_t t0 = mono_us();
	double cap_ms, ground_ms = 0;
	int x, y, rc = -1;

	memset(&s, 0, sizeof s);
	*out = NULL;
	if (strlen(description) > GROUND_MAX_DESCRIPTION)
		return derr_set(e, DERR_INVALID, "description", "description is over %d bytes",
		    GROUND_MAX_DESCRIPTION);
	if (!ground_has_model(app->cfg))
		return derr_set(e, DERR_INVALID, "description", "the direct backend has no model to find "
		    "'%.*s'; start detmd with ACU_GUI_AGENT_BACKEND=uitars, claude_cu or omniparser "
		    "(gui_do accepts explicit coordinates: %s)", utf8_prec(description, 100),
		    description, GUI_FORMS);
	if (desktop_lease(app, task_id, &l, e) != 0)
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

	switch (c->verb) {
	case GUI_CLICK: case GUI_DOUBLE_CLICK: case GUI_RIGHT_CLICK: case GUI_MIDDLE_CLICK:
		button = c->verb == GUI_RIGHT_CLICK ? 3 : c->verb == GUI_MIDDLE_CLICK ? 2 : 1;
		count = c->verb == GUI_DOUBLE_CLICK ? 2 : 1;
		if (c->at ? xinput_click_at(l->d, x, y, button, count, e) != 0 :
		    xinput_pointer(l->d, &x, &y, e) != 0 || xinput_click(l->d, button, count, e) != 0)
			return -1;
		json_object_object_add(r, "button", json_object_new_int(button));
		json_object_object_add(r, "clicks", json_object_new_int(count));
		snprintf(obs, obslen, "%s at (%d,%d)", count == 2 ? "double-clicked" : button == 3 ?
		    "right-clicked" : button == 2 ? "middle-clicked" : "clicked", x, y);
		break;
	case GUI_MOVE:
		if (xinput_move(l->d, x, y, e) != 0)
			return -1;
		snprintf(obs, obslen, "moved the pointer to (%d,%d)", x, y);
		break;
	case GUI_TYPE:
		if (c->at && xinput_click_at(l->d, x, y, 1, 1, e) != 0)
			return -1;
		if (xinput_type(l->d, c->text, strlen(c->text), &sent, e) != 0)
			return -1;
		json_object_object_add(r, "chars", json_object_new_int64((int64_t)utf8_chars(c->text)));
		json_object_object_add(r, "chars_sent", json_object_new_int64((int64_t)sent));
		if (c->at)
			snprintf(obs, obslen, "clicked (%d,%d) and typed %zu characters", x, y, utf8_chars(c->text));
		else
			snprintf(obs, obslen, "typed %zu characters", utf8_chars(c->text));
		break;
	case GUI_PRESS:
		if (xinput_keys(l->d, c->text, e) != 0)
			return -1;
		json_object_object_add(r, "keys", json_object_new_string(c->text));
		snprintf(obs, obslen, "pressed %.*s", utf8_prec(c->text, 100), c->text);
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
		snprintf(obs, obslen, "scrolled %s by %d at (%d,%d)", c->dir, c->amount, x, y);
		break;
	case GUI_DRAG:
		if (xinput_drag(l->d, x, y, c->x2, c->y2, 1, e) != 0)
			return -1;
		json_object_object_add(r, "x2", json_object_new_int(c->x2));
		json_object_object_add(r, "y2", json_object_new_int(c->y2));
		snprintf(obs, obslen, "dragged from (%d,%d) to (%d,%d)", x, y, c->x2, c->y2);
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
 * (*need1: the target, *need2: a drag's end); targets in words need a
 * model. */
static int
do_parse(struct app *app, const char *instruction, struct gui_cmd *c, json_object *r,
    bool *need1, bool *need2, struct derr *e)
{
	if (gui_parse(instruction, c, e) != 0)
		return -1;
	json_object_object_add(r, "action", json_object_new_string(gui_verb_name(c->verb)));
	*need1 = !c->at && c->target[0] != '\0';
	*need2 = c->verb == GUI_DRAG && !c->at2 && c->target2[0] != '\0';
	if ((*need1 || *need2) && !ground_has_model(app->cfg))
		return derr_set(e, DERR_INVALID, "instruction", "the direct backend needs coordinates in "
		    "the instruction, not '%.*s': use %s, or start detmd with "
		    "ACU_GUI_AGENT_BACKEND=uitars, claude_cu or omniparser",
		    utf8_prec(*need1 ? c->target : c->target2, 100), *need1 ? c->target : c->target2,
		    GUI_FORMS);
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
	if (desktop_lease(app, task_id, l, e) != 0)
		return -1;
	*leased = true;
	if (strcmp(l->name, s->display) != 0 || l->width != s->screen_w || l->height != s->screen_h)
		return derr_set(e, DERR_CONFLICT, "task_id", "the display changed while grounding "
		    "(%s %dx%d, now %s %dx%d); nothing was done", s->display, s->screen_w, s->screen_h,
		    l->name, l->width, l->height);
	return 0;
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

int
gui_do(struct app *app, const char *task_id, const char *instruction, bool after_shot,
    json_object **out, struct derr *e)
{
	struct gui_cmd *c = calloc(1, sizeof *c);
	struct display_lease l;
	struct shot s;
	bool leased = false, need1 = false, need2 = false;
	json_object *r = json_object_new_object(), *after;
	int64_t t0 = mono_us(), t1;
	double cap_ms = 0, ground_ms = 0, act_ms = 0;
	char obs[256] = "";
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
	if (do_parse(app, instruction, c, r, &need1, &need2, e) != 0 ||
	    desktop_lease(app, task_id, &l, e) != 0)
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
	json_object_object_add(r, "grounded", json_object_new_boolean(need1 || need2));
	t1 = mono_us();
	if (act(&l, c, r, obs, sizeof obs, e) != 0)
		goto out;
	act_ms = ms_since(t1);
	json_object_object_add(r, "observation", json_object_new_string(obs));
	if (after_shot && (after = thumb(&l, task_id, e)) != NULL)
		json_object_object_add(r, "after", after);
	display_unlease(&l);
	leased = false;
	json_object_object_add(r, "timing", timing_json(cap_ms, ground_ms, act_ms, ms_since(t0)));
	rc = 0;
out:
	if (leased)
		display_unlease(&l);
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
