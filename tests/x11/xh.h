/*
 * xh.h - the x11 suite's harness: real Xvfb servers and real X clients.
 *
 * Tests call CHECK() (tests/harness.h); each test file exports a table
 * ended by { NULL, NULL }. xh_server starts a private Xvfb (-displayfd,
 * -nolisten tcp) and opens an Xlib connection to it; xh_spawn runs a client
 * (xterm, xlogo, ...) on it. Everything is killed at exit.
 */
#ifndef DETM_XH_H
#define DETM_XH_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <X11/Xlib.h>

#include "harness.h"

struct xh_server {
	pid_t pid;
	char name[16];          /* ":123" */
	Display *d;             /* opened with xerr_watch; closed by xh_server_stop */
	int width, height;
};

/* Starts Xvfb at WxH (depth 24). Returns 0 or -1 (message on stderr). */
int xh_server_start(struct xh_server *s, int width, int height);
void xh_server_stop(struct xh_server *s);
/* Runs argv[0] with DISPLAY set to s->name; returns the pid or -1. */
pid_t xh_spawn(const struct xh_server *s, char *const argv[]);
void xh_kill(pid_t pid);
/* Waits (up to timeout_ms) until a top-level window whose WM_NAME or
 * WM_CLASS contains needle is mapped; returns its id or 0. */
Window xh_wait_window(Display *d, const char *needle, int timeout_ms);
/* Polls until pred(arg) is true or timeout_ms passes. */
bool xh_wait_until(bool (*pred)(void *), void *arg, int timeout_ms);
void xh_sleep_ms(int ms);

/* Test tables. */
extern const struct harness_test input_tests[];
extern const struct harness_test window_tests[];
extern const struct harness_test capture_tests[];
extern const struct harness_test ocr_tests[];
extern const struct harness_test typing_tests[];
extern const struct harness_test lease_tests[];
extern const struct harness_test typing_load_tests[];

#endif
