/*
 * nowait.h - a thread's promise not to wait, and how code keeps it.
 *
 * An HTTP worker serves many connections, so a route it runs itself must
 * not block. Some routes are quick nearly always and slow only sometimes: a
 * click is two round trips to an X server, unless another thread holds the
 * display, the connection must be opened first, or the X server stopped
 * answering. http_side.c runs such a route first in nowait mode on the worker.
 * Code on its path that would wait calls nowait_refuse() before it has
 * changed anything a second run could not repeat; the route fails, and
 * http_side.c runs it again on a side worker, where waiting is allowed.
 *
 * States, per thread: OFF (the default), ON (nowait_begin), ON+REFUSED
 * (nowait_refuse), PASSED (nowait_pass: the run has changed something a
 * second run would repeat, so from there on it must finish where it is,
 * waiting if it has to). nowait_end returns to OFF and says whether a
 * refusal happened. Invariants: refusals happen only while ON; a refused
 * run never passes.
 *
 * Does not: know HTTP, queue work, or time anything (a deadline for X
 * round trips is xerr.c's, taken when nowait_active()).
 */
#ifndef DETM_NOWAIT_H
#define DETM_NOWAIT_H

#include <stdbool.h>

#include "derr.h"

void nowait_begin(void);
/* Back to OFF; true if something refused since nowait_begin. */
bool nowait_end(void);
/* True between nowait_begin and nowait_end on this thread, until
 * nowait_pass: code that would wait must refuse (nowait_refuse). */
bool nowait_active(void);
/* The point of no return (a click was sent): waits are allowed again, for
 * the rest of the run, and a refusal is a bug. No-op when not active. */
void nowait_pass(void);
/* True if something refused since nowait_begin on this thread: the run is
 * void, so code on the way out (a log write, say) must not record it. */
bool nowait_refused(void);
/* Marks the refusal and fills e (DERR_UNAVAILABLE, "would wait: why";
 * never seen by a client, http_side.c reruns the route); returns -1. Only
 * while nowait_active(). */
int nowait_refuse(struct derr *e, const char *why);

#endif
