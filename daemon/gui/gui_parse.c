/*
 * gui_parse.c - the GUI agent's instruction parser (gui_parse in gui.h):
 * explicit calls such as click(x, y) or type("text"), and plain words such
 * as 'click the Save button' or 'scroll down 3 on the list'.
 *
 * State: none; pure functions of the instruction text. Invariants: every
 * parsed string is copied into a bounded buffer of struct gui_cmd; a
 * malformed instruction is DERR_INVALID field "instruction" naming the
 * forms that are understood.
 *
 * Does not: capture, ground, act or log (gui.c), or know HTTP (api_gui.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"
#include "gui.h"
#include "gui_int.h"

#define GUI_WORDS "'click the Save button', 'double click X', 'right click X', 'hover over X', " \
	"'type \"hello\" [into X]', 'press ctrl+s', 'scroll down [3] [on X]', 'drag X to Y'"
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

