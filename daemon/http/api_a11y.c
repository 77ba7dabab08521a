/*
 * api_a11y.c - GET /api/desktop/elements: the accessibility tree of a
 * task's own display (a11y.c, read through its detm-a11y helper).
 *
 * Query: task_id (required for now: only task displays have a bus of
 * detm's), window, role, name (filters, see a11y.h), states (comma-
 * separated names that must all be set), max (1..LIM_A11Y_ELEMENTS,
 * default LIM_A11Y_DEFAULT). A reply with no element says why in "hint":
 * the walk was cut short, nothing accessible shows, or the filter matched
 * nothing (a11y_reply.h).
 *
 * Does not: ground or act (gui_find/gui_do still ground by vision), or
 * read the shared desktop's tree.
 */
#include <string.h>

#include "api.h"
#include "desktop/takeover.h"
#include "lim.h"
#include "task/task.h"
#include "x11/a11y.h"
#include "x11/a11y_reply.h"
#include "x11/display.h"

#define FILTER_MAX 200
#define STATES_MAX 16

/* The running display of task id: its number and name. 0, or -1 (409). */
static int
task_display(const char *id, int *number, char *name, size_t cap, struct derr *e)
{
	json_object *all = display_list(), *arr = json_object_object_get(all, "displays");
	int rc = -1;

	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *d = json_object_array_get_idx(arr, i);

		if (strcmp(json_object_get_string(json_object_object_get(d, "task_id")), id) != 0 ||
		    strcmp(json_object_get_string(json_object_object_get(d, "state")), "running") != 0)
			continue;
		*number = json_object_get_int(json_object_object_get(d, "number"));
		snprintf(name, cap, "%s", json_object_get_string(json_object_object_get(d, "name")));
		rc = 0;
		break;
	}
	json_object_put(all);
	if (rc != 0)
		derr_set(e, DERR_CONFLICT, "task_id", "task %s has no display of its own running; the "
		    "accessibility tree is read on task displays (start one with display: true or "
		    "POST /api/tasks/%s/display)", id, id);
	return rc;
}

/* A filter from the query: NULL when absent or empty; 400 when too long. */
static int
filter(struct req *r, const char *key, const char **out, struct derr *e)
{
	const char *v = req_query(r, key);

	*out = v != NULL && v[0] != '\0' ? v : NULL;
	if (v != NULL && strlen(v) > FILTER_MAX)
		return derr_set(e, DERR_INVALID, key, "%s is longer than %d bytes", key, FILTER_MAX);
	return 0;
}

/* "focused,enabled" -> ["focused","enabled"] (*out NULL when absent). */
static int
states_list(struct req *r, json_object **out, struct derr *e)
{
	const char *v;
	char buf[FILTER_MAX + 1], *tok, *save = NULL;

	*out = NULL;
	if (filter(r, "states", &v, e) != 0)
		return -1;
	if (v == NULL)
		return 0;
	snprintf(buf, sizeof buf, "%s", v);
	*out = json_object_new_array();
	for (tok = strtok_r(buf, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
		if (json_object_array_length(*out) >= STATES_MAX) {
			json_object_put(*out);
			*out = NULL;
			return derr_set(e, DERR_INVALID, "states", "at most %d states", STATES_MAX);
		}
		json_object_array_add(*out, json_object_new_string(tok));
	}
	return 0;
}

int
api_desktop_elements(struct req *r, struct derr *e)
{
	struct a11y_query q = { 0 };
	const char *id = NULL;
	json_object *meta, *out = NULL, *states = NULL;
	char name[32];
	int64_t max;
	int st, number, rc = -1;

	if (api_opt_task_id(r, true, &id, e) != 0 || filter(r, "window", &q.window, e) != 0 ||
	    filter(r, "role", &q.role, e) != 0 || filter(r, "name", &q.name, e) != 0 ||
	    req_query_int(r, "max", 1, LIM_A11Y_ELEMENTS, LIM_A11Y_DEFAULT, &max, e) != 0 ||
	    states_list(r, &states, e) != 0)
		goto out;
	if (id == NULL) {
		derr_set(e, DERR_CONFLICT, "task_id", "give task_id: the accessibility tree is read on "
		    "a task's own display (the shared desktop %s has no accessibility bus of detm's)",
		    display_shared_name());
		goto out;
	}
	if (takeover_gate_look(id, e) != 0 || task_meta(r->app->store, id, &st, &meta, e) != 0)
		goto out;     /* a human driving may be typing a password: no tree for the agent */
	json_object_put(meta);
	if (task_display(id, &number, name, sizeof name, e) != 0)
		goto out;
	q.states = states;
	q.max = (int)max;
	if (a11y_elements(number, &q, &out, e) != 0)
		goto out;
	if (json_object_get_int(json_object_object_get(out, "count")) == 0) {
		char hint[400];

		a11y_reply_hint(out, q.window || q.role || q.name || q.states ? "element matching the filter" :
		    "element", hint, sizeof hint);
		json_object_object_add(out, "hint", json_object_new_string(hint));
	}
	json_object_object_add(out, "task_id", json_object_new_string(id));
	json_object_object_add(out, "display", json_object_new_string(name));
	json_object_object_add(out, "max", json_object_new_int((int)max));
	rc = req_reply(r, 200, out);
	out = NULL;
out:
	json_object_put(out);
	json_object_put(states);
	return rc;
}
