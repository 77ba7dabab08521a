/*
 * api_ops.c - the operator's routes: GET /api/doctor (and /doctor), GET
 * /api/tasks/{id}/export (the task bundle), GET /api/dump (every task of
 * a window, redacted). The work happens elsewhere: doctor.c runs its
 * checks on threads of their own while this handler only waits (capped);
 * export.c and dump.c build their ZIP on a thread of their own, writing
 * into a pipe this reply streams from (http_pipe.c), so the archive is
 * never whole in memory and the connection thread only copies bytes; at
 * most LIM_ARCHIVES are built at once (503 past it). The export's
 * task.json is the task's view written as it is read (taskview_full.c),
 * opened here so that an unknown task is a 404 before any byte goes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "ops/doctor.h"
#include "ops/dump.h"
#include "ops/export.h"
#include "recorder/recorder.h"
#include "task/task.h"

#define DOCTOR_CAP_MS 15000

int
api_doctor(struct req *r, struct derr *e)
{
	json_object *doc = doctor_run(r->app->cfg, true, DOCTOR_CAP_MS);
	const char *health = req_query(r, "health");

	if (doc == NULL)
		return derr_set(e, DERR_INTERNAL, NULL, "the doctor produced no result");
	if (health == NULL || strcmp(health, "1") != 0)
		return req_reply(r, 200, doc);
	/* health_check: the health reply with the doctor's result inside. */
	if (api_health_reply(r) != 0 || r->reply == NULL) {
		json_object_put(doc);
		return -1;
	}
	json_object_object_add(r->reply, "doctor", doc);
	return 0;
}

/* ---- streamed archives ---- */

/* Starts build on a thread of its own and streams the ZIP it writes
 * (http_pipe.c); the archive slot (taken by the caller) goes with it. */
static int
stream_zip(struct req *r, zipout_build_fn build, void *job, void (*job_free)(void *),
    const char *filename, struct derr *e)
{
	struct pipejob *pj;
	char err[256] = "";
	int fd = -1;

	pj = zipout_spawn(build, job, job_free, req_streams_wake, &fd, err, sizeof err);
	if (pj == NULL)
		job_free(job);
	else
		req_header(r, "Content-Disposition", "attachment; filename=\"%s\"", filename);
	return req_reply_pipe(r, REQ_BULK_ARCHIVE, pj, fd, "application/zip", err, e);
}

/* "20261123T013000Z" */
static void
stamp(char out[20])
{
	char iso[ISO_TIME_LEN];

	iso_time(now_ms(), iso);
	snprintf(out, 20, "%.4s%.2s%.2sT%.2s%.2s%.2sZ", iso, iso + 5, iso + 8, iso + 11, iso + 14, iso + 17);
}

/* The token and the API keys this daemon knows: redacted wherever found. */
static struct redact *
redactor(const struct config *c)
{
	const char *lits[CONFIG_SECRETS_MAX];

	config_secrets(c, lits);
	return redact_new(lits);
}

static int64_t
summary_time(json_object *sum, const char *key)
{
	int64_t ms = 0;
	const char *s = json_object_get_string(json_object_object_get(sum, key));

	if (s == NULL || time_parse(s, &ms) != 0)
		return 0;
	return ms;
}

/* task_export (MCP): where to download the bundle, without building it. */
static int
export_info(struct req *r, const char *id, const char *name)
{
	json_object *o = json_object_new_object();
	const char *host = strcmp(r->app->cfg->listen, "0.0.0.0") == 0 ? "127.0.0.1" : r->app->cfg->listen;
	char path[512];

	json_object_object_add(o, "task_id", json_object_new_string(id));
	json_object_object_add(o, "filename", json_object_new_string(name));
	snprintf(path, sizeof path, "/api/tasks/%s/export", id);
	json_object_object_add(o, "path", json_object_new_string(path));
	snprintf(path, sizeof path, "http://%s:%d/api/tasks/%s/export", host, r->app->port, id);
	json_object_object_add(o, "url", json_object_new_string(path));
	json_object_object_add(o, "contents", json_object_new_string(
	    "README.txt task.json actions.json action_logs.json messages.json waits.json usage.json "
	    "screenshots/ recording/ logs/detmd.log"));
	return req_reply(r, 200, o);
}

int
api_task_export(struct req *r, struct derr *e)
{
	struct export_job *j;
	const char *id, *st;
	json_object *head;
	char path[4096], name[96], ts[20];
	struct derr ie;

	if (req_task_id(r, 0, &id, e) != 0)
		return -1;
	stamp(ts);
	snprintf(name, sizeof name, "detm-task-%s-%s.zip", id, ts);
	if (req_query(r, "info") != NULL && strcmp(req_query(r, "info"), "1") == 0)
		return api_known_task(r, &id, e) != 0 ? -1 : export_info(r, id, name);
	if (req_bulk_take(REQ_BULK_ARCHIVE, e) != 0)
		return -1;
	j = xcalloc(1, sizeof *j);
	/* task.json: what GET /api/tasks/{id}?detail=full answers, in one snapshot. */
	j->view = api_task_view_open(r, id, DETAIL_ACTIONS, &j->reader, e);
	if (j->view == NULL) {
		free(j);
		req_bulk_give(REQ_BULK_ARCHIVE);
		return -1;
	}
	snprintf(j->task_id, sizeof j->task_id, "%s", id);
	j->data_dir = xstrdup(r->app->cfg->data_dir);
	derr_clear(&ie);
	j->rec_index = rec_task_index(r->app, id, &ie);
	if (rec_task_file(id, path, sizeof path) == 0)
		j->mp4_path = xstrdup(path);
	head = task_view_head(j->view);
	st = json_object_get_string(json_object_object_get(head, "status"));
	j->from_ms = summary_time(head, "created_at") - 60000;
	j->to_ms = (st != NULL && (strcmp(st, "active") == 0 || strcmp(st, "paused") == 0)
	    ? now_ms() : summary_time(head, "last_update")) + 60000;
	j->rd = redactor(r->app->cfg);
	return stream_zip(r, export_build, j, export_job_free, name, e);
}

static int
query_time(struct req *r, const char *key, int64_t def, int64_t *out, struct derr *e)
{
	const char *v = req_query(r, key);

	*out = def;
	if (v == NULL || v[0] == '\0')
		return 0;
	if (time_parse(v, out) != 0)
		return derr_set(e, DERR_INVALID, key, "%s must be epoch seconds or an ISO-8601 time, not '%.*s'",
		    key, utf8_prec(v, 40), v);
	return 0;
}

int
api_dump(struct req *r, struct derr *e)
{
	struct dump_job *j;
	int64_t since, until;
	char name[64], ts[20];

	if (query_time(r, "since", 0, &since, e) != 0 || query_time(r, "until", now_ms(), &until, e) != 0)
		return -1;
	if (until < since)
		return derr_set(e, DERR_INVALID, "until", "until is before since");
	if (req_bulk_take(REQ_BULK_ARCHIVE, e) != 0)
		return -1;
	j = xcalloc(1, sizeof *j);
	j->data_dir = xstrdup(r->app->cfg->data_dir);
	j->since_ms = since;
	j->until_ms = until;
	j->rd = redactor(r->app->cfg);
	stamp(ts);
	snprintf(name, sizeof name, "detm-dump-%s.zip", ts);
	return stream_zip(r, dump_build, j, dump_job_free, name, e);
}
