/*
 * capture.c - microbenchmark of daemon/x11/xcap.c against a running X server
 * (bench/capture.sh starts a private 1920x1080 Xvfb with xterms on it).
 *
 *   capture [-n N] [-i IMPORT_RUNS] [-o DIR]     (DISPLAY from the environment)
 *
 * Prints one table: per operation the median and p95 in µs and the output
 * size, then ratios against ImageMagick's `import` (a subprocess per call)
 * and against plain XGetImage. -o DIR writes the encoded images there.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <turbojpeg.h>

#include "derr.h"
#include "x11/xcap.h"
#include "x11/xerr.h"

extern char **environ;

struct stat_row {
	const char *name;
	double med, p95;
	size_t bytes;
	int n;
};

#define MAX_ROWS 32
static struct stat_row rows[MAX_ROWS];
static int nrows;
static double *samples;

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct stat_row *
record(const char *name, int n, size_t bytes)
{
	struct stat_row *r = &rows[nrows++];

	qsort(samples, (size_t)n, sizeof *samples, cmp_double);
	r->name = name;
	r->n = n;
	r->med = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	r->p95 = samples[(int)((n - 1) * 0.95 + 0.5)];
	r->bytes = bytes;
	return r;
}

static const struct stat_row *
find(const char *name)
{
	for (int i = 0; i < nrows; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

static void
die(const char *what, const struct derr *e)
{
	fprintf(stderr, "capture bench: %s: %s\n", what, e ? e->message : "failed");
	exit(1);
}

static void
save(const char *dir, const char *file, const struct xcap_image *img)
{
	char path[512];
	FILE *fp;

	if (dir == NULL)
		return;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	fp = fopen(path, "wb");
	if (fp == NULL)
		return;
	fwrite(img->data, 1, img->len, fp);
	fclose(fp);
}

/* grab (and encode if fmt >= 0) n times */
static void
run_grab(struct xcap *c, const char *name, int n, int max_width, int fmt, int quality,
    const char *dir, const char *file)
{
	struct xcap_frame f = { 0 };
	struct xcap_image img = { 0 };
	struct xcap_req q = { 0 };
	struct derr e;
	size_t bytes = 0;

	q.max_width = max_width;
	q.quality = quality;
	for (int i = -2; i < n; i++) {          /* two warm-up rounds */
		double t0 = now_us();

		if (fmt < 0) {
			if (xcap_grab(c, &q, &f, &e) != 0)
				die(name, &e);
			bytes = (size_t)f.width * (size_t)f.height * 3;
		} else {
			q.format = (enum xcap_format)fmt;
			xcap_image_free(&img);
			if (xcap_shot(c, &q, &f, &img, &e) != 0)
				die(name, &e);
			bytes = img.len;
		}
		if (i >= 0)
			samples[i] = now_us() - t0;
	}
	if (fmt >= 0)
		save(dir, file, &img);
	record(name, n, bytes);
	xcap_image_free(&img);
	xcap_frame_free(&f);
}

/* encode only, from one grabbed frame */
static void
run_encode(struct xcap *c, const char *name, int n, int max_width, int fmt, int quality)
{
	struct xcap_frame f = { 0 };
	struct xcap_image img = { 0 };
	struct xcap_req q = { 0 };
	struct derr e;

	q.max_width = max_width;
	if (xcap_grab(c, &q, &f, &e) != 0)
		die(name, &e);
	for (int i = -2; i < n; i++) {
		double t0 = now_us();

		xcap_image_free(&img);
		if (xcap_encode(&f, (enum xcap_format)fmt, quality, &img, &e) != 0)
			die(name, &e);
		if (i >= 0)
			samples[i] = now_us() - t0;
	}
	record(name, n, img.len);
	xcap_image_free(&img);
	xcap_frame_free(&f);
}

static void
run_xgetimage(Display *d, int n)
{
	Window root = DefaultRootWindow(d);
	int w = DisplayWidth(d, DefaultScreen(d)), h = DisplayHeight(d, DefaultScreen(d));

	for (int i = -2; i < n; i++) {
		double t0 = now_us();
		XImage *img = XGetImage(d, root, 0, 0, (unsigned)w, (unsigned)h, AllPlanes, ZPixmap);

		if (img == NULL)
			die("XGetImage", NULL);
		XDestroyImage(img);
		if (i >= 0)
			samples[i] = now_us() - t0;
	}
	record("raw XGetImage 1080p (no conversion)", n, (size_t)w * (size_t)h * 4);
}

static void
run_tjinit(int n)
{
	for (int i = -2; i < n; i++) {
		double t0 = now_us();
		tjhandle h = tjInitCompress();

		tjDestroy(h);
		if (i >= 0)
			samples[i] = now_us() - t0;
	}
	record("tjInitCompress + tjDestroy", n, 0);
}

static void
run_import(const char *display, int n, const char *dir)
{
	char out[512], dpy[64];
	size_t bytes = 0;

	snprintf(dpy, sizeof dpy, "%s", display);

	snprintf(out, sizeof out, "%s/import.jpg", dir ? dir : "/tmp");
	for (int i = -1; i < n; i++) {
		char a0[] = "import", a1[] = "-window", a2[] = "root", a3[] = "-display";
		char *argv[] = { a0, a1, a2, a3, dpy, out, NULL };
		double t0 = now_us();
		pid_t pid;
		int st;
		FILE *fp;

		if (posix_spawnp(&pid, "import", NULL, NULL, argv, environ) != 0)
			die("posix_spawnp import", NULL);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("import failed", NULL);
		if (i >= 0)
			samples[i] = now_us() - t0;
		fp = fopen(out, "rb");
		if (fp) {
			fseek(fp, 0, SEEK_END);
			bytes = (size_t)ftell(fp);
			fclose(fp);
		}
	}
	if (dir == NULL)
		unlink(out);
	record("ImageMagick import -window root (CLI)", n, bytes);
}

static void
ratio(const char *what, const char *slow, const char *fast)
{
	const struct stat_row *a = find(slow), *b = find(fast);

	if (a && b && b->med > 0)
		printf("  %-58s %8.1fx  (median %.0f vs %.0f µs)\n", what, a->med / b->med,
		    a->med, b->med);
}

int
main(int argc, char **argv)
{
	const char *display = getenv("DISPLAY"), *dir = NULL;
	int n = 100, nimport = 10, opt;
	struct xcap *c;
	Display *d;

	while ((opt = getopt(argc, argv, "n:i:o:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 'i': nimport = atoi(optarg); break;
		case 'o': dir = optarg; break;
		default:
			fprintf(stderr, "usage: capture [-n N] [-i IMPORT_RUNS] [-o DIR]\n");
			return 2;
		}
	}
	if (n < 1 || nimport < 0 || display == NULL) {
		fprintf(stderr, "capture bench: need DISPLAY and -n >= 1\n");
		return 2;
	}
	samples = malloc(sizeof *samples * (size_t)(n > nimport ? n : nimport + 1));
	xerr_init();
	d = XOpenDisplay(display);
	if (d == NULL) {
		fprintf(stderr, "capture bench: cannot open %s\n", display);
		return 1;
	}
	xerr_watch(d);
	c = xcap_new(d);

	run_grab(c, "grab 1080p (SHM, -> RGB)", n, 0, -1, 0, NULL, NULL);
	if (!xcap_uses_shm(c))
		fprintf(stderr, "capture bench: warning: MIT-SHM not used\n");
	{
		struct xcap_frame f = { 0 };
		struct xcap_req q = { .x = 480, .y = 270, .w = 960, .h = 540 };
		struct derr e;

		for (int i = -2; i < n; i++) {
			double t0 = now_us();

			if (xcap_grab(c, &q, &f, &e) != 0)
				die("region", &e);
			if (i >= 0)
				samples[i] = now_us() - t0;
		}
		record("grab region 960x540 (SHM, -> RGB)", n, (size_t)960 * 540 * 3);
		xcap_frame_free(&f);
	}
	run_grab(c, "grab + downscale -> 1280x720", n, 1280, -1, 0, NULL, NULL);
	run_grab(c, "grab + downscale -> 960x540", n, 960, -1, 0, NULL, NULL);
	run_encode(c, "JPEG encode only 1080p q72", n, 0, XCAP_JPEG, 72);
	run_encode(c, "JPEG encode only 1280x720 q72", n, 1280, XCAP_JPEG, 72);
	run_grab(c, "shot JPEG 1080p q72 (grab+encode)", n, 0, XCAP_JPEG, 72, dir, "full.jpg");
	run_grab(c, "shot JPEG max_width 1280 q72", n, 1280, XCAP_JPEG, 72, dir, "w1280.jpg");
	run_grab(c, "shot JPEG max_width 960 q72", n, 960, XCAP_JPEG, 72, dir, "w960.jpg");
	run_grab(c, "shot JPEG 1080p q90 (4:4:4)", n, 0, XCAP_JPEG, 90, dir, "full-q90.jpg");
	run_encode(c, "PNG encode only 1080p", n / 4 > 5 ? n / 4 : 5, 0, XCAP_PNG, 0);
	run_grab(c, "shot PNG 1080p", n / 4 > 5 ? n / 4 : 5, 0, XCAP_PNG, 0, dir, "full.png");
	run_grab(c, "shot PNG max_width 1280", n / 4 > 5 ? n / 4 : 5, 1280, XCAP_PNG, 0, dir,
	    "w1280.png");
	run_tjinit(n);
	run_xgetimage(d, n / 4 > 5 ? n / 4 : 5);
	xcap_disable_shm(c);
	run_grab(c, "grab 1080p via XGetImage (SHM off, -> RGB)", n / 4 > 5 ? n / 4 : 5, 0, -1, 0,
	    NULL, NULL);
	run_grab(c, "shot JPEG 1080p q72 via XGetImage", n / 4 > 5 ? n / 4 : 5, 0, XCAP_JPEG, 72,
	    NULL, NULL);
	if (nimport > 0)
		run_import(display, nimport, dir);

	printf("\n%-46s %6s %10s %10s %12s\n", "operation", "n", "median µs", "p95 µs", "output");
	for (int i = 0; i < nrows; i++) {
		char sz[32] = "";

		if (rows[i].bytes >= 1024 * 1024)
			snprintf(sz, sizeof sz, "%.2f MB", rows[i].bytes / 1048576.0);
		else if (rows[i].bytes > 0)
			snprintf(sz, sizeof sz, "%.1f KB", rows[i].bytes / 1024.0);
		printf("%-46s %6d %10.*f %10.*f %12s\n", rows[i].name, rows[i].n,
		    rows[i].med < 100 ? 1 : 0, rows[i].med, rows[i].p95 < 100 ? 1 : 0, rows[i].p95, sz);
	}
	printf("\nratios (median):\n");
	ratio("import CLI / our shot JPEG 1080p q72", "ImageMagick import -window root (CLI)",
	    "shot JPEG 1080p q72 (grab+encode)");
	ratio("import CLI / our shot JPEG max_width 1280",
	    "ImageMagick import -window root (CLI)", "shot JPEG max_width 1280 q72");
	ratio("XGetImage grab / SHM grab (both -> RGB)",
	    "grab 1080p via XGetImage (SHM off, -> RGB)", "grab 1080p (SHM, -> RGB)");
	ratio("XGetImage shot JPEG / SHM shot JPEG (1080p q72)",
	    "shot JPEG 1080p q72 via XGetImage", "shot JPEG 1080p q72 (grab+encode)");
	ratio("shot JPEG 1080p / shot JPEG max_width 1280",
	    "shot JPEG 1080p q72 (grab+encode)", "shot JPEG max_width 1280 q72");

	xcap_free(c);
	xerr_forget(d);
	XCloseDisplay(d);
	free(samples);
	return 0;
}
