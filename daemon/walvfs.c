/*
 * walvfs.c - see walvfs.h.
 *
 * Owns: the "detm-wal" VFS, a shim over SQLite's default (unix) VFS that
 * the store's writing connection opens its database through, and the
 * write buffer of each WAL file opened through it.
 *
 * Why: SQLite appends a WAL frame as two writes (its 24-byte header, then
 * the page), so a commit of n pages costs 2n pwrite calls; on this VM each
 * system call is several microseconds of hypervisor exit. The shim keeps a
 * commit's appends in memory and writes them with one call when the commit
 * frame's page arrives, so a commit is one pwrite.
 *
 * States of a WAL file's buffer: empty, or holding `len` bytes that belong
 * at file offset `off` (contiguous appends not yet written). Invariants:
 *  - the buffer is written before any other operation on that file (read,
 *    sync, size, truncate, file control, lock, close) and before a write
 *    that does not continue it, so every other operation sees the file as
 *    if each write had gone straight through;
 *  - a commit frame (a frame header whose "database size after commit"
 *    field is not zero) is written out together with its page inside the
 *    xWrite call of that page, whose result is the result of the write: a
 *    failure (disk full) fails the commit, as a direct write would;
 *  - SQLite publishes a commit to other connections (the wal-index header)
 *    only after the commit frame was written, behind a memory barrier on
 *    the database file; that barrier writes out any buffer of the WAL of
 *    the same path too (it never finds one unless the commit frame was
 *    missed: a safety net whose failure can only be logged).
 * A crash or kill -9 loses nothing acknowledged: bytes still in a buffer
 * belong to a commit that has not returned.
 *
 * Does not: change what is written, or where, or the order of anything
 * other connections can observe; touch files other than WALs (databases
 * and journals pass straight through, shared memory included).
 */
#include "walvfs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

/* A run is written out when it would pass this. The unix VFS's xWrite
 * takes less than 128 KB per call (it masks the length with 0x1ffff), and a
 * commit of a few dozen pages fits. */
#define BUF_CAP         (64 * 1024)
#define FRAME_HDR       24              /* SQLite's WAL frame header */

struct wfile {
	sqlite3_file base;      /* methods: ours */
	sqlite3_file *real;     /* the unix VFS's file, right after this struct */
	bool wal;
	/* WAL files only */
	pthread_mutex_t mu;
	char *buf;
	size_t len;
	sqlite3_int64 off;      /* where buf[0] belongs */
	bool commit_next;       /* the last write was a commit frame's header */
	char *path;             /* the WAL's name, for the barrier's lookup */
	struct wfile *next;     /* on `wals` */
};

static sqlite3_vfs shim;
static sqlite3_vfs *real_vfs;
static sqlite3_io_methods methods;
static pthread_mutex_t wals_mu = PTHREAD_MUTEX_INITIALIZER;
static struct wfile *wals;      /* open WAL files (for the barrier) */
static atomic_int held;         /* WAL files whose buffer is not empty */

/* Writes the buffer out (mu held). */
static int
flush_locked(struct wfile *f)
{
	int rc = SQLITE_OK;

	if (f->len > 0) {
		rc = f->real->pMethods->xWrite(f->real, f->buf, (int)f->len, f->off);
		f->len = 0;
		atomic_fetch_sub(&held, 1);
	}
	f->commit_next = false;
	return rc;
}

static int
wflush(struct wfile *f)
{
	int rc;

	if (!f->wal)
		return SQLITE_OK;
	pthread_mutex_lock(&f->mu);
	rc = flush_locked(f);
	pthread_mutex_unlock(&f->mu);
	return rc;
}

static int
x_close(sqlite3_file *p)
{
	struct wfile *f = (struct wfile *)p, **pp;
	int rc = wflush(f), rc2;

	if (f->wal) {
		pthread_mutex_lock(&wals_mu);
		for (pp = &wals; *pp != NULL; pp = &(*pp)->next) {
			if (*pp == f) {
				*pp = f->next;
				break;
			}
		}
		pthread_mutex_unlock(&wals_mu);
		pthread_mutex_destroy(&f->mu);
		free(f->buf);
	}
	free(f->path);
	rc2 = f->real->pMethods->xClose(f->real);
	return rc != SQLITE_OK ? rc : rc2;
}

/* Whether a FRAME_HDR-byte write is a commit frame's header: bytes 4..7
 * (big-endian) are the database's size in pages after the commit, zero
 * in every other frame. */
static bool
commit_header(const void *data, int n)
{
	const unsigned char *h = data;

	return n == FRAME_HDR && (h[4] | h[5] | h[6] | h[7]) != 0;
}

static int
wal_write(struct wfile *f, const void *data, int n, sqlite3_int64 off)
{
	bool commit_now;
	int rc = SQLITE_OK;

	pthread_mutex_lock(&f->mu);
	if (f->len > 0 && (off != f->off + (sqlite3_int64)f->len || f->len + (size_t)n > BUF_CAP))
		rc = flush_locked(f);
	commit_now = f->commit_next;
	if (rc == SQLITE_OK && (size_t)n > BUF_CAP) {
		rc = f->real->pMethods->xWrite(f->real, data, n, off);
	} else if (rc == SQLITE_OK) {
		if (f->buf == NULL)
			f->buf = xmalloc(BUF_CAP);
		if (f->len == 0) {
			f->off = off;
			atomic_fetch_add(&held, 1);
		}
		memcpy(f->buf + f->len, data, (size_t)n);
		f->len += (size_t)n;
		f->commit_next = commit_header(data, n);
		if (commit_now)
			rc = flush_locked(f);
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

static int
x_write(sqlite3_file *p, const void *data, int n, sqlite3_int64 off)
{
	struct wfile *f = (struct wfile *)p;

	if (f->wal)
		return wal_write(f, data, n, off);
	return f->real->pMethods->xWrite(f->real, data, n, off);
}

/* The rest: write the buffer out first, then pass through. */
#define PASS(name, args, call) \
	static int name args { struct wfile *f = (struct wfile *)p; int rc = wflush(f); \
	return rc != SQLITE_OK ? rc : f->real->pMethods->call; }

PASS(x_read, (sqlite3_file *p, void *b, int n, sqlite3_int64 o), xRead(f->real, b, n, o))
PASS(x_truncate, (sqlite3_file *p, sqlite3_int64 size), xTruncate(f->real, size))
PASS(x_sync, (sqlite3_file *p, int flags), xSync(f->real, flags))
PASS(x_size, (sqlite3_file *p, sqlite3_int64 *size), xFileSize(f->real, size))
PASS(x_lock, (sqlite3_file *p, int l), xLock(f->real, l))
PASS(x_unlock, (sqlite3_file *p, int l), xUnlock(f->real, l))
PASS(x_reserved, (sqlite3_file *p, int *out), xCheckReservedLock(f->real, out))
PASS(x_fcntl, (sqlite3_file *p, int op, void *arg), xFileControl(f->real, op, arg))
PASS(x_shm_map, (sqlite3_file *p, int pg, int sz, int ext, void volatile **pp),
    xShmMap(f->real, pg, sz, ext, pp))
PASS(x_shm_lock, (sqlite3_file *p, int ofst, int n, int flags), xShmLock(f->real, ofst, n, flags))
PASS(x_shm_unmap, (sqlite3_file *p, int del), xShmUnmap(f->real, del))
PASS(x_fetch, (sqlite3_file *p, sqlite3_int64 o, int n, void **pp), xFetch(f->real, o, n, pp))
PASS(x_unfetch, (sqlite3_file *p, sqlite3_int64 o, void *pg), xUnfetch(f->real, o, pg))

static int
x_sector(sqlite3_file *p)
{
	struct wfile *f = (struct wfile *)p;

	return f->real->pMethods->xSectorSize(f->real);
}

static int
x_devchar(sqlite3_file *p)
{
	struct wfile *f = (struct wfile *)p;

	return f->real->pMethods->xDeviceCharacteristics(f->real);
}

/* A database file's barrier: SQLite is about to publish frames to other
 * connections (or is reading the wal-index header: every read transaction
 * passes here). The WAL of the same path has no buffer left unless a commit
 * frame went unrecognised; write it out anyway. `held` makes the usual
 * case, nothing held anywhere, one atomic load. */
static void
x_shm_barrier(sqlite3_file *p)
{
	struct wfile *f = (struct wfile *)p, *w;
	const char *db = f->path;
	size_t dl;
	int rc;

	if (atomic_load(&held) == 0 || db == NULL) {
		f->real->pMethods->xShmBarrier(f->real);
		return;
	}
	dl = strlen(db);
	pthread_mutex_lock(&wals_mu);
	for (w = wals; w != NULL; w = w->next) {
		if (strncmp(w->path, db, dl) == 0 && strcmp(w->path + dl, "-wal") == 0 &&
		    (rc = wflush(w)) != SQLITE_OK)
			log_error("WAL write before a barrier failed (SQLite error %d)", rc);
	}
	pthread_mutex_unlock(&wals_mu);
	f->real->pMethods->xShmBarrier(f->real);
}

static int
x_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *p, int flags, int *out_flags)
{
	struct wfile *f = (struct wfile *)p;
	int rc;

	(void)vfs;
	memset(f, 0, sizeof *f);
	f->real = (sqlite3_file *)(f + 1);
	rc = real_vfs->xOpen(real_vfs, name, f->real, flags, out_flags);
	if (rc != SQLITE_OK) {
		f->base.pMethods = NULL;    /* SQLite then does not call xClose */
		return rc;
	}
	f->base.pMethods = &methods;
	f->wal = (flags & SQLITE_OPEN_WAL) != 0 && name != NULL;
	if (name != NULL && (f->wal || (flags & SQLITE_OPEN_MAIN_DB)))
		f->path = xstrdup(name);
	if (f->wal) {
		pthread_mutex_init(&f->mu, NULL);
		pthread_mutex_lock(&wals_mu);
		f->next = wals;
		wals = f;
		pthread_mutex_unlock(&wals_mu);
	}
	return SQLITE_OK;
}

/* The VFS's other calls go to the real one. */
static int
v_delete(sqlite3_vfs *v, const char *name, int sync)
{
	(void)v;
	return real_vfs->xDelete(real_vfs, name, sync);
}

static int
v_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	(void)v;
	return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int
v_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
	(void)v;
	return real_vfs->xFullPathname(real_vfs, name, n, out);
}

static void *
v_dlopen(sqlite3_vfs *v, const char *name)
{
	(void)v;
	return real_vfs->xDlOpen(real_vfs, name);
}

static void
v_dlerror(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	real_vfs->xDlError(real_vfs, n, out);
}

static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	(void)v;
	return real_vfs->xDlSym(real_vfs, h, sym);
}

static void
v_dlclose(sqlite3_vfs *v, void *h)
{
	(void)v;
	real_vfs->xDlClose(real_vfs, h);
}

static int
v_random(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs->xRandomness(real_vfs, n, out);
}

static int
v_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return real_vfs->xSleep(real_vfs, us);
}

static int
v_time(sqlite3_vfs *v, double *out)
{
	(void)v;
	return real_vfs->xCurrentTime(real_vfs, out);
}

static int
v_lasterr(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs->xGetLastError(real_vfs, n, out);
}

static int
v_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	(void)v;
	return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_rc = SQLITE_ERROR;

static void
init_once(void)
{
	real_vfs = sqlite3_vfs_find(NULL);
	if (real_vfs == NULL || real_vfs->iVersion < 2) {
		log_warn("no usable default SQLite VFS: WAL writes are not batched");
		return;
	}
	methods = (sqlite3_io_methods){
		.iVersion = 3,
		.xClose = x_close, .xRead = x_read, .xWrite = x_write,
		.xTruncate = x_truncate, .xSync = x_sync, .xFileSize = x_size,
		.xLock = x_lock, .xUnlock = x_unlock, .xCheckReservedLock = x_reserved,
		.xFileControl = x_fcntl, .xSectorSize = x_sector,
		.xDeviceCharacteristics = x_devchar,
		.xShmMap = x_shm_map, .xShmLock = x_shm_lock, .xShmBarrier = x_shm_barrier,
		.xShmUnmap = x_shm_unmap, .xFetch = x_fetch, .xUnfetch = x_unfetch,
	};
	shim = (sqlite3_vfs){
		.iVersion = 2,
		.szOsFile = (int)sizeof(struct wfile) + real_vfs->szOsFile,
		.mxPathname = real_vfs->mxPathname,
		.zName = WALVFS_NAME,
		.xOpen = x_open, .xDelete = v_delete, .xAccess = v_access,
		.xFullPathname = v_fullpath, .xDlOpen = v_dlopen, .xDlError = v_dlerror,
		.xDlSym = v_dlsym, .xDlClose = v_dlclose, .xRandomness = v_random,
		.xSleep = v_sleep, .xCurrentTime = v_time, .xGetLastError = v_lasterr,
		.xCurrentTimeInt64 = v_time64,
	};
	init_rc = sqlite3_vfs_register(&shim, 0);
	if (init_rc != SQLITE_OK)
		log_warn("cannot register the %s VFS: WAL writes are not batched", WALVFS_NAME);
}

const char *
walvfs_name(void)
{
	pthread_once(&once, init_once);
	return init_rc == SQLITE_OK ? WALVFS_NAME : NULL;
}
