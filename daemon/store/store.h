/*
 * store.h - the SQLite database: opening, migrations, locking, statements.
 *
 * One struct store per daemon holds one read-write connection in WAL mode
 * with foreign keys on, used under store_lock/store_unlock (SQLite
 * connections are not shared between threads without a mutex). Writes go
 * through store_tx (group commit: one transaction for many requests, each
 * all or nothing), so a crash leaves each either whole or absent. Reads go
 * through store_read_begin/store_read_end: a small pool of read connections
 * (WAL snapshots), so a read never waits for a write.
 *
 * Durability: synchronous=NORMAL by default. In WAL mode a committed
 * transaction survives a crash or kill -9 of detmd (the WAL is in the OS page
 * cache); only an OS crash or power loss can lose the last commits. With
 * sync "full" every commit is fsync'ed (about 14x slower per commit).
 *
 * A background thread checkpoints the WAL with its own connection, so
 * request threads never pay for a checkpoint (wal_autocheckpoint is off).
 * Another (the committer) commits the writes of store_tx in batches.
 *
 * Not here: the task model (task.c), SQL for features (their own modules).
 */
#ifndef DETM_STORE_H
#define DETM_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>

#include "core/util.h"
#include "derr.h"

struct store;

/* Opens or creates the database at path and applies the embedded
 * migrations. On success *out owns the store (free with store_close); on
 * failure *out is NULL and e says why (the message may name the path). */
int store_open(const char *path, bool sync_full, struct store **out,
    struct derr *e) DETM_NODISCARD;
/* Stops the checkpointer, checkpoints, closes. NULL is a no-op. */
void store_close(struct store *st);

/* The writer connection for direct statements, in autocommit: a batch of
 * store_tx writes still open is committed first. */
void store_lock(struct store *st);
void store_unlock(struct store *st);

/* The clock for rows (lock held): now_ms(), but never less than the last
 * value it returned, nor than the created_at of the newest thread message
 * at open. Read it after taking the lock, so that rows written later (in
 * rowid order) never carry an earlier time than rows written before them,
 * even when the wall clock steps back. */
int64_t store_now(struct store *st);

/* A prepared statement for sql, cached by the address of sql (pass string
 * literals or other static strings only), reset and with bindings cleared.
 * The caller holds the lock and must not finalize it. NULL on a prepare
 * error, which is logged. */
sqlite3_stmt *store_stmt(struct store *st, const char *sql);
sqlite3 *store_db(struct store *st);

/* A write transaction's body: runs with the lock held inside a transaction,
 * `now` read from store_now after the lock (rows written later carry no
 * earlier time). Returns 0, or -1 with e set: then everything it wrote is
 * undone. It must not take the lock, publish events or do slow work (other
 * writers wait for it); do those after store_tx returns. */
typedef int (*store_tx_fn)(struct store *st, int64_t now, void *arg, struct derr *e);

/* Runs fn as one write, all or nothing, with group commit: fn runs on the
 * calling thread inside the open batch's transaction, shared with other
 * writers' bodies, in its own SAVEPOINT: when fn fails only its own writes
 * are undone. The committer thread commits the batch. Returns 0 only once
 * the batch's COMMIT has returned (durable at the configured sync level, so
 * a reply sent after it survives kill -9) - except inside
 * store_defer_begin/end, where it returns 0 as soon as fn succeeded and
 * the caller must wait for the ticket instead. -1 with e from fn, or when
 * the batch did not commit (DERR_NO_SPACE, DERR_IO_ERROR, DERR_INTERNAL:
 * nothing of fn's writes is stored) or committed but could not be made
 * durable (DERR_NOT_DURABLE: stored and visible). Takes the lock
 * itself (do not hold it). */
int store_tx(struct store *st, store_tx_fn fn, void *arg, struct derr *e) DETM_NODISCARD;
/* In nowait mode (nowait.h: an HTTP worker), store_tx does not wait for a
 * lock held by a WAL restart (store_restart_wal, or the one a commit past
 * the WAL's bound runs): it returns -1 with e (DERR_UNAVAILABLE, "would
 * wait: ...") before fn runs, and the caller runs it again where it may
 * wait. A lock held by other writers' bodies or a COMMIT is waited for. */

/* Restarts the WAL under the store lock (commits an open batch first): a
 * RESTART checkpoint copies every frame into the database, fsyncs it and
 * waits (up to 5 s) for readers still on older frames. The checkpointer
 * runs it when the WAL is long; 0, or -1 when SQLite refused (busy). */
int store_restart_wal(struct store *st);

/* Deferred acknowledgement, for a caller that must not wait (an HTTP
 * worker): between store_defer_begin and store_defer_end on one thread,
 * store_tx does not wait for the COMMIT; store_defer_end returns the
 * ticket (the batch of the last write, 0: nothing written) that must have
 * committed before anyone is told the writes happened. Until then the
 * writes are invisible to readers. Do not read back through a read
 * connection what was written in between. */
void store_defer_begin(void);
uint64_t store_defer_end(void);
/* The current thread's ticket so far (0: not deferring or nothing written). */
uint64_t store_defer_ticket(void);
/* What became of a ticket's batch: 1 it committed (and, with sync full, is
 * durable; ticket 0 counts as committed), 0 not known yet, STORE_FAILED it
 * did not commit (nothing of it is stored), STORE_NOT_DURABLE it committed
 * and is visible but its fdatasync failed. Outcomes are fixed in batch
 * order, so a later batch's is never known before an earlier one's. The
 * last 4096 batches that did not end well are remembered. */
#define STORE_FAILED (-1)
#define STORE_NOT_DURABLE (-2)
int store_ticket_state(struct store *st, uint64_t ticket);
/* Fills e for a ticket whose state is < 0: DERR_NO_SPACE, DERR_IO_ERROR or
 * DERR_INTERNAL (not committed), DERR_NOT_DURABLE (stored, not durable). */
void store_ticket_error(struct store *st, uint64_t ticket, struct derr *e);
/* fn(arg, batch, ok) once for every batch, in batch order, when its
 * outcome is known (ok: it is stored, durable or not), on the thread that
 * learnt it, under an internal lock (fn must be quick and must not call
 * store_tx or store_lock); NULL removes it, and once this returns the old
 * hook is not running. */
void store_set_commit_hook(struct store *st, void (*fn)(void *arg, uint64_t batch, bool ok),
    void *arg);

/* How long the committer may wait for a busy stream's batch to fill, in
 * microseconds after the batch's first write (0: commit at once). It waits
 * only while the last batch carried two writes or more, and only until the
 * open batch is twice that size or the writes pause (store.c,
 * commit_gather). Default STORE_GATHER_US. */
#define STORE_GATHER_US 500
void store_set_gather(struct store *st, int us);

/* Counters since open: writes done through store_tx and the COMMITs that
 * carried them (writes / commits is the mean batch size). */
void store_tx_stats(struct store *st, uint64_t *writes, uint64_t *commits);

/* Transactions (lock held). Return 0 or -1 with e set to DERR_INTERNAL. */
int store_begin(struct store *st, struct derr *e) DETM_NODISCARD;
int store_commit(struct store *st, struct derr *e) DETM_NODISCARD;
void store_rollback(struct store *st);

/* Logs the connection's last error for `what` and fills e: DERR_NO_SPACE
 * (the disk is full), DERR_IO_ERROR (the disk failed) or DERR_INTERNAL
 * (anything else, details only in the log). On the writer connection a
 * full disk or an I/O error also marks the store degraded until a write
 * commits again; on a reader (store_read_begin) a disk error is io_error
 * ("nothing was changed") and counted in read_failures. Returns -1. */
int store_fail(struct store *st, const char *what, struct derr *e);

/* The store's write health: false while writes work. True while they fail
 * on the disk (full, I/O errors: since the last failure, until a write
 * commits again) or while durability is lost (sync full: an fdatasync
 * failed and no checkpoint has repaired it yet); cause then says which,
 * since when. Counters for /metrics. */
struct store_faults {
	uint64_t write_failures;    /* writes and batches refused by the disk */
	uint64_t sync_failures;     /* failed fdatasyncs of the WAL (sync full) */
	uint64_t ckpt_failures;     /* failed checkpoints */
	uint64_t read_failures;     /* reads the disk refused (io_error to the client) */
};
bool store_degraded(struct store *st, char *cause, size_t n);
void store_fault_stats(struct store *st, struct store_faults *out);

/* A read snapshot that never waits for writers: one of a small pool of
 * read connections (WAL readers, query_only), locked for the caller, in a
 * read transaction, so every statement until store_read_end sees the same
 * committed state (never another writer's uncommitted batch) and at least
 * every write whose store_tx returned before the call. Use the returned
 * store with store_stmt/store_fail and read-only helpers (task_lookup);
 * never write through it, and do not take store_lock while holding it.
 * Waits only when every reader is busy. Never NULL. */
struct store *store_read_begin(struct store *st);
/* Ends the snapshot and frees the reader. NULL is a no-op. */
void store_read_end(struct store *rd);

/* A read connection of the caller's own, outside the pool, for a reader
 * that may hold a snapshot for long (a reply streamed at its client's
 * pace) without taking a pool reader from the requests. store_read_begin
 * on it BEGINs a snapshot on it (no waiting, no locking) and returns it;
 * store_read_end ends it. One thread at a time uses it (it may be handed
 * to another thread between calls). NULL when it cannot be opened
 * (logged). */
struct store *store_reader_open(struct store *st);
/* Ends a snapshot still open, closes, frees. NULL ok. */
void store_reader_close(struct store *rd);

/* Cheap liveness check for /api/health (a read connection). */
bool store_ok(struct store *st);
/* Runs a prepared statement that returns no rows (lock held), then resets
 * it and clears its bindings. s may be NULL (store_stmt failed): then, or
 * on any step error, fills e through store_fail and returns -1. */
int store_exec(struct store *st, sqlite3_stmt *s, const char *what, struct derr *e);
int store_schema_version(struct store *st);

#endif
