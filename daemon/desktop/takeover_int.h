/*
 * takeover_int.h - between takeover.c (the driver state) and
 * takeover_input.c (the human's input): private to those two files.
 */
#ifndef DETM_TAKEOVER_INT_H
#define DETM_TAKEOVER_INT_H

#include <stdint.h>

#include "core/util.h"
#include "derr.h"
#include "store/store.h"

/* What one batch of input did, added to the driver's counters. */
struct takeover_counts {
	long clicks, keystrokes, chords, scrolls, drags;
};

/* Checks the lease and marks an input batch in flight (release waits for
 * it): 0, or -1 with e (CONFLICT / HUMAN_CONTROL sentences). On success
 * *st is the store to audit into and *typed the characters of a run of
 * text that earlier batches left open (now the caller's). */
int takeover_input_begin(const char *task_id, const char *lease, struct store **st,
    long *typed, struct derr *e);
/* Ends the batch: adds c, refreshes the idle clock; typed: the characters
 * of the run of text the batch ended in (audited when the run ends: at a
 * later non-text event or at release). */
void takeover_input_end(const char *task_id, const struct takeover_counts *c, long typed);

#endif
