/*
 * osw_form.h - the bodies OSWorld's clients send besides JSON: HTML forms,
 * urlencoded (requests' data={...}: /file, /window_size) and multipart
 * (files={...}: /setup/upload), read from a ROUTE_RAW route's bytes
 * (osw_form.c). A JSON body's string fields are read the same way.
 *
 * Invariants: at most OSW_FORM_FIELDS fields; a value points into the
 * request's bytes (multipart) or into a copy the form owns (urlencoded,
 * JSON), valid until osw_form_free. Names are matched exactly.
 * Does not: check values (the route does), or keep anything past the form.
 */
#ifndef DETM_OSW_FORM_H
#define DETM_OSW_FORM_H

#include <stddef.h>

#include "api.h"

#define OSW_FORM_FIELDS 16

struct osw_field {
	char name[64];
	char filename[256];     /* a multipart file part's name, else "" */
	const char *val;        /* not NUL-terminated for a file part: use len */
	size_t len;
	char *own;              /* the decoded copy, when the form made one */
};

struct osw_form {
	struct osw_field f[OSW_FORM_FIELDS];
	int n;
};

/* Parses r's body by its Content-Type: application/json (r->body's string
 * fields), application/x-www-form-urlencoded, or multipart/form-data. 0,
 * or -1 with DERR_INVALID (a multipart body without its boundary or end,
 * too many fields) or DERR_MEDIA (another type). */
int osw_form_parse(struct req *r, struct osw_form *f, struct derr *e) DETM_NODISCARD;
/* The same for bytes p[0..n) sent with Content-Type ct (NULL: none); f is
 * appended to (memset it first). The values point into p. */
int osw_form_bytes(const char *ct, const char *p, size_t n, struct osw_form *f, struct derr *e)
    DETM_NODISCARD;
/* The field named name, or NULL. */
const struct osw_field *osw_form_get(const struct osw_form *f, const char *name);
/* name's value as text into out[cap] (valid UTF-8, cut to fit); "" when
 * absent. Returns out. */
const char *osw_form_text(const struct osw_form *f, const char *name, char *out, size_t cap);
void osw_form_free(struct osw_form *f);

#endif
