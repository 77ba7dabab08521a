/*
 * jx.h - reading validated values out of a request's JSON body (json-c).
 *
 * Each getter looks up one key of an object and either stores the value and
 * returns 0, or fills a derr naming the field and returns -1 (redis's
 * getLongLongFromObjectOrReply). A missing optional key, or one set to null,
 * leaves the default and returns 0; `*present` (when non-NULL) says whether
 * the key was given. Strings returned are borrowed from the json_object and
 * live as long as it does. Length limits count characters (code points);
 * json-c has already rejected non-UTF-8 input (JSON_TOKENER_VALIDATE_UTF8).
 */
#ifndef DETM_JX_H
#define DETM_JX_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "derr.h"
#include "util.h"

/* Parses text (len bytes) as one JSON value, strictly, UTF-8 validated,
 * and faithfully (jxkeep.h): numbers print back as written, a key holding
 * NUL or given twice in one object is refused naming its path, NaN and
 * Infinity are refused. Depth is capped at 64. Returns a new object, or
 * NULL with e filled (DERR_INVALID; a bare `null` too). */
json_object *jx_parse(const char *text, size_t len, struct derr *e);
/* JSON text this daemon stored (metadata, input_data...) back to a value,
 * through jx_parse so big numbers keep their text; text jx_parse refuses
 * (stored before it was faithful) falls back to plain json-c. New object
 * or NULL. */
json_object *jx_parse_stored(const char *text);
/* The length of o when it is an array, else 0 (NULL, null, another type):
 * json_object_array_length asserts on anything but an array. */
size_t jx_alen(json_object *o);

/* Serialises compactly without escaping '/'. Borrowed string, valid until
 * obj changes or is freed. */
const char *jx_string(json_object *obj, size_t *len);

int jx_str(json_object *o, const char *key, bool required, size_t min_chars,
    size_t max_chars, const char **out, struct derr *e) DETM_NODISCARD;
int jx_int(json_object *o, const char *key, bool required, int64_t min,
    int64_t max, int64_t *out, bool *present, struct derr *e) DETM_NODISCARD;
int jx_num(json_object *o, const char *key, double min, double max,
    double *out, bool *present, struct derr *e) DETM_NODISCARD;
int jx_bool(json_object *o, const char *key, bool *out, bool *present,
    struct derr *e) DETM_NODISCARD;
/* An object value (borrowed), or NULL when absent. */
int jx_obj(json_object *o, const char *key, json_object **out,
    struct derr *e) DETM_NODISCARD;
/* An array of strings, each min..max chars, at most max_items (borrowed). */
int jx_strarray(json_object *o, const char *key, bool required,
    size_t min_items, size_t max_items, size_t min_chars, size_t max_chars,
    json_object **out, struct derr *e) DETM_NODISCARD;
/* Any JSON value serialised to at most max_bytes; *out is a malloc'd
 * string or NULL when absent/null. */
int jx_any_text(json_object *o, const char *key, size_t max_bytes,
    char **out, struct derr *e) DETM_NODISCARD;

/* Refuses any key of o not among keys[0..n) (DERR_INVALID naming it). */
int jx_only(json_object *o, const char *const *keys, size_t n, struct derr *e) DETM_NODISCARD;

/* Parses a decimal integer string (query or path parameter). */
int jx_parse_int(const char *s, const char *field, int64_t min, int64_t max,
    int64_t *out, struct derr *e) DETM_NODISCARD;

/* Adds a string or JSON null (s == NULL) under key. */
void jx_add_str(json_object *o, const char *key, const char *s);
/* Adds an ISO time or null (ms <= 0). */
void jx_add_time(json_object *o, const char *key, int64_t ms);

#endif
