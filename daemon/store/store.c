/*
 * store.c - see store.h.
 *
 * States: open (connection + checkpointer running) -> closed. The statement
 * cache is an array searched by pointer; a daemon uses a few dozen distinct
 * statements, so a linear scan is cheaper than hashing. last_now (under the
 * lock) only grows: store_now never goes back.
 *
 * Group commit (store_tx): a writer takes the lock, opens the batch's
 * transaction if none is open (BEGIN IMMEDIATE), runs its body inside its
 * own SAVEPOINT (a body that fails is rolled back to it and fails alone),
 * and lets go of the lock at once; it does not commit. One committer thread
 * commits the open batch whenever there is one, so every write that ran
 * while the previous COMMIT was under way shares the next COMMIT (one WAL
 * append, with sync full one fsync); while writers arrive together it
 * first waits a little for the batch to fill (commit_gather). Batches are
 * numbered (`batch`, the open one, under `lock`); what became of each is
 * fixed in batch order by store_commit.c (committed, failed, stored but
 * not durable), a failed COMMIT's before the lock is let go.
 * A write commits at once on its own thread instead when no other writer
 * waits for the lock and it would wait for its commit anyway (a side
 * worker's synchronous write), or it is lone (none in the last
 * LONE_GAP_US, sync not full): a hand-off to the committer and back costs
 * two wake-ups (~0.1-0.2 ms on this VM), more than a COMMIT without
 * fsync, and there is nothing to share it with (commits_here).
 * A synchronous writer then waits on c_cond until its batch has committed;
 * a deferred one (store_defer_begin, the HTTP layer's handlers) returns at
 * once and leaves its batch number as the ticket its reply waits for.
 * store_lock (direct statements of other modules) commits an open batch
 * first, so those keep autocommit semantics. Lock order: `lock` before
 * c_mu; the commit hook runs with neither held (or with `lock` held, when
 * store_lock flushes: it must not take `lock`).
 *
 * The checkpointer copies the WAL into the database every 100 ms without
 * any lock (PASSIVE) and restarts it past CHECKPOINT_RESTART_FRAMES under
 * the lock, after catching up so that the lock covers only a few hundred
 * frames (ckpt_catch_up). While a restart holds the lock (`long_hold`:
 * milliseconds of fsync, or up to the busy timeout behind a reader), a
 * writer in nowait mode (an HTTP worker, nowait.h) is refused instead of
 * waiting (tx_lock), and http_side.c runs it again on a side worker: a restart
 * then stalls no HTTP worker, and the reads it serves go on.
 *
 * Readers: READERS struct stores of their own (is_reader: a connection,
 * its lock and statement cache; no queue, no checkpointer), opened at first
 * use. store_read_begin takes a free one (or waits for one), BEGINs a read
 * transaction (a WAL snapshot of committed data), store_read_end COMMITs it
 * so the next read sees the newest commit. A private reader
 * (store_reader_open: is_private) is one such struct store outside the
 * pool, for one owner that may hold its snapshot for long; it is never
 * locked (one thread at a time uses it), keeps a small page cache and its
 * sorts in files (a long query must not hold a big sort in memory).
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/nowait.h"
#include "store_int.h"

extern const unsigned char schema_sql[];
extern const unsigned long schema_sql_len;


/* The deferred-acknowledgement context of this thread (store_defer_*). */
static _Thread_local struct {
	bool on;
	uint64_t ticket;
} defer;

/* The highest "-- migration N" in the embedded schema (0 if none). Each
 * section's text runs from its marker line to the next marker. */
static const char *
migration_find(int n, size_t *len)
{
	const char *s = (const char *)schema_sql, *p, *next;
	char marker[32];

	snprintf(marker, sizeof marker, "\n-- migration %d\n", n);
	p = strstr(s, marker);
	if (p == NULL)
		return NULL;
	p += strlen(marker);
	next = strstr(p, "\n-- migration ");
	*len = next ? (size_t)(next - p) : strlen(p);
	return p;
}

static int
exec_sql(sqlite3 *db, const char *sql, struct derr *e)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		log_error("%s: %s", sql, msg ? msg : "?");
		derr_set(e, DERR_INTERNAL, NULL, "database error: %s", msg ? msg : "?");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* The integer a PRAGMA query answers (-1 if it cannot run). */
static int
pragma_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return v;
}

static int
db_version(sqlite3 *db)
{
	return pragma_int(db, "PRAGMA user_version");
}

/* Rows of PRAGMA foreign_key_check (-1: it could not run). */
static int
fk_violations(sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	int n = 0, rc;

	if (sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &s, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n++ < 5)
			log_error("foreign key violation in %s rowid %lld (parent %s)",
			    (const char *)sqlite3_column_text(s, 0), (long long)sqlite3_column_int64(s, 1),
			    (const char *)sqlite3_column_text(s, 2));
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? n : -1;
}

/* Runs migration n (its text sec) in one transaction. A section with the
 * REBUILD_MARKER line rebuilds a table (SQLite's 12-step ALTER TABLE
 * procedure, https://sqlite.org/lang_altertable.html#otheralter): foreign
 * keys go off before the transaction (PRAGMA foreign_keys is a no-op
 * inside one; with them on, dropping the old table would cascade-delete
 * its children), PRAGMA foreign_key_check must find nothing before COMMIT,
 * and they come back on after, whatever happened. */
#define REBUILD_MARKER "-- rebuild with foreign_keys off\n"
/* A section with the EDIT_MARKER line edits table text in sqlite_schema
 * (writable_schema; for changes that leave what is stored as it is, such as
 * an equivalent CHECK): its transaction also bumps PRAGMA schema_version so
 * that no connection keeps the old text, and SQLite's defensive mode, if a
 * build turns it on, is off while it runs. */
#define EDIT_MARKER "-- edits the schema text\n"

/* PRAGMA schema_version += 1 (inside the migration's transaction). */
static int
schema_bump(sqlite3 *db, struct derr *e)
{
	char sql[64];
	int v = pragma_int(db, "PRAGMA schema_version");

	if (v < 0)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot read the schema cookie");
	snprintf(sql, sizeof sql, "PRAGMA schema_version = %d", v + 1);
	return exec_sql(db, sql, e);
}

static int
migrate_one(sqlite3 *db, int n, const char *sec, size_t len, struct derr *e)
{
	bool rebuild = strncmp(sec, REBUILD_MARKER, strlen(REBUILD_MARKER)) == 0;
	bool edit = strncmp(sec, EDIT_MARKER, strlen(EDIT_MARKER)) == 0;
	char *sql = xasprintf("BEGIN IMMEDIATE;\n%.*s\nPRAGMA user_version = %d;", (int)len, sec, n);
	int rc = -1, bad, defensive = 0;

	if (rebuild && exec_sql(db, "PRAGMA foreign_keys = OFF", e) != 0)
		goto out;
	if (edit) {
		sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive);
		sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 0, NULL);
	}
	if (exec_sql(db, sql, e) != 0)
		goto rollback;
	if (edit && schema_bump(db, e) != 0)
		goto rollback;
	if (rebuild && (bad = fk_violations(db)) != 0) {
		derr_set(e, DERR_INTERNAL, NULL, "schema migration %d would leave %s foreign key "
		    "violation(s); the database was not changed", n, bad < 0 ? "unknown" : "some");
		goto rollback;
	}
	if (exec_sql(db, "COMMIT", e) == 0)
		rc = 0;
rollback:
	if (rc != 0 && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	if (edit)
		sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, defensive, NULL);
	if (rebuild && sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK && rc == 0)
		rc = derr_set(e, DERR_INTERNAL, NULL, "cannot turn foreign keys back on after "
		    "schema migration %d", n);
out:
	free(sql);
	return rc;
}

static int
store_migrate(sqlite3 *db, struct derr *e)
{
	int have = db_version(db), latest = 0, n;
	size_t len;

	while (migration_find(latest + 1, &len) != NULL)
		latest++;
	if (have < 0)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot read the schema version");
	if (have > latest)
		return derr_set(e, DERR_INTERNAL, NULL,
		    "the database has schema version %d but this detmd knows only up "
		    "to %d: it was written by a newer detmd", have, latest);
	for (n = have + 1; n <= latest; n++) {
		const char *sec = migration_find(n, &len);

		if (migrate_one(db, n, sec, len, e) != 0)
			return -1;
		log_info("applied schema migration %d", n);
	}
	return 0;
}

static void *commit_main(void *arg);
static void commit_open(struct store *st);

/* PASSIVE passes on the checkpointer's connection until one copies at
 * most CATCHUP_FRAMES new frames (or CATCHUP_PASSES ran): the frames a
 * busy writer appended while the previous pass ran. done: the frames the
 * last pass had copied. */
static void
ckpt_catch_up(sqlite3 *db, int done)
{
	int i, nlog, ndone;

	for (i = 0; i < CATCHUP_PASSES; i++) {
		if (sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog, &ndone) !=
		    SQLITE_OK || ndone < 0 || ndone - done <= CATCHUP_FRAMES)
			return;
		done = ndone;
	}
}

/* fdatasyncs the database and its WAL, outside the store lock, before a
 * restart. The RESTART under the lock syncs both again, and each sync
 * writes out whatever is dirty in that file: the DB pages every catch-up
 * pass copied (a pass that does not reach the WAL's end syncs the WAL
 * before it copies but not the DB after) and the frames appended since
 * the last pass. Synced here, what is left for the lock is what the last
 * moments added (measured in 10 s POST storms: the restart's hold time
 * fell from 3.5 ms on average, up to 14 ms, to about 2 ms; POST p99 from
 * 4.5-5.7 to 3.5-4.9 ms). A file that cannot be opened is skipped: the
 * RESTART still syncs it, only under the lock. */
static void
ckpt_flush(const char *path)
{
	char *wal = xasprintf("%s-wal", path);
	const char *files[2] = { path, wal };
	int i, fd;

	for (i = 0; i < 2; i++) {
		fd = open(files[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fdatasync(fd) != 0)
			log_warn("fdatasync of %s: %s", files[i], strerror(errno));
		close(fd);
	}
	free(wal);
}

/* The checkpointer's tick, after an fdatasync of the WAL failed (sync
 * full): a FULL checkpoint under the lock; when it copied the whole WAL into
 * the database and synced it, every committed batch is durable again. */
static void
sync_heal(struct store *st)
{
	int rc, nlog = -1, ndone = -1;

	if (st->wal_fd < 0 || !atomic_load(&st->sync_bad))
		return;
	store_lock(st);
	rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_FULL, &nlog, &ndone);
	if (rc != SQLITE_OK) {
		store_ckpt_failed(st, st->db, rc, "checkpoint to make the WAL durable again");
	} else if (nlog == ndone) {
		/* Every committed frame is in the database file, synced. */
		pthread_mutex_lock(&st->s_mu);
		if (fdatasync(st->wal_fd) == 0) {
			atomic_store(&st->sync_bad, false);
			log_info("durability restored: a checkpoint copied and synced the whole WAL");
		}
		pthread_mutex_unlock(&st->s_mu);
	}
	store_unlock(st);
}

static void *
ckpt_main(void *arg)
{
	struct store *st = arg;
	sqlite3 *db = NULL;
	struct timespec ts;
	int nlog, ndone, rc;

	if (sqlite3_open_v2(st->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
	    NULL) != SQLITE_OK) {
		log_error("checkpointer cannot open %s: %s", st->path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, 100);
	/* A connection that has not read the database yet does not know it is
	 * in WAL mode: sqlite3_wal_checkpoint_v2 then returns SQLITE_OK and
	 * does nothing (log and checkpointed frames -1), and the WAL grows
	 * without bound. One read opens the WAL. */
	if (sqlite3_exec(db, "PRAGMA journal_mode", NULL, NULL, NULL) != SQLITE_OK)
		log_error("checkpointer cannot read %s: %s", st->path, sqlite3_errmsg(db));
	pthread_mutex_lock(&st->ckpt_lock);
	while (!st->ckpt_stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += CHECKPOINT_INTERVAL_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&st->ckpt_cond, &st->ckpt_lock, &ts);
		if (st->ckpt_stop)
			break;
		pthread_mutex_unlock(&st->ckpt_lock);
		sync_heal(st);    /* after a failed fdatasync (sync full) */
		/* PASSIVE never blocks writers; it copies what it can. */
		rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog, &ndone);
		if (rc != SQLITE_OK || nlog < 0) {
			store_ckpt_failed(st, db, rc, "WAL checkpoint");
		} else if (nlog >= CHECKPOINT_RESTART_FRAMES) {
			/* Under a steady stream of commits a PASSIVE pass never
			 * ends with every frame copied at the moment a writer
			 * starts, so the WAL never restarts and grows for ever.
			 * With the store lock no commit is in flight: a RESTART on
			 * the main connection copies the rest and the next writer
			 * starts the WAL over. SQLite's own busy handler would
			 * lose that race to a busy writer. Writers wait while the
			 * RESTART copies and fsyncs, so more PASSIVE passes first
			 * copy what came in meanwhile (without the lock) until a
			 * pass finds little new: the lock is then held for a few
			 * hundred frames, not for 100 ms of a busy writer's WAL.
			 * What remains under it (at 10k POST/s, ~3 times a
			 * second) is nearly all SQLite's two fdatasyncs, and
			 * ckpt_flush does most of their work before the lock is
			 * taken. */
			ckpt_catch_up(db, ndone);
			ckpt_flush(st->path);
			(void)store_restart_wal(st);
		}
		pthread_mutex_lock(&st->ckpt_lock);
	}
	pthread_mutex_unlock(&st->ckpt_lock);
	sqlite3_close(db);
	return NULL;
}

/* A RESTART checkpoint on the main connection (the store lock held),
 * counted and timed for the close log. */
static int
restart_timed(struct store *st, sqlite3 *db, const char *name)
{
	int64_t t0 = mono_us(), dt;
	int rc = sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_RESTART, NULL, NULL);

	dt = mono_us() - t0;
	st->n_restarts++;
	st->restart_us += dt;
	if (dt > st->restart_max_us)
		st->restart_max_us = dt;
	return rc;
}

int
store_restart_wal(struct store *st)
{
	int rc;

	/* Set before the lock is taken, so that whenever this holds it a
	 * nowait writer that finds it taken sees why. */
	atomic_store(&st->long_hold, true);
	store_lock(st);     /* commits an open batch first */
	rc = restart_timed(st, st->db, NULL);
	if (rc != SQLITE_OK)
		store_ckpt_failed(st, st->db, rc, "WAL restart");
	store_unlock(st);
	atomic_store(&st->long_hold, false);
	return rc == SQLITE_OK ? 0 : -1;
}

/* After each commit on the main connection (the store lock held). The
 * checkpointer keeps the WAL short, but only when it gets to run: on a
 * machine so busy that its 100 ms tick slips, the WAL would grow with every
 * commit. The writer that finds it past CHECKPOINT_FORCE_FRAMES restarts it
 * itself, so the WAL's bound does not depend on scheduling. A RESTART that
 * readers hold up is tried again 256 frames later, not at every commit. */
static int
wal_after_commit(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct store *st = arg;

	int rc;

	if (frames < st->wal_force_at)
		return SQLITE_OK;
	atomic_store(&st->long_hold, true);
	rc = restart_timed(st, db, name);
	atomic_store(&st->long_hold, false);
	if (rc == SQLITE_OK) {
		st->wal_force_at = CHECKPOINT_FORCE_FRAMES;
	} else {
		store_ckpt_failed(st, db, rc, "WAL restart after a commit");
		st->wal_force_at = frames + 256;
	}
	return SQLITE_OK;
}

/* created_at of the newest thread message (by rowid), 0 if none. */
static int64_t
last_message_time(sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	int64_t t = 0;

	if (sqlite3_prepare_v2(db, "SELECT created_at FROM task_messages ORDER BY rowid DESC LIMIT 1",
	    -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		t = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return t;
}

/* The reader slots (connections open at first use). */
static void
readers_init(struct store *st, const char *path)
{
	int i;

	for (i = 0; i < READERS; i++) {
		struct store *rd = xcalloc(1, sizeof *rd);

		rd->wal_fd = -1;
		rd->is_reader = true;
		rd->path = xstrdup(path);
		pthread_mutex_init(&rd->lock, NULL);
		pthread_mutex_init(&rd->ckpt_lock, NULL);
		pthread_cond_init(&rd->ckpt_cond, NULL);
		pthread_mutex_init(&rd->c_mu, NULL);
		pthread_cond_init(&rd->c_work, NULL);
		pthread_cond_init(&rd->c_cond, NULL);
		st->readers[i] = rd;
	}
}

/* Sync full without fsync under the lock: SQLite commits as with NORMAL
 * and the committer fdatasyncs the WAL before any write of the batch is
 * acknowledged (the same durability: every acknowledged commit's frames
 * are on disk; a checkpoint syncs the WAL before copying it). Keeps
 * synchronous=FULL when the WAL cannot be opened. */
static void
wal_open(struct store *st)
{
	char *wal = xasprintf("%s-wal", st->path);

	st->wal_fd = open(wal, O_RDONLY | O_CLOEXEC);
	if (st->wal_fd < 0)
		log_warn("cannot open %s (%s): every COMMIT fsyncs under the lock", wal, strerror(errno));
	else if (sqlite3_exec(st->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK) {
		close(st->wal_fd);
		st->wal_fd = -1;
	}
	free(wal);
}

int
store_open(const char *path, bool sync_full, struct store **out, struct derr *e)
{
	struct store *st = xcalloc(1, sizeof *st);
	char pragmas[256];
	int rc = -1;

	*out = NULL;
	{
		/* Adaptive: spin briefly before sleeping; the lock is held for
		 * tens of microseconds, so a short spin often avoids a futex
		 * sleep and wake-up pair. */
		pthread_mutexattr_t ma;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
		pthread_mutex_init(&st->lock, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	pthread_mutex_init(&st->ckpt_lock, NULL);
	pthread_cond_init(&st->ckpt_cond, NULL);
	readers_init(st, path);
	pthread_mutex_init(&st->c_mu, NULL);
	pthread_mutex_init(&st->s_mu, NULL);
	{
		/* commit_gather's deadline is on mono_us's clock. */
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&st->c_work, &ca);
		pthread_condattr_destroy(&ca);
	}
	pthread_cond_init(&st->c_cond, NULL);
	st->path = xstrdup(path);
	st->wal_fd = -1;
	st->sync_full = sync_full;
	st->gather_us = STORE_GATHER_US;
	/* SQLite's own VFS, as SQLite is tested: fault injection and power
	 * loss (the WAL write shim that coalesced a commit's frames into one
	 * pwrite could publish a commit whose frame never reached the file). */
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		derr_set(e, DERR_INTERNAL, NULL, "cannot open database %s: %s", path,
		    st->db ? sqlite3_errmsg(st->db) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(st->db, 5000);
	snprintf(pragmas, sizeof pragmas,
	    "PRAGMA journal_mode = WAL; PRAGMA synchronous = %s; "
	    "PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0; "
	    "PRAGMA journal_size_limit = %d; PRAGMA temp_store = MEMORY;",
	    sync_full ? "FULL" : "NORMAL", WAL_SIZE_LIMIT);
	if (exec_sql(st->db, pragmas, e) != 0)
		goto out;
	if (store_migrate(st->db, e) != 0)
		goto out;
	st->last_now = last_message_time(st->db);
	st->wal_force_at = CHECKPOINT_FORCE_FRAMES;
	sqlite3_wal_hook(st->db, wal_after_commit, st);
	if (sync_full)
		wal_open(st);
	if (pthread_create(&st->ckpt_thread, NULL, ckpt_main, st) == 0)
		st->ckpt_running = true;
	else
		log_warn("no checkpoint thread; WAL grows until close");
	if (pthread_create(&st->c_thread, NULL, commit_main, st) == 0)
		st->c_running = true;
	else
		log_warn("no committer thread; every write commits by itself");
	*out = st;
	st = NULL;
	rc = 0;
out:
	store_close(st);
	return rc;
}

void
store_close(struct store *st)
{
	int i;

	if (st == NULL)
		return;
	if (!st->is_reader && st->n_writes > 0)
		log_info("group commit: %llu writes in %llu commits (%llu lone, committed by "
		    "the writer)", (unsigned long long)st->n_writes, (unsigned long long)st->n_commits,
		    (unsigned long long)st->n_lone);
	if (!st->is_reader && st->n_restarts > 0)
		log_info("WAL restarts under the store lock: %llu, %.1f ms in all, longest %.1f ms",
		    (unsigned long long)st->n_restarts, st->restart_us / 1000.0,
		    st->restart_max_us / 1000.0);
	if (st->c_running) {
		pthread_mutex_lock(&st->c_mu);
		st->c_stop = true;
		pthread_cond_signal(&st->c_work);
		pthread_mutex_unlock(&st->c_mu);
		pthread_join(st->c_thread, NULL);
		st->c_running = false;
	}
	if (st->open) {
		pthread_mutex_lock(&st->lock);
		commit_open(st);
		pthread_mutex_unlock(&st->lock);
	}
	if (st->ckpt_running) {
		pthread_mutex_lock(&st->ckpt_lock);
		st->ckpt_stop = true;
		pthread_cond_signal(&st->ckpt_cond);
		pthread_mutex_unlock(&st->ckpt_lock);
		pthread_join(st->ckpt_thread, NULL);
	}
	for (i = 0; i < READERS; i++)
		store_close(st->readers[i]);
	for (i = 0; i < st->nstmts; i++)
		sqlite3_finalize(st->stmts[i].stmt);
	if (st->is_reader) {
		sqlite3_close(st->db);
	} else if (st->db != NULL) {
		int rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);

		if (rc != SQLITE_OK)    /* the WAL stays; the next open recovers from it */
			store_ckpt_failed(st, st->db, rc, "the last checkpoint at close");
		sqlite3_close(st->db);
	}
	pthread_mutex_destroy(&st->lock);
	pthread_mutex_destroy(&st->ckpt_lock);
	pthread_cond_destroy(&st->ckpt_cond);
	pthread_mutex_destroy(&st->c_mu);
	pthread_mutex_destroy(&st->s_mu);
	pthread_cond_destroy(&st->c_work);
	pthread_cond_destroy(&st->c_cond);
	if (st->wal_fd > 0)
		close(st->wal_fd);
	free(st->path);
	free(st);
}

void
store_lock(struct store *st)
{
	pthread_mutex_lock(&st->lock);
	if (st->open)
		commit_open(st);        /* direct statements run in autocommit */
	if (st->wal_fd >= 0)
		st->changes_at_lock = sqlite3_total_changes(st->db);
}

void
store_unlock(struct store *st)
{
	/* their autocommits, durable as with FULL */
	if (st->wal_fd >= 0 && !st->is_reader && sqlite3_total_changes(st->db) != st->changes_at_lock &&
	    fdatasync(st->wal_fd) != 0)
		store_sync_failed(st, errno);
	pthread_mutex_unlock(&st->lock);
}

int64_t
store_now(struct store *st)
{
	int64_t t = now_ms();

	if (t < st->last_now)
		t = st->last_now;
	st->last_now = t;
	return t;
}

sqlite3 *
store_db(struct store *st)
{
	return st->db;
}

sqlite3_stmt *
store_stmt(struct store *st, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int i;

	for (i = 0; i < st->nstmts; i++) {
		if (st->stmts[i].sql == sql) {
			s = st->stmts[i].stmt;
			sqlite3_reset(s);
			sqlite3_clear_bindings(s);
			return s;
		}
	}
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
		log_error("prepare failed: %s: %s", sqlite3_errmsg(st->db), sql);
		return NULL;
	}
	if (st->nstmts < STMT_CACHE_MAX) {
		st->stmts[st->nstmts].sql = sql;
		st->stmts[st->nstmts].stmt = s;
		st->nstmts++;
	} else {
		/* A bug (too many distinct statements); still correct, leaks
		 * one statement per call rather than failing. */
		log_warn("statement cache full");
	}
	return s;
}

int
store_begin(struct store *st, struct derr *e)
{
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return store_fail(st, "BEGIN", e);
	return 0;
}

int
store_commit(struct store *st, struct derr *e)
{
	if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		store_fail(st, "COMMIT", e);
		store_rollback(st);
		return -1;
	}
	return 0;
}

void
store_rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Steps one of the savepoint statements (static SQL, cached). */
static int
sp_exec(struct store *st, const char *sql)
{
	sqlite3_stmt *s = store_stmt(st, sql);
	int rc;

	if (s == NULL)
		return -1;
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

static const char SQL_SP[] = "SAVEPOINT tx";
/* Prepared once like any statement (store_stmt's cache): sqlite3_exec
 * compiled them again for every batch, a few microseconds each. */
static const char SQL_BEGIN[] = "BEGIN IMMEDIATE";
static const char SQL_COMMIT[] = "COMMIT";
static const char SQL_SP_UNDO[] = "ROLLBACK TO tx";
static const char SQL_SP_RELEASE[] = "RELEASE tx";

/* Commits the open batch (lock held) and fixes its outcome before the lock
 * is let go (store_batch_close); the caller then settles it. */
static void
commit_batch(struct store *st)
{
	int code = 0, sys_errno = 0;
	bool ok = sp_exec(st, SQL_COMMIT) == 0;

	if (!ok) {
		code = sqlite3_extended_errcode(st->db);
		sys_errno = sqlite3_system_errno(st->db);
		log_error("COMMIT of batch %llu: %s (%d%s%s)", (unsigned long long)st->batch,
		    sqlite3_errmsg(st->db), code, sys_errno ? ", " : "", sys_errno ? strerror(sys_errno) : "");
		store_rollback(st);
	}
	st->open = false;
	st->n_commits++;
	st->last_batch_writes = st->batch_writes;
	store_batch_close(st, st->batch, ok, code, sys_errno);
}

/* store_lock's flush of an open batch (lock held): settled at once. */
static void
commit_open(struct store *st)
{
	commit_batch(st);
	store_batch_settle(st);
}

/* The committer's wait before a COMMIT (c_mu held, and held again on
 * return). While the last batch carried two writes or more, writers are
 * arriving together: it waits until the open batch is twice that size, or
 * no write came for GATHER_GAP_US (the stream paused), or gather_us passed
 * since the batch began, whichever is first. A COMMIT costs about as much
 * as a write (its WAL frames, and the checkpointer copying them again); an
 * eager committer on an idle core commits every write alone (measured:
 * 58k commits for 66k writes at 6.5k POST/s) and fills the WAL ten times
 * faster, and the WAL restarts that follow are the POST tail. Gathering
 * does not slow a busy stream, whose replies wait for a COMMIT anyway; at
 * 16 writers it took POST from 6.8k to 10-13k/s, p99 from 15-21 ms to
 * 3.6-5.4 ms. Its price is at two or four writers: p50 0.29 -> 0.56 ms
 * (p99 16 -> 1.7 ms).
 * A lone writer (last batch of one) never waits; a thinning stream costs
 * one wait. */
static void
commit_gather(struct store *st)
{
	struct timespec ts;
	int64_t deadline, wake;

	pthread_mutex_unlock(&st->c_mu);
	pthread_mutex_lock(&st->lock);
	if (!st->open || st->gather_us <= 0 || st->last_batch_writes < 2) {
		pthread_mutex_unlock(&st->lock);
		pthread_mutex_lock(&st->c_mu);
		return;
	}
	st->gather_target = 2 * st->last_batch_writes;
	deadline = st->batch_opened_us + st->gather_us;
	pthread_mutex_unlock(&st->lock);
	pthread_mutex_lock(&st->c_mu);
	st->gathered = false;       /* a writer's mark from before this round */
	for (;;) {
		wake = atomic_load_explicit(&st->last_write_us, memory_order_relaxed) + GATHER_GAP_US;
		if (wake > deadline)
			wake = deadline;
		if (st->gathered || st->c_stop || mono_us() >= wake)
			break;
		ts.tv_sec = (time_t)(wake / 1000000);
		ts.tv_nsec = (long)(wake % 1000000) * 1000;
		pthread_cond_timedwait(&st->c_work, &st->c_mu, &ts);
	}
	/* gather_target is cleared by commit_main, under the lock it takes
	 * for the COMMIT anyway. */
}

/* The committer: commits the open batch whenever there is one. */
static void *
commit_main(void *arg)
{
	struct store *st = arg;

	pthread_mutex_lock(&st->c_mu);
	for (;;) {
		while (!st->dirty && !st->c_stop)
			pthread_cond_wait(&st->c_work, &st->c_mu);
		if (!st->dirty && st->c_stop)
			break;
		commit_gather(st);
		st->dirty = false;
		pthread_mutex_unlock(&st->c_mu);
		pthread_mutex_lock(&st->lock);
		st->gather_target = 0;
		if (st->open) {
			commit_batch(st);
			pthread_mutex_unlock(&st->lock);
			store_batch_settle(st);     /* writers go on meanwhile */
		} else {
			pthread_mutex_unlock(&st->lock);
		}
		pthread_mutex_lock(&st->c_mu);
	}
	pthread_mutex_unlock(&st->c_mu);
	return NULL;
}

/* Runs one body in the open batch (lock held), opening it if needed.
 * Returns the body's result; *b: the batch it wrote into (0: none);
 * *closed: SQLite ended the batch (the caller settles it). */
static int
body_run(struct store *st, store_tx_fn fn, void *arg, uint64_t *b, bool *closed, struct derr *e)
{
	int rc;

	*b = 0;
	*closed = false;
	if (!st->open) {
		store_rollback(st);     /* a ROLLBACK that failed after a failed COMMIT */
		if (sp_exec(st, SQL_BEGIN) != 0)
			return store_fail(st, "BEGIN", e);
		st->open = true;
		st->batch++;
		st->batch_opened_us = mono_us();
		st->batch_writes = 0;
	}
	if (sp_exec(st, SQL_SP) != 0)
		return store_fail(st, "SAVEPOINT", e);
	st->n_writes++;
	st->batch_writes++;
	rc = fn(st, store_now(st), arg, e);
	if (sqlite3_get_autocommit(st->db)) {
		/* SQLite ended the transaction (I/O error, full disk): the
		 * batch's earlier writes are lost with it. */
		st->open = false;
		*closed = true;
		store_batch_close(st, st->batch, false, sqlite3_extended_errcode(st->db),
		    sqlite3_system_errno(st->db));
		return rc != 0 ? rc : store_fail(st, "transaction ended by SQLite", e);
	}
	if (rc != 0 && sp_exec(st, SQL_SP_UNDO) != 0)
		log_error("ROLLBACK TO: %s", sqlite3_errmsg(st->db));
	if (sp_exec(st, SQL_SP_RELEASE) != 0)
		log_error("RELEASE: %s", sqlite3_errmsg(st->db));
	if (rc == 0)
		*b = st->batch;
	return rc;
}

void
store_tx_stats(struct store *st, uint64_t *writes, uint64_t *commits)
{
	pthread_mutex_lock(&st->lock);
	*writes = st->n_writes;
	*commits = st->n_commits;
	pthread_mutex_unlock(&st->lock);
}

/* Whether the write just run (lock held) commits on its own thread: no
 * other writer waits for the lock, and either the writer waits for its
 * commit anyway (not deferred: a side worker's write, e.g. a click's log)
 * or it is lone (no write in the last LONE_GAP_US) and the COMMIT is
 * quick (sync not full, which fsyncs). A deferred write on an HTTP worker
 * under load still goes to the committer: committing each on the worker
 * makes every write a batch of one (measured: 3.3k instead of 7.7k POST/s). */
static bool
commits_here(struct store *st)
{
	int64_t now = mono_us(), gap = now - st->last_write_us;

	st->last_write_us = now;
	if (atomic_load(&st->entering) != 0)
		return false;
	return !defer.on || (!st->sync_full && gap >= LONE_GAP_US);
}

/* Takes the store lock for a write. In nowait mode (nowait.h: an HTTP
 * worker) a lock held for a WAL restart (milliseconds of fsync) is refused
 * instead: the worker's other connections, reads among them, go on, and
 * http_side.c runs the write again on a side worker. A lock held for a
 * body or a COMMIT (microseconds) is waited for. */
static int
tx_lock(struct store *st, struct derr *e)
{
	if (nowait_active()) {
		if (pthread_mutex_trylock(&st->lock) == 0)
			return 0;
		if (atomic_load_explicit(&st->long_hold, memory_order_relaxed))
			return nowait_refuse(e, "the store is restarting its WAL");
	}
	pthread_mutex_lock(&st->lock);
	return 0;
}

int
store_tx(struct store *st, store_tx_fn fn, void *arg, struct derr *e)
{
	uint64_t b;
	int rc, state;
	bool gathered, closed;

	atomic_fetch_add(&st->entering, 1);
	if (tx_lock(st, e) != 0) {
		atomic_fetch_sub(&st->entering, 1);
		return -1;
	}
	atomic_fetch_sub(&st->entering, 1);
	rc = body_run(st, fn, arg, &b, &closed, e);
	gathered = st->gather_target > 0 && st->batch_writes >= st->gather_target;
	if (rc == 0 && st->open && (!st->c_running || commits_here(st))) {
		commit_batch(st);
		st->n_lone += st->c_running;
		closed = true;
	}
	pthread_mutex_unlock(&st->lock);
	if (closed)
		store_batch_settle(st);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&st->c_mu);
	if (!st->dirty && store_batch_state(st, b) == 0) {
		st->dirty = true;
		pthread_cond_signal(&st->c_work);
	} else if (gathered) {
		st->gathered = true;
		pthread_cond_signal(&st->c_work);
	}
	if (defer.on) {
		if (b > defer.ticket)
			defer.ticket = b;
		pthread_mutex_unlock(&st->c_mu);
		return 0;
	}
	while ((state = store_batch_state(st, b)) == 0)
		pthread_cond_wait(&st->c_cond, &st->c_mu);
	pthread_mutex_unlock(&st->c_mu);
	if (state < 0) {
		store_ticket_error(st, b, e);
		return -1;
	}
	return 0;
}

void
store_set_gather(struct store *st, int us)
{
	pthread_mutex_lock(&st->lock);
	st->gather_us = us < 0 ? 0 : us;
	pthread_mutex_unlock(&st->lock);
}

void
store_defer_begin(void)
{
	defer.on = true;
	defer.ticket = 0;
}

uint64_t
store_defer_end(void)
{
	defer.on = false;
	return defer.ticket;
}

uint64_t
store_defer_ticket(void)
{
	return defer.on ? defer.ticket : 0;
}

/* Opens a reader's connection (its lock held): query_only, a small cache. */
/* temp_mem: sorts and temporary tables in memory (the pool's readers:
 * their views are small); else in files, so that a private reader's long
 * query (an export's every log line in order) spills a big sort to disk
 * instead of holding it. */
static int
reader_open(struct store *rd, int cache_kb, bool temp_mem)
{
	char pragmas[160];

	if (sqlite3_open_v2(rd->path, &rd->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
	    NULL) != SQLITE_OK) {
		log_error("cannot open a read connection to %s: %s", rd->path,
		    rd->db ? sqlite3_errmsg(rd->db) : "out of memory");
		sqlite3_close(rd->db);
		rd->db = NULL;
		return -1;
	}
	sqlite3_busy_timeout(rd->db, 5000);
	snprintf(pragmas, sizeof pragmas, "PRAGMA query_only = 1; PRAGMA cache_size = -%d; "
	    "PRAGMA temp_store = %s;", cache_kb, temp_mem ? "MEMORY" : "FILE");
	if (sqlite3_exec(rd->db, pragmas, NULL, NULL, NULL) != SQLITE_OK)
		log_warn("read connection pragmas: %s", sqlite3_errmsg(rd->db));
	return 0;
}

struct store *
store_read_begin(struct store *st)
{
	unsigned start;
	struct store *rd = NULL;
	int i;

	if (st->is_private) {  /* its owner's alone: no pool, no lock */
		if (sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
			log_warn("read BEGIN: %s", sqlite3_errmsg(st->db));
		return st;
	}
	start = __atomic_fetch_add(&st->next_reader, 1, __ATOMIC_RELAXED);
	/* A free reader if there is one, else wait for the first tried. */
	for (i = 0; i < READERS && rd == NULL; i++) {
		if (pthread_mutex_trylock(&st->readers[(start + (unsigned)i) % READERS]->lock) == 0)
			rd = st->readers[(start + (unsigned)i) % READERS];
	}
	if (rd == NULL) {
		rd = st->readers[start % READERS];
		pthread_mutex_lock(&rd->lock);
	}
	if (rd->db == NULL && reader_open(rd, READER_CACHE_KB, true) != 0) {
		/* Still correct, only slower: read under the writer's lock. */
		pthread_mutex_unlock(&rd->lock);
		store_lock(st);
		return st;
	}
	if (sqlite3_exec(rd->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		log_warn("read BEGIN: %s", sqlite3_errmsg(rd->db));
	return rd;
}

void
store_read_end(struct store *rd)
{
	if (rd == NULL)
		return;
	if (rd->is_reader && !sqlite3_get_autocommit(rd->db))
		sqlite3_exec(rd->db, "COMMIT", NULL, NULL, NULL);
	if (!rd->is_private)
		pthread_mutex_unlock(&rd->lock);
}

struct store *
store_reader_open(struct store *st)
{
	struct store *rd = xcalloc(1, sizeof *rd);

	rd->wal_fd = -1;
	rd->is_reader = true;
	rd->is_private = true;
	rd->path = xstrdup(st->path);
	pthread_mutex_init(&rd->lock, NULL);
	pthread_mutex_init(&rd->ckpt_lock, NULL);
	pthread_cond_init(&rd->ckpt_cond, NULL);
	pthread_mutex_init(&rd->c_mu, NULL);
	pthread_mutex_init(&rd->s_mu, NULL);
	pthread_cond_init(&rd->c_work, NULL);
	pthread_cond_init(&rd->c_cond, NULL);
	if (reader_open(rd, PRIVATE_CACHE_KB, false) != 0) {
		store_close(rd);
		return NULL;
	}
	return rd;
}

void
store_reader_close(struct store *rd)
{
	if (rd == NULL)
		return;
	if (rd->db != NULL && !sqlite3_get_autocommit(rd->db))
		sqlite3_exec(rd->db, "ROLLBACK", NULL, NULL, NULL);
	store_close(rd);
}

bool
store_ok(struct store *st)
{
	struct store *rd = store_read_begin(st);
	sqlite3_stmt *s;
	bool ok = false;

	s = store_stmt(rd, "SELECT count(*) FROM sqlite_master");
	if (s != NULL && sqlite3_step(s) == SQLITE_ROW)
		ok = true;
	if (s != NULL)
		sqlite3_reset(s);
	store_read_end(rd);
	return ok;
}

int
store_schema_version(struct store *st)
{
	int v;

	store_lock(st);
	v = db_version(st->db);
	store_unlock(st);
	return v;
}

int
store_exec(struct store *st, sqlite3_stmt *s, const char *what, struct derr *e)
{
	int rc;

	if (s == NULL)
		return store_fail(st, what, e);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return store_fail(st, what, e);
	return 0;
}
