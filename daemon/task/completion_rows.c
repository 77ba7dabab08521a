/*
 * completion_rows.c - the evidence of a completion gathered and its verdict
 * recorded, inside the completing write's store_tx body (completion.h):
 * the scope's actions (an item's since it started, or the whole task's),
 * the task's open smart waits, and at a task's completion its done_when
 * conditions; then the row's `completion` column and a system message.
 *
 * Invariants: runs under the caller's transaction, so the completion and
 * its verdict commit together or not at all; reads at most ACTS_MAX of the
 * latest actions (older failures were followed by these); a file condition
 * is an existence check only: absolute paths by stat(2), relative ones
 * beneath the workspace with no link followed (memory_path.c), so a
 * relative path never leaves the workspace.
 *
 * Does not: check text on screen or elements (they need the waits judge or
 * the AT-SPI client, higher layers): such conditions stay unchecked and
 * say so. Does not refuse a completion: the operator decides.
 */
#include "completion.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/jx.h"
#include "core/util.h"
#include "events.h"
#include "memory_path.h"
#include "task_int.h"

#define ACTS_MAX 1000
#define CONDS_MAX 16
#define ARG_MAX 1024

static const char SQL_ACTS[] =
    "SELECT status, summary, output_data FROM (SELECT rowid AS r, status, summary, output_data "
    "FROM actions WHERE task_id = ?1 AND (?2 IS NULL OR plan_item_id = ?2) AND created_at >= ?3 "
    "AND action_type <> 'reasoning' ORDER BY rowid DESC LIMIT ?4) ORDER BY r";
static const char SQL_OPEN_WAITS[] =
    "SELECT count(*) FROM wait_jobs WHERE task_id = ?1 AND status = 'watching'";
static const char SQL_META[] = "SELECT metadata FROM tasks WHERE id = ?1";
static const char SQL_ITEM_SET[] = "UPDATE plan_items SET completion = ?2 WHERE id = ?1";
static const char SQL_TASK_SET[] = "UPDATE tasks SET completion = ?2 WHERE id = ?1";

struct evidence {
	struct completion_act acts[ACTS_MAX];
	char *text[ACTS_MAX][2];            /* owned status, summary */
	size_t n;
	struct completion_cond conds[CONDS_MAX];
	char *cond_text[CONDS_MAX][2];      /* owned cond, why */
	size_t nc;
	int waits;
};

static void
evidence_free(struct evidence *ev)
{
	for (size_t i = 0; i < ev->n; i++)
		free(ev->text[i][0]), free(ev->text[i][1]);
	for (size_t i = 0; i < ev->nc; i++)
		free(ev->cond_text[i][0]), free(ev->cond_text[i][1]);
	free(ev);
}

static char *
col_dup(sqlite3_stmt *s, int i)
{
	const char *t = (const char *)sqlite3_column_text(s, i);

	return t != NULL ? xstrdup(t) : NULL;
}

static int
read_acts(struct store *st, const char *task_id, const char *item_id, int64_t since,
    struct evidence *ev, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_ACTS);
	int rc;

	if (s == NULL)
		return store_fail(st, "completion actions", e);
	sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
	if (item_id != NULL)
		sqlite3_bind_text(s, 2, item_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, since);
	sqlite3_bind_int(s, 4, ACTS_MAX);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW && ev->n < ACTS_MAX) {
		ev->text[ev->n][0] = col_dup(s, 0);
		ev->text[ev->n][1] = col_dup(s, 1);
		ev->acts[ev->n].status = ev->text[ev->n][0];
		ev->acts[ev->n].summary = ev->text[ev->n][1];
		ev->acts[ev->n].effect = completion_effect((const char *)sqlite3_column_text(s, 2));
		ev->n++;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_fail(st, "completion actions", e);
	s = store_stmt(st, SQL_OPEN_WAITS);
	if (s == NULL)
		return store_fail(st, "completion waits", e);
	sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	ev->waits = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	sqlite3_reset(s);
	return rc == SQLITE_ROW ? 0 : store_fail(st, "completion waits", e);
}

/* A file condition: 1 it exists, 0 it does not, -1 cannot tell; why. */
static int
check_file(const char *path, const char *workspace, char *why, size_t cap)
{
	struct stat sb;
	int root, fd, err;

	if (path[0] == '/') {
		if (stat(path, &sb) == 0)
			return snprintf(why, cap, "%s exists", path), 1;
		err = errno;
	} else {
		if (workspace == NULL || (root = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			return snprintf(why, cap, "a relative path needs the workspace (ACU_WORKSPACE), "
			    "which cannot be opened"), -1;
		fd = mpath_open(root, path, O_PATH, 0);
		err = errno;
		close(root);
		if (fd >= 0)
			return close(fd), snprintf(why, cap, "%s exists in the workspace", path), 1;
		if (err == EXDEV || err == ELOOP)
			return snprintf(why, cap, "%s leads outside the workspace (no '..', no symbolic "
			    "link): not checked", path), -1;
	}
	if (err == ENOENT || err == ENOTDIR)
		return snprintf(why, cap, "no file %s", path), 0;
	return snprintf(why, cap, "%s cannot be checked: %s", path, strerror(err)), -1;
}

static void
check_cond(const char *cond, const char *workspace, struct completion_cond *k, char *why, size_t cap)
{
	const char *kind;
	char arg[ARG_MAX];

	k->result = -1;
	if (completion_cond_parse(cond, &kind, arg, sizeof arg) != 0)
		snprintf(why, cap, "not a condition detm knows (text:\"...\", file:\"...\", element:role \"name\")");
	else if (strcmp(kind, "file") == 0)
		k->result = check_file(arg, workspace, why, cap);
	else if (strcmp(kind, "text") == 0)
		snprintf(why, cap, "cannot check text synchronously (OCR runs in the waits engine): "
		    "use a smart_wait before completing");
	else
		snprintf(why, cap, "element conditions are not checked at completion yet");
}

/* The task's done_when (metadata): a string or an array of strings. */
static int
read_conds(struct store *st, const char *task_id, const char *workspace, struct evidence *ev,
    struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_META);
	json_object *meta, *dw, *one;
	char why[ARG_MAX + 256];
	size_t i, n;

	if (s == NULL)
		return store_fail(st, "completion metadata", e);
	sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
	meta = sqlite3_step(s) == SQLITE_ROW ? jx_parse_stored((const char *)sqlite3_column_text(s, 0)) : NULL;
	sqlite3_reset(s);
	if (meta == NULL || !json_object_object_get_ex(meta, "done_when", &dw) || dw == NULL) {
		json_object_put(meta);
		return 0;
	}
	n = json_object_is_type(dw, json_type_array) ? json_object_array_length(dw) : 1;
	for (i = 0; i < n && ev->nc < CONDS_MAX; i++) {
		struct completion_cond *k = &ev->conds[ev->nc];

		one = json_object_is_type(dw, json_type_array) ? json_object_array_get_idx(dw, i) : dw;
		if (one == NULL || !json_object_is_type(one, json_type_string))
			continue;
		check_cond(json_object_get_string(one), workspace, k, why, sizeof why);
		ev->cond_text[ev->nc][0] = xstrdup(json_object_get_string(one));
		ev->cond_text[ev->nc][1] = xstrdup(why);
		k->cond = ev->cond_text[ev->nc][0];
		k->why = ev->cond_text[ev->nc][1];
		ev->nc++;
	}
	json_object_put(meta);
	return 0;
}

/* The column and the thread message. */
static int
record(struct store *st, const char *task_id, const char *item_id, int64_t now,
    struct completion_rec *rec, struct derr *e)
{
	json_object *stored = json_object_new_object();
	sqlite3_stmt *s = store_stmt(st, item_id != NULL ? SQL_ITEM_SET : SQL_TASK_SET);
	const char *sentence = json_object_get_string(json_object_object_get(rec->why, "sentence"));
	char *msg;
	int rc;

	json_object_object_add(stored, "completion", json_object_new_string(completion_name(rec->verdict)));
	json_object_object_add(stored, "completion_why", json_object_get(rec->why));
	json_object_object_add(stored, "checked_at", json_object_new_int64(now));
	if (s != NULL) {
		sqlite3_bind_text(s, 1, item_id != NULL ? item_id : task_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, jx_string(stored, NULL), -1, SQLITE_TRANSIENT);
	}
	rc = store_exec(st, s, "completion set", e);
	json_object_put(stored);
	if (rc != 0)
		return -1;
	if (item_id != NULL)
		msg = xasprintf("Item %lld completed: %s: %s", (long long)rec->ordinal,
		    completion_name(rec->verdict), sentence ? sentence : "");
	else
		msg = xasprintf("Task completed: %s: %s", completion_name(rec->verdict), sentence ? sentence : "");
	rc = trow_sys_msg(st, task_id, "completion", msg, now, e);
	free(msg);
	return rc;
}

int
completion_tx(struct store *st, const char *task_id, const char *item_id, int64_t ordinal,
    int64_t since, const char *workspace, int64_t now, struct completion_rec *rec, struct derr *e)
{
	struct evidence *ev = xcalloc(1, sizeof *ev);
	struct completion_in in = { 0 };
	int rc = -1;

	json_object_put(rec->why);
	rec->why = NULL;
	rec->done = false;
	rec->ordinal = item_id != NULL ? ordinal : -1;
	if (read_acts(st, task_id, item_id, since, ev, e) != 0 ||
	    (item_id == NULL && read_conds(st, task_id, workspace, ev, e) != 0))
		goto out;
	in.scope = item_id != NULL ? "since the item started" : "in the task";
	in.acts = ev->acts;
	in.n_acts = ev->n;
	in.open_waits = ev->waits;
	in.conds = ev->conds;
	in.n_conds = ev->nc;
	in.with_conds = item_id == NULL;
	rec->verdict = completion_judge(&in, &rec->why);
	if (record(st, task_id, item_id, now, rec, e) != 0)
		goto out;
	rec->done = true;
	rc = 0;
out:
	evidence_free(ev);
	return rc;
}

void
completion_publish(const char *task_id, const struct completion_rec *rec)
{
	char ref[24];

	if (rec == NULL || !rec->done)
		return;
	snprintf(ref, sizeof ref, "%lld", (long long)rec->ordinal);
	events_publish("completion", completion_name(rec->verdict), task_id, rec->ordinal >= 0 ? ref : NULL);
}
