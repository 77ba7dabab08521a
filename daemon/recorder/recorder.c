/*
 * recorder.c - task recordings and clips (recorder.h): the API, the task
 * hook and start-up/shutdown. The registry and the state checks are
 * recorder_reg.c; a recording's thread is recorder_run.c; its files are
 * recorder_files.c; what they share is recorder_int.h.
 *
 * Every live recording (task or clip) is a struct rec in the registry,
 * owned by its own detached thread: the thread removes it from the registry
 * and frees it when it ends, after writing the status file. Whoever wants a
 * recording to end (the task hook, an operator, shutdown) sets its stop
 * request under its mutex and waits on rec_registry.cv until its generation has left
 * the registry. Lock order: rec_registry.mu, then a rec's mu. The recording thread
 * never takes rec_registry.mu while holding its own mu.
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
 * Only the recording thread (recorder_run.c) leaves recording/paused
 * (run_finish); the final state is written to the status file before the
 * thread takes the rec out of the registry and frees it. Invariants,
 * asserted after every transition by rec_check_locked (a rec) and
 * rec_reg_check_locked (the registry) in debug and ASan builds (not under NDEBUG):
 *   - a task recording's key is its task id (8 hex, no window); a clip's
 *     key is "clip-<clip id>";
 *   - failed has err set, capped a reason, discarded the discard request,
 *     and discard is only ever asked with stop;
 *   - counts (frames, bytes, video ms) and the directory total are >= 0;
 *   - registered recordings have distinct keys and generations, each
 *     below rec_registry.next_gen.
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

#include "core/jx.h"
#include "core/log.h"
#include "recorder_int.h"
#include "task/events.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "x11/display.h"
#include "x11/xwin.h"

#define SHUTDOWN_WAIT_S 4       /* how long a daemon stop waits for recordings */
#define STOP_WAIT_S     10      /* how long other stops wait for one */

/* ---- registry (rec_registry.mu held) ---- */

static struct rec *
find(const char *key)
{
	for (size_t i = 0; i < RECS_MAX; i++)
		if (rec_registry.recs[i] != NULL && strcmp(rec_registry.recs[i]->key, key) == 0)
			return rec_registry.recs[i];
	return NULL;
}

static bool
gen_live(uint64_t gen)
{
	for (size_t i = 0; i < RECS_MAX; i++)
		if (rec_registry.recs[i] != NULL && rec_registry.recs[i]->gen == gen)
			return true;
	return false;
}

/* Asks the recording under key to end and waits until it has, or
 * STOP_WAIT_S passed (a thread wedged in a write to a stalled disk; it
 * ends when the write returns) (rec_registry.mu held; released while waiting).
 * Returns false if none was running. */
static bool
stop_wait(const char *key, bool discard)
{
	struct rec *r = find(key);
	struct timespec ts;
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
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += STOP_WAIT_S;
	while (gen_live(gen))
		if (pthread_cond_timedwait(&rec_registry.cv, &rec_registry.mu, &ts) == ETIMEDOUT) {
			log_warn("recording %s did not finish within %d s of its stop", key, STOP_WAIT_S);
			break;
		}
	rec_reg_check_locked();
	return true;
}


/* ---- task recordings ---- */

static int
task_start(const char *task_id, struct derr *e)
{
	struct rec *r;
	int rc;

	pthread_mutex_lock(&rec_registry.mu);
	if (find(task_id) != NULL) {
		pthread_mutex_unlock(&rec_registry.mu);
		return derr_set(e, DERR_CONFLICT, NULL, "task %s is being recorded already", task_id);
	}
	r = rrun_new(task_id, (int)rec_registry.app->cfg->record_fps);
	snprintf(r->key, sizeof r->key, "%s", task_id);
	rc = rrun_launch(r, e);
	pthread_mutex_unlock(&rec_registry.mu);
	if (rc != 0)
		free(r);
	return rc;
}

void
rec_display_started(const char *task_id)
{
	struct derr e;

	if (!rec_registry.app->cfg->record)
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

	if (task_meta(rec_registry.app->store, task_id, &st, &meta, e) != 0)
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

	pthread_mutex_lock(&rec_registry.mu);
	was = stop_wait(task_id, false);
	pthread_mutex_unlock(&rec_registry.mu);
	if (!was)
		return derr_set(e, DERR_CONFLICT, NULL, "task %s is not being recorded", task_id);
	*out = rec_task_status(task_id);
	return 0;
}

static void
add_url(json_object *o, const char *path, const char *url)
{
	if (rfile_size(path) >= 0)
		json_object_object_add(o, "url", json_object_new_string(url));
	else
		json_object_object_add(o, "url", NULL);
}

/* A status kept while it ran, of a recording no longer running (detmd
 * stopped or crashed under it): "interrupted", not still recording. */
static void
not_running(json_object *o)
{
	const char *s = json_object_get_string(json_object_object_get(o, "state"));

	if (s != NULL && (strcmp(s, "recording") == 0 || strcmp(s, "paused") == 0))
		json_object_object_add(o, "state", json_object_new_string("interrupted"));
}

json_object *
rec_task_status(const char *task_id)
{
	struct rec *r;
	json_object *o = NULL;
	char path[PATH_MAX], url[128];

	pthread_mutex_lock(&rec_registry.mu);
	r = find(task_id);
	if (r != NULL) {
		pthread_mutex_lock(&r->mu);
		o = rfile_status_json(r);
		pthread_mutex_unlock(&r->mu);
	}
	pthread_mutex_unlock(&rec_registry.mu);
	if (o == NULL && (o = rfinal_get(task_id)) == NULL) {
		snprintf(path, sizeof path, "%s/%s.json", rec_registry.dir, task_id);
		o = rfile_read_meta(path);
	}
	if (r == NULL && o != NULL)
		not_running(o);
	if (o == NULL) {
		o = json_object_new_object();
		json_object_object_add(o, "state", json_object_new_string("none"));
	}
	snprintf(path, sizeof path, "%s/%s.mp4", rec_registry.dir, task_id);
	snprintf(url, sizeof url, "/api/tasks/%s/recording.mp4", task_id);
	add_url(o, path, url);
	return o;
}

int
rec_task_file(const char *task_id, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.mp4", rec_registry.dir, task_id);
	return rfile_size(buf) >= 0 ? 0 : -1;
}

/* Deletes a task's files and its clips' files. */
static void
delete_files(const char *task_id)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dh;

	snprintf(path, sizeof path, "%s/%s.mp4", rec_registry.dir, task_id);
	rfile_remove(path);
	snprintf(path, sizeof path, "%s/%s.idx", rec_registry.dir, task_id);
	unlink(path);
	snprintf(path, sizeof path, "%s/%s.json", rec_registry.dir, task_id);
	unlink(path);
	rfinal_forget_task(task_id);
	if ((dh = opendir(rec_registry.dir)) == NULL)
		return;
	while ((de = readdir(dh)) != NULL) {
		size_t n = strlen(de->d_name);
		json_object *m;
		const char *t;

		if (strncmp(de->d_name, "clip-", 5) != 0 || n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", rec_registry.dir, de->d_name);
		m = rfile_read_meta(path);
		t = m ? json_object_get_string(json_object_object_get(m, "task_id")) : NULL;
		if (t != NULL && strcmp(t, task_id) == 0) {
			unlink(path);
			snprintf(path, sizeof path, "%s/%.*s.mp4", rec_registry.dir, (int)(n - 5), de->d_name);
			rfile_remove(path);
			snprintf(path, sizeof path, "%s/%.*s.idx", rec_registry.dir, (int)(n - 5), de->d_name);
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

	pthread_mutex_lock(&rec_registry.mu);
	r = find(task_id);
	if (r != NULL) {
		pthread_mutex_lock(&r->mu);
		if (r->state == R_RECORDING || r->state == R_PAUSED)
			r->state = to;
		rec_check_locked(r);
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	pthread_mutex_unlock(&rec_registry.mu);
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
		pthread_mutex_lock(&rec_registry.mu);
		stop_wait(task_id, true);
		pthread_mutex_unlock(&rec_registry.mu);
		delete_files(task_id);
		return;
	}
	if (to == TASK_PAUSED) {
		set_state(task_id, R_PAUSED);
	} else if (to == TASK_ACTIVE && from == TASK_PAUSED) {
		set_state(task_id, R_RECORDING);
	} else if (task_status_final(to)) {
		discard = to == TASK_FAILED && !rec_registry.app->cfg->record_keep_failed;
		pthread_mutex_lock(&rec_registry.mu);
		stop_wait(task_id, discard);
		pthread_mutex_unlock(&rec_registry.mu);
	}
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
	r = rrun_new(task_id, fps);
	r->window = w.id;
	id_new(id);
	snprintf(r->clip_id, sizeof r->clip_id, "%s", id);
	snprintf(r->key, sizeof r->key, "clip-%s", id);
	snprintf(key, sizeof key, "%s", r->key);
	r->max_ms = (int64_t)duration_s * 1000;
	pthread_mutex_lock(&rec_registry.mu);
	if (rrun_launch(r, e) != 0) {
		pthread_mutex_unlock(&rec_registry.mu);
		free(r);
		return -1;
	}
	pthread_mutex_unlock(&rec_registry.mu);
	o = rec_clip_status(id, wait ? duration_s + CLIP_MARGIN_S : 0, e);
	if (o == NULL)
		return -1;
	state = json_object_get_string(json_object_object_get(o, "state"));
	if (wait && state != NULL && strcmp(state, "recording") == 0) {
		json_object_put(o);
		return derr_set(e, DERR_UNAVAILABLE, NULL, "the clip %s did not finish within its %d s "
		    "and %d s more (detmd may be stopping, or its recording is stuck writing)", id,
		    duration_s, CLIP_MARGIN_S);
	}
	if (w.id != 0) {
		json_object *wo = json_object_new_object();

		json_object_object_add(wo, "id", json_object_new_int64((int64_t)w.id));
		jx_add_str(wo, "title", w.title);
		json_object_object_add(o, "window", wo);
	}
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
	pthread_mutex_lock(&rec_registry.mu);
	while (block_s > 0 && !rec_registry.shutting_down && (r = find(key)) != NULL)
		if (pthread_cond_timedwait(&rec_registry.cv, &rec_registry.mu, &ts) == ETIMEDOUT)
			break;
	if ((r = find(key)) != NULL) {
		pthread_mutex_lock(&r->mu);
		o = rfile_status_json(r);
		pthread_mutex_unlock(&r->mu);
	}
	pthread_mutex_unlock(&rec_registry.mu);
	snprintf(path, sizeof path, "%s/%s.json", rec_registry.dir, key);
	if (o == NULL && (o = rfinal_get(key)) == NULL && (o = rfile_read_meta(path)) == NULL) {
		derr_set(e, DERR_NOT_FOUND, "clip_id", "no clip with id '%.*s'",
		    utf8_prec(clip_id, 16), clip_id);
		return NULL;
	}
	if (r == NULL)
		not_running(o);
	json_object_object_add(o, "status", json_object_get(json_object_object_get(o, "state")));
	snprintf(path, sizeof path, "%s/%s.mp4", rec_registry.dir, key);
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
	pthread_mutex_lock(&rec_registry.mu);
	was = stop_wait(key, false);
	pthread_mutex_unlock(&rec_registry.mu);
	if ((*out = rec_clip_status(clip_id, 0, e)) == NULL)
		return -1;
	json_object_object_add(*out, "stopped_early", json_object_new_boolean(was));
	return 0;
}

int
rec_clip_file(const char *clip_id, char *buf, size_t len)
{
	snprintf(buf, len, "%s/clip-%s.mp4", rec_registry.dir, clip_id);
	return rfile_size(buf) >= 0 ? 0 : -1;
}

/* ---- life ---- */

int
rec_init(struct app *a, struct derr *e)
{
	struct dirent *de;
	DIR *dh;

	rec_registry.app = a;
	rec_registry.dir = xasprintf("%s/recordings", a->cfg->data_dir);
	if (mkdir(rec_registry.dir, 0700) != 0 && errno != EEXIST)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot create %s: %s", rec_registry.dir, strerror(errno));
	if ((dh = opendir(rec_registry.dir)) != NULL) {
		while ((de = readdir(dh)) != NULL) {
			size_t n = strlen(de->d_name);
			char path[PATH_MAX];
			int64_t sz;

			if (n < 5 || strcmp(de->d_name + n - 4, ".mp4") != 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", rec_registry.dir, de->d_name);
			if ((sz = rfile_size(path)) > 0)
				rec_registry.total_bytes += sz;
		}
		closedir(dh);
	}
	task_hook_add(on_task_change, NULL);
	return 0;
}

/* Whether any recording is registered (rec_registry.mu held). */
static bool
reg_any(void)
{
	for (size_t i = 0; i < RECS_MAX; i++)
		if (rec_registry.recs[i] != NULL)
			return true;
	return false;
}

bool
rec_stopping(void)
{
	bool s;

	pthread_mutex_lock(&rec_registry.mu);
	s = rec_registry.shutting_down;
	pthread_mutex_unlock(&rec_registry.mu);
	return s;
}

void
rec_shutdown(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += SHUTDOWN_WAIT_S;
	pthread_mutex_lock(&rec_registry.mu);
	rec_registry.shutting_down = true;
	pthread_cond_broadcast(&rec_registry.cv);         /* status long polls return now */
	for (size_t i = 0; i < RECS_MAX; i++) {         /* all at once: they finish in parallel */
		struct rec *r = rec_registry.recs[i];

		if (r == NULL)
			continue;
		pthread_mutex_lock(&r->mu);
		r->stop = true;
		rec_check_locked(r);
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	while (reg_any())
		if (pthread_cond_timedwait(&rec_registry.cv, &rec_registry.mu, &ts) == ETIMEDOUT)
			break;
	if (reg_any()) {
		/* A thread wedged in a write (a stalled disk) must not hold the
		 * daemon's stop: it is left behind, and kept off the store. */
		rec_registry.abandoned = true;
		for (size_t i = 0; i < RECS_MAX; i++)
			if (rec_registry.recs[i] != NULL)
				log_warn("recording %s did not finish within %d s of the stop; going on "
				    "without it (its file plays up to its last fragment)", rec_registry.recs[i]->key,
				    SHUTDOWN_WAIT_S);
	}
	pthread_mutex_unlock(&rec_registry.mu);
	/* rec_registry.dir stays: requests still in flight until the HTTP server stops may
	 * ask for a status (it is reachable, so not a leak at exit). */
}

json_object *
rec_task_index(struct app *a, const char *task_id, struct derr *e)
{
	return rfile_index(a, task_id, rec_task_status(task_id), e);
}
