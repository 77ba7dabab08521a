/*
 * takeover.h - who drives a task's display: the agent (default) or a human
 * at the dashboard, and the agent's requests for a human.
 *
 * States of one task's driver (a table in takeover.c):
 *
 *   agent  --help-->      helping   (the agent asked for a human; still drives)
 *   agent  --takeover-->  human
 *   helping --takeover--> human     (the request is answered)
 *   helping --help-->     helping   (a newer request replaces the old one)
 *   helping --release-->  agent     (the operator dismisses the request)
 *   helping --force-->    agent     (the same, by the forced path)
 *   human  --release (with the lease) | force | idle timeout | task ended--> agent
 *   human  --help-->      human     (noted; the human already drives)
 *
 * Anything else is DERR_CONFLICT with a sentence. One human driver per
 * display: a task using the shared display and another doing the same
 * cannot both be taken over. A takeover returns a lease (secret_new: 128
 * bits from getrandom, given only to the taker); input and the release
 * must carry it, so a second browser is a read-only viewer and a client
 * holding only the API token (the agent) cannot end a human's turn. The
 * operator's override is TKE_FORCE: no lease, written to the thread and
 * the audit action as a forced release.
 *
 * While a human drives, takeover_gate refuses every agent input path on
 * that display (DERR_HUMAN_CONTROL, 409 human_control, saying since when
 * and why) and takeover_gate_look refuses agent screenshots unless the
 * operator allowed them. takeover_check() verifies the invariants (used by
 * the unit test and after every transition).
 *
 * Not here: HTTP (api_takeover.c), the dashboard (dashboard/takeover.js).
 * Thread-safe.
 */
#ifndef DETM_TAKEOVER_H
#define DETM_TAKEOVER_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "core/config.h"
#include "core/util.h"
#include "derr.h"
#include "store/store.h"

enum takeover_state { TAKEOVER_AGENT, TAKEOVER_HELPING, TAKEOVER_HUMAN, TAKEOVER__STATES };
/* TKE_RELEASE needs the human's lease; TKE_FORCE (the operator's
 * override) does not, and is recorded as forced. */
enum takeover_event { TKE_TAKEOVER, TKE_RELEASE, TKE_HELP, TKE_IDLE, TKE_TASK_END, TKE_FORCE,
	TKE__EVENTS };

/* The transition table: the next state, or -1 when `ev` is refused in
 * `from`. Pure. */
int takeover_next(int from, int ev);
const char *takeover_state_name(int st);

/* Starts the idle timer (idle_s <= 0: no timeout). 0 or -1 with e. */
int takeover_init(struct store *st, long idle_s, struct derr *e) DETM_NODISCARD;
/* Stops the timer; drivers are forgotten (nothing is written). */
void takeover_shutdown(void);

/* A human takes task_id's display over. The task must exist and not be
 * final. Returns {task_id, driver:"human", lease, since, reason, display,
 * allow_screenshots} (caller owns) or NULL with e (CONFLICT: someone else
 * drives that display). Writes a `control` message and a `human` audit
 * action in one transaction. */
json_object *takeover_start(const char *task_id, const char *reason, bool allow_shots,
    struct derr *e);
/* Hands back (ev TKE_RELEASE, TKE_FORCE, TKE_IDLE or TKE_TASK_END).
 * TKE_RELEASE of a human's turn needs its lease: none or a wrong one is
 * FORBIDDEN and the human keeps driving; the other events ignore lease
 * (dismissing a help request needs none either). Returns
 * the summary {duration_s, clicks, keystrokes, scrolls, drags,
 * windows_opened, windows_closed, note, ...} (caller owns) and wakes the
 * agent with it; never contains typed text. */
json_object *takeover_release(const char *task_id, const char *lease, const char *note,
    int ev, struct derr *e);
/* The agent asks for a human; returns {request_id, task_id, driver, ...}
 * at once, wakes the operator through the wake sinks. */
json_object *takeover_help(const char *task_id, const char *reason, const char *instructions,
    struct derr *e);
/* {driver, since?, reason?, help?:{request_id,reason,instructions,at}}
 * (caller owns); {driver:"agent"} for an unknown task. */
json_object *takeover_status(const char *task_id);

/* 0 when the agent may act on the display task_id's input would reach
 * (NULL: the shared display); -1 with DERR_HUMAN_CONTROL when a human
 * drives it. */
int takeover_gate(const char *task_id, struct derr *e);
/* The same for an agent screenshot: allowed while a human drives only if
 * the operator said so at takeover. */
int takeover_gate_look(const char *task_id, struct derr *e);

/* Injects a batch of the human's input events (see takeover_input.c for
 * their shape) given in the coordinates of an iw x ih image of the screen.
 * Returns {ok, injected, ...} or NULL with e (CONFLICT: wrong or no lease).
 * Refreshes the idle clock; audits clicks, text (as a count) and chords. */
json_object *takeover_input(const char *task_id, const char *lease, json_object *events,
    int iw, int ih, struct derr *e);

/* The live view's capture interval for `key` (a task id, "" for the
 * shared display) while a human drives it: TAKEOVER_LIVE_HOT_MS for half a
 * second after their last input (the answer to a click shows at once),
 * else TAKEOVER_LIVE_MS (20 fps); 0 when no human drives it. */
#define TAKEOVER_LIVE_MS     50
#define TAKEOVER_LIVE_HOT_MS 12
int takeover_live_interval_ms(const char *key);

/* The invariants, checked: true when they hold; else false and a sentence
 * in why. */
bool takeover_check(char *why, size_t cap);

#endif
