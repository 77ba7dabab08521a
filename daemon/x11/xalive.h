/*
 * xalive.h - does a local X server answer? A probe that never blocks.
 *
 * A thread waiting for a display that another thread holds cannot tell a
 * busy holder from one stuck in Xlib on a stopped (SIGSTOP) or hung X
 * server: Xlib has no timeout. A probe opens a new connection to the
 * server's local socket (/tmp/.X11-unix/XN), sends the connection setup
 * (with the display's cookie when it has one) and reports whether the
 * server has started to answer. Any answer counts, a refusal too: only a
 * server that reads nothing and says nothing is unresponsive.
 *
 * Invariants: no call blocks (a non-blocking socket, poll() with a zero
 * timeout); the probe never speaks past the setup and never touches an
 * Xlib connection, so a probe that is given up changes nothing on the
 * server but one client that came and went.
 *
 * Does not: time anything (the caller keeps the deadline), reach a server
 * over TCP (xalive_start fails: the caller waits as Xlib would), or hold
 * any lock.
 */
#ifndef DETM_XALIVE_H
#define DETM_XALIVE_H

#include <stddef.h>

/* Starts a probe of the server of display `name` (":N" or ":N.S"), with
 * cookie (cookie_len bytes of MIT-MAGIC-COOKIE-1) or none (NULL). Returns
 * the probe's descriptor, or -1 when there is nothing to probe locally
 * (not ":N", no socket there, connection refused). The caller closes the
 * descriptor (xalive_end). */
int xalive_start(const char *name, const unsigned char *cookie, size_t cookie_len);
/* 1 once the server has answered (or closed the probe: it is alive enough
 * to read it), 0 while it has not. Never blocks. */
int xalive_answered(int fd);
/* Closes the probe (-1 ok). */
void xalive_end(int fd);

#endif
