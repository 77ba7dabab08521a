/*
 * http_pipe.c - replies a producer thread writes into a pipe (pipejob.h):
 * the export bundle, the dump, a task's big view; and how many of them
 * run at once.
 *
 * The producer is never on an HTTP worker and never holds its whole
 * reply: it writes as it reads, and blocks when the pipe is full (the
 * client does not read). The worker only copies what is in the pipe; an
 * empty pipe is REQ_STREAM_WAIT, and each write of the producer wakes the
 * stream (keyed by its job). A producer that did not end ok (the
 * database failed mid-way) ends its reply as broken (REQ_STREAM_ABORT),
 * never as a short reply that looks whole. When the reply ends (or the
 * client leaves) the job is released, not joined: a producer busy between
 * two writes (a long field being redacted) stops at its next check and
 * frees itself, and the worker goes on at once.
 *
 * Slots: at most LIM_BIG_VIEWS views and LIM_ARCHIVES archives at once
 * (each holds a thread, a pipe and a database connection while its client
 * reads); past a cap the request is 503 (DERR_BUSY: Retry-After). A slot
 * is held from req_bulk_take to the end of the reply.
 *
 * Not here: what is produced (export.c, dump.c, taskview_full.c), stream
 * suspension and waking (http_stream.c).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <unistd.h>

#include "api.h"
#include "lim.h"

static pthread_mutex_t bulk_mu = PTHREAD_MUTEX_INITIALIZER;
static int bulk_used[REQ_BULK__COUNT];
static const struct {
	int cap;
	const char *what;
} bulk_kinds[REQ_BULK__COUNT] = {
	[REQ_BULK_VIEW] = { LIM_BIG_VIEWS, "task views with actions (detail=actions, full or focused) "
	    "are being written" },
	[REQ_BULK_ARCHIVE] = { LIM_ARCHIVES, "archives (task exports and dumps) are being written" },
};

int
req_bulk_take(enum req_bulk k, struct derr *e)
{
	bool ok;

	pthread_mutex_lock(&bulk_mu);
	ok = bulk_used[k] < bulk_kinds[k].cap;
	if (ok)
		bulk_used[k]++;
	pthread_mutex_unlock(&bulk_mu);
	if (ok)
		return 0;
	return derr_set(e, DERR_BUSY, NULL, "too many replies at once: %d %s, the cap; retry in a "
	    "few seconds", bulk_kinds[k].cap, bulk_kinds[k].what);
}

void
req_bulk_give(enum req_bulk k)
{
	pthread_mutex_lock(&bulk_mu);
	if (bulk_used[k] > 0)
		bulk_used[k]--;
	pthread_mutex_unlock(&bulk_mu);
}

struct pstream {
	int fd;
	struct pipejob *job;
	enum req_bulk kind;
};

static long
ps_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct pstream *s = cls;
	ssize_t n;

	(void)pos;
	do
		n = read(s->fd, buf, max);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		return (long)n;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return REQ_STREAM_WAIT;         /* the producer wakes us */
	return n == 0 && pipejob_ok(s->job) ? REQ_STREAM_END : REQ_STREAM_ABORT;
}

static void
ps_done(void *cls)
{
	struct pstream *s = cls;

	close(s->fd);           /* a producer still writing gets EPIPE and stops */
	pipejob_release(s->job);        /* never waits: a worker must not */
	req_bulk_give(s->kind);
	free(s);
}

int
req_reply_pipe(struct req *r, enum req_bulk k, struct pipejob *job, int fd, const char *type,
    const char *err, struct derr *e)
{
	struct pstream *s;
	int cfd, one = 1;

	if (job == NULL) {
		req_bulk_give(k);
		return derr_set(e, DERR_UNAVAILABLE, NULL, "%s", err);
	}
	/* Without it a piece under the MSS (64 KiB on loopback: every piece)
	 * waits for the client's delayed ACK of the previous one: ~40 ms a
	 * piece, 7 s for 10 MB. */
	if ((cfd = req_conn_fd(r)) >= 0)
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	s = xcalloc(1, sizeof *s);
	s->fd = fd;
	s->job = job;
	s->kind = k;
	req_stream_key(r, job);
	return req_reply_stream(r, 200, type, ps_read, ps_done, s);
}
