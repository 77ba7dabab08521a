/*
 * taskstate.h - the status machines of tasks and plan items, as tables.
 *
 *   task:  active -> paused | completed | failed | cancelled
 *          paused -> active | cancelled
 *          completed, failed, cancelled are final
 *   item:  pending -> active | completed | failed | skipped | scrapped
 *          active  -> completed | failed | skipped | scrapped
 *          failed  -> active                      (a retry)
 *          completed, skipped, scrapped are final
 *
 * pending -> completed|failed is the Python DETM's leniency (an item done,
 * or given up, without being marked active first).
 * Staying in the same state is always allowed (a no-op). Pure functions, no
 * state; the store applies transitions, this module only judges them.
 */
#ifndef DETM_TASKSTATE_H
#define DETM_TASKSTATE_H

#include <stdbool.h>
#include <stddef.h>

enum task_status { TASK_ACTIVE, TASK_PAUSED, TASK_COMPLETED, TASK_FAILED,
	TASK_CANCELLED, TASK__COUNT };
enum item_status { ITEM_PENDING, ITEM_ACTIVE, ITEM_COMPLETED, ITEM_FAILED,
	ITEM_SKIPPED, ITEM_SCRAPPED, ITEM__COUNT };

/* Parse case-insensitively, trimming blanks; "canceled" is "cancelled".
 * Return -1 for an unknown name. */
int task_status_parse(const char *s);
int item_status_parse(const char *s);
const char *task_status_name(int st);
const char *item_status_name(int st);

bool task_status_can(int from, int to);
bool item_status_can(int from, int to);
bool task_status_final(int st);
bool item_status_final(int st);
/* True for item states that end the item's clock (completed_at is set). */
bool item_status_ends(int st);

/* Writes "paused, completed, ..." (the states reachable from `from`) or
 * "none (final)" into out. */
void task_status_allowed(int from, char *out, size_t cap);
void item_status_allowed(int from, char *out, size_t cap);
/* Lists every state name, comma-separated, for error messages. */
const char *task_status_all(void);
const char *item_status_all(void);

#endif
