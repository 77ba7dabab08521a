/*
 * waits.h - the smart-wait engine: "wake me when the screen shows X".
 *
 * A wait watches a target (the screen, or one window) on the display of
 * its task (or the shared desktop) until a vision backend says the
 * condition holds, or its deadline passes. Each wait lives in the
 * wait_jobs table (it survives a restart: unexpired waits resume, expired
 * ones are marked timed_out) and, while watching, in memory. One
 * scheduler thread decides which waits are due; a pool of worker threads
 * grabs, gates and evaluates them, so a slow model never blocks another
 * wait or an HTTP request. A wait resolves exactly once: the in-memory
 * state moves to done under the engine lock, and the row only leaves
 * 'watching' through UPDATE ... WHERE status = 'watching'.
 *
 * Functions return 0 / a new JSON object, or -1 / NULL with e filled.
 * While the engine is stopping they fail with DERR_UNAVAILABLE.
 */
#ifndef DETM_WAITS_H
#define DETM_WAITS_H

#include <json-c/json.h>

#include "core/app.h"
#include "core/util.h"
#include "derr.h"

#define WAIT_TIMEOUT_DEFAULT_S 300
#define WAIT_TIMEOUT_MAX_S 3600
#define WAIT_BLOCK_MAX_S 120
#define WAIT_CRITERIA_MAX 2000
#define WAIT_TARGET_MAX 256

/* Starts the engine: the vision backend from the config, the waits left
 * watching by an earlier run, the threads. */
int waits_init(struct app *app, struct derr *e);
/* Stops the threads and wakes every long poll; watching waits stay
 * 'watching' in the database and resume on the next start. */
void waits_shutdown(void);

struct wait_new {
	const char *task_id;    /* or NULL */
	const char *target;     /* "screen" | "window:<title or id>" */
	const char *criteria;   /* wake_when */
	int timeout_s;          /* 1..WAIT_TIMEOUT_MAX_S */
	double poll_s;          /* 0: adaptive; else the interval while the screen changes */
	const char *judge;      /* "auto" (NULL), "ocr" or "model" */
};
/* 201-style reply: the wait's JSON. The judge: auto sends a condition OCR
 * can decide (text:"..", text-gone:"..", a quoted phrase) to OCR in
 * process and any other to the model backend. A judge that cannot take the
 * condition is DERR_INVALID; a model the last health check could not reach,
 * or one without its key, is DERR_UNAVAILABLE naming the backend, its URL
 * and the fix. */
json_object *waits_create(const struct wait_new *w, struct derr *e);
/* The wait's JSON; with block_s > 0 it first waits (up to block_s) for the
 * wait to leave 'watching'. */
json_object *waits_get(const char *id, int block_s, struct derr *e);
/* {"waits":[...],"count":N}; status NULL: watching; "all": any. */
json_object *waits_list(const char *task_id, const char *status, int limit, struct derr *e);
/* New condition and/or timeout (counted from now) and/or a note. A
 * finished wait is DERR_CONFLICT. */
json_object *waits_update(const char *id, const char *criteria, int timeout_s,
    const char *note, struct derr *e);
/* Cancels a watching wait; a finished one is returned unchanged. */
json_object *waits_cancel(const char *id, const char *reason, struct derr *e);
/* The task ended or was deleted: cancel its waits. */
void waits_task_ended(const char *task_id, const char *why);
/* {"backend","model","ok","reachable","url","detail","checked_at",
 *  "watching":N,"ocr":{"ok","detail"},"judges":{"text","other"},
 *  "min_confidence"} from the last background health check (refreshed every
 * minute, every 10 s while unreachable; never blocks). */
json_object *waits_health(void);

#endif
