/*
 * xcap.c - screen capture (MIT-SHM, XGetImage fallback), area-averaging
 * downscale fused with the pixel conversion, JPEG (TurboJPEG) and PNG (zlib).
 * The capture is here; the pixels (conversion, downscale) are in
 * xcap_pixels.c and the encoders in xcap_encode.c, over xcap_int.h. What
 * follows holds for all three.
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

#include "core/log.h"
#include "xcap.h"
#include "xcap_int.h"
#include "xerr.h"

#define CAP_MAX 16384           /* largest rectangle side, largest max_width */
#define MIN_WIDTH 16            /* smallest max_width */
#define DEFAULT_QUALITY 72
#define XID_MAX 0x1fffffffUL    /* X resource ids have 29 bits */

/* ---- small helpers ---------------------------------------------------- */

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

void
xcap_free(struct xcap *c)
{
	if (c == NULL)
		return;
	segment_drop(c);
	xpx_axis_free(&c->ax);
	xpx_axis_free(&c->ay);
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
	if (q->max_side > 0 && dh > dw && dh > q->max_side) {
		dh = q->max_side;
		dw = (int)(((long long)r[2] * dh + r[3] / 2) / r[3]);
		if (dw < 1)
			dw = 1;
	} else if (q->max_side > 0 && dw > q->max_side) {
		dw = q->max_side;
		dh = (int)(((long long)r[3] * dw + r[2] / 2) / r[2]);
		if (dh < 1)
			dh = 1;
	}
	if (!mul_ok((size_t)dw * 3, (size_t)dh, &need))
		return derr_set(e, DERR_TOO_LARGE, "w", "capture: the image is too large");
	if ((img = fetch(c, r, &own, e)) == NULL)
		goto out;
	if (xpx_pixfmt_of(img, &pf, e) != 0)
		goto out;
	if (f->cap < need || f->rgb == NULL) {
		free(f->rgb);
		f->rgb = xmalloc(need);
		f->cap = need;
	}
	if (dw == r[2] && dh == r[3])
		xpx_convert(img, &pf, f->rgb, dw, dh);
	else
		xpx_downscale(c, img, &pf, f->rgb, r[2], r[3], dw, dh);
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
		return xenc_png(f, out, e);
	return xenc_jpeg(f, quality ? quality : DEFAULT_QUALITY, out, e);
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
