/*
 * desktop_bench.c - times one click three ways on the same display:
 *
 *   http   POST /api/desktop/action {"task_id","action":"click","x","y","settle_ms":0}
 *          (the input alone: its effect unwatched; bench/effect.sh times the verdict)
 *          through detmd (libcurl, one kept-alive connection); TASK_ID "-"
 *          sends no task (the shared display, nothing logged)
 *   xtest  raw XTest in this process: motion + press + release + XSync
 *          (the floor: what detmd itself has to do)
 *
 * and prints "name n p50_us p95_us mean_us" lines for bench/desktop.sh,
 * which adds the xdotool and ImageMagick runs and the ratios.
 *
 * usage: desktop_bench URL TASK_ID DISPLAY XAUTHORITY N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>
#include <curl/curl.h>

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

static void
report(const char *name, long long *t, int n)
{
	long long sum = 0;
	int i;

	qsort(t, (size_t)n, sizeof *t, cmp_ll);
	for (i = 0; i < n; i++)
		sum += t[i];
	printf("%s %d %lld %lld %lld\n", name, n, t[n / 2], t[n * 95 / 100], sum / n);
}

static size_t
sink(char *p, size_t s, size_t n, void *u)
{
	(void)p;
	(void)u;
	return s * n;
}

int
main(int argc, char **argv)
{
	const char *url, *task, *disp;
	long long *t;
	char full[512], body[256];
	struct curl_slist *h = NULL;
	Display *d;
	CURL *c;
	long code = 0;
	int n, i;

	if (argc != 6) {
		fprintf(stderr, "usage: desktop_bench URL TASK_ID DISPLAY XAUTHORITY N\n");
		return 2;
	}
	url = argv[1];
	task = argv[2];
	disp = argv[3];
	setenv("XAUTHORITY", argv[4], 1);
	n = atoi(argv[5]);
	if (n < 10)
		n = 10;
	t = calloc((size_t)n, sizeof *t);

	curl_global_init(CURL_GLOBAL_DEFAULT);
	c = curl_easy_init();
	snprintf(full, sizeof full, "%s/api/desktop/action", url);
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, full);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
	for (i = -50; i < n; i++) {     /* 50 warm-up calls */
		long long t0;

		if (strcmp(task, "-") == 0)
			snprintf(body, sizeof body, "{\"action\":\"click\",\"x\":%d,\"y\":%d,\"settle_ms\":0}",
			    100 + (i & 63), 100 + (i & 31));
		else
			snprintf(body, sizeof body,
			    "{\"task_id\":\"%s\",\"action\":\"click\",\"x\":%d,\"y\":%d,\"settle_ms\":0}", task,
			    100 + (i & 63), 100 + (i & 31));
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		t0 = now_us();
		if (curl_easy_perform(c) != CURLE_OK ||
		    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK || code != 200) {
			fprintf(stderr, "desktop_bench: click failed (HTTP %ld)\n", code);
			return 1;
		}
		if (i >= 0)
			t[i] = now_us() - t0;
	}
	report("http_click", t, n);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	curl_global_cleanup();

	d = XOpenDisplay(disp);
	if (d == NULL) {
		fprintf(stderr, "desktop_bench: cannot open %s\n", disp);
		return 1;
	}
	for (i = -50; i < n; i++) {
		long long t0 = now_us();

		XTestFakeMotionEvent(d, -1, 100 + (i & 63), 100 + (i & 31), CurrentTime);
		XTestFakeButtonEvent(d, 1, True, CurrentTime);
		XTestFakeButtonEvent(d, 1, False, CurrentTime);
		XSync(d, False);
		if (i >= 0)
			t[i] = now_us() - t0;
	}
	report("xtest_click", t, n);
	XCloseDisplay(d);
	free(t);
	return 0;
}
