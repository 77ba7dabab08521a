/*
 * task_int.h - what the task family's files share (not for other modules;
 * task.h is the contract): the row writers both halves of the task model
 * use inside a store_tx body (lock held, in the transaction, `now` from
 * store_now). Each returns 0, or -1 with e set; the caller's transaction
 * then undoes everything.
 *
 *   task.c         tasks: register, update, control, delete; hooks
 *   task_items.c   plan items: append, status, rename
 *   task_actions.c actions, logs, messages, driver notes, verdicts
 *   task_rows.c    the row writers and lookups all of them use (trow_*,
 *                  titem_insert, task_lookup, task_current_item)
 *   taskview.c     views; taskview_full.c streams the big ones (tview_*)
 */
#ifndef DETM_TASK_INT_H
#define DETM_TASK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>
#include <sqlite3.h>

#include "core/buf.h"
#include "core/util.h"
#include "derr.h"
#include "store/store.h"
#include "task.h"

/* Steps an INSERT whose ?1 is the row id, drawing a new id on collision.
 * The other parameters stay bound across retries. */
int trow_insert(struct store *st, sqlite3_stmt *s, char id[ID_LEN], const char *what,
    struct derr *e);
/* Binds v, or NULL when v is NULL or "". */
void trow_bind_text_or_null(sqlite3_stmt *s, int i, const char *v);
/* A thread message (role, type, content) on task_id; its id into id. */
int trow_msg_insert(struct store *st, const char *task_id, const char *role,
    const char *type, const char *content, int64_t now, char id[ID_LEN],
    struct derr *e);
/* A thread message from the system (role "system"). */
int trow_sys_msg(struct store *st, const char *task_id, const char *type,
    const char *content, int64_t now, struct derr *e);
/* Bumps updated_at; `always` for changes of the plan, otherwise at most
 * once a second (see SQL_TASK_TOUCH). */
int trow_touch(struct store *st, const char *task_id, int64_t now, bool always, struct derr *e);
/* An action row under item_id (may be NULL), counted on its item. */
int trow_action_insert(struct store *st, const char *task_id, const char *item_id,
    const struct action_new *a, int64_t now, char id[ID_LEN], struct derr *e);
/* A log line under action_id. */
int trow_log_insert(struct store *st, const char *action_id, const char *type,
    const char *content, int64_t now, char id[ID_LEN], struct derr *e);
/* A reasoning note: an action under item_id (may be NULL). */
int trow_note_insert(struct store *st, const char *task_id, const char *item_id,
    const char *note, int64_t now, struct derr *e);
/* Appends titles starting after the current last ordinal; fills `added`
 * (may be NULL) and a human summary "3. a; 4. b" in text. */
int titem_insert(struct store *st, const char *task_id, json_object *titles,
    json_object *added, struct buf *text, struct derr *e);

/* The plan item of task_id at ordinal: its id, status, title (caller
 * frees; title may be NULL) and started_at; 0, or -1 with NOT_FOUND. */
int trow_item_get(struct store *st, const char *task_id, int64_t ordinal, char id[ID_LEN],
    int *status, char **title, int64_t *started, struct derr *e);

/* taskview.c, for taskview_full.c (a read snapshot held): the summary
 * (task_summary without its snapshot), an action row's columns 0..7 of
 * SQL "id, action_type, summary, status, input_data, output_data,
 * duration_ms, created_at" as its view without logs and ordinal, and a log
 * row "action_id, id, log_type, content, created_at" as its view. */
json_object *tview_summary(struct store *st, const char *id, enum task_detail detail,
    bool sentence, struct derr *e);
json_object *tview_action_head(sqlite3_stmt *s);
json_object *tview_log(sqlite3_stmt *s);

#endif
