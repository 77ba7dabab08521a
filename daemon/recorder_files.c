/*
 * recorder_files.c - the recorder's files (recorder_int.h): the paths of a
 * recording's video, index and status files, the status JSON and its
 * atomic status file, the directory's byte total, and rec_task_index,
 * which reads an index file back against the task's actions.
 *
 * State: none of its own; RR.total_bytes (under RR.mu, kept >= 0) and
 * RR.dir. Invariant: a status file is replaced by rename, never written in
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

#include "events.h"
#include "jx.h"
#include "log.h"
#include "recorder_int.h"
#include "task.h"
#include "util.h"

/* ---- files ---- */

void
rfile_paths(struct rec *r)
{
	const char *base = r->clip_id[0] ? r->key : r->task_id;

	snprintf(r->path, sizeof r->path, "%s/%s.mp4", RR.dir, base);
	snprintf(r->idx, sizeof r->idx, "%s/%s.idx", RR.dir, base);
	snprintf(r->meta, sizeof r->meta, "%s/%s.json", RR.dir, base);
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
	pthread_mutex_lock(&RR.mu);
	RR.total_bytes += delta;
	if (RR.total_bytes < 0)
		RR.total_bytes = 0;
	pthread_mutex_unlock(&RR.mu);
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

/* Writes the status file atomically (rename over). */
void
rfile_write_meta(struct rec *r)
{
	char tmp[PATH_MAX + 8];
	json_object *o;
	FILE *f;

	pthread_mutex_lock(&r->mu);
	o = rfile_status_json(r);
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
	snprintf(path, sizeof path, "%s/%s.idx", RR.dir, task_id);
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

