/*
 * xerr.h - X protocol errors as derr values, per thread.
 *
 * Xlib reports protocol errors (BadWindow, BadValue, ...) through one
 * process-wide handler. xerr_init installs a handler that records the first
 * error into a thread-local slot instead of exiting, so a thread that holds
 * a display connection (see display.h: one thread per connection at a time)
 * can bracket its requests:
 *
 *     xerr_begin();
 *     XMoveWindow(d, w, x, y);
 *     if (xerr_end(d, e, "move window") != 0) goto out;   // XSyncs, then checks
 *
 * xerr_init also installs an I/O-error exit handler that returns instead of
 * calling exit(), so a dead X server marks the connection dead (see
 * xerr_io_dead) rather than taking the daemon down.
 *
 * Does not: retry, reconnect, or log. Callers decide.
 */
#ifndef DETM_XERR_H
#define DETM_XERR_H

#include <stdbool.h>

#include <X11/Xlib.h>

#include "core/util.h"
#include "derr.h"

/* Once per process, before any XOpenDisplay; also calls XInitThreads. */
void xerr_init(void);

/* Forget any error recorded on this thread. */
void xerr_begin(void);
/* XSync(d) (in nowait mode a round trip with xerr_reply's deadline), then:
 * 0 if no protocol error happened on this thread since
 * xerr_begin; else fills e (BadWindow/BadMatch/BadDrawable -> DERR_NOT_FOUND
 * "window not found" style; others DERR_INTERNAL) with `what` in the message
 * and returns -1. A dead connection gives DERR_UNAVAILABLE. */
int xerr_end(Display *d, struct derr *e, const char *what);
/* The reply to the XCB request numbered seq, sent by the caller on d's
 * connection: *reply is the caller's to free(); NULL when the server
 * answered with an X error, which is then recorded as if the error handler
 * had seen it (xerr_last). Returns 0 so; -1 with e (DERR_UNAVAILABLE) when
 * the connection is dead. On a thread in nowait mode (nowait.h) it waits at
 * most 3 s: a silent server then has its connection shut down and marked
 * dead (the display's owner reconnects at its next lease). Elsewhere it
 * waits as long as it takes. */
int xerr_reply(Display *d, unsigned int seq, void **reply, struct derr *e, const char *what);
/* The X error code recorded since xerr_begin (0 if none). Does not sync. */
int xerr_last(void);

/* After every XOpenDisplay: make an I/O error on d non-fatal. */
void xerr_watch(Display *d);
/* Before XCloseDisplay(d): forget d (malloc may reuse the pointer). */
void xerr_forget(Display *d);

/* True once the connection's I/O failed (the server died or went away). */
bool xerr_io_dead(Display *d);

#endif
