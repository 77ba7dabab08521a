/*
 * fanout.h - one call per item, all at once: a thread each, joined before
 * fanout_run returns. Used to ask every detmd of a fleet in parallel
 * (detmd's api_fleet.c, detm-mcp's merge.c) so that hung ones cost one
 * timeout, not one each.
 *
 * Invariants: at most FANOUT_MAX threads at once (items past that run in
 * later rounds); an item whose thread cannot start runs on the caller's
 * thread; fn gets a pointer to its item and nothing is shared by fanout
 * between items. Does not: time anything out (fn's own limits do), or
 * cancel.
 */
#ifndef DETM_FANOUT_H
#define DETM_FANOUT_H

#include <stddef.h>

#define FANOUT_MAX 32           /* threads at once */
#define FANOUT_STACK (512u * 1024u)

/* Calls fn(base + i * size) for i in [0, n), at once, and waits for all. */
void fanout_run(void *base, size_t n, size_t size, void *(*fn)(void *));

#endif
