/*
 * wake.h - wake-ups: telling the LLM's gateway that something needs it.
 *
 * A module (the wait engine, stuck detection) posts an event; one delivery
 * thread hands it to every configured sink, retrying failures with
 * exponential backoff. Posting never blocks on delivery and never fails.
 *
 * Sinks (every configured one gets every event):
 *   openclaw  `openclaw system event --text TEXT --mode now` (the Python
 *             daemon's exact argv); --openclaw-cli "" turns it off, and a
 *             binary missing from PATH is skipped quietly, not retried
 *   command   --wake-command: argv split on blanks (no shell), the event
 *             JSON on stdin
 *   url       --wake-url: HTTP POST of the event JSON; 2xx is success
 *
 * The event JSON: {"event":kind,"task_id":..,"text":..,"payload":{..},
 *                  "ts":"ISO time","id":"8hex"}
 */
#ifndef DETM_WAKE_H
#define DETM_WAKE_H

#include <json-c/json.h>

#include "core/config.h"
#include "core/util.h"
#include "derr.h"

#define WAKE_QUEUE_MAX 1000          /* events waiting; the oldest is dropped */
#define WAKE_TEXT_MAX  (96 * 1024)   /* text bytes (one argv string is < 128 KiB) */

/* Starts the delivery thread. 0, or -1 with e. */
int wake_init(const struct config *cfg, struct derr *e) DETM_NODISCARD;
/* Delivers nothing more (a running command is killed), drops what is
 * queued (logged), joins. Safe to call twice or without wake_init. */
void wake_shutdown(void);

/* Queues an event. kind: "wait_resolved", "wait_timed_out", "wait_failed",
 * "task_stuck", ...; task_id may be NULL; text: the one line for the
 * gateway (longer than WAKE_TEXT_MAX is cut); payload: owned (may be NULL).
 * Before wake_init or after wake_shutdown the event is logged and dropped. */
void wake_post(const char *kind, const char *task_id, const char *text,
    json_object *payload);

/* {"posted","delivered","failed","dropped","pending","attempts",
 *  "sinks":[..]} (new object). */
json_object *wake_stats(void);

#endif
