/*
 * agent.h - gui_agent, the multi-step GUI agent (agent.c has the details).
 */
#ifndef DETM_AGENT_H
#define DETM_AGENT_H

#include <json-c/json.h>

#include "core/app.h"
#include "core/util.h"
#include "derr.h"

#define AGENT_TIMEOUT_DEFAULT_S 180
#define AGENT_TIMEOUT_MAX_S     300

/* Runs the agent until done, escalate, a limit, or the task stops. Returns
 * 0 with *out = {success, summary, escalated, escalation_reason,
 * actions_taken, actions_log (last 10), session_id, elapsed_s, turns,
 * tokens_in, tokens_out, model} (caller owns); -1 with e when it could not
 * run: no OPENROUTER_API_KEY (DERR_UNAVAILABLE), another agent drives the
 * display (DERR_CONFLICT), the display or the model failed. */
int agent_run(struct app *app, const char *task_id, const char *instruction, int timeout_s,
    const char *context, json_object **out, struct derr *e) DETM_NODISCARD;

#endif
