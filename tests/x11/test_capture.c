/*
 * test_capture.c - xcap against real Xvfb servers: known pixels from our own
 * windows (full screen, regions, windows, downscaled with the scale mapped
 * back), JPEG and PNG decoded back (TurboJPEG, zlib, ImageMagick), real
 * clients (xlogo, xterm), the MIT-SHM path and the XGetImage fallback.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <turbojpeg.h>
#include <zlib.h>

#include "derr.h"
#include "x11/xcap.h"
#include "xh.h"

struct rgb {
	int r, g, b;
};

static const struct rgb BG = { 0x10, 0x20, 0x30 };
static const struct rgb WIN = { 0x33, 0x66, 0xcc };

static unsigned long
pixel_of(Display *d, struct rgb c)
{
	Visual *v = DefaultVisual(d, DefaultScreen(d));
	unsigned long px = 0;
	const unsigned long masks[3] = { v->red_mask, v->green_mask, v->blue_mask };
	const int vals[3] = { c.r, c.g, c.b };

	for (int i = 0; i < 3; i++) {
		int shift = 0;

		while (shift < 32 && !((masks[i] >> shift) & 1))
			shift++;
		px |= ((unsigned long)vals[i] << shift) & masks[i];
	}
	return px;
}

static void
root_fill(Display *d, struct rgb c)
{
	XSetWindowBackground(d, DefaultRootWindow(d), pixel_of(d, c));
	XClearWindow(d, DefaultRootWindow(d));
	XSync(d, False);
}

static bool
viewable(Display *d, Window w)
{
	XWindowAttributes wa;

	for (int i = 0; i < 100; i++) {
		if (XGetWindowAttributes(d, w, &wa) && wa.map_state == IsViewable)
			return true;
		xh_sleep_ms(10);
	}
	return false;
}

/* A borderless solid window at (x, y), mapped and painted. */
static Window
solid(Display *d, Window parent, int x, int y, int w, int h, struct rgb c)
{
	XSetWindowAttributes a = { 0 };
	Window win;

	a.background_pixel = pixel_of(d, c);
	a.override_redirect = True;
	win = XCreateWindow(d, parent, x, y, (unsigned)w, (unsigned)h, 0, CopyFromParent,
	    InputOutput, CopyFromParent, CWBackPixel | CWOverrideRedirect, &a);
	XMapWindow(d, win);
	XSync(d, False);
	CHECK(viewable(d, win));
	return win;
}

/* xh_spawn with string literals (-Wwrite-strings). */
static pid_t
spawn(const struct xh_server *s, const char *const argv[])
{
	char *v[16];
	size_t n = 0;
	pid_t p;

	for (; argv[n] != NULL && n < 15; n++)
		v[n] = strdup(argv[n]);
	v[n] = NULL;
	p = xh_spawn(s, v);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	return p;
}

static struct rgb
at(const struct xcap_frame *f, int x, int y)
{
	const unsigned char *p = f->rgb + ((size_t)y * (size_t)f->width + (size_t)x) * 3;

	return (struct rgb){ p[0], p[1], p[2] };
}

static bool
same(struct rgb a, struct rgb b)
{
	return a.r == b.r && a.g == b.g && a.b == b.b;
}

static bool
near(struct rgb a, struct rgb b, int tol)
{
	return abs(a.r - b.r) <= tol && abs(a.g - b.g) <= tol && abs(a.b - b.b) <= tol;
}

/* Pixels of f (inside [x0,x1) x [y0,y1)) that are not exactly c. */
static long
count_not(const struct xcap_frame *f, int x0, int y0, int x1, int y1, struct rgb c)
{
	long n = 0;

	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++)
			n += !same(at(f, x, y), c);
	return n;
}

static int
grab(struct xcap *c, struct xcap_frame *f, unsigned long win, int x, int y, int w, int h,
    int max_width, struct derr *e)
{
	struct xcap_req q = { 0 };

	q.window = win;
	q.x = x;
	q.y = y;
	q.w = w;
	q.h = h;
	q.max_width = max_width;
	derr_clear(e);
	return xcap_grab(c, &q, f, e);
}

/* ---- full screen at scale 1 ------------------------------------------- */

static void
capture_full_screen_pixels(void)
{
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct derr e;

	if (xh_server_start(&s, 640, 480) != 0) {
		CHECK(!"Xvfb");
		return;
	}
	root_fill(s.d, BG);
	solid(s.d, DefaultRootWindow(s.d), 100, 50, 200, 120, WIN);
	c = xcap_new(s.d);
	CHECK(grab(c, &f, 0, 0, 0, 0, 0, 0, &e) == 0);
	CHECK(xcap_uses_shm(c) == 1);
	CHECK(f.width == 640 && f.height == 480 && f.scale == 1.0);
	CHECK(f.src_x == 0 && f.src_y == 0 && f.src_w == 640 && f.src_h == 480);
	CHECK(f.screen_w == 640 && f.screen_h == 480);
	if (f.width == 640 && f.height == 480) {
		CHECK(same(at(&f, 150, 100), WIN));
		CHECK(same(at(&f, 100, 50), WIN));     /* the window's corners */
		CHECK(same(at(&f, 299, 169), WIN));
		CHECK(same(at(&f, 99, 50), BG));       /* just outside */
		CHECK(same(at(&f, 300, 169), BG));
		CHECK(same(at(&f, 299, 170), BG));
		CHECK(same(at(&f, 5, 5), BG));
		CHECK(count_not(&f, 100, 50, 300, 170, WIN) == 0);
		CHECK(count_not(&f, 0, 0, 640, 50, BG) == 0);
		CHECK(count_not(&f, 0, 170, 640, 480, BG) == 0);
		CHECK(count_not(&f, 0, 50, 100, 170, BG) == 0);
		CHECK(count_not(&f, 300, 50, 640, 170, BG) == 0);
	}
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
}

/* ---- downscaled: the window comes back through f.scale ---------------- */

/* Bounding box of pixels left of column xmax closer to c than to BG and
 * to white. */
static void
bbox(const struct xcap_frame *f, struct rgb c, int xmax, int b[4])
{
	b[0] = b[1] = 1 << 30;
	b[2] = b[3] = -1;
	for (int y = 0; y < f->height; y++)
		for (int x = 0; x < f->width && x < xmax; x++) {
			struct rgb p = at(f, x, y);
			int dc = abs(p.r - c.r) + abs(p.g - c.g) + abs(p.b - c.b);
			int db = abs(p.r - BG.r) + abs(p.g - BG.g) + abs(p.b - BG.b);
			int dw = 3 * 255 - p.r - p.g - p.b;

			if (dc < db && dc < dw) {
				if (x < b[0]) b[0] = x;
				if (y < b[1]) b[1] = y;
				if (x > b[2]) b[2] = x;
				if (y > b[3]) b[3] = y;
			}
		}
}

static bool
within1(double got, double want)
{
	return got >= want - 1.0 && got <= want + 1.0;
}

static void
capture_scaled_maps_back(void)
{
	static const struct rgb RED = { 0xe0, 0x40, 0x20 }, WHITE = { 255, 255, 255 };
	static const int widths[] = { 1280, 960, 500, 16 };
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct derr e;

	if (xh_server_start(&s, 1920, 1080) != 0) {
		CHECK(!"Xvfb");
		return;
	}
	root_fill(s.d, BG);
	solid(s.d, DefaultRootWindow(s.d), 301, 207, 400, 300, RED);
	solid(s.d, DefaultRootWindow(s.d), 1001, 600, 1, 200, WHITE);   /* a 1 px line */
	c = xcap_new(s.d);
	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		int mw = widths[i], b[4];
		double sc = 1920.0 / mw;

		CHECK(grab(c, &f, 0, 0, 0, 0, 0, mw, &e) == 0);
		CHECK(f.width == mw);
		CHECK(f.height == (int)((1080LL * mw + 960) / 1920));
		CHECK(f.scale == sc);
		CHECK(f.src_w == 1920 && f.src_h == 1080);
		if (f.width != mw || mw < 100)
			continue;
		/* The window rectangle, mapped through scale, lands where it is. */
		bbox(&f, RED, (int)(900 / sc), b);   /* left of the line */
		if (getenv("XCAP_TEST_VERBOSE"))
			fprintf(stderr, "    mw %d scale %.4f bbox %d,%d..%d,%d\n", mw, f.scale,
			    b[0], b[1], b[2], b[3]);
		CHECK(within1(b[0], 301 / f.scale));
		CHECK(within1(b[1], 207 / f.scale));
		CHECK(within1(b[2] + 1, 701 / f.scale));
		CHECK(within1(b[3] + 1, 507 / f.scale));
		/* Flat areas keep their exact colour. */
		CHECK(same(at(&f, (int)(500 / sc), (int)(350 / sc)), RED));
		CHECK(same(at(&f, 2, 2), BG));
		CHECK(same(at(&f, f.width - 1, f.height - 1), BG));
		if (mw == 960) {
			/* Area averaging: the 1 px line at x=1001 is half of column
			 * 500 (screen 1000..1001); nearest neighbour would drop it
			 * or keep it whole. */
			struct rgb p = at(&f, 500, 350);

			CHECK(abs(p.r - (255 + BG.r) / 2) <= 1);
			CHECK(abs(p.b - (255 + BG.b) / 2) <= 1);
			CHECK(same(at(&f, 499, 350), BG) && same(at(&f, 501, 350), BG));
		}
		if (mw == 1280) {
			/* Column 667 covers screen 1000.5..1002: 2/3 line. */
			struct rgb p = at(&f, 667, 466);

			CHECK(abs(p.r - (2 * 255 + BG.r) / 3) <= 1);
		}
	}
	/* Height is derived too: a tall region scaled keeps its aspect. */
	CHECK(grab(c, &f, 0, 0, 0, 100, 1000, 50, &e) == 0);
	CHECK(f.width == 50 && f.height == 500 && f.scale == 2.0);
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
}

/* ---- regions, windows, errors ----------------------------------------- */

static void
capture_region(void)
{
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct derr e;

	if (xh_server_start(&s, 640, 480) != 0) {
		CHECK(!"Xvfb");
		return;
	}
	root_fill(s.d, BG);
	solid(s.d, DefaultRootWindow(s.d), 100, 50, 200, 120, WIN);
	c = xcap_new(s.d);
	/* Small first, so the segment has to grow later. */
	CHECK(grab(c, &f, 0, 120, 60, 50, 40, 0, &e) == 0);
	CHECK(xcap_uses_shm(c) == 1);
	CHECK(f.width == 50 && f.height == 40 && f.src_x == 120 && f.src_y == 60);
	CHECK(f.width == 50 && count_not(&f, 0, 0, 50, 40, WIN) == 0);
	/* Straddling the window's corner. */
	CHECK(grab(c, &f, 0, 90, 40, 20, 20, 0, &e) == 0);
	CHECK(f.width == 20 && f.height == 20);
	CHECK(f.width == 20 && same(at(&f, 9, 9), BG) && same(at(&f, 10, 10), WIN));
	/* Full screen after a small grab: the segment grew. */
	CHECK(grab(c, &f, 0, 0, 0, 0, 0, 0, &e) == 0);
	CHECK(f.width == 640 && f.height == 480 && xcap_uses_shm(c) == 1);
	CHECK(f.width == 640 && same(at(&f, 150, 100), WIN) && same(at(&f, 50, 50), BG));
	/* Partly off screen: clipped. */
	CHECK(grab(c, &f, 0, 600, 440, 100, 100, 0, &e) == 0);
	CHECK(f.width == 40 && f.height == 40 && f.src_x == 600 && f.src_y == 440);
	CHECK(grab(c, &f, 0, -10, -5, 20, 20, 0, &e) == 0);
	CHECK(f.width == 10 && f.height == 15 && f.src_x == 0 && f.src_y == 0);
	/* w, h 0: to the edge. */
	CHECK(grab(c, &f, 0, 600, 0, 0, 0, 0, &e) == 0);
	CHECK(f.width == 40 && f.height == 480);
	/* Wholly off screen. */
	CHECK(grab(c, &f, 0, 1000, 0, 10, 10, 0, &e) == -1);
	CHECK(e.code == DERR_INVALID && strcmp(e.field, "x") == 0);
	CHECK(grab(c, &f, 0, 0, 480, 10, 10, 0, &e) == -1);
	CHECK(e.code == DERR_INVALID && strcmp(e.field, "x") == 0);
	CHECK(grab(c, &f, 0, -50, -50, 50, 50, 0, &e) == -1);
	CHECK(e.code == DERR_INVALID && strcmp(e.field, "x") == 0);
	/* The frame survives a failed grab. */
	CHECK(f.rgb != NULL && f.width == 40);
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
}

static void
capture_window(void)
{
	static const struct rgb KID = { 0xf0, 0xf0, 0x10 };
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct derr e;
	Window w, kid, edge, hidden, dead;

	if (xh_server_start(&s, 640, 480) != 0) {
		CHECK(!"Xvfb");
		return;
	}
	root_fill(s.d, BG);
	w = solid(s.d, DefaultRootWindow(s.d), 100, 50, 200, 120, WIN);
	kid = solid(s.d, w, 20, 30, 40, 10, KID);
	edge = solid(s.d, DefaultRootWindow(s.d), 600, 400, 100, 100, WIN);
	c = xcap_new(s.d);
	CHECK(grab(c, &f, w, 0, 0, 0, 0, 0, &e) == 0);
	CHECK(f.width == 200 && f.height == 120 && f.src_x == 100 && f.src_y == 50);
	if (f.width == 200 && f.height == 120) {
		CHECK(count_not(&f, 0, 0, 200, 30, WIN) == 0);
		CHECK(count_not(&f, 20, 30, 60, 40, KID) == 0);
		CHECK(same(at(&f, 19, 30), WIN) && same(at(&f, 199, 119), WIN));
	}
	/* The child, in root coordinates. */
	CHECK(grab(c, &f, kid, 0, 0, 0, 0, 0, &e) == 0);
	CHECK(f.width == 40 && f.height == 10 && f.src_x == 120 && f.src_y == 80);
	CHECK(f.width == 40 && count_not(&f, 0, 0, 40, 10, KID) == 0);
	/* A region of the window, relative to it. */
	CHECK(grab(c, &f, w, 10, 10, 20, 20, 0, &e) == 0);
	CHECK(f.width == 20 && f.height == 20 && f.src_x == 110 && f.src_y == 60);
	/* Region larger than the window: clipped to it. */
	CHECK(grab(c, &f, w, 150, 100, 500, 500, 0, &e) == 0);
	CHECK(f.width == 50 && f.height == 20 && f.src_x == 250 && f.src_y == 150);
	/* Region outside the window. */
	CHECK(grab(c, &f, w, 300, 0, 10, 10, 0, &e) == -1);
	CHECK(e.code == DERR_INVALID && strcmp(e.field, "x") == 0);
	/* Partly off screen: clipped to the screen. */
	CHECK(grab(c, &f, edge, 0, 0, 0, 0, 0, &e) == 0);
	CHECK(f.width == 40 && f.height == 80 && f.src_x == 600 && f.src_y == 400);
	/* Unmapped, destroyed, nonsense ids. */
	hidden = XCreateSimpleWindow(s.d, DefaultRootWindow(s.d), 0, 0, 10, 10, 0, 0, 0);
	dead = XCreateSimpleWindow(s.d, DefaultRootWindow(s.d), 0, 0, 10, 10, 0, 0, 0);
	XDestroyWindow(s.d, dead);
	XSync(s.d, False);
	CHECK(grab(c, &f, hidden, 0, 0, 0, 0, 0, &e) == -1);
	CHECK(e.code == DERR_NOT_FOUND && strcmp(e.field, "window") == 0);
	CHECK(grab(c, &f, dead, 0, 0, 0, 0, 0, &e) == -1);
	CHECK(e.code == DERR_NOT_FOUND && strcmp(e.field, "window") == 0);
	CHECK(grab(c, &f, 0xfffffffful, 0, 0, 0, 0, 0, &e) == -1);
	CHECK(e.code == DERR_NOT_FOUND && strcmp(e.field, "window") == 0);
	/* The connection is still fine afterwards. */
	CHECK(grab(c, &f, w, 0, 0, 0, 0, 0, &e) == 0 && f.width == 200);
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
}

static void
capture_validation(void)
{
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct xcap_image img = { 0 };
	struct xcap_req q = { 0 };
	struct derr e;

	if (xh_server_start(&s, 640, 480) != 0) {
		CHECK(!"Xvfb");
		return;
	}
	c = xcap_new(s.d);
	q.quality = 101;
	CHECK(xcap_grab(c, &q, &f, &e) == -1 && e.code == DERR_INVALID &&
	    strcmp(e.field, "quality") == 0);
	q.quality = -1;
	CHECK(xcap_grab(c, &q, &f, &e) == -1 && strcmp(e.field, "quality") == 0);
	q.quality = 0;
	q.max_width = 15;
	CHECK(xcap_grab(c, &q, &f, &e) == -1 && e.code == DERR_INVALID &&
	    strcmp(e.field, "max_width") == 0);
	q.max_width = 16385;
	CHECK(xcap_grab(c, &q, &f, &e) == -1 && strcmp(e.field, "max_width") == 0);
	q.max_width = -5;
	CHECK(xcap_grab(c, &q, &f, &e) == -1 && strcmp(e.field, "max_width") == 0);
	q.max_width = 16;
	CHECK(xcap_grab(c, &q, &f, &e) == 0 && f.width == 16 && f.height == 12);
	q.max_width = 0;
	q.w = -1;
	CHECK(xcap_grab(c, &q, &f, &e) == -1 && strcmp(e.field, "w") == 0);
	q.w = 16385;
	CHECK(xcap_grab(c, &q, &f, &e) == -1 && strcmp(e.field, "w") == 0);
	q.w = 0;
	q.h = -3;
	CHECK(xcap_grab(c, &q, &f, &e) == -1 && strcmp(e.field, "h") == 0);
	q.h = 0;
	q.x = 2147483647;
	q.y = 2147483647;
	q.w = 16384;
	CHECK(xcap_grab(c, &q, &f, &e) == -1 && strcmp(e.field, "x") == 0);
	q.x = -2147483647 - 1;
	CHECK(xcap_grab(c, &q, &f, &e) == -1 && strcmp(e.field, "x") == 0);
	memset(&q, 0, sizeof q);
	q.format = (enum xcap_format)7;
	CHECK(xcap_shot(c, &q, NULL, &img, &e) == -1 && strcmp(e.field, "format") == 0);
	CHECK(img.data == NULL);
	q.format = XCAP_JPEG;
	q.quality = 200;
	CHECK(xcap_shot(c, &q, NULL, &img, &e) == -1 && strcmp(e.field, "quality") == 0);
	CHECK(xcap_grab(c, &(struct xcap_req){ 0 }, &f, &e) == 0);
	CHECK(xcap_encode(&f, XCAP_JPEG, 101, &img, &e) == -1 && strcmp(e.field, "quality") == 0);
	CHECK(xcap_encode(&f, (enum xcap_format)3, 0, &img, &e) == -1 &&
	    strcmp(e.field, "format") == 0);
	/* Destructors accept NULL and empty values. */
	xcap_image_free(NULL);
	xcap_image_free(&img);
	xcap_frame_free(NULL);
	xcap_free(NULL);
	xcap_frame_free(&f);
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
}

/* ---- JPEG ------------------------------------------------------------- */

static void
capture_jpeg(void)
{
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct xcap_image img = { 0 };
	struct xcap_req q = { 0 };
	struct derr e;
	tjhandle dec = tjInitDecompress();

	if (xh_server_start(&s, 640, 480) != 0) {
		CHECK(!"Xvfb");
		tjDestroy(dec);
		return;
	}
	root_fill(s.d, BG);
	solid(s.d, DefaultRootWindow(s.d), 100, 50, 200, 120, WIN);
	c = xcap_new(s.d);
	struct {
		int quality, max_width, w, h, subsamp;
	} cases[] = {
		{ 0, 0, 640, 480, TJSAMP_420 },
		{ 95, 0, 640, 480, TJSAMP_444 },
		{ 50, 320, 320, 240, TJSAMP_420 },
		{ 90, 333, 333, 250, TJSAMP_444 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int w = 0, h = 0, sub = -1, cs = -1;
		unsigned char *px;
		double sc;

		q.quality = cases[i].quality;
		q.max_width = cases[i].max_width;
		q.format = XCAP_JPEG;
		CHECK(xcap_shot(c, &q, &f, &img, &e) == 0);
		if (img.data == NULL)
			continue;
		CHECK(strcmp(img.mime, "image/jpeg") == 0);
		CHECK(img.len > 4 && img.data[0] == 0xff && img.data[1] == 0xd8);
		CHECK(img.data[img.len - 2] == 0xff && img.data[img.len - 1] == 0xd9);
		CHECK(tjDecompressHeader3(dec, img.data, img.len, &w, &h, &sub, &cs) == 0);
		CHECK(w == cases[i].w && h == cases[i].h && sub == cases[i].subsamp);
		px = malloc((size_t)w * (size_t)h * 3);
		CHECK(tjDecompress2(dec, img.data, img.len, px, w, 0, h, TJPF_RGB, 0) == 0);
		sc = 640.0 / w;
		{
			const unsigned char *p = px + ((size_t)(100 / sc) * (size_t)w + (size_t)(200 / sc)) * 3;
			const unsigned char *o = px + ((size_t)(400 / sc) * (size_t)w + (size_t)(500 / sc)) * 3;

			CHECK(near((struct rgb){ p[0], p[1], p[2] }, WIN, 8));
			CHECK(near((struct rgb){ o[0], o[1], o[2] }, BG, 8));
		}
		free(px);
		xcap_image_free(&img);
	}
	/* f NULL: a temporary frame. */
	q.quality = 0;
	q.max_width = 0;
	CHECK(xcap_shot(c, &q, NULL, &img, &e) == 0 && img.len > 100);
	xcap_image_free(&img);
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
	tjDestroy(dec);
}

/* ---- PNG -------------------------------------------------------------- */

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int
paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Our own PNG reader (8-bit RGB, non-interlaced): RGB pixels or NULL. */
static unsigned char *
png_read(const unsigned char *p, size_t len, int *w, int *h)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	unsigned char *z = NULL, *raw = NULL, *out = NULL;
	size_t zlen = 0, off = 8, rowlen, rawlen;
	uLongf got;
	bool end = false;

	if (len < 8 || memcmp(p, sig, 8) != 0)
		return NULL;
	*w = *h = 0;
	while (off + 12 <= len && !end) {
		uint32_t n = be32(p + off);
		const unsigned char *type = p + off + 4, *data = p + off + 8;

		if (off + 12 + n > len)
			goto fail;
		if (crc32(0L, type, n + 4) != be32(data + n))
			goto fail;
		if (memcmp(type, "IHDR", 4) == 0) {
			if (n != 13 || data[8] != 8 || data[9] != 2 || data[12] != 0)
				goto fail;
			*w = (int)be32(data);
			*h = (int)be32(data + 4);
		} else if (memcmp(type, "IDAT", 4) == 0) {
			z = realloc(z, zlen + n);
			memcpy(z + zlen, data, n);
			zlen += n;
		} else if (memcmp(type, "IEND", 4) == 0) {
			end = true;
		}
		off += 12 + n;
	}
	if (!end || off != len || *w <= 0 || *h <= 0)
		goto fail;
	rowlen = (size_t)*w * 3;
	rawlen = (rowlen + 1) * (size_t)*h;
	raw = malloc(rawlen + 1);
	got = rawlen + 1;
	if (uncompress(raw, &got, z, zlen) != Z_OK || got != rawlen)
		goto fail;
	out = malloc(rowlen * (size_t)*h);
	for (int y = 0; y < *h; y++) {
		const unsigned char *in = raw + (rowlen + 1) * (size_t)y + 1;
		unsigned char *row = out + rowlen * (size_t)y, *up = y ? row - rowlen : NULL;
		int ft = in[-1];

		for (size_t i = 0; i < rowlen; i++) {
			int a = i >= 3 ? row[i - 3] : 0, b = up ? up[i] : 0;
			int c = i >= 3 && up ? up[i - 3] : 0, v;

			switch (ft) {
			case 0: v = in[i]; break;
			case 1: v = in[i] + a; break;
			case 2: v = in[i] + b; break;
			case 3: v = in[i] + (a + b) / 2; break;
			case 4: v = in[i] + paeth(a, b, c); break;
			default: goto fail;
			}
			row[i] = (unsigned char)v;
		}
	}
	free(z);
	free(raw);
	return out;
fail:
	free(z);
	free(raw);
	free(out);
	return NULL;
}

/* ImageMagick's reading of the file, as raw RGB; NULL if convert is missing. */
static unsigned char *
magick_read(const struct xcap_image *img, size_t want)
{
	char path[] = "/tmp/detm-cap-XXXXXX", cmd[128];
	unsigned char *buf = NULL;
	size_t got = 0;
	FILE *p;
	int fd = mkstemp(path);

	if (fd < 0)
		return NULL;
	if (write(fd, img->data, img->len) != (ssize_t)img->len) {
		close(fd);
		unlink(path);
		return NULL;
	}
	close(fd);
	snprintf(cmd, sizeof cmd, "convert png:%s -depth 8 rgb:- 2>/dev/null", path);
	p = popen(cmd, "r");
	if (p != NULL) {
		buf = malloc(want + 1);
		got = fread(buf, 1, want + 1, p);
		if (pclose(p) != 0 || got != want) {
			free(buf);
			buf = NULL;
		}
	}
	unlink(path);
	return buf;
}

static void
capture_png(void)
{
	static const int widths[] = { 0, 333 };
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct xcap_image img = { 0 };
	struct derr e;
	pid_t logo;

	if (xh_server_start(&s, 640, 480) != 0) {
		CHECK(!"Xvfb");
		return;
	}
	root_fill(s.d, BG);
	solid(s.d, DefaultRootWindow(s.d), 100, 50, 200, 120, WIN);
	logo = spawn(&s, (const char *const[]){ "xlogo", "-geometry", "150x150+350+200", NULL });
	CHECK(xh_wait_window(s.d, "xlogo", 5000) != 0);
	xh_sleep_ms(100);
	c = xcap_new(s.d);
	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		unsigned char *px, *im;
		int w = 0, h = 0;
		size_t n;

		CHECK(grab(c, &f, 0, 0, 0, 0, 0, widths[i], &e) == 0);
		CHECK(xcap_encode(&f, XCAP_PNG, 0, &img, &e) == 0);
		if (img.data == NULL)
			continue;
		CHECK(strcmp(img.mime, "image/png") == 0);
		CHECK(img.len < (size_t)f.width * f.height * 3 / 4);   /* it compresses */
		n = (size_t)f.width * (size_t)f.height * 3;
		px = png_read(img.data, img.len, &w, &h);
		CHECK(px != NULL && w == f.width && h == f.height);
		CHECK(px != NULL && memcmp(px, f.rgb, n) == 0);
		im = magick_read(&img, n);
		if (im == NULL)
			fprintf(stderr, "    (ImageMagick convert not usable: skipped)\n");
		CHECK(im == NULL || memcmp(im, f.rgb, n) == 0);
		free(im);
		free(px);
		xcap_image_free(&img);
	}
	/* A 1x1 and a tall thin image. */
	CHECK(grab(c, &f, 0, 5, 5, 1, 1, 0, &e) == 0);
	CHECK(xcap_encode(&f, XCAP_PNG, 0, &img, &e) == 0);
	{
		int w = 0, h = 0;
		unsigned char *px = png_read(img.data, img.len, &w, &h);

		CHECK(px != NULL && w == 1 && h == 1 && memcmp(px, f.rgb, 3) == 0);
		free(px);
	}
	xcap_image_free(&img);
	xh_kill(logo);
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
}

/* ---- real clients ----------------------------------------------------- */

static void
rect_of(Display *d, Window w, int r[4])
{
	XWindowAttributes wa;
	Window child;

	memset(r, 0, 4 * sizeof r[0]);
	if (!XGetWindowAttributes(d, w, &wa))
		return;
	XTranslateCoordinates(d, w, DefaultRootWindow(d), 0, 0, &r[0], &r[1], &child);
	r[2] = wa.width;
	r[3] = wa.height;
}

/* Pixels in the rectangle darker than 64 and lighter than 192 (grey). */
static void
tones(const struct xcap_frame *f, const int r[4], long *dark, long *light, long *bg)
{
	*dark = *light = *bg = 0;
	for (int y = r[1]; y < r[1] + r[3] && y < f->height; y++)
		for (int x = r[0]; x < r[0] + r[2] && x < f->width; x++) {
			struct rgb p = at(f, x, y);
			int grey = (p.r + p.g + p.b) / 3;

			*dark += grey < 64 && !same(p, BG);
			*light += grey > 192;
			*bg += same(p, BG);
		}
}

struct text_wait {
	struct xcap *c;
	struct xcap_frame *f;
	int r[4];
};

static bool
has_text(void *arg)
{
	struct text_wait *t = arg;
	struct derr e;
	long dark, light, bg;

	if (grab(t->c, t->f, 0, 0, 0, 0, 0, 0, &e) != 0)
		return false;
	tones(t->f, t->r, &dark, &light, &bg);
	return dark > 50 && light > 50;
}

static void
capture_real_clients(void)
{
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 }, wf = { 0 };
	struct text_wait tw;
	struct derr e;
	Window logo_w, term_w;
	pid_t logo, term;
	int r[4];
	long dark, light, bg;

	if (xh_server_start(&s, 1024, 768) != 0) {
		CHECK(!"Xvfb");
		return;
	}
	root_fill(s.d, BG);
	c = xcap_new(s.d);
	logo = spawn(&s, (const char *const[]){ "xlogo", "-geometry", "200x150+300+200", NULL });
	term = spawn(&s, (const char *const[]){ "xterm", "-geometry", "40x10+600+400",
	    "-bg", "white", "-fg", "black", "-e", "sh", "-c", "echo Download complete; sleep 60",
	    NULL });
	logo_w = xh_wait_window(s.d, "xlogo", 5000);
	term_w = xh_wait_window(s.d, "xterm", 5000);
	CHECK(logo_w != 0 && term_w != 0);
	if (logo_w != 0) {
		rect_of(s.d, logo_w, r);
		if (getenv("XCAP_TEST_VERBOSE"))
			fprintf(stderr, "    xlogo at %d,%d %dx%d\n", r[0], r[1], r[2], r[3]);
		/* -geometry places the outer corner; Xt adds a 1 px border. */
		CHECK(r[0] >= 300 && r[0] <= 302 && r[1] >= 200 && r[1] <= 202);
		CHECK(r[2] == 200 && r[3] == 150);
		tw.c = c;
		tw.f = &f;
		memcpy(tw.r, r, sizeof r);
		CHECK(xh_wait_until(has_text, &tw, 3000));   /* logo drawn */
		tones(&f, r, &dark, &light, &bg);
		CHECK(bg == 0);                              /* covers its rectangle */
		CHECK(count_not(&f, 0, 0, 1024, 200, BG) == 0); /* nothing above it */
		/* Window capture equals the same rectangle of the screen. */
		CHECK(grab(c, &wf, logo_w, 0, 0, 0, 0, 0, &e) == 0);
		CHECK(wf.width == 200 && wf.height == 150 && wf.src_x == r[0] && wf.src_y == r[1]);
		if (wf.width == 200 && wf.height == 150) {
			int rows_differ = 0;

			for (int y = 0; y < 150; y++)
				rows_differ += memcmp(wf.rgb + (size_t)y * 600,
				    f.rgb + ((size_t)(r[1] + y) * 1024 + (size_t)r[0]) * 3, 600) != 0;
			CHECK(rows_differ == 0);
		}
	}
	if (term_w != 0) {
		rect_of(s.d, term_w, r);
		if (getenv("XCAP_TEST_VERBOSE"))
			fprintf(stderr, "    xterm at %d,%d %dx%d\n", r[0], r[1], r[2], r[3]);
		CHECK(r[0] >= 600 && r[0] <= 602 && r[1] >= 400 && r[1] <= 402);
		CHECK(r[2] > 100 && r[3] > 50);
		tw.c = c;
		tw.f = &f;
		memcpy(tw.r, r, sizeof r);
		CHECK(xh_wait_until(has_text, &tw, 5000));   /* text on white */
		tones(&f, r, &dark, &light, &bg);
		CHECK(light > dark && bg == 0);
	}
	xh_kill(logo);
	xh_kill(term);
	xcap_frame_free(&wf);
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
}

/* ---- XGetImage fallback equals the SHM path --------------------------- */

static void
capture_fallback_matches_shm(void)
{
	static const int widths[] = { 0, 1280, 700 };
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame a = { 0 }, b = { 0 };
	struct derr e;
	pid_t logo;

	if (xh_server_start(&s, 1920, 1080) != 0) {
		CHECK(!"Xvfb");
		return;
	}
	root_fill(s.d, BG);
	solid(s.d, DefaultRootWindow(s.d), 101, 51, 333, 123, WIN);
	logo = spawn(&s, (const char *const[]){ "xlogo", "-geometry", "300x300+700+300", NULL });
	CHECK(xh_wait_window(s.d, "xlogo", 5000) != 0);
	xh_sleep_ms(100);
	c = xcap_new(s.d);
	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		xcap_free(c);
		c = xcap_new(s.d);
		CHECK(grab(c, &a, 0, 0, 0, 0, 0, widths[i], &e) == 0 && xcap_uses_shm(c) == 1);
		xcap_disable_shm(c);
		CHECK(grab(c, &b, 0, 0, 0, 0, 0, widths[i], &e) == 0 && xcap_uses_shm(c) == 0);
		CHECK(a.width == b.width && a.height == b.height && a.width > 0);
		CHECK(a.width == b.width && a.height == b.height &&
		    memcmp(a.rgb, b.rgb, (size_t)a.width * (size_t)a.height * 3) == 0);
	}
	/* Frames are reused: no reallocation for a smaller grab. */
	{
		unsigned char *before = a.rgb;

		CHECK(grab(c, &a, 0, 0, 0, 100, 100, 0, &e) == 0 && a.rgb == before);
	}
	xh_kill(logo);
	xcap_frame_free(&a);
	xcap_frame_free(&b);
	xcap_free(c);
	xh_server_stop(&s);
}

const struct harness_test capture_tests[] = {
	{ "capture_full_screen_pixels", capture_full_screen_pixels },
	{ "capture_scaled_maps_back", capture_scaled_maps_back },
	{ "capture_region", capture_region },
	{ "capture_window", capture_window },
	{ "capture_validation", capture_validation },
	{ "capture_jpeg", capture_jpeg },
	{ "capture_png", capture_png },
	{ "capture_real_clients", capture_real_clients },
	{ "capture_fallback_matches_shm", capture_fallback_matches_shm },
	{ NULL, NULL },
};
