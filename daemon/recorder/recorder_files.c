/*
 * recorder_files.c - the recorder's files (recorder_int.h): the paths of a
 * recording's video, index and status files, the status JSON and its
 * atomic status file, the directory's byte total, and a recording's index (rfile_index),
 * which reads an index file back against the task's actions.
 *
 * State: none of its own; rec_registry.total_bytes (under rec_registry.mu, kept >= 0) and
 * rec_registry.dir. Invariant: a status file is replaced by rename, never written in
 * place, so a reader sees the old or the new one whole.
 *
 * Does not: run recordings (recorder_run.c), keep the registry
 * (recorder.c), or know HTTP (api_rec.c).
 */
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
#include "core/util.h"
#include "recorder_int.h"
#include "task/events.h"
#include "task/task.h"

/* ---- files ---- */

void
rfile_paths(struct rec *r)
{
	const char *base = r->clip_id[0] ? r->key : r->task_id;

	snprintf(r->path, sizeof r->path, "%s/%s.mp4", rec_registry.dir, base);
	snprintf(r->idx, sizeof r->idx, "%s/%s.idx", rec_registry.dir, base);
	snprintf(r->meta, sizeof r->meta, "%s/%s.json", rec_registry.dir, base);
}

int64_t
rfile_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

void
rfile_add_total(int64_t delta)
{
	pthread_mutex_lock(&rec_registry.mu);
	rec_registry.total_bytes += delta;
	if (rec_registry.total_bytes < 0)
		rec_registry.total_bytes = 0;
	pthread_mutex_unlock(&rec_registry.mu);
}

/* Removes a file and takes its size off the total. */
void
rfile_remove(const char *path)
{
	int64_t n = rfile_size(path);

	if (unlink(path) == 0 && n > 0)
		rfile_add_total(-n);
}

/* The inner {code, message, field} of the one error shape (derr.h). */
json_object *
rfile_error_json(const struct derr *e)
{
	json_object *outer = derr_to_json(e);
	json_object *inner = json_object_get(json_object_object_get(outer, "error"));

	json_object_put(outer);
	return inner;
}

/* Records why r failed (under its mu): e's code and field, prefix + its
 * message. */
void
rec_fail_set(struct rec *r, const struct derr *e, const char *prefix)
{
	pthread_mutex_lock(&r->mu);
	derr_set(&r->err, e->code != DERR_OK ? e->code : DERR_INTERNAL, e->field, "%s%s", prefix,
	    e->message);
	pthread_mutex_unlock(&r->mu);
}

json_object *
rfile_status_json(const struct rec *r)
{
	json_object *o = json_object_new_object();
	char when[ISO_TIME_LEN];

	json_object_object_add(o, "state", json_object_new_string(rec_state_names[r->state]));
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
		json_object_object_add(o, "error", rfile_error_json(&r->err));
	return o;
}

/* Keeps the status, then writes the status file atomically (rename over). */
int
rfile_write_meta(struct rec *r)
{
	char tmp[PATH_MAX + 8];
	const char *text;
	json_object *o;
	int rc = -1, err = 0;
	FILE *f;

	pthread_mutex_lock(&r->mu);
	o = rfile_status_json(r);
	pthread_mutex_unlock(&r->mu);
	rfinal_keep(r, o);
	text = jx_string(o, NULL);
	snprintf(tmp, sizeof tmp, "%s.tmp", r->meta);
	f = fopen(tmp, "we");
	if (f == NULL) {
		err = errno;
	} else {
		if (fputs(text, f) == EOF || fflush(f) != 0)
			err = errno;
		if (fclose(f) != 0 && err == 0)
			err = errno;
		if (err == 0 && rename(tmp, r->meta) != 0)
			err = errno;
		if (err != 0)
			unlink(tmp);
	}
	if (err == 0)
		rc = 0;
	else
		log_warn("recording %s: cannot write its status file %s: %s (the status is kept in "
		    "memory and the database)", r->key, r->meta, strerror(err));
	json_object_put(o);
	events_publish("recording", "updated", r->task_id[0] ? r->task_id : NULL,
	    r->clip_id[0] ? r->clip_id : NULL);
	return rc;
}

/* A status file; one written before errors had their JSON shape keeps
 * "error" as a bare string, which is read as an internal error. */
json_object *
rfile_read_meta(const char *path)
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
		json_object_object_add(o, "error", rfile_error_json(&e));
	}
	return o;
}


/* ---- the index ---- */

#define INDEX_ACTIONS 5000      /* the latest actions an index lists */

/* The video time (ms) of wall time `at`: the last frame shown at that
 * moment plus the time since, up to the next frame (pauses are not in the
 * video); -1 before the first frame. */
static int64_t
video_ms(const int64_t *pts, const int64_t *wall, size_t n, int64_t at)
{
	size_t j;
	int64_t p;

	if (n == 0 || at < wall[0])
		return -1;
	for (j = 0; j + 1 < n && wall[j + 1] <= at; j++)
		;
	p = pts[j] + (at - wall[j]);
	if (j + 1 < n && p > pts[j + 1])
		p = pts[j + 1];
	return p;
}

static json_object *
secs_or_null(int64_t ms)
{
	return ms < 0 ? NULL : json_object_new_double((double)ms / 1000.0);
}

/* Adds t_s to each action and pairs the human takeover/release actions into
 * takeovers: [{start_s, end_s, started_at, ended_at, action_id,
 * end_action_id}] (end null while a human still drives). */
static json_object *
index_moments(json_object *acts, const int64_t *pts, const int64_t *wall, size_t n)
{
	json_object *spans = json_object_new_array(), *open = NULL;

	for (size_t i = 0; i < json_object_array_length(acts); i++) {
		json_object *a = json_object_array_get_idx(acts, i);
		const char *created = json_object_get_string(json_object_object_get(a, "created_at"));
		const char *ev = json_object_get_string(json_object_object_get(a, "event"));
		int64_t at = 0, ms = -1;

		if (created != NULL && time_parse(created, &at) == 0)
			ms = video_ms(pts, wall, n, at);
		json_object_object_add(a, "t_s", secs_or_null(ms));
		if (ev != NULL && strcmp(ev, "takeover") == 0) {
			open = json_object_new_object();
			json_object_object_add(open, "start_s", secs_or_null(ms));
			json_object_object_add(open, "end_s", NULL);
			jx_add_str(open, "started_at", created);
			json_object_object_add(open, "ended_at", NULL);
			json_object_object_add(open, "action_id", json_object_get(json_object_object_get(a, "action_id")));
			json_object_object_add(open, "end_action_id", NULL);
			json_object_array_add(spans, open);
		} else if (ev != NULL && strcmp(ev, "release") == 0 && open != NULL) {
			json_object_object_add(open, "end_s", secs_or_null(ms));
			jx_add_str(open, "ended_at", created);
			json_object_object_add(open, "end_action_id",
			    json_object_get(json_object_object_get(a, "action_id")));
			open = NULL;
		}
	}
	return spans;
}

json_object *
rfile_index(struct app *a, const char *task_id, json_object *status, struct derr *e)
{
	json_object *o, *frames, *acts;
	int64_t *pts = NULL, *wall = NULL, p, w;
	size_t n = 0, cap = 0;
	char path[PATH_MAX];
	FILE *f;

	if ((acts = task_timeline(a->store, task_id, INDEX_ACTIONS, e)) == NULL) {
		json_object_put(status);
		return NULL;
	}
	snprintf(path, sizeof path, "%s/%s.idx", rec_registry.dir, task_id);
	f = fopen(path, "re");
	if (f == NULL) {
		json_object_put(acts);
		json_object_put(status);
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
	json_object_object_add(o, "recording", status);
	json_object_object_add(o, "takeovers", index_moments(acts, pts, wall, n));
	json_object_object_add(o, "actions", acts);
	free(pts);
	free(wall);
	return o;
}
