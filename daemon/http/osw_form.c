/*
 * osw_form.c - HTML form bodies for the OSWorld server (osw_form.h).
 * Multipart per RFC 7578 as requests writes it: "--boundary" lines, each
 * part's headers (Content-Disposition: form-data; name="..."; filename=
 * "..."), a blank line, the bytes, CRLF before the next boundary.
 */
#include "osw_form.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "utf8.h"

static int
add(struct osw_form *f, const char *name, size_t nlen, struct derr *e, struct osw_field **out)
{
	if (f->n >= OSW_FORM_FIELDS)
		return derr_set(e, DERR_INVALID, NULL, "more than %d form fields", OSW_FORM_FIELDS);
	*out = &f->f[f->n++];
	memset(*out, 0, sizeof **out);
	snprintf((*out)->name, sizeof (*out)->name, "%.*s", (int)nlen, name);
	return 0;
}

static int
hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

/* "%41" and "+" decoded into a new string; *len its length. s[0..n) need
 * not end in a NUL (a request's raw body): no str* / sscanf on it, as
 * sscanf takes the strlen of its input and ran past the body's end. */
static char *
url_decode(const char *s, size_t n, size_t *len)
{
	char *o = malloc(n + 1);
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '+')
			o[k++] = ' ';
		else if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			o[k++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else
			o[k++] = s[i];
	}
	o[k] = '\0';
	*len = k;
	return o;
}

static int
parse_urlencoded(const char *p, size_t n, struct osw_form *f, struct derr *e)
{
	const char *end = p + n;

	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p)), *stop = amp ? amp : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		struct osw_field *fl;
		size_t nl;
		char *name;

		if (stop > p) {
			name = url_decode(p, (size_t)((eq ? eq : stop) - p), &nl);
			if (add(f, name, nl, e, &fl) != 0) {
				free(name);
				return -1;
			}
			free(name);
			fl->own = eq ? url_decode(eq + 1, (size_t)(stop - eq - 1), &fl->len) : strdup("");
			fl->val = fl->own;
		}
		p = stop + 1;
	}
	return 0;
}

/* The value of param (name="...") in a header line h[0..n), into out. */
static void
header_param(const char *h, size_t n, const char *param, char *out, size_t cap)
{
	size_t pl = strlen(param);

	out[0] = '\0';
	for (size_t i = 0; i + pl + 2 <= n; i++) {
		if ((i > 0 && h[i - 1] != ' ' && h[i - 1] != ';') || strncasecmp(h + i, param, pl) != 0 ||
		    h[i + pl] != '=')
			continue;
		const char *v = h + i + pl + 1, *ve;

		if (*v == '"') {
			v++;
			ve = memchr(v, '"', (size_t)(h + n - v));
		} else {
			ve = memchr(v, ';', (size_t)(h + n - v));
		}
		if (ve == NULL)
			ve = h + n;
		snprintf(out, cap, "%.*s", (int)(ve - v), v);
		utf8_fix_in_place(out, cap);
		return;
	}
}

static const char *
find(const char *hay, size_t hn, const char *needle, size_t nn)
{
	return nn <= hn ? memmem(hay, hn, needle, nn) : NULL;
}

/* One part p[0..n) (after its boundary line, before the CRLF of the next). */
static int
part(const char *p, size_t n, struct osw_form *f, struct derr *e)
{
	const char *body = find(p, n, "\r\n\r\n", 4), *line = p;
	char name[64] = "", fname[256] = "";
	struct osw_field *fl;

	if (body == NULL)
		return derr_set(e, DERR_INVALID, NULL, "a multipart part without its headers' end");
	while (line < body) {
		const char *eol = find(line, (size_t)(body + 2 - line), "\r\n", 2);
		size_t ll = (size_t)((eol ? eol : body) - line);

		if (ll > 20 && strncasecmp(line, "Content-Disposition:", 20) == 0) {
			header_param(line, ll, "name", name, sizeof name);
			header_param(line, ll, "filename", fname, sizeof fname);
		}
		line = (eol ? eol : body) + 2;
	}
	if (add(f, name, strlen(name), e, &fl) != 0)
		return -1;
	snprintf(fl->filename, sizeof fl->filename, "%s", fname);
	fl->val = body + 4;
	fl->len = (size_t)(p + n - fl->val);
	return 0;
}

static int
parse_multipart(const char *ctype, const char *p, size_t n, struct osw_form *f, struct derr *e)
{
	char b[200], delim[210];
	const char *end = p + n, *cur, *next;
	size_t dl;

	header_param(ctype, strlen(ctype), "boundary", b, sizeof b);
	if (b[0] == '\0')
		return derr_set(e, DERR_INVALID, NULL, "multipart/form-data without a boundary");
	dl = (size_t)snprintf(delim, sizeof delim, "\r\n--%s", b);
	/* The first boundary has no CRLF before it. */
	if (n < dl - 2 || memcmp(p, delim + 2, dl - 2) != 0)
		return derr_set(e, DERR_INVALID, NULL, "the multipart body does not start with its boundary");
	cur = p + dl - 2;
	for (;;) {
		if (end - cur >= 2 && cur[0] == '-' && cur[1] == '-')
			return 0;       /* the closing boundary */
		if (end - cur < 2 || cur[0] != '\r' || cur[1] != '\n')
			break;
		cur += 2;
		if ((next = find(cur, (size_t)(end - cur), delim, dl)) == NULL)
			break;
		if (part(cur, (size_t)(next - cur), f, e) != 0)
			return -1;
		cur = next + dl;
	}
	return derr_set(e, DERR_INVALID, NULL, "the multipart body has no closing boundary");
}

int
osw_form_parse(struct req *r, struct osw_form *f, struct derr *e)
{
	const char *ct = req_in_header(r, "Content-Type");

	memset(f, 0, sizeof *f);
	if (r->in_raw == NULL) {        /* JSON, or nothing: the body object's strings */
		json_object_object_foreach(r->body, k, v) {
			struct osw_field *fl;

			if (!json_object_is_type(v, json_type_string))
				continue;
			if (add(f, k, strlen(k), e, &fl) != 0)
				return -1;
			fl->own = strdup(json_object_get_string(v));
			fl->val = fl->own;
			fl->len = strlen(fl->own);
		}
		return 0;
	}
	return osw_form_bytes(ct, r->in_raw, r->in_raw_len, f, e);
}

int
osw_form_bytes(const char *ct, const char *p, size_t n, struct osw_form *f, struct derr *e)
{
	if (ct != NULL && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0)
		return parse_urlencoded(p, n, f, e);
	if (ct != NULL && strncasecmp(ct, "multipart/form-data", 19) == 0)
		return parse_multipart(ct, p, n, f, e);
	if (n == 0)
		return 0;
	return derr_set(e, DERR_MEDIA, NULL, "send a form (urlencoded or multipart) or JSON, not %s",
	    ct ? ct : "no Content-Type");
}

const struct osw_field *
osw_form_get(const struct osw_form *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->f[i].name, name) == 0)
			return &f->f[i];
	return NULL;
}

const char *
osw_form_text(const struct osw_form *f, const char *name, char *out, size_t cap)
{
	const struct osw_field *fl = osw_form_get(f, name);

	out[0] = '\0';
	if (fl != NULL)
		utf8_fix(out, cap, fl->val, fl->len);
	return out;
}

void
osw_form_free(struct osw_form *f)
{
	if (f == NULL)
		return;
	for (int i = 0; i < f->n; i++)
		free(f->f[i].own);
	f->n = 0;
}
