/*
 * gate_bench.c - the smart-wait gate's cost per tick on a real display:
 * MIT-SHM grab of the whole screen downscaled to the diff width (xcap.c),
 * greyscale (gate_grey) and the diff against the previous thumbnail
 * (gate_diff) - exactly what a skipped tick costs in detmd.
 *
 * usage: gate_bench DISPLAY DIFF_WIDTH N   -> "gate WxH n p50_us p95_us"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "derr.h"
#include "x11/gate.h"
#include "x11/xcap.h"
#include "x11/xerr.h"

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int
cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	struct xcap_frame f = { 0 };
	struct derr e;
	struct xcap *c;
	uint8_t *prev = NULL, *cur = NULL;
	long long *t;
	volatile double sink = 0;
	Display *d;
	int n, i;

	if (argc != 4)
		return fprintf(stderr, "usage: gate_bench DISPLAY DIFF_WIDTH N\n"), 2;
	n = atoi(argv[3]);
	xerr_init();
	if ((d = XOpenDisplay(argv[1])) == NULL)
		return fprintf(stderr, "cannot open %s\n", argv[1]), 1;
	xerr_watch(d);
	c = xcap_new(d);
	t = calloc((size_t)n, sizeof *t);
	for (i = -20; i < n; i++) {
		struct xcap_req q = { .max_width = atoi(argv[2]) };
		long long t0 = now_us();
		size_t np;

		if (xcap_grab(c, &q, &f, &e) != 0)
			return fprintf(stderr, "grab: %s\n", e.message), 1;
		np = (size_t)f.width * (size_t)f.height;
		if (cur == NULL) {
			cur = calloc(np, 1);
			prev = calloc(np, 1);
		}
		gate_grey(&f, cur);
		sink += gate_diff(prev, cur, np, GATE_PIXEL_THRESHOLD);
		memcpy(prev, cur, np);
		if (i >= 0)
			t[i] = now_us() - t0;
	}
	qsort(t, (size_t)n, sizeof *t, cmp_ll);
	printf("gate %dx%d %d %lld %lld\n", f.screen_w, f.screen_h, n, t[n / 2], t[n * 95 / 100]);
	xcap_frame_free(&f);
	xcap_free(c);
	XCloseDisplay(d);
	free(t);
	free(prev);
	free(cur);
	return sink < 0;
}
