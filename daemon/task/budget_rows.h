/*
 * budget_rows.h - a task's budget as a request gives it and its row: the
 * part of budgets the task model writes (task.c, in its own transaction).
 * The budget engine is budget.h.
 */
#ifndef DETM_BUDGET_ROWS_H
#define DETM_BUDGET_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "derr.h"
#include "store/store.h"

enum budget_key { BUDGET_USD, BUDGET_CALLS, BUDGET_TOKENS, BUDGET_MINUTES, BUDGET__COUNT };

/* A budget as given in a request: each key absent, null (remove) or set. */
struct budget {
	bool given[BUDGET__COUNT];
	bool null[BUDGET__COUNT];
	double v[BUDGET__COUNT];
	bool clear;             /* "budget": null: remove every limit */
};

/* Reads body["budget"] into *b. *present is false when the body has none.
 * DERR_INVALID (field "budget") for an unknown key or a value that is not
 * a number >= 0 (model_calls and tokens: integers). */
int budget_parse(json_object *body, struct budget *b, bool *present, struct derr *e) DETM_NODISCARD;

/* Inside a write transaction (store_tx body): merges b into the task's
 * row. task.c runs the task hooks with TASK_HOOK_BUDGET after the
 * transaction committed (the budget engine reloads the entry then). */
int budget_write_tx(struct store *st, const char *task_id, const struct budget *b,
    int64_t now, struct derr *e) DETM_NODISCARD;
/* The keys' names in requests and summaries, by enum budget_key. */
extern const char *const budget_key_names[BUDGET__COUNT];

#endif
