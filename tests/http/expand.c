/*
 * expand.c - variables and text expansion for case files, plus the small
 * allocation helpers (abort on out-of-memory: this is a test tool).
 *
 * Expansion, applied to paths, header values, bodies and expectation text:
 *   $NAME, ${NAME}     a variable (captured, or given with --var); an
 *                      undefined one is an error, so a failed capture shows
 *                      up at the step that needs it
 *   $$                 a literal '$'
 *   $(repeat N TEXT)   TEXT repeated N times (TEXT ends at the first ')')
 *   \xNN               (bodies and header values only) the byte 0xNN, so a
 *                      case can send non-UTF-8 or NUL bytes
 * Any other backslash is kept, so JSON escapes such as \" and \n pass through.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httpcase.h"

void *
hc_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL) {
		fputs("httpcase: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *
hc_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL) {
		fputs("httpcase: out of memory\n", stderr);
		abort();
	}
	return q;
}

char *
hc_xstrndup(const char *s, size_t n)
{
	char *d = hc_xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *
hc_xstrdup(const char *s)
{
	return hc_xstrndup(s, strlen(s));
}

char *
hc_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	s = hc_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void
hc_vars_set(struct hc_vars *v, const char *name, const char *value)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		if (strcmp(v->names[i], name) == 0) {
			free(v->values[i]);
			v->values[i] = hc_xstrdup(value);
			return;
		}
	}
	v->names = hc_xrealloc(v->names, (v->n + 1) * sizeof *v->names);
	v->values = hc_xrealloc(v->values, (v->n + 1) * sizeof *v->values);
	v->names[v->n] = hc_xstrdup(name);
	v->values[v->n] = hc_xstrdup(value);
	v->n++;
}

const char *
hc_vars_get(const struct hc_vars *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->names[i], name) == 0)
			return v->values[i];
	return NULL;
}

void
hc_vars_free(struct hc_vars *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		free(v->names[i]);
		free(v->values[i]);
	}
	free(v->names);
	free(v->values);
	memset(v, 0, sizeof *v);
}

/* A growable byte buffer; the ceiling keeps a typo in a repeat count from
 * eating the machine. */
struct obuf {
	char *p;
	size_t len, cap;
};

#define OBUF_MAX (64u * 1024 * 1024)

static int
obuf_add(struct obuf *o, const char *s, size_t n)
{
	if (o->len + n + 1 > OBUF_MAX)
		return -1;
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->p = hc_xrealloc(o->p, o->cap);
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
	return 0;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

char *
hc_expand(const char *in, const struct hc_vars *v, int bytes, size_t *len, char **err)
{
	struct obuf o = { NULL, 0, 0 };
	const char *s = in, *e, *val;
	char name[128];
	size_t n;
	long count, i;
	char *end;

	*err = NULL;
	obuf_add(&o, "", 0);
	while (*s != '\0') {
		if (bytes && s[0] == '\\' && s[1] == 'x' && hexval(s[2]) >= 0 && hexval(s[3]) >= 0) {
			char c = (char)(hexval(s[2]) * 16 + hexval(s[3]));

			if (obuf_add(&o, &c, 1) != 0)
				goto toobig;
			s += 4;
			continue;
		}
		if (s[0] != '$') {
			e = s;
			while (*e != '\0' && *e != '$' && !(bytes && *e == '\\'))
				e++;
			if (e == s)
				e++;
			if (obuf_add(&o, s, (size_t)(e - s)) != 0)
				goto toobig;
			s = e;
			continue;
		}
		if (s[1] == '$') {
			obuf_add(&o, "$", 1);
			s += 2;
			continue;
		}
		if (strncmp(s, "$(repeat ", 9) == 0) {
			count = strtol(s + 9, &end, 10);
			if (end == s + 9 || *end != ' ' || count < 0 || (e = strchr(end + 1, ')')) == NULL) {
				*err = hc_xasprintf("bad $(repeat N TEXT) near '%.20s'", s);
				goto fail;
			}
			for (i = 0; i < count; i++)
				if (obuf_add(&o, end + 1, (size_t)(e - end - 1)) != 0)
					goto toobig;
			s = e + 1;
			continue;
		}
		if (s[1] == '{') {
			e = strchr(s + 2, '}');
			if (e == NULL) {
				*err = hc_xasprintf("unterminated ${ near '%.20s'", s);
				goto fail;
			}
			n = (size_t)(e - s - 2);
			e++;
			s += 2;
		} else {
			e = s + 1;
			while (isalnum((unsigned char)*e) || *e == '_')
				e++;
			n = (size_t)(e - s - 1);
			s += 1;
		}
		if (n == 0 || n >= sizeof name) {
			if (obuf_add(&o, "$", 1) != 0)
				goto toobig;
			continue;
		}
		memcpy(name, s, n);
		name[n] = '\0';
		if ((val = hc_vars_get(v, name)) == NULL) {
			*err = hc_xasprintf("undefined variable $%s", name);
			goto fail;
		}
		if (obuf_add(&o, val, strlen(val)) != 0)
			goto toobig;
		s = e;
	}
	if (len != NULL)
		*len = o.len;
	return o.p;
toobig:
	*err = hc_xasprintf("expansion larger than %u bytes", OBUF_MAX);
fail:
	free(o.p);
	return NULL;
}
