/*
 * schema.c - see schema.h. Stateless; the schemas themselves live in the
 * tool table (tools.c) and are trusted, so a malformed keyword there is
 * ignored rather than reported.
 *
 * Enums of strings match ASCII-case-insensitively ("Completed" is
 * "completed"): no enum in the table tells two values apart by case, and
 * models and the Python DETM's clients capitalise. schema_normalize then
 * writes the enum's own spelling into the arguments, so detmd only ever
 * sees the spellings the schema lists.
 */
#include "schema.h"

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "utf8.h"

/* Does s match the schema's pattern (POSIX ERE; the table's patterns are
 * written in the subset JSON Schema and POSIX share)? true without one. */
static bool
schema_matches(struct json_object *sch, const char *s)
{
	struct json_object *p;
	regex_t re;
	bool ok;

	if (!json_object_object_get_ex(sch, "pattern", &p) || !json_object_is_type(p, json_type_string) ||
	    regcomp(&re, json_object_get_string(p), REG_EXTENDED | REG_NOSUB) != 0)
		return true;
	ok = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

static const char *
schema_type_of(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:    return "null";
	case json_type_boolean: return "boolean";
	case json_type_double:  return "number";
	case json_type_int:     return "integer";
	case json_type_object:  return "object";
	case json_type_array:   return "array";
	case json_type_string:  return "string";
	}
	return "unknown";
}

static bool
schema_is_type(struct json_object *v, const char *type)
{
	enum json_type t = json_object_get_type(v);

	if (strcmp(type, "string") == 0)  return t == json_type_string;
	if (strcmp(type, "boolean") == 0) return t == json_type_boolean;
	if (strcmp(type, "object") == 0)  return t == json_type_object;
	if (strcmp(type, "array") == 0)   return t == json_type_array;
	if (strcmp(type, "null") == 0)    return t == json_type_null;
	if (strcmp(type, "number") == 0)  return t == json_type_int || t == json_type_double;
	if (strcmp(type, "integer") == 0) {
		double d;
		if (t == json_type_int)
			return true;
		if (t != json_type_double)
			return false;
		/* 3.0 is an integer in JSON Schema (no libm: NaN fails both) */
		d = json_object_get_double(v);
		return d > -9e15 && d < 9e15 && d == (double)(long long)d;
	}
	return true;
}

/* Does v match the schema's "type" (absent: anything)? Writes the expected
 * type name(s) to want. A property whose "$comment" is SCHEMA_ANY_JSON
 * advertises one type (the one every provider's function schema accepts)
 * but takes any JSON value: input_data/output_data are strings in the
 * Python DETM's prompts and objects in detm's own. */
static bool
schema_type_ok(struct json_object *sch, struct json_object *v, char *want, size_t wantlen)
{
	struct json_object *type, *comment;
	size_t i, o = 0;

	if (!json_object_object_get_ex(sch, "type", &type))
		return true;
	if (json_object_object_get_ex(sch, "$comment", &comment) &&
	    strcmp(json_object_get_string(comment), SCHEMA_ANY_JSON) == 0)
		return true;
	if (json_object_is_type(type, json_type_string)) {
		snprintf(want, wantlen, "%s", json_object_get_string(type));
		return schema_is_type(v, json_object_get_string(type));
	}
	want[0] = '\0';
	for (i = 0; i < json_object_array_length(type); i++) {
		const char *tn = json_object_get_string(json_object_array_get_idx(type, i));
		if (schema_is_type(v, tn))
			return true;
		if (o < wantlen)
			o += (size_t)snprintf(want + o, wantlen - o, "%s%s", i ? " or " : "", tn);
	}
	return false;
}

static bool
schema_num(struct json_object *sch, const char *key, double *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(sch, key, &v))
		return false;
	*out = json_object_get_double(v);
	return true;
}

/* The enum's spelling of s (an exact match first, else one that differs
 * only in ASCII case), or NULL. */
static const char *
schema_enum_find(struct json_object *en, const char *s)
{
	const char *e, *folded = NULL;
	size_t i;

	for (i = 0; i < json_object_array_length(en); i++) {
		e = json_object_get_string(json_object_array_get_idx(en, i));
		if (e == NULL)
			continue;
		if (strcmp(e, s) == 0)
			return e;
		if (folded == NULL && strcasecmp(e, s) == 0)
			folded = e;
	}
	return folded;
}

/* Check one value; name is the argument's name for messages. */
static int
schema_value(struct json_object *sch, struct json_object *v, const char *name,
             char *err, size_t errlen)
{
	struct json_object *en, *items;
	char want[64];
	double lim, d;
	size_t i, n;

	if (!schema_type_ok(sch, v, want, sizeof want)) {
		snprintf(err, errlen, "'%s' must be %s %s, got %s", name,
		         want[0] == 'a' || want[0] == 'i' || want[0] == 'o' ? "an" : "a",
		         want, schema_type_of(v));
		return -1;
	}
	if (json_object_object_get_ex(sch, "enum", &en) && json_object_is_type(v, json_type_string)) {
		char allowed[512];
		size_t o = 0;
		if (schema_enum_find(en, json_object_get_string(v)) != NULL)
			return 0;
		for (i = 0; i < json_object_array_length(en); i++) {
			const char *e = json_object_get_string(json_object_array_get_idx(en, i));
			if (o < sizeof allowed)
				o += (size_t)snprintf(allowed + o, sizeof allowed - o, "%s%s", i ? ", " : "", e);
		}
		snprintf(err, errlen, "'%s' must be one of %s (any case); got '%.*s'", name, allowed,
		         utf8_prec(json_object_get_string(v), 64), json_object_get_string(v));
		return -1;
	}
	switch (json_object_get_type(v)) {
	case json_type_int:
	case json_type_double:
		d = json_object_get_double(v);
		if (schema_num(sch, "minimum", &lim) && d < lim) {
			snprintf(err, errlen, "'%s' must be >= %g, got %g", name, lim, d);
			return -1;
		}
		if (schema_num(sch, "maximum", &lim) && d > lim) {
			snprintf(err, errlen, "'%s' must be <= %g, got %g", name, lim, d);
			return -1;
		}
		break;
	case json_type_string:
		n = utf8_chars(json_object_get_string(v));
		if (schema_num(sch, "minLength", &lim) && (double)n < lim) {
			snprintf(err, errlen, lim == 1 ? "'%s' must not be empty"
			         : "'%s' is too short", name);
			return -1;
		}
		if (schema_num(sch, "maxLength", &lim) && (double)n > lim) {
			snprintf(err, errlen, "'%s' is too long (%zu characters, at most %g)", name, n, lim);
			return -1;
		}
		if (!schema_matches(sch, json_object_get_string(v))) {
			snprintf(err, errlen, "'%s' must match %s", name,
			         json_object_get_string(json_object_object_get(sch, "pattern")));
			return -1;
		}
		break;
	case json_type_array:
		n = json_object_array_length(v);
		if (schema_num(sch, "minItems", &lim) && (double)n < lim) {
			snprintf(err, errlen, "'%s' needs at least %g item(s)", name, lim);
			return -1;
		}
		if (schema_num(sch, "maxItems", &lim) && (double)n > lim) {
			snprintf(err, errlen, "'%s' has %zu items, at most %g allowed", name, n, lim);
			return -1;
		}
		if (json_object_object_get_ex(sch, "items", &items)) {
			for (i = 0; i < n; i++) {
				char sub[96];
				snprintf(sub, sizeof sub, "%s[%zu]", name, i);
				if (schema_value(items, json_object_array_get_idx(v, i), sub, err, errlen) != 0)
					return -1;
			}
		}
		break;
	default:
		break;
	}
	return 0;
}

int
schema_check(struct json_object *schema, struct json_object *args, char *err, size_t errlen)
{
	struct json_object *props = NULL, *req, *sch, *v;
	size_t i;

	if (!json_object_is_type(args, json_type_object)) {
		snprintf(err, errlen, "arguments must be a JSON object");
		return -1;
	}
	json_object_object_get_ex(schema, "properties", &props);
	json_object_object_foreach(args, key, val) {
		if (props == NULL || !json_object_object_get_ex(props, key, &sch)) {
			char allowed[512];
			size_t o = 0;
			allowed[0] = '\0';
			if (props != NULL) {
				json_object_object_foreach(props, pk, pv) {
					(void)pv;
					if (o < sizeof allowed)
						o += (size_t)snprintf(allowed + o, sizeof allowed - o,
						                      "%s%s", o ? ", " : "", pk);
				}
			}
			snprintf(err, errlen, "unknown argument '%.*s' (%s%s)", utf8_prec(key,
			    64), key,
			         o ? "allowed: " : "this tool takes no arguments", allowed);
			return -1;
		}
		if (schema_value(sch, val, key, err, errlen) != 0)
			return -1;
	}
	if (json_object_object_get_ex(schema, "required", &req)) {
		for (i = 0; i < json_object_array_length(req); i++) {
			const char *r = json_object_get_string(json_object_array_get_idx(req, i));
			if (!json_object_object_get_ex(args, r, &v)) {
				snprintf(err, errlen, "missing required argument '%s'", r);
				return -1;
			}
		}
	}
	return 0;
}

void
schema_normalize(struct json_object *schema, struct json_object *args)
{
	struct json_object *props = NULL, *sch, *en;
	const char *canon;

	if (!json_object_is_type(args, json_type_object) ||
	    !json_object_object_get_ex(schema, "properties", &props))
		return;
	json_object_object_foreach(args, key, val) {
		if (!json_object_is_type(val, json_type_string) ||
		    !json_object_object_get_ex(props, key, &sch) ||
		    !json_object_object_get_ex(sch, "enum", &en))
			continue;
		canon = schema_enum_find(en, json_object_get_string(val));
		if (canon != NULL && strcmp(canon, json_object_get_string(val)) != 0)
			json_object_set_string(val, canon);
	}
}
