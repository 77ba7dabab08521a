/* test_store.c - store.c and the task model on a real SQLite file. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/jx.h"
#include "core/nowait.h"
#include "store/store.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "unit.h"

static char dir[64];
static char dbpath[128];

static struct store *
fresh_store(void)
{
	struct store *st = NULL;
	struct derr e;

	snprintf(dir, sizeof dir, "/tmp/detm-unit.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return NULL;
	snprintf(dbpath, sizeof dbpath, "%s/data.db", dir);
	derr_clear(&e);
	if (store_open(dbpath, false, &st, &e) != 0)
		fprintf(stderr, "    store_open: %s\n", e.message);
	return st;
}

static void
cleanup(struct store *st)
{
	char cmd[200];

	store_close(st);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "    cleanup failed\n");
}

static int64_t
count_db(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int64_t n = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

static int64_t
count(struct store *st, const char *sql)
{
	return count_db(store_db(st), sql);
}

static const char *
jstr(json_object *o, const char *path)
{
	/* "items.1.status": object keys and array indexes. */
	char buf[128], *tok, *save = NULL;
	json_object *v = o;

	snprintf(buf, sizeof buf, "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(v, json_type_array))
			v = json_object_array_get_idx(v, (size_t)atoi(tok));
		else if (!json_object_object_get_ex(v, tok, &v))
			v = NULL;
	}
	return v ? json_object_get_string(v) : NULL;
}

static int
reg(struct store *st, const char *plan_json, char id[ID_LEN])
{
	struct task_reg in = { .name = "t" };
	struct derr e;
	int rc;

	in.plan = plan_json ? json_tokener_parse(plan_json) : NULL;
	rc = task_register(st, &in, id, &e);
	json_object_put(in.plan);
	return rc;
}

#define SCHEMA_LATEST 10    /* the last "-- migration N" in schema.sql */

static void
test_store_applies_migrations_once_and_reopens(void)
{
	struct store *st = fresh_store();
	struct derr e;
	char id[ID_LEN];

	CHECK(st != NULL);
	if (st == NULL)
		return;
	CHECK(store_schema_version(st) == SCHEMA_LATEST);
	CHECK(count(st, "SELECT count(*) FROM pragma_table_info('wait_jobs') WHERE name = 'action_id'") == 1);
	CHECK(reg(st, "[\"a\"]", id) == 0);
	store_close(st);
	st = NULL;
	CHECK(store_open(dbpath, false, &st, &e) == 0);
	CHECK(st != NULL && store_schema_version(st) == SCHEMA_LATEST);
	CHECK(st != NULL && count(st, "SELECT count(*) FROM tasks") == 1);
	CHECK(st != NULL && count(st, "PRAGMA foreign_keys") == 1);
	cleanup(st);
}

extern const unsigned char schema_sql[];

/* A database as schema version `version` left it (the embedded schema up
 * to that migration, applied by hand); see the migration tests. */
static sqlite3 *
old_database(int version)
{
	const char *s = (const char *)schema_sql, *end;
	sqlite3 *db = NULL;
	char *sql, marker[32];

	snprintf(marker, sizeof marker, "\n-- migration %d\n", version + 1);
	end = strstr(s, marker);
	snprintf(dir, sizeof dir, "/tmp/detm-unit.XXXXXX");
	if (end == NULL || mkdtemp(dir) == NULL)
		return NULL;
	snprintf(dbpath, sizeof dbpath, "%s/data.db", dir);
	if (sqlite3_open(dbpath, &db) != SQLITE_OK)
		return NULL;
	sql = xasprintf("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; BEGIN;\n%.*s\n"
	    "PRAGMA user_version = %d; COMMIT;", (int)(end - s), s, version);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "    v%d schema: %s\n", version, sqlite3_errmsg(db));
		sqlite3_close(db);
		db = NULL;
	}
	free(sql);
	return db;
}

/* Rows written by a version-4 detmd: ids out of rowid order, rowids with
 * gaps (deleted rows), a task-level
 * action, a human audit action stored as 'other', logs, a wait's action. */
static const char V4_ROWS[] =
    "INSERT INTO tasks VALUES ('0000000a', 't', 'active', NULL, '{}', 1, 1);"
    "INSERT INTO plan_items (id, task_id, ordinal, title) VALUES ('1000000a', '0000000a', 0, 'log in');"
    "INSERT INTO actions (rowid, id, task_id, plan_item_id, action_type, summary, input_data, created_at)"
    " VALUES (3, 'ffff0001', '0000000a', '1000000a', 'gui', 'clicked', '{\"x\":1}', 10),"
    " (7, 'aaaa0002', '0000000a', NULL, 'other', 'human: click at (5, 6)', '{\"actor\":\"human\",\"x\":5,\"y\":6}', 11),"
    " (8, 'cccc0003', '0000000a', '1000000a', 'other', 'the agent''s own', '{\"actor\":\"agent\"}', 12),"
    " (12, 'bbbb0004', '0000000a', NULL, 'other', 'human: not json', 'not json', 13);"
    "INSERT INTO action_logs VALUES ('2000000a', 'ffff0001', 'info', 'exit 0', 20),"
    " ('2000000b', 'aaaa0002', 'info', 'second', 21), ('2000000c', 'ffff0001', 'error', 'third', 22);"
    "INSERT INTO wait_jobs (id, task_id, target, criteria, created_at, deadline_at, action_id)"
    " VALUES ('3000000a', '0000000a', 'screen', 'x', 1, 2, 'cccc0003');";

static char *
rows_of(struct store *st, sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;
	char *out = xstrdup(""), *next;

	if (sqlite3_prepare_v2(db ? db : store_db(st), sql, -1, &s, NULL) != SQLITE_OK)
		return out;
	while (sqlite3_step(s) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(s); i++) {
			const char *v = (const char *)sqlite3_column_text(s, i);

			next = xasprintf("%s%s%s", out, v ? v : "NULL", i + 1 < sqlite3_column_count(s) ? "|" : ";");
			free(out);
			out = next;
		}
	}
	sqlite3_finalize(s);
	return out;
}

static const char ACTION_ROWS[] =
    "SELECT rowid, id, task_id, plan_item_id, summary, status, input_data, created_at "
    "FROM actions ORDER BY rowid";
static const char LOG_ROWS[] = "SELECT rowid, * FROM action_logs ORDER BY rowid";

static void
test_migration_5_rebuilds_actions_keeping_every_row(void)
{
	sqlite3 *db = old_database(4);
	struct store *st = NULL;
	struct action_new a = { .type = "human", .summary = "human: pressed ctrl+l",
	    .status = "completed", .duration_ms = -1 };
	char *acts, *logs, *after, aid[ID_LEN];
	int64_t ord;
	struct derr e;

	CHECK(db != NULL);
	if (db == NULL)
		return;
	CHECK(sqlite3_exec(db, V4_ROWS, NULL, NULL, NULL) == SQLITE_OK);
	acts = rows_of(NULL, db, ACTION_ROWS);
	logs = rows_of(NULL, db, LOG_ROWS);
	sqlite3_close(db);
	CHECK(store_open(dbpath, false, &st, &e) == 0);
	if (st == NULL) {
		fprintf(stderr, "    store_open: %s\n", e.message);
		goto out;
	}
	CHECK(store_schema_version(st) == SCHEMA_LATEST);
	after = rows_of(st, NULL, ACTION_ROWS);
	CHECK(strncmp(acts, "3|ffff0001|", 11) == 0 && strstr(acts, ";12|bbbb0004|") != NULL);
	CHECK(strcmp(after, acts) == 0);            /* rowids, ids, items, text: all kept */
	free(after);
	after = rows_of(st, NULL, LOG_ROWS);
	CHECK(strcmp(after, logs) == 0 && count(st, "SELECT count(*) FROM action_logs") == 3);
	free(after);
	after = rows_of(st, NULL, "SELECT id, action_type FROM actions ORDER BY rowid");
	CHECK(strcmp(after, "ffff0001|gui;aaaa0002|human;cccc0003|other;bbbb0004|other;") == 0);
	free(after);
	CHECK(count(st, "SELECT count(*) FROM wait_jobs WHERE action_id = 'cccc0003'") == 1);
	CHECK(count(st, "PRAGMA foreign_keys") == 1);
	CHECK(count(st, "SELECT count(*) FROM pragma_foreign_key_check") == 0);
	CHECK(count(st, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'actions' "
	    "AND name IN ('actions_task_item', 'actions_item')") == 2);
	CHECK(count(st, "SELECT count(*) FROM sqlite_master WHERE name = 'actions_new'") == 0);
	CHECK(task_action_add(st, "0000000a", &a, aid, &ord, &e) == 0);     /* 'human' is allowed */
	a.type = "bogus";
	CHECK(task_action_add(st, "0000000a", &a, aid, &ord, &e) != 0);     /* the CHECK still holds */
	CHECK(sqlite3_exec(store_db(st), "DELETE FROM actions WHERE id = 'ffff0001'", NULL, NULL, NULL)
	    == SQLITE_OK);                          /* the logs still cascade from the new table */
	CHECK(count(st, "SELECT count(*) FROM action_logs") == 1);
	CHECK(sqlite3_exec(store_db(st), "INSERT INTO action_logs VALUES ('2000000d', 'nosuchid', "
	    "'info', 'x', 1)", NULL, NULL, NULL) != SQLITE_OK);    /* and are enforced */
	after = rows_of(st, NULL, "SELECT id FROM actions WHERE task_id = '0000000a' ORDER BY rowid");
	CHECK(strncmp(after, "aaaa0002;cccc0003;bbbb0004;", 27) == 0);
	free(after);
out:
	free(acts);
	free(logs);
	cleanup(st);
}

static void
test_migration_5_refuses_to_commit_broken_foreign_keys(void)
{
	sqlite3 *db = old_database(4);
	struct store *st = NULL;
	struct derr e;

	CHECK(db != NULL);
	if (db == NULL)
		return;
	CHECK(sqlite3_exec(db, V4_ROWS, NULL, NULL, NULL) == SQLITE_OK);
	/* A log whose action is gone, written with foreign keys off. */
	CHECK(sqlite3_exec(db, "PRAGMA foreign_keys = OFF; INSERT INTO action_logs VALUES "
	    "('2000000e', 'deadbeef', 'info', 'orphan', 30)", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	derr_clear(&e);
	CHECK(store_open(dbpath, false, &st, &e) != 0 && st == NULL);
	CHECK(strstr(e.message, "foreign key") != NULL && strstr(e.message, "not changed") != NULL);
	CHECK(sqlite3_open(dbpath, &db) == SQLITE_OK);
	CHECK(count_db(db, "PRAGMA user_version") == 4);
	CHECK(count_db(db, "SELECT count(*) FROM actions") == 4);
	CHECK(count_db(db, "SELECT count(*) FROM action_logs") == 4);
	CHECK(count_db(db, "SELECT count(*) FROM sqlite_master WHERE name = 'actions_new'") == 0);
	sqlite3_close(db);
	cleanup(NULL);
}

/* OpenEphemeral instructions in the program of sql (-1: it does not compile). */
static int
ephemeral_ops(sqlite3 *db, const char *sql)
{
	char *explain = xasprintf("EXPLAIN %s", sql);
	sqlite3_stmt *s = NULL;
	int n = 0;

	if (sqlite3_prepare_v2(db, explain, -1, &s, NULL) != SQLITE_OK)
		n = -1;
	while (n >= 0 && sqlite3_step(s) == SQLITE_ROW)
		n += strcmp((const char *)sqlite3_column_text(s, 1), "OpenEphemeral") == 0;
	sqlite3_finalize(s);
	free(explain);
	return n;
}

/* Whether setting table.col to v on its first row passes its CHECK (the
 * change is rolled back). */
static bool
check_allows(sqlite3 *db, const char *table, const char *col, const char *v)
{
	char *sql = xasprintf("SAVEPOINT c; UPDATE %s SET %s = '%s' WHERE rowid = "
	    "(SELECT min(rowid) FROM %s);", table, col, v, table);
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	sqlite3_exec(db, "ROLLBACK TO c; RELEASE c", NULL, NULL, NULL);
	free(sql);
	return rc == SQLITE_OK;
}

/* Migration 6 rewrites every CHECK (x IN (...)) as an OR chain by editing
 * the table text: the same values pass and fail, rows and the schema stay
 * sound, and an action's or message's INSERT no longer builds temporary
 * b-trees. */
static void
test_migration_6_keeps_every_check_without_temporary_btrees(void)
{
	static const struct {
		const char *table, *col, *ok[8];
	} checks[] = {
		{ "tasks", "status", { "active", "paused", "completed", "failed", "cancelled" } },
		{ "plan_items", "status", { "pending", "active", "completed", "failed", "skipped", "scrapped" } },
		{ "actions", "action_type", { "cli", "gui", "wait", "vision", "reasoning", "other", "human" } },
		{ "actions", "status", { "started", "completed", "failed" } },
		{ "task_messages", "role", { "agent", "user", "wait", "system", "error" } },
		{ "wait_jobs", "status", { "watching", "resolved", "timed_out", "cancelled", "failed" } },
	};
	static const char *const bad[] = { "bogus", "", "Active", "cli " };
	sqlite3 *db = old_database(5);
	struct store *st = NULL;
	struct derr e;
	char *acts = NULL, *after;
	int64_t cookie;
	size_t i, j;

	CHECK(db != NULL);
	if (db == NULL)
		return;
	CHECK(sqlite3_exec(db, V4_ROWS, NULL, NULL, NULL) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "INSERT INTO task_messages VALUES ('4000000a', '0000000a', 'agent', "
	    "'text', 'hi', 5)", NULL, NULL, NULL) == SQLITE_OK);
	CHECK(ephemeral_ops(db, "INSERT INTO actions (id, task_id, action_type, summary, created_at) "
	    "VALUES ('a', '0000000a', 'cli', 's', 1)") > 0);     /* what migration 6 is for */
	acts = rows_of(NULL, db, ACTION_ROWS);
	cookie = count_db(db, "PRAGMA schema_version");
	sqlite3_close(db);
	CHECK(store_open(dbpath, false, &st, &e) == 0);
	if (st == NULL) {
		fprintf(stderr, "    store_open: %s\n", e.message);
		goto out;
	}
	db = store_db(st);
	CHECK(store_schema_version(st) == SCHEMA_LATEST);
	CHECK(count(st, "PRAGMA schema_version") > cookie);
	after = rows_of(st, NULL, "PRAGMA integrity_check");
	CHECK(strcmp(after, "ok;") == 0);
	free(after);
	after = rows_of(st, NULL, ACTION_ROWS);
	CHECK(strcmp(after, acts) == 0);
	free(after);
	CHECK(count(st, "SELECT count(*) FROM sqlite_master WHERE sql LIKE '% IN (''%'") == 0);
	CHECK(ephemeral_ops(db, "INSERT INTO actions (id, task_id, action_type, summary, created_at) "
	    "VALUES ('a', '0000000a', 'cli', 's', 1)") == 0);
	CHECK(ephemeral_ops(db, "INSERT INTO task_messages (id, task_id, role, content, created_at) "
	    "VALUES ('b', '0000000a', 'agent', 'x', 1)") == 0);
	for (i = 0; i < sizeof checks / sizeof checks[0]; i++) {
		for (j = 0; j < 8 && checks[i].ok[j] != NULL; j++)
			CHECK(check_allows(db, checks[i].table, checks[i].col, checks[i].ok[j]));
		for (j = 0; j < sizeof bad / sizeof bad[0]; j++)
			CHECK(!check_allows(db, checks[i].table, checks[i].col, bad[j]));
	}
	CHECK(count(st, "SELECT count(*) FROM actions") == 4);
out:
	free(acts);
	cleanup(st);
}

/* The writing connection is SQLite's own unix VFS (no shim of ours): a
 * transaction larger than the page cache (frames spilled before the
 * commit, some rewritten), then many small ones, read back by a plain
 * connection while the store is open and again after it reopens, with
 * integrity_check. */
static void
test_store_writes_through_sqlites_vfs_and_loses_nothing(void)
{
	struct store *st = fresh_store();
	sqlite3 *rd = NULL;
	sqlite3_vfs *vfs = NULL;
	struct derr e;
	char *after;
	int i, rc = SQLITE_OK;

	if (st == NULL)
		return;
	CHECK(sqlite3_file_control(store_db(st), "main", SQLITE_FCNTL_VFS_POINTER, &vfs) == SQLITE_OK);
	CHECK(vfs != NULL && vfs == sqlite3_vfs_find(NULL));
	store_lock(st);
	CHECK(sqlite3_exec(store_db(st), "PRAGMA cache_size = -512; CREATE TABLE big (k INTEGER PRIMARY KEY, "
	    "v BLOB); BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500) "
	    "INSERT INTO big SELECT i, randomblob(3000) FROM n; UPDATE big SET v = zeroblob(2000) WHERE k % 7 = 0; "
	    "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
	for (i = 0; i < 300 && rc == SQLITE_OK; i++)
		rc = sqlite3_exec(store_db(st), "INSERT INTO big (v) VALUES (randomblob(100))", NULL, NULL, NULL);
	CHECK(rc == SQLITE_OK);
	store_unlock(st);
	CHECK(sqlite3_open_v2(dbpath, &rd, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	after = rows_of(NULL, rd, "SELECT count(*), sum(length(v)), sum(k % 7 = 0 AND v = zeroblob(2000)) FROM big");
	CHECK(strcmp(after, "1800|4316000|214;") == 0);
	free(after);
	after = rows_of(NULL, rd, "PRAGMA integrity_check");
	CHECK(strcmp(after, "ok;") == 0);
	free(after);
	sqlite3_close(rd);
	store_close(st);
	st = NULL;
	CHECK(store_open(dbpath, false, &st, &e) == 0);
	if (st != NULL) {
		after = rows_of(st, NULL, "SELECT count(*), sum(length(v)) FROM big");
		CHECK(strcmp(after, "1800|4316000;") == 0);
		free(after);
	}
	cleanup(st);
}

static void
test_store_refuses_a_database_from_a_newer_detmd(void)
{
	struct store *st = fresh_store(), *st2 = NULL;
	struct derr e;

	if (st == NULL)
		return;
	sqlite3_exec(store_db(st), "PRAGMA user_version = 99", NULL, NULL, NULL);
	store_close(st);
	derr_clear(&e);
	CHECK(store_open(dbpath, false, &st2, &e) != 0);
	CHECK(st2 == NULL);
	CHECK(strstr(e.message, "newer") != NULL);
	cleanup(NULL);
}

static void
test_item_status_machine_fills_clock_fields(void)
{
	struct store *st = fresh_store();
	struct item_patch p = { .status = ITEM_ACTIVE };
	struct derr e;
	json_object *sum;
	char id[ID_LEN];

	if (st == NULL)
		return;
	CHECK(reg(st, "[\"a\",\"b\",\"c\"]", id) == 0);
	p.status = ITEM_ACTIVE;
	CHECK(task_item_update(st, id, 1, &p, &e) == 0);
	p.status = ITEM_COMPLETED;
	CHECK(task_item_update(st, id, 1, &p, &e) == 0);
	CHECK(task_item_update(st, id, 7, &p, &e) == -1 && e.code == DERR_NOT_FOUND);
	p.status = ITEM_ACTIVE;
	CHECK(task_item_update(st, id, 1, &p, &e) == -1 && e.code == DERR_CONFLICT);
	CHECK(strstr(e.message, "completed") && strstr(e.message, "active"));
	p.status = ITEM_COMPLETED;                 /* straight from pending */
	CHECK(task_item_update(st, id, 2, &p, &e) == 0);
	sum = task_summary(st, id, DETAIL_ITEMS, false, &e);
	CHECK(sum != NULL);
	CHECK(strcmp(jstr(sum, "items.1.status"), "completed") == 0);
	CHECK(jstr(sum, "items.1.started_at") != NULL && jstr(sum, "items.1.completed_at") != NULL);
	CHECK(jstr(sum, "items.1.duration_s") != NULL);
	CHECK(jstr(sum, "items.0.duration_s") == NULL);
	CHECK(strcmp(jstr(sum, "items.2.status"), "completed") == 0);
	CHECK(jstr(sum, "items.2.duration_s") != NULL && atof(jstr(sum, "items.2.duration_s")) == 0.0);
	CHECK(strcmp(jstr(sum, "progress_pct"), "67") == 0);
	json_object_put(sum);
	cleanup(st);
}

static void
test_task_terminal_states_are_final(void)
{
	struct store *st = fresh_store();
	struct task_patch p = { .status = TASK_COMPLETED };
	struct derr e;
	char id[ID_LEN];

	if (st == NULL)
		return;
	CHECK(reg(st, NULL, id) == 0);
	CHECK(task_update(st, id, &p, &e) == 0);
	p.status = TASK_ACTIVE;
	CHECK(task_update(st, id, &p, &e) == -1 && e.code == DERR_CONFLICT);
	CHECK(task_control(st, id, TASK_CANCELLED, NULL, &e) == -1 && e.code == DERR_CONFLICT);
	p.status = TASK_COMPLETED;
	CHECK(task_update(st, id, &p, &e) == 0);           /* same state: no-op */
	CHECK(task_update(st, "nope0000", &p, &e) == -1 && e.code == DERR_NOT_FOUND);
	cleanup(st);
}

static void
test_actions_default_to_the_current_item(void)
{
	struct store *st = fresh_store();
	struct action_new a = { .type = "cli", .summary = "s", .duration_ms = -1 };
	struct item_patch p = { .status = ITEM_ACTIVE };
	struct derr e;
	char id[ID_LEN], aid[ID_LEN];
	int64_t ord;

	if (st == NULL)
		return;
	CHECK(reg(st, "[\"a\",\"b\",\"c\"]", id) == 0);
	CHECK(task_action_add(st, id, &a, aid, &ord, &e) == 0 && ord == 0);   /* first pending */
	CHECK(task_item_update(st, id, 2, &p, &e) == 0);
	CHECK(task_action_add(st, id, &a, aid, &ord, &e) == 0 && ord == 2);   /* first active */
	a.has_ordinal = true;
	a.ordinal = 1;
	CHECK(task_action_add(st, id, &a, aid, &ord, &e) == 0 && ord == 1);
	a.ordinal = 9;
	CHECK(task_action_add(st, id, &a, aid, &ord, &e) == -1 && e.code == DERR_INVALID);
	CHECK(count(st, "SELECT count(*) FROM actions") == 3);
	cleanup(st);
}

static void
test_delete_removes_the_whole_tree(void)
{
	struct store *st = fresh_store();
	struct action_new a = { .type = "gui", .summary = "s", .duration_ms = -1 };
	struct derr e;
	char id[ID_LEN], keep[ID_LEN], aid[ID_LEN], lid[ID_LEN];
	int64_t ord;

	if (st == NULL)
		return;
	CHECK(reg(st, "[\"a\"]", id) == 0);
	CHECK(reg(st, "[\"a\"]", keep) == 0);
	a.logs = json_tokener_parse("[{\"content\":\"x\"},{\"log_type\":\"t\",\"content\":\"y\"}]");
	CHECK(task_action_add(st, id, &a, aid, &ord, &e) == 0);
	CHECK(task_action_add(st, keep, &a, aid, &ord, &e) == 0);
	CHECK(task_log_add(st, keep, aid, "info", "z", lid, &e) == 0);
	json_object_put(a.logs);
	CHECK(task_delete(st, id, &e) == 0);
	CHECK(task_delete(st, id, &e) == -1 && e.code == DERR_NOT_FOUND);
	CHECK(count(st, "SELECT count(*) FROM tasks") == 1);
	CHECK(count(st, "SELECT count(*) FROM plan_items") == 1);
	CHECK(count(st, "SELECT count(*) FROM actions") == 1);
	CHECK(count(st, "SELECT count(*) FROM action_logs") == 3);
	CHECK(count(st, "SELECT count(*) FROM task_messages WHERE task_id = '" "x" "'") == 0);
	CHECK(count(st, "SELECT count(*) FROM task_messages") == 1);
	cleanup(st);
}

static void
test_metadata_merges_and_null_removes(void)
{
	struct store *st = fresh_store();
	struct task_patch p = { .status = -1 };
	struct derr e;
	json_object *sum;
	char id[ID_LEN];

	if (st == NULL)
		return;
	CHECK(reg(st, NULL, id) == 0);
	p.metadata = json_tokener_parse("{\"a\":1,\"b\":2}");
	CHECK(task_update(st, id, &p, &e) == 0);
	json_object_put(p.metadata);
	p.metadata = json_tokener_parse("{\"a\":null,\"c\":3}");
	CHECK(task_update(st, id, &p, &e) == 0);
	json_object_put(p.metadata);
	sum = task_summary(st, id, DETAIL_ITEMS, false, &e);
	CHECK(sum != NULL && jstr(sum, "metadata.a") == NULL);
	CHECK(sum != NULL && strcmp(jstr(sum, "metadata.b"), "2") == 0);
	CHECK(sum != NULL && strcmp(jstr(sum, "metadata.c"), "3") == 0);
	json_object_put(sum);
	cleanup(st);
}

static void
test_plan_append_continues_ordinals(void)
{
	struct store *st = fresh_store();
	struct derr e;
	json_object *titles, *added = NULL;
	char id[ID_LEN];

	if (st == NULL)
		return;
	CHECK(reg(st, "[\"a\"]", id) == 0);        /* max ordinal 0: the Python bug case */
	titles = json_tokener_parse("[\"b\",\"c\"]");
	CHECK(task_items_append(st, id, titles, NULL, &added, &e) == 0);
	CHECK(added != NULL && strcmp(jstr(added, "0.ordinal"), "1") == 0);
	CHECK(added != NULL && strcmp(jstr(added, "1.ordinal"), "2") == 0);
	json_object_put(added);
	json_object_put(titles);
	cleanup(st);
}

static long long
file_size(const char *suffix)
{
	char p[160];
	struct stat sb;

	snprintf(p, sizeof p, "%s%s", dbpath, suffix);
	return stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* The background checkpointer must copy the WAL into the database while
 * detmd runs and restart it under a steady stream of commits (it once did
 * neither: the WAL grew by every commit until detmd stopped). */
static void
test_wal_is_checkpointed_and_bounded_under_load(void)
{
	struct store *st = fresh_store();
	sqlite3_stmt *s = NULL;
	long long wal_max = 0, w;
	int i, rc = SQLITE_OK;

	if (st == NULL)
		return;
	store_lock(st);
	CHECK(sqlite3_exec(store_db(st), "CREATE TABLE blobs (b BLOB)", NULL, NULL, NULL) == SQLITE_OK);
	CHECK(sqlite3_prepare_v2(store_db(st), "INSERT INTO blobs VALUES (zeroblob(3000))", -1, &s,
	    NULL) == SQLITE_OK);
	store_unlock(st);
	/* One commit each, as requests do, at most ~10k a second (the HTTP
	 * server's ceiling): 12000 pages, ~48 MB of WAL if never restarted. */
	for (i = 0; i < 12000 && rc == SQLITE_OK; i++) {
		store_lock(st);
		rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(s);
		store_unlock(st);
		usleep(100);
		if (i % 200 == 0 && (w = file_size("-wal")) > wal_max)
			wal_max = w;
	}
	CHECK(rc == SQLITE_OK);
	sqlite3_finalize(s);
	/* the checkpointer's tick copies the rest (up to 20 s on a busy machine) */
	for (i = 0; i < 1000 && file_size("") < 40LL * 1024 * 1024; i++)
		usleep(20000);
	CHECK(file_size("") >= 40LL * 1024 * 1024);   /* the rows reached the database file */
	fprintf(stderr, "    WAL at most %lld bytes during 12000 commits\n", wal_max);
	CHECK(wal_max > 0 && wal_max <= 32LL * 1024 * 1024);
	cleanup(st);
}

/* Group commit: 16 writers, bodies that succeed, fail after a write, or
 * hit a real constraint error after a write, all through store_tx, and a
 * reader on the read pool meanwhile. */
#define GC_THREADS 16
#define GC_WRITES 300

struct gc_arg {
	struct store *st;
	int k, ok, bad_rc;
};

struct gc_body {
	int k, n;
};

static const char SQL_GC_INSERT[] =
    "INSERT INTO tasks (id, name, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)";

static int
gc_insert(struct store *st, const char *id, int kind, int64_t now, struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_GC_INSERT);
	char name[8];

	snprintf(name, sizeof name, "%d", kind);
	if (s != NULL) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(s, 3, now);
	}
	return store_exec(st, s, "gc insert", e);
}

static int
gc_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	struct gc_body *b = arg;
	char id[ID_LEN];
	int kind = b->n % 3;

	snprintf(id, sizeof id, "%02x%06x", (unsigned)b->k, (unsigned)b->n);
	if (gc_insert(st, id, kind, now, e) != 0)
		return -1;
	if (kind == 1)
		return derr_set(e, DERR_INVALID, NULL, "fails after a write");
	if (kind == 2)
		return gc_insert(st, id, kind, now, e);     /* primary key taken */
	return 0;
}

static int gc_acked;        /* successful writes acknowledged so far (atomic) */
static int gc_stop;         /* the writers are done (atomic) */

struct gc_reader {
	struct store *st;
	int reads, uncommitted_seen, acked_missing, went_back;
};

static int64_t
reader_count(struct store *rd, const char *sql)
{
	sqlite3_stmt *s = store_stmt(rd, sql);
	int64_t n = -1;

	if (s != NULL && sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	if (s != NULL)
		sqlite3_reset(s);
	return n;
}

/* Reads during the storm: never a row of a failed body (they exist only
 * inside an uncommitted batch), always every write acknowledged before the
 * read began, never fewer rows than the read before. */
static void *
gc_read(void *p)
{
	static const char SQL_OK[] = "SELECT count(*) FROM tasks WHERE name = '0'";
	static const char SQL_BAD[] = "SELECT count(*) FROM tasks WHERE name != '0'";
	struct gc_reader *g = p;
	int64_t last = 0;

	while (!__atomic_load_n(&gc_stop, __ATOMIC_ACQUIRE)) {
		int acked = __atomic_load_n(&gc_acked, __ATOMIC_ACQUIRE);
		struct store *rd = store_read_begin(g->st);
		int64_t n = reader_count(rd, SQL_OK);

		if (reader_count(rd, SQL_BAD) != 0)
			g->uncommitted_seen++;
		store_read_end(rd);
		if (n < acked)
			g->acked_missing++;
		if (n < last)
			g->went_back++;
		last = n;
		g->reads++;
	}
	return NULL;
}

static void *
gc_writer(void *p)
{
	struct gc_arg *a = p;
	struct gc_body b = { .k = a->k };
	struct derr e;

	for (b.n = 0; b.n < GC_WRITES; b.n++) {
		int rc;

		derr_clear(&e);
		rc = store_tx(a->st, gc_tx, &b, &e);
		if (rc == 0 && b.n % 3 == 0) {
			a->ok++;
			__atomic_add_fetch(&gc_acked, 1, __ATOMIC_RELEASE);
		}
		else if ((rc == 0) != (b.n % 3 == 0))
			a->bad_rc++;
	}
	return NULL;
}

static void
test_group_commit_isolates_failing_writes(void)
{
	struct store *st = fresh_store();
	struct gc_arg args[GC_THREADS];
	struct gc_reader rdr = { .st = st };
	pthread_t th[GC_THREADS], rth;
	uint64_t writes, commits;
	int i, ok = 0, bad = 0;

	CHECK(st != NULL);
	if (st == NULL)
		return;
	gc_acked = gc_stop = 0;
	CHECK(pthread_create(&rth, NULL, gc_read, &rdr) == 0);
	for (i = 0; i < GC_THREADS; i++) {
		args[i] = (struct gc_arg){ .st = st, .k = i };
		CHECK(pthread_create(&th[i], NULL, gc_writer, &args[i]) == 0);
	}
	for (i = 0; i < GC_THREADS; i++) {
		pthread_join(th[i], NULL);
		ok += args[i].ok;
		bad += args[i].bad_rc;
	}
	__atomic_store_n(&gc_stop, 1, __ATOMIC_RELEASE);
	pthread_join(rth, NULL);
	store_tx_stats(st, &writes, &commits);
	fprintf(stderr, "    %llu writes in %llu commits, %d reads during them\n",
	    (unsigned long long)writes, (unsigned long long)commits, rdr.reads);
	CHECK(rdr.reads > 0);
	CHECK(rdr.uncommitted_seen == 0);
	CHECK(rdr.acked_missing == 0);
	CHECK(rdr.went_back == 0);
	CHECK(bad == 0);                    /* each body's own result, no other's */
	CHECK(ok == GC_THREADS * ((GC_WRITES + 2) / 3));
	CHECK(count(st, "SELECT count(*) FROM tasks WHERE name = '0'") == ok);
	CHECK(count(st, "SELECT count(*) FROM tasks WHERE name != '0'") == 0);
	CHECK(writes == (uint64_t)GC_THREADS * GC_WRITES);
	CHECK(commits > 0 && commits < writes);     /* batches of more than one */
	/* store_now per body, in commit order: time never goes back. */
	CHECK(count(st, "SELECT count(*) FROM tasks a JOIN tasks b ON b.rowid = a.rowid + 1 "
	    "WHERE b.created_at < a.created_at") == 0);
	cleanup(st);
}

/* Nowait mode (an HTTP worker, nowait.h): a write is refused before its
 * body runs while the lock is held for a WAL restart, and goes through
 * otherwise. A reader on an older snapshot keeps the restart waiting
 * (SQLite's busy handler, up to 5 s), so the window is not left to timing. */
static int nw_restarted;    /* atomic */

static void *
nw_restart(void *p)
{
	(void)store_restart_wal(p);
	__atomic_store_n(&nw_restarted, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int
nw_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	int *runs = arg;
	char id[ID_LEN];

	(*runs)++;
	snprintf(id, sizeof id, "nw%05d", *runs % 100000);
	return gc_insert(st, id, 0, now, e);
}

static void
test_nowait_write_refused_only_while_the_wal_restarts(void)
{
	struct store *st = fresh_store(), *rd;
	struct derr e = { 0 };
	pthread_t th;
	int runs = 0, i, rc;
	bool refused = false, bad = false;

	if (st == NULL)
		return;
	CHECK(store_tx(st, nw_tx, &runs, &e) == 0);
	rd = store_read_begin(st);
	CHECK(reader_count(rd, "SELECT count(*) FROM tasks") == 1);
	CHECK(store_tx(st, nw_tx, &runs, &e) == 0);     /* past the reader's snapshot */
	nw_restarted = 0;
	CHECK(pthread_create(&th, NULL, nw_restart, st) == 0);
	for (i = 0; i < 3000 && !refused; i++) {
		int before = runs;

		derr_clear(&e);
		nowait_begin();
		rc = store_tx(st, nw_tx, &runs, &e);
		refused = nowait_end();
		if (refused)
			bad |= rc != -1 || runs != before || strstr(e.message, "restarting") == NULL;
		else
			bad |= rc != 0 || runs != before + 1;
		if (!refused)
			usleep(1000);
	}
	CHECK(refused);         /* while the restart waited for the reader */
	CHECK(!bad);            /* refused before the body, or ran and committed */
	CHECK(!__atomic_load_n(&nw_restarted, __ATOMIC_ACQUIRE));
	store_read_end(rd);
	pthread_join(th, NULL);
	derr_clear(&e);
	nowait_begin();
	CHECK(store_tx(st, nw_tx, &runs, &e) == 0);
	CHECK(!nowait_end());   /* the restart is over: no refusal */
	CHECK(count(st, "SELECT count(*) FROM tasks") == runs);
	cleanup(st);
}

const struct harness_test store_tests[] = {
	{ "nowait_write_refused_only_while_the_wal_restarts",
	    test_nowait_write_refused_only_while_the_wal_restarts },
	{ "group_commit_isolates_failing_writes", test_group_commit_isolates_failing_writes },
	{ "wal_is_checkpointed_and_bounded_under_load", test_wal_is_checkpointed_and_bounded_under_load },
	{ "store_applies_migrations_once_and_reopens", test_store_applies_migrations_once_and_reopens },
	{ "migration_5_rebuilds_actions_keeping_every_row", test_migration_5_rebuilds_actions_keeping_every_row },
	{ "migration_5_refuses_to_commit_broken_foreign_keys", test_migration_5_refuses_to_commit_broken_foreign_keys },
	{ "store_writes_through_sqlites_vfs_and_loses_nothing", test_store_writes_through_sqlites_vfs_and_loses_nothing },
	{ "migration_6_keeps_every_check_without_temporary_btrees",
	  test_migration_6_keeps_every_check_without_temporary_btrees },
	{ "store_refuses_a_database_from_a_newer_detmd", test_store_refuses_a_database_from_a_newer_detmd },
	{ "item_status_machine_fills_clock_fields", test_item_status_machine_fills_clock_fields },
	{ "task_terminal_states_are_final", test_task_terminal_states_are_final },
	{ "actions_default_to_the_current_item", test_actions_default_to_the_current_item },
	{ "delete_removes_the_whole_tree", test_delete_removes_the_whole_tree },
	{ "metadata_merges_and_null_removes", test_metadata_merges_and_null_removes },
	{ "plan_append_continues_ordinals", test_plan_append_continues_ordinals },
	{ NULL, NULL },
};
