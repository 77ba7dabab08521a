/*
 * api_rec.c - recording and clip routes (the live view: api_live.c):
 *
 *   GET  /api/tasks/{id}/recording            status
 *   GET  /api/tasks/{id}/recording.mp4        the video (Range: bytes=...)
 *   GET  /api/tasks/{id}/recording/index      frame times and action moments
 *   POST /api/tasks/{id}/recording/start|stop operators
 *   POST /api/record                          video_record: a clip (screen or window)
 *   GET  /api/record/{id}                     a clip's status (?block_s)
 *   POST /api/record/{id}/stop                end a clip early (MCP cancellation)
 *   GET  /api/record/{id}/clip.mp4            a clip's video (Range)
 *
 * Handlers check the request and hand the work to recorder.c;
 * files are served by serve_file (byte ranges, 206/416).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "core/jx.h"
#include "desktop/takeover.h"
#include "recorder/recorder.h"
#include "task/task.h"

#define CLIP_MAX_S      120
#define CLIP_FPS_MAX    30
#define BLOCK_MAX_S     150

/* "bytes=a-b" | "bytes=a-" | "bytes=-n" against size. 0 ok (*from, *len
 * set), 1 no Range header, -1 unsatisfiable or malformed. Only one range. */
static int
parse_range(const char *h, uint64_t size, uint64_t *from, uint64_t *len)
{
	unsigned long long a, b;
	char *end;

	if (h == NULL)
		return 1;
	if (strncmp(h, "bytes=", 6) != 0 || strchr(h, ',') != NULL)
		return -1;
	h += 6;
	if (*h == '-') {
		b = strtoull(h + 1, &end, 10);
		if (end == h + 1 || *end != '\0' || b == 0 || size == 0)
			return -1;
		*len = b < size ? b : size;
		*from = size - *len;
		return 0;
	}
	a = strtoull(h, &end, 10);
	if (end == h || *end != '-' || a >= size)
		return -1;
	h = end + 1;
	if (*h == '\0') {
		b = size - 1;
	} else {
		b = strtoull(h, &end, 10);
		if (*end != '\0' || b < a)
			return -1;
		if (b >= size)
			b = size - 1;
	}
	*from = a;
	*len = b - a + 1;
	return 0;
}

/* Serves a video file, whole or the requested byte range. */
static int
serve_file(struct req *r, const char *path, const char *what, struct derr *e)
{
	uint64_t from = 0, len;
	struct stat sb;
	int fd, pr;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) != 0) {
		if (fd >= 0)
			close(fd);
		return derr_set(e, DERR_NOT_FOUND, NULL, "%s has no video file", what);
	}
	len = (uint64_t)sb.st_size;
	pr = parse_range(req_in_header(r, "Range"), (uint64_t)sb.st_size, &from, &len);
	if (pr < 0) {
		close(fd);
		req_header(r, "Content-Range", "bytes */%" PRIu64, (uint64_t)sb.st_size);
		return derr_set(e, DERR_RANGE, "Range", "the range '%.*s' is not within the %" PRIu64
		    " bytes of the file", utf8_prec(req_in_header(r, "Range"), 40),
		    req_in_header(r, "Range"), (uint64_t)sb.st_size);
	}
	req_header(r, "Accept-Ranges", "bytes");
	if (pr == 0)
		req_header(r, "Content-Range", "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, from,
		    from + len - 1, (uint64_t)sb.st_size);
	return req_reply_fd(r, pr == 0 ? 206 : 200, "video/mp4", fd, from, len);
}

int
api_rec_status(struct req *r, struct derr *e)
{
	const char *id;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	return req_reply(r, 200, rec_task_status(id));
}

int
api_rec_video(struct req *r, struct derr *e)
{
	char path[4096], what[64];
	const char *id;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	snprintf(what, sizeof what, "task %s", id);
	if (rec_task_file(id, path, sizeof path) != 0)
		return derr_set(e, DERR_NOT_FOUND, NULL, "task %s has no recording", id);
	return serve_file(r, path, what, e);
}

int
api_rec_index(struct req *r, struct derr *e)
{
	json_object *o;
	const char *id;

	if (req_task_id(r, 0, &id, e) != 0 || (o = rec_task_index(r->app, id, e)) == NULL)
		return -1;
	return req_reply(r, 200, o);
}

int
api_rec_start(struct req *r, struct derr *e)
{
	json_object *o;
	const char *id;

	if (api_body_check(r, api_rec_start, e) != 0 ||
	    api_known_task(r, &id, e) != 0 || rec_task_start(id, &o, e) != 0)
		return -1;
	return req_reply(r, 201, o);
}

int
api_rec_stop(struct req *r, struct derr *e)
{
	json_object *o;
	const char *id;

	if (api_body_check(r, api_rec_stop, e) != 0 ||
	    api_known_task(r, &id, e) != 0 || rec_task_stop(id, &o, e) != 0)
		return -1;
	return req_reply(r, 200, o);
}

/* POST /api/record {task_id?, duration (or duration_s) 1-120, fps 1-30,
 * target "screen", wait (default true)}. */
int
api_record(struct req *r, struct derr *e)
{
	const char *task_id, *target = NULL;
	int64_t dur = 10, fps = 5;
	bool wait = true, present = false;
	json_object *o, *meta = NULL;
	int st;

	if (api_body_check(r, api_record, e) != 0 ||
	    api_opt_task_id(r, false, &task_id, e) != 0 ||
	    jx_int(r->body, "duration", false, 1, CLIP_MAX_S, &dur, NULL, e) != 0 ||
	    jx_int(r->body, "duration_s", false, 1, CLIP_MAX_S, &dur, NULL, e) != 0 ||
	    jx_int(r->body, "fps", false, 1, CLIP_FPS_MAX, &fps, NULL, e) != 0 ||
	    jx_str(r->body, "target", false, 1, 200, &target, e) != 0 ||
	    jx_bool(r->body, "wait", &wait, &present, e) != 0)
		return -1;
	if (!present)
		wait = true;
	if (target != NULL && strcmp(target, "screen") != 0 &&
	    (strncmp(target, "window:", 7) != 0 || target[7] == '\0'))
		return derr_set(e, DERR_INVALID, "target", "target must be \"screen\" or "
		    "\"window:<title>\" (got '%.*s')", utf8_prec(target, 100), target);
	if (task_id != NULL) {
		if (task_meta(r->app->store, task_id, &st, &meta, e) != 0)
			return -1;
		json_object_put(meta);
	}
	if (takeover_gate_look(task_id, e) != 0)        /* a clip is a screenshot for the agent */
		return -1;
	if (rec_clip(task_id, (int)dur, (int)fps, target != NULL && target[0] == 'w' ? target + 7 : NULL,
	    wait, &o, e) != 0)
		return -1;
	return req_reply(r, wait ? 200 : 202, o);
}

static int
clip_id(struct req *r, const char **id, struct derr *e)
{
	*id = r->nparams > 0 ? r->params[0] : "";
	if (!id_valid(*id))
		return derr_set(e, DERR_NOT_FOUND, "clip_id", "no clip with id '%.*s'",
		    utf8_prec(*id, 16), *id);
	return 0;
}

/* POST /api/record/{id}/stop: the clip ends now; 200 with its status. */
int
api_record_stop(struct req *r, struct derr *e)
{
	json_object *o;
	const char *id;

	if (api_body_check(r, api_record_stop, e) != 0 ||
	    clip_id(r, &id, e) != 0 || rec_clip_stop(id, &o, e) != 0)
		return -1;
	return req_reply(r, 200, o);
}

int
api_record_get(struct req *r, struct derr *e)
{
	int64_t block = 0;
	json_object *o;
	const char *id;

	if (clip_id(r, &id, e) != 0 ||
	    req_query_int(r, "block_s", 0, BLOCK_MAX_S, 0, &block, e) != 0 ||
	    (o = rec_clip_status(id, (int)block, e)) == NULL)
		return -1;
	return req_reply(r, 200, o);
}

int
api_record_video(struct req *r, struct derr *e)
{
	char path[4096], what[64];
	const char *id;

	if (clip_id(r, &id, e) != 0)
		return -1;
	snprintf(what, sizeof what, "clip %s", id);
	if (rec_clip_file(id, path, sizeof path) != 0)
		return derr_set(e, DERR_NOT_FOUND, "clip_id", "clip %s has no video (yet)", id);
	return serve_file(r, path, what, e);
}
