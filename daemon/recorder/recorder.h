/*
 * recorder.h - screen recordings of tasks and short clips (video_record).
 *
 * A recording is one thread that, about `fps` times a second, leases the
 * display, grabs the screen only if XDamage says something was drawn since
 * the last grab, and hands changed frames to the encoder (enc.h): a still
 * screen costs no grab and no encoding, and the video shows the previous
 * frame until the next change (variable frame rate; a repeat every 10 s
 * keeps keyframes and fragments coming). Every encoded frame is a line
 * "pts_ms wall_ms" in the recording's index file, which maps the task's
 * actions to moments of the video.
 *
 * Files, in DATA_DIR/recordings: <task>.mp4, <task>.idx, <task>.json (the
 * last known status, so a restart still reports it), clip-<id>.mp4 and
 * clip-<id>.json.
 *
 * Task recordings (states): recording <-> paused (the task paused) ->
 * done (completed, cancelled, operator stop, daemon stop) | capped (a
 * length or disk limit stopped it; the task thread says so) | discarded
 * (the task failed; file removed unless ACU_RECORD_KEEP_FAILED) | failed
 * (the encoder or display failed; error kept). After a crash a file whose
 * status still says recording is reported as "interrupted": it plays up to
 * its last fragment.
 *
 * A task with its own display is recorded from the moment the display
 * starts when ACU_RECORD is on; operators can start/stop any task's
 * recording (its display, or the shared one). Deleting a task deletes its
 * files. Limits: ACU_RECORD_TASK_MAX_MB per recording, ACU_RECORD_MAX_MB
 * for the directory, ACU_RECORD_MAX_MIN per recording.
 *
 * Thread-safe. Does not: serve HTTP (api_rec.c), stream live views (live.c).
 */
#ifndef DETM_RECORDER_H
#define DETM_RECORDER_H

#include <stdbool.h>

#include <json-c/json.h>

#include "core/app.h"
#include "core/util.h"
#include "derr.h"

/* Scans the directory for the bytes in use and registers the task hook
 * (call before other hooks that stop displays). 0 or -1. */
int rec_init(struct app *app, struct derr *e) DETM_NODISCARD;
/* Finishes every running recording and clip (daemon stop), waiting a few
 * seconds at most: a recording wedged in a write is left behind. */
void rec_shutdown(void);
/* rec_shutdown has begun: callers that follow a clip stop waiting. */
bool rec_stopping(void);

/* A task's display just started: record it if ACU_RECORD is on. */
void rec_display_started(const char *task_id);
/* Operator start: DERR_CONFLICT if one runs, DERR_UNAVAILABLE without a
 * display or encoder. *out (caller owns) is the status. */
int rec_task_start(const char *task_id, json_object **out, struct derr *e) DETM_NODISCARD;
/* Operator stop: finishes the file. DERR_CONFLICT if none runs. */
int rec_task_stop(const char *task_id, json_object **out, struct derr *e) DETM_NODISCARD;
/* {state, frames, bytes, duration_s, fps, url, started_at, reason?, error?}
 * (error: {code, message, field} as derr.h);
 * state "none" when the task was never recorded. Caller owns. */
json_object *rec_task_status(const char *task_id);
/* The task's file (for downloads): path into buf; 0, or -1 if none. */
int rec_task_file(const char *task_id, char *buf, size_t len);
/* The index: {task_id, recording, frames:[pts_s...], actions:[{action_id,
 * ordinal (null: task-level), action_type, summary, created_at, t_s,
 * event?}] (the task's latest 5000 actions, oldest first), takeovers:
 * [{start_s, end_s, started_at, ended_at, action_id, end_action_id}] (a
 * human's turns at the desktop; ends null while one drives)}. t_s and
 * start_s/end_s are null before the first frame. Caller owns. */
json_object *rec_task_index(struct app *app, const char *task_id, struct derr *e);

/* How long past its duration a clip may take to finish before a caller
 * that waits for it (rec_clip's wait, the MCP tools) gives up on it. */
#define CLIP_MARGIN_S 30

/* video_record: starts a clip of duration_s at fps of the task's display
 * (or the shared one); window_name NULL records the screen, else the first
 * visible window whose title or class contains it (DERR_NOT_FOUND field
 * "target" if none; the clip fails if the window closes or changes size).
 * With wait, returns when it is finished (DERR_UNAVAILABLE if it is not
 * within duration_s + CLIP_MARGIN_S, or if it failed). *out is its status {clip_id,
 * status, url, path, bytes, frames, duration_s, fps, window?}. */
int rec_clip(const char *task_id, int duration_s, int fps, const char *window_name, bool wait,
    json_object **out, struct derr *e) DETM_NODISCARD;
/* A clip's status (NOT_FOUND if unknown). block_s > 0 waits that long
 * for it to finish. */
json_object *rec_clip_status(const char *clip_id, int block_s, struct derr *e);
/* Ends a running clip now (its file keeps what was recorded) and waits
 * until it is finished; *out is its status plus stopped_early (false when
 * it had already ended). NOT_FOUND if unknown. */
int rec_clip_stop(const char *clip_id, json_object **out, struct derr *e) DETM_NODISCARD;
/* A clip's file: 0, or -1 if none. */
int rec_clip_file(const char *clip_id, char *buf, size_t len);

#endif
