/*
 * schema.h - check tool arguments against a tool's inputSchema.
 *
 * Covers the subset of JSON Schema the tool table uses: type (a name or a
 * list of names), enum (strings; matched ignoring ASCII case, a leniency
 * the tool descriptions state), minimum/maximum, minLength/maxLength
 * (counted in code points), minItems/maxItems, items (one level),
 * required and additionalProperties:false. A property without "type"
 * accepts any value. Not here: defaults (detmd applies them).
 */
#ifndef DETM_MCP_SCHEMA_H
#define DETM_MCP_SCHEMA_H

#include <json-c/json.h>
#include <stddef.h>

/* The "$comment" (a standard JSON Schema keyword, so strict validators
 * accept it) of a property that takes any JSON value whatever its "type". */
#define SCHEMA_ANY_JSON "any JSON value is accepted"

/* Check args (a JSON object) against schema. Returns 0 when they conform,
 * else -1 with one sentence for the model in err ("'ordinal' must be an
 * integer >= 0, got -1"). Neither argument is modified or retained. */
int schema_check(struct json_object *schema, struct json_object *args,
                 char *err, size_t errlen) __attribute__((warn_unused_result));

/* After a successful schema_check: rewrites each string argument that
 * matched an enum only ignoring case to the enum's own spelling, in place
 * ("Completed" -> "completed"). Nothing else changes. */
void schema_normalize(struct json_object *schema, struct json_object *args);

#endif
