/*
 * case.c - parse a .case file into steps (struct hc_file).
 *
 * Line-oriented; a step is
 *
 *   ## name of the step            starts a step (required)
 *   @sleep 15                      optional directives before the request
 *   POST /api/tasks/$T/items       METHOD PATH
 *   Content-Type: text/plain       header lines "Name: value" (optional)
 *                                  a blank line, then the body (optional);
 *   {"items":["a"]}                a non-header line also starts the body
 *   => 201                         expectations (status is required)
 *   => json {"ok":true}
 *   $A = .added[0].ordinal         captures
 *
 * Lines starting with "# " (or a lone "#") are comments everywhere. The body
 * runs until the first "=>", "##" or capture line; trailing blank lines are
 * dropped and lines are joined with "\n". Everything is kept unexpanded:
 * variables are expanded when the step runs (check.c, main.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httpcase.h"

enum pstate { P_TOP, P_REQ, P_HEADERS, P_BODY, P_EXPECT };

struct parser {
	struct hc_file *f;
	struct hc_step *st;   /* current step */
	char *body;           /* body being collected */
	size_t body_len;
	size_t body_keep;     /* length up to the last non-blank line */
	int lineno;
	char *err;
};

static void
step_add_expect(struct hc_step *st, const struct hc_expect *x)
{
	st->ex = hc_xrealloc(st->ex, (st->nex + 1) * sizeof *st->ex);
	st->ex[st->nex++] = *x;
}

static int
is_header_line(const char *s)
{
	if (!isalpha((unsigned char)*s))
		return 0;
	while (isalnum((unsigned char)*s) || *s == '-')
		s++;
	return *s == ':';
}

static int
is_capture_line(const char *s)
{
	if (*s != '$' || !(isalpha((unsigned char)s[1]) || s[1] == '_'))
		return 0;
	s++;
	while (isalnum((unsigned char)*s) || *s == '_')
		s++;
	return strncmp(s, " = ", 3) == 0;
}

static const char *
skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Cut the next space-separated word off *s (malloc'd), or NULL at the end. */
static char *
next_word(const char **s)
{
	const char *p = skip_ws(*s), *e = p;

	while (*e != '\0' && *e != ' ' && *e != '\t')
		e++;
	*s = e;
	return e == p ? NULL : hc_xstrndup(p, (size_t)(e - p));
}

static int
is_op(const char *w)
{
	static const char *const ops[] = { "==", "!=", "~", "!~", "<", "<=", ">", ">=", NULL };
	size_t i;

	for (i = 0; ops[i] != NULL; i++)
		if (strcmp(w, ops[i]) == 0)
			return 1;
	return 0;
}

static int
parse_expect(struct parser *p, const char *line)
{
	struct hc_expect x;
	const char *s = skip_ws(line + 2);
	char *kw, *c;

	memset(&x, 0, sizeof x);
	x.lineno = p->lineno;
	if (isdigit((unsigned char)*s)) {
		x.kind = HC_STATUS;
		x.status = atoi(s);
		if (strchr(s, '|') != NULL)
			x.status2 = atoi(strchr(s, '|') + 1);
		step_add_expect(p->st, &x);
		return 0;
	}
	kw = next_word(&s);
	if (kw == NULL)
		goto bad;
	s = skip_ws(s);
	if (strcmp(kw, "error") == 0) {
		x.kind = HC_ERROR;
		x.a = next_word(&s);
		x.b = next_word(&s);
		if (x.a == NULL || x.b == NULL)
			goto bad;
	} else if (strcmp(kw, "json") == 0) {
		x.kind = HC_JSON;
		x.b = hc_xstrdup(s);
	} else if (strcmp(kw, "path") == 0 || strcmp(kw, "len") == 0) {
		x.kind = kw[0] == 'p' ? HC_PATH : HC_LEN;
		x.a = next_word(&s);
		x.op = next_word(&s);
		x.b = hc_xstrdup(skip_ws(s));
		if (x.a == NULL || x.op == NULL || !is_op(x.op) || x.b[0] == '\0')
			goto bad;
	} else if (strcmp(kw, "absent") == 0 || strcmp(kw, "present") == 0) {
		x.kind = kw[0] == 'a' ? HC_ABSENT : HC_PRESENT;
		if ((x.a = next_word(&s)) == NULL)
			goto bad;
	} else if (strcmp(kw, "type") == 0) {
		x.kind = HC_TYPE;
		x.a = next_word(&s);
		x.b = next_word(&s);
		if (x.a == NULL || x.b == NULL)
			goto bad;
	} else if (strcmp(kw, "header") == 0) {
		x.kind = HC_HEADER;
		c = strchr(s, ':');
		if (c != NULL && (strstr(s, " ~ ") == NULL || c < strstr(s, " ~ "))) {
			x.a = hc_xstrndup(s, (size_t)(c - s));
			x.op = hc_xstrdup("==");
			x.b = hc_xstrdup(skip_ws(c + 1));
		} else if ((c = strstr(s, " ~ ")) != NULL) {
			x.a = hc_xstrndup(s, (size_t)(c - s));
			x.op = hc_xstrdup("~");
			x.b = hc_xstrdup(c + 3);
		} else {
			goto bad;
		}
	} else if (strcmp(kw, "noheader") == 0) {
		x.kind = HC_NOHEADER;
		if ((x.a = next_word(&s)) == NULL)
			goto bad;
	} else if (strcmp(kw, "body") == 0) {
		x.kind = HC_BODY;
		x.op = next_word(&s);
		if (x.op == NULL || (strcmp(x.op, "~") != 0 && strcmp(x.op, "!~") != 0 &&
		    strcmp(x.op, "empty") != 0))
			goto bad;
		x.b = hc_xstrdup(skip_ws(s));
	} else {
		goto bad;
	}
	free(kw);
	step_add_expect(p->st, &x);
	return 0;
bad:
	free(kw);
	free(x.a);
	free(x.op);
	free(x.b);
	p->err = hc_xasprintf("%s:%d: cannot parse expectation '%s'", p->f->path,
	    p->lineno, line);
	return -1;
}

static void
body_append(struct parser *p, const char *line)
{
	size_t n = strlen(line);

	p->body = hc_xrealloc(p->body, p->body_len + n + 2);
	if (p->body_len > 0 || p->st->body != NULL)
		p->body[p->body_len++] = '\n';
	memcpy(p->body + p->body_len, line, n);
	p->body_len += n;
	p->body[p->body_len] = '\0';
	if (*skip_ws(line) != '\0')
		p->body_keep = p->body_len;
	p->st->body = p->body;    /* marks "has a body" */
}

static void
body_close(struct parser *p)
{
	if (p->body != NULL) {
		p->body[p->body_keep] = '\0';
		p->st->body = p->body;
	}
	p->body = NULL;
	p->body_len = p->body_keep = 0;
}

static int
step_finish(struct parser *p)
{
	size_t i;

	if (p->st == NULL)
		return 0;
	body_close(p);
	if (p->st->method == NULL) {
		p->err = hc_xasprintf("%s:%d: step '%s' has no request line", p->f->path,
		    p->st->lineno, p->st->name);
		return -1;
	}
	for (i = 0; i < p->st->nex; i++)
		if (p->st->ex[i].kind == HC_STATUS)
			return 0;
	p->err = hc_xasprintf("%s:%d: step '%s' has no '=> STATUS' line", p->f->path,
	    p->st->lineno, p->st->name);
	return -1;
}

static int
parse_line(struct parser *p, enum pstate *ps, char *line)
{
	struct hc_step *st;
	const char *s;

	if ((line[0] == '#' && (line[1] == ' ' || line[1] == '\0')))
		return 0;
	if (strncmp(line, "## ", 3) == 0) {
		if (step_finish(p) != 0)
			return -1;
		p->f->steps = hc_xrealloc(p->f->steps, (p->f->nsteps + 1) * sizeof *p->f->steps);
		st = p->st = &p->f->steps[p->f->nsteps++];
		memset(st, 0, sizeof *st);
		st->name = hc_xstrdup(skip_ws(line + 3));
		st->lineno = p->lineno;
		*ps = P_REQ;
		return 0;
	}
	if (*ps == P_TOP) {
		if (*skip_ws(line) == '\0')
			return 0;
		p->err = hc_xasprintf("%s:%d: text before the first '## step'", p->f->path, p->lineno);
		return -1;
	}
	st = p->st;
	if (strncmp(line, "=>", 2) == 0 || is_capture_line(line)) {
		if (*ps == P_REQ) {
			p->err = hc_xasprintf("%s:%d: expectation before the request line",
			    p->f->path, p->lineno);
			return -1;
		}
		*ps = P_EXPECT;
		if (line[0] == '$') {
			struct hc_expect x;

			memset(&x, 0, sizeof x);
			x.kind = HC_CAPTURE;
			x.lineno = p->lineno;
			x.a = hc_xstrndup(line + 1, strcspn(line + 1, " "));
			x.b = hc_xstrdup(skip_ws(strstr(line, " = ") + 3));
			step_add_expect(st, &x);
			return 0;
		}
		return parse_expect(p, line);
	}
	switch (*ps) {
	case P_REQ:
		s = skip_ws(line);
		if (*s == '\0')
			return 0;
		if (strncmp(s, "@sleep ", 7) == 0) {
			st->sleep_ms = atoi(s + 7);
			return 0;
		}
		st->method = next_word(&s);
		st->path = next_word(&s);
		if (st->path == NULL || *skip_ws(s) != '\0') {
			p->err = hc_xasprintf("%s:%d: want 'METHOD PATH', got '%s'", p->f->path,
			    p->lineno, line);
			return -1;
		}
		*ps = P_HEADERS;
		return 0;
	case P_HEADERS:
		if (line[0] == '\0') {
			*ps = P_BODY;
			return 0;
		}
		if (is_header_line(line)) {
			st->headers = hc_xrealloc(st->headers, (st->nheaders + 1) * sizeof *st->headers);
			st->headers[st->nheaders++] = hc_xstrdup(line);
			return 0;
		}
		*ps = P_BODY;
		body_append(p, line);
		return 0;
	case P_BODY:
		if (line[0] == '\0' && p->body == NULL)
			return 0;
		body_append(p, line);
		return 0;
	case P_EXPECT:
		if (*skip_ws(line) == '\0')
			return 0;
		p->err = hc_xasprintf("%s:%d: unexpected line after expectations: '%s'",
		    p->f->path, p->lineno, line);
		return -1;
	case P_TOP:
		break;
	}
	return 0;
}

int
hc_file_load(const char *path, struct hc_file *f, char **err)
{
	struct parser p;
	enum pstate ps = P_TOP;
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = -1;

	memset(f, 0, sizeof *f);
	memset(&p, 0, sizeof p);
	f->path = hc_xstrdup(path);
	p.f = f;
	*err = NULL;
	if ((fp = fopen(path, "r")) == NULL) {
		*err = hc_xasprintf("%s: %s", path, strerror(errno));
		goto out;
	}
	while ((n = getline(&line, &cap, fp)) >= 0) {
		p.lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (parse_line(&p, &ps, line) != 0)
			goto out;
	}
	if (step_finish(&p) != 0)
		goto out;
	if (f->nsteps == 0) {
		p.err = hc_xasprintf("%s: no steps", path);
		goto out;
	}
	rc = 0;
out:
	if (fp != NULL)
		fclose(fp);
	free(line);
	if (rc != 0) {
		if (p.st != NULL && p.body != NULL && p.st->body != p.body)
			free(p.body);
		if (*err == NULL)
			*err = p.err;
		else
			free(p.err);
		hc_file_free(f);
	}
	return rc;
}

void
hc_file_free(struct hc_file *f)
{
	size_t i, j;

	if (f == NULL)
		return;
	for (i = 0; i < f->nsteps; i++) {
		struct hc_step *st = &f->steps[i];

		free(st->name);
		free(st->method);
		free(st->path);
		for (j = 0; j < st->nheaders; j++)
			free(st->headers[j]);
		free(st->headers);
		free(st->body);
		for (j = 0; j < st->nex; j++) {
			free(st->ex[j].a);
			free(st->ex[j].op);
			free(st->ex[j].b);
		}
		free(st->ex);
	}
	free(f->steps);
	free(f->path);
	memset(f, 0, sizeof *f);
}
