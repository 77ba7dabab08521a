/*
 * dump.h - the central dump: one ZIP across every task of a time window,
 * for someone (or a model) diagnosing the daemon, with secrets redacted.
 *
 * Contents: MANIFEST.md (what each file holds and how to read them),
 * ERRORS.log (failed tasks, actions and waits, error messages, and the
 * log's ERROR/WARN lines, by time), tasks.csv (tasks alive in the window),
 * actions.csv, action_logs.csv, messages.csv, waits.csv, usage.csv (the
 * usage table when this daemon has one) and logs/detmd.log (the window's
 * log lines). Every text field goes through the redactor (redact.h): API
 * keys in their common forms, bearer tokens, key=value secrets, and the
 * literal secrets detmd knows (its token, the configured API keys).
 *
 * Built on its own thread and streamed (zipout.h); reads through its own
 * read-only connection (opsdata.h).
 */
#ifndef DETM_DUMP_H
#define DETM_DUMP_H

#include <stdint.h>

#include "core/redact.h"
#include "core/zipout.h"

struct dump_job {
	char *data_dir;             /* owned */
	int64_t since_ms, until_ms;
	struct redact *rd;          /* owned */
};

/* The builder for zipout_spawn (arg: struct dump_job *). */
int dump_build(struct zipout *z, void *arg);
void dump_job_free(void *arg);  /* NULL ok */

#endif
