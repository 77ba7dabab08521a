/*
 * completion.h - "done, checked" (issue 38 item 2): when a task or a plan
 * item is set to completed, detm compares the claim with the evidence it
 * holds and answers evidenced, unchecked or contradicted, with why.
 *
 * Two halves:
 *   completion.c       the rules, pure (no store, no clock, no files): the
 *                      evidence in, the verdict and its reasons out; and the
 *                      parsers of what the rules read (an action's effect
 *                      in its output JSON, a done_when condition).
 *   completion_rows.c  the evidence gathered inside the completing write's
 *                      transaction (actions since the item started, open
 *                      waits, done_when files) and the verdict recorded
 *                      (the row's `completion` column and a system message).
 *
 * The rules, in order (docs/api.md "Done, checked"):
 *   contradicted  a failed action with no completed action after it; an
 *                 open (watching) smart wait on the task; the last finished
 *                 action's effect is suspected_noop; a done_when condition
 *                 checked false.
 *   evidenced     otherwise, when a done_when condition was checked true, or
 *                 the last finished action completed with effect confirmed.
 *   unchecked     otherwise: no actions, effects unverifiable or absent,
 *                 done_when conditions that could not be checked.
 * A verdict is evidence, never an assumption: what cannot be told is
 * unchecked, never evidenced. A contradicted completion is recorded and
 * shown, never refused.
 */
#ifndef DETM_COMPLETION_H
#define DETM_COMPLETION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "derr.h"
#include "store/store.h"

enum completion_verdict {
	COMPLETION_UNCHECKED,
	COMPLETION_EVIDENCED,
	COMPLETION_CONTRADICTED,
};

/* One action of the scope, oldest first. status: started|completed|failed;
 * effect: confirmed|suspected_noop|unverifiable, or NULL when the action
 * says none (completion_effect). summary may be NULL. */
struct completion_act {
	const char *status, *effect, *summary;
};

/* One done_when condition after its check: result 1 true, 0 false, -1 not
 * checked; why says what was seen (or why it could not be checked). */
struct completion_cond {
	const char *cond, *why;
	int result;
};

struct completion_in {
	const char *scope;                  /* "since it started", "in the task" */
	const struct completion_act *acts;
	size_t n_acts;
	int open_waits;
	const struct completion_cond *conds;
	size_t n_conds;
	bool with_conds;                    /* done_when applies (a task) */
};

/* The verdict; *why_out (new, caller owns) is {"sentence": "...",
 * "reasons": ["...", ...]}: the sentence is the reasons that decided,
 * joined by "; "; reasons lists every fact seen. Never fails. */
enum completion_verdict completion_judge(const struct completion_in *in, json_object **why_out);
/* "evidenced", "unchecked", "contradicted". */
const char *completion_name(enum completion_verdict v);

/* An action's effect verdict read from its output JSON text (may be NULL,
 * or not JSON): "effect" at the top, in "result", or in "verification",
 * as a string or an object's "verdict"; only confirmed, suspected_noop and
 * unverifiable count (a static string), anything else is NULL. */
const char *completion_effect(const char *output_json);

/* A done_when condition: text:"Exported", file:"/path" (or workspace-
 * relative), element:button "OK". Quotes around the argument are optional;
 * *kind is "text", "file" or "element", arg (cap bytes) the argument
 * unquoted. -1 when the kind is none of these or the argument is empty. */
int completion_cond_parse(const char *cond, const char **kind, char *arg, size_t cap);

/* ---- completion_rows.c (inside a store_tx body: lock held) ---- */

/* What a completing write gets back: the verdict and its why (new; caller
 * puts it). done is false when the write completed nothing. */
struct completion_rec {
	bool done;
	enum completion_verdict verdict;
	json_object *why;
	int64_t ordinal;                    /* the item's, or -1 for the task */
};

/* Gathers the evidence of task_id's item item_id (actions since `since`
 * ms, 0: all), or of the whole task when item_id is NULL (and then its
 * metadata's done_when conditions, files resolved absolute or beneath
 * workspace, which may be NULL), judges it, stores it in the row's
 * `completion` column and writes a system message (msg_type completion).
 * 0, or -1 with e on a database failure. rec->why is replaced. */
int completion_tx(struct store *st, const char *task_id, const char *item_id, int64_t ordinal,
    int64_t since, const char *workspace, int64_t now, struct completion_rec *rec, struct derr *e)
    DETM_NODISCARD;
/* After the commit: the `completion` event. */
void completion_publish(const char *task_id, const struct completion_rec *rec);

#endif
