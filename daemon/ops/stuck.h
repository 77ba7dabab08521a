/*
 * stuck.h - stuck detection: wake the agent when an active task goes idle.
 *
 * Every --stuck-check seconds a background thread looks for active tasks
 * whose updated_at is at least --stuck-after seconds old and which have no
 * wait_jobs row in status 'watching'. For each (at most once per
 * --stuck-cooldown per task) it posts a "task_stuck" wake-up whose text is
 * "[task_stuck_resume] " + the resume packet as compact JSON, and writes a
 * system message (msg_type "stuck") to the task's thread.
 */
#ifndef DETM_STUCK_H
#define DETM_STUCK_H

#include "core/config.h"
#include "core/util.h"
#include "derr.h"
#include "store/store.h"

/* Starts the checker (does nothing when --stuck-detection is off).
 * 0, or -1 with e. Call after wake_init. */
int stuck_init(struct store *st, const struct config *cfg, struct derr *e) DETM_NODISCARD;
/* Stops it promptly (waits for a check in progress). Safe to call twice or
 * without stuck_init. */
void stuck_shutdown(void);

#endif
