/*
 * xcap.c - screen capture (MIT-SHM, XGetImage fallback), area-averaging
 * downscale fused with the pixel conversion, JPEG (TurboJPEG) and PNG (zlib).
 *
 * Owns: per struct xcap one System V shared memory segment attached on both
 * sides (ours and the X server's) and the XImage describing it, plus the
 * scaler's tables and scratch rows; per thread one TurboJPEG compressor,
 * destroyed at thread exit through a pthread key.
 *
 * Invariants:
 *   - c->img != NULL iff the segment is attached on both sides; it is marked
 *     IPC_RMID as soon as the server has attached, so a crash leaks nothing.
 *   - The segment only grows (to the largest width and height seen so far);
 *     steady-state capture allocates nothing but a larger frame when needed.
 *   - Every rectangle sent to the server lies inside the screen and is at
 *     most CAP_MAX x CAP_MAX; every size product is checked before malloc.
 *   - Scaler weights are 12-bit fixed point and each destination sample's
 *     weights sum to exactly 4096, so a flat colour scales to itself; the
 *     intermediate values fit int16/int32 (see the comment above hfilter).
 *     The SSE2 and the plain C scaler give bit-identical results.
 *
 * Per-grab protocol errors are read with xerr_last() right after the
 * request's own round trip (XGetGeometry, XGetWindowAttributes, XShmGetImage
 * all wait for a reply), which saves the extra XSync of xerr_end; the one
 * request without a reply (XShmAttach) goes through xerr_end.
 *
 * Downscaling is area averaging (every source pixel contributes by its
 * covered area), separable, fused with the BGRX -> RGB conversion: no
 * full-size RGB buffer, only two filtered source rows and one accumulator.
 *
 * Does not: choose the display, find windows by name, draw a cursor, upscale,
 * or support non-TrueColor visuals (DERR_NOT_IMPLEMENTED).
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <turbojpeg.h>
#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "log.h"
#include "util.h"
#include "xcap.h"
#include "xerr.h"

#define CAP_MAX 16384           /* largest rectangle side, largest max_width */
#define MIN_WIDTH 16            /* smallest max_width */
#define DEFAULT_QUALITY 72
#define XID_MAX 0x1fffffffUL    /* X resource ids have 29 bits */
#define WBITS 12
#define WONE (1u << WBITS)      /* scaler weights: fixed point, 1.0 = 4096 */

/* One axis of the area-averaging scaler: destination sample d averages the
 * source samples first[d] .. first[d] + taps - 1 with weights
 * w[d * taps ...], which sum to WONE (zero-padded to taps). */
struct axis {
	int src, dst;           /* the sizes the table was built for (0: none) */
	int taps;               /* the most sources one sample uses */
	int *first;
	int16_t *w;
	size_t cap, wcap;       /* elements allocated in first and in w */
};

struct xcap {
	Display *d;
	Window root;
	Visual *visual;
	int depth;
	bool shm_avail;         /* MIT-SHM present and not failed or disabled */
	bool used_shm;          /* the last successful grab went through SHM */
	XShmSegmentInfo shm;
	XImage *img;            /* describes the segment; NULL when none */
	int seg_w, seg_h;       /* the segment holds seg_w x seg_h pixels */
	struct axis ax, ay;
	int16_t *hrow[2];       /* horizontally filtered source rows (4 per px) */
	int hrow_y[2];          /* their source row, -1 if none */
	int hrow_next;          /* slot the next filtered row goes to */
	size_t hrow_cap;        /* elements in each hrow */
	int32_t *acc;           /* vertical accumulator, one destination row */
	size_t acc_cap;
	unsigned char *line;    /* one row of 4-byte pixels (scaler scratch) */
	size_t line_cap;
};

/* How to read pixels out of an XImage. */
struct pixfmt {
	bool fast;              /* 32 bpp, each channel one whole byte */
	int off[3];             /* byte offsets of R, G, B in a pixel (fast) */
	unsigned long mask[3];  /* otherwise: visual masks, */
	int shift[3], bits[3];  /* their lowest bit and width */
};

/* ---- small helpers ---------------------------------------------------- */

static bool
mul_ok(size_t a, size_t b, size_t *out)
{
	if (a != 0 && b > SIZE_MAX / a)
		return false;
	*out = a * b;
	return true;
}

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

static int
bytes_per_line(const XImage *img, int w)
{
	long bits = (long)w * img->bits_per_pixel;
	long pad = img->bitmap_pad > 0 ? img->bitmap_pad : 32;

	return (int)(((bits + pad - 1) / pad) * (pad / 8));
}

/* ---- the shared memory segment --------------------------------------- */

static void
segment_drop(struct xcap *c)
{
	if (c->img == NULL)
		return;
	if (!xerr_io_dead(c->d))
		XShmDetach(c->d, &c->shm);
	shmdt(c->shm.shmaddr);
	c->img->data = NULL;
	XDestroyImage(c->img);  /* XShm's destroy frees only the struct */
	c->img = NULL;
	c->seg_w = c->seg_h = 0;
}

/* Makes the segment hold at least w x h pixels. 0, or -1 when SHM cannot be
 * used for this rectangle (the caller falls back to XGetImage). */
static int
segment_fit(struct xcap *c, int w, int h)
{
	XImage *img = NULL;
	struct derr e;
	size_t size;
	void *addr = (void *)-1;
	int id = -1, nw, nh, attached, rc = -1;

	if (c->img != NULL && w <= c->seg_w && h <= c->seg_h)
		return 0;
	nw = w > c->seg_w ? w : c->seg_w;
	nh = h > c->seg_h ? h : c->seg_h;
	segment_drop(c);
	memset(&c->shm, 0, sizeof c->shm);
	img = XShmCreateImage(c->d, c->visual, (unsigned)c->depth, ZPixmap, NULL,
	    &c->shm, (unsigned)nw, (unsigned)nh);
	if (img == NULL) {
		log_warn("XShmCreateImage failed; capturing without MIT-SHM");
		c->shm_avail = false;
		goto out;
	}
	if (img->bytes_per_line <= 0 || !mul_ok((size_t)img->bytes_per_line, (size_t)nh, &size))
		goto out;
	id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (id < 0) {
		log_warn("shmget(%zu bytes) failed; using XGetImage for this capture", size);
		goto out;
	}
	addr = shmat(id, NULL, 0);
	if (addr == (void *)-1) {
		log_warn("shmat failed; using XGetImage for this capture");
		goto out;
	}
	c->shm.shmid = id;
	c->shm.shmaddr = img->data = addr;
	c->shm.readOnly = False;
	xerr_begin();
	attached = XShmAttach(c->d, &c->shm);
	if (xerr_end(c->d, &e, "MIT-SHM attach") != 0 || !attached) {
		log_warn("the X server cannot attach our segment; capturing without MIT-SHM");
		c->shm_avail = false;
		goto out;
	}
	shmctl(id, IPC_RMID, NULL);
	id = -1;
	c->img = img;
	img = NULL;
	addr = (void *)-1;
	c->seg_w = nw;
	c->seg_h = nh;
	rc = 0;
out:
	if (addr != (void *)-1)
		shmdt(addr);
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
	if (img != NULL) {
		img->data = NULL;
		XDestroyImage(img);
	}
	return rc;
}

/* ---- public lifetime -------------------------------------------------- */

struct xcap *
xcap_new(Display *d)
{
	struct xcap *c = xcalloc(1, sizeof *c);
	int scr = DefaultScreen(d);

	c->d = d;
	c->root = RootWindow(d, scr);
	c->visual = DefaultVisual(d, scr);
	c->depth = DefaultDepth(d, scr);
	c->shm_avail = XShmQueryExtension(d) == True;
	c->hrow_y[0] = c->hrow_y[1] = -1;
	return c;
}

static void
axis_free(struct axis *a)
{
	free(a->first);
	free(a->w);
}

void
xcap_free(struct xcap *c)
{
	if (c == NULL)
		return;
	segment_drop(c);
	axis_free(&c->ax);
	axis_free(&c->ay);
	free(c->hrow[0]);
	free(c->hrow[1]);
	free(c->acc);
	free(c->line);
	free(c);
}

int
xcap_uses_shm(const struct xcap *c)
{
	return c != NULL && c->used_shm;
}

void
xcap_disable_shm(struct xcap *c)
{
	segment_drop(c);
	c->shm_avail = false;
	c->used_shm = false;
}

void
xcap_frame_free(struct xcap_frame *f)
{
	if (f == NULL)
		return;
	free(f->rgb);
	f->rgb = NULL;
	f->cap = 0;
}

void
xcap_image_free(struct xcap_image *img)
{
	if (img == NULL)
		return;
	free(img->data);
	img->data = NULL;
	img->len = 0;
}

/* ---- where to capture ------------------------------------------------- */

static int
gone_or(struct xcap *c, struct derr *e, enum derr_code code, const char *field,
    const char *msg)
{
	if (xerr_io_dead(c->d))
		return derr_set(e, DERR_UNAVAILABLE, NULL, "capture: the X server is gone");
	return derr_set(e, code, field, "%s", msg);
}

static int
check_req(const struct xcap_req *q, struct derr *e)
{
	if (q->quality < 0 || q->quality > 100)
		return derr_set(e, DERR_INVALID, "quality", "quality must be 1..100 (0: default)");
	if (q->max_width != 0 && (q->max_width < MIN_WIDTH || q->max_width > CAP_MAX))
		return derr_set(e, DERR_INVALID, "max_width", "max_width must be 0 or %d..%d",
		    MIN_WIDTH, CAP_MAX);
	if (q->w < 0 || q->w > CAP_MAX)
		return derr_set(e, DERR_INVALID, "w", "w must be 0..%d", CAP_MAX);
	if (q->h < 0 || q->h > CAP_MAX)
		return derr_set(e, DERR_INVALID, "h", "h must be 0..%d", CAP_MAX);
	return 0;
}

/* Resolves q to a rectangle in root coordinates inside the screen:
 * r = {x, y, w, h}; *sw, *sh = the screen size. */
static int
locate(struct xcap *c, const struct xcap_req *q, int r[4], int *sw, int *sh,
    struct derr *e)
{
	Window root_ret, child;
	XWindowAttributes wa;
	unsigned int gw, gh, border, depth;
	int gx, gy, wx, wy;
	long long bx = 0, by = 0, bw, bh, x0, y0, x1, y1;

	xerr_begin();
	if (!XGetGeometry(c->d, c->root, &root_ret, &gx, &gy, &gw, &gh, &border, &depth) ||
	    xerr_last() != 0)
		return gone_or(c, e, DERR_INTERNAL, NULL, "capture: cannot read the screen size");
	*sw = (int)gw;
	*sh = (int)gh;
	bw = gw;
	bh = gh;
	if (q->window != 0) {
		if (q->window > XID_MAX)
			return derr_set(e, DERR_NOT_FOUND, "window", "capture: no such window");
		xerr_begin();
		if (!XGetWindowAttributes(c->d, (Window)q->window, &wa) || xerr_last() != 0)
			return gone_or(c, e, DERR_NOT_FOUND, "window", "capture: no such window");
		if (wa.map_state != IsViewable || wa.root != c->root)
			return derr_set(e, DERR_NOT_FOUND, "window",
			    "capture: the window is not viewable");
		xerr_begin();
		if (!XTranslateCoordinates(c->d, (Window)q->window, c->root, 0, 0, &wx, &wy,
		    &child) || xerr_last() != 0)
			return gone_or(c, e, DERR_NOT_FOUND, "window", "capture: no such window");
		bx = wx;
		by = wy;
		bw = wa.width;
		bh = wa.height;
	}
	x0 = bx + q->x;
	y0 = by + q->y;
	x1 = q->w ? x0 + q->w : bx + bw;
	y1 = q->h ? y0 + q->h : by + bh;
	/* Clip to the window (or screen), then to the screen. */
	if (x0 < bx)
		x0 = bx;
	if (y0 < by)
		y0 = by;
	if (x1 > bx + bw)
		x1 = bx + bw;
	if (y1 > by + bh)
		y1 = by + bh;
	if (x0 < 0)
		x0 = 0;
	if (y0 < 0)
		y0 = 0;
	if (x1 > *sw)
		x1 = *sw;
	if (y1 > *sh)
		y1 = *sh;
	if (x1 <= x0 || y1 <= y0)
		return derr_set(e, DERR_INVALID, "x", "capture: the region is outside the %s",
		    q->window ? "window's visible part" : "screen");
	if (x1 - x0 > CAP_MAX || y1 - y0 > CAP_MAX)
		return derr_set(e, DERR_TOO_LARGE, x1 - x0 > CAP_MAX ? "w" : "h",
		    "capture: the region is larger than %dx%d", CAP_MAX, CAP_MAX);
	r[0] = (int)x0;
	r[1] = (int)y0;
	r[2] = (int)(x1 - x0);
	r[3] = (int)(y1 - y0);
	return 0;
}

/* Reads the rectangle: the SHM image, or a new XImage that is also stored
 * in *own (the caller destroys it). NULL on error. */
static XImage *
fetch(struct xcap *c, const int r[4], XImage **own, struct derr *e)
{
	XImage *s;

	c->used_shm = false;
	if (c->shm_avail && segment_fit(c, r[2], r[3]) == 0 && (s = c->img) != NULL) {
		s->width = r[2];
		s->height = r[3];
		s->bytes_per_line = bytes_per_line(s, r[2]);
		xerr_begin();
		if (XShmGetImage(c->d, c->root, s, r[0], r[1], AllPlanes) && xerr_last() == 0) {
			c->used_shm = true;
			return s;
		}
		if (xerr_io_dead(c->d)) {
			derr_set(e, DERR_UNAVAILABLE, NULL, "capture: the X server is gone");
			return NULL;
		}
		log_warn("XShmGetImage failed (X error %d); trying XGetImage", xerr_last());
	}
	xerr_begin();
	*own = XGetImage(c->d, c->root, r[0], r[1], (unsigned)r[2], (unsigned)r[3],
	    AllPlanes, ZPixmap);
	if (*own == NULL)
		gone_or(c, e, DERR_INTERNAL, NULL, "capture: the X server refused GetImage");
	return *own;
}

/* ---- pixel conversion ------------------------------------------------- */

static int
pixfmt_of(const XImage *img, struct pixfmt *pf, struct derr *e)
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

static void
convert(XImage *img, const struct pixfmt *pf, unsigned char *out,
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

static void
downscale(struct xcap *c, XImage *img, const struct pixfmt *pf, unsigned char *out,
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

/* ---- grab ------------------------------------------------------------- */

int
xcap_grab(struct xcap *c, const struct xcap_req *q, struct xcap_frame *f,
    struct derr *e)
{
	XImage *img = NULL, *own = NULL;
	struct pixfmt pf;
	size_t need;
	int r[4] = { 0 }, sw = 0, sh = 0, dw, dh, rc = -1;

	if (check_req(q, e) != 0 || locate(c, q, r, &sw, &sh, e) != 0)
		return -1;
	if (c->visual->class != TrueColor && c->visual->class != DirectColor)
		return derr_set(e, DERR_NOT_IMPLEMENTED, NULL,
		    "capture: only TrueColor screens are supported");
	dw = r[2];
	dh = r[3];
	if (q->max_width > 0 && dw > q->max_width) {
		dw = q->max_width;
		dh = (int)(((long long)r[3] * dw + r[2] / 2) / r[2]);
		if (dh < 1)
			dh = 1;
	}
	if (!mul_ok((size_t)dw * 3, (size_t)dh, &need))
		return derr_set(e, DERR_TOO_LARGE, "w", "capture: the image is too large");
	if ((img = fetch(c, r, &own, e)) == NULL)
		goto out;
	if (pixfmt_of(img, &pf, e) != 0)
		goto out;
	if (f->cap < need || f->rgb == NULL) {
		free(f->rgb);
		f->rgb = xmalloc(need);
		f->cap = need;
	}
	if (dw == r[2] && dh == r[3])
		convert(img, &pf, f->rgb, dw, dh);
	else
		downscale(c, img, &pf, f->rgb, r[2], r[3], dw, dh);
	f->width = dw;
	f->height = dh;
	f->src_x = r[0];
	f->src_y = r[1];
	f->src_w = r[2];
	f->src_h = r[3];
	f->screen_w = sw;
	f->screen_h = sh;
	f->scale = (double)r[2] / dw;
	rc = 0;
out:
	if (own != NULL)
		XDestroyImage(own);
	return rc;
}

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

static int
encode_jpeg(const struct xcap_frame *f, int quality, struct xcap_image *out,
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

static int
encode_png(const struct xcap_frame *f, struct xcap_image *out, struct derr *e)
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

/* ---- encode / shot ---------------------------------------------------- */

int
xcap_encode(const struct xcap_frame *f, enum xcap_format fmt, int quality,
    struct xcap_image *out, struct derr *e)
{
	size_t need;

	out->data = NULL;
	out->len = 0;
	out->mime = NULL;
	if (quality < 0 || quality > 100)
		return derr_set(e, DERR_INVALID, "quality", "quality must be 1..100 (0: default)");
	if (fmt != XCAP_JPEG && fmt != XCAP_PNG)
		return derr_set(e, DERR_INVALID, "format", "format must be jpeg or png");
	if (f->rgb == NULL || f->width < 1 || f->height < 1 || f->width > CAP_MAX ||
	    f->height > CAP_MAX || !mul_ok((size_t)f->width * 3, (size_t)f->height, &need) ||
	    need > f->cap)
		return derr_set(e, DERR_INTERNAL, NULL, "encode: not a valid frame");
	if (fmt == XCAP_PNG)
		return encode_png(f, out, e);
	return encode_jpeg(f, quality ? quality : DEFAULT_QUALITY, out, e);
}

int
xcap_shot(struct xcap *c, const struct xcap_req *q, struct xcap_frame *f,
    struct xcap_image *out, struct derr *e)
{
	struct xcap_frame tmp = { 0 };
	struct xcap_frame *use = f ? f : &tmp;
	int rc = -1;

	out->data = NULL;
	out->len = 0;
	out->mime = NULL;
	if (q->format != XCAP_JPEG && q->format != XCAP_PNG) {
		derr_set(e, DERR_INVALID, "format", "format must be jpeg or png");
		goto out;
	}
	if (xcap_grab(c, q, use, e) != 0)
		goto out;
	if (xcap_encode(use, q->format, q->quality, out, e) != 0)
		goto out;
	rc = 0;
out:
	xcap_frame_free(&tmp);
	return rc;
}
