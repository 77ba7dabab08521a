/*
 * waits_check.c - the wait engine's invariants (waits_check.h), asserted
 * in debug and ASan builds and compiled out under NDEBUG.
 *
 * Owns nothing and changes nothing: it reads the copies WAITS_CHECK_LOCKED
 * makes under the engine's mutex.
 */
#include "waits_check.h"

#include <assert.h>

#include "core/util.h"

void
waits_check_job(const struct wait_view *v)
{
#ifndef NDEBUG
	assert(id_valid(v->id));
	assert(v->has_criteria);
	/* One place at a time: the ring, a worker, or waiting for next_us. */
	assert(!(v->queued && v->running));
	/* Done is set once before the job leaves the table; a job in the
	 * table or the ring is never removed (finish_end_locked takes it out
	 * of both under the same lock). */
	assert(!v->removed || v->done);
	assert(!v->removed);
	assert(!v->in_ring || v->queued);
	assert(v->evaluations >= 0 && v->skipped >= 0);
	assert(v->deadline_ms >= v->created_ms);
#else
	(void)v;
#endif
}

void
waits_check_tally(const struct wait_tally *t)
{
#ifndef NDEBUG
	assert(t->cap > 0 && t->qhead < t->cap && t->qlen <= t->cap);
	/* Every queued job of the table is in the ring once, and the ring
	 * holds nothing else (its entries are queued table jobs). */
	assert(t->table_queued == t->qlen);
	assert(t->table_running <= t->workers);
#else
	(void)t;
#endif
}
