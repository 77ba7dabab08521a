/*
 * rec_bench.c - the recording bench's three roles (bench/record.sh):
 *
 *   rec_bench capture DIR N      grab N 1080p frames of $DISPLAY (100 ms
 *                                apart) with xcap and store them as JPEG q95
 *                                files DIR/000001.jpg... (the design doc's
 *                                frames-on-disk path)
 *   rec_bench encode DIR N OUT   detm's encoder (daemon/recorder/enc.c) on the same
 *                                frames: decodes each JPEG (not timed), then
 *                                times enc_frame on this thread's CPU clock;
 *                                prints "encode_cpu_ms_per_frame X"
 *   rec_bench measure CMD...     runs CMD and prints its total CPU ms
 *                                (user+sys, all threads) and peak RSS (KB)
 *                                from wait4, for both encoders alike
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <X11/Xlib.h>
#include <turbojpeg.h>

#include "recorder/enc.h"
#include "x11/xcap.h"

static double
thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
capture(const char *dir, int n)
{
	Display *d = XOpenDisplay(NULL);
	struct xcap *c;
	struct xcap_frame f = { 0 };
	struct xcap_req q = { 0 };
	struct derr e;
	char path[4096];

	if (d == NULL) {
		fprintf(stderr, "capture: no display\n");
		return 1;
	}
	c = xcap_new(d);
	for (int i = 1; i <= n; i++) {
		struct xcap_image img = { 0 };
		FILE *out;

		if (xcap_grab(c, &q, &f, &e) != 0 || xcap_encode(&f, XCAP_JPEG, 95, &img, &e) != 0) {
			fprintf(stderr, "capture: %s\n", e.message);
			return 1;
		}
		snprintf(path, sizeof path, "%s/%06d.jpg", dir, i);
		out = fopen(path, "wb");
		if (out == NULL || fwrite(img.data, 1, img.len, out) != img.len || fclose(out) != 0) {
			fprintf(stderr, "capture: cannot write %s\n", path);
			return 1;
		}
		xcap_image_free(&img);
		usleep(100000);
	}
	xcap_frame_free(&f);
	xcap_free(c);
	XCloseDisplay(d);
	return 0;
}

static int
encode(const char *dir, int n, const char *out)
{
	tjhandle tj = tjInitDecompress();
	struct enc *en = NULL;
	unsigned char *rgb = NULL;
	double cpu = 0;
	struct derr e;
	char path[4096];

	for (int i = 1; i <= n; i++) {
		unsigned char *jpg;
		long len;
		int w, h, sub, cs;
		FILE *f;

		snprintf(path, sizeof path, "%s/%06d.jpg", dir, i);
		if ((f = fopen(path, "rb")) == NULL)
			return 1;
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		rewind(f);
		jpg = malloc((size_t)len);
		if (fread(jpg, 1, (size_t)len, f) != (size_t)len)
			return 1;
		fclose(f);
		tjDecompressHeader3(tj, jpg, (unsigned long)len, &w, &h, &sub, &cs);
		if (rgb == NULL)
			rgb = malloc((size_t)w * (size_t)h * 3);
		tjDecompress2(tj, jpg, (unsigned long)len, rgb, w, w * 3, h, TJPF_RGB, 0);
		free(jpg);
		if (en == NULL && enc_open(out, w, h, NULL, &en, &e) != 0) {
			fprintf(stderr, "encode: %s\n", e.message);
			return 1;
		}
		double t0 = thread_cpu_ms();
		if (enc_frame(en, rgb, (int64_t)(i - 1) * 500, &e) != 0) {
			fprintf(stderr, "encode: %s\n", e.message);
			return 1;
		}
		cpu += thread_cpu_ms() - t0;
	}
	double t0 = thread_cpu_ms();
	int64_t held;

	if (enc_close(en, (int64_t)n * 500, &held, &e) != 0) {
		fprintf(stderr, "encode: %s\n", e.message);
		return 1;
	}
	cpu += thread_cpu_ms() - t0;
	printf("encode_cpu_ms_per_frame %.2f\n", cpu / n);
	free(rgb);
	tjDestroy(tj);
	return 0;
}

static int
measure(char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return 1;
	printf("cpu_ms %.1f\nmaxrss_kb %ld\n",
	    (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3, ru.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int
main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "capture") == 0)
		return capture(argv[2], atoi(argv[3]));
	if (argc == 5 && strcmp(argv[1], "encode") == 0)
		return encode(argv[2], atoi(argv[3]), argv[4]);
	if (argc >= 3 && strcmp(argv[1], "measure") == 0)
		return measure(argv + 2);
	fprintf(stderr, "usage: rec_bench capture DIR N | encode DIR N OUT | measure CMD...\n");
	return 2;
}
