/*
 * task.h - the task model: tasks, plan items, actions, logs, messages.
 *
 * Writes (task.c) validate the status machines (taskstate.h), fill the
 * timestamps and durations, write the thread messages that record what
 * happened, and run in one transaction each. Reads (taskview.c) build the
 * JSON views the API returns. Every function takes what it needs itself
 * (writes: store_tx; reads: a read snapshot, store_read_begin), so callers
 * hold no lock. Ids are borrowed strings; any JSON object returned
 * is new and owned by the caller.
 *
 * Errors: -1 (or NULL) with e filled: DERR_NOT_FOUND for an unknown task,
 * item or action, DERR_INVALID for a bad argument the caller could not check
 * alone (an ordinal past the end), DERR_CONFLICT for an illegal transition,
 * DERR_INTERNAL for a database failure (logged).
 *
 * Not here: HTTP and JSON-body parsing (api_task.c).
 */
#ifndef DETM_TASK_H
#define DETM_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/util.h"
#include "derr.h"
#include "store/store.h"

struct budget;
struct completion_rec;

/* ---- writes (task.c) ---- */

struct task_reg {
	const char *name;
	json_object *plan;          /* array of strings, or NULL */
	json_object *metadata;      /* object, or NULL */
	const char *agent_id;       /* or NULL */
	const struct budget *budget;    /* or NULL (budget.h) */
};
int task_register(struct store *st, const struct task_reg *in,
    char id_out[ID_LEN], struct derr *e) DETM_NODISCARD;

struct task_patch {
	const char *name;           /* NULL: unchanged */
	int status;                 /* enum task_status, or -1: unchanged */
	json_object *metadata;      /* merged key by key; null values remove */
	const char *message;        /* a reasoning note, or NULL */
	const struct budget *budget;    /* or NULL: merged (budget.h) */
	/* A move to completed is judged against the evidence (completion.h)
	 * in the same transaction: its verdict into *completion (may be NULL:
	 * judged and recorded all the same); done_when files relative to
	 * workspace (may be NULL). */
	const char *workspace;
	struct completion_rec *completion;
};
int task_update(struct store *st, const char *id, const struct task_patch *p,
    struct derr *e) DETM_NODISCARD;

/* Operator control: moves the task to `to` (pause/resume/cancel). One
 * transaction: the status, a `control` message, then the `lifecycle`
 * message. Already being in `to` is not an error: then only a `control`
 * message saying it changed nothing is written. CONFLICT (nothing written)
 * when the machine forbids the move. */
int task_control(struct store *st, const char *id, int to, const char *reason,
    struct derr *e) DETM_NODISCARD;
/* The same, done by `who` ("Budget") rather than the operator: the control
 * message reads "<who> paused the task: <reason>". */
int task_control_by(struct store *st, const char *id, int to, const char *who,
    const char *reason, struct derr *e) DETM_NODISCARD;

/* Who drives the task's display changed (takeover.c): one transaction
 * writes the `control` message msg and the audit action a (under the
 * current item). NOT_FOUND for an unknown task. */
struct action_new;
int task_driver_note(struct store *st, const char *id, const char *msg,
    const struct action_new *a, struct derr *e) DETM_NODISCARD;

int task_delete(struct store *st, const char *id, struct derr *e) DETM_NODISCARD;

/* Appends titles; *added_out is a new array of {ordinal,title}. */
int task_items_append(struct store *st, const char *id, json_object *titles,
    const char *note, json_object **added_out, struct derr *e) DETM_NODISCARD;

struct item_patch {
	int status;                 /* enum item_status, or -1 */
	const char *title;
	const char *note;
	/* As task_patch: a move to completed is judged (completion.h). */
	struct completion_rec *completion;
};
int task_item_update(struct store *st, const char *id, int64_t ordinal,
    const struct item_patch *p, struct derr *e) DETM_NODISCARD;

struct action_new {
	const char *type;           /* cli|gui|wait|vision|reasoning|other */
	const char *summary;
	const char *status;         /* started|completed|failed */
	const char *input_json;     /* JSON text or NULL */
	const char *output_json;
	double duration_ms;         /* < 0: not given */
	bool has_ordinal;
	int64_t ordinal;
	json_object *logs;          /* array of {log_type?, content}, or NULL */
};
/* *ordinal_out is the item's ordinal, or -1 for a task-level action. */
int task_action_add(struct store *st, const char *task_id,
    const struct action_new *a, char id_out[ID_LEN], int64_t *ordinal_out,
    struct derr *e) DETM_NODISCARD;

/* Called after every committed action insert (task_action_add,
 * task_driver_note), on the thread that wrote it, outside the store lock:
 * the loop watch (desktop/loopwatch.c) is fed so, whatever path logged
 * the action. Up to 4 hooks (the loop watch, the target recorder), each
 * added once before the server starts; they run in the order added. */
struct task_action_note {
	const char *task_id, *action_id;
	int64_t ordinal;                    /* the item's, or -1 */
	const struct action_new *a;
};
typedef void (*task_action_hook_fn)(const struct task_action_note *n, void *arg);
void task_action_hook_set(task_action_hook_fn fn, void *arg);

struct action_patch {
	const char *status;         /* NULL: unchanged */
	const char *output_json;    /* NULL: unchanged */
	double duration_ms;         /* < 0: unchanged */
};
int task_action_update(struct store *st, const char *task_id,
    const char *action_id, const struct action_patch *p, struct derr *e) DETM_NODISCARD;

int task_log_add(struct store *st, const char *task_id, const char *action_id,
    const char *log_type, const char *content, char id_out[ID_LEN],
    struct derr *e) DETM_NODISCARD;

/* Returns the new message as JSON, or NULL with e. */
json_object *task_message_add(struct store *st, const char *task_id,
    const char *role, const char *msg_type, const char *content, struct derr *e);

/* A verdict on a task written inside a caller's store_tx body (so that it
 * and the caller's own rows commit together): the action action_id (if
 * not NULL and still there) gets p, and a thread message (role, msg_type,
 * content) is added. A task that is gone writes nothing (*wrote false);
 * 0, or -1 with e on a database failure (the caller's body then fails). */
struct task_verdict {
	const char *task_id, *action_id;
	const struct action_patch *p;
	const char *role, *msg_type, *content;
	char msg_id[ID_LEN];            /* out: the message's id */
	bool wrote, action_set;         /* out: the message, the action were written */
};
int task_verdict_tx(struct store *st, int64_t now, struct task_verdict *v, struct derr *e)
    DETM_NODISCARD;
/* The events of a committed verdict (after store_tx returned 0). */
void task_verdict_publish(const struct task_verdict *v);

/* ---- reads (taskview.c) ---- */

enum task_detail { DETAIL_ITEMS, DETAIL_ACTIONS, DETAIL_FOCUSED };

json_object *task_summary(struct store *st, const char *id,
    enum task_detail detail, bool with_sentence, struct derr *e);

struct task_query {
	int status;                 /* enum task_status, or -1 for all */
	int limit;
	int64_t since_ms;           /* 0: no filter */
};
json_object *task_list(struct store *st, const struct task_query *q, struct derr *e);

json_object *task_item_view(struct store *st, const char *id, int64_t ordinal,
    int limit, int offset, struct derr *e);
json_object *task_action_view(struct store *st, const char *task_id,
    const char *action_id, struct derr *e);
json_object *task_thread(struct store *st, const char *id, int limit, struct derr *e);
/* The task's latest `limit` actions, item and task-level alike, oldest
 * first: [{action_id, ordinal (null: task-level), action_type, summary,
 * created_at, event?}] (event: a `human` action's input event, such as
 * "takeover" or "release"). NOT_FOUND for an unknown task. */
json_object *task_timeline(struct store *st, const char *id, int limit, struct derr *e);

/* ---- the big views, streamed (taskview_full.c) ----
 * detail=actions/full (every item with its latest LIM_DETAIL_ACTIONS
 * actions and their logs, and the task-level ones) and detail=focused
 * grow with what a task logged: tens of MB. A task_view writes one as
 * JSON through a sink, an action and a log line at a time, so what it
 * holds stays flat (one action, one log line) whatever the task holds; a
 * sink that blocks (a full pipe) paces it. */

/* Where a view is written: 0, or -1 to stop (its reader left). */
typedef int (*task_sink_fn)(void *cls, const char *p, size_t n);

struct task_view;
/* Begins a snapshot on rd (a private reader, store_reader_open: the view
 * uses it alone until task_view_close) and reads the task's row and items
 * in it. NULL with e (NOT_FOUND for an unknown task, a database error). */
struct task_view *task_view_open(struct store *rd, const char *id, enum task_detail detail,
    struct derr *e);
/* The view without its actions (borrowed): what task_summary(detail)
 * answers minus action_details and task_actions. The caller may read it
 * and add keys: they are written after the task's own, in order. */
json_object *task_view_head(struct task_view *v);
/* Writes the whole view: the same JSON text as jx_string of
 * task_summary(id, detail) with the head's added keys, read in the
 * snapshot (invalid UTF-8 repaired). On any one thread at a time. 0, or
 * -1 (the sink stopped: e untouched; a database error: e). */
int task_view_write(struct task_view *v, task_sink_fn sink, void *cls, struct derr *e);
/* Ends the snapshot and frees v (not its reader). NULL ok. */
void task_view_close(struct task_view *v);

/* Shared by task.c and taskview.c (lock held): the current item (first
 * active, else first pending) as its id and ordinal; 0 if found, 1 if the
 * task has none, -1 on error. */
int task_current_item(struct store *st, const char *task_id,
    char item_id[ID_LEN], int64_t *ordinal, struct derr *e);
/* The task's status and metadata (parsed; caller owns *meta). Takes the
 * lock itself. NOT_FOUND if there is no such task. */
int task_meta(struct store *st, const char *id, int *status, json_object **meta,
    struct derr *e);

/* Called after a committed status change (from, to: enum task_status), and
 * after a delete (from -1, to TASK_HOOK_DELETED), outside the store lock,
 * on the thread that made the change. Register before the server starts. */
#define TASK_HOOK_DELETED (-2)
typedef void (*task_hook_fn)(const char *task_id, int from, int to, void *arg);
void task_hook_add(task_hook_fn fn, void *arg);
/* The same, and also after a committed change of the task's budget (to
 * TASK_HOOK_BUDGET, from -1): the budget engine (budget.c) hears of it so,
 * without the task model calling up into it. */
#define TASK_HOOK_BUDGET (-3)
void task_hook_add_all(task_hook_fn fn, void *arg);

/* Looks the task up (lock held): 0 and its status, or -1 with NOT_FOUND. */
int task_lookup(struct store *st, const char *id, int *status, struct derr *e);

#endif
