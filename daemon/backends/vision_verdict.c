/*
 * vision_verdict.c - what a vision model's answer says, pure and
 * reentrant: the verdict line (YES / NO / PARTIAL, however the model
 * decorates it: "**YES**", "Answer: no.", a JSON object) with its reason,
 * and the structured FINAL_JSON line (decision, confidence, evidence,
 * summary). vision.h has the contract.
 *
 * Invariants: a reason is one trimmed line cut to the caller's buffer at a
 * UTF-8 boundary; verdict words count only whole; text that says nothing
 * usable is -1 with *v NO and "unparseable model output: ..." as the
 * reason, never a guessed YES.
 *
 * Does not: call a model, or decide what a low confidence means (the wait
 * engine does).
 */
#include "vision.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


const char *
vision_verdict_name(enum vision_verdict v)
{
	switch (v) {
	case VISION_YES:
		return "YES";
	case VISION_PARTIAL:
		return "PARTIAL";
	case VISION_NO:
		break;
	}
	return "NO";
}

/* ---- the verdict parser ----------------------------------------------- */

/* Classifies the whole ASCII word at p: VISION_* or -1; *wlen = its length. */
static int
word_verdict(const char *p, size_t *wlen)
{
	static const struct {
		const char *w;
		int v;
	} words[] = {
		{ "YES", VISION_YES }, { "YEP", VISION_YES }, { "YEAH", VISION_YES }, { "TRUE", VISION_YES },
		{ "NO", VISION_NO }, { "NOPE", VISION_NO }, { "NOT", VISION_NO }, { "FALSE", VISION_NO },
		{ "PARTIAL", VISION_PARTIAL }, { "PARTIALLY", VISION_PARTIAL }, { "PARTLY", VISION_PARTIAL },
	};
	char w[16];
	size_t n = 0;

	while (isalpha((unsigned char)p[n]) && n < sizeof w - 1) {
		w[n] = (char)toupper((unsigned char)p[n]);
		n++;
	}
	w[n] = '\0';
	*wlen = n;
	/* A word is whole only if a non-letter, non-digit follows (an en or
	 * em dash is the only non-ASCII character accepted after it). */
	if (n == 0 || isalnum((unsigned char)p[n]))
		return -1;
	if ((unsigned char)p[n] >= 0x80 && !(strncmp(p + n, "\xe2\x80\x93", 3) == 0 ||
	    strncmp(p + n, "\xe2\x80\x94", 3) == 0))
		return -1;
	for (size_t i = 0; i < ARRAY_LEN(words); i++)
		if (strcmp(w, words[i].w) == 0)
			return words[i].v;
	return -1;
}

/* Skips markdown and quoting around a word: spaces, * _ # > ` " ' ~ [ ( - and
 * list bullets. */
static const char *
skip_decor(const char *p, const char *end)
{
	while (p < end) {
		if (strchr(" \t*_#>`\"'~[(-", *p) != NULL && *p != '\0')
			p++;
		else if (end - p >= 3 && memcmp(p, "\xe2\x80\xa2", 3) == 0)   /* bullet */
			p += 3;
		else
			break;
	}
	return p;
}

/* Skips separators between a verdict and its reason: markdown, : . , ; - ) ]
 * and en/em dashes. */
static const char *
skip_sep(const char *p, const char *end)
{
	while (p < end) {
		if (strchr(" \t*_`\"':.,;!-)]", *p) != NULL && *p != '\0')
			p++;
		else if (end - p >= 3 && (memcmp(p, "\xe2\x80\x93", 3) == 0 || memcmp(p, "\xe2\x80\x94", 3) == 0))
			p += 3;
		else
			break;
	}
	return p;
}

/* Copies [p, end) into out as one trimmed line without trailing markdown;
 * cut at a UTF-8 boundary. */
static void
copy_clean(const char *p, const char *end, char *out, size_t cap)
{
	size_t o = 0;
	bool space = false;

	if (cap == 0)
		return;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	while (end > p && strchr(" \t\r\n*_`\"", end[-1]) != NULL)
		end--;
	for (; p < end && o + 1 < cap; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20 || c == 0x7f) {
			space = true;
			continue;
		}
		if (space && o > 0 && o + 2 < cap)
			out[o++] = ' ';
		space = false;
		out[o++] = (char)c;
	}
	if (p < end) {          /* truncated: drop a partial UTF-8 sequence */
		while (o > 0 && ((unsigned char)out[o - 1] & 0xC0) == 0x80)
			o--;
		if (o > 0 && ((unsigned char)out[o - 1] & 0xC0) == 0xC0)
			o--;
	}
	out[o] = '\0';
}

static const char *
line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl != NULL ? nl : end;
}

/*
 * Looks for a verdict at the start of the line [p, end): the first word,
 * or the first word after a short "Label:" ("Answer:", "Final answer:",
 * "Verdict:"). Returns the verdict or -1; *rest = just after the word.
 */
static int
line_verdict(const char *p, const char *end, const char **rest)
{
	const char *q = skip_decor(p, end);
	size_t wlen;
	int v = q < end ? word_verdict(q, &wlen) : -1;

	if (v >= 0) {
		*rest = q + wlen;
		return v;
	}
	/* "Label words: YES" with a label of letters and spaces only. */
	for (const char *c = q; c < end && c - q < 48; c++) {
		if (*c == ':') {
			const char *a = skip_decor(c + 1, end);

			if (a < end && (v = word_verdict(a, &wlen)) >= 0) {
				*rest = a + wlen;
				return v;
			}
			return -1;
		}
		if (!isalpha((unsigned char)*c) && strchr(" *_", *c) == NULL)
			return -1;
	}
	return -1;
}

/* The reason: the rest of the verdict line, else the next non-empty line
 * (without a "Reason:" label). */
static void
reason_after(const char *rest, const char *end, char *out, size_t cap)
{
	const char *le = line_end(rest, end);
	const char *r = skip_sep(rest, le);

	if (r < le && le - r > 0) {
		copy_clean(r, le, out, cap);
		if (out[0] != '\0')
			return;
	}
	for (const char *p = le; p < end; p = line_end(p, end)) {
		const char *q, *e2;

		if (*p == '\n')
			p++;
		e2 = line_end(p, end);
		q = skip_decor(p, e2);
		if (q == e2 || (e2 - q >= 3 && memcmp(q, "```", 3) == 0) || strncmp(p, "```", 3) == 0)
			continue;
		if (strncasecmp(q, "reason", 6) == 0 || strncasecmp(q, "evidence", 8) == 0) {
			const char *colon = memchr(q, ':', (size_t)(e2 - q));

			if (colon != NULL && colon - q < 24)
				q = skip_decor(colon + 1, e2);
		}
		copy_clean(q, e2, out, cap);
		if (out[0] != '\0')
			return;
	}
	if (cap > 0)
		out[0] = '\0';
}

/* A verdict from a JSON object anywhere in [p, end). */
static int
json_verdict(const char *p, const char *end, enum vision_verdict *v, char *reason, size_t cap)
{
	static const char *const vkeys[] = { "answer", "verdict", "decision", "result", "status",
		"condition_met", "met", NULL };
	static const char *const rkeys[] = { "reason", "evidence", "explanation", "detail", "summary", NULL };

	for (const char *b = memchr(p, '{', (size_t)(end - p)); b != NULL;
	     b = memchr(b + 1, '{', (size_t)(end - b - 1))) {
		json_tokener *tok = json_tokener_new();
		json_object *o = json_tokener_parse_ex(tok, b, (int)(end - b));
		int found = -1;

		json_tokener_free(tok);
		if (o == NULL)
			continue;
		for (size_t i = 0; found < 0 && vkeys[i] != NULL && json_object_is_type(o, json_type_object); i++) {
			json_object *x;

			if (!json_object_object_get_ex(o, vkeys[i], &x))
				continue;
			if (json_object_is_type(x, json_type_boolean)) {
				found = json_object_get_boolean(x) ? VISION_YES : VISION_NO;
			} else if (json_object_is_type(x, json_type_string)) {
				const char *s = json_object_get_string(x);
				const char *q = skip_decor(s, s + strlen(s));
				size_t wl;

				found = word_verdict(q, &wl);
				if (found < 0 && (strcasecmp(q, "resolved") == 0 || strcasecmp(q, "met") == 0))
					found = VISION_YES;
				if (found < 0 && (strcasecmp(q, "watching") == 0 || strcasecmp(q, "unmet") == 0))
					found = VISION_NO;
			}
		}
		if (found >= 0) {
			reason[0] = '\0';
			for (size_t i = 0; rkeys[i] != NULL; i++) {
				json_object *x;

				if (json_object_object_get_ex(o, rkeys[i], &x) && json_object_is_type(x, json_type_string)) {
					const char *s = json_object_get_string(x);

					copy_clean(s, s + strlen(s), reason, cap);
					break;
				}
			}
			*v = (enum vision_verdict)found;
			json_object_put(o);
			return 0;
		}
		json_object_put(o);
	}
	return -1;
}

/* The decision word of a FINAL_JSON object, or -1. */
static int
final_decision(const char *d)
{
	static const struct { const char *w; enum vision_verdict v; } words[] = {
		{ "resolved", VISION_YES }, { "yes", VISION_YES }, { "met", VISION_YES },
		{ "true", VISION_YES }, { "partial", VISION_PARTIAL }, { "in_progress", VISION_PARTIAL },
		{ "progress", VISION_PARTIAL }, { "watching", VISION_NO }, { "no", VISION_NO },
		{ "not_met", VISION_NO }, { "unresolved", VISION_NO }, { "false", VISION_NO },
	};

	for (size_t i = 0; d != NULL && i < sizeof words / sizeof words[0]; i++)
		if (strcasecmp(d, words[i].w) == 0)
			return (int)words[i].v;
	return -1;
}

/* evidence: an array of strings or one string, as a JSON array text. */
static void
final_evidence(json_object *x, char *out, size_t cap)
{
	json_object *arr = json_object_new_array();
	const char *s;
	char item[201];

	if (json_object_is_type(x, json_type_string)) {
		s = json_object_get_string(x);
		copy_clean(s, s + strlen(s), item, sizeof item);
		json_object_array_add(arr, json_object_new_string(item));
	}
	for (size_t i = 0; json_object_is_type(x, json_type_array) && i < json_object_array_length(x) &&
	     json_object_array_length(arr) < 8; i++) {
		json_object *it = json_object_array_get_idx(x, i);

		if (!json_object_is_type(it, json_type_string))
			continue;
		s = json_object_get_string(it);
		copy_clean(s, s + strlen(s), item, sizeof item);
		json_object_array_add(arr, json_object_new_string(item));
	}
	/* Whole items only: drop from the end until it fits. */
	while (json_object_array_length(arr) > 0 &&
	    strlen(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN)) >= cap)
		json_object_array_del_idx(arr, json_object_array_length(arr) - 1, 1);
	snprintf(out, cap, "%s", json_object_array_length(arr) > 0 ?
	    json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN) : "");
	json_object_put(arr);
}

int
vision_parse_final(const char *text, struct vision_final *f)
{
	const char *p = text != NULL ? text : "", *t, *last = NULL;
	json_tokener *tok;
	json_object *o, *x;
	int d = -1;

	memset(f, 0, sizeof *f);
	f->confidence = -1;
	for (t = strstr(p, "</think>"); t != NULL; t = strstr(t + 1, "</think>"))
		p = t + 8;
	for (t = strstr(p, "FINAL_JSON"); t != NULL; t = strstr(t + 1, "FINAL_JSON"))
		last = t;
	if (last == NULL)
		return -1;
	for (p = last + 10; *p == ':' || *p == ' ' || *p == '\t' || *p == '*' || *p == '`'; p++)
		;
	if (*p != '{')
		return -1;
	tok = json_tokener_new();
	o = json_tokener_parse_ex(tok, p, (int)strnlen(p, VISION_MAX_REPLY));
	json_tokener_free(tok);
	if (o != NULL && json_object_is_type(o, json_type_object) &&
	    json_object_object_get_ex(o, "decision", &x) && json_object_is_type(x, json_type_string))
		d = final_decision(json_object_get_string(x));
	if (d >= 0) {
		f->verdict = (enum vision_verdict)d;
		if (json_object_object_get_ex(o, "confidence", &x) &&
		    (json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int))) {
			double c = json_object_get_double(x);

			if (c > 1 && c <= 100)
				c /= 100;
			f->confidence = c >= 0 && c <= 1 ? c : -1;
		}
		if (json_object_object_get_ex(o, "summary", &x) && json_object_is_type(x, json_type_string)) {
			const char *s = json_object_get_string(x);

			copy_clean(s, s + strlen(s), f->summary, sizeof f->summary);
		}
		if (json_object_object_get_ex(o, "evidence", &x))
			final_evidence(x, f->evidence, sizeof f->evidence);
	}
	json_object_put(o);
	return d >= 0 ? 0 : -1;
}

int
vision_parse_verdict(const char *text, enum vision_verdict *v, char *reason, size_t cap)
{
	const char *p = text != NULL ? text : "", *end, *t;
	const char *rest;
	int found;
	char tmp[1];

	if (reason == NULL || cap == 0) {
		reason = tmp;
		cap = sizeof tmp;
	}
	*v = VISION_NO;
	/* Reasoning models: judge only what follows the last </think>. */
	for (t = strstr(p, "</think>"); t != NULL; t = strstr(t + 1, "</think>"))
		p = t + 8;
	if (strstr(p, "<think>") != NULL)
		goto unparseable;
	end = p + strlen(p);
	while (p < end && isspace((unsigned char)*p))
		p++;

	/* 1. A JSON answer. */
	if (p < end && *p == '{' && json_verdict(p, end, v, reason, cap) == 0)
		return 0;
	/* 2. The first meaningful line (fences and blank lines skipped). */
	for (const char *l = p; l < end; l = line_end(l, end) + 1) {
		const char *le = line_end(l, end), *q = skip_decor(l, le);

		if (q == le || (le - q >= 3 && memcmp(q, "```", 3) == 0) || (le - l >= 3 && memcmp(l, "```", 3) == 0))
			continue;
		if ((found = line_verdict(l, le, &rest)) >= 0) {
			*v = (enum vision_verdict)found;
			reason_after(rest, end, reason, cap);
			return 0;
		}
		break;
	}
	/* 3. JSON after some prose. */
	if (json_verdict(p, end, v, reason, cap) == 0)
		return 0;
	/* 4. The last line that is a lone verdict, or "... answer is X". */
	{
		const char *best = NULL, *best_rest = NULL;
		int best_v = -1;

		for (const char *l = p; l < end; l = line_end(l, end) + 1) {
			const char *le = line_end(l, end), *q;

			if ((found = line_verdict(l, le, &rest)) >= 0 && skip_sep(rest, le) == le) {
				best = l, best_rest = rest, best_v = found;
				continue;
			}
			for (q = l; q < le; q++) {
				size_t wl;

				if ((size_t)(le - q) > 10 && strncasecmp(q, "answer is", 9) == 0) {
					const char *a = skip_decor(q + 9, le);

					if (a < le && (found = word_verdict(a, &wl)) >= 0)
						best = l, best_rest = a + wl, best_v = found;
				}
			}
		}
		if (best != NULL) {
			*v = (enum vision_verdict)best_v;
			reason_after(best_rest, end, reason, cap);
			return 0;
		}
	}
unparseable:
	{
		char ex[201];

		copy_clean(text != NULL ? text : "", text != NULL ? text + strlen(text) : "", ex, sizeof ex);
		snprintf(reason, cap, "unparseable model output: %s", ex[0] ? ex : "(empty)");
		*v = VISION_NO;
	}
	return -1;
}
