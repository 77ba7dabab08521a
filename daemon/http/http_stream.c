/*
 * http_stream.c - streamed replies (SSE, MJPEG) and their waiting: the
 * MHD response a stream is read through, suspension when its reader has
 * nothing to send, req_streams_wake, and the one-second ticker (which
 * also runs http_conns.c's sweep of late headers).
 *
 * A stream's reader returns REQ_STREAM_WAIT when it has nothing to send;
 * the connection is then suspended (on http.waiting) until
 * req_streams_wake names its key, or the ticker's second passes. wake_gen
 * counts wakes, so a wake between the reader's answer and the suspension
 * is not lost (the reader is asked again at once, in the same call). Invariants: a stream
 * is on http.waiting exactly when `waiting` is set, and then its
 * connection is suspended; after http_streams_stop none waits again.
 * Lock order: a module's own lock may be held when calling
 * req_streams_wake (s_mu inside it); s_mu is never held while calling into
 * a module.
 *
 * Not here: what a stream sends (its module's reader), other replies
 * (http_req.c).
 */
#include "http_int.h"

#include <stdlib.h>
#include <time.h>

#include "core/log.h"

#define TICK_MS         1000    /* waiting streams are asked again at least this often */

/* Suspends s's connection until a wake, unless one came since gen:
 * true if it did (or never will: stopping), false if the reader should be
 * asked again now. */
static bool
stream_park(struct stream *s, uint64_t gen)
{
	struct http *h = http_server;
	bool parked = true;

	pthread_mutex_lock(&h->s_mu);
	if (!h->streams_down && s->r.conn != NULL) {
		parked = h->wake_gen == gen;
		if (parked) {
			s->waiting = true;
			s->next = h->waiting;
			h->waiting = s;
			MHD_suspend_connection(s->r.conn);
		}
	}
	pthread_mutex_unlock(&h->s_mu);
	return parked;
}

static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	uint64_t gen;
	long n;

	/* A wake between the reader's "nothing yet" and the suspension asks
	 * it again at once: a 0 returned without a suspension would leave the
	 * connection waiting for an unrelated event of its worker. */
	do {
		gen = __atomic_load_n(&http_server->wake_gen, __ATOMIC_ACQUIRE);
		n = s->r.stream(s->r.stream_cls, pos, buf, max);
		if (n > 0)
			return (ssize_t)n;
		if (n == REQ_STREAM_ABORT)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (n != REQ_STREAM_WAIT)
			return MHD_CONTENT_READER_END_OF_STREAM;
	} while (!stream_park(s, gen));
	return 0;       /* MHD asks again after the resume */
}

static void
stream_unlink(struct http *h, struct stream *s)
{
	struct stream **pp;

	for (pp = &h->waiting; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	s->waiting = false;
}

static void
stream_free(void *cls)
{
	struct stream *s = cls;

	pthread_mutex_lock(&http_server->s_mu);
	if (s->waiting)
		stream_unlink(http_server, s);
	pthread_mutex_unlock(&http_server->s_mu);
	if (s->r.stream_done != NULL)
		s->r.stream_done(s->r.stream_cls);
	free(s);
}

void
req_streams_wake(const void *key)
{
	struct http *h = http_server;
	struct stream **pp, *s;

	if (h == NULL)
		return;
	pthread_mutex_lock(&h->s_mu);
	__atomic_store_n(&h->wake_gen, h->wake_gen + 1, __ATOMIC_RELEASE);
	for (pp = &h->waiting; (s = *pp) != NULL;) {
		if (key != NULL && s->key != key) {
			pp = &s->next;
			continue;
		}
		*pp = s->next;
		s->waiting = false;
		MHD_resume_connection(s->r.conn);
	}
	pthread_mutex_unlock(&h->s_mu);
}

void
req_stream_key(struct req *r, const void *key)
{
	r->stream_key = key;
}

/* Wakes every waiting stream once a second (heartbeats, hang-ups, ends)
 * and closes connections whose headers are late. */
static void *
tick_main(void *arg)
{
	struct http *h = arg;
	struct timespec ts;

	pthread_mutex_lock(&h->mu);
	while (!h->streams_down) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += TICK_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&h->tick_cv, &h->mu, &ts);
		pthread_mutex_unlock(&h->mu);
		req_streams_wake(NULL);
		http_conns_sweep(h);
		pthread_mutex_lock(&h->mu);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

void
http_ticker_start(struct http *h)
{
	if (pthread_create(&h->ticker, NULL, tick_main, h) == 0)
		h->ticker_running = true;
	else
		log_warn("no stream ticker: idle streams notice a hang-up only at their next event");
}

void
http_streams_stop(struct http *h)
{
	/* Streams: no more waiting (their modules have ended them). */
	pthread_mutex_lock(&h->mu);
	pthread_mutex_lock(&h->s_mu);
	h->streams_down = true;
	pthread_mutex_unlock(&h->s_mu);
	pthread_cond_broadcast(&h->tick_cv);
	pthread_mutex_unlock(&h->mu);
	req_streams_wake(NULL);
	if (h->ticker_running)
		pthread_join(h->ticker, NULL);
}

struct MHD_Response *
http_stream_response(struct MHD_Connection *conn, struct req *r)
{
	struct stream *owner = xcalloc(1, sizeof *owner);
	struct MHD_Response *resp;

	owner->r = *r;  /* the stream's state outlives this request struct */
	owner->r.conn = conn;
	owner->key = r->stream_key;
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, stream_read,
	    owner, stream_free);
	if (resp == NULL) {
		free(owner);
		return NULL;
	}
	r->stream = NULL;
	r->stream_done = NULL;
	return resp;
}
