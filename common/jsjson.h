/*
 * jsjson.h - JSON text exactly as JavaScript's JSON.stringify(value, null, 2)
 * writes it, for result text blocks that gateways compare with their own
 * rendering of structuredContent (OpenClaw drops the duplicate only then).
 *
 * Self-contained (libc and json-c), linked by detmd and detm-mcp alike.
 */
#ifndef DETM_JSJSON_H
#define DETM_JSJSON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define JSJSON_NUM_LEN 64

/* The text of v, malloc'd (caller frees), *len (may be NULL) its length;
 * NULL when it would be longer than cap bytes. Out of memory aborts. */
char *jsjson_pretty(json_object *v, size_t cap, size_t *len);

/* d as JavaScript's Number::toString writes it ("1", "0.5", "1e+21",
 * "1.5e-7", "null" for NaN and the infinities). */
void jsjson_number(double d, char out[JSJSON_NUM_LEN]);

#endif
