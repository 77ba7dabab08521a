/*
 * live.c - shared capture threads and MJPEG viewers (live.h).
 *
 * A struct live per watched display key (task id, "" for the shared
 * display) lives in a list under `mu`. States: capturing (thread running,
 * viewers > 0) -> idle (the thread saw no viewers and left; the struct is
 * freed by it). The thread decides to leave under `mu`, so a viewer that
 * arrives meanwhile either finds it running or starts a new one.
 * A viewer holds a reference (viewers++) from live_stream until MHD calls
 * its done callback.
 */
#include "live.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "display.h"
#include "log.h"
#include "task.h"
#include "takeover.h"
#include "util.h"
#include "xcap.h"

#define LIVE_MAX_WIDTH  1280
#define LIVE_QUALITY    60
#define RESEND_MS       2000    /* a still screen: the last frame again */
#define VIEWERS_MAX     64      /* per display */

struct live {
	char key[ID_LEN];
	int viewers;
	bool capturing;
	uint64_t seq;           /* bumps with every published frame */
	unsigned char *jpeg;    /* the latest frame (malloc'd) */
	size_t len;
	int64_t frames;
	char error[512];
	pthread_cond_t cv;      /* a new frame, a viewer left, shutdown */
	struct live *next;
};

struct view {
	struct live *lv;
	uint64_t seen;
	char *part;             /* the part being sent */
	size_t part_len, off;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct live *streams;
static bool down;

static struct live *
find(const char *key)
{
	struct live *lv;

	for (lv = streams; lv != NULL; lv = lv->next)
		if (strcmp(lv->key, key) == 0)
			return lv;
	return NULL;
}

static void
unlink_free(struct live *lv)
{
	struct live **pp;

	for (pp = &streams; *pp != NULL; pp = &(*pp)->next)
		if (*pp == lv) {
			*pp = lv->next;
			break;
		}
	pthread_cond_destroy(&lv->cv);
	free(lv->jpeg);
	free(lv);
}

static void
deadline(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += (long)ms * 1000000L;
	ts->tv_sec += ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
}

/* One grab + encode if the screen changed. 1 new frame, 0 nothing new,
 * -1 error (lv->error set, under mu by the caller's publish). */
static int
grab(const char *key, uint64_t *dseq, bool first, struct xcap_frame *f, struct xcap_image *img,
    struct derr *e)
{
	struct display_lease l;
	struct xcap_req q = { .max_width = LIVE_MAX_WIDTH, .quality = LIVE_QUALITY };
	int rc = 0;

	if (display_lease(key[0] ? key : NULL, key[0] ? DISPLAY_TASK_OR_SHARED : DISPLAY_SHARED,
	    &l, e) != 0)
		return -1;
	if (first || !l.damage || l.damage_seq != *dseq) {
		*dseq = l.damage_seq;
		rc = xcap_grab(l.cap, &q, f, e) == 0 ? 1 : -1;
	}
	display_unlease(&l);
	if (rc == 1 && xcap_encode(f, XCAP_JPEG, LIVE_QUALITY, img, e) != 0)
		rc = -1;
	return rc;
}

static void *
capture(void *arg)
{
	struct live *lv = arg;
	struct xcap_frame f = { 0 };
	struct derr e;
	uint64_t dseq = 0;
	int64_t last_pub = 0;
	bool first = true;
	char key[ID_LEN];

	pthread_mutex_lock(&mu);
	snprintf(key, sizeof key, "%s", lv->key);
	for (;;) {
		struct xcap_image img = { 0 };
		struct timespec ts;
		int got;

		if (down || lv->viewers == 0)
			break;
		pthread_mutex_unlock(&mu);
		derr_clear(&e);
		got = grab(key, &dseq, first, &f, &img, &e);
		pthread_mutex_lock(&mu);
		if (got < 0) {
			snprintf(lv->error, sizeof lv->error, "%s", e.message);
			pthread_cond_broadcast(&lv->cv);
			break;          /* viewers see the end of the stream */
		}
		if (got == 1) {
			first = false;
			free(lv->jpeg);
			lv->jpeg = img.data;
			lv->len = img.len;
			img.data = NULL;
		}
		if (lv->jpeg != NULL && (got == 1 || mono_us() / 1000 - last_pub >= RESEND_MS)) {
			lv->seq++;
			lv->frames += got == 1;
			last_pub = mono_us() / 1000;
			pthread_cond_broadcast(&lv->cv);
		}
		xcap_image_free(&img);
		{
			int human_ms = takeover_live_interval_ms(key);   /* faster while a human drives */

			deadline(&ts, human_ms > 0 ? human_ms : 1000 / LIVE_FPS);
		}
		while (!down && lv->viewers > 0 &&
		    pthread_cond_timedwait(&lv->cv, &mu, &ts) != ETIMEDOUT)
			;
	}
	lv->capturing = false;
	pthread_cond_broadcast(&lv->cv);
	if (lv->viewers == 0)
		unlink_free(lv);
	pthread_mutex_unlock(&mu);
	xcap_frame_free(&f);
	return NULL;
}

/* Joins (or creates) the live view of key and makes sure it captures
 * (mu held). */
static struct live *
join(const char *key, struct derr *e)
{
	struct live *lv = find(key);
	pthread_attr_t at;
	pthread_t t;
	int err;

	if (down) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "detmd is stopping");
		return NULL;
	}
	if (lv != NULL && lv->viewers >= VIEWERS_MAX) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "%d viewers watch this display already", VIEWERS_MAX);
		return NULL;
	}
	if (lv == NULL) {
		lv = xcalloc(1, sizeof *lv);
		snprintf(lv->key, sizeof lv->key, "%s", key);
		pthread_cond_init(&lv->cv, NULL);
		lv->next = streams;
		streams = lv;
	}
	lv->viewers++;
	if (!lv->capturing) {
		lv->error[0] = '\0';
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		err = pthread_create(&t, &at, capture, lv);
		pthread_attr_destroy(&at);
		if (err != 0) {
			lv->viewers--;
			if (lv->viewers == 0)
				unlink_free(lv);
			derr_set(e, DERR_INTERNAL, NULL, "cannot start a capture thread: %s", strerror(err));
			return NULL;
		}
		lv->capturing = true;
	}
	return lv;
}

static void
leave(struct live *lv)
{
	lv->viewers--;
	pthread_cond_broadcast(&lv->cv);
	if (lv->viewers == 0 && !lv->capturing)
		unlink_free(lv);
}

#define BOUNDARY_LINE "\r\n--" LIVE_BOUNDARY "\r\n"

/* The frame as `copies` parts (mu held). Each part ends with the next
 * boundary, and Chromium commits a part only once it has parsed the next
 * part's headers: so while a human drives (takeover.h) each new frame goes
 * out twice in a row, the copy's headers putting the first on screen now
 * rather than when the next frame comes (up to RESEND_MS later). */
static void
part_build(struct view *v, const struct live *lv, int copies)
{
	size_t cap = (size_t)copies * (lv->len + 160), o = 0;

	free(v->part);
	v->part = xmalloc(cap);
	if (v->seen == 0)
		o += (size_t)snprintf(v->part, cap, "--" LIVE_BOUNDARY "\r\n");
	for (int i = 0; i < copies; i++) {
		o += (size_t)snprintf(v->part + o, 128, "Content-Type: image/jpeg\r\n"
		    "Content-Length: %zu\r\n\r\n", lv->len);
		memcpy(v->part + o, lv->jpeg, lv->len);
		o += lv->len;
		memcpy(v->part + o, BOUNDARY_LINE, sizeof BOUNDARY_LINE - 1);
		o += sizeof BOUNDARY_LINE - 1;
	}
	v->part_len = o;
	v->off = 0;
}

static long
view_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct view *v = cls;
	struct live *lv = v->lv;
	size_t n;

	(void)pos;
	if (v->off >= v->part_len) {
		struct timespec ts;

		pthread_mutex_lock(&mu);
		while (!down && lv->seq == v->seen && (lv->capturing || lv->jpeg == NULL) &&
		    lv->error[0] == '\0') {
			deadline(&ts, 1000);
			pthread_cond_timedwait(&lv->cv, &mu, &ts);
		}
		if (down || lv->seq == v->seen || lv->jpeg == NULL) {
			pthread_mutex_unlock(&mu);
			return REQ_STREAM_END;
		}
		part_build(v, lv, takeover_live_interval_ms(lv->key) > 0 ? 2 : 1);
		v->seen = lv->seq;
		pthread_mutex_unlock(&mu);
	}
	n = v->part_len - v->off < max ? v->part_len - v->off : max;
	memcpy(buf, v->part + v->off, n);
	v->off += n;
	return (long)n;
}

static void
view_done(void *cls)
{
	struct view *v = cls;

	pthread_mutex_lock(&mu);
	leave(v->lv);
	pthread_mutex_unlock(&mu);
	free(v->part);
	free(v);
}

int
live_stream(struct req *r, const char *task_id, struct derr *e)
{
	struct view *v;
	struct live *lv;

	pthread_mutex_lock(&mu);
	lv = join(task_id ? task_id : "", e);
	pthread_mutex_unlock(&mu);
	if (lv == NULL)
		return -1;
	v = xcalloc(1, sizeof *v);
	v->lv = lv;
	req_header(r, "X-Accel-Buffering", "no");
	return req_reply_stream(r, 200, "multipart/x-mixed-replace; boundary=" LIVE_BOUNDARY,
	    view_read, view_done, v);
}

int
live_frame(struct req *r, const char *task_id, struct derr *e)
{
	const char *key = task_id ? task_id : "";
	struct xcap_frame f = { 0 };
	struct xcap_image img = { 0 };
	struct live *lv;
	uint64_t dseq = 0;
	int rc;

	pthread_mutex_lock(&mu);
	lv = find(key);
	if (lv != NULL && lv->jpeg != NULL) {
		unsigned char *copy = xmalloc(lv->len);
		size_t len = lv->len;

		memcpy(copy, lv->jpeg, len);
		pthread_mutex_unlock(&mu);
		req_header(r, "X-Live", "shared");
		return req_reply_raw(r, 200, "image/jpeg", copy, len);
	}
	pthread_mutex_unlock(&mu);
	rc = grab(key, &dseq, true, &f, &img, e);
	xcap_frame_free(&f);
	if (rc != 1)
		return -1;
	req_header(r, "X-Live", "grabbed");
	return req_reply_raw(r, 200, "image/jpeg", img.data, img.len);
}

json_object *
live_list(void)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	struct live *lv;

	pthread_mutex_lock(&mu);
	for (lv = streams; lv != NULL; lv = lv->next) {
		json_object *s = json_object_new_object();

		json_object_object_add(s, "task_id", lv->key[0] ? json_object_new_string(lv->key) : NULL);
		json_object_object_add(s, "viewers", json_object_new_int(lv->viewers));
		json_object_object_add(s, "capturing", json_object_new_boolean(lv->capturing));
		json_object_object_add(s, "frames", json_object_new_int64(lv->frames));
		json_object_array_add(arr, s);
	}
	pthread_mutex_unlock(&mu);
	json_object_object_add(o, "streams", arr);
	return o;
}

void
live_shutdown(void)
{
	struct live *lv;

	pthread_mutex_lock(&mu);
	down = true;
	for (lv = streams; lv != NULL; lv = lv->next)
		pthread_cond_broadcast(&lv->cv);
	pthread_mutex_unlock(&mu);
}
