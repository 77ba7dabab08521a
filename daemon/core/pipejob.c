/*
 * pipejob.c - a producer thread writing into a pipe (pipejob.h).
 *
 * Both ends are non-blocking; the producer waits for room in poll, and
 * only after it notified the reader of every byte it wrote: a write that
 * blocked in the kernel half done would leave a parked reader asleep on
 * data already in the pipe (until its stream's next tick).
 * Invariants: wfd is open until fn returned (then closed on the producer's
 * thread, before the last notify); `ok` is written before that close and
 * read by the reader only after it saw EOF (the close orders them).
 */
#include "pipejob.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

struct pipejob {
	pthread_t th;
	int wfd;
	bool gone;              /* the reader left (producer thread only) */
	atomic_bool ok;
	pipejob_fn fn;
	void *arg;
	void (*free_arg)(void *);
	pipejob_notify_fn notify;
};

int
pipejob_fd(const struct pipejob *j)
{
	return j->wfd;
}

void
pipejob_notify(struct pipejob *j)
{
	if (j->notify != NULL)
		j->notify(j);
}

int
pipejob_write(struct pipejob *j, const void *p, size_t n)
{
	struct pollfd pf = { .fd = j->wfd, .events = POLLOUT };
	size_t done = 0;

	while (done < n && !j->gone) {
		ssize_t w = write(j->wfd, (const char *)p + done, n - done);

		if (w > 0) {
			done += (size_t)w;
			pipejob_notify(j);      /* before any wait: the reader drains it */
		} else if (w < 0 && errno == EAGAIN)
			poll(&pf, 1, -1);       /* room, or the reader left (then EPIPE) */
		else if (!(w < 0 && errno == EINTR))
			j->gone = true;
	}
	return j->gone ? -1 : 0;
}

bool
pipejob_ok(const struct pipejob *j)
{
	return atomic_load(&j->ok);
}

static void *
job_main(void *p)
{
	struct pipejob *j = p;

	atomic_store(&j->ok, j->fn(j, j->arg) == 0 && !j->gone);
	close(j->wfd);
	j->wfd = -1;
	pipejob_notify(j);      /* the reader sees the end */
	if (j->free_arg != NULL)
		j->free_arg(j->arg);
	return NULL;
}

struct pipejob *
pipejob_spawn(pipejob_fn fn, void *arg, void (*free_arg)(void *), pipejob_notify_fn notify,
    int *read_fd, char *err, size_t errlen)
{
	struct pipejob *j;
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return NULL;
	}
	/* Both ends: the reader never waits; the producer waits in poll, after
	 * telling the reader of what it wrote so far (pipejob_write). */
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0 || fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return NULL;
	}
	j = xcalloc(1, sizeof *j);
	j->wfd = fds[1];
	j->fn = fn;
	j->arg = arg;
	j->free_arg = free_arg;
	j->notify = notify;
	if (pthread_create(&j->th, NULL, job_main, j) != 0) {
		snprintf(err, errlen, "cannot start the producer thread");
		close(fds[0]);
		close(fds[1]);
		free(j);
		return NULL;
	}
	*read_fd = fds[0];
	return j;
}

void
pipejob_join(struct pipejob *j)
{
	if (j == NULL)
		return;
	pthread_join(j->th, NULL);
	free(j);
}
