/*
 * zipout.h - a ZIP archive written as it is built, to a file descriptor
 * (a pipe to an HTTP reply): the export bundle and the dump.
 *
 * The archive is made by libarchive's ZIP writer, loaded at first use
 * (dlopen, like tesseract and libavcodec) so an idle detmd does not map it.
 * libarchive writes each entry's CRC and sizes in a data descriptor after
 * its data (general-purpose flag bit 3), never seeking back, so the bytes
 * can leave as soon as they are made: nothing holds the whole archive
 * (libzip and minizip both seek back to patch local headers).
 *
 * States: open -> (entry open -> entry closed)* -> closed. An error (the
 * reader went away: EPIPE; a library error) makes every later call fail
 * fast with zipout_error saying why; zipout_close then only frees.
 *
 * zipout_spawn runs a builder on a thread of its own that writes into a
 * pipe (pipejob.h); the caller reads the other end (the HTTP connection's
 * thread). Closing the read end stops the builder at its next write.
 *
 * Not thread-safe: one thread builds one archive. Does not: redact (redact.h),
 * read the database (export.c, dump.c).
 */
#ifndef DETM_ZIPOUT_H
#define DETM_ZIPOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cdefs.h"
#include "pipejob.h"

struct zipout;

/* Whether libarchive can be loaded; err gets the sentence when not. */
bool zipout_available(char *err, size_t errlen);

/* A new archive writing to fd (not owned: the caller closes it after
 * zipout_close). NULL with err filled when libarchive is unavailable. */
struct zipout *zipout_open(int fd, char *err, size_t errlen);
/* Writes the central directory and frees z. 0, or -1 (the archive is
 * incomplete; the reason was logged). NULL is a no-op returning -1. */
int zipout_close(struct zipout *z);
/* The first error, "" when none. */
const char *zipout_error(const struct zipout *z);

/* Starts an entry. size < 0: unknown (the data is deflated); size >= 0:
 * exactly that many bytes follow (stored as they are when !deflate).
 * mtime_ms: the entry's time (0: now). 0 or -1. */
int zipout_begin(struct zipout *z, const char *name, int64_t size, bool deflate,
    int64_t mtime_ms);
int zipout_write(struct zipout *z, const void *p, size_t n);
int zipout_printf(struct zipout *z, const char *fmt, ...) DETM_PRINTF(2, 3);
int zipout_end(struct zipout *z);

/* One whole entry from memory (deflated). */
int zipout_add_mem(struct zipout *z, const char *name, const void *p, size_t n);
/* One whole entry from a file, stored (JPEG, MP4: already compressed) or
 * deflated, read in 64 KiB pieces: as many bytes as the file had when it
 * was opened (a recording still growing is cut there). 0; 1 when the file
 * does not exist (nothing written); -1 on an archive error. */
int zipout_add_file(struct zipout *z, const char *name, const char *path, bool deflate);

/* Runs build(z, arg) on a producer thread writing into a pipe
 * (pipejob.h: *read_fd gets the read end, non-blocking; notify(job) after
 * each write and at the end). The job is ok (pipejob_ok) when build
 * returned 0 and the archive was closed whole. free_arg (may be NULL) is
 * called with arg on that thread when it ends. Pass the job to
 * pipejob_release once, after closing the read end. The build stops at its
 * next write once the job is released. NULL
 * (nothing started, free_arg not called) on failure, with err filled. */
typedef int (*zipout_build_fn)(struct zipout *z, void *arg);
struct pipejob *zipout_spawn(zipout_build_fn build, void *arg, void (*free_arg)(void *),
    pipejob_notify_fn notify, int *read_fd, char *err, size_t errlen);

#endif
