/*
 * api_gui.c - the GUI agent routes: POST /api/gui/find and POST /api/gui/do.
 *
 * Handlers check the body's shape (task_id, description / instruction,
 * after_screenshot) and hand the work to gui.c. Does not: parse
 * instructions, capture, ground or act.
 */
#include <string.h>

#include "api.h"
#include "gui.h"
#include "jx.h"
#include "util.h"

int
api_gui_find(struct req *r, struct derr *e)
{
	static const char *const keys[] = { "task_id", "description" };
	const char *task_id = NULL, *desc;
	json_object *out;

	if (jx_only(r->body, keys, ARRAY_LEN(keys), e) != 0 ||
	    api_opt_task_id(r, false, &task_id, e) != 0 ||
	    jx_str(r->body, "description", true, 1, GROUND_MAX_DESCRIPTION, &desc, e) != 0 ||
	    gui_find(r->app, task_id, desc, &out, e) != 0)
		return -1;
	return req_reply(r, 200, out);
}

int
api_gui_do(struct req *r, struct derr *e)
{
	static const char *const keys[] = { "task_id", "instruction", "after_screenshot" };
	const char *task_id = NULL, *instr;
	bool after = true, has;
	json_object *out;

	if (jx_only(r->body, keys, ARRAY_LEN(keys), e) != 0 ||
	    api_opt_task_id(r, false, &task_id, e) != 0 ||
	    jx_str(r->body, "instruction", true, 1, GUI_MAX_INSTRUCTION, &instr, e) != 0 ||
	    jx_bool(r->body, "after_screenshot", &after, &has, e) != 0 ||
	    gui_do(r->app, task_id, instr, after, &out, e) != 0)
		return -1;
	return req_reply(r, 200, out);
}
