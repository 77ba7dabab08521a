/*
 * xcap_int.h - what the files of xcap share (not for other modules; xcap.h
 * is the contract): struct xcap, the scaler's tables, how pixels are read
 * out of an XImage, and the functions one file offers the others.
 *
 *   xcap.c         capture: the shared memory segment, where to grab, grab
 *   xcap_pixels.c  pixel conversion and the area-averaging downscale (xpx_*)
 *   xcap_encode.c  JPEG and PNG (xenc_*)
 *
 * A struct xcap is used by one thread at a time (the display lease); the
 * scaler's tables and rows in it belong to xcap_pixels.c.
 */
#ifndef DETM_XCAP_INT_H
#define DETM_XCAP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>

#include "derr.h"
#include "xcap.h"

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

/* a * b into *out unless it overflows size_t. */
static inline bool
mul_ok(size_t a, size_t b, size_t *out)
{
	if (a != 0 && b > SIZE_MAX / a)
		return false;
	*out = a * b;
	return true;
}

/* How img's pixels are read (TrueColor/DirectColor only). 0, or -1 with e. */
int xpx_pixfmt_of(const XImage *img, struct pixfmt *pf, struct derr *e);
/* img (w x h) to RGB24 in out, no scaling. */
void xpx_convert(XImage *img, const struct pixfmt *pf, unsigned char *out,
    int w, int h);
/* img (sw x sh) area-averaged to dw x dh RGB24 in out, with c's scaler
 * tables and scratch rows (dw <= sw, dh <= sh). */
void xpx_downscale(struct xcap *c, XImage *img, const struct pixfmt *pf, unsigned char *out,
    int sw, int sh, int dw, int dh);
/* Frees a scaler table (struct xcap's ax, ay). */
void xpx_axis_free(struct axis *a);
/* f as JPEG (TurboJPEG, this thread's compressor). 0, or -1 with e. */
int xenc_jpeg(const struct xcap_frame *f, int quality, struct xcap_image *out,
    struct derr *e);
/* f as PNG (zlib). 0, or -1 with e. */
int xenc_png(const struct xcap_frame *f, struct xcap_image *out, struct derr *e);

#endif
