/*
 * jxkeep.c - see jxkeep.h.
 *
 * Owns nothing past one call: a cursor over the text, the path of the value
 * being looked at (for error fields) and a json-c tokener, made on first
 * need, to decode keys written with escapes exactly as json-c did.
 * Invariants: the text is walked in document order against the tree, which
 * json-c builds in document order too (an object's keys in order of first
 * appearance, so a key that does not match the next one in the tree is a
 * duplicate). Recursion follows the tree, so it is bounded by json-c's
 * depth cap. Every read is bounds-checked and a text/tree mismatch is an
 * error, never trusted.
 * Does not: parse (json-c has), check UTF-8 (jx_parse has), allocate
 * except for the numbers it replaces and the tokener, or use util.c (detm-mcp
 * links this file and derr.c alone).
 */
#include "jxkeep.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json_object_iterator.h>

struct walk {
	const char *text, *p, *end;
	char path[sizeof ((struct derr *)0)->field];
	size_t plen;
	struct json_tokener *tok;       /* NULL until a key has an escape */
	struct derr *e;
};

static void
walk_ws(struct walk *w)
{
	while (w->p < w->end && strchr(" \t\r\n", *w->p) != NULL && *w->p != '\0')
		w->p++;
}

static int
walk_bad(struct walk *w, const char *what)
{
	return derr_set(w->e, DERR_INVALID, NULL, "malformed JSON at byte %zu: %s",
	    (size_t)(w->p - w->text), what);
}

/* Appends s (n bytes) to the path, cut to fit on a UTF-8 boundary. */
static void
walk_path_add(struct walk *w, const char *s, size_t n)
{
	size_t room = sizeof w->path - 1 - w->plen;

	if (n > room) {
		n = room;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(w->path + w->plen, s, n);
	w->plen += n;
	w->path[w->plen] = '\0';
}

/* Scans the string at w->p ('"'); [*s, *s + *n) is its text between the
 * quotes; *nul says whether it holds \u0000. */
static int
walk_string(struct walk *w, const char **s, size_t *n, bool *nul)
{
	const char *q = ++w->p;

	*nul = false;
	while (q < w->end && *q != '"') {
		if (*q == '\\') {
			if (w->end - q >= 6 && memcmp(q, "\\u0000", 6) == 0)
				*nul = true;
			q++;
		}
		q++;
	}
	if (q >= w->end)
		return walk_bad(w, "unterminated string");
	*s = w->p;
	*n = (size_t)(q - w->p);
	w->p = q + 1;
	return 0;
}

/* Whether the key written as s (n bytes, escapes and all) is name. */
static bool
walk_key_is(struct walk *w, const char *s, size_t n, const char *name)
{
	json_object *k;
	bool same;

	if (memchr(s, '\\', n) == NULL)
		return strlen(name) == n && memcmp(s, name, n) == 0;
	if (w->tok == NULL)
		w->tok = json_tokener_new_ex(1);
	if (w->tok == NULL)
		return false;
	json_tokener_reset(w->tok);
	/* The quotes are just outside [s, s + n): json-c decodes the string. */
	k = json_tokener_parse_ex(w->tok, s - 1, (int)n + 2);
	same = k != NULL && strcmp(json_object_get_string(k), name) == 0;
	json_object_put(k);
	return same;
}

static int walk_value(struct walk *w, json_object *v, json_object **repl);

static int
walk_object(struct walk *w, json_object *obj)
{
	struct json_object_iterator it = json_object_iter_begin(obj);
	struct json_object_iterator end = json_object_iter_end(obj);
	size_t base = w->plen;

	w->p++;
	walk_ws(w);
	if (w->p < w->end && *w->p == '}') {
		w->p++;
		return json_object_iter_equal(&it, &end) ? 0 : walk_bad(w, "object differs");
	}
	for (;;) {
		const char *k, *name;
		size_t kn;
		bool nul;
		json_object *repl = NULL;

		walk_ws(w);
		if (w->p >= w->end || *w->p != '"' || walk_string(w, &k, &kn, &nul) != 0)
			return walk_bad(w, "expected a key");
		if (base > 0)
			walk_path_add(w, ".", 1);
		walk_path_add(w, k, kn);
		if (nul)
			return derr_set(w->e, DERR_INVALID, w->path,
			    "the key %s holds NUL (\\u0000); keys must not", w->path);
		name = json_object_iter_equal(&it, &end) ? NULL : json_object_iter_peek_name(&it);
		if (name == NULL || !walk_key_is(w, k, kn, name))
			return derr_set(w->e, DERR_INVALID, w->path,
			    "the key %s is given twice; a key may appear once in an object", w->path);
		walk_ws(w);
		if (w->p >= w->end || *w->p != ':')
			return walk_bad(w, "expected ':'");
		w->p++;
		if (walk_value(w, json_object_iter_peek_value(&it), &repl) != 0)
			return -1;
		if (repl != NULL)       /* replaces the value in place; name stays valid */
			json_object_object_add(obj, name, repl);
		json_object_iter_next(&it);
		w->plen = base;
		w->path[base] = '\0';
		walk_ws(w);
		if (w->p < w->end && *w->p == ',') {
			w->p++;
			continue;
		}
		if (w->p < w->end && *w->p == '}') {
			w->p++;
			return json_object_iter_equal(&it, &end) ? 0 : walk_bad(w, "object differs");
		}
		return walk_bad(w, "expected ',' or '}'");
	}
}

static int
walk_array(struct walk *w, json_object *arr)
{
	size_t i = 0, n = json_object_array_length(arr), base = w->plen;
	char idx[32];

	w->p++;
	walk_ws(w);
	if (w->p < w->end && *w->p == ']') {
		w->p++;
		return n == 0 ? 0 : walk_bad(w, "array differs");
	}
	for (;; i++) {
		json_object *repl = NULL;

		if (i >= n)
			return walk_bad(w, "array differs");
		snprintf(idx, sizeof idx, "[%zu]", i);
		walk_path_add(w, idx, strlen(idx));
		if (walk_value(w, json_object_array_get_idx(arr, i), &repl) != 0)
			return -1;
		if (repl != NULL)
			json_object_array_put_idx(arr, i, repl);
		w->plen = base;
		w->path[base] = '\0';
		walk_ws(w);
		if (w->p < w->end && *w->p == ',') {
			w->p++;
			walk_ws(w);
			continue;
		}
		if (w->p < w->end && *w->p == ']') {
			w->p++;
			return i + 1 == n ? 0 : walk_bad(w, "array differs");
		}
		return walk_bad(w, "expected ',' or ']'");
	}
}

static size_t
walk_digits(const char *p, const char *end)
{
	const char *q = p;

	while (q < end && *q >= '0' && *q <= '9')
		q++;
	return (size_t)(q - p);
}

/* Length of the JSON number at p (RFC 8259 grammar), 0 if there is none;
 * *integral says it has no fraction or exponent. */
static size_t
walk_number_len(const char *p, const char *end, bool *integral)
{
	const char *q = p;
	size_t d;

	*integral = true;
	if (q < end && *q == '-')
		q++;
	if ((d = walk_digits(q, end)) == 0 || (d > 1 && *q == '0'))
		return 0;
	q += d;
	if (q < end && *q == '.') {
		*integral = false;
		if ((d = walk_digits(++q, end)) == 0)
			return 0;
		q += d;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		*integral = false;
		q++;
		if (q < end && (*q == '+' || *q == '-'))
			q++;
		if ((d = walk_digits(q, end)) == 0)
			return 0;
		q += d;
	}
	if (q < end && strchr("0123456789.eE+-", *q) != NULL && *q != '\0')
		return 0;
	return (size_t)(q - p);
}

/* A number: *repl is set when json-c would print v other than as written. */
static int
walk_number(struct walk *w, json_object *v, json_object **repl)
{
	bool integral;
	size_t n = walk_number_len(w->p, w->end, &integral);
	char canon[32], *text;

	if (n == 0)
		return walk_bad(w, "not a JSON number");
	if (json_object_is_type(v, json_type_double)) {
		w->p += n;              /* json-c keeps a double's own text */
		return 0;
	}
	if (!json_object_is_type(v, json_type_int))
		return walk_bad(w, "value differs");
	if (*w->p == '-')
		snprintf(canon, sizeof canon, "%" PRId64, json_object_get_int64(v));
	else
		snprintf(canon, sizeof canon, "%" PRIu64, json_object_get_uint64(v));
	if (!integral || strlen(canon) != n || memcmp(canon, w->p, n) != 0) {
		if ((text = malloc(n + 1)) == NULL)
			abort();        /* as the daemon's xmalloc; detm-mcp links this too */
		memcpy(text, w->p, n);
		text[n] = '\0';
		*repl = json_object_new_double_s(strtod(text, NULL), text);
		free(text);
	}
	w->p += n;
	return 0;
}

/* Matches literal word (true, false, null) at w->p. */
static bool
walk_word(struct walk *w, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(w->end - w->p) < n || memcmp(w->p, word, n) != 0)
		return false;
	w->p += n;
	return true;
}

static int
walk_value(struct walk *w, json_object *v, json_object **repl)
{
	const char *s;
	size_t n;
	bool nul;

	*repl = NULL;
	walk_ws(w);
	if (w->p >= w->end)
		return walk_bad(w, "unexpected end");
	switch (*w->p) {
	case '{':
		return json_object_is_type(v, json_type_object) ? walk_object(w, v)
		    : walk_bad(w, "value differs");
	case '[':
		return json_object_is_type(v, json_type_array) ? walk_array(w, v)
		    : walk_bad(w, "value differs");
	case '"':
		if (!json_object_is_type(v, json_type_string))
			return walk_bad(w, "value differs");
		return walk_string(w, &s, &n, &nul);
	case 't':
	case 'f':
		if (!json_object_is_type(v, json_type_boolean) ||
		    !walk_word(w, json_object_get_boolean(v) ? "true" : "false"))
			return walk_bad(w, "value differs");
		return 0;
	case 'n':
		return v == NULL && walk_word(w, "null") ? 0 : walk_bad(w, "value differs");
	case 'N':
	case 'I':
		return walk_bad(w, "NaN and Infinity are not JSON numbers");
	default:
		if (*w->p == '-' && w->end - w->p > 1 && (w->p[1] == 'I' || w->p[1] == 'N'))
			return walk_bad(w, "NaN and Infinity are not JSON numbers");
		return walk_number(w, v, repl);
	}
}

int
jxkeep_fix(const char *text, size_t len, json_object **root, struct derr *e)
{
	struct walk w;
	json_object *repl = NULL;
	int rc;

	memset(&w, 0, sizeof w);
	w.text = w.p = text;
	w.end = text + len;
	w.e = e;
	rc = walk_value(&w, *root, &repl);
	if (rc == 0 && repl != NULL) {
		json_object_put(*root);
		*root = repl;
	}
	if (w.tok != NULL)
		json_tokener_free(w.tok);
	return rc;
}
