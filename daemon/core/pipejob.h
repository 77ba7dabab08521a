/*
 * pipejob.h - a producer on a thread of its own writing into a pipe whose
 * read end an event loop reads (an HTTP reply: the export bundle, the
 * dump, a task's full view).
 *
 * The write end blocks: when the reader does not read, the pipe fills
 * (64 KiB) and the producer waits in its next write, so what a producer
 * holds is bounded by what it holds between two writes, whatever it
 * produces in all. The read end is non-blocking: a reader on an event
 * loop never waits for the producer; notify(job) is called on the
 * producer's thread after each write and once more after the write end is
 * closed, so the reader knows when to read again (the job's address is
 * the key). Closing the read end stops the producer at its next write
 * (EPIPE; SIGPIPE is ignored by detmd).
 *
 * States: running -> ended (the write end closed: the reader sees EOF);
 * the reader releases it once, whenever it likes (pipejob_release), and it
 * is freed when both happened. pipejob_ok tells, after EOF, whether the
 * producer wrote everything it meant to (its function returned 0).
 *
 * Not here: what is produced (zipout.h, taskview_full.c through the HTTP
 * layer), the reading (the HTTP layer's stream reader).
 */
#ifndef DETM_PIPEJOB_H
#define DETM_PIPEJOB_H

#include <stdbool.h>
#include <stddef.h>

struct pipejob;

/* The producer: writes with pipejob_write. 0: it wrote all it meant to. */
typedef int (*pipejob_fn)(struct pipejob *j, void *arg);
typedef void (*pipejob_notify_fn)(const void *key);

/* Runs fn(job, arg) on a new thread writing into a new pipe; *read_fd gets
 * the read end (non-blocking; the caller closes it). free_arg (may be NULL)
 * is called with arg on that thread when fn returned. notify may be NULL.
 * NULL (nothing started, free_arg not called) on failure, err filled. */
struct pipejob *pipejob_spawn(pipejob_fn fn, void *arg, void (*free_arg)(void *),
    pipejob_notify_fn notify, int *read_fd, char *err, size_t errlen);
/* The write end (producer thread only; non-blocking: write through
 * pipejob_write). */
int pipejob_fd(const struct pipejob *j);
/* Writes all n bytes, waiting for room as long as the reader reads, and
 * notifies after each part. 0, or -1 once the reader left (then every
 * later call fails at once). */
int pipejob_write(struct pipejob *j, const void *p, size_t n);
/* Tells the reader there is something to read (no-op once released). */
void pipejob_notify(struct pipejob *j);
/* Whether the reader released the job: a producer busy between writes
 * asks it to stop early (pipejob_write fails then too). */
bool pipejob_cancelled(const struct pipejob *j);
/* After the reader saw EOF: whether fn returned 0. */
bool pipejob_ok(const struct pipejob *j);
/* The reader is done (call once, after closing the read end): the
 * producer is cancelled, and the job freed now if it has ended, else by
 * its own thread when it does. Never waits for the producer. NULL ok. */
void pipejob_release(struct pipejob *j);
/* Waits until no producer thread runs, or timeout_ms passed (shutdown).
 * Returns how many still run. */
int pipejob_wait_all(int timeout_ms);

#endif
