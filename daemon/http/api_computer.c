/*
 * api_computer.c - the provider computer dialects over HTTP:
 *   POST /api/computer/{dialect}   a provider's computer calls, run on a
 *                                  task's display, answered in its form
 *   GET  /api/computer/{dialect}   a first look: a screenshot in its image
 *                                  form, with the tool declaration
 * dialect: anthropic, openai, gemini (desktop/dialect.h says what each
 * takes and answers).
 *
 * Query: task_id (the task whose display is driven; absent: the shared
 * desktop), max_side (a screenshot's long side, 16..4096; default: the
 * dialect's budget), screenshot (auto, each, last, none: when results
 * carry the screen), detm (1: reply {answer, detm, calls, failed} instead
 * of the answer alone).
 *
 * The reply's body is the answer as the provider takes it; detm's own
 * account rides in headers: X-Detm-Calls (calls answered), X-Detm-Failed
 * (of them, answered with an error), X-Detm-Verdicts (each desktop
 * action's verdict, comma-separated), X-Detm-Error (the first failure).
 * Only a body that is not the dialect's shape (400), an unknown task or
 * dialect (404), an unacknowledged safety check (409) or a failed closing
 * screenshot is an HTTP error, in detm's error shape.
 *
 * Does not: map actions (desktop/dialect*.c).
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "core/jx.h"
#include "desktop/dialect.h"
#include "task/task.h"

/* The query's options; *detm for ?detm=1. */
static int
options(struct req *r, const char **dialect, struct dialect_opts *o, bool *detm, struct derr *e)
{
	static const char *const shots[] = { "auto", "each", "last", "none" };
	const char *s = req_query(r, "screenshot"), *d = req_query(r, "detm");
	int64_t side;
	size_t i;

	memset(o, 0, sizeof *o);
	*dialect = r->nparams > 0 ? r->params[0] : "";
	if (!dialect_known(*dialect))
		return derr_set(e, DERR_NOT_FOUND, "dialect", "no computer dialect '%.*s' (anthropic, "
		    "openai, gemini)", utf8_prec(*dialect, 32), *dialect);
	if (req_query_int(r, "max_side", 16, 4096, 0, &side, e) != 0)
		return -1;
	o->max_side = (int)side;
	for (i = 0; s != NULL && i < ARRAY_LEN(shots) && strcmp(shots[i], s) != 0; i++)
		;
	if (s != NULL && i == ARRAY_LEN(shots))
		return derr_set(e, DERR_INVALID, "screenshot", "screenshot must be auto, each, last or none");
	o->shots = s == NULL ? DIALECT_SHOTS_AUTO : (enum dialect_shots)i;
	*detm = d != NULL && strcmp(d, "1") == 0;
	o->task_id = req_query(r, "task_id");
	if (o->task_id != NULL && o->task_id[0] == '\0')
		o->task_id = NULL;
	if (o->task_id != NULL) {
		json_object *meta = NULL;
		int st;

		if (!id_valid(o->task_id))
			return derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%.*s'",
			    utf8_prec(o->task_id, 64), o->task_id);
		if (task_meta(r->app->store, o->task_id, &st, &meta, e) != 0)
			return -1;
		json_object_put(meta);
	}
	return 0;
}

/* obj as the raw JSON reply (so headers go with it); takes obj. */
static int
reply_json(struct req *r, json_object *obj)
{
	size_t len = 0;
	const char *text = jx_string(obj, &len);
	unsigned char *copy = xmalloc(len + 1);

	memcpy(copy, text, len + 1);
	json_object_put(obj);
	return req_reply_raw(r, 200, "application/json", copy, len);
}

int
api_computer_post(struct req *r, struct derr *e)
{
	struct dialect_opts o;
	struct dialect_out out;
	const char *dialect;
	json_object *reply;
	bool detm;

	if (api_body_check(r, api_computer_post, e) != 0 || options(r, &dialect, &o, &detm, e) != 0)
		return -1;
	if (dialect_run(r->app, dialect, r->body, &o, &out, e) != 0)
		return -1;
	if (detm) {
		reply = json_object_new_object();
		json_object_object_add(reply, "answer", json_object_get(out.answer));
		json_object_object_add(reply, "detm", json_object_get(out.detm));
		json_object_object_add(reply, "calls", json_object_new_int(out.calls));
		json_object_object_add(reply, "failed", json_object_new_int(out.failed));
	} else {
		reply = json_object_get(out.answer);
	}
	req_header(r, "X-Detm-Calls", "%d", out.calls);
	req_header(r, "X-Detm-Failed", "%d", out.failed);
	if (out.verdicts[0] != '\0')
		req_header(r, "X-Detm-Verdicts", "%s", out.verdicts);
	if (out.error[0] != '\0') {
		/* A header value is one line of visible ASCII. */
		char line[sizeof out.error];
		size_t i;

		for (i = 0; out.error[i] != '\0' && i + 1 < sizeof line; i++)
			line[i] = out.error[i] >= 0x20 && out.error[i] < 0x7f ? out.error[i] : '?';
		line[i] = '\0';
		req_header(r, "X-Detm-Error", "%s", line);
	}
	dialect_out_free(&out);
	return reply_json(r, reply);
}

int
api_computer_get(struct req *r, struct derr *e)
{
	struct dialect_opts o;
	const char *dialect;
	json_object *look;
	bool detm;

	if (options(r, &dialect, &o, &detm, e) != 0 ||
	    dialect_look(r->app, dialect, &o, &look, e) != 0)
		return -1;
	return req_reply(r, 200, look);
}
