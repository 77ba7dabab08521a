/*
 * xerr.c - per-thread X error capture and a non-fatal I/O error path.
 *
 * Owns: the process-wide Xlib error handlers (installed once), a
 * thread-local "first error since xerr_begin", and a small table of
 * Display pointers whose I/O failed. Invariant: handlers never call exit()
 * and never call Xlib on the failing Display.
 */
#include <pthread.h>
#include <string.h>

#include <X11/Xlib.h>
#include <X11/Xlibint.h>

#include "log.h"
#include "xerr.h"

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

int
xerr_end(Display *d, struct derr *e, const char *what)
{
	char text[128];

	if (xerr_io_dead(d))
		return derr_set(e, DERR_UNAVAILABLE, NULL, "%s: the X server is gone", what);
	XSync(d, False);
	if (xerr_io_dead(d))
		return derr_set(e, DERR_UNAVAILABLE, NULL, "%s: the X server is gone", what);
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
