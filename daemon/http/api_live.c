/*
 * api_live.c - the live view over HTTP (live.c does the capturing):
 *   GET /api/tasks/{id}/live.mjpeg, /api/live.mjpeg   MJPEG streams
 *   GET /api/tasks/{id}/frame.jpg, /api/frame.jpg     one JPEG
 *   GET /api/live                                     the running views
 *
 * A stream's reader hands out what live_view_read gives; when the viewer
 * has seen the latest frame, the connection is suspended (REQ_STREAM_WAIT)
 * until the capture thread publishes for that display (live_set_notify)
 * or the HTTP layer's one-second tick asks again. No viewer holds a thread.
 */
#include <pthread.h>
#include <stdint.h>

#include "api.h"
#include "desktop/live.h"

static long
view_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	long n = live_view_read(cls, buf, max);

	(void)pos;
	return n > 0 ? n : n == 0 ? REQ_STREAM_WAIT : REQ_STREAM_END;
}

static void
view_done(void *cls)
{
	live_view_close(cls);
}

static void
views_init(void)
{
	live_set_notify(req_streams_wake);
}

/* Makes r an MJPEG stream of task_id's display (NULL: the shared one). */
static int
stream(struct req *r, const char *task_id, struct derr *e)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct live_view *v;

	pthread_once(&once, views_init);
	if ((v = live_view_open(task_id, e)) == NULL)
		return -1;
	req_header(r, "X-Accel-Buffering", "no");
	req_stream_key(r, live_view_key(v));
	return req_reply_stream(r, 200, "multipart/x-mixed-replace; boundary=" LIVE_BOUNDARY,
	    view_read, view_done, v);
}

static int
frame(struct req *r, const char *task_id, struct derr *e)
{
	unsigned char *jpeg;
	size_t len;
	bool shared;

	if (live_frame(task_id, &jpeg, &len, &shared, e) != 0)
		return -1;
	req_header(r, "X-Live", "%s", shared ? "shared" : "grabbed");
	return req_reply_raw(r, 200, "image/jpeg", jpeg, len);
}

int
api_live_task(struct req *r, struct derr *e)
{
	const char *id;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	return stream(r, id, e);
}

int
api_live_shared(struct req *r, struct derr *e)
{
	return stream(r, NULL, e);
}

int
api_frame_task(struct req *r, struct derr *e)
{
	const char *id;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	return frame(r, id, e);
}

int
api_frame_shared(struct req *r, struct derr *e)
{
	return frame(r, NULL, e);
}

int
api_live_list(struct req *r, struct derr *e)
{
	(void)e;
	return req_reply(r, 200, live_list());
}
