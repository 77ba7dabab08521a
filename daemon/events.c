/*
 * events.c - the event ring and its SSE subscribers (events.h).
 *
 * The ring holds preformatted SSE records ("id: N\nevent: T\ndata: {...}\n\n")
 * under `mu`; `last` is the newest id (0: none yet). A subscriber keeps the
 * id it has sent up to and, when its buffer is empty, waits on `cv` for a
 * newer event, the heartbeat timeout, or shutdown, in slices of
 * PEER_CHECK_MS: between slices it asks whether the client hung up, so a
 * dead subscriber frees its thread and socket within about a second rather
 * than at the next heartbeat write.
 */
#include "events.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jx.h"
#include "util.h"

#define HEARTBEAT_S     15
#define PEER_CHECK_MS   1000
#define SUBSCRIBERS_MAX 64
#define BATCH_MAX       (256 * 1024)    /* bytes handed to one read */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static char *ring[EVENTS_RING];         /* ring[id % EVENTS_RING] */
static uint64_t last;
static int subscribers;
static bool down;

void
events_publish(const char *type, const char *op, const char *task_id, const char *ref)
{
	json_object *o = json_object_new_object();
	char *rec;

	jx_add_str(o, "type", type);
	jx_add_str(o, "op", op);
	if (task_id != NULL)
		jx_add_str(o, "task_id", task_id);
	if (ref != NULL)
		jx_add_str(o, "ref", ref);
	pthread_mutex_lock(&mu);
	last++;
	json_object_object_add(o, "id", json_object_new_int64((int64_t)last));
	rec = xasprintf("id: %" PRIu64 "\nevent: %s\ndata: %s\n\n", last, type, jx_string(o, NULL));
	free(ring[last % EVENTS_RING]);
	ring[last % EVENTS_RING] = rec;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	json_object_put(o);
}

struct sub {
	uint64_t sent;          /* the last id handed out */
	char *buf;
	size_t len, off;
	bool hello;             /* the first record (retry + hello) went out */
	int fd;                 /* the client's socket (-1: unknown), polled for hang-up */
};

/* Fills s->buf with what the client has not seen (mu held). */
static void
fill(struct sub *s)
{
	uint64_t oldest = last >= EVENTS_RING ? last - EVENTS_RING + 1 : 1;
	char *data = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&data, &len);

	if (m == NULL)
		abort();        /* out of memory, as xmalloc would */
	if (!s->hello) {
		fprintf(m, "retry: 2000\nevent: hello\ndata: {\"last_id\":%" PRIu64 "}\n\n", last);
		s->hello = true;
	}
	if (s->sent > last || (s->sent + 1 < oldest && s->sent < last)) {
		/* from before a restart, or further back than the ring */
		fprintf(m, "event: reset\ndata: {\"last_id\":%" PRIu64 "}\n\n", last);
		s->sent = s->sent > last ? last : oldest - 1;
	}
	while (s->sent < last && ftell(m) < BATCH_MAX) {
		s->sent++;
		fputs(ring[s->sent % EVENTS_RING], m);
	}
	if (fclose(m) != 0)
		abort();
	free(s->buf);
	s->buf = data;
	s->len = len;
	s->off = 0;
}

/* mu held: waits until there is something to send, the heartbeat is due,
 * detmd stops, or the client hung up. Returns false when the client is gone. */
static bool
sub_wait(struct sub *s)
{
	int64_t heartbeat = mono_us() + (int64_t)HEARTBEAT_S * 1000000;

	while (!down && s->hello && s->sent == last && mono_us() < heartbeat) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)PEER_CHECK_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (pthread_cond_timedwait(&cv, &mu, &ts) == 0)
			continue;
		if (s->fd >= 0 && fd_peer_closed(s->fd))
			return false;
	}
	return true;
}

static long
sub_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct sub *s = cls;
	size_t n;

	(void)pos;
	if (s->off >= s->len) {
		bool alive;

		pthread_mutex_lock(&mu);
		alive = sub_wait(s);
		if (down || !alive) {
			pthread_mutex_unlock(&mu);
			return REQ_STREAM_END;
		}
		if (s->hello && s->sent == last) {
			pthread_mutex_unlock(&mu);
			free(s->buf);
			s->buf = xstrdup(": keep-alive\n\n");
			s->len = strlen(s->buf);
			s->off = 0;
		} else {
			fill(s);
			pthread_mutex_unlock(&mu);
		}
	}
	n = s->len - s->off < max ? s->len - s->off : max;
	memcpy(out, s->buf + s->off, n);
	s->off += n;
	return (long)n;
}

static void
sub_done(void *cls)
{
	struct sub *s = cls;

	pthread_mutex_lock(&mu);
	subscribers--;
	pthread_mutex_unlock(&mu);
	free(s->buf);
	free(s);
}

int
api_events(struct req *r, struct derr *e)
{
	const char *lei = req_in_header(r, "Last-Event-ID");
	int64_t since = -1;
	struct sub *s;

	if (req_query_int(r, "since", 0, INT64_MAX, -1, &since, e) != 0)
		return -1;
	if (since < 0 && lei != NULL && jx_parse_int(lei, "Last-Event-ID", 0, INT64_MAX, &since, e) != 0)
		return -1;
	s = xcalloc(1, sizeof *s);
	s->fd = req_conn_fd(r);
	pthread_mutex_lock(&mu);
	if (down || subscribers >= SUBSCRIBERS_MAX) {
		pthread_mutex_unlock(&mu);
		free(s);
		return derr_set(e, DERR_UNAVAILABLE, NULL, down ? "detmd is stopping" :
		    "%d event streams are open already", SUBSCRIBERS_MAX);
	}
	subscribers++;
	s->sent = since >= 0 ? (uint64_t)since : last;   /* new clients: from now on */
	pthread_mutex_unlock(&mu);
	req_header(r, "X-Accel-Buffering", "no");
	return req_reply_stream(r, 200, "text/event-stream; charset=utf-8", sub_read, sub_done, s);
}

void
events_shutdown(void)
{
	pthread_mutex_lock(&mu);
	down = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}
