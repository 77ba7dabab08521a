/*
 * pipejob.c - a producer thread writing into a pipe (pipejob.h).
 *
 * Both ends are non-blocking; the producer waits for room in poll, and
 * only after it notified the reader of every byte it wrote: a write that
 * blocked in the kernel half done would leave a parked reader asleep on
 * data already in the pipe (until its stream's next tick).
 * The reader never waits for the producer either: pipejob_release marks
 * the job cancelled and, when the producer has not ended yet, leaves it to
 * free itself (a detached thread) when it does; from then on it notifies
 * nobody (the reader's stream may be gone).
 * Invariants: wfd is open until fn returned (then closed on the producer's
 * thread, before the last notify); `ok` is written before that close and
 * read by the reader only after it saw EOF (the close orders them); j is
 * freed exactly once, by whichever of the two sees the other done (under
 * mu); `live` counts producer threads not yet returned.
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
#include <time.h>
#include <unistd.h>

#include "util.h"

struct pipejob {
	pthread_t th;
	int wfd;
	bool gone;              /* the reader left (producer thread only) */
	atomic_bool ok;
	atomic_bool cancelled;  /* pipejob_release was called */
	pthread_mutex_t mu;     /* ended, released; held while notifying */
	bool ended;             /* the producer is done with j but for freeing it */
	bool released;          /* the reader is done with j */
	pipejob_fn fn;
	void *arg;
	void (*free_arg)(void *);
	pipejob_notify_fn notify;
};

/* Producer threads alive (pipejob_wait_all). */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t live_cv = PTHREAD_COND_INITIALIZER;
static int live;

static void
live_add(int d)
{
	pthread_mutex_lock(&live_mu);
	live += d;
	if (live == 0)
		pthread_cond_broadcast(&live_cv);
	pthread_mutex_unlock(&live_mu);
}

int
pipejob_wait_all(int timeout_ms)
{
	struct timespec ts;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&live_mu);
	while (live > 0 && pthread_cond_timedwait(&live_cv, &live_mu, &ts) == 0)
		;
	n = live;
	pthread_mutex_unlock(&live_mu);
	return n;
}

static void
job_free(struct pipejob *j)
{
	pthread_mutex_destroy(&j->mu);
	free(j);
}

int
pipejob_fd(const struct pipejob *j)
{
	return j->wfd;
}

void
pipejob_notify(struct pipejob *j)
{
	pthread_mutex_lock(&j->mu);
	if (j->notify != NULL && !j->released)   /* the reader may be gone for good */
		j->notify(j);
	pthread_mutex_unlock(&j->mu);
}

bool
pipejob_cancelled(const struct pipejob *j)
{
	return atomic_load(&j->cancelled);
}

int
pipejob_write(struct pipejob *j, const void *p, size_t n)
{
	struct pollfd pf = { .fd = j->wfd, .events = POLLOUT };
	size_t done = 0;

	while (done < n && !j->gone) {
		ssize_t w;

		if (pipejob_cancelled(j)) {
			j->gone = true;
			break;
		}
		w = write(j->wfd, (const char *)p + done, n - done);

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
	bool orphan;

	pthread_setname_np(pthread_self(), "detm-reply");      /* not its spawner's name */
	atomic_store(&j->ok, j->fn(j, j->arg) == 0 && !j->gone);
	close(j->wfd);
	j->wfd = -1;
	pipejob_notify(j);      /* the reader sees the end */
	if (j->free_arg != NULL)
		j->free_arg(j->arg);
	pthread_mutex_lock(&j->mu);
	j->ended = true;
	orphan = j->released;
	pthread_mutex_unlock(&j->mu);
	if (orphan) {           /* the reader left first: nobody joins us */
		pthread_detach(pthread_self());
		job_free(j);
	}
	live_add(-1);
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
	pthread_mutex_init(&j->mu, NULL);
	j->wfd = fds[1];
	j->fn = fn;
	j->arg = arg;
	j->free_arg = free_arg;
	j->notify = notify;
	live_add(1);
	if (pthread_create(&j->th, NULL, job_main, j) != 0) {
		live_add(-1);
		snprintf(err, errlen, "cannot start the producer thread");
		close(fds[0]);
		close(fds[1]);
		job_free(j);
		return NULL;
	}
	*read_fd = fds[0];
	return j;
}

void
pipejob_release(struct pipejob *j)
{
	bool ended;

	if (j == NULL)
		return;
	atomic_store(&j->cancelled, true);
	pthread_mutex_lock(&j->mu);
	j->released = true;
	ended = j->ended;
	pthread_mutex_unlock(&j->mu);
	if (ended) {            /* it is leaving: a short wait */
		pthread_join(j->th, NULL);
		job_free(j);
	}
}
