/*
 * buf.h - a growable byte buffer with a ceiling (curl's dynbuf).
 *
 * Every buffer whose size depends on input is a struct buf with a cap: a
 * request body, a JSON reply, a log line. Appending past the cap fails and
 * leaves the contents unchanged, so callers can answer 413 cleanly. The data
 * is always NUL-terminated (the NUL is not counted in len or against cap).
 */
#ifndef DETM_BUF_H
#define DETM_BUF_H

#include <stddef.h>

#include "util.h"

struct buf {
	char *data;     /* NULL until the first append */
	size_t len;
	size_t alloc;
	size_t cap;     /* the most len may ever be */
};

void buf_init(struct buf *b, size_t cap);
/* Returns 0, or -1 if len + n would exceed cap (nothing is appended). */
int buf_append(struct buf *b, const void *p, size_t n) DETM_NODISCARD;
/* Frees the data; the buffer can be reused after buf_init. NULL-safe. */
void buf_free(struct buf *b);
/* Hands the data to the caller (who frees it) and empties the buffer. */
char *buf_take(struct buf *b);

#endif
