/*
 * waits_check.h - private to the wait engine (waits*.c): the assertions
 * that its job table, work ring and job flags agree (waits_check.c).
 *
 * The engine's state machine (documented in waits.c): a job is scheduled
 * (in the table) -> queued (in the ring) -> running (a worker owns it) ->
 * scheduled again, or done (set once) -> removed (out of the table) ->
 * freed (job_release_locked, once no ring entry or worker holds it).
 *
 * WAITS_CHECK_LOCKED() (waits_engine.mu held) asserts after every transition, in
 * debug and ASan builds; under NDEBUG it is nothing. It is a macro so that the
 * checker functions stay apart from the engine (waits_int.h): it copies the flags of every job
 * it can reach into a struct wait_view and hands them to the functions
 * below, which know nothing else of the engine.
 */
#ifndef DETM_WAITS_CHECK_H
#define DETM_WAITS_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the checks see of one job. */
struct wait_view {
	const char *id;
	bool in_ring;           /* seen through the work ring, else the table */
	bool queued, running, done, removed;
	bool has_criteria;
	int evaluations, skipped;
	int64_t created_ms, deadline_ms;
};

/* Tallies over the table and the ring. */
struct wait_tally {
	size_t cap;             /* slots in the table and in the ring (ACU_MAX_WAITS) */
	size_t workers;
	size_t qhead, qlen;
	size_t table_queued;    /* jobs in the table with queued set */
	size_t table_running;   /* ... with running set */
};

/* One job's flags agree (asserts; nothing under NDEBUG). */
void waits_check_job(const struct wait_view *v);
/* The ring and the table agree (asserts; nothing under NDEBUG). */
void waits_check_tally(const struct wait_tally *t);

#define WAIT_VIEW(j, ring) (&(struct wait_view){ .id = (j)->id, .in_ring = (ring), \
	.queued = (j)->queued, .running = (j)->running, .done = (j)->done, \
	.removed = (j)->removed, .has_criteria = (j)->criteria != NULL, \
	.evaluations = (j)->evaluations, .skipped = (j)->skipped, \
	.created_ms = (j)->created_ms, .deadline_ms = (j)->deadline_ms })

#ifdef NDEBUG
#define WAITS_CHECK_LOCKED() ((void)0)
#else
#define WAITS_CHECK_LOCKED() do { \
	struct wait_tally t_ = { .cap = (size_t)waits_engine.app->cfg->max_waits, .workers = waits_engine.nworkers, \
	    .qhead = waits_engine.qhead, .qlen = waits_engine.qlen }; \
	for (size_t i_ = 0; i_ < t_.cap; i_++) { \
		if (waits_engine.jobs[i_] == NULL) \
			continue; \
		waits_check_job(WAIT_VIEW(waits_engine.jobs[i_], false)); \
		t_.table_queued += waits_engine.jobs[i_]->queued; \
		t_.table_running += waits_engine.jobs[i_]->running; \
	} \
	for (size_t i_ = 0; i_ < waits_engine.qlen && i_ < t_.cap; i_++) \
		waits_check_job(WAIT_VIEW(waits_engine.queue[(waits_engine.qhead + i_) % t_.cap], true)); \
	waits_check_tally(&t_); \
} while (0)
#endif

#endif
