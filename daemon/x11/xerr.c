/*
 * xerr.c - per-thread X error capture and a non-fatal I/O error path.
 *
 * Owns: the process-wide Xlib error handlers (installed once), a
 * thread-local "first error since xerr_begin", and a small table of
 * Display pointers whose I/O failed. Invariant: handlers never call exit()
 * and never call Xlib on the failing Display.
 *
 * Round trips: xerr_reply and xerr_end wait for the X server. On a thread in
 * nowait mode (nowait.h: an HTTP worker) they wait at most QUICK_MS, through
 * XCB with poll(); a server that stays silent that long (stopped, or
 * swamped) has its connection shut down and marked dead, so the worker is
 * free again and the display's owner reconnects at its next lease. Anywhere
 * else they wait as long as it takes, as Xlib does.
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <X11/Xlib.h>
#include <X11/Xlib-xcb.h>
#include <xcb/xcbext.h>     /* xcb_wait_for_reply, xcb_poll_for_reply: by request number */
#include <X11/Xlibint.h>

#include "core/log.h"
#include "core/nowait.h"
#include "xerr.h"

/* Longer than any round trip of a quick action to a live server, even on a
 * swamped machine; short enough that a stopped Xvfb frees an HTTP worker. */
#define QUICK_MS 3000

static _Thread_local int last_error;
static _Thread_local unsigned char last_request;

#define DEAD_MAX 64
static pthread_mutex_t dead_lock = PTHREAD_MUTEX_INITIALIZER;
static Display *dead[DEAD_MAX];

static int
on_error(Display *d, XErrorEvent *ev)
{
	(void)d;
	if (last_error == 0) {
		last_error = ev->error_code;
		last_request = ev->request_code;
	}
	return 0;
}

static void
mark_dead(Display *d)
{
	size_t i;

	pthread_mutex_lock(&dead_lock);
	for (i = 0; i < DEAD_MAX; i++)
		if (dead[i] == d)
			goto out;
	for (i = 0; i < DEAD_MAX; i++)
		if (dead[i] == NULL) {
			dead[i] = d;
			break;
		}
out:
	pthread_mutex_unlock(&dead_lock);
}

static int
on_io_error(Display *d)
{
	mark_dead(d);
	return 0;
}

/* Called by Xlib after on_io_error; returning (instead of exit()) leaves the
 * Display unusable but the process alive (libX11 >= 1.7). */
static void
on_io_exit(Display *d, void *user)
{
	(void)user;
	mark_dead(d);
}

void
xerr_init(void)
{
	XInitThreads();
	XSetErrorHandler(on_error);
	XSetIOErrorHandler(on_io_error);
}

bool
xerr_io_dead(Display *d)
{
	bool r = false;
	size_t i;

	pthread_mutex_lock(&dead_lock);
	for (i = 0; i < DEAD_MAX; i++)
		if (dead[i] == d)
			r = true;
	pthread_mutex_unlock(&dead_lock);
	return r;
}

void
xerr_watch(Display *d)
{
	XSetIOErrorExitHandler(d, on_io_exit, NULL);
}

void
xerr_forget(Display *d)
{
	size_t i;

	pthread_mutex_lock(&dead_lock);
	for (i = 0; i < DEAD_MAX; i++)
		if (dead[i] == d)
			dead[i] = NULL;
	pthread_mutex_unlock(&dead_lock);
}

void
xerr_begin(void)
{
	last_error = 0;
	last_request = 0;
}

int
xerr_last(void)
{
	return last_error;
}

static int
gone(struct derr *e, const char *what)
{
	return derr_set(e, DERR_UNAVAILABLE, NULL, "%s: the X server is gone", what);
}

/* 0 when seq's reply (or error) came, 1 after QUICK_MS without it. */
static int
reply_timed(xcb_connection_t *c, unsigned int seq, void **reply, xcb_generic_error_t **err)
{
	int64_t end = mono_us() + (int64_t)QUICK_MS * 1000;
	struct pollfd p = { .fd = xcb_get_file_descriptor(c), .events = POLLIN };

	xcb_flush(c);
	/* Reads what the socket has without blocking; true once seq is in,
	 * or the connection failed (then *reply and *err stay NULL). */
	while (!xcb_poll_for_reply(c, seq, reply, err)) {
		int64_t left = end - mono_us();

		if (left <= 0)
			return 1;
		(void)poll(&p, 1, (int)((left + 999) / 1000));
	}
	return 0;
}

int
xerr_reply(Display *d, unsigned int seq, void **reply, struct derr *e, const char *what)
{
	xcb_connection_t *c = XGetXCBConnection(d);
	xcb_generic_error_t *err = NULL;

	*reply = NULL;
	if (xerr_io_dead(d))
		return gone(e, what);
	if (!nowait_active()) {
		*reply = xcb_wait_for_reply(c, seq, &err);
	} else if (reply_timed(c, seq, reply, &err) != 0) {
		xcb_discard_reply(c, seq);
		/* Xlib then meets EOF at its next read, as if the server had
		 * died, and XCloseDisplay does not wait for an answer. */
		shutdown(xcb_get_file_descriptor(c), SHUT_RDWR);
		mark_dead(d);
		log_warn("X server of display %s silent for %d ms: connection dropped",
		    DisplayString(d), QUICK_MS);
		return derr_set(e, DERR_UNAVAILABLE, NULL,
		    "%s: the X server did not answer within %d ms (stopped or swamped); "
		    "detmd dropped its connection and reconnects at the next call", what, QUICK_MS);
	}
	if (err != NULL) {
		if (last_error == 0) {
			last_error = err->error_code;
			last_request = err->major_code;
		}
		free(err);
		return 0;
	}
	if (*reply == NULL) {
		mark_dead(d);
		return gone(e, what);
	}
	return 0;
}

/* XSync, with nowait mode's deadline: a reply to GetInputFocus through
 * XCB, then Xlib reads what came before it, running the error handler for
 * its own requests' errors. */
static int
sync_timed(Display *d, struct derr *e, const char *what)
{
	xcb_get_input_focus_cookie_t ck = xcb_get_input_focus(XGetXCBConnection(d));
	void *r = NULL;

	if (xerr_reply(d, ck.sequence, &r, e, what) != 0)
		return -1;
	free(r);
	(void)XEventsQueued(d, QueuedAfterReading);
	return 0;
}

int
xerr_end(Display *d, struct derr *e, const char *what)
{
	char text[128];

	if (xerr_io_dead(d))
		return gone(e, what);
	if (!nowait_active())
		XSync(d, False);
	else if (sync_timed(d, e, what) != 0)
		return -1;
	if (xerr_io_dead(d))
		return gone(e, what);
	if (last_error == 0)
		return 0;
	XGetErrorText(d, last_error, text, sizeof text);
	log_debug("X error in %s: %s (request %u)", what, text, last_request);
	switch (last_error) {
	case BadWindow:
	case BadDrawable:
		return derr_set(e, DERR_NOT_FOUND, "window_id", "%s: no such window", what);
	case BadMatch:
	case BadValue:
		return derr_set(e, DERR_INVALID, NULL, "%s: the X server refused it (%s)", what, text);
	default:
		return derr_set(e, DERR_INTERNAL, NULL, "%s: X error %s", what, text);
	}
}
