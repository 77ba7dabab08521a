/*
 * loopwatch.h - loop detection's glue (issue 38 item 1): every action a
 * task logs, whatever the path (desktop_action, /api/commands, gui_do, the
 * provider dialects, task_log_action), is fed to that task's detector
 * (task/loopdet.h) through the task layer's action hook; a loop it finds is
 * recorded (task/loopdet.h loop_record: the tasks.loops column, a `loop`
 * system message, the `loop` event), the agent is woken (wake event
 * `task_loop`, a sentence saying what repeats and since when), and once a
 * task has had its limit of loops (metadata loop_pause_after, else
 * --loop-pause-after; 0 never) it is paused and a human is asked for
 * (takeover_help, request_human's path).
 *
 * An input's screen signature comes from effect_take_sig on the thread
 * that logs its row. States are kept in memory, per task (the last
 * LOOPWATCH_TASKS tasks that acted): a restart starts them afresh. A
 * human's action on the task (takeover) and a status change reset its
 * state.
 */
#ifndef DETM_LOOPWATCH_H
#define DETM_LOOPWATCH_H

#include "core/app.h"
#include "derr.h"

#define LOOPWATCH_TASKS 256

/* Installs the hooks (before the server starts). 0, or -1 with e. */
int loopwatch_init(const struct app *app, struct derr *e) DETM_NODISCARD;
/* Frees the states; the hooks feed nothing after it. */
void loopwatch_shutdown(void);

#endif
