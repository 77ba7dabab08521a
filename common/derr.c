/* derr.c - the error table; every message and field repaired to valid UTF-8
 * (utf8.h). See derr.h. */
#include "derr.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

static const struct {
	int status;
	const char *name;
	int retry_after;        /* seconds, 0: no Retry-After */
} derr_table[DERR__COUNT] = {
	[DERR_OK] = { 200, "ok" },
	[DERR_INVALID] = { 400, "invalid_argument" },
	[DERR_UNAUTHORIZED] = { 401, "unauthorized" },
	[DERR_FORBIDDEN] = { 403, "forbidden" },
	[DERR_NOT_FOUND] = { 404, "not_found" },
	[DERR_METHOD] = { 405, "method_not_allowed" },
	[DERR_CONFLICT] = { 409, "conflict" },
	[DERR_TOO_LARGE] = { 413, "payload_too_large" },
	[DERR_MEDIA] = { 415, "unsupported_media_type" },
	[DERR_RANGE] = { 416, "range_not_satisfiable" },
	[DERR_INTERNAL] = { 500, "internal" },
	[DERR_NOT_IMPLEMENTED] = { 501, "not_implemented" },
	[DERR_UNAVAILABLE] = { 503, "unavailable" },
	[DERR_HUMAN_CONTROL] = { 409, "human_control" },
	[DERR_NO_SPACE] = { 507, "no_space" },
	[DERR_IO_ERROR] = { 500, "io_error" },
	[DERR_NOT_DURABLE] = { 500, "not_durable" },
	[DERR_LAUNCH_DENIED] = { 403, "launch_denied" },
	[DERR_BUSY] = { 503, "unavailable", 5 },
	[DERR_DRAINING] = { 503, "draining" },
	[DERR_DISPLAY_UNRESPONSIVE] = { 503, "display_unresponsive" },
};

int
derr_set(struct derr *e, enum derr_code code, const char *field,
    const char *fmt, ...)
{
	char raw[2 * sizeof e->message];
	va_list ap;

	e->code = code;
	field = field ? field : "";
	utf8_fix(e->field, sizeof e->field, field, strlen(field));
	/* Messages quote client bytes (methods, headers, paths, file text):
	 * repaired and cut between characters here, so no error is invalid
	 * UTF-8 whatever a caller formats or truncates with %.Ns. */
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	utf8_fix(e->message, sizeof e->message, raw, strlen(raw));
	return -1;
}

void
derr_clear(struct derr *e)
{
	memset(e, 0, sizeof *e);
}

int
derr_status(enum derr_code code)
{
	return (unsigned)code < DERR__COUNT ? derr_table[code].status : 500;
}

int
derr_retry_after(enum derr_code code)
{
	return (unsigned)code < DERR__COUNT ? derr_table[code].retry_after : 0;
}

const char *
derr_name(enum derr_code code)
{
	return (unsigned)code < DERR__COUNT ? derr_table[code].name : "internal";
}

int
derr_refield(struct derr *e, const char *field)
{
	field = field ? field : "";
	utf8_fix(e->field, sizeof e->field, field, strlen(field));
	return -1;
}

/* The inner {"code","message","field"} object (caller owns it). */
static json_object *
derr_inner(const struct derr *e)
{
	json_object *inner = json_object_new_object();
	enum derr_code code = e->code == DERR_OK ? DERR_INTERNAL : e->code;

	json_object_object_add(inner, "code", json_object_new_string(derr_name(code)));
	json_object_object_add(inner, "message", json_object_new_string(
	    e->message[0] ? e->message : "internal error"));
	json_object_object_add(inner, "field",
	    e->field[0] ? json_object_new_string(e->field) : NULL);
	return inner;
}

json_object *
derr_to_json(const struct derr *e)
{
	json_object *outer = json_object_new_object();

	json_object_object_add(outer, "error", derr_inner(e));
	return outer;
}

void
derr_add_json(json_object *obj, const struct derr *e)
{
	json_object_object_add(obj, "error", derr_inner(e));
}
