/*
 * jsjson.c - see jsjson.h. Owns the one JSON text detm writes for
 * JavaScript readers: byte for byte what `JSON.stringify(JSON.parse(x),
 * null, 2)` gives for the json-c value (issue 36: OpenClaw drops a result's
 * text block only when it equals that string of structuredContent, so a
 * compact copy doubled what a turn carried).
 *
 * The rules followed (ECMA-262 JSON.stringify and Number::toString):
 * two-space indent, "key": value, empty containers as {} and [];
 * integer-like keys ("0", "17": canonical array indices) first in
 * ascending order, then the others in insertion order (what JSON.parse
 * gives); numbers in their shortest round-trip form, integral doubles
 * without ".0", exponents past 1e21 or below 1e-6 (but a number kept as
 * sent because no double holds it, jxkeep.h, stays as sent: see
 * jsb_double); strings escaping only '"', '\\', \b \f \n \r \t and other
 * controls as \u00xx (lowercase hex).
 *
 * Invariants: the output is valid UTF-8 when every string in the value is;
 * nothing is written past the cap (the result is then NULL).
 * Not here: checking UTF-8 (utf8.c), deciding which blocks a result has
 * (result.c).
 */
#include "jsjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jsbuf {
	char *p;
	size_t len, size, cap;
	bool over;
};

static void
jsb_put(struct jsbuf *b, const char *s, size_t n)
{
	if (b->over)
		return;
	if (b->len + n + 1 > b->cap) {
		b->over = true;
		return;
	}
	if (b->len + n + 1 > b->size) {
		size_t sz = b->size ? b->size : 256;

		while (sz < b->len + n + 1)
			sz *= 2;
		if (sz > b->cap + 1)
			sz = b->cap + 1;
		b->p = realloc(b->p, sz);
		if (b->p == NULL)
			abort();
		b->size = sz;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
jsb_str(struct jsbuf *b, const char *s)
{
	jsb_put(b, s, strlen(s));
}

static void
jsb_indent(struct jsbuf *b, int depth)
{
	static const char spaces[] = "                                ";

	for (int n = depth * 2; n > 0 && !b->over; n -= 32)
		jsb_put(b, spaces, n < 32 ? (size_t)n : 32);
}

static void
jsb_quote(struct jsbuf *b, const char *s, size_t n)
{
	size_t i, run = 0;
	char esc[8];

	jsb_put(b, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *e = NULL;

		switch (c) {
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\b': e = "\\b"; break;
		case '\f': e = "\\f"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		default:
			if (c < 0x20) {
				snprintf(esc, sizeof esc, "\\u%04x", c);
				e = esc;
			}
		}
		if (e == NULL)
			continue;
		jsb_put(b, s + run, i - run);
		jsb_str(b, e);
		run = i + 1;
	}
	jsb_put(b, s + run, n - run);
	jsb_put(b, "\"", 1);
}

void
jsjson_number(double d, char out[JSJSON_NUM_LEN])
{
	char tmp[40], digits[20];
	int p, k = 0, n, i, exp10;
	char *e;

	if (!isfinite(d)) {
		snprintf(out, JSJSON_NUM_LEN, "null");
		return;
	}
	if (d == 0) {
		snprintf(out, JSJSON_NUM_LEN, "0");
		return;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof tmp, "%.*e", p - 1, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	/* tmp: [-]D[.DDD]e[+-]XX; digits without the point, trailing zeros off */
	e = strchr(tmp, 'e');
	exp10 = atoi(e + 1);
	for (i = tmp[0] == '-' ? 1 : 0; tmp + i < e; i++)
		if (tmp[i] != '.')
			digits[k++] = tmp[i];
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = '\0';
	n = exp10 + 1;          /* value = 0.digits x 10^n */
	i = 0;
	if (d < 0)
		out[i++] = '-';
	if (k <= n && n <= 21) {
		i += snprintf(out + i, (size_t)(JSJSON_NUM_LEN - i), "%s%0*d", digits, n - k, 0);
		if (n == k)
			out[i - 1] = '\0';      /* "%0*d" with width 0 printed one "0" */
	} else if (0 < n && n <= 21) {
		snprintf(out + i, (size_t)(JSJSON_NUM_LEN - i), "%.*s.%s", n, digits, digits + n);
	} else if (-6 < n && n <= 0) {
		snprintf(out + i, (size_t)(JSJSON_NUM_LEN - i), "0.%0*d%s", -n, 0, digits);
		if (n == 0)     /* "%0*d" with width 0 printed one "0" */
			memmove(out + i + 2, out + i + 3, strlen(out + i + 3) + 1);
	} else if (k == 1) {
		snprintf(out + i, (size_t)(JSJSON_NUM_LEN - i), "%se%c%d", digits, n - 1 < 0 ? '-' : '+',
		    abs(n - 1));
	} else {
		snprintf(out + i, (size_t)(JSJSON_NUM_LEN - i), "%c.%se%c%d", digits[0], digits + 1,
		    n - 1 < 0 ? '-' : '+', abs(n - 1));
	}
}

/* A canonical array index ("0", "17"; no sign, no leading zero, < 2^32-1). */
static bool
index_key(const char *k, unsigned long *out)
{
	char *end;

	if (k[0] < '0' || k[0] > '9' || (k[0] == '0' && k[1] != '\0') || strlen(k) > 10)
		return false;
	*out = strtoul(k, &end, 10);
	return *end == '\0' && *out < 4294967295UL;
}

static void jsb_value(struct jsbuf *b, json_object *v, int depth);

static void
jsb_member(struct jsbuf *b, const char *k, json_object *v, int depth, bool *first)
{
	jsb_str(b, *first ? "\n" : ",\n");
	*first = false;
	jsb_indent(b, depth + 1);
	jsb_quote(b, k, strlen(k));
	jsb_put(b, ": ", 2);
	jsb_value(b, v, depth + 1);
}

static void
jsb_object(struct jsbuf *b, json_object *o, int depth)
{
	bool first = true, picked = false, more = false;
	unsigned long idx, last = 0;

	jsb_put(b, "{", 1);
	json_object_object_foreach(o, k0, v0) {
		(void)v0;
		more = more || index_key(k0, &idx);
	}
	/* index keys first, ascending: each round writes the next larger one */
	while (more) {
		const char *pick = NULL;
		json_object *pv = NULL;
		unsigned long next = 0;

		json_object_object_foreach(o, k1, v1) {
			if (index_key(k1, &idx) && (!picked || idx > last) && (pick == NULL || idx < next)) {
				pick = k1;
				pv = v1;
				next = idx;
			}
		}
		more = pick != NULL;
		if (more) {
			jsb_member(b, pick, pv, depth, &first);
			picked = true;
			last = next;
		}
	}
	json_object_object_foreach(o, k, v) {
		if (!index_key(k, &idx))
			jsb_member(b, k, v, depth, &first);
	}
	if (!first) {
		jsb_put(b, "\n", 1);
		jsb_indent(b, depth);
	}
	jsb_put(b, "}", 1);
}

/* A double in JavaScript's form, except one that keeps the text it was
 * sent as (jxkeep.h) because no double says it: an integer past 2^53
 * (123456789012345678901234567890), -0, a value past the double range
 * (1e400). There the digits the client sent win over matching JavaScript,
 * which would print 1.2345678901234568e+29, 0 or null. */
static void
jsb_double(struct jsbuf *b, json_object *v)
{
	char num[JSJSON_NUM_LEN];
	double d = json_object_get_double(v);
	const char *t = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	size_t digits = strspn(t + (t[0] == '-'), "0123456789");

	jsjson_number(d, num);
	if (!isfinite(d) || (digits > 0 && t[(t[0] == '-') + digits] == '\0' && strcmp(t, num) != 0))
		jsb_str(b, t);
	else
		jsb_str(b, num);
}

static void
jsb_value(struct jsbuf *b, json_object *v, int depth)
{
	char num[JSJSON_NUM_LEN];
	size_t i, n;

	if (b->over)
		return;
	switch (json_object_get_type(v)) {
	case json_type_null:
		jsb_str(b, "null");
		break;
	case json_type_boolean:
		jsb_str(b, json_object_get_boolean(v) ? "true" : "false");
		break;
	case json_type_int:
		snprintf(num, sizeof num, "%lld", (long long)json_object_get_int64(v));
		jsb_str(b, num);
		break;
	case json_type_double:
		jsb_double(b, v);
		break;
	case json_type_string:
		jsb_quote(b, json_object_get_string(v), (size_t)json_object_get_string_len(v));
		break;
	case json_type_array:
		n = json_object_array_length(v);
		jsb_put(b, "[", 1);
		for (i = 0; i < n; i++) {
			jsb_str(b, i == 0 ? "\n" : ",\n");
			jsb_indent(b, depth + 1);
			jsb_value(b, json_object_array_get_idx(v, i), depth + 1);
		}
		if (n > 0) {
			jsb_put(b, "\n", 1);
			jsb_indent(b, depth);
		}
		jsb_put(b, "]", 1);
		break;
	case json_type_object:
		jsb_object(b, v, depth);
		break;
	}
}

char *
jsjson_pretty(json_object *v, size_t cap, size_t *len)
{
	struct jsbuf b = { .cap = cap };

	jsb_value(&b, v, 0);
	if (b.over || b.p == NULL) {
		free(b.p);
		return NULL;
	}
	if (len != NULL)
		*len = b.len;
	return b.p;
}
