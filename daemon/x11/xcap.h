/*
 * xcap.h - screen capture through MIT-SHM, fast downscaling, JPEG (TurboJPEG)
 * and PNG (zlib) encoding.
 *
 * A struct xcap belongs to one Display connection and is used under the
 * same rule (one thread at a time, see display.h). It keeps one shared
 * memory segment, grown on demand, so steady-state capture allocates
 * nothing; without MIT-SHM (or if the segment cannot be attached) it falls
 * back to XGetImage.
 *
 * Two steps, so the wait engine and the recorder can use pixels without
 * encoding: xcap_grab fills a frame (RGB, 3 bytes per pixel, already
 * scaled to max_width), xcap_encode turns a frame into JPEG or PNG bytes.
 * xcap_shot does both.
 *
 * Does not: choose the display or find windows by name; the cursor is drawn
 * only when asked (xcap_cursor_draw).
 */
#ifndef DETM_XCAP_H
#define DETM_XCAP_H

#include <stddef.h>

#include <X11/Xlib.h>

#include "core/util.h"
#include "derr.h"

struct xcap;

/* Never NULL. Must be freed (xcap_free) before XCloseDisplay(d). */
struct xcap *xcap_new(Display *d);
void xcap_free(struct xcap *c);   /* NULL ok */

enum xcap_format { XCAP_JPEG = 0, XCAP_PNG = 1 };

struct xcap_req {
	unsigned long window;   /* 0: the root window (whole screen) */
	int x, y, w, h;         /* region inside the window/screen; w or h 0 = all */
	int max_width;          /* 0: no limit; else downscale (keeping aspect) */
	int max_side;           /* 0: no limit; else the longer side at most this */
	int quality;            /* JPEG quality 1..100 (0: 72) */
	enum xcap_format format;
};

/* Pixels: RGB24, rows packed (stride = width * 3). */
struct xcap_frame {
	unsigned char *rgb;     /* owned by the frame */
	size_t cap;             /* allocated bytes (frames are reused) */
	int width, height;      /* image size after scaling */
	int src_x, src_y;       /* captured rectangle, root coordinates */
	int src_w, src_h;
	int screen_w, screen_h; /* the whole screen */
	double scale;           /* src_w / width (>= 1): image px * scale = screen px */
};

struct xcap_image {
	unsigned char *data;    /* malloc'd; free with xcap_image_free */
	size_t len;
	const char *mime;       /* "image/jpeg" or "image/png" (static) */
};

/* Captures q's rectangle into f (reusing f->rgb when large enough).
 * A region partly off screen is clipped; wholly off screen is DERR_INVALID
 * field "x"; an unknown or unmapped window DERR_NOT_FOUND field "window". */
int xcap_grab(struct xcap *c, const struct xcap_req *q, struct xcap_frame *f,
    struct derr *e);
/* Encodes f. quality as in xcap_req. */
int xcap_encode(const struct xcap_frame *f, enum xcap_format fmt, int quality,
    struct xcap_image *out, struct derr *e);
/* grab + encode; f may be NULL (a temporary frame is used). */
int xcap_shot(struct xcap *c, const struct xcap_req *q, struct xcap_frame *f,
    struct xcap_image *out, struct derr *e);

/* 1 if the last successful xcap_grab on c went through MIT-SHM, else 0
 * (tests and benchmarks use it; the daemon does not need to). */
int xcap_uses_shm(const struct xcap *c);
/* Detaches the segment and uses XGetImage from now on (tests, benchmarks). */
void xcap_disable_shm(struct xcap *c);

/* Blends the pointer's current image (XFixes) into f, a grab of d's
 * screen, where the pointer is (xcap_cursor.c). 0, or -1 when d has no
 * XFixes or no cursor image (f unchanged). */
int xcap_cursor_draw(Display *d, struct xcap_frame *f);

void xcap_frame_free(struct xcap_frame *f);   /* frees f->rgb; NULL ok */
void xcap_image_free(struct xcap_image *img); /* NULL ok */

#endif
