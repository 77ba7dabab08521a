/*
 * zipout.c - streamed ZIP archives on libarchive (zipout.h).
 *
 * libarchive is opened with dlopen at the first archive; its writer is
 * unblocked (bytes_per_block 0: every piece goes straight to our write
 * callback, no 10 KiB tar padding at the end). Our callback writes to the
 * fd, retrying short writes (through pipejob_write for zipout_spawn's
 * archives); EPIPE (the reader left) is the usual way an archive ends
 * early. Then the callback keeps telling libarchive its
 * writes succeeded and drops them (`gone`): the error is ours (z->err, so
 * the builder stops at its next write), and libarchive, never put in its
 * fatal state, can still finish the open entry. It frees an entry's zlib
 * stream only when it finishes the entry: an archive left fatal mid-entry
 * leaked ~45 KiB of deflate state per export dropped mid-way.
 */
#include "zipout.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dynlib.h"
#include "log.h"
#include "util.h"

#define ARCHIVE_SONAME "libarchive.so.13"
#define ZIP_CHUNK (64 * 1024)

static struct {
	__typeof__(&archive_write_new) write_new;
	__typeof__(&archive_write_set_format_zip) set_zip;
	__typeof__(&archive_write_zip_set_compression_deflate) deflate;
	__typeof__(&archive_write_zip_set_compression_store) store;
	__typeof__(&archive_write_set_bytes_per_block) set_block;
	__typeof__(&archive_write_set_bytes_in_last_block) set_last_block;
	__typeof__(&archive_write_open) open;
	__typeof__(&archive_write_header) header;
	__typeof__(&archive_write_data) data;
	__typeof__(&archive_write_finish_entry) finish_entry;
	__typeof__(&archive_write_close) close;
	__typeof__(&archive_write_free) free;
	__typeof__(&archive_error_string) error_string;
	__typeof__(&archive_entry_new) entry_new;
	__typeof__(&archive_entry_free) entry_free;
	__typeof__(&archive_entry_set_pathname_utf8) set_path;
	__typeof__(&archive_entry_set_size) set_size;
	__typeof__(&archive_entry_set_filetype) set_type;
	__typeof__(&archive_entry_set_perm) set_perm;
	__typeof__(&archive_entry_set_mtime) set_mtime;
} la;
static void *la_lib;
static pthread_once_t la_once = PTHREAD_ONCE_INIT;
static char la_err[256];

static void
la_load(void)
{
	static const struct dynsym syms[] = {
#define LSYM(field, name) { #name, offsetof(__typeof__(la), field) }
		LSYM(write_new, archive_write_new), LSYM(set_zip, archive_write_set_format_zip),
		LSYM(deflate, archive_write_zip_set_compression_deflate),
		LSYM(store, archive_write_zip_set_compression_store),
		LSYM(set_block, archive_write_set_bytes_per_block),
		LSYM(set_last_block, archive_write_set_bytes_in_last_block),
		LSYM(open, archive_write_open), LSYM(header, archive_write_header),
		LSYM(data, archive_write_data), LSYM(finish_entry, archive_write_finish_entry),
		LSYM(close, archive_write_close), LSYM(free, archive_write_free),
		LSYM(error_string, archive_error_string), LSYM(entry_new, archive_entry_new),
		LSYM(entry_free, archive_entry_free), LSYM(set_path, archive_entry_set_pathname_utf8),
		LSYM(set_size, archive_entry_set_size), LSYM(set_type, archive_entry_set_filetype),
		LSYM(set_perm, archive_entry_set_perm), LSYM(set_mtime, archive_entry_set_mtime),
#undef LSYM
	};

	la_lib = dynlib_load(ARCHIVE_SONAME, syms, ARRAY_LEN(syms), &la, sizeof la, "ZIP output",
	    "libarchive13", la_err, sizeof la_err);
}

bool
zipout_available(char *err, size_t errlen)
{
	pthread_once(&la_once, la_load);
	if (la_lib == NULL)
		snprintf(err, errlen, "%s", la_err);
	return la_lib != NULL;
}

struct zipout {
	struct archive *a;
	int fd;
	bool in_entry;
	bool gone;              /* the reader left: writes are dropped */
	struct pipejob *pj;     /* written through (zipout_spawn), or NULL: fd */
	int64_t left;           /* bytes still owed to a sized entry; -1 unsized */
	char err[256];
};

static int
zfail(struct zipout *z, const char *what)
{
	if (z->err[0] == '\0') {
		const char *why = z->a != NULL ? la.error_string(z->a) : NULL;

		snprintf(z->err, sizeof z->err, "%s: %s", what, why ? why : "error");
	}
	return -1;
}

static la_ssize_t
on_write(struct archive *a, void *cls, const void *p, size_t n)
{
	struct zipout *z = cls;
	size_t done = 0;

	(void)a;
	if (z->pj != NULL) {
		if (!z->gone && pipejob_write(z->pj, p, n) != 0) {
			if (z->err[0] == '\0')
				snprintf(z->err, sizeof z->err, "writing the archive: the reader left");
			z->gone = true;
		}
		return (la_ssize_t)n;
	}
	while (done < n && !z->gone) {
		ssize_t w = write(z->fd, (const char *)p + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (z->err[0] == '\0')
				snprintf(z->err, sizeof z->err, "writing the archive: %s",
				    w < 0 ? strerror(errno) : "short write");
			z->gone = true;
			break;
		}
		done += (size_t)w;
	}
	return (la_ssize_t)n;
}

struct zipout *
zipout_open(int fd, char *err, size_t errlen)
{
	struct zipout *z;

	if (!zipout_available(err, errlen))
		return NULL;
	z = xcalloc(1, sizeof *z);
	z->fd = fd;
	z->a = la.write_new();
	if (z->a == NULL || la.set_zip(z->a) != ARCHIVE_OK || la.set_block(z->a, 0) != ARCHIVE_OK ||
	    la.set_last_block(z->a, 1) != ARCHIVE_OK ||
	    la.open(z->a, z, NULL, on_write, NULL) != ARCHIVE_OK) {
		snprintf(err, errlen, "cannot start a ZIP archive: %s",
		    z->a ? la.error_string(z->a) : "out of memory");
		if (z->a != NULL)
			la.free(z->a);
		free(z);
		return NULL;
	}
	return z;
}

const char *
zipout_error(const struct zipout *z)
{
	return z->err;
}

/* The reader released the job (zipout_spawn): stop now, not at the next
 * byte deflate happens to let out (a compressible entry lets out little). */
static bool
zreader_gone(struct zipout *z)
{
	if (z->pj == NULL || !pipejob_cancelled(z->pj))
		return false;
	if (z->err[0] == '\0')
		snprintf(z->err, sizeof z->err, "writing the archive: the reader left");
	z->gone = true;
	return true;
}

int
zipout_begin(struct zipout *z, const char *name, int64_t size, bool deflate, int64_t mtime_ms)
{
	struct archive_entry *en;
	int rc = 0;

	if (zreader_gone(z) || z->err[0] != '\0' || z->in_entry)
		return z->in_entry ? zfail(z, "entry already open") : -1;
	if ((deflate || size < 0 ? la.deflate(z->a) : la.store(z->a)) != ARCHIVE_OK)
		return zfail(z, name);
	en = la.entry_new();
	la.set_path(en, name);
	la.set_type(en, AE_IFREG);
	la.set_perm(en, 0644);
	la.set_mtime(en, (time_t)((mtime_ms > 0 ? mtime_ms : now_ms()) / 1000), 0);
	if (size >= 0)
		la.set_size(en, size);
	if (la.header(z->a, en) != ARCHIVE_OK)
		rc = zfail(z, name);
	la.entry_free(en);
	z->in_entry = rc == 0;
	z->left = size;
	return rc;
}

int
zipout_write(struct zipout *z, const void *p, size_t n)
{
	if (zreader_gone(z))
		return -1;
	if (z->err[0] != '\0' || !z->in_entry)
		return z->in_entry ? -1 : zfail(z, "write outside an entry");
	if (n == 0)
		return 0;
	if (la.data(z->a, p, n) != (la_ssize_t)n)
		return zfail(z, "writing an entry");
	if (z->left >= 0)
		z->left -= (int64_t)n;
	return 0;
}

int
zipout_printf(struct zipout *z, const char *fmt, ...)
{
	char small[1024], *p = small;
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n >= sizeof small) {
		p = xmalloc((size_t)n + 1);
		va_start(ap, fmt);
		vsnprintf(p, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	rc = zipout_write(z, p, (size_t)n);
	if (p != small)
		free(p);
	return rc;
}

int
zipout_end(struct zipout *z)
{
	if (!z->in_entry)
		return -1;
	z->in_entry = false;
	/* Even after an error: finishing is what frees the entry's zlib state. */
	if (la.finish_entry(z->a) != ARCHIVE_OK)
		return zfail(z, "finishing an entry");
	return z->err[0] != '\0' ? -1 : 0;
}

int
zipout_add_mem(struct zipout *z, const char *name, const void *p, size_t n)
{
	if (zipout_begin(z, name, -1, true, 0) != 0)
		return -1;
	if (zipout_write(z, p, n) != 0) {
		zipout_end(z);
		return -1;
	}
	return zipout_end(z);
}

int
zipout_add_file(struct zipout *z, const char *name, const char *path, bool deflate)
{
	char *chunk = NULL;
	struct stat sb;
	int64_t left;
	int fd, rc = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (zipout_begin(z, name, (int64_t)sb.st_size, deflate,
	    (int64_t)sb.st_mtime * 1000) != 0)
		goto out;
	chunk = xmalloc(ZIP_CHUNK);
	for (left = (int64_t)sb.st_size; left > 0;) {
		size_t want = left > ZIP_CHUNK ? ZIP_CHUNK : (size_t)left;
		ssize_t n = read(fd, chunk, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The file shrank under us: the entry's size is promised, so pad. */
			memset(chunk, 0, want);
			n = (ssize_t)want;
		}
		if (zipout_write(z, chunk, (size_t)n) != 0)
			break;
		left -= n;
	}
	rc = zipout_end(z) == 0 && left == 0 ? 0 : -1;
out:
	free(chunk);
	close(fd);
	return rc;
}

int
zipout_close(struct zipout *z)
{
	int rc;

	if (z == NULL)
		return -1;
	if (z->in_entry)
		zipout_end(z);
	rc = z->err[0] == '\0' && la.close(z->a) == ARCHIVE_OK ? 0 : -1;
	if (rc != 0) {
		zfail(z, "closing the archive");
		log_warn("ZIP archive incomplete: %s", z->err);
	}
	la.free(z->a);
	free(z);
	return rc;
}

/* ---- a builder on its own thread, writing into a pipe ---- */

struct zipjob {
	zipout_build_fn build;
	void *arg;
	void (*free_arg)(void *);
};

static int
zip_main(struct pipejob *pj, void *p)
{
	struct zipjob *j = p;
	char err[256];
	struct zipout *z = zipout_open(pipejob_fd(pj), err, sizeof err);
	int rc;

	if (z == NULL) {
		log_warn("%s", err);
		return -1;
	}
	z->pj = pj;
	rc = j->build(z, j->arg);
	return zipout_close(z) == 0 ? rc : -1;
}

static void
zip_free(void *p)
{
	struct zipjob *j = p;

	if (j->free_arg != NULL)
		j->free_arg(j->arg);
	free(j);
}

struct pipejob *
zipout_spawn(zipout_build_fn build, void *arg, void (*free_arg)(void *),
    pipejob_notify_fn notify, int *read_fd, char *err, size_t errlen)
{
	struct zipjob *j;
	struct pipejob *pj;

	if (!zipout_available(err, errlen))
		return NULL;
	j = xcalloc(1, sizeof *j);
	j->build = build;
	j->arg = arg;
	j->free_arg = free_arg;
	pj = pipejob_spawn(zip_main, j, zip_free, notify, read_fd, err, errlen);
	if (pj == NULL)
		free(j);
	return pj;
}
