/*
 * doctor.h - "what is wrong with this install?": a table of checks, each
 * answering ok, warn, fail or skip with a detail and, when not ok, a hint
 * saying what to do.
 *
 * Result: {"summary":{"ok","warn","fail","skip"}, "exit_code": 0 all ok or
 * skipped | 1 any warn | 2 any fail, "results":[{"section","name","status",
 * "detail","hint"}], "mode": "daemon"|"in-process", "duration_ms"}.
 *
 * Checks (doctor.c's table): the database (PRAGMA quick_check, schema
 * version), storage (data-dir permissions, free disk, recordings against
 * their cap), X (the Xvfb binary, the shared display and each extension
 * detm uses, displays left behind), every configured model backend (vision,
 * grounding, gui_agent: key present - a key is never printed -, server
 * reachable, model listed), OCR and the video encoder, the wake sinks
 * (openclaw on PATH, the wake command, the wake URL), the detm entry in the
 * OpenClaw config, and recent errors in the log.
 *
 * Threading: every check runs on a thread of its own, in parallel, each
 * with its own timeouts (HTTP 4 s); doctor_run waits at most cap_ms for all
 * of them, and a check still running then is reported as failed ("did not
 * finish") and left to end on its own. The caller's thread only waits: it
 * does no check itself. Concurrent calls inside the daemon share one run.
 * Details and hints pass through the redactor, so a backend that echoes a
 * key back cannot leak it.
 *
 * Not here: HTTP (api_ops.c), the CLI's output (main.c calls doctor_cli).
 */
#ifndef DETM_DOCTOR_H
#define DETM_DOCTOR_H

#include <stdbool.h>

#include <json-c/json.h>

#include "core/config.h"

/* in_daemon: called inside a running detmd (its display registry is
 * known); false: the CLI's in-process form. Returns a new object. */
json_object *doctor_run(const struct config *cfg, bool in_daemon, long cap_ms);

/* Appends one result to a doctor result (the CLI adds how it ran) and
 * recounts summary and exit_code. status: "ok"|"warn"|"fail"|"skip". */
void doctor_add(json_object *res, const char *section, const char *name, const char *status,
    const char *detail, const char *hint);

/* `detmd doctor [--url URL] [--json] [options]`: asks the daemon at URL
 * (ACU_URL, else the configured address) for GET /api/doctor; when none
 * answers, runs the checks in process on the data dir. Prints a table (or
 * the JSON) and returns the exit code (0, 1, 2; 2 also for a usage error). */
int doctor_cli(int argc, char **argv);

#endif
