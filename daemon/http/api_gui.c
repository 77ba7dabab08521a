/*
 * api_gui.c - the GUI agent routes: POST /api/gui/find and POST /api/gui/do.
 *
 * Handlers check the body's shape (task_id, description / instruction,
 * after_screenshot) and hand the work to gui.c. Does not: parse
 * instructions, capture, ground or act.
 */
#include <string.h>

#include "api.h"
#include "core/jx.h"
#include "desktop/desktop.h"
#include "desktop/takeover.h"
#include "gui/agent.h"
#include "gui/agent_bg.h"
#include "gui/gui.h"
#include "task/task.h"

int
api_gui_find(struct req *r, struct derr *e)
{
	const char *task_id = NULL, *desc;
	json_object *out;

	if (api_body_check(r, api_gui_find, e) != 0 ||
	    api_opt_task_id(r, false, &task_id, e) != 0 || takeover_gate_look(task_id, e) != 0 ||
	    jx_str(r->body, "description", true, 1, GROUND_MAX_DESCRIPTION, &desc, e) != 0 ||
	    gui_find(r->app, task_id, desc, &out, e) != 0)
		return -1;
	return req_reply(r, 200, out);
}

int
api_gui_do(struct req *r, struct derr *e)
{
	const char *task_id = NULL, *instr;
	bool after = true, has;
	json_object *out;

	if (api_body_check(r, api_gui_do, e) != 0 ||
	    api_opt_task_id(r, false, &task_id, e) != 0 || takeover_gate(task_id, e) != 0 ||
	    jx_str(r->body, "instruction", true, 1, GUI_MAX_INSTRUCTION, &instr, e) != 0 ||
	    jx_bool(r->body, "after_screenshot", &after, &has, e) != 0 ||
	    gui_do(r->app, task_id, instr, after, r->body, &out, e) != 0)
		return -1;
	return req_reply(r, 200, out);
}

/* POST /api/gui/agent {instruction, task_id?, timeout? (s), context?}. The
 * run is logged on the task as one `gui` action with the reply. */
int
api_gui_agent(struct req *r, struct derr *e)
{
	const char *task_id = NULL, *instr, *context = NULL;
	int64_t timeout = AGENT_TIMEOUT_DEFAULT_S;
	json_object *out, *meta = NULL;
	bool background = false, present = false;
	int st;

	if (api_body_check(r, api_gui_agent, e) != 0 ||
	    api_opt_task_id(r, false, &task_id, e) != 0 || takeover_gate(task_id, e) != 0 ||
	    jx_str(r->body, "instruction", true, 1, GUI_MAX_INSTRUCTION, &instr, e) != 0 ||
	    jx_int(r->body, "timeout", false, 1, AGENT_TIMEOUT_MAX_S, &timeout, NULL, e) != 0 ||
	    jx_str(r->body, "context", false, 0, 8000, &context, e) != 0 ||
	    jx_bool(r->body, "background", &background, &present, e) != 0)
		return -1;
	if (task_id != NULL) {
		if (task_meta(r->app->store, task_id, &st, &meta, e) != 0)
			return -1;
		json_object_put(meta);
	}
	if (background) {
		if (agent_bg_start(r->app, task_id, instr, (int)timeout, context, &out, e) != 0)
			return -1;
		return req_reply(r, 202, out);
	}
	if (agent_run(r->app, task_id, instr, (int)timeout, context, &out, e) != 0)
		return -1;
	agent_log(r->app, task_id, instr, timeout, out);
	return req_reply(r, 200, out);
}

/* GET /api/gui/agent/{id}?block_s: a background run's status. */
int
api_gui_agent_get(struct req *r, struct derr *e)
{
	int64_t block = 0;
	json_object *o;

	if (req_query_int(r, "block_s", 0, AGENT_BG_BLOCK_MAX_S, 0, &block, e) != 0 ||
	    (o = agent_bg_status(r->nparams > 0 ? r->params[0] : "", (int)block, e)) == NULL)
		return -1;
	return req_reply(r, 200, o);
}

/* POST /api/gui/agent/{id}/cancel: the run stops at its next turn. */
int
api_gui_agent_cancel(struct req *r, struct derr *e)
{
	json_object *o;

	if (api_body_check(r, api_gui_agent_cancel, e) != 0 ||
	    (o = agent_bg_cancel(r->nparams > 0 ? r->params[0] : "", e)) == NULL)
		return -1;
	return req_reply(r, 200, o);
}
