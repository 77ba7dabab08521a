/*
 * live.c - shared capture threads and MJPEG viewers (live.h).
 *
 * A struct live per watched display key (task id, "" for the shared
 * display) lives in a list under `mu`. A viewer (struct live_view) holds a
 * reference (viewers++) from live_view_open to live_view_close. Reading
 * never blocks: a viewer that has seen the latest frame gets 0 and is asked
 * again after the notify hook ran for its display (a new frame, an error,
 * the thread's end, shutdown) or on the caller's own clock. The HTTP side
 * is api_live.c.
 *
 * States of a struct live (all under mu):
 *
 *   capturing   its capture thread runs (capturing = true); viewers >= 0
 *   stalled     the thread left (a grab failed and error is set, or detmd
 *               is stopping) while viewers remain: they see the end of
 *               their stream
 *   (gone)      unlinked and freed
 *
 *   (gone) -> capturing      the first viewer joins (join)
 *   stalled -> capturing     a new viewer joins (error cleared)
 *   capturing -> stalled     a grab fails (or shutdown) with viewers left
 *   capturing -> (gone)      the thread sees no viewers (or shutdown) and
 *                            none are left: it frees the struct
 *   stalled -> (gone)        its last viewer leaves (leave)
 * The thread decides to leave under mu, so a viewer that arrives meanwhile
 * either finds it running or starts a new one.
 *
 * Invariants, asserted after every transition by live_check_locked in
 * debug and ASan builds (not under NDEBUG): a listed struct is capturing or
 * has viewers (never both false: that one is freed); 0 <= viewers <=
 * VIEWERS_MAX; keys are distinct; a frame is there (jpeg, len > 0) or not
 * at all (NULL, 0); frames published never exceed seq.
 */
#include "live.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "takeover.h"
#include "x11/display.h"
#include "x11/xcap.h"

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

struct live_view {
	struct live *lv;
	uint64_t seen;
	char *part;             /* the part being sent */
	size_t part_len, off;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct live *streams;
static bool down;
static void (*notify)(const void *key);     /* atomic: set once */

void
live_set_notify(void (*fn)(const void *key))
{
	__atomic_store_n(&notify, fn, __ATOMIC_RELEASE);
}

/* Tells lv's viewers (NULL: all) that something changed (mu may be held:
 * the hook never calls back into this module). */
static void
wake(const struct live *lv)
{
	void (*fn)(const void *key) = __atomic_load_n(&notify, __ATOMIC_ACQUIRE);

	if (fn != NULL)
		fn(lv);
}

/* mu held: the list agrees with the states above. */
static void
live_check_locked(void)
{
#ifndef NDEBUG
	const struct live *lv, *o;

	for (lv = streams; lv != NULL; lv = lv->next) {
		assert(lv->capturing || lv->viewers > 0);
		assert(lv->viewers >= 0 && lv->viewers <= VIEWERS_MAX);
		assert((lv->jpeg == NULL) == (lv->len == 0));
		assert(lv->frames >= 0 && (uint64_t)lv->frames <= lv->seq);
		for (o = lv->next; o != NULL; o = o->next)
			assert(strcmp(o->key, lv->key) != 0);
	}
#endif
}

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
			wake(lv);
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
			wake(lv);
		}
		live_check_locked();
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
	wake(lv);
	if (lv->viewers == 0)
		unlink_free(lv);
	live_check_locked();
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
			live_check_locked();
			return NULL;
		}
		lv->capturing = true;
	}
	live_check_locked();
	return lv;
}

static void
leave(struct live *lv)
{
	lv->viewers--;
	pthread_cond_broadcast(&lv->cv);
	if (lv->viewers == 0 && !lv->capturing)
		unlink_free(lv);
	live_check_locked();
}

#define BOUNDARY_LINE "\r\n--" LIVE_BOUNDARY "\r\n"

/* The frame as `copies` parts (mu held). Each part ends with the next
 * boundary, and Chromium commits a part only once it has parsed the next
 * part's headers: so while a human drives (takeover.h) each new frame goes
 * out twice in a row, the copy's headers putting the first on screen now
 * rather than when the next frame comes (up to RESEND_MS later). */
static void
part_build(struct live_view *v, const struct live *lv, int copies)
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

long
live_view_read(struct live_view *v, char *buf, size_t max)
{
	struct live *lv = v->lv;
	size_t n;

	if (v->off >= v->part_len) {
		pthread_mutex_lock(&mu);
		if (!down && lv->seq == v->seen && (lv->capturing || lv->jpeg == NULL) &&
		    lv->error[0] == '\0') {
			pthread_mutex_unlock(&mu);
			return 0;       /* nothing new yet */
		}
		if (down || lv->seq == v->seen || lv->jpeg == NULL) {
			pthread_mutex_unlock(&mu);
			return -1;
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

const void *
live_view_key(const struct live_view *v)
{
	return v->lv;
}

void
live_view_close(struct live_view *v)
{
	if (v == NULL)
		return;
	pthread_mutex_lock(&mu);
	leave(v->lv);
	pthread_mutex_unlock(&mu);
	free(v->part);
	free(v);
}

struct live_view *
live_view_open(const char *task_id, struct derr *e)
{
	struct live_view *v;
	struct live *lv;

	pthread_mutex_lock(&mu);
	lv = join(task_id ? task_id : "", e);
	pthread_mutex_unlock(&mu);
	if (lv == NULL)
		return NULL;
	v = xcalloc(1, sizeof *v);
	v->lv = lv;
	return v;
}

int
live_frame(const char *task_id, unsigned char **jpeg, size_t *len, bool *shared, struct derr *e)
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
		*jpeg = xmalloc(lv->len);
		*len = lv->len;
		memcpy(*jpeg, lv->jpeg, *len);
		pthread_mutex_unlock(&mu);
		*shared = true;
		return 0;
	}
	pthread_mutex_unlock(&mu);
	rc = grab(key, &dseq, true, &f, &img, e);
	xcap_frame_free(&f);
	if (rc != 1)
		return -1;
	*jpeg = img.data;
	*len = img.len;
	*shared = false;
	return 0;
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
	wake(NULL);
}
