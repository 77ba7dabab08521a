/* buf.c - see buf.h. */
#include "buf.h"

#include <stdlib.h>
#include <string.h>

void
buf_init(struct buf *b, size_t cap)
{
	b->data = NULL;
	b->len = b->alloc = 0;
	b->cap = cap;
}

int
buf_append(struct buf *b, const void *p, size_t n)
{
	size_t want;

	if (n > b->cap || b->len > b->cap - n)
		return -1;
	want = b->len + n + 1;
	if (want > b->alloc) {
		size_t a = b->alloc ? b->alloc : 256;

		while (a < want)
			a *= 2;
		b->data = xrealloc(b->data, a);
		b->alloc = a;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

void
buf_free(struct buf *b)
{
	if (b == NULL)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
}

char *
buf_take(struct buf *b)
{
	char *p = b->data ? b->data : xstrdup("");

	b->data = NULL;
	b->len = b->alloc = 0;
	return p;
}
