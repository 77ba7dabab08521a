/*
 * dump.c - the central dump's entries (dump.h). Windows: a task is in it
 * when it was alive in [since, until] (created before until, updated after
 * since); actions, logs and messages when they were written in it; waits
 * when they were watching during it.
 */
#include "dump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "opsdata.h"

static const char SQL_TASKS[] =
    "SELECT t.id, t.name, t.status, t.agent_id, t.created_at, t.updated_at, "
    "(SELECT count(*) FROM plan_items WHERE task_id = t.id) AS plan_items, "
    "(SELECT count(*) FROM actions WHERE task_id = t.id) AS actions, t.metadata "
    "FROM tasks t WHERE t.updated_at >= ?2 AND t.created_at <= ?3 ORDER BY t.created_at";
static const char SQL_ACTIONS[] =
    "SELECT a.id, a.task_id, p.ordinal, a.action_type, a.status, a.summary, a.duration_ms, "
    "a.created_at, a.input_data, a.output_data FROM actions a LEFT JOIN plan_items p "
    "ON p.id = a.plan_item_id WHERE a.created_at BETWEEN ?2 AND ?3 ORDER BY a.rowid";
static const char SQL_LOGS[] =
    "SELECT l.action_id, a.task_id, l.id, l.log_type, l.created_at, l.content FROM action_logs l "
    "JOIN actions a ON a.id = l.action_id WHERE l.created_at BETWEEN ?2 AND ?3 ORDER BY l.rowid";
static const char SQL_MESSAGES[] =
    "SELECT id, task_id, role, msg_type, created_at, content FROM task_messages "
    "WHERE created_at BETWEEN ?2 AND ?3 ORDER BY rowid";
static const char SQL_WAITS[] =
    "SELECT * FROM wait_jobs WHERE created_at <= ?3 AND coalesce(resolved_at, deadline_at) >= ?2 "
    "ORDER BY rowid";
static const char SQL_ERRORS[] =
    "SELECT updated_at, 'task ' || id || ' failed: ' || name FROM tasks "
    "  WHERE status = 'failed' AND updated_at BETWEEN ?2 AND ?3 "
    "UNION ALL SELECT created_at, 'action ' || id || ' of task ' || task_id || ' failed (' || "
    "  action_type || '): ' || summary || coalesce(' -> ' || output_data, '') FROM actions "
    "  WHERE status = 'failed' AND created_at BETWEEN ?2 AND ?3 "
    "UNION ALL SELECT coalesce(resolved_at, created_at), 'wait ' || id || ' of task ' || "
    "  coalesce(task_id, '-') || ' ' || status || ': ' || coalesce(reason, '') FROM wait_jobs "
    "  WHERE status IN ('failed', 'timed_out') AND coalesce(resolved_at, created_at) BETWEEN ?2 AND ?3 "
    "UNION ALL SELECT created_at, 'error message in task ' || task_id || ': ' || content "
    "  FROM task_messages WHERE role = 'error' AND created_at BETWEEN ?2 AND ?3 "
    "ORDER BY 1";

struct counts {
	long tasks, actions, logs, messages, waits, usage, errors, log_lines;
	char usage_table[128];
};

static int
csv_entry(struct zipout *z, sqlite3 *db, const char *name, const char *sql,
    const struct dump_job *j, long *count)
{
	struct opsbind b = { NULL, j->since_ms, j->until_ms };

	if (zipout_begin(z, name, -1, true, 0) != 0)
		return -1;
	*count = db != NULL ? opsdata_csv(db, sql, &b, z, j->rd) :
	    (zipout_printf(z, "error\r\nthe database could not be opened\r\n") ? -1 : 0);
	return *count < 0 || zipout_end(z) != 0 ? -1 : 0;
}

static int
usage_entry(struct zipout *z, sqlite3 *db, const struct dump_job *j, struct counts *c)
{
	char *sql;
	int rc;

	if (db == NULL || !opsdata_usage_table(db, c->usage_table, sizeof c->usage_table)) {
		c->usage_table[0] = '\0';
		return zipout_add_mem(z, "usage.csv", "note\r\nthis database has no usage table\r\n", 40);
	}
	sql = opsdata_has_column(db, c->usage_table, "created_at")
	    ? xasprintf("SELECT * FROM \"%s\" WHERE created_at BETWEEN ?2 AND ?3 ORDER BY rowid", c->usage_table)
	    : xasprintf("SELECT * FROM \"%s\" ORDER BY rowid", c->usage_table);
	rc = csv_entry(z, db, "usage.csv", sql, j, &c->usage);
	free(sql);
	return rc;
}

static int
errors_entry(struct zipout *z, sqlite3 *db, const struct dump_job *j, struct counts *c)
{
	struct opsbind b = { NULL, j->since_ms, j->until_ms };
	long n = 0, m;

	if (zipout_begin(z, "ERRORS.log", -1, true, 0) != 0 ||
	    zipout_printf(z, "# Failed tasks, actions and waits, and error messages, from the database:\n") != 0)
		return -1;
	if (db != NULL && (n = opsdata_lines(db, SQL_ERRORS, &b, z, j->rd)) < 0)
		return -1;
	if (zipout_printf(z, "\n# ERROR and WARN lines of the daemon log:\n") != 0 ||
	    (m = opsdata_log(j->data_dir, j->since_ms, j->until_ms, true, z, j->rd)) < 0)
		return -1;
	c->errors = n + m;
	return zipout_end(z);
}

static int
manifest(struct zipout *z, const struct dump_job *j, const struct counts *c)
{
	char since[ISO_TIME_LEN], until[ISO_TIME_LEN], now[ISO_TIME_LEN];
	size_t i;

	iso_time(j->since_ms, since);
	iso_time(j->until_ms, until);
	iso_time(now_ms(), now);
	if (zipout_begin(z, "MANIFEST.md", -1, true, 0) != 0 ||
	    zipout_printf(z, "# detm dump\n\nMade %s by detmd %s from the data dir `%s`.\n"
	        "Window: %s to %s (UTC).\n\n"
	        "## Files\n\n"
	        "| file | rows | what it holds |\n|---|---|---|\n"
	        "| `ERRORS.log` | %ld | start here: failed tasks, failed actions (with their output), failed or timed-out waits, error messages in task threads, then the log's ERROR and WARN lines; each line starts with its UTC time |\n"
	        "| `tasks.csv` | %ld | tasks alive in the window: id, name, status (active, paused, completed, failed, cancelled), agent, times, plan items and actions counted, metadata (JSON) |\n"
	        "| `actions.csv` | %ld | actions written in the window: id, task_id, plan item ordinal (0-based; empty for task-level), action_type (cli, gui, wait, vision, reasoning, other), status, summary, duration_ms, input_data and output_data (JSON) |\n"
	        "| `action_logs.csv` | %ld | log lines attached to actions (action_id, task_id) |\n"
	        "| `messages.csv` | %ld | task threads: role (agent, user = the operator, wait, system, error), msg_type (text, lifecycle, control, ...), content |\n"
	        "| `waits.csv` | %ld | smart waits watching during the window: target, criteria (the condition), status, verdict, reason, evaluations made and skipped by the change gate, backend, tokens |\n"
	        "| `usage.csv` | %ld | model calls (provider, model, tokens, cost) from table `%s` |\n"
	        "| `logs/detmd.log` | %ld | the daemon log (`logs/debug.log`) lines of the window: `time LEVEL function: message` |\n\n"
	        "Join files on task_id / action_id (8 hex digits). Times are ISO-8601 UTC.\n\n"
	        "## How to read it\n\n"
	        "1. Read `ERRORS.log` for what went wrong and when.\n"
	        "2. Find the task in `tasks.csv`, then its thread in `messages.csv` (the agent's and operator's own words) and its steps in `actions.csv`.\n"
	        "3. Match times against `logs/detmd.log` for what the daemon did around them (model calls, displays, wake-ups).\n\n"
	        "## Redaction\n\nSecrets were replaced by `[REDACTED]` (a short prefix such as `sk-ant-` or `Bearer ` is kept) in every file: "
	        "the daemon's token and configured API keys wherever they appear, and these patterns:\n\n",
	        now, DETM_VERSION, j->data_dir, since, until, c->errors, c->tasks, c->actions, c->logs,
	        c->messages, c->waits, c->usage, c->usage_table[0] ? c->usage_table : "(none in this database)",
	        c->log_lines) != 0)
		return -1;
	for (i = 0; redact_pattern_name(i) != NULL; i++)
		if (zipout_printf(z, "- %s\n", redact_pattern_name(i)) != 0)
			return -1;
	if (zipout_printf(z, "\nRedaction is pattern-based: review before sharing further.\n") != 0)
		return -1;
	return zipout_end(z);
}

int
dump_build(struct zipout *z, void *arg)
{
	struct dump_job *j = arg;
	struct counts c;
	char err[256] = "";
	sqlite3 *db = opsdata_open(j->data_dir, err, sizeof err);
	int rc = -1;

	memset(&c, 0, sizeof c);
	if (db == NULL)
		log_warn("dump: %s", err);
	/* MANIFEST.md comes last: it counts what the other files hold. */
	if (errors_entry(z, db, j, &c) != 0 ||
	    csv_entry(z, db, "tasks.csv", SQL_TASKS, j, &c.tasks) != 0 ||
	    csv_entry(z, db, "actions.csv", SQL_ACTIONS, j, &c.actions) != 0 ||
	    csv_entry(z, db, "action_logs.csv", SQL_LOGS, j, &c.logs) != 0 ||
	    csv_entry(z, db, "messages.csv", SQL_MESSAGES, j, &c.messages) != 0 ||
	    csv_entry(z, db, "waits.csv", SQL_WAITS, j, &c.waits) != 0 ||
	    usage_entry(z, db, j, &c) != 0)
		goto out;
	if (zipout_begin(z, "logs/detmd.log", -1, true, 0) != 0 ||
	    (c.log_lines = opsdata_log(j->data_dir, j->since_ms, j->until_ms, false, z, j->rd)) < 0 ||
	    zipout_end(z) != 0)
		goto out;
	rc = manifest(z, j, &c);
out:
	if (rc != 0)
		log_warn("dump ended early: %s", zipout_error(z));
	else
		log_info("dump made: %ld tasks, %ld actions, %ld log lines", c.tasks, c.actions, c.log_lines);
	sqlite3_close(db);
	return rc;
}

void
dump_job_free(void *arg)
{
	struct dump_job *j = arg;

	if (j == NULL)
		return;
	free(j->data_dir);
	redact_free(j->rd);
	free(j);
}
