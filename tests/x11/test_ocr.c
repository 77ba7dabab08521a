/*
 * test_ocr.c - the OCR module against real screens: a private Xvfb, real
 * xterms (the default 6x13 bitmap font, the realistic small case, and Xft
 * DejaVu Sans Mono), frames grabbed with xcap at full resolution; plus the
 * pure parts (conditions, tolerant matching, changed boxes) as tables.
 *
 * One tesseract engine is shared by the screen tests (loading it costs
 * ~0.1 s); it is freed at exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include "backends/ocr.h"
#include "core/util.h"
#include "derr.h"
#include "x11/xcap.h"
#include "xh.h"

static bool verbose;

static struct ocr *engine;

static void
engine_free(void)
{
	ocr_free(engine);
	engine = NULL;
}

static struct ocr *
shared_engine(void)
{
	struct derr e;

	if (engine == NULL) {
		derr_clear(&e);
		engine = ocr_new("eng", &e);
		if (engine == NULL)
			fprintf(stderr, "    ocr_new: %s\n", e.message);
		else
			atexit(engine_free);
	}
	return engine;
}

/* xh_spawn with string literals (-Wwrite-strings). */
static pid_t
spawn(const struct xh_server *s, const char *const argv[])
{
	char *v[24];
	size_t n = 0;
	pid_t p;

	for (; argv[n] != NULL && n < 23; n++)
		v[n] = xstrdup(argv[n]);
	v[n] = NULL;
	p = xh_spawn(s, v);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	return p;
}

/* Outer rectangle of a top-level window in root coordinates. */
static void
rect_of(Display *d, Window w, int r[4])
{
	XWindowAttributes wa;
	Window child;
	int x = 0, y = 0;

	XGetWindowAttributes(d, w, &wa);
	XTranslateCoordinates(d, w, DefaultRootWindow(d), 0, 0, &x, &y, &child);
	r[0] = x;
	r[1] = y;
	r[2] = wa.width;
	r[3] = wa.height;
}

static int
grab_full(struct xcap *c, struct xcap_frame *f)
{
	struct xcap_req q = { 0 };
	struct derr e;

	derr_clear(&e);
	if (xcap_grab(c, &q, f, &e) != 0) {
		fprintf(stderr, "    xcap_grab: %s\n", e.message);
		return -1;
	}
	return 0;
}

/* OCR of a rectangle of f; malloc'd text or NULL. */
static char *
ocr_rect(const struct xcap_frame *f, const int r[4], int scale, int *conf)
{
	struct derr e;
	char *text = NULL;
	int64_t t0 = mono_us();

	derr_clear(&e);
	if (ocr_text(shared_engine(), f->rgb, f->width, f->height, r[0], r[1], r[2], r[3],
	    scale, &text, conf, &e) != 0) {
		fprintf(stderr, "    ocr_text: %s\n", e.message);
		return NULL;
	}
	if (verbose)
		fprintf(stderr, "    ocr %dx%d+%d+%d x%d: %lld ms conf %d: [%s]\n", r[2], r[3],
		    r[0], r[1], scale, (long long)(mono_us() - t0) / 1000, conf ? *conf : -1,
		    text);
	return text;
}

struct text_wait {
	struct xcap *c;
	struct xcap_frame *f;
	const int *r;
	int scale;
	const char *phrase;
};

/* The phrase is readable in the rectangle (the client may still be drawing). */
static bool
text_visible(void *arg)
{
	struct text_wait *tw = arg;
	char *text;
	bool ok;

	if (grab_full(tw->c, tw->f) != 0)
		return false;
	text = ocr_rect(tw->f, tw->r, tw->scale, NULL);
	ok = text != NULL && ocr_match(text, tw->phrase);
	free(text);
	return ok;
}

/* ---- the printed phrase is found; others are not ---------------------- */

static void
ocr_xterm_text(void)
{
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct text_wait tw;
	pid_t small, big;
	Window ws, wb;
	int rs[4] = { 0 }, rb[4] = { 0 }, conf = -1;
	char *text;

	if (shared_engine() == NULL) {
		CHECK(!"ocr_new");
		return;
	}
	if (xh_server_start(&s, 1280, 720) != 0) {
		CHECK(!"Xvfb");
		return;
	}
	c = xcap_new(s.d);
	small = spawn(&s, (const char *const[]){ "xterm", "-name", "ocrsmall",
	    "-geometry", "60x6+10+10", "-e", "sh", "-c",
	    "echo Download complete; echo; echo Saved report.pdf to Downloads; sleep 60",
	    NULL });
	big = spawn(&s, (const char *const[]){ "xterm", "-name", "ocrbig",
	    "-geometry", "50x5+400+300", "-fa", "DejaVu Sans Mono", "-fs", "12",
	    "-bg", "#1e1e1e", "-fg", "#d4d4d4", "-e", "sh", "-c",
	    "echo Build finished: 0 errors; sleep 60", NULL });
	ws = xh_wait_window(s.d, "ocrsmall", 5000);
	wb = xh_wait_window(s.d, "ocrbig", 5000);
	CHECK(ws != 0 && wb != 0);
	if (ws != 0) {
		rect_of(s.d, ws, rs);
		tw = (struct text_wait){ c, &f, rs, 3, "Download complete" };
		CHECK(xh_wait_until(text_visible, &tw, 5000));
		text = ocr_rect(&f, rs, 3, &conf);
		CHECK(text != NULL);
		if (text != NULL) {
			CHECK(ocr_match(text, "Download complete"));
			CHECK(ocr_match(text, "download COMPLETE"));
			CHECK(ocr_match(text, "Saved report.pdf"));
			CHECK(!ocr_match(text, "Download failed"));
			CHECK(!ocr_match(text, "Upload complete"));
			CHECK(!ocr_match(text, "Download incomplete"));
			CHECK(conf >= 50 && conf <= 100);
		}
		free(text);
		/* Scale 2 reads this font too (the baseline's advice: 2-3x). */
		text = ocr_rect(&f, rs, 2, NULL);
		CHECK(text != NULL && ocr_match(text, "Download complete"));
		free(text);
	}
	if (wb != 0) {
		rect_of(s.d, wb, rb);
		/* Light text on a dark background: ocr_text inverts it. */
		tw = (struct text_wait){ c, &f, rb, 2, "Build finished" };
		CHECK(xh_wait_until(text_visible, &tw, 5000));
		text = ocr_rect(&f, rb, 2, NULL);
		CHECK(text != NULL && ocr_match(text, "Build finished: 0 errors"));
		CHECK(text != NULL && !ocr_match(text, "Build failed"));
		free(text);
	}
	/* An empty part of the screen: no text, no error. */
	{
		const int r[4] = { 900, 600, 200, 100 };

		text = ocr_rect(&f, r, 2, &conf);
		CHECK(text != NULL && strlen(text) == 0);
		free(text);
	}
	xh_kill(small);
	xh_kill(big);
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
}

/* ---- changed boxes on a real screen ------------------------------------ */

static bool
contains(const struct ocr_box *b, int x, int y, int w, int h)
{
	return b->x <= x && b->y <= y && b->x + b->w >= x + w && b->y + b->h >= y + h;
}

static void
ocr_changed_region(void)
{
	enum { TW = 320, TH = 180 };
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct text_wait tw;
	struct ocr_box boxes[4];
	unsigned char *before = xmalloc(TW * TH), *after = xmalloc(TW * TH);
	pid_t term;
	Window w;
	int r[4] = { 0 }, nb;
	char *text;

	if (shared_engine() == NULL || xh_server_start(&s, 1280, 720) != 0) {
		CHECK(!"engine or Xvfb");
		free(before);
		free(after);
		return;
	}
	c = xcap_new(s.d);
	term = spawn(&s, (const char *const[]){ "xterm", "-name", "ocrchg",
	    "-geometry", "70x12+200+150", "-e", "sh", "-c",
	    "echo Compiling sources; sleep 3; echo Tests passed: 42 of 42; sleep 60", NULL });
	w = xh_wait_window(s.d, "ocrchg", 5000);
	CHECK(w != 0);
	if (w == 0)
		goto out;
	rect_of(s.d, w, r);
	tw = (struct text_wait){ c, &f, r, 2, "Compiling sources" };
	CHECK(xh_wait_until(text_visible, &tw, 5000));
	CHECK(ocr_grey_thumb(f.rgb, f.width, f.height, before, TW, TH) == 0);

	/* Identical frames: nothing changed. */
	CHECK(ocr_changed_boxes(before, before, TW, TH, f.width, f.height, 8, boxes, 4) == 0);

	tw.phrase = "Tests passed";
	CHECK(xh_wait_until(text_visible, &tw, 6000));
	CHECK(ocr_grey_thumb(f.rgb, f.width, f.height, after, TW, TH) == 0);
	nb = ocr_changed_boxes(before, after, TW, TH, f.width, f.height, 8, boxes, 4);
	CHECK(nb == 1);
	if (nb >= 1) {
		/* Line 2 of the terminal: y = r[1] + ~2 + 13..26, x from ~r[0]+2
		 * for 21 chars of 6 px. */
		if (verbose)
			fprintf(stderr, "    box %d,%d %dx%d (xterm %d,%d %dx%d)\n", boxes[0].x,
			    boxes[0].y, boxes[0].w, boxes[0].h, r[0], r[1], r[2], r[3]);
		CHECK(contains(&boxes[0], r[0] + 4, r[1] + 16, 21 * 6, 10));
		CHECK(boxes[0].w < r[2] && boxes[0].h <= 60);   /* the line, not the window */
		CHECK(boxes[0].y > r[1] + 4);                   /* not line 1 */
		text = ocr_rect(&f, (const int[4]){ boxes[0].x, boxes[0].y, boxes[0].w,
		    boxes[0].h }, 3, NULL);
		CHECK(text != NULL && ocr_match(text, "Tests passed: 42 of 42"));
		CHECK(text != NULL && !ocr_match(text, "Compiling sources"));
		free(text);
	}
out:
	xh_kill(term);
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
	free(before);
	free(after);
}

/* ---- text replaced in place: the changed box widened to its line -------- */

static void
ocr_line_in_place(void)
{
	enum { TW = 320, TH = 180 };
	struct xh_server s;
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct text_wait tw;
	struct ocr_box boxes[4];
	unsigned char *before = xmalloc(TW * TH), *after = xmalloc(TW * TH);
	pid_t term;
	Window w;
	int r[4] = { 0 }, nb;
	char *text;

	if (shared_engine() == NULL || xh_server_start(&s, 1280, 720) != 0) {
		CHECK(!"engine or Xvfb");
		free(before);
		free(after);
		return;
	}
	c = xcap_new(s.d);
	/* issue 34: a status overwritten in place (\r), as progress lines are. */
	term = spawn(&s, (const char *const[]){ "xterm", "-name", "ocrline",
	    "-geometry", "70x12+200+150", "-fa", "Mono", "-fs", "12", "-e", "sh", "-c",
	    "printf 'Exporting, please wait...'; sleep 3; printf '\\rExport finished%25s' ''; sleep 60",
	    NULL });
	w = xh_wait_window(s.d, "ocrline", 5000);
	CHECK(w != 0);
	if (w == 0)
		goto out;
	rect_of(s.d, w, r);
	tw = (struct text_wait){ c, &f, r, 2, "Exporting, please wait" };
	CHECK(xh_wait_until(text_visible, &tw, 5000));
	CHECK(ocr_grey_thumb(f.rgb, f.width, f.height, before, TW, TH) == 0);
	tw.phrase = "Export finished";
	CHECK(xh_wait_until(text_visible, &tw, 6000));
	CHECK(ocr_grey_thumb(f.rgb, f.width, f.height, after, TW, TH) == 0);
	/* The text, and the cursor that moved along the same line. */
	nb = ocr_changed_boxes(before, after, TW, TH, f.width, f.height, 8, boxes, 4);
	CHECK(nb >= 1 && nb <= 2);
	if (nb < 1)
		goto out;
	/* The changed text starts after "Export", which did not change: read
	 * alone, it is not the phrase (the bug: the wait never saw it). */
	{
		struct ocr_box b0 = boxes[nb == 2 && boxes[1].x < boxes[0].x];

		text = ocr_rect(&f, (const int[4]){ b0.x, b0.y, b0.w, b0.h }, 2, NULL);
		CHECK(text != NULL && !ocr_match(text, "Export finished"));
		free(text);
		CHECK(b0.x > r[0] + 5 * 8);
		/* Widened to its line, the cursor's box merged in: from the
		 * terminal's left edge to its right one, not onto the desktop
		 * beside it; a few rows taller. */
		CHECK(ocr_line_boxes(f.rgb, f.width, f.height, boxes, nb, 3) == 1);
		if (verbose)
			fprintf(stderr, "    changed %d,%d %dx%d -> line %d,%d %dx%d (xterm %d,%d %dx%d)\n",
			    b0.x, b0.y, b0.w, b0.h, boxes[0].x, boxes[0].y, boxes[0].w, boxes[0].h,
			    r[0], r[1], r[2], r[3]);
		CHECK(boxes[0].x >= r[0] && boxes[0].x <= r[0] + 4);
		CHECK(boxes[0].x + boxes[0].w <= r[0] + r[2] && boxes[0].x + boxes[0].w >= r[0] + r[2] - 4);
		CHECK(boxes[0].y <= b0.y - 3 && boxes[0].y + boxes[0].h >= b0.y + b0.h + 3);
		CHECK(boxes[0].h <= b0.h + 2 * 3 + 8);
	}
	text = ocr_rect(&f, (const int[4]){ boxes[0].x, boxes[0].y, boxes[0].w, boxes[0].h }, 2, NULL);
	CHECK(text != NULL && ocr_match(text, "Export finished"));
	CHECK(text != NULL && !ocr_match(text, "Exporting"));
	free(text);
out:
	xh_kill(term);
	xcap_frame_free(&f);
	xcap_free(c);
	xh_server_stop(&s);
	free(before);
	free(after);
}

/* ---- synthetic line boxes ----------------------------------------------- */

static void
fill(unsigned char *rgb, int width, int x, int y, int w, int h, unsigned char v)
{
	for (int r = y; r < y + h; r++)
		memset(rgb + ((size_t)r * (size_t)width + (size_t)x) * 3, v, (size_t)w * 3);
}

static void
ocr_line_boxes_synthetic(void)
{
	enum { W = 400, H = 200 };
	unsigned char *rgb = xmalloc(W * H * 3);
	struct ocr_box bx[3];

	/* A dark desktop, a light window at x 100..299 with a 1 px grey
	 * border, "text" (short dark bars with gaps) on two of its lines. */
	fill(rgb, W, 0, 0, W, H, 20);
	fill(rgb, W, 100, 50, 200, 100, 128);
	fill(rgb, W, 101, 51, 198, 98, 240);
	for (int x = 110; x < 290; x += 9)
		fill(rgb, W, x, 62, 5, 10, 30);
	for (int x = 110; x < 200; x += 9)
		fill(rgb, W, x, 92, 5, 10, 30);
	/* A change mid-line: the line of the window, not the desktop. */
	bx[0] = (struct ocr_box){ 200, 60, 30, 14 };
	CHECK(ocr_line_boxes(rgb, W, H, bx, 1, 2) == 1);
	CHECK(bx[0].x == 101 && bx[0].w == 198 && bx[0].y == 58 && bx[0].h == 18);
	/* Two changes on the same line become one box; another line stays apart. */
	bx[0] = (struct ocr_box){ 120, 60, 20, 14 };
	bx[1] = (struct ocr_box){ 250, 61, 20, 12 };
	bx[2] = (struct ocr_box){ 150, 90, 20, 14 };
	CHECK(ocr_line_boxes(rgb, W, H, bx, 3, 2) == 2);
	CHECK(bx[0].x == 101 && bx[0].w == 198 && bx[0].y == 58 && bx[0].h == 18);
	CHECK(bx[1].x == 101 && bx[1].w == 198 && bx[1].y == 88);
	/* No edge on the way: the frame's edges; padding clipped at the top. */
	fill(rgb, W, 0, 0, W, H, 240);
	bx[0] = (struct ocr_box){ 10, 1, 10, 10 };
	CHECK(ocr_line_boxes(rgb, W, H, bx, 1, 4) == 1);
	CHECK(bx[0].x == 0 && bx[0].w == W && bx[0].y == 0 && bx[0].h == 15);
	/* A box taller than half the frame stays as it is. */
	bx[0] = (struct ocr_box){ 10, 10, 10, 150 };
	CHECK(ocr_line_boxes(rgb, W, H, bx, 1, 4) == 1 && bx[0].x == 10 && bx[0].w == 10);
	/* Bad arguments. */
	bx[0] = (struct ocr_box){ 390, 10, 20, 10 };
	CHECK(ocr_line_boxes(rgb, W, H, bx, 1, 2) == -1);
	bx[0] = (struct ocr_box){ 10, 10, 0, 10 };
	CHECK(ocr_line_boxes(rgb, W, H, bx, 1, 2) == -1);
	CHECK(ocr_line_boxes(NULL, W, H, bx, 1, 2) == -1);
	CHECK(ocr_line_boxes(rgb, W, H, bx, 0, 2) == 0);
	free(rgb);
}

/* ---- synthetic changed boxes ------------------------------------------- */

static void
ocr_changed_boxes_synthetic(void)
{
	enum { TW = 100, TH = 50 };
	static unsigned char a[TW * TH], b[TW * TH];
	struct ocr_box bx[8];
	int nb;

	memset(a, 200, sizeof a);
	memcpy(b, a, sizeof b);
	/* Two far-apart changes, one of them just under the threshold elsewhere. */
	for (int y = 10; y < 12; y++)
		for (int x = 5; x < 20; x++)
			b[y * TW + x] = 100;
	for (int y = 40; y < 45; y++)
		for (int x = 80; x < 90; x++)
			b[y * TW + x] = 150;
	b[25 * TW + 50] = 195;   /* |diff| 5: noise */
	nb = ocr_changed_boxes(a, b, TW, TH, 1000, 500, 10, bx, 8);
	CHECK(nb == 2);
	if (nb == 2) {
		/* Largest first: the 15x2 strip is 150x20 px, the 10x5 block 100x50. */
		CHECK(contains(&bx[0], 800, 400, 100, 50) || contains(&bx[1], 800, 400, 100, 50));
		CHECK(contains(&bx[0], 50, 100, 150, 20) || contains(&bx[1], 50, 100, 150, 20));
		CHECK((int64_t)bx[0].w * bx[0].h >= (int64_t)bx[1].w * bx[1].h);
		for (int i = 0; i < 2; i++)
			CHECK(bx[i].x >= 0 && bx[i].y >= 0 && bx[i].x + bx[i].w <= 1000 &&
			    bx[i].y + bx[i].h <= 500 && bx[i].w <= 200 && bx[i].h <= 100);
	}
	/* Only room for one: merged into a box covering both. */
	nb = ocr_changed_boxes(a, b, TW, TH, 1000, 500, 10, bx, 1);
	CHECK(nb == 1 && contains(&bx[0], 50, 100, 850, 350));
	/* Noise threshold above every diff. */
	CHECK(ocr_changed_boxes(a, b, TW, TH, 1000, 500, 100, bx, 8) == 0);
	/* Change at the very corner is clipped to the screen. */
	memcpy(b, a, sizeof b);
	b[TW * TH - 1] = 0;
	nb = ocr_changed_boxes(a, b, TW, TH, 1000, 500, 10, bx, 8);
	CHECK(nb == 1 && bx[0].x + bx[0].w == 1000 && bx[0].y + bx[0].h == 500);
	/* Confetti everywhere: one box, the bounding box. */
	for (int i = 0; i < TW * TH; i += 7)
		b[i] = (unsigned char)(a[i] ^ 0xff);
	for (int y = 0; y < TH; y += 4)
		for (int x = 0; x < TW; x += 4)
			b[y * TW + x] = 0;
	nb = ocr_changed_boxes(a, b, TW, TH, 1000, 500, 10, bx, 8);
	CHECK(nb >= 1 && nb <= 8);
	/* Bad arguments. */
	CHECK(ocr_changed_boxes(NULL, b, TW, TH, 1000, 500, 10, bx, 8) == -1);
	CHECK(ocr_changed_boxes(a, b, 0, TH, 1000, 500, 10, bx, 8) == -1);
	CHECK(ocr_changed_boxes(a, b, TW, TH, 1000, 500, 10, bx, 0) == -1);
	CHECK(ocr_changed_boxes(a, b, TW, TH, 1000, 500, 300, bx, 8) == -1);
	CHECK(ocr_changed_boxes(a, b, 1 << 16, 1 << 16, 1000, 500, 10, bx, 8) == -1);
	CHECK(ocr_grey_thumb(a, TW, TH, b, TW + 1, TH) == -1);
}

/* ---- conditions --------------------------------------------------------- */

static void
ocr_condition_table(void)
{
	static const struct {
		const char *cond;
		int is_text;
		const char *phrase;
		bool negate;
	} t[] = {
		{ "text:\"Download complete\"", 1, "Download complete", false },
		{ "text: Download complete", 1, "Download complete", false },
		{ "  TEXT:  \"Build succeeded\"  ", 1, "Build succeeded", false },
		{ "text:\xe2\x80\x9c" "Export finished\xe2\x80\x9d", 1, "Export finished", false },
		{ "text-gone:\"Saving...\"", 1, "Saving...", true },
		{ "text_gone: Loading", 1, "Loading", true },
		{ "no-text:\"Connecting\"", 1, "Connecting", true },
		{ "wait until \"Download complete\" appears in the browser", 1,
		  "Download complete", false },
		{ "the terminal shows \"All tests passed\"", 1, "All tests passed", false },
		{ "\"Saving...\" disappears", 1, "Saving...", true },
		{ "the \"Uploading\" banner is gone", 1, "Uploading", true },
		{ "\"Please wait\" is no longer shown", 1, "Please wait", true },
		{ "spinner with \xe2\x80\x9cProcessing\xe2\x80\x9d goes away", 1, "Processing", true },
		{ "the dialog says \xe2\x80\x9cInstallation complete\xe2\x80\x9d", 1,
		  "Installation complete", false },
		{ "\"Error\" is not visible anymore", 1, "Error", true },
		{ "until the page isn't showing \"Loading\"", 1, "Loading", true },
		{ "\"Connected\" appears or \"Connected\" shows up", 1, "Connected", false },
		{ "status bar reads \"Ready\"", 1, "Ready", false },
		/* Not for OCR. */
		{ "the download has finished", 0, "", false },
		{ "a dialog box appears", 0, "", false },
		{ "\"Saving...\" changes to \"Saved\"", 0, "", false },
		{ "the \"Save\" button is enabled", 0, "", false },
		{ "the \"Wi-Fi\" icon turns green", 0, "", false },
		{ "\"Remember me\" is checked", 0, "", false },
		{ "\"...\" disappears", 0, "", false },
		{ "text:", 0, "", false },
		{ "text:\"\"", 0, "", false },
		{ "text:\"unterminated", 0, "", false },
		{ "text:\"A\" or \"B\"", 0, "", false },
		{ "the title contains \"unterminated", 0, "", false },
		{ "", 0, "", false },
	};
	char phrase[OCR_MAX_PHRASE];
	char small[6];
	bool neg;

	for (size_t i = 0; i < ARRAY_LEN(t); i++) {
		int r = ocr_condition(t[i].cond, phrase, sizeof phrase, &neg);

		if (r != t[i].is_text || strcmp(phrase, t[i].phrase) != 0 || neg != t[i].negate) {
			fprintf(stderr, "    condition [%s]: got %d [%s] %d\n", t[i].cond, r,
			    phrase, neg);
			CHECK(!"ocr_condition");
		}
	}
	/* A phrase that does not fit is refused, not cut. */
	CHECK(ocr_condition("text:\"Download complete\"", small, sizeof small, &neg) == 0);
	CHECK(ocr_condition(NULL, phrase, sizeof phrase, &neg) == 0);
	CHECK(ocr_condition("text:ok", phrase, sizeof phrase, NULL) == 1);
}

/* ---- tolerant matching -------------------------------------------------- */

static void
ocr_match_table(void)
{
	static const struct {
		const char *text, *phrase;
		bool match;
	} t[] = {
		{ "Download complete", "Download complete", true },
		{ "Down1oad  complete.", "Download complete", true },       /* 1 -> l */
		{ "D0wnload comp1ete", "download complete", true },
		{ "Downloadcomplete", "Download complete", true },           /* joined */
		{ "Down load complete", "Download complete", true },         /* split */
		{ "Download c0mplete!\nSaved", "Download complete", true },
		{ "Downloed complete", "Download complete", true },          /* 1 edit in 8 */
		{ "Down1oad cornp1ete", "Download complete", true },
		{ "Dovvnl0ad", "Download", true },
		{ "Dovvnload complete", "Download complete", true },         /* vv -> w */
		{ "Download completed", "Download complete", false },        /* end anchored */
		{ "Downloadcomplete", "Download incomplete", false },
		{ "ok\n\nBuild finished: 0 errors\n", "Build finished: 0 errors", true },
		{ "Saving...", "Saving...", true },
		{ "Savlng", "Saving", true },                                /* i ~ l */
		{ "Tests passed: 42 of 42", "42 of 42", true },
		{ "Instal1ation comp|ete", "Installation complete", true },
		{ "Modern", "Modem", true },                                 /* rn ~ m */
		{ "\xe2\x80\x9c" "Export finished\xe2\x80\x9d", "Export finished", true },
		{ "Größe: 12 MB", "größe", true },
		/* Near misses. */
		{ "Download incomplete", "Download complete", false },       /* 2 edits */
		{ "Download complete", "Download incomplete", false },
		{ "Upload complete", "Download complete", false },
		{ "Download", "Download complete", false },
		{ "Download failed", "Download complete", false },
		{ "Saved", "Save", false },                                  /* short: exact */
		{ "Unsaved", "Saved", false },
		{ "Saving", "Saved", false },
		{ "Error", "Errors", false },
		{ "Terror", "Error", false },
		{ "Tests passed: 41 of 42", "42 of 42", false },
		{ "Build failed", "Build finished", false },
		{ "", "Download", false },
		{ "anything", "...", false },                                /* no word */
		{ "anything", "", false },
	};

	for (size_t i = 0; i < ARRAY_LEN(t); i++)
		if (ocr_match(t[i].text, t[i].phrase) != t[i].match) {
			fprintf(stderr, "    match [%s] ~ [%s]: expected %d\n", t[i].text,
			    t[i].phrase, t[i].match);
			CHECK(!"ocr_match");
		}
	CHECK(!ocr_match(NULL, "x"));
	CHECK(!ocr_match("x", NULL));
	/* A long text (a full screen of OCR) with the phrase at the end. */
	{
		size_t n = 64 * 1024;
		char *big = xmalloc(n + 32);

		for (size_t i = 0; i < n; i++)
			big[i] = "lorem ipsum dolor sit amet "[i % 27];
		strcpy(big + n, " Download complete");
		CHECK(ocr_match(big, "Download complete"));
		CHECK(!ocr_match(big, "Download incomplete"));
		free(big);
	}
}

/* ---- errors ------------------------------------------------------------- */

static void
ocr_errors(void)
{
	enum { W = 2600, H = 1700 };
	unsigned char *rgb = xcalloc((size_t)W * H, 3);
	struct ocr *o = shared_engine();
	struct derr e;
	char *text = (char *)1;
	struct ocr *bad;

	derr_clear(&e);
	bad = ocr_new("zzz_nosuch", &e);
	CHECK(bad == NULL && e.code == DERR_UNAVAILABLE);
	CHECK(strstr(e.message, "tesseract-ocr-zzz-nosuch") != NULL);
	derr_clear(&e);
	CHECK(ocr_new("eng+xx", &e) == NULL && e.code == DERR_UNAVAILABLE &&
	    strstr(e.message, "tesseract-ocr-xx") != NULL);
	derr_clear(&e);
	CHECK(ocr_new("../eng", &e) == NULL && e.code == DERR_INVALID);
	derr_clear(&e);
	CHECK(ocr_new("", &e) == NULL && e.code == DERR_INVALID);
	ocr_free(NULL);
	if (o == NULL) {
		CHECK(!"ocr_new");
		free(rgb);
		return;
	}
	/* 2600x1700 = 4.4 Mpx > 4 Mi px. */
	derr_clear(&e);
	CHECK(ocr_text(o, rgb, W, H, 0, 0, 0, 0, 1, &text, NULL, &e) == -1);
	CHECK(e.code == DERR_INVALID && text == NULL);
	/* 1100x1000 at scale 2 = 4.4 Mpx. */
	derr_clear(&e);
	CHECK(ocr_text(o, rgb, W, H, 0, 0, 1100, 1000, 2, &text, NULL, &e) == -1);
	CHECK(e.code == DERR_INVALID && strcmp(e.field, "w") == 0);
	derr_clear(&e);
	CHECK(ocr_text(o, rgb, W, H, 0, 0, 100, 100, 0, &text, NULL, &e) == -1 &&
	    e.code == DERR_INVALID && strcmp(e.field, "scale") == 0);
	derr_clear(&e);
	CHECK(ocr_text(o, rgb, W, H, W, 0, 10, 10, 1, &text, NULL, &e) == -1 &&
	    e.code == DERR_INVALID && strcmp(e.field, "x") == 0);
	derr_clear(&e);
	CHECK(ocr_text(o, rgb, W, H, -50, -50, 40, 40, 1, &text, NULL, &e) == -1 &&
	    e.code == DERR_INVALID);
	derr_clear(&e);
	CHECK(ocr_text(o, NULL, W, H, 0, 0, 10, 10, 1, &text, NULL, &e) == -1 &&
	    e.code == DERR_INVALID);
	/* Partly outside: clipped, and a blank image reads as "". */
	derr_clear(&e);
	CHECK(ocr_text(o, rgb, W, H, W - 20, H - 20, 1 << 30, 1 << 30, 2, &text, NULL, &e) == 0);
	CHECK(text != NULL && text[0] == '\0');
	free(text);
	free(rgb);
}

/* ocr_cut_lines (issue 39): two windows side by side, their lines at
 * different heights, each with a frame, on a dark desktop. Every line
 * comes out inside one window, whole, and the frames are no line. */
static void
ocr_cut_lines_synthetic(void)
{
	enum { W = 400, H = 200 };
	unsigned char *rgb = xmalloc(W * H * 3);
	struct ocr_box ln[32], one;
	int n, left = 0, right = 0;

	fill(rgb, W, 0, 0, W, H, 20);
	fill(rgb, W, 0, 0, 200, 150, 240);      /* window 1, frame at x 0 and 199 */
	fill(rgb, W, 0, 0, 1, 150, 90);
	fill(rgb, W, 199, 0, 1, 150, 90);
	fill(rgb, W, 200, 0, 200, 120, 240);    /* window 2 beside it, frame at x 200 */
	fill(rgb, W, 200, 0, 2, 120, 90);
	for (int k = 0; k < 6; k++)             /* window 1: lines every 19 rows from y 10 */
		for (int x = 5; x < 90; x += 9)
			fill(rgb, W, x, 10 + 19 * k, 5, 12, 30);
	for (int k = 0; k < 5; k++)             /* window 2: every 21 rows from y 16 */
		for (int x = 206; x < 280; x += 9)
			fill(rgb, W, x, 16 + 21 * k, 5, 13, 30);
	n = ocr_cut_lines(rgb, W, H, (struct ocr_box){ 0, 0, W, 150 }, ln, 32);
	CHECK(n == 11);
	for (int i = 0; i < n && i < 32; i++) {
		if (verbose)
			printf("   line %d: %d,%d %dx%d\n", i, ln[i].x, ln[i].y, ln[i].w, ln[i].h);
		CHECK(ln[i].x + ln[i].w <= 199 || ln[i].x >= 202);   /* one window, no frame */
		CHECK(ln[i].h >= 12 && ln[i].h <= 16);              /* one line */
		left += ln[i].x < 199;
		right += ln[i].x >= 202;
	}
	CHECK(left == 6 && right == 5);
	/* The same line cut from a box one line high (a changed region) is the
	 * same crop: the frame at x 0 is a rule there too. */
	n = ocr_cut_lines(rgb, W, H, (struct ocr_box){ 0, 27, 199, 20 }, &one, 1);
	CHECK(n == 1 && one.x == ln[1].x && one.y == ln[1].y && one.w == ln[1].w && one.h == ln[1].h);
	/* A box whose top cuts through a line (a changed region's edge): the
	 * whole line, the same crop again, not a sliver. */
	n = ocr_cut_lines(rgb, W, H, (struct ocr_box){ 0, 33, 199, 12 }, &one, 1);
	CHECK(n == 1 && one.x == ln[1].x && one.y == ln[1].y && one.w == ln[1].w && one.h == ln[1].h);
	/* No ink; bad arguments; more lines than room. */
	CHECK(ocr_cut_lines(rgb, W, H, (struct ocr_box){ 300, 150, 50, 40 }, ln, 32) == 0);
	CHECK(ocr_cut_lines(rgb, W, H, (struct ocr_box){ 390, 0, 20, 10 }, ln, 32) == -1);
	CHECK(ocr_cut_lines(NULL, W, H, (struct ocr_box){ 0, 0, 10, 10 }, ln, 32) == -1);
	CHECK(ocr_cut_lines(rgb, W, H, (struct ocr_box){ 0, 0, W, 150 }, ln, 4) == -1);
	free(rgb);
}

const struct harness_test ocr_tests[] = {
	{ "ocr_condition_table", ocr_condition_table },
	{ "ocr_match_table", ocr_match_table },
	{ "ocr_changed_boxes_synthetic", ocr_changed_boxes_synthetic },
	{ "ocr_errors", ocr_errors },
	{ "ocr_xterm_text", ocr_xterm_text },
	{ "ocr_changed_region", ocr_changed_region },
	{ "ocr_line_boxes_synthetic", ocr_line_boxes_synthetic },
	{ "ocr_line_in_place", ocr_line_in_place },
	{ "ocr_cut_lines_synthetic", ocr_cut_lines_synthetic },
	{ NULL, NULL },
};

__attribute__((constructor)) static void
ocr_test_env(void)
{
	verbose = getenv("OCR_TEST_VERBOSE") != NULL;
}
