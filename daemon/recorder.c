/*
 * recorder.c - task recordings and clips (recorder.h).
 *
 * Every live recording (task or clip) is a struct rec in the registry,
 * owned by its own detached thread: the thread removes it from the registry
 * and frees it when it ends, after writing the status file. Whoever wants a
 * recording to end (the task hook, an operator, shutdown) sets its stop
 * request under its mutex and waits on reg_cv until its generation has left
 * the registry. Lock order: reg_mu, then a rec's mu. The recording thread
 * never takes reg_mu while holding its own mu.
 *
 * A recording's states (struct rec.state, under its mu):
 *
 *   recording <-> paused              the task hook (set_state)
 *   recording | paused -> done        asked to stop (stop_wait), or a clip's
 *                                     length reached
 *                      -> capped      a size or length limit (reason set)
 *                      -> discarded   stopped with discard (the task failed)
 *                      -> failed      display, capture or encoder (err set)
 *
 * Only the recording thread leaves recording/paused (run_finish); the
 * final state is written to the status file before the thread takes the
 * rec out of the registry and frees it. Invariants, asserted after every
 * transition by rec_check_locked (a rec) and reg_check_locked (the
 * registry) in debug and ASan builds (not under NDEBUG):
 *   - a task recording's key is its task id (8 hex, no window); a clip's
 *     key is "clip-<clip id>";
 *   - failed has err set, capped a reason, discarded the discard request,
 *     and discard is only ever asked with stop;
 *   - counts (frames, bytes, video ms) and the directory total are >= 0;
 *   - registered recordings have distinct keys and generations, each
 *     below next_gen.
 * A failure is kept as a struct derr and shown in the status as the one
 * error shape {"code","message","field"} (derr.h).
 */
#include "recorder.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "display.h"
#include "enc.h"
#include "events.h"
#include "jx.h"
#include "log.h"
#include "task.h"
#include "taskstate.h"
#include "util.h"
#include "xcap.h"
#include "xwin.h"

#define RECS_MAX        128
#define REPEAT_MS       10000   /* a still screen: one repeated frame this often */
#define KEY_MAX         24

enum rstate { R_RECORDING, R_PAUSED, R_DONE, R_CAPPED, R_DISCARDED, R_FAILED };
static const char *const rstate_names[] = {
	"recording", "paused", "done", "capped", "discarded", "failed",
};

struct rec {
	char key[KEY_MAX];      /* the task id, or "clip-<id>" */
	char task_id[ID_LEN];   /* "" for a clip of the shared display */
	char clip_id[ID_LEN];   /* "" for a task recording */
	uint64_t gen;
	int fps;
	unsigned long window;   /* 0: the whole screen */
	int w, h;               /* the encoder's frame size, once open */
	int64_t max_ms, max_bytes;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu */
	enum rstate state;
	bool stop, discard;
	int64_t frames, bytes, video_ms, started_ms;
	char reason[160];
	struct derr err;        /* R_FAILED: why (err.code DERR_OK otherwise) */
	char path[PATH_MAX], idx[PATH_MAX], meta[PATH_MAX];
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cv = PTHREAD_COND_INITIALIZER;
static struct rec *recs[RECS_MAX];
static uint64_t next_gen = 1;
static bool shutting_down;
static struct app *app;
static char *dir;
static int64_t total_bytes;     /* under reg_mu */

/* ---- files ---- */

static void
paths(struct rec *r)
{
	const char *base = r->clip_id[0] ? r->key : r->task_id;

	snprintf(r->path, sizeof r->path, "%s/%s.mp4", dir, base);
	snprintf(r->idx, sizeof r->idx, "%s/%s.idx", dir, base);
	snprintf(r->meta, sizeof r->meta, "%s/%s.json", dir, base);
}

static int64_t
file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

static void
add_total(int64_t delta)
{
	pthread_mutex_lock(&reg_mu);
	total_bytes += delta;
	if (total_bytes < 0)
		total_bytes = 0;
	pthread_mutex_unlock(&reg_mu);
}

/* Removes a file and takes its size off the total. */
static void
remove_file(const char *path)
{
	int64_t n = file_size(path);

	if (unlink(path) == 0 && n > 0)
		add_total(-n);
}

/* The inner {code, message, field} of the one error shape (derr.h). */
static json_object *
error_json(const struct derr *e)
{
	json_object *outer = derr_to_json(e);
	json_object *inner = json_object_get(json_object_object_get(outer, "error"));

	json_object_put(outer);
	return inner;
}

/* Records why r failed (under its mu): e's code and field, prefix + its
 * message. */
static void
fail_set(struct rec *r, const struct derr *e, const char *prefix)
{
	pthread_mutex_lock(&r->mu);
	derr_set(&r->err, e->code != DERR_OK ? e->code : DERR_INTERNAL, e->field, "%s%s", prefix,
	    e->message);
	pthread_mutex_unlock(&r->mu);
}

static json_object *
status_json(const struct rec *r)
{
	json_object *o = json_object_new_object();
	char when[ISO_TIME_LEN];

	json_object_object_add(o, "state", json_object_new_string(rstate_names[r->state]));
	json_object_object_add(o, "frames", json_object_new_int64(r->frames));
	json_object_object_add(o, "bytes", json_object_new_int64(r->bytes));
	json_object_object_add(o, "duration_s", json_object_new_double((double)r->video_ms / 1000.0));
	json_object_object_add(o, "fps", json_object_new_int(r->fps));
	iso_time(r->started_ms, when);
	json_object_object_add(o, "started_at", json_object_new_string(when));
	if (r->task_id[0])
		json_object_object_add(o, "task_id", json_object_new_string(r->task_id));
	if (r->clip_id[0])
		json_object_object_add(o, "clip_id", json_object_new_string(r->clip_id));
	if (r->reason[0])
		json_object_object_add(o, "reason", json_object_new_string(r->reason));
	if (r->err.code != DERR_OK)
		json_object_object_add(o, "error", error_json(&r->err));
	return o;
}

/* Writes the status file atomically (rename over). */
static void
write_meta(struct rec *r)
{
	char tmp[PATH_MAX + 8];
	json_object *o;
	FILE *f;

	pthread_mutex_lock(&r->mu);
	o = status_json(r);
	pthread_mutex_unlock(&r->mu);
	snprintf(tmp, sizeof tmp, "%s.tmp", r->meta);
	f = fopen(tmp, "we");
	if (f != NULL) {
		fputs(jx_string(o, NULL), f);
		if (fclose(f) == 0)
			rename(tmp, r->meta);
		else
			unlink(tmp);
	}
	json_object_put(o);
	events_publish("recording", "updated", r->task_id[0] ? r->task_id : NULL,
	    r->clip_id[0] ? r->clip_id : NULL);
}

/* A status file; one written before errors had their JSON shape keeps
 * "error" as a bare string, which is read as an internal error. */
static json_object *
read_meta(const char *path)
{
	json_object *o = json_object_from_file(path), *err;

	if (o != NULL && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	if (o != NULL && json_object_object_get_ex(o, "error", &err) &&
	    json_object_is_type(err, json_type_string)) {
		struct derr e;

		derr_set(&e, DERR_INTERNAL, NULL, "%s", json_object_get_string(err));
		json_object_object_add(o, "error", error_json(&e));
	}
	return o;
}

/* ---- state checks (debug and ASan builds; compiled out under NDEBUG) ---- */

/* r->mu held: r's state agrees with its fields (see the opening comment). */
static void
rec_check_locked(const struct rec *r)
{
#ifndef NDEBUG
	assert((unsigned)r->state <= R_FAILED);
	assert(r->fps >= 1 && r->gen >= 1 && r->started_ms > 0);
	assert(r->frames >= 0 && r->bytes >= 0 && r->video_ms >= 0);
	if (r->clip_id[0] != '\0')
		assert(strncmp(r->key, "clip-", 5) == 0 && strcmp(r->key + 5, r->clip_id) == 0);
	else
		assert(strcmp(r->key, r->task_id) == 0 && id_valid(r->task_id) && r->window == 0);
	assert(r->state != R_FAILED || r->err.code != DERR_OK);
	assert(r->state != R_CAPPED || r->reason[0] != '\0');
	assert(r->state != R_DISCARDED || r->discard);
	assert(!r->discard || r->stop);
#else
	(void)r;
#endif
}

/* reg_mu held: registered recordings have distinct keys and generations
 * (only fields fixed at launch are read: no rec's mu is taken). */
static void
reg_check_locked(void)
{
#ifndef NDEBUG
	assert(total_bytes >= 0);
	for (size_t i = 0; i < RECS_MAX; i++) {
		const struct rec *a = recs[i];

		if (a == NULL)
			continue;
		assert(a->key[0] != '\0' && a->gen >= 1 && a->gen < next_gen);
		for (size_t k = i + 1; k < RECS_MAX; k++)
			assert(recs[k] == NULL || (recs[k] != a && recs[k]->gen != a->gen &&
			    strcmp(recs[k]->key, a->key) != 0));
	}
#endif
}

/* ---- registry (reg_mu held) ---- */

static struct rec *
find(const char *key)
{
	for (size_t i = 0; i < RECS_MAX; i++)
		if (recs[i] != NULL && strcmp(recs[i]->key, key) == 0)
			return recs[i];
	return NULL;
}

static bool
gen_live(uint64_t gen)
{
	for (size_t i = 0; i < RECS_MAX; i++)
		if (recs[i] != NULL && recs[i]->gen == gen)
			return true;
	return false;
}

/* Asks the recording under key to end and waits until it has (reg_mu held;
 * released while waiting). Returns false if none was running. */
static bool
stop_wait(const char *key, bool discard)
{
	struct rec *r = find(key);
	uint64_t gen;

	if (r == NULL)
		return false;
	gen = r->gen;
	pthread_mutex_lock(&r->mu);
	r->stop = true;
	r->discard = discard;
	rec_check_locked(r);
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	while (gen_live(gen))
		pthread_cond_wait(&reg_cv, &reg_mu);
	reg_check_locked();
	return true;
}

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
	m = task_message_add(app->store, r->task_id, "system", "recording", text, &e);
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
	if (display_lease(r->task_id[0] ? r->task_id : NULL,
	    r->task_id[0] ? DISPLAY_TASK_OR_SHARED : DISPLAY_SHARED, &l, &e) != 0) {
		fail_set(r, &e, "display: ");
		return -1;
	}
	changed = ru->first || !l.damage || l.damage_seq != ru->seq;
	if (changed) {
		ru->seq = l.damage_seq;
		grabbed = xcap_grab(l.cap, &q, &ru->f, &e);
	}
	display_unlease(&l);
	if (changed && grabbed != 0) {
		fail_set(r, &e, "capture: ");
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
		ru->first = false;
		idx_line(ru->idx, ru->video, now_ms());
	} else if (ru->en != NULL && ru->video - enc_last_pts(ru->en) >= REPEAT_MS) {
		if (enc_frame(ru->en, NULL, ru->video, &e) != 0)
			goto fail;
		idx_line(ru->idx, ru->video, now_ms());
	}
	return 0;
fail:
	fail_set(r, &e, "");
	return -1;
}

/* Publishes the counts and checks the limits: 0 to go on, 1 to end (a cap
 * sets r->reason; a clip's length does not). */
static int
account(struct run *ru)
{
	struct rec *r = ru->r;
	int64_t bytes = ru->en != NULL ? enc_bytes(ru->en) : 0, delta;

	pthread_mutex_lock(&r->mu);
	delta = bytes - r->bytes;
	r->bytes = bytes;
	r->frames = ru->en != NULL ? enc_frames(ru->en) : 0;
	r->video_ms = ru->video;
	pthread_mutex_unlock(&r->mu);
	add_total(delta);
	pthread_mutex_lock(&reg_mu);
	bytes = total_bytes;
	pthread_mutex_unlock(&reg_mu);
	pthread_mutex_lock(&r->mu);
	if (r->bytes >= r->max_bytes)
		snprintf(r->reason, sizeof r->reason, "it reached the per-recording limit of %lld MB "
		    "(ACU_RECORD_TASK_MAX_MB)", (long long)(r->max_bytes >> 20));
	else if (bytes >= (int64_t)app->cfg->record_max_mb << 20)
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
		remove_file(r->path);
		unlink(r->idx);
	} else if (enc_close(ru->en, ru->video, &e) != 0) {
		fail_set(r, &e, "");
		rc = -1;
	}
	ru->en = NULL;
	pthread_mutex_lock(&r->mu);
	if (!discard) {
		int64_t n = file_size(r->path);

		if (n >= 0) {
			add_total(n - r->bytes);
			r->bytes = n;
		}
		if (ru->video > r->video_ms)
			r->video_ms = ru->video;
		if (repeat && rc == 0)
			r->frames++;    /* enc_close repeated the last picture at the end */
	}
	r->state = discard ? R_DISCARDED : rc < 0 ? R_FAILED : r->reason[0] ? R_CAPPED : R_DONE;
	rec_check_locked(r);
	pthread_mutex_unlock(&r->mu);
}

/* Takes r out of the registry, wakes whoever waits for that, frees r: the
 * last thing its thread does. */
static void
run_leave(struct rec *r)
{
	pthread_mutex_lock(&reg_mu);
	for (size_t i = 0; i < RECS_MAX; i++)
		if (recs[i] == r)
			recs[i] = NULL;
	reg_check_locked();
	pthread_cond_broadcast(&reg_cv);
	pthread_mutex_unlock(&reg_mu);
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
	write_meta(r);
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
		    rstate_names[r->state], (long long)r->frames, (long long)r->bytes,
		    (double)r->video_ms / 1000.0);
	write_meta(r);
	if (r->state == R_CAPPED)
		cap_message(r);
	run_leave(r);
	return NULL;
}

/* Registers and starts a recording (reg_mu held). */
static int
launch(struct rec *r, struct derr *e)
{
	pthread_attr_t at;
	pthread_t t;
	size_t slot;
	int err;

	if (shutting_down)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "detmd is stopping");
	for (slot = 0; slot < RECS_MAX && recs[slot] != NULL; slot++)
		;
	if (slot == RECS_MAX)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "%d recordings run already", RECS_MAX);
	r->gen = next_gen++;
	r->started_ms = now_ms();
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	paths(r);
	recs[slot] = r;
	reg_check_locked();
	rec_check_locked(r);   /* not running yet: no lock needed */
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &at, run, r);
	pthread_attr_destroy(&at);
	if (err != 0) {
		recs[slot] = NULL;
		reg_check_locked();
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->cv);
		return derr_set(e, DERR_INTERNAL, NULL, "cannot start a recording thread: %s",
		    strerror(err));
	}
	return 0;
}

static struct rec *
rec_new(const char *task_id, int fps)
{
	struct rec *r = xcalloc(1, sizeof *r);

	snprintf(r->task_id, sizeof r->task_id, "%s", task_id ? task_id : "");
	r->fps = fps;
	r->max_bytes = (int64_t)app->cfg->record_task_max_mb << 20;
	r->max_ms = (int64_t)app->cfg->record_max_min * 60000;
	r->state = R_RECORDING;
	return r;
}

/* ---- task recordings ---- */

static int
task_start(const char *task_id, struct derr *e)
{
	struct rec *r;
	int rc;

	pthread_mutex_lock(&reg_mu);
	if (find(task_id) != NULL) {
		pthread_mutex_unlock(&reg_mu);
		return derr_set(e, DERR_CONFLICT, NULL, "task %s is being recorded already", task_id);
	}
	r = rec_new(task_id, (int)app->cfg->record_fps);
	snprintf(r->key, sizeof r->key, "%s", task_id);
	rc = launch(r, e);
	pthread_mutex_unlock(&reg_mu);
	if (rc != 0)
		free(r);
	return rc;
}

void
rec_display_started(const char *task_id)
{
	struct derr e;

	if (!app->cfg->record)
		return;
	derr_clear(&e);
	if (task_start(task_id, &e) != 0 && e.code != DERR_CONFLICT)
		log_warn("cannot record task %s: %s", task_id, e.message);
}

int
rec_task_start(const char *task_id, json_object **out, struct derr *e)
{
	json_object *meta = NULL;
	int st;

	if (task_meta(app->store, task_id, &st, &meta, e) != 0)
		return -1;
	json_object_put(meta);
	if (task_status_final(st))
		return derr_set(e, DERR_CONFLICT, "status", "task %s is %s: nothing to record",
		    task_id, task_status_name(st));
	if (task_start(task_id, e) != 0)
		return -1;
	*out = rec_task_status(task_id);
	return 0;
}

int
rec_task_stop(const char *task_id, json_object **out, struct derr *e)
{
	bool was;

	pthread_mutex_lock(&reg_mu);
	was = stop_wait(task_id, false);
	pthread_mutex_unlock(&reg_mu);
	if (!was)
		return derr_set(e, DERR_CONFLICT, NULL, "task %s is not being recorded", task_id);
	*out = rec_task_status(task_id);
	return 0;
}

static void
add_url(json_object *o, const char *path, const char *url)
{
	if (file_size(path) >= 0)
		json_object_object_add(o, "url", json_object_new_string(url));
	else
		json_object_object_add(o, "url", NULL);
}

json_object *
rec_task_status(const char *task_id)
{
	struct rec *r;
	json_object *o = NULL;
	char path[PATH_MAX], url[128];

	pthread_mutex_lock(&reg_mu);
	r = find(task_id);
	if (r != NULL) {
		pthread_mutex_lock(&r->mu);
		o = status_json(r);
		pthread_mutex_unlock(&r->mu);
	}
	pthread_mutex_unlock(&reg_mu);
	if (o == NULL) {
		snprintf(path, sizeof path, "%s/%s.json", dir, task_id);
		o = read_meta(path);
		if (o != NULL) {
			const char *s = json_object_get_string(json_object_object_get(o, "state"));

			if (s != NULL && (strcmp(s, "recording") == 0 || strcmp(s, "paused") == 0))
				json_object_object_add(o, "state", json_object_new_string("interrupted"));
		}
	}
	if (o == NULL) {
		o = json_object_new_object();
		json_object_object_add(o, "state", json_object_new_string("none"));
	}
	snprintf(path, sizeof path, "%s/%s.mp4", dir, task_id);
	snprintf(url, sizeof url, "/api/tasks/%s/recording.mp4", task_id);
	add_url(o, path, url);
	return o;
}

int
rec_task_file(const char *task_id, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.mp4", dir, task_id);
	return file_size(buf) >= 0 ? 0 : -1;
}

/* Deletes a task's files and its clips' files. */
static void
delete_files(const char *task_id)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dh;

	snprintf(path, sizeof path, "%s/%s.mp4", dir, task_id);
	remove_file(path);
	snprintf(path, sizeof path, "%s/%s.idx", dir, task_id);
	unlink(path);
	snprintf(path, sizeof path, "%s/%s.json", dir, task_id);
	unlink(path);
	if ((dh = opendir(dir)) == NULL)
		return;
	while ((de = readdir(dh)) != NULL) {
		size_t n = strlen(de->d_name);
		json_object *m;
		const char *t;

		if (strncmp(de->d_name, "clip-", 5) != 0 || n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		m = read_meta(path);
		t = m ? json_object_get_string(json_object_object_get(m, "task_id")) : NULL;
		if (t != NULL && strcmp(t, task_id) == 0) {
			unlink(path);
			snprintf(path, sizeof path, "%s/%.*s.mp4", dir, (int)(n - 5), de->d_name);
			remove_file(path);
			snprintf(path, sizeof path, "%s/%.*s.idx", dir, (int)(n - 5), de->d_name);
			unlink(path);
		}
		json_object_put(m);
	}
	closedir(dh);
}

static void
set_state(const char *task_id, enum rstate to)
{
	struct rec *r;

	pthread_mutex_lock(&reg_mu);
	r = find(task_id);
	if (r != NULL) {
		pthread_mutex_lock(&r->mu);
		if (r->state == R_RECORDING || r->state == R_PAUSED)
			r->state = to;
		rec_check_locked(r);
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	pthread_mutex_unlock(&reg_mu);
	if (r != NULL)
		events_publish("recording", "updated", task_id, NULL);
}

/* The task hook: pause, resume, finish, discard, delete. */
static void
on_task_change(const char *task_id, int from, int to, void *arg)
{
	bool discard;

	(void)arg;
	if (to == TASK_HOOK_DELETED) {
		pthread_mutex_lock(&reg_mu);
		stop_wait(task_id, true);
		pthread_mutex_unlock(&reg_mu);
		delete_files(task_id);
		return;
	}
	if (to == TASK_PAUSED) {
		set_state(task_id, R_PAUSED);
	} else if (to == TASK_ACTIVE && from == TASK_PAUSED) {
		set_state(task_id, R_RECORDING);
	} else if (task_status_final(to)) {
		discard = to == TASK_FAILED && !app->cfg->record_keep_failed;
		pthread_mutex_lock(&reg_mu);
		stop_wait(task_id, discard);
		pthread_mutex_unlock(&reg_mu);
	}
}

/* ---- the index ---- */

json_object *
rec_task_index(struct app *a, const char *task_id, struct derr *e)
{
	json_object *sum, *o, *frames, *acts, *items;
	int64_t *pts = NULL, *wall = NULL, p, w;
	size_t n = 0, cap = 0;
	char path[PATH_MAX];
	FILE *f;

	if ((sum = task_summary(a->store, task_id, DETAIL_ACTIONS, false, e)) == NULL)
		return NULL;
	snprintf(path, sizeof path, "%s/%s.idx", dir, task_id);
	f = fopen(path, "re");
	if (f == NULL) {
		json_object_put(sum);
		derr_set(e, DERR_NOT_FOUND, NULL, "task %s has no recording", task_id);
		return NULL;
	}
	while (fscanf(f, "%lld %lld", (long long *)&p, (long long *)&w) == 2) {
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			pts = xrealloc(pts, cap * sizeof *pts);
			wall = xrealloc(wall, cap * sizeof *wall);
		}
		pts[n] = p;
		wall[n] = w;
		n++;
	}
	fclose(f);
	o = json_object_new_object();
	frames = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(frames, json_object_new_double((double)pts[i] / 1000.0));
	json_object_object_add(o, "task_id", json_object_new_string(task_id));
	json_object_object_add(o, "frames", frames);
	json_object_object_add(o, "recording", rec_task_status(task_id));
	acts = json_object_new_array();
	items = json_object_object_get(sum, "items");
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object *it = json_object_array_get_idx(items, i);
		json_object *ad = json_object_object_get(it, "action_details");

		for (size_t k = 0; k < json_object_array_length(ad); k++) {
			json_object *a1 = json_object_array_get_idx(ad, k), *x = json_object_new_object();
			const char *created = json_object_get_string(json_object_object_get(a1, "created_at"));
			int64_t at = 0;
			double t = -1;
			size_t j;

			if (created != NULL && time_parse(created, &at) == 0 && n > 0 && at >= wall[0]) {
				/* The last frame shown at that moment, plus the time since
				 * (up to the next frame: pauses are not in the video). */
				for (j = 0; j + 1 < n && wall[j + 1] <= at; j++)
					;
				p = pts[j] + (at - wall[j]);
				if (j + 1 < n && p > pts[j + 1])
					p = pts[j + 1];
				t = (double)p / 1000.0;
			}
			json_object_object_add(x, "action_id", json_object_get(json_object_object_get(a1, "action_id")));
			json_object_object_add(x, "ordinal", json_object_get(json_object_object_get(it, "ordinal")));
			json_object_object_add(x, "action_type", json_object_get(json_object_object_get(a1, "action_type")));
			json_object_object_add(x, "summary", json_object_get(json_object_object_get(a1, "summary")));
			json_object_object_add(x, "created_at", json_object_get(json_object_object_get(a1, "created_at")));
			json_object_object_add(x, "t_s", t >= 0 ? json_object_new_double(t) : NULL);
			json_object_array_add(acts, x);
		}
	}
	json_object_object_add(o, "actions", acts);
	json_object_put(sum);
	free(pts);
	free(wall);
	return o;
}

/* ---- clips ---- */

int
rec_clip(const char *task_id, int duration_s, int fps, const char *window_name, bool wait,
    json_object **out, struct derr *e)
{
	struct rec *r;
	struct display_lease l;
	char key[KEY_MAX], id[ID_LEN];
	const char *state;
	json_object *o;

	/* A display that is not there is the caller's error now, not a clip
	 * that fails later. */
	struct xwin w = { 0 };

	if (display_lease(task_id, task_id ? DISPLAY_TASK_OR_SHARED : DISPLAY_SHARED, &l, e) != 0)
		return -1;
	if (window_name != NULL && xwin_find(l.d, window_name, &w, e) != 0) {
		display_unlease(&l);
		if (e->code == DERR_NOT_FOUND)
			derr_set(e, DERR_NOT_FOUND, "target", "no visible window matches '%.*s'",
			    utf8_prec(window_name, 100), window_name);
		return -1;
	}
	display_unlease(&l);
	r = rec_new(task_id, fps);
	r->window = w.id;
	id_new(id);
	snprintf(r->clip_id, sizeof r->clip_id, "%s", id);
	snprintf(r->key, sizeof r->key, "clip-%s", id);
	snprintf(key, sizeof key, "%s", r->key);
	r->max_ms = (int64_t)duration_s * 1000;
	pthread_mutex_lock(&reg_mu);
	if (launch(r, e) != 0) {
		pthread_mutex_unlock(&reg_mu);
		free(r);
		return -1;
	}
	pthread_mutex_unlock(&reg_mu);
	o = rec_clip_status(id, wait ? duration_s + 30 : 0, e);
	if (o == NULL)
		return -1;
	if (w.id != 0) {
		json_object *wo = json_object_new_object();

		json_object_object_add(wo, "id", json_object_new_int64((int64_t)w.id));
		jx_add_str(wo, "title", w.title);
		json_object_object_add(o, "window", wo);
	}
	state = json_object_get_string(json_object_object_get(o, "state"));
	if (wait && state != NULL && strcmp(state, "failed") == 0) {
		json_object *err = json_object_object_get(o, "error");

		derr_set(e, DERR_UNAVAILABLE, NULL, "the clip %s failed: %s", id,
		    json_object_get_string(json_object_object_get(err, "message")));
		json_object_put(o);
		return -1;
	}
	*out = o;
	return 0;
}

json_object *
rec_clip_status(const char *clip_id, int block_s, struct derr *e)
{
	char key[KEY_MAX], path[PATH_MAX], url[96];
	struct timespec ts;
	json_object *o = NULL;
	struct rec *r;

	snprintf(key, sizeof key, "clip-%s", clip_id);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += block_s;
	pthread_mutex_lock(&reg_mu);
	while (block_s > 0 && (r = find(key)) != NULL)
		if (pthread_cond_timedwait(&reg_cv, &reg_mu, &ts) == ETIMEDOUT)
			break;
	if ((r = find(key)) != NULL) {
		pthread_mutex_lock(&r->mu);
		o = status_json(r);
		pthread_mutex_unlock(&r->mu);
	}
	pthread_mutex_unlock(&reg_mu);
	snprintf(path, sizeof path, "%s/%s.json", dir, key);
	if (o == NULL && (o = read_meta(path)) == NULL) {
		derr_set(e, DERR_NOT_FOUND, "clip_id", "no clip with id '%.*s'",
		    utf8_prec(clip_id, 16), clip_id);
		return NULL;
	}
	json_object_object_add(o, "status", json_object_get(json_object_object_get(o, "state")));
	snprintf(path, sizeof path, "%s/%s.mp4", dir, key);
	snprintf(url, sizeof url, "/api/record/%s/clip.mp4", clip_id);
	add_url(o, path, url);
	json_object_object_add(o, "path", json_object_new_string(path));
	return o;
}

int
rec_clip_stop(const char *clip_id, json_object **out, struct derr *e)
{
	char key[KEY_MAX];
	bool was;

	snprintf(key, sizeof key, "clip-%s", clip_id);
	pthread_mutex_lock(&reg_mu);
	was = stop_wait(key, false);
	pthread_mutex_unlock(&reg_mu);
	if ((*out = rec_clip_status(clip_id, 0, e)) == NULL)
		return -1;
	json_object_object_add(*out, "stopped_early", json_object_new_boolean(was));
	return 0;
}

int
rec_clip_file(const char *clip_id, char *buf, size_t len)
{
	snprintf(buf, len, "%s/clip-%s.mp4", dir, clip_id);
	return file_size(buf) >= 0 ? 0 : -1;
}

/* ---- life ---- */

int
rec_init(struct app *a, struct derr *e)
{
	struct dirent *de;
	DIR *dh;

	app = a;
	dir = xasprintf("%s/recordings", a->cfg->data_dir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot create %s: %s", dir, strerror(errno));
	if ((dh = opendir(dir)) != NULL) {
		while ((de = readdir(dh)) != NULL) {
			size_t n = strlen(de->d_name);
			char path[PATH_MAX];
			int64_t sz;

			if (n < 5 || strcmp(de->d_name + n - 4, ".mp4") != 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
			if ((sz = file_size(path)) > 0)
				total_bytes += sz;
		}
		closedir(dh);
	}
	task_hook_add(on_task_change, NULL);
	return 0;
}

void
rec_shutdown(void)
{
	pthread_mutex_lock(&reg_mu);
	shutting_down = true;
	for (size_t i = 0; i < RECS_MAX; i++) {
		char key[KEY_MAX];

		if (recs[i] == NULL)
			continue;
		snprintf(key, sizeof key, "%s", recs[i]->key);
		stop_wait(key, false);
		i = (size_t)-1;         /* the table changed: start over */
	}
	pthread_mutex_unlock(&reg_mu);
	/* dir stays: requests still in flight until the HTTP server stops may
	 * ask for a status (it is reachable, so not a leak at exit). */
}
