/*
 * replay_rows.h - the rows "record once, replay" reads and writes
 * (replay_rows.c, migration 10): an input action's target descriptor
 * (actions.target), a task's recorded steps in order, a replay task's
 * progress (tasks.replay).
 *
 * Does not: read the screen (desktop/target.c) or replay (gui/replay.c).
 */
#ifndef DETM_REPLAY_ROWS_H
#define DETM_REPLAY_ROWS_H

#include <json-c/json.h>

#include "derr.h"
#include "store/store.h"

#define REPLAY_MAX_STEPS 500    /* actions read from a source task */

/* Sets action_id's target descriptor (JSON object, borrowed). A deleted
 * action or task is no error (nothing written). */
int replay_target_set(struct store *st, const char *action_id, json_object *target,
    struct derr *e) DETM_NODISCARD;

/* The actions of task_id, oldest first, at most REPLAY_MAX_STEPS: *out
 * (caller owns) an array of {action_id, type, status, summary, input,
 * output, target} (input/output/target parsed, or null). DERR_NOT_FOUND
 * for an unknown task. */
int replay_steps_read(struct store *st, const char *task_id, json_object **out,
    struct derr *e) DETM_NODISCARD;

/* Writes a replay task's progress object (borrowed) to tasks.replay. */
int replay_state_set(struct store *st, const char *task_id, json_object *state,
    struct derr *e) DETM_NODISCARD;
/* *out: the stored progress (caller owns) or NULL when task_id is no
 * replay. DERR_NOT_FOUND for an unknown task. */
int replay_state_get(struct store *st, const char *task_id, json_object **out,
    struct derr *e) DETM_NODISCARD;
/* *out (caller owns): the ids of the tasks whose stored progress says
 * "running" (at most 1000): at start-up, replays a detmd that ended
 * without stopping them (kill -9, a crash) left behind. */
int replay_running_ids(struct store *st, json_object **out, struct derr *e) DETM_NODISCARD;
#endif
