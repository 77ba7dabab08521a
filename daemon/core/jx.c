/* jx.c - see jx.h. */
#include "jx.h"
#include "jxkeep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* json-c accepts single-quoted strings even in strict mode; JSON does not.
 * Returns the offset of a quote outside any string, or -1. */
static long
stray_single_quote(const char *text, size_t len)
{
	size_t i;
	int in_str = 0;

	for (i = 0; i < len; i++) {
		if (in_str) {
			if (text[i] == '\\')
				i++;
			else if (text[i] == '"')
				in_str = 0;
		} else if (text[i] == '"') {
			in_str = 1;
		} else if (text[i] == '\'') {
			return (long)i;
		}
	}
	return -1;
}

json_object *
jx_parse(const char *text, size_t len, struct derr *e)
{
	long q;
	size_t end;
	struct json_tokener *tok;
	json_object *obj;
	enum json_tokener_error jerr;

	if (len > INT32_MAX) {
		derr_set(e, DERR_TOO_LARGE, NULL, "body too large");
		return NULL;
	}
	/* json-c's own check lets overlong forms and surrogates through. */
	if (!utf8_valid(text, len)) {
		derr_set(e, DERR_INVALID, NULL, "the body is not valid UTF-8");
		return NULL;
	}
	if ((q = stray_single_quote(text, len)) >= 0) {
		derr_set(e, DERR_INVALID, NULL,
		    "malformed JSON at byte %ld: strings need double quotes", q);
		return NULL;
	}
	tok = json_tokener_new_ex(64);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue) {
		/* A value that could go on (a bare number) ends with the input. */
		obj = json_tokener_parse_ex(tok, " ", 1);
		jerr = json_tokener_get_error(tok);
		end = len;
	}
	if (jerr == json_tokener_continue) {
		derr_set(e, DERR_INVALID, NULL, "malformed JSON: unexpected end of input");
		json_object_put(obj);
		obj = NULL;
	} else if (jerr != json_tokener_success) {
		derr_set(e, DERR_INVALID, NULL, "malformed JSON at byte %zu: %s",
		    end, json_tokener_error_desc(jerr));
		obj = NULL;
	} else if (end < len) {
		/* STRICT stops at the end of the first value; anything after it
		 * other than whitespace is trailing garbage. */
		const char *p = text + end;

		while (p < text + len && strchr(" \t\r\n", *p) != NULL)
			p++;
		if (p < text + len) {
			derr_set(e, DERR_INVALID, NULL,
			    "malformed JSON: trailing data after the value");
			json_object_put(obj);
			obj = NULL;
		}
	}
	json_tokener_free(tok);
	if (jerr == json_tokener_success && obj == NULL)
		derr_set(e, DERR_INVALID, NULL, "the JSON value is null");
	/* json-c's tree, made to say what the text said (jxkeep.h). */
	if (obj != NULL && jxkeep_fix(text, len, &obj, e) != 0) {
		json_object_put(obj);
		obj = NULL;
	}
	return obj;
}

json_object *
jx_parse_stored(const char *text)
{
	struct derr e;
	json_object *o;

	if (text == NULL)
		return NULL;
	o = jx_parse(text, strlen(text), &e);
	return o != NULL ? o : json_tokener_parse(text);
}

const char *
jx_string(json_object *obj, size_t *len)
{
	return json_object_to_json_string_length(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
}

static const char *
jx_type_name(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a number";
	case json_type_int: return "an integer";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	}
	return "unknown";
}

/* Looks key up; *v is NULL when absent or null. Fills e when required. */
static int
jx_lookup(json_object *o, const char *key, bool required, json_object **v,
    struct derr *e)
{
	*v = NULL;
	if (o != NULL)
		json_object_object_get_ex(o, key, v);
	if (*v != NULL && json_object_get_type(*v) == json_type_null)
		*v = NULL;
	if (*v == NULL && required)
		return derr_set(e, DERR_INVALID, key, "%s is required", key);
	return 0;
}

int
jx_str(json_object *o, const char *key, bool required, size_t min_chars,
    size_t max_chars, const char **out, struct derr *e)
{
	json_object *v;
	const char *s;
	size_t n;

	if (jx_lookup(o, key, required, &v, e) != 0)
		return -1;
	if (v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return derr_set(e, DERR_INVALID, key, "%s must be a string, not %s",
		    key, jx_type_name(v));
	s = json_object_get_string(v);
	if (strlen(s) != (size_t)json_object_get_string_len(v))
		return derr_set(e, DERR_INVALID, key, "%s must not contain NUL characters", key);
	n = utf8_chars(s);
	if (min_chars > 0 && s[strspn(s, " \t\r\n")] == '\0')
		return derr_set(e, DERR_INVALID, key, "%s must not be empty", key);
	if (n < min_chars)
		return derr_set(e, DERR_INVALID, key, "%s must be at least %zu characters", key, min_chars);
	if (n > max_chars)
		return derr_set(e, DERR_INVALID, key,
		    "%s is too long (%zu characters, at most %zu)", key, n, max_chars);
	*out = s;
	return 0;
}

int
jx_int(json_object *o, const char *key, bool required, int64_t min,
    int64_t max, int64_t *out, bool *present, struct derr *e)
{
	json_object *v;
	int64_t n;

	if (present != NULL)
		*present = false;
	if (jx_lookup(o, key, required, &v, e) != 0)
		return -1;
	if (v == NULL)
		return 0;
	if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);

		if (d != floor(d) && isfinite(d))
			return derr_set(e, DERR_INVALID, key, "%s must be an integer", key);
		/* [-2^63, 2^63): (double)INT64_MAX is 2^63, which int64 cannot
		 * hold; integers past 64 bits arrive here as doubles (jxkeep.h). */
		if (!(d >= -0x1p63 && d < 0x1p63))
			return derr_set(e, DERR_INVALID, key, "%s is out of range", key);
		n = (int64_t)d;
	} else if (json_object_is_type(v, json_type_int)) {
		errno = 0;
		n = json_object_get_int64(v);
		if (errno != 0)
			return derr_set(e, DERR_INVALID, key, "%s is out of range", key);
	} else {
		return derr_set(e, DERR_INVALID, key, "%s must be an integer, not %s",
		    key, jx_type_name(v));
	}
	if (n < min || n > max)
		return derr_set(e, DERR_INVALID, key, "%s must be between %lld and %lld",
		    key, (long long)min, (long long)max);
	*out = n;
	if (present != NULL)
		*present = true;
	return 0;
}

int
jx_num(json_object *o, const char *key, double min, double max, double *out,
    bool *present, struct derr *e)
{
	json_object *v;
	double d;

	if (present != NULL)
		*present = false;
	if (jx_lookup(o, key, false, &v, e) != 0)
		return -1;
	if (v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return derr_set(e, DERR_INVALID, key, "%s must be a number, not %s",
		    key, jx_type_name(v));
	d = json_object_get_double(v);
	if (!isfinite(d) || d < min || d > max)
		return derr_set(e, DERR_INVALID, key, "%s must be between %g and %g",
		    key, min, max);
	*out = d;
	if (present != NULL)
		*present = true;
	return 0;
}

int
jx_bool(json_object *o, const char *key, bool *out, bool *present, struct derr *e)
{
	json_object *v;

	if (present != NULL)
		*present = false;
	if (jx_lookup(o, key, false, &v, e) != 0)
		return -1;
	if (v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return derr_set(e, DERR_INVALID, key, "%s must be true or false, not %s",
		    key, jx_type_name(v));
	*out = json_object_get_boolean(v);
	if (present != NULL)
		*present = true;
	return 0;
}

int
jx_obj(json_object *o, const char *key, json_object **out, struct derr *e)
{
	json_object *v;

	*out = NULL;
	if (jx_lookup(o, key, false, &v, e) != 0)
		return -1;
	if (v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return derr_set(e, DERR_INVALID, key, "%s must be an object, not %s",
		    key, jx_type_name(v));
	*out = v;
	return 0;
}

int
jx_strarray(json_object *o, const char *key, bool required, size_t min_items,
    size_t max_items, size_t min_chars, size_t max_chars, json_object **out,
    struct derr *e)
{
	json_object *v;
	size_t n, i;
	char field[64];

	*out = NULL;
	if (jx_lookup(o, key, required, &v, e) != 0)
		return -1;
	if (v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return derr_set(e, DERR_INVALID, key, "%s must be an array of strings, not %s",
		    key, jx_type_name(v));
	n = json_object_array_length(v);
	if (n < min_items)
		return derr_set(e, DERR_INVALID, key, "%s must have at least %zu item%s",
		    key, min_items, min_items == 1 ? "" : "s");
	if (n > max_items)
		return derr_set(e, DERR_INVALID, key, "%s has %zu items (at most %zu)",
		    key, n, max_items);
	for (i = 0; i < n; i++) {
		json_object *item = json_object_array_get_idx(v, i);
		const char *s;

		snprintf(field, sizeof field, "%s[%zu]", key, i);
		if (item == NULL || !json_object_is_type(item, json_type_string))
			return derr_set(e, DERR_INVALID, field, "%s must be a string, not %s",
			    field, item ? jx_type_name(item) : "null");
		s = json_object_get_string(item);
		if (strlen(s) != (size_t)json_object_get_string_len(item))
			return derr_set(e, DERR_INVALID, field, "%s must not contain NUL characters", field);
		if (min_chars > 0 && s[strspn(s, " \t\r\n")] == '\0')
			return derr_set(e, DERR_INVALID, field, "%s must not be empty", field);
		if (utf8_chars(s) > max_chars)
			return derr_set(e, DERR_INVALID, field,
			    "%s is too long (at most %zu characters)", field, max_chars);
	}
	*out = v;
	return 0;
}

int
jx_any_text(json_object *o, const char *key, size_t max_bytes, char **out,
    struct derr *e)
{
	json_object *v;
	const char *s;
	size_t len;

	*out = NULL;
	if (jx_lookup(o, key, false, &v, e) != 0)
		return -1;
	if (v == NULL)
		return 0;
	s = jx_string(v, &len);
	if (len > max_bytes)
		return derr_set(e, DERR_INVALID, key, "%s is too large (%zu bytes as JSON, at most %zu)",
		    key, len, max_bytes);
	*out = xstrndup(s, len);
	return 0;
}

int
jx_parse_int(const char *s, const char *field, int64_t min, int64_t max,
    int64_t *out, struct derr *e)
{
	char *end;
	long long v;

	errno = 0;
	if (s == NULL || *s == '\0' || !((*s >= '0' && *s <= '9') || *s == '-'))
		return derr_set(e, DERR_INVALID, field, "%s must be an integer", field);
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return derr_set(e, DERR_INVALID, field, "%s must be an integer", field);
	if (v < min || v > max)
		return derr_set(e, DERR_INVALID, field, "%s must be between %lld and %lld",
		    field, (long long)min, (long long)max);
	*out = v;
	return 0;
}

void
jx_add_str(json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
}

void
jx_add_time(json_object *o, const char *key, int64_t ms)
{
	char ts[ISO_TIME_LEN];

	if (ms <= 0) {
		json_object_object_add(o, key, NULL);
		return;
	}
	iso_time(ms, ts);
	json_object_object_add(o, key, json_object_new_string(ts));
}

int
jx_only(json_object *o, const char *const *keys, size_t n, struct derr *e)
{
	if (o == NULL || !json_object_is_type(o, json_type_object))
		return 0;
	json_object_object_foreach(o, k, v) {
		size_t i;

		(void)v;
		for (i = 0; i < n && strcmp(k, keys[i]) != 0; i++)
			;
		if (i == n)
			return derr_set(e, DERR_INVALID, k, "unknown field '%.*s'", utf8_prec(k,
			    64), k);
	}
	return 0;
}

size_t
jx_alen(json_object *o)
{
	return json_object_is_type(o, json_type_array) ? json_object_array_length(o) : 0;
}
