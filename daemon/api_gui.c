/*
 * api_gui.c - /api/gui/find and /api/gui/do: check the body, hand it to
 * gui.c. Argument names follow the MCP tools (description, instruction).
 */
#include "api.h"
#include "gui.h"
#include "jx.h"

static int
gui_task(struct req *r, const char **out, struct derr *e)
{
	if (jx_str(r->body, "task_id", false, 1, 64, out, e) != 0)
		return -1;
	if (*out != NULL && !id_plausible(*out))
		return derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%.64s'", *out);
	return 0;
}

int
api_gui_find(struct req *r, struct derr *e)
{
	const char *task = NULL, *what = NULL;
	json_object *o;

	if (gui_task(r, &task, e) != 0 ||
	    jx_str(r->body, "description", true, 1, GUI_TEXT_MAX, &what, e) != 0)
		return -1;
	if ((o = gui_find(r->app, task, what, e)) == NULL)
		return -1;
	return req_reply(r, 200, o);
}

int
api_gui_do(struct req *r, struct derr *e)
{
	const char *task = NULL, *what = NULL;
	json_object *o;

	if (gui_task(r, &task, e) != 0 ||
	    jx_str(r->body, "instruction", true, 1, GUI_TEXT_MAX, &what, e) != 0)
		return -1;
	if ((o = gui_do(r->app, task, what, e)) == NULL)
		return -1;
	return req_reply(r, 200, o);
}
