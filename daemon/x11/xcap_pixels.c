/*
 * xcap_pixels.c - pixels out of an XImage: conversion to RGB24 and the
 * area-averaging downscale fused with it (every source pixel contributes by
 * its covered area; separable; only two filtered source rows and one
 * accumulator, never a full-size RGB buffer).
 *
 * Owns: the scaler tables and scratch rows of a struct xcap (ax, ay, hrow,
 * acc, line), grown as needed and kept between grabs.
 * Invariants: weights are 12-bit fixed point (WBITS) and each destination
 * sample's sum to exactly WONE, so a flat colour scales to itself; the
 * intermediate values fit int16/int32 (see the comment above hfilter); the
 * SSE2 and the plain C paths give bit-identical results.
 *
 * Does not: talk to the X server, or encode.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/util.h"
#include "xcap_int.h"

/* Scratch buffer of at least need bytes; contents are not kept. */
static void *
scratch(void *p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return p;
	free(p);
	*cap = need;
	return xmalloc(need);
}

static int
ctz_ul(unsigned long m)
{
	int n = 0;

	if (m == 0)
		return 0;
	while ((m & 1UL) == 0) {
		m >>= 1;
		n++;
	}
	return n;
}

static int
popcount_ul(unsigned long m)
{
	int n = 0;

	for (; m; m &= m - 1)
		n++;
	return n;
}

void
xpx_axis_free(struct axis *a)
{
	free(a->first);
	free(a->w);
}

/* ---- pixel conversion ------------------------------------------------- */

int
xpx_pixfmt_of(const XImage *img, struct pixfmt *pf, struct derr *e)
{
	const unsigned long masks[3] = { img->red_mask, img->green_mask, img->blue_mask };
	int i, k;

	memset(pf, 0, sizeof *pf);
	pf->fast = img->bits_per_pixel == 32 && img->format == ZPixmap;
	for (i = 0; i < 3; i++) {
		if (masks[i] == 0)
			return derr_set(e, DERR_NOT_IMPLEMENTED, NULL,
			    "capture: only TrueColor screens are supported");
		pf->mask[i] = masks[i];
		pf->shift[i] = ctz_ul(masks[i]);
		pf->bits[i] = popcount_ul(masks[i]);
		k = pf->shift[i] / 8;
		if (pf->bits[i] != 8 || pf->shift[i] % 8 != 0 || k > 3)
			pf->fast = false;
		else
			pf->off[i] = img->byte_order == LSBFirst ? k : 3 - k;
	}
	return 0;
}

static unsigned char
channel(unsigned long px, const struct pixfmt *pf, int i)
{
	unsigned long v = (px & pf->mask[i]) >> pf->shift[i];
	unsigned long max;

	if (pf->bits[i] >= 8)
		return (unsigned char)(v >> (pf->bits[i] - 8));
	max = (1UL << pf->bits[i]) - 1;
	return (unsigned char)((v * 255 + max / 2) / max);
}

/* Any pixel format, through XGetPixel: slow, for unusual servers only. */
static void
row_generic(unsigned char *dst, XImage *img, int y, int w, const struct pixfmt *pf)
{
	for (int x = 0; x < w; x++, dst += 3) {
		unsigned long px = XGetPixel(img, x, y);

		dst[0] = channel(px, pf, 0);
		dst[1] = channel(px, pf, 1);
		dst[2] = channel(px, pf, 2);
	}
}

static inline __attribute__((always_inline)) void
row_bytes(unsigned char *restrict dst, const unsigned char *restrict src, int w,
    int ro, int go, int bo)
{
	for (int x = 0; x < w; x++, dst += 3, src += 4) {
		dst[0] = src[ro];
		dst[1] = src[go];
		dst[2] = src[bo];
	}
}

/* Little-endian BGRX (masks 0xff0000/0xff00/0xff), four pixels at a time. */
static void
row_bgrx(unsigned char *restrict dst, const unsigned char *restrict src, int w)
{
	int x = 0;

	for (; x + 4 <= w; x += 4, dst += 12, src += 16) {
		dst[0] = src[2]; dst[1] = src[1]; dst[2] = src[0];
		dst[3] = src[6]; dst[4] = src[5]; dst[5] = src[4];
		dst[6] = src[10]; dst[7] = src[9]; dst[8] = src[8];
		dst[9] = src[14]; dst[10] = src[13]; dst[11] = src[12];
	}
	row_bytes(dst, src, w - x, 2, 1, 0);
}

static void
row_any(unsigned char *dst, const unsigned char *src, int w, const int off[3])
{
	row_bytes(dst, src, w, off[0], off[1], off[2]);
}

static bool
is_bgrx(const struct pixfmt *pf)
{
	return pf->fast && pf->off[0] == 2 && pf->off[1] == 1 && pf->off[2] == 0;
}

void
xpx_convert(XImage *img, const struct pixfmt *pf, unsigned char *out,
    int w, int h)
{
	const unsigned char *src = (const unsigned char *)img->data;
	size_t row = (size_t)w * 3;

	for (int y = 0; y < h; y++, out += row) {
		if (is_bgrx(pf))
			row_bgrx(out, src + (size_t)y * img->bytes_per_line, w);
		else if (pf->fast)
			row_any(out, src + (size_t)y * img->bytes_per_line, w, pf->off);
		else
			row_generic(out, img, y, w, pf);
	}
}

/* ---- area-averaging downscale ----------------------------------------- */

/* Builds (or keeps) the table for src -> dst samples, src > dst >= 1.
 * Destination sample d covers [d*src, (d+1)*src) in units where one source
 * sample is dst wide; each weight is the overlap, rounded cumulatively so
 * the weights of one sample sum to WONE exactly. Every sample then gets
 * exactly `taps` entries (the most any sample needs), padded with zero
 * weights, so the filters run fixed-length loops; near the far edge the
 * padding goes in front instead, so no read passes the last source. */
static void
axis_build(struct axis *a, int src, int dst)
{
	int taps = 1;
	size_t wn;

	if (a->src == src && a->dst == dst)
		return;
	for (int d = 0; d < dst; d++) {
		long long lo = (long long)d * src, hi = lo + src;
		int n = (int)((hi - 1) / dst - lo / dst) + 1;

		if (n > taps)
			taps = n;
	}
	wn = (size_t)dst * (size_t)taps;
	if ((size_t)dst > a->cap) {
		free(a->first);
		a->first = xmalloc((size_t)dst * sizeof *a->first);
		a->cap = (size_t)dst;
	}
	if (wn > a->wcap) {
		free(a->w);
		a->w = xmalloc(wn * sizeof *a->w);
		a->wcap = wn;
	}
	memset(a->w, 0, wn * sizeof *a->w);
	for (int d = 0; d < dst; d++) {
		long long lo = (long long)d * src, hi = lo + src, cum = 0;
		int s0 = (int)(lo / dst), s1 = (int)((hi - 1) / dst), start = s0;
		int16_t *w;
		uint32_t prev = 0;

		if (start + taps > src)
			start = src - taps;
		w = a->w + (size_t)d * (size_t)taps + (size_t)(s0 - start);
		a->first[d] = start;
		for (int s = s0; s <= s1; s++) {
			long long a0 = (long long)s * dst, a1 = a0 + dst;
			uint32_t now;

			cum += (a1 < hi ? a1 : hi) - (a0 > lo ? a0 : lo);
			now = (uint32_t)((cum * WONE + src / 2) / src);
			w[s - s0] = (int16_t)(now - prev);
			prev = now;
		}
	}
	a->taps = taps;
	a->src = src;
	a->dst = dst;
}

/*
 * The arithmetic, identical in the SSE2 and the plain C versions:
 *   horizontal  h = (sum(wx * byte) + 16) >> 5       <= 32640, int16
 *   vertical    v = (sum(wy * h) + 2^18) >> 19       <= 255
 * with 12-bit weights summing to 4096 on each axis, so a flat colour p
 * gives h = 128p and v = p exactly. All four byte lanes of a pixel are
 * filtered (the X lane is dropped at the end), which suits pmaddwd:
 * two taps times four lanes in one instruction.
 */
#define HSHIFT 5
#define VSHIFT (2 * WBITS - HSHIFT)

/* One source row (4-byte pixels): out[4*d + lane]. */
static void
hfilter(int16_t *restrict out, const unsigned char *restrict src, const struct axis *ax)
{
	const int *first = ax->first;
	const int16_t *w = ax->w;
	int n = ax->taps;

#ifdef __SSE2__
	const __m128i zero = _mm_setzero_si128(), round = _mm_set1_epi32(1 << (HSHIFT - 1));

	for (int d = 0; d < ax->dst; d++, out += 4, w += n) {
		const unsigned char *p = src + (size_t)first[d] * 4;
		__m128i acc = zero;
		int t = 0;

		for (; t + 1 < n; t += 2, p += 8) {
			uint64_t two;
			__m128i v, pairs, wv;

			memcpy(&two, p, 8);
			v = _mm_unpacklo_epi8(_mm_cvtsi64_si128((long long)two), zero);
			pairs = _mm_unpacklo_epi16(v, _mm_srli_si128(v, 8));
			wv = _mm_set1_epi32((int)((uint32_t)(uint16_t)w[t] | (uint32_t)w[t + 1] << 16));
			acc = _mm_add_epi32(acc, _mm_madd_epi16(pairs, wv));
		}
		if (t < n) {
			uint32_t one;
			__m128i v;

			memcpy(&one, p, 4);
			v = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)one), zero);
			v = _mm_unpacklo_epi16(v, zero);
			acc = _mm_add_epi32(acc, _mm_madd_epi16(v, _mm_set1_epi32(w[t])));
		}
		acc = _mm_srli_epi32(_mm_add_epi32(acc, round), HSHIFT);
		_mm_storel_epi64((__m128i *)(void *)out, _mm_packs_epi32(acc, acc));
	}
#else
	for (int d = 0; d < ax->dst; d++, out += 4, w += n) {
		const unsigned char *p = src + (size_t)first[d] * 4;
		int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;

		for (int t = 0; t < n; t++, p += 4) {
			a0 += w[t] * p[0];
			a1 += w[t] * p[1];
			a2 += w[t] * p[2];
			a3 += w[t] * p[3];
		}
		out[0] = (int16_t)((a0 + (1 << (HSHIFT - 1))) >> HSHIFT);
		out[1] = (int16_t)((a1 + (1 << (HSHIFT - 1))) >> HSHIFT);
		out[2] = (int16_t)((a2 + (1 << (HSHIFT - 1))) >> HSHIFT);
		out[3] = (int16_t)((a3 + (1 << (HSHIFT - 1))) >> HSHIFT);
	}
#endif
}

/* acc[i] (+)= wa * a[i] + wb * b[i] for i < n (n a multiple of 8). */
static void
vmadd(int32_t *restrict acc, const int16_t *restrict a, const int16_t *restrict b,
    int16_t wa, int16_t wb, size_t n, bool add)
{
#ifdef __SSE2__
	const __m128i wv = _mm_set1_epi32((int)((uint32_t)(uint16_t)wa | (uint32_t)(uint16_t)wb << 16));

	for (size_t i = 0; i < n; i += 8) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
		__m128i lo = _mm_madd_epi16(_mm_unpacklo_epi16(x, y), wv);
		__m128i hi = _mm_madd_epi16(_mm_unpackhi_epi16(x, y), wv);

		if (add) {
			lo = _mm_add_epi32(lo, _mm_loadu_si128((const __m128i *)(void *)(acc + i)));
			hi = _mm_add_epi32(hi, _mm_loadu_si128((const __m128i *)(void *)(acc + i + 4)));
		}
		_mm_storeu_si128((__m128i *)(void *)(acc + i), lo);
		_mm_storeu_si128((__m128i *)(void *)(acc + i + 4), hi);
	}
#else
	for (size_t i = 0; i < n; i++)
		acc[i] = (add ? acc[i] : 0) + wa * a[i] + wb * b[i];
#endif
}

/* px[i] = (acc[i] + 2^18) >> 19 as bytes, n a multiple of 8. */
static void
vfinish(unsigned char *restrict px, const int32_t *restrict acc, size_t n)
{
#ifdef __SSE2__
	const __m128i round = _mm_set1_epi32(1 << (VSHIFT - 1));

	for (size_t i = 0; i < n; i += 8) {
		__m128i lo = _mm_loadu_si128((const __m128i *)(const void *)(acc + i));
		__m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(acc + i + 4));

		lo = _mm_srai_epi32(_mm_add_epi32(lo, round), VSHIFT);
		hi = _mm_srai_epi32(_mm_add_epi32(hi, round), VSHIFT);
		lo = _mm_packs_epi32(lo, hi);
		_mm_storel_epi64((__m128i *)(void *)(px + i), _mm_packus_epi16(lo, lo));
	}
#else
	for (size_t i = 0; i < n; i++) {
		int32_t v = (acc[i] + (1 << (VSHIFT - 1))) >> VSHIFT;

		px[i] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
#endif
}

/* Source row sy, filtered horizontally; the last two are kept, since a
 * source row straddling two destination rows is used by both. */
static const int16_t *
hrow_get(struct xcap *c, XImage *img, const struct pixfmt *pf, int sy)
{
	const unsigned char *src = (const unsigned char *)img->data +
	    (size_t)sy * (size_t)img->bytes_per_line;
	int slot;

	if (c->hrow_y[0] == sy)
		return c->hrow[0];
	if (c->hrow_y[1] == sy)
		return c->hrow[1];
	slot = c->hrow_next;
	c->hrow_next ^= 1;
	if (!pf->fast) {
		/* RGB -> RGBX so the filter sees 4-byte pixels (lanes 0, 1, 2) */
		unsigned char *l = c->line;

		row_generic(l, img, sy, img->width, pf);
		for (int x = img->width - 1; x >= 0; x--) {
			l[4 * x + 3] = 0;
			l[4 * x + 2] = l[3 * x + 2];
			l[4 * x + 1] = l[3 * x + 1];
			l[4 * x] = l[3 * x];
		}
		src = l;
	}
	hfilter(c->hrow[slot], src, &c->ax);
	c->hrow_y[slot] = sy;
	return c->hrow[slot];
}

void
xpx_downscale(struct xcap *c, XImage *img, const struct pixfmt *pf, unsigned char *out,
    int sw, int sh, int dw, int dh)
{
	static const int rgbx[3] = { 0, 1, 2 };
	size_t n = ((size_t)dw * 4 + 7) & ~(size_t)7;   /* lanes, padded to 8 */
	const int *off = pf->fast ? pf->off : rgbx;
	bool bgrx = is_bgrx(pf);

	axis_build(&c->ax, sw, dw);
	axis_build(&c->ay, sh, dh);
	if (n > c->hrow_cap) {
		free(c->hrow[0]);
		free(c->hrow[1]);
		c->hrow[0] = xmalloc(n * sizeof(int16_t));
		c->hrow[1] = xmalloc(n * sizeof(int16_t));
		c->hrow_cap = n;
	}
	/* The padding lanes are computed on but never shown. */
	memset(c->hrow[0] + (size_t)dw * 4, 0, (n - (size_t)dw * 4) * sizeof(int16_t));
	memset(c->hrow[1] + (size_t)dw * 4, 0, (n - (size_t)dw * 4) * sizeof(int16_t));
	c->acc = scratch(c->acc, &c->acc_cap, n * sizeof(int32_t));
	c->line = scratch(c->line, &c->line_cap, pf->fast ? n : ((size_t)sw * 4 > n ? (size_t)sw * 4 : n));
	c->hrow_y[0] = c->hrow_y[1] = -1;
	c->hrow_next = 0;
	for (int dy = 0; dy < dh; dy++, out += (size_t)dw * 3) {
		const int16_t *wy = c->ay.w + (size_t)dy * (size_t)c->ay.taps;
		int s0 = c->ay.first[dy], cnt = c->ay.taps, t = 0;

		for (; t + 1 < cnt; t += 2) {
			const int16_t *a, *b;

			if (wy[t] == 0 && wy[t + 1] == 0 && t > 0)
				continue;
			a = hrow_get(c, img, pf, s0 + t);
			b = hrow_get(c, img, pf, s0 + t + 1);
			vmadd(c->acc, a, b, wy[t], wy[t + 1], n, t > 0);
		}
		if (t < cnt) {
			const int16_t *a = hrow_get(c, img, pf, s0 + t);

			vmadd(c->acc, a, a, wy[t], 0, n, t > 0);
		}
		/* c->line: this row as 4-byte pixels in the source's lane order */
		vfinish(c->line, c->acc, n);
		if (bgrx)
			row_bgrx(out, c->line, dw);
		else
			row_any(out, c->line, dw, off);
	}
}
