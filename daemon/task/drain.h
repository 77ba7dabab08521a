/*
 * drain.h - the daemon's drain switch (issue 39): before a pod goes away,
 * its detmd stops taking new tasks while the ones it runs go on.
 *
 * Once drain_start has returned, every task_register is refused with
 * DERR_DRAINING (503 "draining"; it is checked inside the registration's
 * transaction), and no registration that began before it is left
 * uncommitted: drain_start takes the store lock, which commits an open
 * batch first. So a count of unfinished tasks read after drain_start sees
 * every task this daemon will ever hold until it restarts.
 *
 * "Drained" means no task is unfinished: none is active or paused (a
 * paused task is an unfinished one an operator or a human holds; handing it
 * back is theirs to decide, drain does not cancel anything).
 *
 * The switch lives in memory: a restarted detmd takes tasks again. There
 * is no undrain (a drained pod is replaced, not reused).
 *
 * Not here: HTTP (api_probe.c), what a route answers while draining.
 */
#ifndef DETM_DRAIN_H
#define DETM_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "derr.h"
#include "store/store.h"

#define DRAIN_WAIT_MAX_S 600     /* the longest POST /api/drain?wait= */

struct drain_state {
	bool draining;
	int64_t since_ms;       /* wall time drain_start first ran, 0 if not draining */
	int64_t active, paused; /* unfinished tasks, -1 when the count failed */
	bool drained;           /* draining and no unfinished task */
};

/* Turns drain on (idempotent: a second call keeps the first time). */
void drain_start(struct store *st);
/* Whether drain is on (lock-free; callers inside a store_tx body use it). */
bool drain_on(void);
/* Fills e with DERR_DRAINING for a refused registration; returns -1. */
int drain_refuse(struct derr *e);
/* Reads the state (a read snapshot). 0, or -1 with e (DERR_IO_ERROR or
 * DERR_INTERNAL: the count failed; out->active is -1 then). */
int drain_state(struct store *st, struct drain_state *out, struct derr *e);
/* Waits until drained, wait_s seconds at most, or drain_shutdown: polls
 * the count four times a second. Fills out with the last state read. */
int drain_wait(struct store *st, int wait_s, struct drain_state *out, struct derr *e);
/* Ends every drain_wait at once (daemon shutdown). */
void drain_shutdown(void);

#endif
