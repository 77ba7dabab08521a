/*
 * store_int.h - the store's private state, shared by store.c (connections,
 * migrations, the checkpointer, the committer) and store_commit.c (what
 * became of each batch: committed, failed, stored but not durable; the
 * write health). Not for any other file.
 *
 * Lock order: `lock` (the writer connection) before s_mu (the WAL's
 * fdatasync under sync full) before c_mu (outcomes, the commit hook).
 */
#ifndef DETM_STORE_INT_H
#define DETM_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "store.h"

#define OUTCOME_RING 4096           /* batches that did not end well, remembered by number */

/* A batch that did not end well: b did not commit (kind STORE_FAILED, code:
 * SQLite's extended code) or committed but its fdatasync failed
 * (STORE_NOT_DURABLE, code 0). sys_errno: the system's errno, 0 unknown. */
struct store_outcome {
	uint64_t b;
	int kind;
	int code;
	int sys_errno;
};

#define STMT_CACHE_MAX 128
#define READERS 4                   /* read connections (one per HTTP worker and spare) */
#define READER_CACHE_KB 1024        /* page cache of each (the writer keeps SQLite's default) */
#define PRIVATE_CACHE_KB 256        /* of a private reader (store_reader_open): a stream's, read in order */
#define CHECKPOINT_INTERVAL_MS 100
#define CHECKPOINT_RESTART_FRAMES 4096   /* ~16 MB of WAL */
#define CHECKPOINT_FORCE_FRAMES 6144     /* ~24 MB: the writer restarts it itself */
#define CATCHUP_FRAMES 256          /* a RESTART under the lock copies about this many */
#define CATCHUP_PASSES 8
#define WAL_SIZE_LIMIT (64 * 1024 * 1024) /* a restarted WAL is cut back to this */

#define LONE_GAP_US 2000            /* a write this long after the last one is lone */
#define GATHER_GAP_US 150           /* commit_gather: no write this long: the stream paused */

struct store {
	sqlite3 *db;
	pthread_mutex_t lock;
	/* group commit: under `lock` */
	bool open;                  /* a batch's transaction is open */
	uint64_t batch;             /* the open batch's number, else the last one's */
	uint64_t n_writes, n_commits, n_lone;
	uint64_t n_restarts;        /* WAL restarts under the lock, and their time */
	int64_t restart_us, restart_max_us;
	_Atomic int64_t last_write_us;  /* when the last body ran (mono_us; written under lock) */
	int64_t batch_opened_us;    /* when the open batch began (mono_us) */
	int batch_writes;           /* writes in the open batch */
	int last_batch_writes;      /* writes in the last batch committed */
	int gather_target;          /* the committer waits for this many (0: not waiting) */
	int gather_us;              /* store_set_gather */
	_Atomic int entering;       /* writers in store_tx before their body ran */
	_Atomic bool long_hold;     /* the lock is held for a WAL restart (tx_lock) */
	bool sync_full;             /* a lone deferred write still goes to the committer */
	/* under c_mu */
	pthread_mutex_t c_mu;
	pthread_cond_t c_work;      /* the committer has a batch to commit, or stop */
	pthread_cond_t c_cond;      /* a COMMIT ended */
	uint64_t closed;            /* the last batch whose COMMIT ended (ok or not) */
	uint64_t done;              /* every batch <= done has its outcome (store_commit.c) */
	uint64_t hooked;            /* the hook ran for every batch <= hooked */
	struct store_outcome bad[OUTCOME_RING]; /* batches that did not end well */
	int err_code;               /* SQLite's code of the failing write (0: writes work) */
	int err_errno;              /* and the system's errno of it */
	int64_t err_since_ms;       /* when writes began to fail (now_ms) */
	uint64_t n_write_failures;  /* batches and bodies that failed on the disk */
	int64_t ckpt_log_ms;        /* the last checkpoint failure logged (now_ms) */
	uint64_t ckpt_quiet;        /* failures since, not logged */
	bool dirty, c_stop;
	bool gathered;              /* the open batch reached gather_target */
	pthread_t c_thread;
	bool c_running;
	void (*hook)(void *arg, uint64_t batch, bool ok);
	void *hook_arg;
	/* sync full: the WAL, fdatasync'ed after each COMMIT outside the lock
	 * (-1: SQLite's own synchronous=FULL does it, under the lock) */
	int wal_fd;
	pthread_mutex_t s_mu;       /* one fdatasync at a time, and its verdict */
	_Atomic bool sync_bad;      /* an fdatasync failed: nothing is durable until healed */
	int sync_errno;             /* its errno (under s_mu) */
	_Atomic uint64_t n_sync_failures, n_ckpt_failures;
	int changes_at_lock;        /* store_lock users: did they write? */

	/* Read connections, opened at first use; each is a struct store with
	 * only db, lock and the statement cache in use (is_reader). */
	struct store *readers[READERS];
	unsigned next_reader;       /* round robin start (atomic, a hint only) */
	bool is_reader;
	bool is_private;            /* store_reader_open's: not in the pool, no locking */
	struct {
		const char *sql;
		sqlite3_stmt *stmt;
	} stmts[STMT_CACHE_MAX];
	int nstmts;
	int64_t last_now;           /* the largest store_now so far */

	char *path;
	pthread_t ckpt_thread;
	bool ckpt_running;
	int wal_force_at;       /* wal_after_commit's next try, in frames (under lock) */
	pthread_mutex_t ckpt_lock;
	pthread_cond_t ckpt_cond;
	bool ckpt_stop;
};

/* store_commit.c, for store.c. All with `lock` held unless said. */
/* Batch b's COMMIT ended (ok, or failed with SQLite's code and errno):
 * its outcome is fixed here, in batch order, before the lock is let go. */
void store_batch_close(struct store *st, uint64_t b, bool ok, int code, int sys_errno);
/* Makes closed batches durable (sync full) and tells the hook and the
 * waiters, in batch order. With or without `lock` held. */
void store_batch_settle(struct store *st);
/* 1 batch b ended well, 0 not yet, STORE_FAILED, STORE_NOT_DURABLE (c_mu held). */
int store_batch_state(struct store *st, uint64_t b);
/* After an fdatasync of the WAL outside a batch failed (errno err). */
void store_sync_failed(struct store *st, int err);
/* A checkpoint failed with rc on db (logged at most every 10 s; counted
 * unless busy: readers held it up). */
void store_ckpt_failed(struct store *st, sqlite3 *db, int rc, const char *what);

#endif
