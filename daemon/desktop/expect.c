/*
 * expect.c - parsing what an input is expected to do (see expect.h).
 *
 * Owns nothing; pure functions. The text and element forms are the smart
 * waits' own parsers (backends/ocr.h ocr_condition, x11/a11y_match.h
 * a11y_condition); this file adds window:, gone: and settled and decides
 * which parser a condition goes to, in this order: settled, gone:,
 * window:/window-gone:, element:/element-gone:, text (prefixed or one
 * quoted phrase).
 *
 * Does not: check a condition (effect.c), or look at a display.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/ocr.h"
#include "expect.h"

#define FORMS "text:\"Saved\", text-gone:\"Saving\", element:button \"OK\", element-gone:dialog " \
	"\"Saving\", window:\"Save As\", window-gone:\"Saving\", gone:dialog \"Saving\", settled or settled:800"

static const char *
skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

bool
expect_settled(const char *s, int *ms)
{
	char *end;
	long v = EXPECT_SETTLED_MS;

	if (s == NULL)
		return false;
	s = skip_space(s);
	if (strncasecmp(s, "settled", 7) != 0)
		return false;
	s = skip_space(s + 7);
	if (*s == ':' || *s == '=')
		s = skip_space(s + 1);
	if (*s != '\0') {
		v = strtol(s, &end, 10);
		if (end == s)
			return false;
		s = skip_space(end);
		if (strncasecmp(s, "ms", 2) == 0)
			s = skip_space(s + 2);
		if (*s != '\0' || v < 1 || v > EXPECT_SETTLED_MAX_MS)
			return false;
	}
	if (ms != NULL)
		*ms = (int)v;
	return true;
}

/* A window title: "quoted" (the inside as written) or the rest trimmed. */
static bool
title_of(const char *s, char *out, size_t len)
{
	const char *q1, *q2;
	size_t n;

	s = skip_space(s);
	q1 = strchr(s, '"');
	q2 = q1 != NULL ? strchr(q1 + 1, '"') : NULL;
	if (q1 != NULL && q2 != NULL) {
		s = q1 + 1;
		n = (size_t)(q2 - s);
	} else {
		n = strlen(s);
		while (n > 0 && isspace((unsigned char)s[n - 1]))
			n--;
	}
	if (n == 0 || n >= len)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

/* Words whose role is a window's name a window title. */
static bool
window_role(const struct a11y_words *w)
{
	static const char *const roles[] = { "dialog", "alert", "window", "frame" };

	for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
		if (strcasecmp(w->role_word, roles[i]) == 0)
			return true;
	return false;
}

/* The forms other than settled and gone:, into x. 0, or -1 (no form). */
static int
parse_one(const char *s, struct expect *x)
{
	bool gone = false, negate = false;

	s = skip_space(s);
	if (strncasecmp(s, "window-gone:", 12) == 0 || strncasecmp(s, "window:", 7) == 0) {
		x->gone = x->gone || s[6] == '-';
		x->kind = EXPECT_WINDOW;
		return title_of(s + (s[6] == '-' ? 12 : 7), x->phrase, sizeof x->phrase) ? 0 : -1;
	}
	if (a11y_condition(s, &x->words, &gone)) {
		x->kind = EXPECT_ELEMENT;
		x->gone = x->gone || gone;
		return 0;
	}
	if (ocr_condition(s, x->phrase, sizeof x->phrase, &negate) == 1) {
		x->kind = EXPECT_TEXT;
		x->gone = x->gone || negate;
		return 0;
	}
	return -1;
}

/* gone:<thing>: one of the forms, or words (a window's role: a title). */
static int
parse_gone(const char *s, struct expect *x)
{
	static const char *const prefixed[] = { "window:", "window-gone:", "element:", "element-gone:", "text:",
		"text-gone:", "text_gone:", "no-text:", "!text:" };

	x->gone = true;
	s = skip_space(s);
	for (size_t i = 0; i < sizeof prefixed / sizeof prefixed[0]; i++)
		if (strncasecmp(s, prefixed[i], strlen(prefixed[i])) == 0)
			return parse_one(s, x);
	/* Words: a window's role (or none) names a window title, else an element. */
	if (a11y_words_parse(s, &x->words) != 0 || x->words.name[0] == '\0')
		return -1;
	if (window_role(&x->words) || x->words.role_word[0] == '\0') {
		x->kind = EXPECT_WINDOW;
		return title_of(strchr(s, '"') != NULL ? s : x->words.name, x->phrase, sizeof x->phrase) ? 0 : -1;
	}
	x->kind = EXPECT_ELEMENT;
	return 0;
}

int
expect_parse(const char *s, struct expect *x, struct derr *e)
{
	const char *p;
	int rc;

	memset(x, 0, sizeof *x);
	if (s == NULL || strlen(s) > EXPECT_MAX)
		return derr_set(e, DERR_INVALID, "expect", "expect is over %d bytes", EXPECT_MAX);
	snprintf(x->text, sizeof x->text, "%s", s);
	p = skip_space(s);
	if (expect_settled(p, &x->settled_ms)) {
		x->kind = EXPECT_SETTLED;
		return 0;
	}
	if (strncasecmp(p, "gone:", 5) == 0)
		rc = parse_gone(p + 5, x);
	else
		rc = parse_one(p, x);
	if (rc == 0)
		return 0;
	x->kind = EXPECT_NONE;
	return derr_set(e, DERR_INVALID, "expect", "expect '%.*s' is not a condition detm can check; "
	    "write one of: %s", utf8_prec(s, 120), s, FORMS);
}

void
expect_describe(const struct expect *x, char *out, size_t len)
{
	switch (x->kind) {
	case EXPECT_TEXT:
		snprintf(out, len, "the text \"%s\" to %s", x->phrase, x->gone ? "go away" : "appear");
		break;
	case EXPECT_ELEMENT:
		snprintf(out, len, "%s%s \"%s\" %s the accessibility tree", x->words.role_word[0] ? "the " : "an element",
		    x->words.role_word, x->words.name, x->gone ? "to leave" : "to be in");
		break;
	case EXPECT_WINDOW:
		snprintf(out, len, "a window \"%s\" to %s", x->phrase, x->gone ? "go away" : "appear");
		break;
	case EXPECT_SETTLED:
		snprintf(out, len, "the screen to change and then settle for %d ms", x->settled_ms);
		break;
	default:
		snprintf(out, len, "nothing");
	}
}
