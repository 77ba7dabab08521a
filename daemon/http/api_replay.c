/*
 * api_replay.c - record once, replay (gui/replay.h) over HTTP:
 *   POST /api/tasks/{id}/replay   {params?, from_step?, replay_task_id?, block_s?, ask_model?,
 *                                  settle_ms?, timeout_ms?, display_width?,
 *                                  display_height?, display_resolution?} -> 202 the
 *                                  first progress (with block_s: waits that long;
 *                                  200 when it ended by then)
 *   GET  /api/tasks/{id}/replay   ?block_s: a replay task's progress, or a
 *                                  source's latest replay (with "replays")
 *
 * A replay is a new task (name "replay of <source>", metadata replay_of,
 * its own display and recording, the source's display size unless the
 * body gives one); with replay_task_id, an earlier replay of the same source that
 * is still active (one that stopped with needs_agent) goes on from
 * from_step on its own display.
 *
 * Does not: replay (gui/replay.c) or read the steps (task/replay_rows.c).
 */
#include <string.h>

#include "api.h"
#include "core/jx.h"
#include "core/log.h"
#include "gui/replay.h"
#include "lim.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "x11/display.h"

#define REPLAY_PARAMS_MAX 32

static int
params_check(json_object *p, struct derr *e)
{
	if (p == NULL)
		return 0;
	if (json_object_object_length(p) > REPLAY_PARAMS_MAX)
		return derr_set(e, DERR_INVALID, "params", "params holds over %d names", REPLAY_PARAMS_MAX);
	json_object_object_foreach(p, k, v) {
		if (!json_object_is_type(v, json_type_string) || strlen(k) > 4000 ||
		    strlen(json_object_get_string(v)) > 4000)
			return derr_set(e, DERR_INVALID, "params", "params maps names (or recorded texts) to "
			    "strings of at most 4000 bytes ('%.*s' is not one)", utf8_prec(k, 64), k);
	}
	return 0;
}

/* An earlier replay of source to go on with: active, its display running. */
static int
check_into(struct req *r, const char *source, const char *into, struct derr *e)
{
	json_object *meta = NULL;
	const char *of;
	int st, rc = -1;

	if (task_meta(r->app->store, into, &st, &meta, e) != 0)
		return derr_refield(e, "replay_task_id");
	of = json_object_get_string(json_object_object_get(meta, "replay_of"));
	if (of == NULL || strcmp(of, source) != 0)
		derr_set(e, DERR_INVALID, "replay_task_id", "task %s is not a replay of %s", into, source);
	else if (st != TASK_ACTIVE)
		derr_set(e, DERR_CONFLICT, "replay_task_id", "replay task %s is %s, not active", into, task_status_name(st));
	else if (!display_has(into))
		derr_set(e, DERR_CONFLICT, "replay_task_id", "replay task %s has no running display", into);
	else
		rc = 0;
	json_object_put(meta);
	return rc;
}

/* The new replay task with its display; id_out. */
static int
new_task(struct req *r, const char *source, json_object *smeta, char id_out[ID_LEN], struct derr *e)
{
	struct task_reg in = { 0 };
	json_object *meta = json_object_new_object(), *info = NULL;
	char name[64];
	struct derr e2;
	int w = 0, h = 0, rc = -1;

	if (api_display_size(r->body, "display_", &w, &h, e) != 0)
		goto out;
	if (w == 0 && api_display_size(smeta, "display_", &w, &h, &e2) != 0)
		w = h = 0;
	snprintf(name, sizeof name, "replay of %s", source);
	jx_add_str(meta, "replay_of", source);
	json_object_object_add(meta, "isolated_display", json_object_new_boolean(1));
	in.name = name;
	in.metadata = meta;
	if (task_register(r->app->store, &in, id_out, e) != 0)
		goto out;
	if (api_task_display_start(r, id_out, w, h, &info, e) != 0) {
		if (task_delete(r->app->store, id_out, &e2) != 0)
			log_warn("could not remove replay task %s after its display failed: %s", id_out, e2.message);
		goto out;
	}
	rc = 0;
out:
	json_object_put(info);
	json_object_put(meta);
	return rc;
}

int
api_task_replay(struct req *r, struct derr *e)
{
	struct replay_req q = { .ask_model = true };
	const char *source, *into = NULL;
	json_object *smeta = NULL, *out = NULL;
	int64_t from = 0, settle = 0, timeout = 0, block = 0;
	char id[ID_LEN];
	int st, rc = -1;

	if (api_body_check(r, api_task_replay, e) != 0 || api_known_task(r, &source, e) != 0 ||
	    jx_obj(r->body, "params", &q.params, e) != 0 || params_check(q.params, e) != 0 ||
	    jx_int(r->body, "from_step", false, 0, 499, &from, NULL, e) != 0 ||
	    jx_int(r->body, "settle_ms", false, 0, 60000, &settle, NULL, e) != 0 ||
	    jx_int(r->body, "timeout_ms", false, 100, 120000, &timeout, NULL, e) != 0 ||
	    jx_int(r->body, "block_s", false, 0, REPLAY_BLOCK_MAX_S, &block, NULL, e) != 0 ||
	    jx_str(r->body, "replay_task_id", false, 0, ID_LEN - 1, &into, e) != 0 ||
	    jx_bool(r->body, "ask_model", &q.ask_model, NULL, e) != 0)
		return -1;
	if (task_meta(r->app->store, source, &st, &smeta, e) != 0)
		return -1;
	if (into != NULL && into[0] != '\0') {
		if (check_into(r, source, into, e) != 0)
			goto out;
		snprintf(id, sizeof id, "%s", into);
	} else if (new_task(r, source, smeta, id, e) != 0) {
		goto out;
	}
	q.source_id = source;
	q.task_id = id;
	q.from_step = (int)from;
	q.settle_ms = (int)settle;
	q.timeout_ms = (int)timeout;
	if (replay_start(r->app, &q, &out, e) != 0) {
		struct derr e2;

		if (into == NULL || into[0] == '\0') {        /* no replay task without its replay */
			display_stop(id);
			if (task_delete(r->app->store, id, &e2) != 0)
				log_warn("could not remove replay task %s: %s", id, e2.message);
		}
		goto out;
	}
	if (block > 0) {        /* the caller waits for the result */
		json_object *o = replay_status(r->app, id, (int)block, e);
		const char *st2 = o != NULL ? json_object_get_string(json_object_object_get(o, "status")) : NULL;

		if (o != NULL) {
			json_object_put(out);
			out = o;
			rc = req_reply(r, st2 != NULL && strcmp(st2, "running") != 0 ? 200 : 202, out);
			goto out;
		}
	}
	rc = req_reply(r, 202, out);
out:
	json_object_put(smeta);
	return rc;
}

int
api_task_replay_get(struct req *r, struct derr *e)
{
	int64_t block = 0;
	const char *id;
	json_object *o, *sum, *list;
	struct derr e2;

	if (req_query_int(r, "block_s", 0, REPLAY_BLOCK_MAX_S, 0, &block, e) != 0 ||
	    api_known_task(r, &id, e) != 0)
		return -1;
	if ((o = replay_status(r->app, id, (int)block, &e2)) != NULL)
		return req_reply(r, 200, o);
	if (e2.code != DERR_NOT_FOUND) {
		*e = e2;
		return -1;
	}
	if ((sum = task_summary(r->app->store, id, DETAIL_ITEMS, false, e)) == NULL)
		return -1;
	list = json_object_object_get(sum, "replays");
	if (jx_alen(list) == 0) {
		json_object_put(sum);
		return derr_set(e, DERR_NOT_FOUND, NULL, "task %s is no replay and has none", id);
	}
	o = replay_status(r->app, json_object_get_string(json_object_array_get_idx(list,
	    jx_alen(list) - 1)), (int)block, e);
	if (o != NULL)
		json_object_object_add(o, "replays", json_object_get(list));
	json_object_put(sum);
	return o != NULL ? req_reply(r, 200, o) : -1;
}
