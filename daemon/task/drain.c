/*
 * drain.c - the drain switch and the count of unfinished tasks. See
 * drain.h.
 *
 * State: one atomic flag and the time it went on; a mutex and condition
 * variable only for drain_wait's sleeps and drain_shutdown's wake-up.
 * Invariant: the flag never goes back off while the process lives.
 * Does not: cancel, pause or hand back tasks; know HTTP.
 */
#include "drain.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/util.h"

static atomic_bool draining;
static _Atomic int64_t drain_since;
static pthread_mutex_t drain_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t drain_cv = PTHREAD_COND_INITIALIZER;
static bool drain_stopping;     /* under drain_mu */

void
drain_start(struct store *st)
{
	int64_t zero = 0;

	/* Under the store lock: a registration whose body already ran is
	 * committed first (store_lock), one that runs later sees the flag. */
	store_lock(st);
	atomic_compare_exchange_strong(&drain_since, &zero, now_ms());
	atomic_store(&draining, true);
	store_unlock(st);
}

bool
drain_on(void)
{
	return atomic_load_explicit(&draining, memory_order_acquire);
}

int
drain_refuse(struct derr *e)
{
	return derr_set(e, DERR_DRAINING, NULL,
	    "this detmd is draining (POST /api/drain): it takes no new task, running ones go on; "
	    "create the task on another detmd");
}

int
drain_state(struct store *st, struct drain_state *out, struct derr *e)
{
	static const char SQL[] =
	    "SELECT COALESCE(SUM(status = 'active'), 0), COALESCE(SUM(status = 'paused'), 0) "
	    "FROM tasks WHERE status IN ('active', 'paused')";
	struct store *rd;
	sqlite3_stmt *s;
	int rc = -1;

	memset(out, 0, sizeof *out);
	out->draining = drain_on();
	out->since_ms = out->draining ? atomic_load(&drain_since) : 0;
	out->active = out->paused = -1;
	rd = store_read_begin(st);
	s = store_stmt(rd, SQL);
	if (s == NULL || sqlite3_step(s) != SQLITE_ROW) {
		store_fail(rd, "count unfinished tasks", e);
		goto out;
	}
	out->active = sqlite3_column_int64(s, 0);
	out->paused = sqlite3_column_int64(s, 1);
	out->drained = out->draining && out->active == 0 && out->paused == 0;
	rc = 0;
out:
	if (s != NULL)
		sqlite3_reset(s);
	store_read_end(rd);
	return rc;
}

int
drain_wait(struct store *st, int wait_s, struct drain_state *out, struct derr *e)
{
	int64_t end = mono_us() + (int64_t)wait_s * 1000000;
	bool stop;

	for (;;) {
		struct timespec ts;

		if (drain_state(st, out, e) != 0)
			return -1;
		if (out->drained || !out->draining || mono_us() >= end)
			return 0;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&drain_mu);
		if (!drain_stopping)
			while (pthread_cond_timedwait(&drain_cv, &drain_mu, &ts) != ETIMEDOUT && !drain_stopping)
				;
		stop = drain_stopping;
		pthread_mutex_unlock(&drain_mu);
		if (stop)
			return drain_state(st, out, e);
	}
}

void
drain_shutdown(void)
{
	pthread_mutex_lock(&drain_mu);
	drain_stopping = true;
	pthread_cond_broadcast(&drain_cv);
	pthread_mutex_unlock(&drain_mu);
}
