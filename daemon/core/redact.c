/*
 * redact.c - the secret patterns and the replacer (redact.h).
 *
 * Patterns are POSIX extended regular expressions; group 1 of each is the
 * prefix kept in front of "[REDACTED]", and for a row with a tail, group
 * `tail` is kept after it (the "@host" of a URL, the END line of a PEM
 * key). They run in table order, each over the output of the one before,
 * so more specific forms (sk-ant-) come before general ones (sk-), and a
 * form that needs a neighbour (an AWS secret beside its AKIA id) before
 * the row that redacts the neighbour.
 *
 * Invariant: only a "[REDACTED]" this replacer wrote counts as redacted.
 * Each pass carries the offsets of the marks it and the passes before it
 * wrote (struct marks); a value followed by one of them is a kept prefix
 * ("api_key=sk-or-v1-[REDACTED]") and stays, while a value followed by the
 * same text from the input ("hunter2[REDACTED]") is redacted like any
 * other. Value classes accept no '[' (the PEM body excepted: a body that
 * is exactly a mark is left as it is), so a mark is never matched again.
 * Not done here: secrets in forms no row knows (hence the literal list),
 * and a secret glued after a forged mark ("password=[REDACTED]x").
 */
#include "redact.h"

#include <regex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "util.h"

#define MARK "[REDACTED]"
#define MARKLEN (sizeof MARK - 1)

/* The names of key=value secrets, shared by the plain and escaped rows. */
#define KEYS "(api[_-]?key|apikey|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|" \
	"secret[_-]?key|secret|password|passwd|token)"
/* A value of key=value: up to a quote, space, separator or bracket. */
#define VALUE "[^][\"'[:space:],;&}\\]{4,}"

static const struct pattern {
	const char *name;
	const char *re;
	int flags;
	int tail;       /* group kept after the mark; 0: none */
} patterns[] = {
	{ "Anthropic key (sk-ant-...)", "(sk-ant-)[A-Za-z0-9_-]{8,}", 0, 0 },
	{ "OpenRouter key (sk-or-v1-...)", "(sk-or-v1-)[A-Za-z0-9_-]{8,}", 0, 0 },
	{ "OpenAI-style key (sk-...)", "(sk-)[A-Za-z0-9_-]{16,}", 0, 0 },
	{ "Google API key (AIza...)", "(AIza)[0-9A-Za-z_-]{30,}", 0, 0 },
	{ "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)", "(gh[pousr]_)[A-Za-z0-9]{20,}", 0, 0 },
	{ "GitHub fine-grained token (github_pat_...)", "(github_pat_)[A-Za-z0-9_]{20,}", 0, 0 },
	{ "Slack token (xoxb-, xoxp-, ...)", "(xox[abposr]-)[A-Za-z0-9-]{10,}", 0, 0 },
	{ "PEM private key body (-----BEGIN ... PRIVATE KEY----- to its END line)",
	  "(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)([^-]|-[^-])+(-----END [A-Z0-9 ]*PRIVATE KEY-----)?", 0, 3 },
	{ "AWS secret access key (aws_secret_access_key=..., AWS_SECRET_ACCESS_KEY=...)",
	  "(aws_?secret_?access_?key\\\\*[\"']?[[:space:]]*[:=][[:space:]]*\\\\*[\"']?)[A-Za-z0-9/+=]{40}",
	  REG_ICASE, 0 },
	{ "AWS secret access key (40 characters just after an AKIA.../ASIA... key id)",
	  "((AKIA|ASIA)[0-9A-Z]{16}[^A-Za-z0-9/+=[]{1,16})[A-Za-z0-9/+=]{40}", 0, 0 },
	{ "AWS access key id (AKIA..., ASIA...)", "(AKIA|ASIA)[0-9A-Z]{16}", 0, 0 },
	{ "Bearer token", "(bearer[[:space:]]+)[A-Za-z0-9._~+/=-]{6,}", REG_ICASE, 0 },
	{ "Basic credentials (Authorization: Basic ...)",
	  "(authorization[\"']?[[:space:]]*[:=][[:space:]]*[\"']?basic[[:space:]]+)[A-Za-z0-9+/=._~-]{4,}",
	  REG_ICASE, 0 },
	{ "x-api-key header", "(x-api-key:[[:space:]]*)[^][:space:]\"',;\\[]{4,}", REG_ICASE, 0 },
	{ "URL password (scheme://user:password@host; scheme, user and host kept)",
	  "([A-Za-z][A-Za-z0-9+.-]*://[^][/:@[:space:]\"'<>]*:)[^][/@[:space:]\"'<>]+(@)", 0, 2 },
	{ "key=value / \"key\": \"value\" (api_key, token, secret, password, ...)",
	  "(" KEYS "[\"']?[[:space:]]*[:=][[:space:]]*[\"']?)" VALUE, REG_ICASE, 0 },
	{ "escaped JSON inside a string (\\\"password\\\":\\\"...\\\")",
	  "(" KEYS "\\\\+\"[[:space:]]*:[[:space:]]*\\\\+\")" VALUE, REG_ICASE, 0 },
};

#define NPAT (sizeof patterns / sizeof patterns[0])

struct redact {
	regex_t re[NPAT];
	bool ok[NPAT];
	char **lits;
	size_t nlits;
};

const char *
redact_pattern_name(size_t i)
{
	return i < NPAT ? patterns[i].name : NULL;
}

struct redact *
redact_new(const char *const *literals)
{
	struct redact *r = xcalloc(1, sizeof *r);
	size_t i, n = 0;

	for (i = 0; i < NPAT; i++)
		r->ok[i] = regcomp(&r->re[i], patterns[i].re, REG_EXTENDED | patterns[i].flags) == 0;
	for (i = 0; literals != NULL && literals[i] != NULL; i++)
		n++;
	r->lits = xcalloc(n + 1, sizeof *r->lits);
	for (i = 0; literals != NULL && literals[i] != NULL; i++)
		if (strlen(literals[i]) >= 4)
			r->lits[r->nlits++] = xstrdup(literals[i]);
	return r;
}

void
redact_free(struct redact *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < NPAT; i++)
		if (r->ok[i])
			regfree(&r->re[i]);
	for (i = 0; i < r->nlits; i++)
		free(r->lits[i]);
	free(r->lits);
	free(r);
}

static void
put(struct buf *b, const char *p, size_t n)
{
	if (buf_append(b, p, n) != 0)
		abort();        /* the buffer has no cap below SIZE_MAX */
}

/* The offsets, ascending, of the marks this replacer wrote into a string. */
struct marks {
	size_t *v;
	size_t n, cap;
};

static void
mark_add(struct marks *m, size_t off)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 8;
		m->v = xrealloc(m->v, m->cap * sizeof *m->v);
	}
	m->v[m->n++] = off;
}

static bool
mark_at(const struct marks *m, size_t off)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid] == off)
			return true;
		if (m->v[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Copies in[from, to) to the end of b, with the marks wholly inside it. */
static void
copy(struct buf *b, struct marks *out, const char *in, const struct marks *old, size_t from, size_t to)
{
	size_t i;

	for (i = 0; i < old->n; i++)
		if (old->v[i] >= from && old->v[i] + MARKLEN <= to)
			mark_add(out, b->len + old->v[i] - from);
	put(b, in + from, to - from);
}

/* Writes a new mark at the end of b. */
static void
new_mark(struct buf *b, struct marks *out, int *changed)
{
	mark_add(out, b->len);
	put(b, MARK, MARKLEN);
	(*changed)++;
}

/* One pattern over s (whose marks are *ms): a new string and *ms updated,
 * or NULL when nothing matched. A value followed by one of our marks is a
 * prefix an earlier row kept; a value that is the mark's text (a PEM body
 * already redacted) is left as it is. */
static char *
one_pattern(const regex_t *re, int tail, const char *s, struct marks *ms, int *changed)
{
	regmatch_t m[4];
	struct buf b;
	struct marks out = { NULL, 0, 0 };
	size_t at = 0;
	int eflags = 0;

	if (regexec(re, s, 4, m, 0) != 0)
		return NULL;
	buf_init(&b, (size_t)-1 / 2);
	do {
		size_t so = at + (size_t)m[0].rm_so, eo = at + (size_t)m[0].rm_eo;
		size_t keep = m[1].rm_so >= 0 ? at + (size_t)m[1].rm_eo : so;
		size_t vend = tail > 0 && m[tail].rm_so >= 0 ? at + (size_t)m[tail].rm_so : eo;

		if (mark_at(ms, vend) || (vend - keep == MARKLEN && memcmp(s + keep, MARK, MARKLEN) == 0)) {
			copy(&b, &out, s, ms, at, eo);
		} else {
			copy(&b, &out, s, ms, at, keep);
			new_mark(&b, &out, changed);
			copy(&b, &out, s, ms, vend, eo);
		}
		if (eo == at)   /* an empty match (no row has one): step over a byte */
			copy(&b, &out, s, ms, at, at + 1);
		at = eo > at ? eo : at + 1;
		eflags = REG_NOTBOL;
	} while (s[at] != '\0' && regexec(re, s + at, 4, m, eflags) == 0);
	copy(&b, &out, s, ms, at, strlen(s));
	free(ms->v);
	*ms = out;
	return buf_take(&b);
}

/* Every literal occurrence of lit in s: a new string and *ms updated, or
 * NULL when none. */
static char *
one_literal(const char *lit, const char *s, struct marks *ms, int *changed)
{
	const char *hit;
	size_t at = 0, n = strlen(lit);
	struct buf b;
	struct marks out = { NULL, 0, 0 };

	if (strstr(s, lit) == NULL)
		return NULL;
	buf_init(&b, (size_t)-1 / 2);
	while ((hit = strstr(s + at, lit)) != NULL) {
		copy(&b, &out, s, ms, at, (size_t)(hit - s));
		new_mark(&b, &out, changed);
		at = (size_t)(hit - s) + n;
	}
	copy(&b, &out, s, ms, at, strlen(s));
	free(ms->v);
	*ms = out;
	return buf_take(&b);
}

char *
redact_text(const struct redact *r, const char *s, int *changed)
{
	char *cur = xstrdup(s), *next;
	struct marks ms = { NULL, 0, 0 };
	int dummy = 0;
	size_t i;

	if (changed == NULL)
		changed = &dummy;
	*changed = 0;
	if (r == NULL)
		return cur;
	/* Literals first: a known secret goes whole, whatever its form. */
	for (i = 0; i < r->nlits; i++)
		if ((next = one_literal(r->lits[i], cur, &ms, changed)) != NULL) {
			free(cur);
			cur = next;
		}
	for (i = 0; i < NPAT; i++)
		if (r->ok[i] && (next = one_pattern(&r->re[i], patterns[i].tail, cur, &ms, changed)) != NULL) {
			free(cur);
			cur = next;
		}
	free(ms.v);
	return cur;
}
