/*
 * xcap_encode.c - a captured frame (RGB24) as JPEG (TurboJPEG) or PNG
 * (zlib, our own chunk writer).
 *
 * Owns: per thread one TurboJPEG compressor, made at its first JPEG and
 * destroyed at thread exit through a pthread key.
 * Invariants: every size product is checked before it is allocated; the
 * output buffer is malloc'd and handed to the caller (xcap_image_free).
 *
 * Does not: capture or scale (xcap.c, xcap_pixels.c).
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <turbojpeg.h>
#include <zlib.h>

#include "core/util.h"
#include "xcap.h"
#include "xcap_int.h"

/* ---- JPEG ------------------------------------------------------------- */

static pthread_once_t jpeg_once = PTHREAD_ONCE_INIT;
static pthread_key_t jpeg_key;
static bool jpeg_key_ok;
static _Thread_local tjhandle jpeg_local;   /* also kept in jpeg_key */

static void
jpeg_handle_drop(void *h)
{
	tjDestroy(h);
}

static void
jpeg_key_make(void)
{
	jpeg_key_ok = pthread_key_create(&jpeg_key, jpeg_handle_drop) == 0;
}

/* This thread's compressor. *owned: the caller must tjDestroy it (only if
 * the key could not be created). */
static tjhandle
jpeg_handle(bool *owned)
{
	tjhandle h;

	*owned = false;
	if (jpeg_local != NULL)
		return jpeg_local;
	pthread_once(&jpeg_once, jpeg_key_make);
	h = tjInitCompress();
	if (h == NULL)
		return NULL;
	if (jpeg_key_ok && pthread_setspecific(jpeg_key, h) == 0)
		jpeg_local = h;
	else
		*owned = true;
	return h;
}

int
xenc_jpeg(const struct xcap_frame *f, int quality, struct xcap_image *out,
    struct derr *e)
{
	int subsamp = quality < 90 ? TJSAMP_420 : TJSAMP_444;
	unsigned char *buf = NULL;
	unsigned long bound, len;
	bool owned;
	tjhandle h = jpeg_handle(&owned);
	int rc = -1;

	if (h == NULL)
		return derr_set(e, DERR_INTERNAL, NULL, "jpeg: cannot create a compressor");
	bound = tjBufSize(f->width, f->height, subsamp);
	if (bound == (unsigned long)-1) {
		derr_set(e, DERR_INTERNAL, NULL, "jpeg: image too large");
		goto out;
	}
	buf = xmalloc(bound);
	len = bound;
	if (tjCompress2(h, f->rgb, f->width, f->width * 3, f->height, TJPF_RGB, &buf, &len,
	    subsamp, quality, TJFLAG_FASTDCT | TJFLAG_NOREALLOC) != 0) {
		derr_set(e, DERR_INTERNAL, NULL, "jpeg: %s", tjGetErrorStr2(h));
		goto out;
	}
	out->data = xrealloc(buf, len);
	out->len = len;
	out->mime = "image/jpeg";
	buf = NULL;
	rc = 0;
out:
	free(buf);
	if (owned)
		tjDestroy(h);
	return rc;
}

/* ---- PNG -------------------------------------------------------------- */

struct obuf {
	unsigned char *p;
	size_t len, cap;
};

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void
obuf_reserve(struct obuf *o, size_t more)
{
	if (o->cap - o->len >= more)
		return;
	while (o->cap - o->len < more)
		o->cap = o->cap ? o->cap * 2 : 4096;
	o->p = xrealloc(o->p, o->cap);
}

/* A whole chunk whose data is already in place at o->p + start + 8. */
static void
chunk_close(struct obuf *o, size_t start, const char type[4])
{
	size_t n = o->len - start - 8;

	put32(o->p + start, (uint32_t)n);
	memcpy(o->p + start + 4, type, 4);
	obuf_reserve(o, 4);
	put32(o->p + o->len, (uint32_t)crc32(0L, o->p + start + 4, (uInt)(n + 4)));
	o->len += 4;
}

/* Feeds zs->next_in to deflate, growing o as needed. */
static int
deflate_into(z_stream *zs, struct obuf *o, int flush)
{
	int r;

	for (;;) {
		obuf_reserve(o, 1);
		zs->next_out = o->p + o->len;
		zs->avail_out = (uInt)(o->cap - o->len > UINT_MAX ? UINT_MAX : o->cap - o->len);
		r = deflate(zs, flush);
		o->len = (size_t)(zs->next_out - o->p);
		if (r == Z_STREAM_ERROR)
			return -1;
		if (flush == Z_FINISH ? r == Z_STREAM_END : zs->avail_in == 0 && zs->avail_out != 0)
			return 0;
	}
}

/* The row as PNG scanline: filter byte, then None or Sub, whichever has the
 * smaller sum of absolute (signed) values (libpng's heuristic). */
static void
filter_row(unsigned char *dst, const unsigned char *row, size_t n)
{
	unsigned long none = 0, sub = 0;
	size_t i;

	for (i = 0; i < 3 && i < n; i++) {
		dst[1 + i] = row[i];
		sub += row[i] < 128 ? row[i] : 256u - row[i];
	}
	for (; i < n; i++) {
		unsigned char v = (unsigned char)(row[i] - row[i - 3]);

		dst[1 + i] = v;
		sub += v < 128 ? v : 256u - v;
	}
	for (i = 0; i < n; i++)
		none += row[i] < 128 ? row[i] : 256u - row[i];
	if (none <= sub) {
		dst[0] = 0;
		memcpy(dst + 1, row, n);
	} else {
		dst[0] = 1;
	}
}

int
xenc_png(const struct xcap_frame *f, struct xcap_image *out, struct derr *e)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	size_t rowlen = (size_t)f->width * 3, raw, start;
	struct obuf o = { 0 };
	unsigned char *line = NULL;
	z_stream zs;
	bool zinit = false;
	int rc = -1;

	memset(&zs, 0, sizeof zs);
	if (!mul_ok(rowlen + 1, (size_t)f->height, &raw) || raw > 0x7fffffffUL) {
		derr_set(e, DERR_TOO_LARGE, NULL, "png: image too large");
		goto out;
	}
	if (deflateInit2(&zs, 1, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		derr_set(e, DERR_INTERNAL, NULL, "png: deflateInit failed");
		goto out;
	}
	zinit = true;
	/* deflateBound: one pass almost always fits; deflate_into grows if not. */
	obuf_reserve(&o, 8 + 25 + 12 + deflateBound(&zs, (uLong)raw) + 12);
	memcpy(o.p, sig, 8);
	o.len = 8;
	start = o.len;
	o.len += 8;
	put32(o.p + o.len, (uint32_t)f->width);
	put32(o.p + o.len + 4, (uint32_t)f->height);
	memcpy(o.p + o.len + 8, "\x08\x02\x00\x00\x00", 5); /* 8-bit RGB, no interlace */
	o.len += 13;
	chunk_close(&o, start, "IHDR");
	start = o.len;
	o.len += 8;
	line = xmalloc(rowlen + 1);
	for (int y = 0; y < f->height; y++) {
		filter_row(line, f->rgb + (size_t)y * rowlen, rowlen);
		zs.next_in = line;
		zs.avail_in = (uInt)(rowlen + 1);
		if (deflate_into(&zs, &o, y + 1 == f->height ? Z_FINISH : Z_NO_FLUSH) != 0) {
			derr_set(e, DERR_INTERNAL, NULL, "png: deflate failed");
			goto out;
		}
	}
	if (o.len - start - 8 > 0x7fffffffUL) {
		derr_set(e, DERR_TOO_LARGE, NULL, "png: image too large");
		goto out;
	}
	chunk_close(&o, start, "IDAT");
	start = o.len;
	obuf_reserve(&o, 8);
	o.len += 8;
	chunk_close(&o, start, "IEND");
	out->data = xrealloc(o.p, o.len);
	out->len = o.len;
	out->mime = "image/png";
	o.p = NULL;
	rc = 0;
out:
	if (zinit)
		deflateEnd(&zs);
	free(line);
	free(o.p);
	return rc;
}
