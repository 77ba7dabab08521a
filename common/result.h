/*
 * result.h - build MCP tools/call results (CallToolResult objects).
 *
 * Every result has content[] with a short human-readable text block first;
 * successful daemon replies also carry the daemon's JSON object as
 * structuredContent and, for backwards compatibility, as JSON text after the
 * summary line. result_error is the one function that formats tool errors.
 * Results are built for the newest protocol; result_for_version strips what
 * an older negotiated version does not know.
 */
#ifndef DETM_MCP_RESULT_H
#define DETM_MCP_RESULT_H

#include <json-c/json.h>

#include "tools.h"

/* A successful reply: summary line + JSON text, structuredContent = body.
 * Takes ownership of body (a JSON object). Never NULL. */
struct json_object *result_ok(const struct tool *t, struct json_object *body);

/* A daemon reply as the result of tool t: result_image when t may carry
 * a screenshot and body has one, else result_ok. Takes body. */
struct json_object *result_shape(const struct tool *t, struct json_object *body);

/* The end of a video_record clip (its status, taken): a clip that failed
 * is a tool error saying why (the status's error.message, "no space left
 * on device while writing ..." say), anything else result_shape. */
struct json_object *result_clip(const struct tool *t, struct json_object *status);

/* A screenshot reply: image content (base64 JPEG from body.image_b64) plus
 * a text block with the image size and scale; structuredContent = body
 * without image_b64. Takes ownership of body. Never NULL. */
struct json_object *result_image(const struct tool *t, struct json_object *body);

/* An isError result whose text is the formatted message; structured (may be
 * NULL, ownership taken) becomes structuredContent. Never NULL. */
struct json_object *result_error(struct json_object *structured, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Remove fields the negotiated protocol version (an index into
 * rpc's version table: 0 = 2024-11-05 ... 3 = 2025-11-25) predates. */
void result_for_version(struct json_object *result, int version);

#endif
