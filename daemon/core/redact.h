/*
 * redact.h - secrets out of text before it leaves in a dump or a bundle.
 *
 * One table of patterns (redact.c) for API keys in their common forms
 * (sk-..., sk-ant-..., sk-or-v1-..., AIza..., ghp_/gho_/github_pat_...,
 * xoxb-/xoxp-..., AKIA... and an AWS secret access key, "Bearer ...",
 * "Authorization: Basic ...", the password of scheme://user:pass@host, PEM
 * private key bodies, api_key=..., "api_key": "..." also escaped inside a
 * JSON string, token=..., password=...) plus literal strings the caller
 * adds (the detm token, the configured API keys). A match keeps a short
 * recognisable prefix ("sk-ant-", "Bearer ", "api_key=") and the rest
 * becomes "[REDACTED]", so a reader still sees that a key was there.
 *
 * A struct redact is built once (patterns compiled) and then only read:
 * redact_text may be called from several threads at once. Best effort by
 * nature: a secret in a form no pattern knows passes through, which is why
 * the literal list holds every secret detmd itself knows.
 */
#ifndef DETM_REDACT_H
#define DETM_REDACT_H

#include <stddef.h>

struct redact;

/* Compiles the table; literals (NULL-terminated list, may be NULL; empty
 * strings and strings under 4 bytes are ignored) are copied. Never NULL. */
struct redact *redact_new(const char *const *literals);
void redact_free(struct redact *r);     /* NULL ok */

/* A redacted copy of s (NUL-terminated, malloc'd; never NULL). *changed
 * (may be NULL) counts the secrets replaced. r NULL: a plain copy. */
char *redact_text(const struct redact *r, const char *s, int *changed);

/* The pattern table, for tests and the dump's MANIFEST: name i, or NULL
 * past the end. */
const char *redact_pattern_name(size_t i);

#endif
