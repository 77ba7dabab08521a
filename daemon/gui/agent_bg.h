/*
 * agent_bg.h - gui_agent runs in the background: started at once, followed
 * by id (gui_agent with background: true, then gui_agent_status), so no
 * call outlives a gateway's per-call limit (OpenClaw cuts MCP calls at
 * 60 s; a run may take 300 s).
 *
 * A run is one agent_run on a thread of its own, with its own cancel flag
 * (cancel.h), logged on its task as the synchronous gui_agent is. Runs
 * live in memory: at most AGENT_BG_RUNNING at once; the last AGENT_BG_KEEP
 * are kept (the oldest finished one is forgotten first); a restart forgets
 * them all (the task's action rows keep what finished).
 */
#ifndef DETM_AGENT_BG_H
#define DETM_AGENT_BG_H

#include <stdint.h>

#include <json-c/json.h>

#include "core/app.h"
#include "derr.h"

#define AGENT_BG_RUNNING 8
#define AGENT_BG_KEEP    64
#define AGENT_BG_BLOCK_MAX_S 50     /* a status call waits at most this */

/* Starts a run; *out = its status (running), caller owns. -1 with e:
 * DERR_BUSY when AGENT_BG_RUNNING run already, DERR_UNAVAILABLE after
 * agent_bg_shutdown. Errors of the run itself (no key, a display another
 * run drives) end it "failed", seen in its status. */
int agent_bg_start(struct app *app, const char *task_id, const char *instruction, int timeout_s,
    const char *context, json_object **out, struct derr *e) DETM_NODISCARD;
/* The run's status, after waiting up to block_s seconds for it to end:
 * {run_id, status: running|done|failed|cancelled, task_id, instruction,
 * started_at, elapsed_s, result (done/cancelled: agent_run's reply, whose
 * success and summary are also at the top), error {code, message}
 * (failed)}. NULL with DERR_NOT_FOUND. */
json_object *agent_bg_status(const char *run_id, int block_s, struct derr *e);
/* Asks the run to stop (it ends at its next turn); its status. */
json_object *agent_bg_cancel(const char *run_id, struct derr *e);
/* Cancels every run and joins their threads; later starts are refused.
 * Safe to call twice. */
void agent_bg_shutdown(void);

/* The gui_agent action row on the task (task_id NULL: nothing): what the
 * synchronous route and a background run both write. */
void agent_log(struct app *app, const char *task_id, const char *instruction, int64_t timeout_s,
    json_object *out);

#endif
