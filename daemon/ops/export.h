/*
 * export.h - a task's export bundle: one ZIP with its whole story, built
 * on a thread of its own and streamed (zipout.h).
 *
 * Contents: README.txt (how to read the rest), task.json (what GET
 * /api/tasks/{id}?detail=full answers), actions.json and action_logs.json
 * (every action and log line of the task, task-level ones included, oldest
 * first), messages.json (the whole thread), waits.json, usage.json (the
 * task's model calls when this daemon records usage, else []),
 * screenshots/ (the action screenshots), recording/<id>.mp4 and
 * recording/index.json, and logs/detmd.log (the daemon log's lines from a
 * minute before the task began to a minute after its last update, secrets
 * redacted).
 *
 * The caller (api_ops.c) gathers what needs the daemon's modules (the
 * task's view opened on a read connection of its own, the recording's
 * file and index) and hands them over; this file writes the view as
 * task.json (a row at a time: task_view_write), reads the other rows
 * through that same connection, and the files. Nothing of the bundle is
 * whole in memory: what the builder holds is one row or one 64 KiB piece
 * of a file, and it blocks while its client does not read.
 */
#ifndef DETM_EXPORT_H
#define DETM_EXPORT_H

#include <stdint.h>

#include <json-c/json.h>

#include "core/redact.h"
#include "core/util.h"
#include "core/zipout.h"
#include "store/store.h"
#include "task/task.h"

struct export_job {
	char task_id[ID_LEN];
	char *data_dir;             /* owned */
	struct store *reader;       /* a private reader (store_reader_open; owned) */
	struct task_view *view;     /* the detail=full view on it (owned): task.json */
	json_object *rec_index;     /* or NULL (owned) */
	char *mp4_path;             /* or NULL (owned) */
	int64_t from_ms, to_ms;     /* the log window */
	struct redact *rd;          /* owned */
};

/* The builder for zipout_spawn (arg: struct export_job *). */
int export_build(struct zipout *z, void *arg);
/* Frees a job (zipout_spawn's free_arg). NULL ok. */
void export_job_free(void *arg);

#endif
