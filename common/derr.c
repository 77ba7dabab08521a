/* derr.c - the error table. See derr.h. */
#include "derr.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
	int status;
	const char *name;
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
};

/* A string cut to fit may end inside a UTF-8 sequence: drop that part, so
 * every reply stays valid UTF-8. */
static void
derr_cut_utf8(char *s, int wanted, size_t size)
{
	size_t n, i, need;
	unsigned char c;

	if (wanted < 0 || (size_t)wanted < size)
		return;                 /* not cut */
	n = strlen(s);
	for (i = n; i > 0 && n - i < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80; i--)
		;
	if (i == 0)
		return;
	c = (unsigned char)s[i - 1];
	need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	if (n - (i - 1) < need)
		s[i - 1] = '\0';
}

int
derr_set(struct derr *e, enum derr_code code, const char *field,
    const char *fmt, ...)
{
	va_list ap;
	int n;

	e->code = code;
	n = snprintf(e->field, sizeof e->field, "%s", field ? field : "");
	derr_cut_utf8(e->field, n, sizeof e->field);
	va_start(ap, fmt);
	n = vsnprintf(e->message, sizeof e->message, fmt, ap);
	va_end(ap);
	derr_cut_utf8(e->message, n, sizeof e->message);
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

const char *
derr_name(enum derr_code code)
{
	return (unsigned)code < DERR__COUNT ? derr_table[code].name : "internal";
}

json_object *
derr_to_json(const struct derr *e)
{
	json_object *inner = json_object_new_object(), *outer;
	enum derr_code code = e->code == DERR_OK ? DERR_INTERNAL : e->code;

	json_object_object_add(inner, "code", json_object_new_string(derr_name(code)));
	json_object_object_add(inner, "message", json_object_new_string(
	    e->message[0] ? e->message : "internal error"));
	json_object_object_add(inner, "field",
	    e->field[0] ? json_object_new_string(e->field) : NULL);
	outer = json_object_new_object();
	json_object_object_add(outer, "error", inner);
	return outer;
}
