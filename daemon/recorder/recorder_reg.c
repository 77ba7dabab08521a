/*
 * recorder_reg.c - the recorder's registry (rec_registry: the running
 * recordings and clips, the directory's byte total, generations) and the
 * state checks of a recording and of the registry. The lowest file of the
 * recorder: recorder.c (the API and the task hook), recorder_run.c (a
 * recording's thread) and recorder_files.c (its files) all use it, and it
 * calls none of them.
 *
 * Invariants: see recorder_int.h (struct rec, struct rec_reg); the checks
 * below assert them in debug and ASan builds (compiled out under NDEBUG).
 */
#include <assert.h>
#include <pthread.h>
#include <string.h>

#include "recorder_int.h"

const char *const rec_state_names[] = {
	"recording", "paused", "done", "capped", "discarded", "failed",
};

struct rec_reg rec_registry = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
	.next_gen = 1,
};

/* ---- state checks (debug and ASan builds; compiled out under NDEBUG) ---- */

/* r->mu held: r's state agrees with its fields (see the opening comment). */
void
rec_check_locked(const struct rec *r)
{
#ifndef NDEBUG
	assert((unsigned)r->state <= R_FAILED);
	assert(r->fps >= 1 && r->gen >= 1 && r->started_ms > 0);
	assert(r->frames >= 0 && r->bytes >= 0 && r->video_ms >= 0);
	if (r->clip_id[0] != '\0')
		assert(strncmp(r->key, "clip-", 5) == 0 && strcmp(r->key + 5, r->clip_id) == 0);
	else
		assert(strcmp(r->key, r->task_id) == 0 && id_valid(r->task_id) && r->window == 0);
	assert(r->state != R_FAILED || r->err.code != DERR_OK);
	assert(r->state != R_CAPPED || r->reason[0] != '\0');
	assert(r->state != R_DISCARDED || r->discard);
	assert(!r->discard || r->stop);
#else
	(void)r;
#endif
}

/* rec_registry.mu held: registered recordings have distinct keys and generations
 * (only fields fixed at launch are read: no rec's mu is taken). */
void
rec_reg_check_locked(void)
{
#ifndef NDEBUG
	assert(rec_registry.total_bytes >= 0);
	for (size_t i = 0; i < RECS_MAX; i++) {
		const struct rec *a = rec_registry.recs[i];

		if (a == NULL)
			continue;
		assert(a->key[0] != '\0' && a->gen >= 1 && a->gen < rec_registry.next_gen);
		for (size_t k = i + 1; k < RECS_MAX; k++)
			assert(rec_registry.recs[k] == NULL || (rec_registry.recs[k] != a && rec_registry.recs[k]->gen != a->gen &&
			    strcmp(rec_registry.recs[k]->key, a->key) != 0));
	}
#endif
}
