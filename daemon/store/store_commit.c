/*
 * store_commit.c - what became of each write: the outcome of every batch of
 * the group commit (store.c), the durability of the WAL under sync full,
 * and the store's write health. See store.h and store_int.h.
 *
 * A batch's outcome is fixed in three steps, each in batch order:
 *   closed  its COMMIT ended (under the store lock, so in the order the lock
 *           gave): a failed one is recorded then, before the lock is let go;
 *   done    (sync full) an fdatasync of the WAL that began after its COMMIT
 *           ended succeeded, or failed: then it is "stored, not durable";
 *           fdatasyncs run one at a time (s_mu) and cover every batch
 *           closed before they began, so a later success can never stand
 *           for an earlier failure;
 *   hooked  the commit hook has run for it and waiters were woken; only
 *           then does store_ticket_state report it.
 * Invariant (c_mu): hooked <= done <= closed; every batch <= hooked is in
 * bad[] with its own number, or ended well. Under sync normal done == closed.
 *
 * After an fdatasync fails the kernel may have dropped the pages it could
 * not write and a later fdatasync succeeds without them (Linux reports a
 * writeback error once), and WAL recovery stops at the first missing frame:
 * so every batch is "not durable" (sync_bad) until a FULL checkpoint has
 * copied the whole WAL into the database and synced it (store.c's
 * sync_heal, on the checkpointer's tick, clears it under s_mu).
 *
 * Not here: connections, the committer thread, store_tx (store.c).
 */
#include "store_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

#define CKPT_LOG_MS 10000   /* checkpoint failures are logged at most this often */

#ifndef NDEBUG
/* The marks' order (c_mu held). */
static void
marks_check(const struct store *st)
{
	if (!(st->hooked <= st->done && st->done <= st->closed))
		log_error("store outcome marks out of order: hooked %llu done %llu closed %llu",
		    (unsigned long long)st->hooked, (unsigned long long)st->done,
		    (unsigned long long)st->closed);
}
#else
#define marks_check(st) ((void)0)
#endif

/* A failure the disk caused (full, I/O error): true for SQLite's code. */
static bool
disk_code(int code)
{
	return (code & 0xff) == SQLITE_FULL || (code & 0xff) == SQLITE_IOERR;
}

/* e for a write that was not stored, from SQLite's code and the errno. */
static int
error_set(const struct store *st, int code, int sys_errno, struct derr *e)
{
	const char *sys = sys_errno != 0 ? strerror(sys_errno) : sqlite3_errstr(code);

	if ((code & 0xff) == SQLITE_FULL || sys_errno == ENOSPC || sys_errno == EDQUOT)
		return derr_set(e, DERR_NO_SPACE, NULL, "the disk holding detm's database (%s) is "
		    "full: nothing of this write was stored. Free space there and send it again; "
		    "reads go on meanwhile and writes resume by themselves", st->path);
	if ((code & 0xff) == SQLITE_IOERR)
		return derr_set(e, DERR_IO_ERROR, NULL, "the disk failed while this write was stored "
		    "(%s: %s): nothing of it was stored. See GET /api/health and detmd's log; send "
		    "it again once the disk works", sqlite3_errstr(code), sys);
	return derr_set(e, DERR_INTERNAL, NULL, "internal database error (the write was not committed)");
}

/* Writes fail on the disk (c_mu held). */
static void
health_fail(struct store *st, int code, int sys_errno)
{
	if (st->err_code == 0)
		st->err_since_ms = now_ms();
	st->err_code = code;
	st->err_errno = sys_errno;
	st->n_write_failures++;
}

/* Reads the disk refused, on any reader connection (readers share no lock
 * with the writer's counters, so this one is process-wide). */
static atomic_ulong store_read_failures;

int
store_fail(struct store *st, const char *what, struct derr *e)
{
	int code = sqlite3_extended_errcode(st->db), sys_errno = sqlite3_system_errno(st->db);

	log_error("%s: %s (%d%s%s)", what, sqlite3_errmsg(st->db), code, sys_errno ? ", " : "",
	    sys_errno ? strerror(sys_errno) : "");
	if (!st->is_reader && disk_code(code)) {
		pthread_mutex_lock(&st->c_mu);
		health_fail(st, code, sys_errno);
		pthread_mutex_unlock(&st->c_mu);
	}
	/* A reader whose pread failed may see SQLite call the page
	 * malformed (SQLITE_CORRUPT): to the client that is a read the disk
	 * refused, like SQLITE_IOERR (the faults suite's "EIO on reads"). */
	if (st->is_reader && (disk_code(code) || (code & 0xff) == SQLITE_CORRUPT)) {
		atomic_fetch_add(&store_read_failures, 1);
		return derr_set(e, DERR_IO_ERROR, NULL, "the disk failed while detm's database was "
		    "read (%s: %s): nothing was changed. See GET /api/health and detmd's log; "
		    "send the request again", sqlite3_errstr(code),
		    sys_errno != 0 ? strerror(sys_errno) : sqlite3_errstr(code));
	}
	if (st->is_reader || !disk_code(code))
		return derr_set(e, DERR_INTERNAL, NULL, "internal database error");
	return error_set(st, code, sys_errno, e);
}

void
store_batch_close(struct store *st, uint64_t b, bool ok, int code, int sys_errno)
{
	pthread_mutex_lock(&st->c_mu);
	if (!ok) {
		st->bad[b % OUTCOME_RING] = (struct store_outcome){ b, STORE_FAILED, code, sys_errno };
		if (disk_code(code))
			health_fail(st, code, sys_errno);
	} else {
		st->err_code = 0;
	}
	st->closed = b;
	if (st->wal_fd < 0)
		st->done = b;
	marks_check(st);
	pthread_mutex_unlock(&st->c_mu);
}

/* One fdatasync of the WAL for every batch closed and not yet done; its
 * verdict holds for all of them (s_mu keeps fdatasyncs in order). */
static void
sync_step(struct store *st)
{
	uint64_t t, d, b;
	int err = 0;

	pthread_mutex_lock(&st->s_mu);
	pthread_mutex_lock(&st->c_mu);
	t = st->closed;
	d = st->done;
	pthread_mutex_unlock(&st->c_mu);
	if (t > d) {
		if (fdatasync(st->wal_fd) != 0) {
			err = errno;
			if (!atomic_exchange(&st->sync_bad, true))
				log_error("fdatasync of the WAL: %s: writes are stored but not durable "
				    "until a checkpoint succeeds", strerror(err));
			st->sync_errno = err;
			atomic_fetch_add(&st->n_sync_failures, 1);
		} else if (atomic_load(&st->sync_bad)) {
			err = st->sync_errno;
		}
		pthread_mutex_lock(&st->c_mu);
		for (b = d + 1; err != 0 && b <= t; b++)
			if (st->bad[b % OUTCOME_RING].b != b)
				st->bad[b % OUTCOME_RING] = (struct store_outcome){ b, STORE_NOT_DURABLE, 0, err };
		st->done = t;
		marks_check(st);
		pthread_mutex_unlock(&st->c_mu);
	}
	pthread_mutex_unlock(&st->s_mu);
}

void
store_batch_settle(struct store *st)
{
	uint64_t b;

	if (st->wal_fd >= 0)
		sync_step(st);
	pthread_mutex_lock(&st->c_mu);
	if (st->hooked < st->done) {
		for (b = st->hooked + 1; b <= st->done; b++) {
			st->hooked = b;
			if (st->hook != NULL)
				st->hook(st->hook_arg, b, st->bad[b % OUTCOME_RING].b != b ||
				    st->bad[b % OUTCOME_RING].kind != STORE_FAILED);
		}
		pthread_cond_broadcast(&st->c_cond);
	}
	marks_check(st);
	pthread_mutex_unlock(&st->c_mu);
}

int
store_batch_state(struct store *st, uint64_t b)
{
	const struct store_outcome *o = &st->bad[b % OUTCOME_RING];

	if (b > st->hooked)
		return 0;
	return o->b == b ? o->kind : 1;
}

int
store_ticket_state(struct store *st, uint64_t ticket)
{
	int state;

	if (ticket == 0)
		return 1;
	pthread_mutex_lock(&st->c_mu);
	state = store_batch_state(st, ticket);
	pthread_mutex_unlock(&st->c_mu);
	return state;
}

void
store_ticket_error(struct store *st, uint64_t ticket, struct derr *e)
{
	struct store_outcome o = { 0 };

	pthread_mutex_lock(&st->c_mu);
	if (ticket != 0 && st->bad[ticket % OUTCOME_RING].b == ticket)
		o = st->bad[ticket % OUTCOME_RING];
	pthread_mutex_unlock(&st->c_mu);
	if (o.kind == STORE_NOT_DURABLE)
		derr_set(e, DERR_NOT_DURABLE, NULL, "stored, but not yet durable: the write is in the "
		    "database and visible, but the disk failed to flush it (fdatasync: %s). It would be "
		    "lost only if the machine lost power before detmd makes it durable again (it "
		    "retries at every checkpoint). Do not send it again", strerror(o.sys_errno));
	else
		error_set(st, o.code, o.sys_errno, e);
}

void
store_sync_failed(struct store *st, int err)
{
	pthread_mutex_lock(&st->s_mu);
	if (!atomic_exchange(&st->sync_bad, true))
		log_error("fdatasync of the WAL: %s: writes are stored but not durable until a "
		    "checkpoint succeeds", strerror(err));
	st->sync_errno = err;
	atomic_fetch_add(&st->n_sync_failures, 1);
	pthread_mutex_unlock(&st->s_mu);
}

void
store_ckpt_failed(struct store *st, sqlite3 *db, int rc, const char *what)
{
	int64_t now = now_ms();
	uint64_t quiet = 0;
	bool say = false;

	/* A RESTART that readers on older frames hold up is tried again later:
	 * logged like a failure, not counted as one. */
	if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
		atomic_fetch_add(&st->n_ckpt_failures, 1);
	pthread_mutex_lock(&st->c_mu);
	if (now - st->ckpt_log_ms >= CKPT_LOG_MS) {
		say = true;
		quiet = st->ckpt_quiet;
		st->ckpt_quiet = 0;
		st->ckpt_log_ms = now;
	} else {
		st->ckpt_quiet++;
	}
	pthread_mutex_unlock(&st->c_mu);
	if (say)
		log_error("%s failed: %s (%d, %s); %llu more failures since the last report", what,
		    sqlite3_errmsg(db), rc, sqlite3_system_errno(db) ? strerror(sqlite3_system_errno(db)) : "-",
		    (unsigned long long)quiet);
}

bool
store_degraded(struct store *st, char *cause, size_t n)
{
	int code, sys_errno;
	int64_t since;
	bool bad_sync = atomic_load(&st->sync_bad);

	pthread_mutex_lock(&st->c_mu);
	code = st->err_code;
	sys_errno = st->err_errno;
	since = st->err_since_ms;
	pthread_mutex_unlock(&st->c_mu);
	if (code != 0) {
		char when[ISO_TIME_LEN];

		iso_time(since, when);
		snprintf(cause, n, "%s since %s: writes fail (%s%s%s) until one commits again; reads "
		    "work", (code & 0xff) == SQLITE_FULL || sys_errno == ENOSPC ? "disk full" :
		    "disk I/O error", when, sqlite3_errstr(code), sys_errno ? ": " : "",
		    sys_errno ? strerror(sys_errno) : "");
		return true;
	}
	if (bad_sync) {
		snprintf(cause, n, "fdatasync of the WAL failed: writes are stored but not durable "
		    "until a checkpoint succeeds");
		return true;
	}
	if (n > 0)
		cause[0] = '\0';
	return false;
}

void
store_fault_stats(struct store *st, struct store_faults *out)
{
	pthread_mutex_lock(&st->c_mu);
	out->write_failures = st->n_write_failures;
	pthread_mutex_unlock(&st->c_mu);
	out->sync_failures = atomic_load(&st->n_sync_failures);
	out->ckpt_failures = atomic_load(&st->n_ckpt_failures);
	out->read_failures = atomic_load(&store_read_failures);
}

void
store_set_commit_hook(struct store *st, void (*fn)(void *arg, uint64_t batch, bool ok), void *arg)
{
	pthread_mutex_lock(&st->c_mu);
	st->hook = fn;
	st->hook_arg = arg;
	pthread_mutex_unlock(&st->c_mu);
}
