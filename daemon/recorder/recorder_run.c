/*
 * recorder_run.c - a recording's thread (recorder_int.h): about fps times
 * a second it leases the display, grabs the screen only when XDamage says
 * something changed, encodes changed frames (and a repeat every REPEAT_MS
 * of stillness), writes a line "pts_ms wall_ms" per encoded frame to the
 * index file and checks the length and disk limits.
 *
 * States: it alone moves a rec out of recording/paused (run_finish, recorder_run.c), to
 * done, capped, discarded or failed; it writes the final status file, then
 * takes the rec out of the registry and frees it (run_leave), the last
 * thing it does. Invariant: it never takes rec_registry.mu while holding the rec's
 * mu.
 *
 * Does not: decide when to pause or stop (recorder.c sets the rec's
 * request), format status files (recorder_files.c), or know HTTP.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enc.h"
#include "core/log.h"
#include "core/util.h"
#include "desktop/takeover.h"
#include "recorder_int.h"
#include "task/task.h"
#include "x11/display.h"
#include "x11/xcap.h"

/* ---- the recording thread ---- */

static void
idx_line(FILE *f, int64_t pts, int64_t wall)
{
	if (f != NULL) {
		fprintf(f, "%lld %lld\n", (long long)pts, (long long)wall);
		fflush(f);
	}
}

static void
cap_message(struct rec *r)
{
	struct derr e;
	json_object *m;
	char text[320];

	if (r->task_id[0] == '\0' || r->clip_id[0] != '\0')
		return;
	snprintf(text, sizeof text, "Screen recording stopped: %s. The video so far is kept "
	    "(GET /api/tasks/%s/recording.mp4).", r->reason, r->task_id);
	derr_clear(&e);
	m = task_message_add(rec_registry.app->store, r->task_id, "system", "recording", text, &e);
	if (m == NULL)
		log_warn("recording %s: cannot post to the task thread: %s", r->key, e.message);
	json_object_put(m);
}

/* What one recording thread owns while it runs (no lock: only it). */
struct run {
	struct rec *r;
	struct enc *en;
	struct xcap_frame f;
	uint64_t seq;           /* the display's damage_seq at the last grab */
	bool first;
	int64_t interval;       /* ms between frames */
	int64_t seg_start;      /* monotonic ms the current segment (since start or resume) began */
	int64_t base;           /* video ms before that segment */
	int64_t video;          /* this tick's video time */
	int64_t next;           /* monotonic ms the next tick is due */
	FILE *idx;
};

/* Grabs the target if XDamage saw drawing since the last grab (or on the
 * first tick). 1 grabbed, 0 unchanged, -1 failed (r->err set). */
static int
grab_changed(struct run *ru)
{
	struct rec *r = ru->r;
	struct display_lease l;
	struct derr e;
	struct xcap_req q = { .window = r->window };
	bool changed;
	int grabbed = -1;

	derr_clear(&e);
	/* A clip is the agent's (video_record): while a human drives that
	 * display it holds its last picture, as agent screenshots are refused
	 * (takeover.h); the task's own recording goes on (it marks the span). */
	if (r->clip_id[0] != '\0' && takeover_gate_look(r->task_id[0] ? r->task_id : NULL, &e) != 0)
		return 0;
	if (display_lease(r->task_id[0] ? r->task_id : NULL,
	    r->task_id[0] ? DISPLAY_TASK_OR_SHARED : DISPLAY_SHARED, &l, &e) != 0) {
		/* Another reader stuck on a stopped X server: nothing new to
		 * see, the last picture repeats until the server answers. */
		if (e.code == DERR_DISPLAY_UNRESPONSIVE && !ru->first)
			return 0;
		rec_fail_set(r, &e, "display: ");
		return -1;
	}
	changed = ru->first || !l.damage || l.damage_seq != ru->seq;
	if (changed) {
		ru->seq = l.damage_seq;
		grabbed = xcap_grab(l.cap, &q, &ru->f, &e);
	}
	display_unlease(&l);
	if (changed && grabbed != 0) {
		rec_fail_set(r, &e, "capture: ");
		return -1;
	}
	if (changed && ru->en != NULL && (ru->f.width != r->w || ru->f.height != r->h)) {
		pthread_mutex_lock(&r->mu);
		derr_set(&r->err, DERR_CONFLICT, "target", "the window changed size (%dx%d, was %dx%d)",
		    ru->f.width, ru->f.height, r->w, r->h);
		pthread_mutex_unlock(&r->mu);
		return -1;
	}
	return changed ? 1 : 0;
}

/* Encodes the new grab, or repeats the last picture when the screen has
 * been still for REPEAT_MS; each frame is a line of the index. 0, or -1
 * (r->err set). */
static int
encode(struct run *ru, bool changed)
{
	struct rec *r = ru->r;
	struct derr e;

	derr_clear(&e);
	if (changed) {
		if (ru->en == NULL && enc_open(r->path, ru->f.width, ru->f.height, NULL, &ru->en, &e) != 0)
			goto fail;
		r->w = ru->f.width;
		r->h = ru->f.height;
		if (enc_frame(ru->en, ru->f.rgb, ru->video, &e) != 0)
			goto fail;
		xcap_frame_free(&ru->f);        /* 2.7 MB at 720p, not held between frames (issue 39) */
		ru->first = false;
		idx_line(ru->idx, ru->video, now_ms());
	} else if (ru->en != NULL && ru->video - enc_last_pts(ru->en) >= REPEAT_MS) {
		if (enc_frame(ru->en, NULL, ru->video, &e) != 0)
			goto fail;
		idx_line(ru->idx, ru->video, now_ms());
	}
	return 0;
fail:
	rec_fail_set(r, &e, "");
	return -1;
}

/* Publishes the counts and checks the limits: 0 to go on, 1 to end (a cap
 * sets r->reason; a clip's length does not). */
static int
account(struct run *ru)
{
	struct rec *r = ru->r;
	int64_t bytes = ru->en != NULL ? enc_bytes(ru->en) : 0, delta;
	int64_t due = ru->en != NULL ? enc_bytes_due(ru->en) : 0;

	pthread_mutex_lock(&r->mu);
	delta = bytes - r->bytes;
	r->bytes = bytes;
	r->frames = ru->en != NULL ? enc_frames(ru->en) : 0;
	r->video_ms = ru->video;
	pthread_mutex_unlock(&r->mu);
	rfile_add_total(delta);
	pthread_mutex_lock(&rec_registry.mu);
	bytes = rec_registry.total_bytes;
	pthread_mutex_unlock(&rec_registry.mu);
	pthread_mutex_lock(&r->mu);
	if (due >= r->max_bytes)
		snprintf(r->reason, sizeof r->reason, "it reached the per-recording limit of %lld MB "
		    "(ACU_RECORD_TASK_MAX_MB)", (long long)(r->max_bytes >> 20));
	else if (bytes >= (int64_t)rec_registry.app->cfg->record_max_mb << 20)
		snprintf(r->reason, sizeof r->reason, "recordings use %lld MB, the limit "
		    "(ACU_RECORD_MAX_MB)", (long long)(bytes >> 20));
	else if (ru->video >= r->max_ms && r->clip_id[0] == '\0')
		snprintf(r->reason, sizeof r->reason, "it reached the length limit of %lld min "
		    "(ACU_RECORD_MAX_MIN)", (long long)(r->max_ms / 60000));
	rec_check_locked(r);
	pthread_mutex_unlock(&r->mu);
	if (r->reason[0] != '\0')
		return 1;
	return ru->video >= r->max_ms ? 1 : 0;
}

/* One tick at video time ru->video: 0 to go on, 1 to end normally (a
 * limit), -1 on failure (r->err set). */
static int
tick(struct run *ru)
{
	int changed = grab_changed(ru);

	if (changed < 0 || encode(ru, changed == 1) != 0)
		return -1;
	return account(ru);
}

/* Blocks while r is paused (the pause is not in the video: the next
 * segment starts when it resumes). Returns false once r is asked to stop. */
static bool
run_gate(struct run *ru)
{
	struct rec *r = ru->r;
	bool go;

	pthread_mutex_lock(&r->mu);
	if (r->state == R_PAUSED && !r->stop) {
		ru->base = ru->video;
		while (r->state == R_PAUSED && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		ru->seg_start = ru->next = mono_us() / 1000;
	}
	go = !r->stop;
	pthread_mutex_unlock(&r->mu);
	return go;
}

/* Sleeps until the next frame is due (never bursting to catch up), or a
 * stop or pause wakes it. */
static void
run_sleep(struct run *ru)
{
	struct rec *r = ru->r;
	struct timespec ts;
	int64_t wait_ms, ns;

	ru->next += ru->interval;
	if (ru->next < mono_us() / 1000)
		ru->next = mono_us() / 1000;    /* fell behind: do not burst */
	clock_gettime(CLOCK_REALTIME, &ts);
	wait_ms = ru->next - mono_us() / 1000;
	ns = ts.tv_nsec + (wait_ms > 0 ? wait_ms : 0) * 1000000;
	ts.tv_sec += ns / 1000000000;
	ts.tv_nsec = ns % 1000000000;
	pthread_mutex_lock(&r->mu);
	if (!r->stop && r->state != R_PAUSED)
		pthread_cond_timedwait(&r->cv, &r->mu, &ts);
	pthread_mutex_unlock(&r->mu);
}

/* Finishes the file, or removes it when discarded, and settles r's final
 * counts and state. rc is how the loop ended (tick's return). */
static void
run_finish(struct run *ru, int rc)
{
	struct rec *r = ru->r;
	struct derr e;
	bool discard, repeat;
	int64_t grown = 0, held = 0;

	pthread_mutex_lock(&r->mu);
	discard = r->discard;
	if (r->state == R_PAUSED)
		ru->video = r->video_ms;
	pthread_mutex_unlock(&r->mu);
	repeat = ru->en != NULL && !discard && ru->video > enc_last_pts(ru->en);
	if (repeat)
		idx_line(ru->idx, ru->video, now_ms());     /* the picture enc_close repeats */
	if (ru->idx != NULL)
		fclose(ru->idx);
	derr_clear(&e);
	if (discard) {
		enc_abort(ru->en);
		rfile_remove(r->path);
		unlink(r->idx);
	} else if (enc_close(ru->en, ru->video, &held, &e) != 0) {
		rec_fail_set(r, &e, "");
		rc = -1;
	}
	ru->en = NULL;
	pthread_mutex_lock(&r->mu);
	if (!discard) {
		int64_t n = rfile_size(r->path);

		if (n >= 0) {
			grown = n - r->bytes;
			r->bytes = n;
		}
		if (ru->video > r->video_ms)
			r->video_ms = ru->video;
		r->frames = held;       /* what the file holds (the end's repeat too) */
	}
	r->state = discard ? R_DISCARDED : rc < 0 ? R_FAILED : r->reason[0] ? R_CAPPED : R_DONE;
	rec_check_locked(r);
	pthread_mutex_unlock(&r->mu);
	/* rec_registry.mu comes before r->mu: never taken under it (a status read
	 * holding rec_registry.mu and waiting for r->mu deadlocked against this) */
	rfile_add_total(grown);
}

/* Takes r out of the registry, wakes whoever waits for that, frees r: the
 * last thing its thread does. */
static void
run_leave(struct rec *r)
{
	pthread_mutex_lock(&rec_registry.mu);
	for (size_t i = 0; i < RECS_MAX; i++)
		if (rec_registry.recs[i] == r)
			rec_registry.recs[i] = NULL;
	rec_reg_check_locked();
	pthread_cond_broadcast(&rec_registry.cv);
	pthread_mutex_unlock(&rec_registry.mu);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r);
}

/* The recording thread: ticks until asked to stop or a limit or failure
 * ends it, then finishes the file and reports. */
static void *
run(void *arg)
{
	struct rec *r = arg;
	struct run ru = { .r = r, .first = true, .interval = 1000 / r->fps };
	int rc = 0;

	ru.seg_start = ru.next = mono_us() / 1000;
	ru.idx = fopen(r->idx, "we");
	(void)rfile_write_meta(r);     /* logs; the status is kept anyway */
	while (run_gate(&ru)) {
		ru.video = ru.base + (mono_us() / 1000 - ru.seg_start);
		if (ru.en != NULL && ru.video <= enc_last_pts(ru.en))
			ru.video = enc_last_pts(ru.en) + 1;
		if ((rc = tick(&ru)) != 0)
			break;
		run_sleep(&ru);
	}
	xcap_frame_free(&ru.f);
	run_finish(&ru, rc);
	if (r->state == R_FAILED)
		log_warn("recording %s failed: %s", r->key, r->err.message);
	else
		log_info("recording %s %s: %lld frames, %lld bytes, %.1f s", r->key,
		    rec_state_names[r->state], (long long)r->frames, (long long)r->bytes,
		    (double)r->video_ms / 1000.0);
	(void)rfile_write_meta(r);     /* logs; the status is kept anyway */
	if (r->state == R_CAPPED)
		cap_message(r);
	run_leave(r);
	return NULL;
}

/* Registers and starts a recording (rec_registry.mu held). */
int
rrun_launch(struct rec *r, struct derr *e)
{
	pthread_attr_t at;
	pthread_t t;
	size_t slot;
	int err;

	if (rec_registry.shutting_down)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "detmd is stopping");
	for (slot = 0; slot < RECS_MAX && rec_registry.recs[slot] != NULL; slot++)
		;
	if (slot == RECS_MAX)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "%d recordings run already", RECS_MAX);
	r->gen = rec_registry.next_gen++;
	r->started_ms = now_ms();
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	rfile_paths(r);
	rec_registry.recs[slot] = r;
	rec_reg_check_locked();
	rec_check_locked(r);   /* not running yet: no lock needed */
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &at, run, r);
	pthread_attr_destroy(&at);
	if (err != 0) {
		rec_registry.recs[slot] = NULL;
		rec_reg_check_locked();
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->cv);
		return derr_set(e, DERR_INTERNAL, NULL, "cannot start a recording thread: %s",
		    strerror(err));
	}
	return 0;
}

struct rec *
rrun_new(const char *task_id, int fps)
{
	struct rec *r = xcalloc(1, sizeof *r);

	snprintf(r->task_id, sizeof r->task_id, "%s", task_id ? task_id : "");
	r->fps = fps;
	r->max_bytes = (int64_t)rec_registry.app->cfg->record_task_max_mb << 20;
	r->max_ms = (int64_t)rec_registry.app->cfg->record_max_min * 60000;
	r->state = R_RECORDING;
	return r;
}

