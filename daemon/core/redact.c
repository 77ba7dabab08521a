/*
 * redact.c - the secret patterns and the replacer (redact.h).
 *
 * Patterns are POSIX extended regular expressions; group 1 of each is the
 * prefix kept in front of "[REDACTED]". They run in table order, each over
 * the output of the one before, so more specific forms (sk-ant-) come
 * before general ones (sk-). No value class accepts '[', so "[REDACTED]"
 * is never matched again.
 */
#include "redact.h"

#include <regex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "util.h"

#define MARK "[REDACTED]"

static const struct pattern {
	const char *name;
	const char *re;
	int flags;
} patterns[] = {
	{ "Anthropic key (sk-ant-...)", "(sk-ant-)[A-Za-z0-9_-]{8,}", 0 },
	{ "OpenRouter key (sk-or-v1-...)", "(sk-or-v1-)[A-Za-z0-9_-]{8,}", 0 },
	{ "OpenAI-style key (sk-...)", "(sk-)[A-Za-z0-9_-]{16,}", 0 },
	{ "Google API key (AIza...)", "(AIza)[0-9A-Za-z_-]{30,}", 0 },
	{ "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)", "(gh[pousr]_)[A-Za-z0-9]{20,}", 0 },
	{ "GitHub fine-grained token (github_pat_...)", "(github_pat_)[A-Za-z0-9_]{20,}", 0 },
	{ "Slack token (xoxb-, xoxp-, ...)", "(xox[abposr]-)[A-Za-z0-9-]{10,}", 0 },
	{ "AWS access key id (AKIA..., ASIA...)", "(AKIA|ASIA)[0-9A-Z]{16}", 0 },
	{ "Bearer token", "(bearer[[:space:]]+)[A-Za-z0-9._~+/=-]{6,}", REG_ICASE },
	{ "x-api-key header", "(x-api-key:[[:space:]]*)[^][:space:]\"',;\\[]{4,}", REG_ICASE },
	{ "key=value / \"key\": \"value\" (api_key, token, secret, password, ...)",
	  "((api[_-]?key|apikey|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|"
	  "secret[_-]?key|secret|password|passwd|token)[\"']?[[:space:]]*[:=][[:space:]]*[\"']?)"
	  "[^][\"'[:space:],;&}\\]{4,}", REG_ICASE },
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

/* One pattern over s: a new string, or NULL when nothing matched. */
static char *
one_pattern(const regex_t *re, const char *s, int *changed)
{
	regmatch_t m[2];
	struct buf b;
	const char *p = s;
	int eflags = 0;

	if (regexec(re, p, 2, m, 0) != 0)
		return NULL;
	buf_init(&b, (size_t)-1 / 2);
	do {
		size_t keep = m[1].rm_so >= 0 ? (size_t)m[1].rm_eo : (size_t)m[0].rm_so;

		if (strncmp(p + m[0].rm_eo, MARK, strlen(MARK)) == 0) {
			/* "api_key=sk-or-v1-[REDACTED]": an earlier pattern took the
			 * secret; keep its recognisable prefix. */
			put(&b, p, (size_t)m[0].rm_eo);
		} else {
			put(&b, p, keep);
			put(&b, MARK, strlen(MARK));
			(*changed)++;
		}
		p += m[0].rm_eo > 0 ? (size_t)m[0].rm_eo : 1;
		eflags = REG_NOTBOL;
	} while (*p != '\0' && regexec(re, p, 2, m, eflags) == 0);
	put(&b, p, strlen(p));
	return buf_take(&b);
}

/* Every literal occurrence of lit in s: a new string, or NULL when none. */
static char *
one_literal(const char *lit, const char *s, int *changed)
{
	const char *p = s, *hit;
	size_t n = strlen(lit);
	struct buf b;

	if (strstr(s, lit) == NULL)
		return NULL;
	buf_init(&b, (size_t)-1 / 2);
	while ((hit = strstr(p, lit)) != NULL) {
		put(&b, p, (size_t)(hit - p));
		put(&b, MARK, strlen(MARK));
		(*changed)++;
		p = hit + n;
	}
	put(&b, p, strlen(p));
	return buf_take(&b);
}

char *
redact_text(const struct redact *r, const char *s, int *changed)
{
	char *cur = xstrdup(s), *next;
	int dummy = 0;
	size_t i;

	if (changed == NULL)
		changed = &dummy;
	*changed = 0;
	if (r == NULL)
		return cur;
	/* Literals first: a known secret goes whole, whatever its form. */
	for (i = 0; i < r->nlits; i++)
		if ((next = one_literal(r->lits[i], cur, changed)) != NULL) {
			free(cur);
			cur = next;
		}
	for (i = 0; i < NPAT; i++)
		if (r->ok[i] && (next = one_pattern(&r->re[i], cur, changed)) != NULL) {
			free(cur);
			cur = next;
		}
	return cur;
}
