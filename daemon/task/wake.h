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
 *                  "ts":"ISO time","id":"8hex"[,"sessionKey":..]}
 *
 * A task whose metadata holds "openclaw_session_key" (the OpenClaw
 * session that started it) has its wake-ups sent to that session: the
 * CLI gets --session-key KEY, the JSON "sessionKey" (the field OpenClaw's
 * POST /hooks/wake reads). Without it they go to the gateway's main
 * session.
 */
#ifndef DETM_WAKE_H
#define DETM_WAKE_H

#include <stdbool.h>

#include <json-c/json.h>

#include "core/config.h"
#include "core/util.h"
#include "derr.h"

#define WAKE_QUEUE_MAX 1000          /* events waiting; the oldest is dropped */
#define WAKE_TEXT_MAX  (96 * 1024)   /* text bytes (one argv string is < 128 KiB) */
#define WAKE_SESSION_MAX 256         /* bytes of a session key */

struct store;

/* Starts the delivery thread. st (borrowed, may be NULL) is read for a
 * task's session key. 0, or -1 with e. */
int wake_init(struct store *st, const struct config *cfg, struct derr *e) DETM_NODISCARD;
/* Whether k is a session key detm passes on: 1..WAKE_SESSION_MAX bytes,
 * no blanks or control characters. */
bool wake_session_ok(const char *k);
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
