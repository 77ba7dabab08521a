/* inject.c - libdetm-inject.so, an LD_PRELOAD library for tests/faults/run.sh:
 * disk faults and a power-loss recorder under detmd's database files.
 *
 * Owns: the wrappers of open/open64/openat/openat64 (and their _2 fortify
 * forms), close, pread/pread64 (fault mode only), pwrite/pwrite64/write/writev, fsync/fdatasync and
 * ftruncate/ftruncate64 (SQLite, built with _FILE_OFFSET_BITS=64, calls
 * the 64 forms); the table of tracked fds (fd -> tracked file, keyed by
 * dev/inode); in fault mode the fault window and its log; in power-loss
 * mode the dirty byte ranges of each tracked file and its `<path>.synced`
 * shadow.
 *
 * Environment (read once, at the first wrapped call):
 *   DETM_INJECT_FILE     comma list of path suffixes to track (data.db-wal)
 *   DETM_INJECT_MODE     fault (default) | powerloss
 *   DETM_INJECT_OPS      comma list of pread,pwrite,write,writev,fsync,
 *                        fdatasync,ftruncate (pread/pwrite cover their 64
 *                        forms); default pwrite
 *   DETM_INJECT_ERRNO    EIO (default) | ENOSPC | a number
 *   DETM_INJECT_AFTER    matching calls that pass before the window opens (0)
 *   DETM_INJECT_MS       window length in ms; 0 or unset: no end
 *   DETM_INJECT_TRIGGER  a path: the window opens only once it exists
 *                        (stat at most every 50 ms)
 *   DETM_INJECT_LOG      rewritten at each fault: "injected N start_ms S
 *                        window_ms W" (S: CLOCK_REALTIME ms of the window)
 *
 * Invariants: a tracked fd's slot is set after its open returns and cleared
 * before its close; a call on an untracked fd costs one atomic load; fault
 * mode takes no lock and allocates nothing outside the log write; power-loss
 * mode copies to a shadow only the ranges written before a successful sync
 * began, clipped to the file's size at that moment (SQLite's crash tests:
 * whatever was not synced is lost).
 *
 * Does not: follow dup/dup2/fcntl(F_DUPFD), rename or unlink; sync
 * directories; track fds above FD_MAX; touch mmap'd writes (the -shm file).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define FD_MAX 4096
#define FILES_MAX 32
#define SUFFIX_MAX 8
#define RANGES_MAX 65536

enum { OP_PWRITE = 1, OP_WRITE = 2, OP_WRITEV = 4, OP_FSYNC = 8, OP_FDATASYNC = 16, OP_FTRUNCATE = 32,
       OP_PREAD = 64 };

struct range { off_t lo, hi; };

struct tfile {
	dev_t dev;
	ino_t ino;
	char path[4096];
	pthread_mutex_t mu;      /* the fields below */
	struct range *r;
	size_t n, cap;
	off_t trunc;             /* lowest ftruncate since the last sync; -1 none */
	pthread_mutex_t copy_mu; /* one shadow copy at a time */
};

static struct {
	bool on, powerloss;
	char suffix[SUFFIX_MAX][256];
	int nsuffix, ops, err;
	long after, ms;
	const char *trigger, *log;
} cfg;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t files_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tfile files[FILES_MAX];
static _Atomic int nfiles;
static _Atomic int fd_file[FD_MAX];     /* 0 untracked, else files[] index + 1 */
static _Atomic long seen, injected;
static _Atomic long long win_start, trig_check;
static _Atomic bool trig_seen;

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_open_2)(const char *, int);
static int (*real_open64_2)(const char *, int);
static int (*real_close)(int);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off_t);

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);

static void
inject_parse_ops(const char *s)
{
	static const struct { const char *name; int op; } names[] = {
		{ "pwrite", OP_PWRITE }, { "write", OP_WRITE }, { "writev", OP_WRITEV },
		{ "fsync", OP_FSYNC }, { "fdatasync", OP_FDATASYNC }, { "ftruncate", OP_FTRUNCATE },
		{ "pread", OP_PREAD },
	};
	char buf[256], *tok, *save;
	size_t i;

	snprintf(buf, sizeof buf, "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		for (i = 0; i < sizeof names / sizeof names[0]; i++)
			if (strcmp(tok, names[i].name) == 0)
				cfg.ops |= names[i].op;
}

static void
inject_parse_files(const char *s)
{
	char buf[2048], *tok, *save;

	snprintf(buf, sizeof buf, "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok && cfg.nsuffix < SUFFIX_MAX;
	     tok = strtok_r(NULL, ",", &save))
		snprintf(cfg.suffix[cfg.nsuffix++], sizeof cfg.suffix[0], "%s", tok);
}

#define RESOLVE(v, name) (v = (__typeof__(v))dlsym(RTLD_NEXT, name))

static void
inject_init(void)
{
	const char *s;

	RESOLVE(real_open, "open");
	RESOLVE(real_open64, "open64");
	RESOLVE(real_openat, "openat");
	RESOLVE(real_openat64, "openat64");
	RESOLVE(real_open_2, "__open_2");
	RESOLVE(real_open64_2, "__open64_2");
	RESOLVE(real_close, "close");
	RESOLVE(real_pread, "pread");
	RESOLVE(real_pread64, "pread64");
	RESOLVE(real_pwrite, "pwrite");
	RESOLVE(real_pwrite64, "pwrite64");
	RESOLVE(real_write, "write");
	RESOLVE(real_writev, "writev");
	RESOLVE(real_fsync, "fsync");
	RESOLVE(real_fdatasync, "fdatasync");
	RESOLVE(real_ftruncate, "ftruncate");
	RESOLVE(real_ftruncate64, "ftruncate64");
	if ((s = getenv("DETM_INJECT_FILE")) == NULL || *s == '\0')
		return;
	inject_parse_files(s);
	cfg.powerloss = (s = getenv("DETM_INJECT_MODE")) != NULL && strcmp(s, "powerloss") == 0;
	inject_parse_ops((s = getenv("DETM_INJECT_OPS")) ? s : "pwrite");
	s = getenv("DETM_INJECT_ERRNO");
	cfg.err = !s || strcmp(s, "EIO") == 0 ? EIO : strcmp(s, "ENOSPC") == 0 ? ENOSPC : atoi(s);
	cfg.after = (s = getenv("DETM_INJECT_AFTER")) ? atol(s) : 0;
	cfg.ms = (s = getenv("DETM_INJECT_MS")) ? atol(s) : 0;
	cfg.trigger = getenv("DETM_INJECT_TRIGGER");
	cfg.log = getenv("DETM_INJECT_LOG");
	cfg.on = true;
}

static void
inject_ready(void)
{
	pthread_once(&once, inject_init);
}

static long long
inject_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- tracking ---- */

static bool
inject_matches(const char *path)
{
	size_t n = strlen(path), k;
	int i;

	for (i = 0; i < cfg.nsuffix; i++) {
		k = strlen(cfg.suffix[i]);
		if (n >= k && strcmp(path + n - k, cfg.suffix[i]) == 0 &&
		    (n == k || path[n - k - 1] == '/'))
			return true;
	}
	return false;
}

/* Copies a file that existed before it was tracked into its shadow (what
 * was on disk then counts as synced), unless the shadow exists. */
static void
shadow_seed(const char *path, int fd)
{
	char sp[4200], buf[65536];
	struct stat st;
	ssize_t k;
	off_t off = 0;
	int out;

	snprintf(sp, sizeof sp, "%s.synced", path);
	if (access(sp, F_OK) == 0 || fstat(fd, &st) != 0 || st.st_size == 0)
		return;
	if ((out = real_open(sp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return;
	while ((k = real_pread(fd, buf, sizeof buf, off)) > 0) {
		if (real_pwrite(out, buf, (size_t)k, off) != k)
			break;
		off += k;
	}
	real_close(out);
}

static int
file_find_or_add(const struct stat *st, const char *path, int fd)
{
	int i, n;

	pthread_mutex_lock(&files_mu);
	n = atomic_load(&nfiles);
	for (i = 0; i < n; i++)
		if (files[i].dev == st->st_dev && files[i].ino == st->st_ino)
			break;
	if (i == n && n < FILES_MAX) {
		files[i].dev = st->st_dev;
		files[i].ino = st->st_ino;
		snprintf(files[i].path, sizeof files[i].path, "%s", path);
		pthread_mutex_init(&files[i].mu, NULL);
		pthread_mutex_init(&files[i].copy_mu, NULL);
		files[i].trunc = -1;
		if (cfg.powerloss)
			shadow_seed(path, fd);
		atomic_store(&nfiles, n + 1);
	}
	pthread_mutex_unlock(&files_mu);
	return i < FILES_MAX ? i : -1;
}

static int
inject_track(int dirfd, const char *path, int fd)
{
	char full[4096];
	struct stat st;
	int idx;

	if (fd < 0 || fd >= FD_MAX || !cfg.on || path == NULL || !inject_matches(path))
		return fd;
	if (path[0] != '/' && dirfd != AT_FDCWD)
		return fd;      /* detmd and SQLite open by full path */
	if (fstat(fd, &st) != 0)
		return fd;
	snprintf(full, sizeof full, "%s", path);
	if ((idx = file_find_or_add(&st, full, fd)) >= 0)
		atomic_store(&fd_file[fd], idx + 1);
	return fd;
}

static struct tfile *
inject_file(int fd)
{
	int k;

	if (fd < 0 || fd >= FD_MAX)
		return NULL;
	k = atomic_load_explicit(&fd_file[fd], memory_order_acquire);
	return k ? &files[k - 1] : NULL;
}

/* ---- fault mode ---- */

static bool
fault_armed(long long now)
{
	struct stat st;
	long long last;

	if (cfg.trigger == NULL || atomic_load(&trig_seen))
		return true;
	last = atomic_load(&trig_check);
	if (now - last < 50 || !atomic_compare_exchange_strong(&trig_check, &last, now))
		return false;
	if (stat(cfg.trigger, &st) != 0)
		return false;
	atomic_store(&trig_seen, true);
	return true;
}

static void
fault_log(long n, long long start)
{
	static int fd = -1;
	static long logged;
	char line[128];
	int len;

	if (cfg.log == NULL)
		return;
	len = snprintf(line, sizeof line, "injected %10ld start_ms %13lld window_ms %10ld\n",
	    n, start, cfg.ms);
	pthread_mutex_lock(&log_mu);
	if (fd < 0)
		fd = real_open(cfg.log, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0 && n > logged) {
		(void)!real_pwrite(fd, line, (size_t)len, 0);
		logged = n;
	}
	pthread_mutex_unlock(&log_mu);
}

/* True (errno set) if this call on a tracked fd is to fail. */
static bool
fault_hit(int fd, int op)
{
	long long now, start, zero = 0;
	long n;

	if (!cfg.on || cfg.powerloss || !(cfg.ops & op) || inject_file(fd) == NULL)
		return false;
	now = inject_now_ms();
	start = atomic_load(&win_start);
	if (start == 0) {
		if (!fault_armed(now) || atomic_fetch_add(&seen, 1) < cfg.after)
			return false;
		atomic_compare_exchange_strong(&win_start, &zero, now);
		start = atomic_load(&win_start);
	}
	if (cfg.ms > 0 && now - start >= cfg.ms)
		return false;
	n = atomic_fetch_add(&injected, 1) + 1;
	fault_log(n, start);
	errno = cfg.err;
	return true;
}

/* ---- power-loss mode ---- */

static void
ranges_add(struct tfile *f, off_t lo, off_t hi)
{
	struct range *last;

	if (hi <= lo)
		return;
	pthread_mutex_lock(&f->mu);
	last = f->n ? &f->r[f->n - 1] : NULL;
	if (last && lo <= last->hi && hi >= last->lo) {
		last->lo = lo < last->lo ? lo : last->lo;
		last->hi = hi > last->hi ? hi : last->hi;
	} else if (f->n == RANGES_MAX) {
		/* Bytes not written since the last sync are in the shadow
		 * already: copying one covering range is as exact. */
		size_t i;
		for (i = 1; i < f->n; i++) {
			f->r[0].lo = f->r[i].lo < f->r[0].lo ? f->r[i].lo : f->r[0].lo;
			f->r[0].hi = f->r[i].hi > f->r[0].hi ? f->r[i].hi : f->r[0].hi;
		}
		f->n = 1;
		pthread_mutex_unlock(&f->mu);
		ranges_add(f, lo, hi);
		return;
	} else {
		if (f->n == f->cap) {
			size_t cap = f->cap ? f->cap * 2 : 256;
			struct range *r = realloc(f->r, cap * sizeof *r);
			if (r == NULL) {
				pthread_mutex_unlock(&f->mu);
				return;
			}
			f->r = r;
			f->cap = cap;
		}
		f->r[f->n++] = (struct range){ lo, hi };
	}
	pthread_mutex_unlock(&f->mu);
}

static void
shadow_copy(struct tfile *f, int fd, const struct range *r, size_t n, off_t trunc, off_t size)
{
	char sp[4200], buf[65536];
	off_t off, hi;
	ssize_t k;
	size_t i;
	int out;

	snprintf(sp, sizeof sp, "%s.synced", f->path);
	pthread_mutex_lock(&f->copy_mu);
	if ((out = real_open(sp, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) >= 0) {
		if (trunc >= 0)
			(void)!real_ftruncate(out, trunc);
		for (i = 0; i < n; i++) {
			hi = r[i].hi < size ? r[i].hi : size;
			for (off = r[i].lo; off < hi; off += k) {
				size_t want = (size_t)(hi - off) < sizeof buf ? (size_t)(hi - off) : sizeof buf;
				if ((k = real_pread(fd, buf, want, off)) <= 0 || real_pwrite(out, buf, (size_t)k, off) != k)
					break;
			}
		}
		(void)!real_ftruncate(out, size);
		real_close(out);
	}
	pthread_mutex_unlock(&f->copy_mu);
}

/* A sync of a tracked file: the ranges dirty when it began reach the
 * shadow if it succeeds, and stay dirty if it fails. */
static int
powerloss_sync(struct tfile *f, int fd, int (*sync)(int))
{
	struct range *r;
	struct stat st;
	off_t trunc;
	size_t n, i;
	int rc, saved;

	pthread_mutex_lock(&f->mu);
	r = f->r;
	n = f->n;
	trunc = f->trunc;
	f->r = NULL;
	f->n = f->cap = 0;
	f->trunc = -1;
	if (fstat(fd, &st) != 0)
		st.st_size = 0;
	pthread_mutex_unlock(&f->mu);
	rc = sync(fd);
	saved = errno;
	if (rc == 0)
		shadow_copy(f, fd, r, n, trunc, st.st_size);
	else {
		for (i = 0; i < n; i++)
			ranges_add(f, r[i].lo, r[i].hi);
		pthread_mutex_lock(&f->mu);
		if (trunc >= 0 && (f->trunc < 0 || trunc < f->trunc))
			f->trunc = trunc;
		pthread_mutex_unlock(&f->mu);
	}
	free(r);
	errno = saved;
	return rc;
}

static void
powerloss_wrote(int fd, off_t off, ssize_t k)
{
	struct tfile *f;

	if (cfg.powerloss && k > 0 && (f = inject_file(fd)) != NULL)
		ranges_add(f, off, off + k);
}

/* ---- the wrappers ---- */

static mode_t
inject_mode(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int
open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = inject_mode(flags, ap);
	va_end(ap);
	inject_ready();
	return inject_track(AT_FDCWD, path, real_open(path, flags, m));
}

int
open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = inject_mode(flags, ap);
	va_end(ap);
	inject_ready();
	return inject_track(AT_FDCWD, path, real_open64(path, flags, m));
}

int
openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = inject_mode(flags, ap);
	va_end(ap);
	inject_ready();
	return inject_track(dirfd, path, real_openat(dirfd, path, flags, m));
}

int
openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = inject_mode(flags, ap);
	va_end(ap);
	inject_ready();
	return inject_track(dirfd, path, real_openat64(dirfd, path, flags, m));
}

int
__open_2(const char *path, int flags)
{
	inject_ready();
	return inject_track(AT_FDCWD, path, real_open_2(path, flags));
}

int
__open64_2(const char *path, int flags)
{
	inject_ready();
	return inject_track(AT_FDCWD, path, real_open64_2(path, flags));
}

int
close(int fd)
{
	inject_ready();
	if (fd >= 0 && fd < FD_MAX)
		atomic_store(&fd_file[fd], 0);
	return real_close(fd);
}

ssize_t
pread(int fd, void *buf, size_t n, off_t off)
{
	inject_ready();
	if (fault_hit(fd, OP_PREAD))
		return -1;
	return real_pread(fd, buf, n, off);
}

ssize_t
pread64(int fd, void *buf, size_t n, off_t off)
{
	inject_ready();
	if (fault_hit(fd, OP_PREAD))
		return -1;
	return real_pread64(fd, buf, n, off);
}

ssize_t
pwrite(int fd, const void *buf, size_t n, off_t off)
{
	ssize_t k;

	inject_ready();
	if (fault_hit(fd, OP_PWRITE))
		return -1;
	k = real_pwrite(fd, buf, n, off);
	powerloss_wrote(fd, off, k);
	return k;
}

ssize_t
pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	ssize_t k;

	inject_ready();
	if (fault_hit(fd, OP_PWRITE))
		return -1;
	k = real_pwrite64(fd, buf, n, off);
	powerloss_wrote(fd, off, k);
	return k;
}

ssize_t
write(int fd, const void *buf, size_t n)
{
	off_t off;
	ssize_t k;

	inject_ready();
	if (inject_file(fd) == NULL)
		return real_write(fd, buf, n);
	if (fault_hit(fd, OP_WRITE))
		return -1;
	off = lseek(fd, 0, SEEK_CUR);
	k = real_write(fd, buf, n);
	powerloss_wrote(fd, off, k);
	return k;
}

ssize_t
writev(int fd, const struct iovec *iov, int cnt)
{
	off_t off;
	ssize_t k;

	inject_ready();
	if (inject_file(fd) == NULL)
		return real_writev(fd, iov, cnt);
	if (fault_hit(fd, OP_WRITEV))
		return -1;
	off = lseek(fd, 0, SEEK_CUR);
	k = real_writev(fd, iov, cnt);
	powerloss_wrote(fd, off, k);
	return k;
}

int
fsync(int fd)
{
	struct tfile *f;

	inject_ready();
	if (fault_hit(fd, OP_FSYNC))
		return -1;
	if (cfg.powerloss && (f = inject_file(fd)) != NULL)
		return powerloss_sync(f, fd, real_fsync);
	return real_fsync(fd);
}

int
fdatasync(int fd)
{
	struct tfile *f;

	inject_ready();
	if (fault_hit(fd, OP_FDATASYNC))
		return -1;
	if (cfg.powerloss && (f = inject_file(fd)) != NULL)
		return powerloss_sync(f, fd, real_fdatasync);
	return real_fdatasync(fd);
}

static int
inject_truncate(int fd, off_t len, int (*real)(int, off_t))
{
	struct tfile *f;
	int rc;

	inject_ready();
	if (fault_hit(fd, OP_FTRUNCATE))
		return -1;
	rc = real(fd, len);
	if (rc == 0 && cfg.powerloss && (f = inject_file(fd)) != NULL) {
		pthread_mutex_lock(&f->mu);
		if (f->trunc < 0 || len < f->trunc)
			f->trunc = len;
		pthread_mutex_unlock(&f->mu);
	}
	return rc;
}

int
ftruncate(int fd, off_t len)
{
	inject_ready();
	return inject_truncate(fd, len, real_ftruncate);
}

int
ftruncate64(int fd, off_t len)
{
	inject_ready();
	return inject_truncate(fd, len, real_ftruncate64);
}
