/*
 * recorder_final.c - the latest status of each recording and clip, kept
 * apart from the recordings directory (recorder_int.h, rfinal_*): in
 * memory (the last FINAL_MAX, newest replacing oldest) and in the
 * database's recordings table. A recording's thread keeps its status when
 * it starts and when it ends; readers ask here before the status file, so
 * a final state whose file could not be written (a full disk) is still
 * what they see.
 *
 * State: fin (under fin_mu, a leaf lock: nothing is taken under it). A
 * database write that fails is logged; memory still has the status.
 * Invariant: a key is in fin at most once.
 *
 * Does not: write status files (recorder_files.c) or decide states
 * (recorder_run.c).
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "core/log.h"
#include "recorder_int.h"
#include "store/store.h"

#define FINAL_MAX 256

static struct {
	char key[KEY_MAX];
	char task_id[ID_LEN];
	char *status;           /* JSON text; NULL: a free slot */
	uint64_t age;
} fin[FINAL_MAX];
static uint64_t fin_age;
static pthread_mutex_t fin_mu = PTHREAD_MUTEX_INITIALIZER;

static const char SQL_REC_PUT[] =
	"INSERT INTO recordings (key, task_id, status, updated_at) VALUES (?1, ?2, ?3, ?4) "
	"ON CONFLICT (key) DO UPDATE SET task_id = ?2, status = ?3, updated_at = ?4";
static const char SQL_REC_GET[] = "SELECT status FROM recordings WHERE key = ?1";
static const char SQL_REC_DEL[] = "DELETE FROM recordings WHERE key = ?1 OR task_id = ?1";

struct put_tx {
	const char *key, *task_id, *status;
};

static int
put_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct put_tx *p = arg;
	sqlite3_stmt *s = store_stmt(st, SQL_REC_PUT);

	if (s == NULL)
		return store_fail(st, "recording status", e);
	sqlite3_bind_text(s, 1, p->key, -1, SQLITE_STATIC);
	if (p->task_id[0] != '\0')
		sqlite3_bind_text(s, 2, p->task_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, p->status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, now);
	return store_exec(st, s, "recording status", e);
}

static int
del_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct put_tx *p = arg;
	sqlite3_stmt *s = store_stmt(st, SQL_REC_DEL);

	(void)now;
	if (s == NULL)
		return store_fail(st, "recording status", e);
	sqlite3_bind_text(s, 1, p->task_id, -1, SQLITE_STATIC);
	return store_exec(st, s, "recording status", e);
}

/* fin_mu held: key's slot, or (with take) a free or the oldest one. */
static int
slot_locked(const char *key, bool take)
{
	int oldest = 0;

	for (int i = 0; i < FINAL_MAX; i++) {
		if (fin[i].status != NULL && strcmp(fin[i].key, key) == 0)
			return i;
		if (fin[i].status == NULL || (fin[oldest].status != NULL && fin[i].age < fin[oldest].age))
			oldest = i;
	}
	return take ? oldest : -1;
}

void
rfinal_keep(const struct rec *r, json_object *status)
{
	const char *text = jx_string(status, NULL);
	struct put_tx p = { .key = r->key, .task_id = r->task_id, .status = text };
	struct derr e;
	bool gone;
	int i;

	pthread_mutex_lock(&fin_mu);
	i = slot_locked(r->key, true);
	free(fin[i].status);
	fin[i].status = xstrdup(text);
	snprintf(fin[i].key, sizeof fin[i].key, "%s", r->key);
	snprintf(fin[i].task_id, sizeof fin[i].task_id, "%s", r->task_id);
	fin[i].age = ++fin_age;
	pthread_mutex_unlock(&fin_mu);
	pthread_mutex_lock(&rec_registry.mu);
	gone = rec_registry.abandoned;    /* shutdown went on without this thread: no store */
	pthread_mutex_unlock(&rec_registry.mu);
	derr_clear(&e);
	if (!gone && store_tx(rec_registry.app->store, put_tx, &p, &e) != 0)
		log_warn("recording %s: cannot keep its status in the database: %s", r->key,
		    e.message);
}

json_object *
rfinal_get(const char *key)
{
	json_object *o = NULL;
	sqlite3_stmt *s;
	struct store *rd;
	int i;

	pthread_mutex_lock(&fin_mu);
	if ((i = slot_locked(key, false)) >= 0)
		o = jx_parse_stored(fin[i].status);
	pthread_mutex_unlock(&fin_mu);
	if (o != NULL)
		return o;
	rd = store_read_begin(rec_registry.app->store);
	s = store_stmt(rd, SQL_REC_GET);
	if (s != NULL) {
		sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW)
			o = jx_parse_stored((const char *)sqlite3_column_text(s, 0));
		sqlite3_reset(s);
	}
	store_read_end(rd);
	if (o != NULL && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

void
rfinal_forget_task(const char *task_id)
{
	struct put_tx p = { .task_id = task_id };
	struct derr e;

	pthread_mutex_lock(&fin_mu);
	for (int i = 0; i < FINAL_MAX; i++)
		if (fin[i].status != NULL && strcmp(fin[i].task_id, task_id) == 0) {
			free(fin[i].status);
			fin[i].status = NULL;
		}
	pthread_mutex_unlock(&fin_mu);
	derr_clear(&e);
	if (store_tx(rec_registry.app->store, del_tx, &p, &e) != 0)
		log_warn("task %s: cannot forget its recordings' statuses: %s", task_id, e.message);
}
