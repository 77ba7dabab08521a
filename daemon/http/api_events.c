/*
 * api_events.c - GET /api/events: the event ring (events.c) as
 * Server-Sent Events.
 *
 * A stream's reader hands out what events_sub_read gives; when it has
 * nothing, the connection is suspended (REQ_STREAM_WAIT) until a publish
 * wakes every event stream (events_set_notify) or the HTTP layer's
 * one-second tick asks again (heartbeat, hang-up check). No stream holds a
 * thread while it waits.
 */
#include <pthread.h>
#include <stdint.h>

#include "api.h"
#include "core/jx.h"
#include "task/events.h"

/* The key event streams are woken by. */
static const char events_key[] = "events";

static long
sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	long n = events_sub_read(cls, buf, max);

	(void)pos;
	return n > 0 ? n : n == 0 ? REQ_STREAM_WAIT : REQ_STREAM_END;
}

static void
sse_done(void *cls)
{
	events_sub_close(cls);
}

static void
sse_wake(void)
{
	req_streams_wake(events_key);
}

/* Publishes wake the streams from the first subscriber on. */
static void
sse_init(void)
{
	events_set_notify(sse_wake);
}

int
api_events(struct req *r, struct derr *e)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const char *lei = req_in_header(r, "Last-Event-ID");
	int64_t since = -1;
	struct events_sub *s;

	if (req_query_int(r, "since", 0, INT64_MAX, -1, &since, e) != 0)
		return -1;
	if (since < 0 && lei != NULL && jx_parse_int(lei, "Last-Event-ID", 0, INT64_MAX, &since, e) != 0)
		return -1;
	pthread_once(&once, sse_init);
	if ((s = events_sub_open(since, req_conn_fd(r), e)) == NULL)
		return -1;
	req_header(r, "X-Accel-Buffering", "no");
	req_stream_key(r, events_key);
	return req_reply_stream(r, 200, "text/event-stream; charset=utf-8", sse_read, sse_done, s);
}
