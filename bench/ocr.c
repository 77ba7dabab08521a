/*
 * ocr.c - microbenchmark of daemon/backends/ocr.c against a running X server
 * (bench/ocr.sh starts a private 1920x1080 Xvfb with xterms on it; one of
 * them prints "Tests passed: 42 of 42" a few seconds after start).
 *
 *   ocr [-n N] [-f FULL_RUNS] [-o DIR] [-p]      (DISPLAY from the environment)
 *
 * Compiled as one unit with daemon/backends/ocr.c (#include below) so it can switch
 * the page segmentation mode of the engine it measures. Prints, per case,
 * the median and min in ms, the mean confidence, and whether the known
 * phrases were read; -o DIR writes full.png and crop.png there (ocr.sh feeds
 * them to the tesseract CLI when it is installed). -p undoes ocr_new's
 * OpenMP serialisation (max-active-levels back to 1) to show what it saves.
 */
#include "../daemon/backends/ocr.c"   /* not "ocr.c": that is this file */

#include <getopt.h>
#include <stdio.h>
#include <time.h>

#include <X11/Xlib.h>

#include "x11/xcap.h"
#include "x11/xerr.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
now_ms_f(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *const phrases[] = {
	"Download complete", "Saved report.pdf to Downloads", "Tests passed: 42 of 42",
	"Build finished: 0 errors",
};

/* Runs ocr_text n times on the rectangle; prints one line. */
static void
measure(struct ocr *o, const struct xcap_frame *f, const char *name, int x, int y,
    int w, int h, int scale, int n)
{
	double *t = xcalloc((size_t)n, sizeof *t);
	char *text = NULL;
	int conf = 0;
	struct derr e;
	char found[128] = "";

	for (int i = 0; i < n; i++) {
		double t0 = now_ms_f();

		free(text);
		text = NULL;
		derr_clear(&e);
		if (ocr_text(o, f->rgb, f->width, f->height, x, y, w, h, scale, &text, &conf,
		    &e) != 0) {
			printf("  %-34s error: %s\n", name, e.message);
			free(t);
			return;
		}
		t[i] = now_ms_f() - t0;
	}
	qsort(t, (size_t)n, sizeof *t, cmp_double);
	for (size_t i = 0; i < ARRAY_LEN(phrases); i++)
		if (ocr_match(text, phrases[i])) {
			size_t l = strlen(found);

			snprintf(found + l, sizeof found - l, "%s#%zu", l ? "," : "", i + 1);
		}
	printf("  %-34s %4dx%-4d x%d  median %7.1f ms  min %7.1f  conf %3d  chars %4zu  found %s\n",
	    name, w ? w : f->width, h ? h : f->height, scale, t[n / 2], t[0], conf,
	    text ? utf8_chars(text) : 0, found[0] ? found : "-");
	if (getenv("OCR_BENCH_TEXT"))
		printf("----\n%s\n----\n", text);
	fflush(stdout);
	free(text);
	free(t);
}

static int
grab(struct xcap *c, struct xcap_frame *f)
{
	struct xcap_req q = { 0 };
	struct derr e;

	derr_clear(&e);
	if (xcap_grab(c, &q, f, &e) != 0) {
		fprintf(stderr, "grab: %s\n", e.message);
		return -1;
	}
	return 0;
}

static void
write_png(const struct xcap_frame *f, const char *dir, const char *name)
{
	struct xcap_image img = { 0 };
	struct derr e;
	char path[1024];
	FILE *fp;

	if (xcap_encode(f, XCAP_PNG, 0, &img, &e) != 0)
		return;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (fp) {
		fwrite(img.data, 1, img.len, fp);
		fclose(fp);
	}
	xcap_image_free(&img);
}

int
main(int argc, char **argv)
{
	enum { TW = 480, TH = 270 };
	int n = 9, full_runs = 3, opt, nb = 0;
	bool parallel = false;
	const char *outdir = NULL;
	Display *d;
	struct xcap *c;
	struct xcap_frame before = { 0 }, after = { 0 };
	unsigned char *tb = xmalloc(TW * TH), *ta = xmalloc(TW * TH);
	struct ocr_box boxes[8];
	struct ocr *o;
	struct derr e;
	double t0, tmed[16];

	while ((opt = getopt(argc, argv, "n:f:o:p")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'f')
			full_runs = atoi(optarg);
		else if (opt == 'o')
			outdir = optarg;
		else if (opt == 'p')
			parallel = true;
		else
			return 2;
	}
	if (n < 1)
		n = 1;
	if (full_runs < 1)
		full_runs = 1;
	xerr_init();
	d = XOpenDisplay(NULL);
	if (d == NULL) {
		fprintf(stderr, "ocr bench: cannot open display\n");
		return 1;
	}
	xerr_watch(d);
	c = xcap_new(d);

	for (int i = 0; i < 5; i++) {
		t0 = now_ms_f();
		derr_clear(&e);
		o = ocr_new("eng", &e);
		tmed[i] = now_ms_f() - t0;
		if (o == NULL) {
			fprintf(stderr, "ocr_new: %s\n", e.message);
			return 1;
		}
		ocr_free(o);
	}
	qsort(tmed, 5, sizeof tmed[0], cmp_double);
	printf("  %-34s median %7.1f ms\n", "ocr_new + ocr_free", tmed[2]);
	o = ocr_new("eng", &e);
	if (parallel) {
		void (*set_levels)(int);
		void *sym = dlsym(RTLD_DEFAULT, "omp_set_max_active_levels");

		if (sym != NULL) {
			memcpy(&set_levels, &sym, sizeof set_levels);
			set_levels(1);
		}
		printf("  OpenMP: parallel regions allowed again (-p)\n");
	}

	/* Before the late line, then wait for the change the way the wait
	 * engine would: thumbnails every 100 ms. */
	if (grab(c, &before) != 0)
		return 1;
	ocr_grey_thumb(before.rgb, before.width, before.height, tb, TW, TH);
	for (int i = 0; i < 150 && nb == 0; i++) {
		struct timespec ts = { 0, 100 * 1000000L };

		nanosleep(&ts, NULL);
		if (grab(c, &after) != 0)
			return 1;
		ocr_grey_thumb(after.rgb, after.width, after.height, ta, TW, TH);
		nb = ocr_changed_boxes(tb, ta, TW, TH, after.width, after.height, 8, boxes, 8);
	}
	{
		int reps = 50;

		t0 = now_ms_f();
		for (int i = 0; i < reps; i++)
			ocr_grey_thumb(after.rgb, after.width, after.height, ta, TW, TH);
		printf("  %-34s median %7.2f ms (mean of %d)\n", "ocr_grey_thumb 1080p -> 480x270",
		    (now_ms_f() - t0) / reps, reps);
		t0 = now_ms_f();
		for (int i = 0; i < reps; i++)
			ocr_changed_boxes(tb, ta, TW, TH, after.width, after.height, 8, boxes, 8);
		printf("  %-34s median %7.2f ms (mean of %d)\n", "ocr_changed_boxes 480x270",
		    (now_ms_f() - t0) / reps, reps);
	}
	printf("  changed boxes: %d", nb);
	for (int i = 0; i < nb; i++)
		printf("  %dx%d+%d+%d", boxes[i].w, boxes[i].h, boxes[i].x, boxes[i].y);
	printf("\n");
	if (nb <= 0) {
		fprintf(stderr, "ocr bench: no change seen\n");
		return 1;
	}
	/* Let the line settle, then use the settled frame. */
	{
		struct timespec ts = { 0, 300 * 1000000L };

		nanosleep(&ts, NULL);
		grab(c, &after);
	}
	if (outdir != NULL) {
		write_png(&after, outdir, "full.png");
		printf("  box0 %d %d %d %d\n", boxes[0].x, boxes[0].y, boxes[0].w, boxes[0].h);
	}

	for (int psm = 0; psm < 2; psm++) {
		TessPageSegMode mode = psm == 0 ? PSM_SPARSE_TEXT : PSM_AUTO;

		TessBaseAPISetPageSegMode(o->api, mode);
		printf("== page segmentation %s\n", psm == 0 ? "PSM_SPARSE_TEXT (default)" : "PSM_AUTO");
		for (int i = 0; i < nb; i++) {
			char name[64];

			for (int s = 2; s <= 3; s++) {
				snprintf(name, sizeof name, "changed box %d", i);
				measure(o, &after, name, boxes[i].x, boxes[i].y, boxes[i].w, boxes[i].h,
				    s, n);
			}
		}
		measure(o, &after, "xterm 1 window (6x13 font)", 20, 20, 610, 660, 2, n);
		measure(o, &after, "xterm 3 window (DejaVu 11)", 300, 700, 1000, 380, 2, n);
		measure(o, &after, "full frame", 0, 0, 0, 0, 1, full_runs);
	}
	TessBaseAPISetPageSegMode(o->api, PSM_SPARSE_TEXT);
	TessBaseAPISetVariable(o->api, "tessedit_do_invert", "1");
	printf("== PSM_SPARSE_TEXT, tessedit_do_invert 1 (tesseract's default)\n");
	measure(o, &after, "changed box 0", boxes[0].x, boxes[0].y, boxes[0].w, boxes[0].h, 2, n);
	measure(o, &after, "xterm 1 window (6x13 font)", 20, 20, 610, 660, 2, n);

	ocr_free(o);
	xcap_frame_free(&before);
	xcap_frame_free(&after);
	xcap_free(c);
	xerr_forget(d);
	XCloseDisplay(d);
	free(tb);
	free(ta);
	return 0;
}
