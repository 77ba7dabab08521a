/*
 * export.c - the export bundle's entries, in order (export.h). A part that
 * cannot be read (a file gone, a database error) is noted in NOTES.txt
 * rather than failing the archive; an archive error (the client left)
 * ends the build at once.
 */
#include "export.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/jx.h"
#include "core/log.h"
#include "opsdata.h"

static const char README[] =
    "detm export bundle for task %s (\"%s\"), made %s by detmd %s.\n"
    "\n"
    "Files (JSON unless said otherwise; times are ISO-8601 UTC):\n"
    "  task.json         the task as GET /api/tasks/%s?detail=full answers: status, metadata,\n"
    "                    plan items with their latest actions (up to 200 per item) and logs,\n"
    "                    and the recording's status\n"
    "  actions.json      every action of the task, oldest first (ordinal null: task-level)\n"
    "  action_logs.json  every log line of those actions (action_id links them)\n"
    "  messages.json     the whole task thread: agent, user (operator), wait, system, error\n"
    "  waits.json        the smart waits of the task: condition, status, verdict, evaluations\n"
    "  usage.json        model calls charged to the task (provider, model, tokens, cost),\n"
    "                    [] when this daemon records none\n"
    "  screenshots/      JPEG screenshots taken with GUI actions (named <task>-<id>.jpg;\n"
    "                    actions name theirs in output_data)\n"
    "  recording/        the task's screen recording (H.264 MP4) and index.json: the video\n"
    "                    time (t_s) of every frame and of every action; clip-<id>.mp4 and\n"
    "                    .json: video_record clips made for the task\n"
    "  logs/detmd.log    the daemon log from a minute before the task began to a minute after\n"
    "                    its last update (other tasks' lines may appear; secrets redacted)\n"
    "\n"
    "Read task.json first, then messages.json for the conversation, then actions.json for\n"
    "what was done; jump in the video with recording/index.json.\n";

static int
add_json(struct zipout *z, const char *name, json_object *o)
{
	size_t n;
	const char *s = jx_string(o, &n);

	return zipout_add_mem(z, name, s, n);
}

/* An entry holding the rows of sql (?1 = the task id). */
static int
add_rows(struct zipout *z, sqlite3 *db, const char *name, const char *sql, const char *task_id,
    const struct redact *rd, char *notes, size_t nlen)
{
	struct opsbind b = { task_id, 0, 0 };
	long n;

	if (zipout_begin(z, name, -1, true, 0) != 0)
		return -1;
	n = db != NULL ? opsdata_json(db, sql, &b, z, rd) : zipout_write(z, "[]\n", 3);
	if (n < 0 || zipout_end(z) != 0)
		return -1;
	if (db == NULL && notes != NULL) {
		size_t l = strlen(notes);

		snprintf(notes + l, nlen - l, "  %s: the database could not be opened\n", name);
	}
	return 0;
}

static int
add_usage(struct zipout *z, sqlite3 *db, const char *task_id)
{
	char table[128], *sql;
	int rc;

	if (db == NULL || !opsdata_usage_table(db, table, sizeof table) ||
	    !opsdata_has_column(db, table, "task_id"))
		return zipout_add_mem(z, "usage.json", "[]\n", 3);
	sql = xasprintf("SELECT * FROM \"%s\" WHERE task_id = ?1 ORDER BY rowid", table);
	rc = add_rows(z, db, "usage.json", sql, task_id, NULL, NULL, 0);
	free(sql);
	return rc;
}

static int
add_screenshots(struct zipout *z, const struct export_job *j, long *count)
{
	char *dir = xasprintf("%s/screenshots", j->data_dir), path[PATH_MAX], name[PATH_MAX];
	struct dirent *de;
	DIR *dh = opendir(dir);
	int rc = 0;

	*count = 0;
	while (dh != NULL && rc == 0 && (de = readdir(dh)) != NULL) {
		if (strncmp(de->d_name, j->task_id, ID_LEN - 1) != 0 || de->d_name[ID_LEN - 1] != '-' ||
		    strstr(de->d_name, ".jpg") == NULL)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		snprintf(name, sizeof name, "screenshots/%s", de->d_name);
		rc = zipout_add_file(z, name, path, false);
		if (rc == 0)
			(*count)++;
		else if (rc == 1)
			rc = 0;         /* deleted meanwhile */
	}
	if (dh != NULL)
		closedir(dh);
	free(dir);
	return rc;
}

static int
add_recording(struct zipout *z, const struct export_job *j, char *notes, size_t nlen)
{
	char name[64];
	size_t l;
	int rc;

	if (j->rec_index != NULL && add_json(z, "recording/index.json", j->rec_index) != 0)
		return -1;
	if (j->mp4_path == NULL)
		return 0;
	snprintf(name, sizeof name, "recording/%s.mp4", j->task_id);
	rc = zipout_add_file(z, name, j->mp4_path, false);
	if (rc == 1) {
		l = strlen(notes);
		snprintf(notes + l, nlen - l, "  %s: the file was gone when the bundle was made\n", name);
		rc = 0;
	}
	return rc;
}

/* The task's video_record clips: recordings/clip-<id>.json names the task. */
static int
add_clips(struct zipout *z, const struct export_job *j)
{
	char *dir = xasprintf("%s/recordings", j->data_dir), path[PATH_MAX], name[PATH_MAX];
	struct dirent *de;
	DIR *dh = opendir(dir);
	int rc = 0;

	while (dh != NULL && rc == 0 && (de = readdir(dh)) != NULL) {
		size_t n = strlen(de->d_name);
		json_object *meta, *tid;

		if (strncmp(de->d_name, "clip-", 5) != 0 || n < 10 || strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		meta = json_object_from_file(path);
		if (meta != NULL && json_object_object_get_ex(meta, "task_id", &tid) &&
		    strcmp(json_object_get_string(tid), j->task_id) == 0) {
			snprintf(name, sizeof name, "recording/%s", de->d_name);
			rc = add_json(z, name, meta);
			snprintf(path, sizeof path, "%s/%.*s.mp4", dir, (int)(n - 5), de->d_name);
			snprintf(name, sizeof name, "recording/%.*s.mp4", (int)(n - 5), de->d_name);
			if (rc == 0 && zipout_add_file(z, name, path, false) < 0)
				rc = -1;
		}
		json_object_put(meta);
	}
	if (dh != NULL)
		closedir(dh);
	free(dir);
	return rc;
}

static const char *
task_str(const struct export_job *j, const char *key)
{
	json_object *v;

	if (j->view == NULL || !json_object_object_get_ex(task_view_head(j->view), key, &v))
		return "";
	return json_object_get_string(v);
}

static int
zip_sink(void *cls, const char *p, size_t n)
{
	return zipout_write(cls, p, n);
}

/* task.json: the view, written as it is read; then its snapshot ends. A
 * database error mid-way leaves the entry cut short, and a note says so. */
static int
add_task(struct zipout *z, struct export_job *j, char *notes, size_t nlen)
{
	struct derr e;
	size_t l;
	int rc;

	derr_clear(&e);
	if (zipout_begin(z, "task.json", -1, true, 0) != 0)
		return -1;
	rc = task_view_write(j->view, zip_sink, z, &e);
	if (zipout_end(z) != 0 || (rc != 0 && e.code == DERR_OK))
		rc = -1;
	else if (rc != 0) {
		l = strlen(notes);
		snprintf(notes + l, nlen - l, "  task.json: cut short, the database failed (%s)\n",
		    e.message);
		rc = 0;
	}
	task_view_close(j->view);
	j->view = NULL;
	return rc;
}

static int
build(struct zipout *z, struct export_job *j, sqlite3 *db, char *notes, size_t nlen)
{
	char now[ISO_TIME_LEN];
	long shots = 0, lines;

	iso_time(now_ms(), now);
	if (zipout_begin(z, "README.txt", -1, true, 0) != 0 ||
	    zipout_printf(z, README, j->task_id, task_str(j, "name"), now, DETM_VERSION,
	        j->task_id) != 0 || zipout_end(z) != 0)
		return -1;
	if (add_task(z, j, notes, nlen) != 0 ||
	    add_rows(z, db, "actions.json", "SELECT a.id AS action_id, p.ordinal, a.action_type, a.summary, "
	        "a.status, a.input_data, a.output_data, a.duration_ms, a.created_at FROM actions a "
	        "LEFT JOIN plan_items p ON p.id = a.plan_item_id WHERE a.task_id = ?1 ORDER BY a.rowid",
	        j->task_id, NULL, notes, nlen) != 0 ||
	    /* In rowid order by a list of the task's log rowids (small): a sort
	     * of the rows themselves would hold every line (50 MB) at once. */
	    add_rows(z, db, "action_logs.json", "SELECT l.action_id, l.id AS log_id, l.log_type, l.content, "
	        "l.created_at FROM action_logs l WHERE l.rowid IN (SELECT k.rowid FROM action_logs k "
	        "JOIN actions a ON a.id = k.action_id WHERE a.task_id = ?1) ORDER BY l.rowid",
	        j->task_id, NULL, notes, nlen) != 0 ||
	    add_rows(z, db, "messages.json", "SELECT id, role, msg_type, content, created_at FROM "
	        "task_messages WHERE task_id = ?1 ORDER BY rowid", j->task_id, NULL, notes, nlen) != 0 ||
	    add_rows(z, db, "waits.json", "SELECT * FROM wait_jobs WHERE task_id = ?1 ORDER BY rowid",
	        j->task_id, NULL, notes, nlen) != 0 ||
	    add_usage(z, db, j->task_id) != 0 || add_screenshots(z, j, &shots) != 0 ||
	    add_recording(z, j, notes, nlen) != 0 || add_clips(z, j) != 0)
		return -1;
	if (zipout_begin(z, "logs/detmd.log", -1, true, 0) != 0)
		return -1;
	lines = opsdata_log(j->data_dir, j->from_ms, j->to_ms, false, z, j->rd);
	if (lines < 0 || zipout_end(z) != 0)
		return -1;
	log_info("exported task %s: %ld screenshots, %ld log lines%s", j->task_id, shots, lines,
	    notes[0] ? " (with notes)" : "");
	return 0;
}

int
export_build(struct zipout *z, void *arg)
{
	struct export_job *j = arg;
	char notes[1024] = "";
	int rc;

	rc = build(z, j, store_db(j->reader), notes, sizeof notes);
	if (rc == 0 && notes[0] != '\0')
		rc = zipout_begin(z, "NOTES.txt", -1, true, 0) == 0 &&
		    zipout_printf(z, "Parts that could not be included:\n%s", notes) == 0 &&
		    zipout_end(z) == 0 ? 0 : -1;
	if (rc != 0)
		log_warn("export of task %s ended early: %s", j->task_id, zipout_error(z));
	return rc;
}

void
export_job_free(void *arg)
{
	struct export_job *j = arg;

	if (j == NULL)
		return;
	free(j->data_dir);
	task_view_close(j->view);
	store_reader_close(j->reader);
	json_object_put(j->rec_index);
	free(j->mp4_path);
	redact_free(j->rd);
	free(j);
}
