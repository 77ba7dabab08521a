/*
 * jmatch.c - JSON paths, subset matching and equality for expectations.
 *
 * Paths: "." is the root; ".a.b" walks objects; "[i]" indexes arrays, and a
 * negative index counts from the end (".messages[-1]" is the last one).
 * Keys are anything up to the next '.' or '['.
 *
 * Subset match (=> json): objects match when every expected key is present
 * and matches (extra keys in the response are fine); arrays must have the
 * same length and match element by element; numbers compare by value (4 ==
 * 4.0); strings may be wildcards: <any> (present, any value, even null),
 * <id> (8 lowercase hex digits), <ts> (ISO-8601 UTC with milliseconds),
 * <string>, <nonempty> (non-empty string), <number>, <int>.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httpcase.h"

int
hc_jpath(struct json_object *root, const char *path, struct json_object **out)
{
	struct json_object *cur = root, *next;
	const char *s = path;
	char key[256];
	size_t n;
	long idx, len;
	char *end;

	*out = NULL;
	if (*s != '.' && *s != '[')
		return -1;
	if (strcmp(s, ".") == 0) {
		*out = root;
		return 0;
	}
	while (*s != '\0') {
		if (*s == '.') {
			s++;
			n = strcspn(s, ".[");
			if (n == 0 || n >= sizeof key)
				return -1;
			memcpy(key, s, n);
			key[n] = '\0';
			s += n;
			if (!json_object_is_type(cur, json_type_object) ||
			    !json_object_object_get_ex(cur, key, &next))
				return -1;
			cur = next;
		} else if (*s == '[') {
			idx = strtol(s + 1, &end, 10);
			if (end == s + 1 || *end != ']' || !json_object_is_type(cur, json_type_array))
				return -1;
			len = (long)json_object_array_length(cur);
			if (idx < 0)
				idx += len;
			if (idx < 0 || idx >= len)
				return -1;
			cur = json_object_array_get_idx(cur, (size_t)idx);
			s = end + 1;
		} else {
			return -1;
		}
	}
	*out = cur;
	return 0;
}

const char *
hc_jtext(struct json_object *v)
{
	return v == NULL ? "null" : json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

static int
is_number(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

static int
is_id(const char *s)
{
	size_t i;

	for (i = 0; i < 8; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return 0;
	return s[8] == '\0';
}

static int
is_ts(const char *s)
{
	/* 2026-11-22T19:30:00.123Z */
	static const char pat[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	size_t i;

	for (i = 0; pat[i] != '\0'; i++) {
		if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i])
			return 0;
	}
	return s[i] == '\0';
}

/* Returns -1 if want is not a wildcard, else 1 (matches) or 0. */
static int
wildcard(const char *w, struct json_object *got)
{
	const char *g = json_object_is_type(got, json_type_string) ?
	    json_object_get_string(got) : NULL;

	if (w[0] != '<')
		return -1;
	if (strcmp(w, "<any>") == 0)
		return 1;
	if (strcmp(w, "<string>") == 0)
		return g != NULL;
	if (strcmp(w, "<nonempty>") == 0)
		return g != NULL && g[0] != '\0';
	if (strcmp(w, "<id>") == 0)
		return g != NULL && is_id(g);
	if (strcmp(w, "<ts>") == 0)
		return g != NULL && is_ts(g);
	if (strcmp(w, "<number>") == 0)
		return is_number(got);
	if (strcmp(w, "<int>") == 0)
		return json_object_is_type(got, json_type_int);
	return -1;
}

int
hc_jequal(struct json_object *a, struct json_object *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (is_number(a) && is_number(b))
		return json_object_get_double(a) == json_object_get_double(b);
	return json_object_equal(a, b);
}

int
hc_jmatch(struct json_object *want, struct json_object *got, const char *at,
    char *why, size_t whysz)
{
	char sub[512];
	size_t i, n;
	int w;

	if (json_object_is_type(want, json_type_string) &&
	    (w = wildcard(json_object_get_string(want), got)) >= 0) {
		if (w == 0)
			snprintf(why, whysz, "%s: expected %s, got %.200s", at, hc_jtext(want),
			    hc_jtext(got));
		return w;
	}
	if (json_object_is_type(want, json_type_object)) {
		if (!json_object_is_type(got, json_type_object)) {
			snprintf(why, whysz, "%s: expected an object, got %.200s", at, hc_jtext(got));
			return 0;
		}
		json_object_object_foreach(want, key, wv) {
			struct json_object *gv;

			snprintf(sub, sizeof sub, "%s.%s", strcmp(at, ".") == 0 ? "" : at, key);
			if (!json_object_object_get_ex(got, key, &gv)) {
				snprintf(why, whysz, "%s: expected %.200s, key missing", sub, hc_jtext(wv));
				return 0;
			}
			if (!hc_jmatch(wv, gv, sub, why, whysz))
				return 0;
		}
		return 1;
	}
	if (json_object_is_type(want, json_type_array)) {
		if (!json_object_is_type(got, json_type_array)) {
			snprintf(why, whysz, "%s: expected an array, got %.200s", at, hc_jtext(got));
			return 0;
		}
		n = json_object_array_length(want);
		if (json_object_array_length(got) != n) {
			snprintf(why, whysz, "%s: expected %zu elements, got %zu: %.200s", at, n,
			    json_object_array_length(got), hc_jtext(got));
			return 0;
		}
		for (i = 0; i < n; i++) {
			snprintf(sub, sizeof sub, "%s[%zu]", strcmp(at, ".") == 0 ? "" : at, i);
			if (!hc_jmatch(json_object_array_get_idx(want, i),
			    json_object_array_get_idx(got, i), sub, why, whysz))
				return 0;
		}
		return 1;
	}
	if (!hc_jequal(want, got)) {
		snprintf(why, whysz, "%s: expected %s, got %.200s", at, hc_jtext(want), hc_jtext(got));
		return 0;
	}
	return 1;
}
