/*
 * ocr_phrase.c - the text side of OCR waits, pure and reentrant: which
 * conditions are about visible text (ocr_condition: text:"..",
 * text-gone:"..", one quoted phrase in free text) and whether OCR output
 * holds a phrase despite OCR noise (ocr_match).
 *
 * Invariants: a condition is looked at up to COND_MAX bytes; a phrase
 * fits the caller's buffer or is refused. Matching normalises both sides
 * the same way (ASCII case and look-alikes folded, anything but letters and
 * digits a word break) and allows floor(len/7) edits inside a word, never
 * at its ends, so a word cannot borrow from its neighbour (ocr.h has the
 * rules). Malformed UTF-8 counts as U+FFFD.
 *
 * Does not: run tesseract (ocr.c) or look at pixels (ocr_boxes.c).
 */
#include "ocr.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

/* ---- tolerant matching -------------------------------------------------- */

/* Decodes one UTF-8 sequence at s (n bytes left); returns its length (1 for
 * a malformed byte) and the code point in *cp (0xFFFD if malformed). */
static size_t
utf8_one(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xE0) == 0xC0) {
		len = 2;
		c = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3;
		c = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		*cp = 0xFFFD;
		return 1;
	}
	if (len > n) {
		*cp = 0xFFFD;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*cp = 0xFFFD;
			return 1;
		}
		c = (c << 6) | (s[i] & 0x3F);
	}
	*cp = c;
	return len;
}

/* Non-ASCII characters that separate words: quotes, dashes, ellipsis,
 * bullets, no-break and other spaces, arrows. */
static bool
cp_is_break(uint32_t c)
{
	return c == 0xA0 || c == 0xAB || c == 0xBB || c == 0xB7 || c == 0xFFFD ||
	    (c >= 0x2000 && c <= 0x206F) || (c >= 0x2190 && c <= 0x21FF) ||
	    (c >= 0x25A0 && c <= 0x25FF) || c == 0x3000;
}

static char
fold_ascii(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		c = (unsigned char)(c - 'A' + 'a');
	switch (c) {
	case '0': return 'o';
	case '1': case 'i': case '|': return 'l';
	case '5': return 's';
	default: return (char)c;
	}
}

static bool
ascii_wordch(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '|';
}

/* Normalised form: folded word characters in t[0..n), and b[p] true when
 * position p (0..n) is a word boundary. t and b have room for strlen(s)+1.
 * Returns n. */
static size_t
norm(const char *s, char *t, bool *b)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i = 0, n = 0;
	bool brk = true;

	while (i < len) {
		uint32_t cp;
		size_t k;

		if (p[i] < 0x80) {
			if (!ascii_wordch(p[i])) {
				brk = true;
				i++;
				continue;
			}
			b[n] = brk;
			t[n++] = fold_ascii(p[i]);
			brk = false;
			i++;
			continue;
		}
		k = utf8_one(p + i, len - i, &cp);
		if (cp_is_break(cp)) {
			brk = true;
		} else {
			for (size_t j = 0; j < k; j++) {
				b[n] = j == 0 && brk;
				t[n++] = (char)p[i + j];
			}
			brk = false;
		}
		i += k;
	}
	b[n] = true;
	/* Multi-letter look-alikes, inside words: rn -> m, vv -> w. */
	{
		size_t r = 0, w = 0;

		while (r < n) {
			if (r + 1 < n && !b[r + 1] &&
			    ((t[r] == 'r' && t[r + 1] == 'n') || (t[r] == 'v' && t[r + 1] == 'v'))) {
				b[w] = b[r];
				t[w++] = t[r] == 'r' ? 'm' : 'w';
				r += 2;
				continue;
			}
			b[w] = b[r];
			t[w++] = t[r++];
		}
		b[w] = true;
		n = w;
	}
	return n;
}

/* Anchored edit distance of word p (m >= 1 chars) against every prefix of
 * t[0..tn): d[j] = distance to t[0..j), where the first and the last
 * character of p must each sit on a character of t (equal or substituted):
 * no insertion or deletion at either end. That keeps a word from borrowing
 * a letter of its neighbour when spaces are ignored ("download" +
 * "lncomplete"), at the price of "complete" not matching "completed".
 * prev and row are scratch of tn+1 ints. */
#define EDIT_INF 1000000

static void
edit_prefixes(const char *p, size_t m, const char *t, size_t tn, int *d, int *prev, int *row)
{
	prev[0] = 0;
	for (size_t j = 1; j <= tn; j++)
		prev[j] = EDIT_INF;
	for (size_t i = 1; i < m; i++) {
		row[0] = EDIT_INF;
		for (size_t j = 1; j <= tn; j++) {
			int sub = prev[j - 1] + (p[i - 1] != t[j - 1]);
			int del = i > 1 ? prev[j] + 1 : EDIT_INF;     /* not before p[0] */
			int ins = j > 1 ? row[j - 1] + 1 : EDIT_INF;  /* ditto */
			int v = sub < del ? sub : del;

			row[j] = v < ins ? v : ins;
		}
		memcpy(prev, row, sizeof *prev * (tn + 1));
	}
	/* prev: p[0..m-1) against t[0..j); the last step is diagonal. */
	d[0] = EDIT_INF;
	for (size_t j = 1; j <= tn; j++)
		d[j] = prev[j - 1] >= EDIT_INF ? EDIT_INF : prev[j - 1] + (p[m - 1] != t[j - 1]);
}

bool
ocr_match(const char *text, const char *phrase)
{
	enum { PMAX = OCR_MAX_PHRASE, SPAN = 2 * OCR_MAX_PHRASE + 2 };
	char pt[PMAX + 1];
	bool pb[PMAX + 1];
	char *tt = NULL;
	bool *tb = NULL;
	size_t pn, tn, tlen, pw_off[PMAX], pw_len[PMAX], npw = 0;
	int d[SPAN], prev[SPAN], row[SPAN];
	bool reach[SPAN], next[SPAN];
	bool found = false;

	if (text == NULL || phrase == NULL || strlen(phrase) >= PMAX)
		return false;
	pn = norm(phrase, pt, pb);
	if (pn == 0)
		return false;
	for (size_t i = 0; i < pn; i++) {
		if (pb[i])
			pw_off[npw++] = i;
		pw_len[npw - 1] = i + 1 - pw_off[npw - 1];
	}
	tlen = strlen(text);
	tt = xmalloc(tlen + 1);
	tb = xmalloc(sizeof *tb * (tlen + 1));
	tn = norm(text, tt, tb);

	for (size_t s = 0; s < tn && !found; s++) {
		size_t span = 0;   /* reach[] covers positions s .. s+span */

		if (!tb[s])
			continue;
		reach[0] = true;
		for (size_t w = 0; w < npw; w++) {
			size_t m = pw_len[w], bud = m / 7, nspan = span + m + bud;
			bool any = false;

			if (nspan >= SPAN)
				nspan = SPAN - 1;
			memset(next, 0, sizeof next[0] * (nspan + 1));
			for (size_t c = 0; c <= span; c++) {
				size_t from = s + c, tmax;

				if (!reach[c] || from > tn)
					continue;
				tmax = tn - from < m + bud ? tn - from : m + bud;
				edit_prefixes(pt + pw_off[w], m, tt + from, tmax, d, prev, row);
				for (size_t j = m > bud ? m - bud : 1; j <= tmax; j++)
					if ((size_t)d[j] <= bud && c + j <= nspan) {
						next[c + j] = true;
						any = true;
					}
			}
			if (!any)
				break;
			memcpy(reach, next, sizeof reach[0] * (nspan + 1));
			span = nspan;
			if (w + 1 == npw)
				for (size_t c = 0; c <= span && !found; c++)
					found = reach[c] && s + c <= tn && tb[s + c];
		}
	}
	free(tb);
	free(tt);
	return found;
}

/* ---- conditions --------------------------------------------------------- */

#define COND_MAX 4000   /* bytes of condition looked at (VISION_MAX_CONDITION) */

/* Opening quote at s: its length and the closing quote it expects. */
static size_t
quote_open(const char *s, const char **close)
{
	if (s[0] == '"') {
		*close = "\"";
		return 1;
	}
	if (strncmp(s, "\xe2\x80\x9c", 3) == 0) {       /* “ */
		*close = "\xe2\x80\x9d";                 /* ” */
		return 3;
	}
	if (strncmp(s, "\xe2\x80\x9e", 3) == 0) {       /* „ */
		*close = "\xe2\x80\x9c";                 /* “ */
		return 3;
	}
	return 0;
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Copies s[0..n) trimmed into out (len bytes); false if it does not fit,
 * is empty, or has no letter or digit. */
static bool
phrase_put(const char *s, size_t n, char *out, size_t len)
{
	bool word = false;

	while (n > 0 && is_space(s[0])) {
		s++;
		n--;
	}
	while (n > 0 && is_space(s[n - 1]))
		n--;
	if (n == 0 || n >= len || n >= OCR_MAX_PHRASE)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ascii_wordch((unsigned char)s[i]) || (unsigned char)s[i] >= 0x80)
			word = true;
	if (!word)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

static bool
in_list(const char *w, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(w, *list) == 0)
			return true;
	return false;
}

/* Words (lowercase ASCII letters) outside the quotes decide two things: the
 * condition is about a state of the quoted thing (-> not for OCR), or about
 * its absence (-> negate). */
static const char *const state_words[] = {
	"enabled", "disabled", "greyed", "grayed", "checked", "unchecked", "ticked",
	"unticked", "selected", "deselected", "unselected", "focused", "highlighted",
	"toggled", "color", "colour", "red", "green", "blue", "yellow", "orange",
	"bold", "italic", "underlined", "blinking", "flashing", "clickable",
	"pressed", "expanded", "collapsed", NULL
};
static const char *const gone_words[] = {
	"disappear", "disappears", "disappeared", "disappearing", "vanish", "vanishes",
	"vanished", "gone", "removed", "hidden", "hides", "absent", "not", "isn",
	"doesn", "aren", "wasn", "don", "never", "no", NULL
};

/* Scans the words of s[0..n); sets *state / *gone. */
static void
scan_words(const char *s, size_t n, bool *state, bool *gone)
{
	char w[24], prev[24] = "";
	size_t i = 0;

	while (i < n) {
		size_t k = 0;

		while (i < n && !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			i++;
		while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) {
			if (k < sizeof w - 1)
				w[k++] = (char)(s[i] | 0x20);
			i++;
		}
		if (k == 0)
			break;
		w[k] = '\0';
		if (in_list(w, state_words))
			*state = true;
		if (in_list(w, gone_words) ||
		    (strcmp(w, "away") == 0 && (strcmp(prev, "go") == 0 ||
		    strcmp(prev, "goes") == 0 || strcmp(prev, "went") == 0 ||
		    strcmp(prev, "going") == 0)))
			*gone = true;
		memcpy(prev, w, k + 1);
	}
}

/* A prefixed condition ("text: Saved", "text-gone: \"Saving...\""): the
 * rest (s, n bytes, after the prefix) is the phrase, or one quoted phrase.
 * 1 with phrase set, 0 when it is not one. */
static int
cond_prefixed(const char *s, size_t n, char *phrase, size_t len)
{
	const char *close;
	size_t ql;

	while (n > 0 && is_space(*s)) {
		s++;
		n--;
	}
	while (n > 0 && is_space(s[n - 1]))
		n--;
	ql = quote_open(s, &close);
	if (ql > 0) {
		size_t cl = strlen(close);

		/* The whole rest must be one quoted phrase. */
		if (n < ql + cl || strncmp(s + n - cl, close, cl) != 0)
			return 0;
		for (const char *q = s + ql; q < s + n - cl; q++)
			if (strncmp(q, close, cl) == 0)
				return 0;
		s += ql;
		n -= ql + cl;
	}
	return phrase_put(s, n, phrase, len) ? 1 : 0;
}

/* Free text: exactly one distinct quoted phrase (repeats of it allowed).
 * 1 with *found, *found_len, 0 when there is none or two differ. */
static int
cond_quoted(const char *s, size_t n, const char **found, size_t *found_len)
{
	const char *close;

	*found = NULL;
	*found_len = 0;
	for (size_t i = 0; i < n;) {
		size_t ql = quote_open(s + i, &close), cl;
		const char *body, *end;

		if (ql == 0) {
			i++;
			continue;
		}
		cl = strlen(close);
		body = s + i + ql;
		end = strstr(body, close);
		if (end == NULL || end > s + n)
			break;
		if (*found != NULL && ((size_t)(end - body) != *found_len ||
		    strncasecmp(*found, body, *found_len) != 0))
			return 0;
		*found = body;
		*found_len = (size_t)(end - body);
		i = (size_t)(end - s) + cl;
	}
	return *found != NULL;
}

/* The words outside the quotes of free text: whether they describe a
 * state (*state: not a text condition) or the text going away (*gone). */
static void
cond_words(const char *s, size_t n, bool *state, bool *gone)
{
	const char *close;

	for (size_t i = 0; i < n;) {
		size_t ql = quote_open(s + i, &close);
		const char *end;

		if (ql == 0) {
			size_t j = i;

			while (j < n && quote_open(s + j, &close) == 0)
				j++;
			scan_words(s + i, j - i, state, gone);
			i = j;
			continue;
		}
		end = strstr(s + i + ql, close);
		if (end == NULL)
			break;
		i = (size_t)(end - s) + strlen(close);
	}
}

int
ocr_condition(const char *condition, char *phrase, size_t len, bool *negate)
{
	static const struct {
		const char *prefix;
		bool negate;
	} prefixes[] = {
		{ "text-gone:", true }, { "text_gone:", true }, { "no-text:", true },
		{ "!text:", true }, { "text:", false },
	};
	const char *s, *found;
	size_t n, found_len;
	bool state = false, gone = false;

	if (negate != NULL)
		*negate = false;
	if (condition == NULL || phrase == NULL || len == 0)
		return 0;
	phrase[0] = '\0';
	s = condition;
	while (is_space(*s))
		s++;
	n = strnlen(s, COND_MAX + 1);
	if (n > COND_MAX)
		return 0;
	for (size_t i = 0; i < ARRAY_LEN(prefixes); i++) {
		size_t pl = strlen(prefixes[i].prefix);

		if (strncasecmp(s, prefixes[i].prefix, pl) != 0)
			continue;
		if (cond_prefixed(s + pl, n - pl, phrase, len) == 0)
			return 0;
		if (negate != NULL)
			*negate = prefixes[i].negate;
		return 1;
	}
	if (!cond_quoted(s, n, &found, &found_len) || !phrase_put(found, found_len, phrase, len)) {
		phrase[0] = '\0';
		return 0;
	}
	cond_words(s, n, &state, &gone);
	if (state) {
		phrase[0] = '\0';
		return 0;
	}
	if (negate != NULL)
		*negate = gone;
	return 1;
}
