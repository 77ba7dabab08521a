/*
 * replay.h - record once, replay without the model (issue 38 item 3): a
 * finished task's input actions redone in order on another task's display
 * (a new task linked to its source by metadata.replay_of, made by the
 * HTTP layer with its own display and recording).
 *
 * Steps: the source's actions, oldest first, that are input: desktop
 * actions click, double/right/middle click, drag, scroll, mouse_move,
 * type, press_key (completed ones), and desktop_launch (`cli` rows with a
 * command or open). Everything else (screenshots, window listings, waits,
 * gui_do/gui_find rows, notes) is skipped and not counted. from_step
 * indexes this list (0-based).
 *
 * Each pointer step is re-grounded by what was recorded about its target
 * (desktop/target.h), never by its raw coordinates: first the window with
 * the recorded title is waited for (timeout_ms); then, in order,
 *   1. accessibility: the element with the recorded role and name in that
 *      window (a11y_norm equality; among several, the recorded index);
 *   2. ocr: the recorded text around the point found again in that window
 *      (strips, then columns, ocr_match), offset as recorded;
 *   3. window: the recorded position relative to the window, only when the
 *      window has the recorded size;
 *   4. model: with a grounding model configured (ground_has_model) and
 *      ask_model, one gui_find for that step alone (counted in
 *      model_calls and asked, whether or not its answer is usable).
 * A step none of these grounds ends the replay with status "needs_agent"
 * naming the step and what was looked for; the agent does that step on
 * the replay task's display and calls replay again with from_step (the
 * next step) and replay_task_id (the same replay task).
 * Keys and text wait until the window that got them at record time
 * (focus_window) has the keyboard focus (focused by title when it does
 * not come); a launch starts the same program and arguments.
 * After each input: its effect verdict; for a window the original input
 * opened (evidence "appeared"), a wait for a window of that title.
 *
 * params: a type step's text is replaced by params[N] when the step was
 * recorded with "param": N, else by params[T] when T is exactly the text
 * typed at record time.
 *
 * Progress and result: the replay task's tasks.replay (replay_rows.h):
 * {status: running|done|needs_agent|failed|interrupted, source, from_step,
 *  steps_total, replayed, regrounded, asked, failed, model_calls,
 *  steps: [{step, action, source_action_id, grounded_by, point?, effect?,
 *  ok, why?}], needs?: {step, action, looked_for, why},
 *  interrupted?: {step, why}, unverified?: [{step, effect, contradicted?}],
 *  completion? (done: evidenced | unchecked | contradicted), started_at,
 *  ended_at?}. A step without a "confirmed" effect (a launch: its window
 * came) has proof false and is in unverified: done is then "unchecked"
 * (or "contradicted": suspected_noop where the recorded one was
 * confirmed), never silently proven. A click on an element found by the
 * tree waits (up to timeout_ms / 2) until it takes input (states
 * sensitive or enabled), then is clicked all the same ("precondition").
 * The task ends
 * completed (done), failed (failed), cancelled (interrupted: detmd stopped
 * or ended under the replay), or stays active (needs_agent). A progress
 * read back with status "running" and no run of it in this detmd reads
 * "interrupted" (replay_init also rewrites it at start-up).
 */
#ifndef DETM_REPLAY_H
#define DETM_REPLAY_H

#include <json-c/json.h>

#include "core/app.h"
#include "derr.h"

#define REPLAY_RUNNING_MAX 8            /* replays at once */
#define REPLAY_SETTLE_DEFAULT_MS 5000   /* an input's effect watch */
#define REPLAY_TIMEOUT_DEFAULT_MS 15000 /* a window, a focus, a target */
#define REPLAY_BLOCK_MAX_S 600

struct replay_req {
	const char *source_id;  /* the recorded task */
	const char *task_id;    /* the replay task (its display runs) */
	json_object *params;    /* object of strings, or NULL (borrowed; copied) */
	int from_step;          /* 0.. */
	int settle_ms, timeout_ms;
	bool ask_model;         /* a step not found otherwise goes to the model (if any) */
};

/* Reads the source's steps, writes the first progress and starts the
 * replay's thread. *out (caller owns): the first progress. Errors:
 * DERR_INVALID (from_step past the steps, field "from_step"),
 * DERR_UNAVAILABLE (REPLAY_RUNNING_MAX run), DERR_CONFLICT (a replay runs
 * on that task), store errors. */
int replay_start(struct app *app, const struct replay_req *q, json_object **out,
    struct derr *e) DETM_NODISCARD;
/* The progress of replay task task_id, waiting up to block_s seconds while
 * it runs. NULL with DERR_NOT_FOUND when task_id is no replay. */
json_object *replay_status(struct app *app, const char *task_id, int block_s, struct derr *e);
/* At start-up: every replay whose stored progress still says "running"
 * (detmd ended under it: kill -9, a crash) becomes "interrupted" (with
 * interrupted.step and .why) and its task, if not final, cancelled.
 * 0, or -1 with e (the store could not be read). */
int replay_init(struct app *app, struct derr *e) DETM_NODISCARD;
/* Stops every running replay at its next step (a wait in a step ends
 * too) and joins them: each ends "interrupted" (interrupted.step, .why),
 * its task cancelled, before this returns. */
void replay_shutdown(void);

#endif
