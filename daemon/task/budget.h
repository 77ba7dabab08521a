/*
 * budget.h - per-task budgets: what a task may spend before detmd pauses it.
 *
 * A task may carry budget {usd?, model_calls?, tokens?, minutes?} (given at
 * register or PATCH; a null value removes that limit, "budget": null all of
 * them). usd, model_calls and tokens count the task's usage rows (usage.h;
 * a call whose price is unknown adds nothing to usd); minutes are wall-clock
 * minutes since the task was registered. A limit is reached when the spent
 * figure is >= the limit.
 *
 * When a limit is reached (after the call that crossed it, at the minute,
 * when a budget is set below what is spent, or when a call is attempted
 * over it; checked at once and then every second) and the task is active, the
 * budget thread pauses it with a control message that names the limit and
 * the figures, and posts a "budget_reached" wake-up (wake.h) with the same
 * text. From then on every model call for the task is refused before it is
 * sent (usage.h), until the budget is raised; resuming without raising it
 * pauses the task again within a second.
 * Calls already in flight when the limit is crossed still finish, so a
 * budget can be overshot by the calls running in parallel (at most the
 * wait workers plus one per request thread).
 *
 * Owns: the task_budgets rows, an in-memory table of the live tasks that
 * have a budget (their limits and spent figures, loaded from the database
 * at start and when a budget changes, then kept by budget_note), and the
 * budget thread. Thread-safe.
 */
#ifndef DETM_BUDGET_H
#define DETM_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/config.h"
#include "core/util.h"
#include "derr.h"
#include "store/store.h"

#include "budget_rows.h"

/* Loads the budgets of the live tasks and starts the thread. 0 or -1. */
int budget_init(struct store *st, const struct config *cfg, struct derr *e) DETM_NODISCARD;
/* Stops the thread (before the store closes). Safe without init. */
void budget_shutdown(void);

/* Whether task_id may make a model call: 0, or -1 with why filled (the
 * limit and the figures); then the task is paused if it is active. */
int budget_check(const char *task_id, char *why, size_t cap);
/* Adds one finished model call (cost < 0: unknown price). */
void budget_note(const char *task_id, double cost, int64_t tokens);

/* The task's budget for its summary: {usd,model_calls,tokens,minutes,
 * spent:{usd,model_calls,tokens,minutes}, reached: null or the limit's
 * name, unpriced_calls}; NULL when the task has none. */
json_object *budget_json(struct store *st, const char *task_id);
/* The same inside the caller's read snapshot (store_read_begin). */
json_object *budget_json_read(struct store *rd, const char *task_id);

#endif
