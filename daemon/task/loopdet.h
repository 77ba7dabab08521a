/*
 * loopdet.h - loop detection (issue 38 item 1), the rules: a small state
 * per task, fed each logged action, that says when the agent repeats
 * itself without progress. Pure: no store, no clock, no locks (the caller
 * gives times and serialises calls on one state).
 *
 * The signals (docs/api.md "Loops"), checked in this order:
 *   repeat   the same input on the same target (the same action name and
 *            parameters, points within opts.px) `repeats` times in a row,
 *            the screen the same before each (screen signatures equal, or
 *            the previous one's effect suspected_noop);
 *   cycle    the same 2 or 3 inputs in the same order `repeats` times, the
 *            screen before each the same as one cycle earlier;
 *   noop     `noops` inputs in a row with effect suspected_noop (confirmed
 *            breaks the row; unverifiable neither counts nor breaks it);
 *   item     the current plan item holds at least item_min actions, and
 *            item_factor times both the median action count and the median
 *            time span (first to last action, at least a second) of the
 *            items worked on before it (one at least).
 * A hit resets the runs of the signal that fired (repeat, cycle and noop
 * together), so the next hit needs as many repetitions again; an item hits
 * again only once its count has doubled. What cannot be told is not a
 * loop: inputs without a screen signature match only after a
 * suspected_noop (the evidence that the screen stayed).
 *
 * A screen signature is LOOPDET_SIG_N bytes: the mean luma of each cell of
 * a LOOPDET_SIG_W x LOOPDET_SIG_H grid over the whole screen (effect.c
 * computes it from the picture before an input, areas that animate or
 * blink left out). Two are the same when at most LOOPDET_SIG_CELLS cells
 * differ by more than LOOPDET_SIG_DELTA.
 */
#ifndef DETM_LOOPDET_H
#define DETM_LOOPDET_H

#include <stdbool.h>
#include <stdint.h>

#define LOOPDET_SIG_W 32
#define LOOPDET_SIG_H 18
#define LOOPDET_SIG_N (LOOPDET_SIG_W * LOOPDET_SIG_H)
#define LOOPDET_SIG_DELTA 4
#define LOOPDET_SIG_CELLS 2
#define LOOPDET_MAX_PERIOD 3
#define LOOPDET_ITEMS 32        /* plan items remembered per task */

struct loopdet_opts {
	int repeats;            /* >= 2 */
	int noops;              /* >= 2 */
	int item_factor;        /* >= 2 */
	int item_min;           /* >= 2 */
	int px;                 /* >= 0 */
};

/* One logged action. Strings are borrowed for the call. */
struct loopdet_act {
	bool input;             /* an input (it has an effect verdict); else only the item counts */
	const char *name;       /* "click", "type", "gui_do"... */
	const char *target;     /* its other parameters as canonical text, "" for none */
	bool has_point;
	int x, y;
	const char *effect;     /* confirmed|suspected_noop|unverifiable, or NULL */
	const uint8_t *sig;     /* LOOPDET_SIG_N bytes (the screen before it), or NULL */
	int64_t ordinal;        /* plan item, -1: task level */
	int64_t at_ms;          /* when it was logged */
};

enum loopdet_signal { LOOPDET_NONE, LOOPDET_REPEAT, LOOPDET_CYCLE, LOOPDET_NOOP, LOOPDET_ITEM };

struct loopdet_hit {
	enum loopdet_signal signal;
	int period;             /* repeat 1, cycle 2 or 3, else 0 */
	int times;              /* repetitions, noops in a row, or the item's actions */
	int64_t since_ms;       /* the first action of what repeats */
	int64_t ordinal;        /* item: its ordinal, else -1 */
	char what[400];         /* "click at (20, 700)", "type {...} then press_key {...}" */
	char sentence[700];     /* the explanation, one sentence, without the time */
};

struct loopdet;

/* A new state (NULL when out of memory); free with loopdet_free (NULL ok). */
struct loopdet *loopdet_new(void);
void loopdet_free(struct loopdet *d);
/* Forgets the runs (after a pause, a human's turn); the items stay. */
void loopdet_reset(struct loopdet *d);
/* Feeds a; true and *hit filled when it completes a loop. */
bool loopdet_feed(struct loopdet *d, const struct loopdet_opts *o, const struct loopdet_act *a,
    struct loopdet_hit *hit);
/* "repeat", "cycle", "noop", "item" ("none"). */
const char *loopdet_signal_name(enum loopdet_signal s);
/* Whether two signatures show the same screen (see above). */
bool loopdet_sig_same(const uint8_t *a, const uint8_t *b);

/* ---- loop_rows.c: a hit recorded on its task ---- */

struct store;
struct derr;

/* What loop_record writes and returns. */
struct loop_rec {
	const struct loopdet_hit *hit;
	const char *action_id;          /* the action that completed it, or NULL */
	int64_t count;                  /* out: the task's loop events, this one included */
	bool wrote;                     /* out: false when the task is gone */
};
/* One transaction: the task's `loops` column (count, per signal counts,
 * the last event) and a system message (msg_type loop, "Loop detected:
 * <sentence>"); then the events loop/created, message/created and
 * task/updated. Not activity (updated_at stays). 0 (nothing written for
 * a task that is gone), or -1 with e on a database failure. */
int loop_record(struct store *st, const char *task_id, struct loop_rec *r, struct derr *e);
/* The task was paused for its loops: loops.paused_at set. 0 or -1 with e. */
int loop_mark_paused(struct store *st, const char *task_id, struct derr *e);

#endif
