/*
 * toolreq.c - a tool call as a detmd request (toolreq.h). Route templates
 * are described in tools.h: "{arg}" path segments, "{arg?}" optional last
 * segment, a fixed "?k=v" query, and t->query's "arg[:param]" list.
 */
#include "toolreq.h"

#include <stdio.h>
#include <string.h>

/* Append s to out at *o (percent-encoding all but RFC 3986 unreserved
 * characters when escape). -1 when it does not fit. */
static int
put(char *out, size_t cap, size_t *o, const char *s, bool escape)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = !escape || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';

		if (*o + (plain ? 1 : 3) + 1 > cap)
			return -1;
		if (plain) {
			out[(*o)++] = (char)c;
		} else {
			out[(*o)++] = '%';
			out[(*o)++] = hex[c >> 4];
			out[(*o)++] = hex[c & 15];
		}
	}
	out[*o] = '\0';
	return 0;
}

/* A scalar argument as text for a path segment or query value. */
static const char *
scalar(struct json_object *v, char *tmp, size_t len)
{
	double d;

	switch (json_object_get_type(v)) {
	case json_type_string:
		return json_object_get_string(v);
	case json_type_int:
		snprintf(tmp, len, "%lld", (long long)json_object_get_int64(v));
		return tmp;
	case json_type_double:
		d = json_object_get_double(v);
		if (d > -9e15 && d < 9e15 && d == (double)(long long)d)
			snprintf(tmp, len, "%lld", (long long)d);
		else
			snprintf(tmp, len, "%.17g", d);
		return tmp;
	case json_type_boolean:
		return json_object_get_boolean(v) ? "true" : "false";
	default:
		return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	}
}

/* "a=b&c=d" (static text from the table) into query. */
static void
fixed_query(const char *q, struct json_object *query)
{
	char key[64], val[128];

	while (*q != '\0') {
		size_t n = strcspn(q, "&"), k = strcspn(q, "=");

		if (k < n) {
			snprintf(key, sizeof key, "%.*s", (int)k, q);
			snprintf(val, sizeof val, "%.*s", (int)(n - k - 1), q + k + 1);
			json_object_object_add(query, key, json_object_new_string(val));
		}
		q += n;
		if (*q == '&')
			q++;
	}
}

int
toolreq_build(const struct tool *t, struct json_object *args, bool escape,
              char *path, size_t cap, struct json_object *query,
              struct json_object *body)
{
	const char *p = t->route, *q;
	char name[64], tmp[64];
	size_t o = 0, n;
	struct json_object *v;
	bool opt;

	if (cap == 0)
		return -1;
	path[0] = '\0';
	json_object_object_foreach(args, key, val) {
		json_object_object_add(body, key, json_object_get(val));
	}
	while (*p != '\0' && *p != '?') {
		if (*p != '{') {
			if (o + 2 > cap)
				return -1;
			path[o++] = *p++;
			path[o] = '\0';
			continue;
		}
		q = strchr(p, '}');
		n = (size_t)(q - p - 1);
		opt = p[n] == '?';
		snprintf(name, sizeof name, "%.*s", (int)(opt ? n - 1 : n), p + 1);
		p = q + 1;
		if (!json_object_object_get_ex(args, name, &v)) {
			if (opt && o > 0 && path[o - 1] == '/')
				path[--o] = '\0';   /* "/api/waits/{wait_id?}" -> "/api/waits" */
			continue;
		}
		json_object_object_del(body, name);
		/* A NUL inside a string would cut the segment short. */
		if (json_object_is_type(v, json_type_string) &&
		    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
			return -1;
		if (put(path, cap, &o, scalar(v, tmp, sizeof tmp), escape) != 0)
			return -1;
	}
	if (*p == '?')
		fixed_query(p + 1, query);
	for (p = t->query; p != NULL && *p != '\0'; p = *q ? q + 1 : q) {
		const char *colon;

		q = p + strcspn(p, ",");
		colon = memchr(p, ':', (size_t)(q - p));
		snprintf(name, sizeof name, "%.*s", (int)((colon ? colon : q) - p), p);
		if (!json_object_object_get_ex(args, name, &v))
			continue;
		json_object_object_del(body, name);
		if (colon != NULL)
			snprintf(name, sizeof name, "%.*s", (int)(q - colon - 1), colon + 1);
		json_object_object_add(query, name, json_object_new_string(scalar(v, tmp, sizeof tmp)));
	}
	return 0;
}

int
toolreq_query_string(struct json_object *query, char *out, size_t cap)
{
	size_t o = strlen(out);
	bool first = true;

	json_object_object_foreach(query, key, val) {
		if (put(out, cap, &o, first ? "?" : "&", false) != 0 ||
		    put(out, cap, &o, key, true) != 0 ||
		    put(out, cap, &o, "=", false) != 0 ||
		    put(out, cap, &o, json_object_get_string(val), true) != 0)
			return -1;
		first = false;
	}
	return 0;
}
