/*
 * mcp.c - see mcp.h. The method table below is the whole protocol surface:
 * which methods each era serves and who answers them.
 *
 * Error codes: -32600 not a request object, jsonrpc not "2.0", bad id,
 * requests before initialize, initialize twice or after a stateless
 * request; -32601 unknown method (server/discover in a handshake session,
 * ping in 2026-07-28); -32602 bad params, unknown tool, a cursor (none is
 * handed out), a 2026 request without clientCapabilities or (in a
 * stateless session) without the envelope, server/discover without it, an
 * unknown skill, resource or task; -32022 a 2026 envelope naming a
 * version we do not serve; -32021 a request to tasks/get, tasks/cancel or
 * tasks/update (or to a tool that needs a task) without the Tasks
 * extension in its clientCapabilities. In the stateless era
 * mcp_out.http_status carries the HTTP status of an error (400, 404) for
 * the HTTP transport. Problems with a known tool's arguments are tool
 * results with isError (MCP 2025-11-25), never protocol errors.
 */
#include "mcp.h"

#include <json-c/printbuf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_skill.h"
#include "mcp_tasks.h"
#include "result.h"
#include "schema.h"
#include "utf8.h"

#define V_ANNOT        MCP_V_2025_03_26   /* tool annotations */
#define V_TITLE        MCP_V_2025_06_18   /* Tool.title, outputSchema, Implementation.title */
#define V_PROGRESS_MSG MCP_V_2025_03_26   /* ProgressNotification.message */

static const char *const mcp_versions[MCP_V_COUNT] = {
	"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28",
};

/* Which era serves a method: */
enum { ERA_LEGACY = 1, ERA_MODERN = 2, ERA_BOTH = 3 };
enum mcp_method {
	M_INITIALIZE, M_PING, M_DISCOVER, M_LIST, M_CALL, M_SETLEVEL,
	M_RES_LIST, M_RES_TEMPLATES, M_RES_READ, M_SKILLS_LIST, M_SKILLS_GET,
	M_TASK_GET, M_TASK_CANCEL, M_TASK_UPDATE,
};
static const struct {
	const char *name;
	enum mcp_method m;
	int eras;
} mcp_methods[] = {
	{ "initialize",      M_INITIALIZE, ERA_LEGACY },
	{ "ping",            M_PING,       ERA_LEGACY },
	{ "logging/setLevel", M_SETLEVEL,  ERA_LEGACY },
	{ "server/discover", M_DISCOVER,   ERA_MODERN },
	{ "tools/list",      M_LIST,       ERA_BOTH },
	{ "tools/call",      M_CALL,       ERA_BOTH },
	/* the skills extension (SEP-2640) and the resources it reads through */
	{ "resources/list",  M_RES_LIST,   ERA_BOTH },
	{ "resources/templates/list", M_RES_TEMPLATES, ERA_BOTH },
	{ "resources/read",  M_RES_READ,   ERA_BOTH },
	{ "skills/list",     M_SKILLS_LIST, ERA_BOTH },
	{ "skills/get",      M_SKILLS_GET, ERA_BOTH },
	/* the Tasks extension (SEP-2663; mcp_tasks.h) */
	{ "tasks/get",       M_TASK_GET,   ERA_MODERN },
	{ "tasks/cancel",    M_TASK_CANCEL, ERA_MODERN },
	{ "tasks/update",    M_TASK_UPDATE, ERA_MODERN },
};

int
mcp_version_find(const char *s)
{
	for (int v = 0; v < MCP_V_COUNT; v++)
		if (s != NULL && strcmp(s, mcp_versions[v]) == 0)
			return v;
	return -1;
}

const char *
mcp_version_name(int v)
{
	return v >= 0 && v < MCP_V_COUNT ? mcp_versions[v] : "none";
}

static struct json_object *
mcp_response(struct json_object *id, struct json_object *result)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "id", id ? json_object_get(id) : NULL);
	json_object_object_add(r, "result", result);
	return r;
}

struct json_object *
mcp_error(struct json_object *id, int code, struct json_object *data, const char *fmt, ...)
{
	struct json_object *r = json_object_new_object(), *e = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	utf8_fix_in_place(msg, sizeof msg);
	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", json_object_new_string(msg));
	if (data != NULL)
		json_object_object_add(e, "data", data);
	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "id", id ? json_object_get(id) : NULL);
	json_object_object_add(r, "error", e);
	return r;
}

struct json_object *
mcp_progress(struct json_object *token, int v, double progress, const char *message)
{
	struct json_object *n = json_object_new_object(), *p = json_object_new_object();
	char buf[320];

	if (json_object_is_type(token, json_type_string))
		json_object_object_add(p, "progressToken", json_object_new_string(json_object_get_string(token)));
	else
		json_object_object_add(p, "progressToken", json_object_new_int64(json_object_get_int64(token)));
	json_object_object_add(p, "progress", json_object_new_double(progress));
	if (v >= V_PROGRESS_MSG && message != NULL) {
		utf8_fix(buf, sizeof buf, message, strlen(message));
		json_object_object_add(p, "message", json_object_new_string(buf));
	}
	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method", json_object_new_string("notifications/progress"));
	json_object_object_add(n, "params", p);
	return n;
}

static struct json_object *
mcp_server_info(const struct mcp_session *s, int v)
{
	struct json_object *info = json_object_new_object();

	json_object_object_add(info, "name", json_object_new_string(s->server_name));
	json_object_object_add(info, "version", json_object_new_string(MCP_SERVER_VERSION));
	if (v >= V_TITLE)
		json_object_object_add(info, "title", json_object_new_string("detm desktop task manager"));
	return info;
}

/* The 2026-07-28 fields every result carries. */
static void
mcp_modern_result(const struct mcp_session *s, struct json_object *res, bool cacheable)
{
	struct json_object *meta;

	json_object_object_add(res, "resultType", json_object_new_string("complete"));
	if (cacheable) {
		json_object_object_add(res, "ttlMs", json_object_new_int(MCP_LIST_TTL_MS));
		json_object_object_add(res, "cacheScope", json_object_new_string("public"));
	}
	if (!json_object_object_get_ex(res, "_meta", &meta) || !json_object_is_type(meta, json_type_object)) {
		meta = json_object_new_object();
		json_object_object_add(res, "_meta", meta);
	}
	json_object_object_add(meta, MCP_META_SERVER, mcp_server_info(s, MCP_V_MODERN));
}

/* legacy: the logging capability too. detm sends no log notifications
 * (it logs to stderr), so any level is honoured trivially; it is declared
 * so that clients may call logging/setLevel. */
static struct json_object *
mcp_capabilities(bool legacy)
{
	struct json_object *caps = json_object_new_object(), *tools = json_object_new_object();
	struct json_object *res = json_object_new_object(), *ext = json_object_new_object();

	json_object_object_add(tools, "listChanged", json_object_new_boolean(0));
	json_object_object_add(caps, "tools", tools);
	/* resources: the skill's file (mcp_skill.h); no subscriptions */
	json_object_object_add(res, "listChanged", json_object_new_boolean(0));
	json_object_object_add(caps, "resources", res);
	json_object_object_add(ext, MCP_SKILL_EXT, json_object_new_object());
	if (!legacy)        /* tasks: stateless requests only (they name the extension) */
		json_object_object_add(ext, MCP_TASKS_EXT, json_object_new_object());
	json_object_object_add(caps, "extensions", ext);
	if (legacy)
		json_object_object_add(caps, "logging", json_object_new_object());
	return caps;
}

static struct json_object *
mcp_set_level(struct json_object *id, struct json_object *params)
{
	static const char *const levels[] = { "debug", "info", "notice", "warning", "error",
	                                      "critical", "alert", "emergency" };
	struct json_object *l;

	if (params != NULL && json_object_object_get_ex(params, "level", &l) &&
	    json_object_is_type(l, json_type_string))
		for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
			if (strcmp(json_object_get_string(l), levels[i]) == 0)
				return mcp_response(id, json_object_new_object());
	return mcp_error(id, MCP_E_PARAMS, NULL, "logging/setLevel needs params.level, one of debug, "
	                 "info, notice, warning, error, critical, alert, emergency");
}

static struct json_object *
mcp_initialize(struct mcp_session *s, struct json_object *id, struct json_object *params,
               struct mcp_out *out)
{
	struct json_object *pv, *res;
	int v, expect = MCP_NONE;

	if (params == NULL || !json_object_object_get_ex(params, "protocolVersion", &pv) ||
	    !json_object_is_type(pv, json_type_string))
		return mcp_error(id, MCP_E_PARAMS, NULL, "initialize needs params.protocolVersion (a string)");
	v = mcp_version_find(json_object_get_string(pv));
	if (v < 0 || v > MCP_V_LEGACY_LATEST)
		v = MCP_V_LEGACY_LATEST;    /* spec: answer our latest; the client decides */
	if (!atomic_compare_exchange_strong(&s->version, &expect, v)) {
		if (expect == MCP_V_MODERN)
			return mcp_error(id, MCP_E_REQUEST, NULL, "this connection speaks protocol 2026-07-28 "
			                 "(stateless: no initialize); start a new one for the handshake");
		return mcp_error(id, MCP_E_REQUEST, NULL, "already initialized (protocol version %s)",
		                 mcp_versions[expect]);
	}
	out->initialized = true;
	out->version = v;
	if (json_object_object_get_ex(params, "clientInfo", &res) &&
	    json_object_object_get_ex(res, "name", &pv) && json_object_is_type(pv, json_type_string) &&
	    strcasestr(json_object_get_string(pv), "openclaw") != NULL)
		atomic_store(&s->openclaw, true);
	res = json_object_new_object();
	json_object_object_add(res, "protocolVersion", json_object_new_string(mcp_versions[v]));
	json_object_object_add(res, "capabilities", mcp_capabilities(true));
	json_object_object_add(res, "serverInfo", mcp_server_info(s, v));
	json_object_object_add(res, "instructions", json_object_new_string(tools_instructions()));
	return mcp_response(id, res);
}

static struct json_object *
mcp_discover(struct mcp_session *s, struct json_object *id)
{
	struct json_object *res = json_object_new_object(), *vs = json_object_new_array();

	for (int v = MCP_V_COUNT - 1; v >= 0; v--)
		json_object_array_add(vs, json_object_new_string(mcp_versions[v]));
	json_object_object_add(res, "supportedVersions", vs);
	json_object_object_add(res, "capabilities", mcp_capabilities(false));
	json_object_object_add(res, "instructions", json_object_new_string(tools_instructions()));
	mcp_modern_result(s, res, true);
	return mcp_response(id, res);
}

static void
mcp_hint(struct json_object *o, const char *key, bool on)
{
	json_object_object_add(o, key, json_object_new_boolean(on));
}

/* A private deep copy: json-c reference counts are not thread-safe, and
 * the table is shared by every thread. */
static struct json_object *
mcp_copy(struct json_object *o)
{
	struct json_object *c = NULL;

	if (json_object_deep_copy(o, &c, NULL) != 0)
		abort();
	return c;
}

static struct json_object *
mcp_tool_json(const struct tool *t, int v, bool extra)
{
	struct json_object *o = json_object_new_object(), *ann;

	json_object_object_add(o, "name", json_object_new_string(t->name));
	if (v >= V_TITLE)
		json_object_object_add(o, "title", json_object_new_string(t->title));
	json_object_object_add(o, "description", json_object_new_string(t->description));
	json_object_object_add(o, "inputSchema", mcp_copy(t->input_schema));
	if (v >= V_TITLE && !extra && tools_output_schema(t) != NULL)
		json_object_object_add(o, "outputSchema", mcp_copy(tools_output_schema(t)));
	if (v >= V_ANNOT) {
		ann = json_object_new_object();
		json_object_object_add(ann, "title", json_object_new_string(t->title));
		mcp_hint(ann, "readOnlyHint", t->flags & TOOL_READ_ONLY);
		mcp_hint(ann, "destructiveHint", t->flags & TOOL_DESTRUCTIVE);
		mcp_hint(ann, "idempotentHint", t->flags & TOOL_IDEMPOTENT);
		mcp_hint(ann, "openWorldHint", t->flags & TOOL_OPEN_WORLD);
		json_object_object_add(o, "annotations", ann);
	}
	if (v == MCP_V_MODERN && (t->flags & TOOL_TASK)) {
		ann = json_object_new_object();
		json_object_object_add(ann, "taskSupport", json_object_new_string(
		    t->flags & TOOL_TASK_REQUIRED ? "required" : "optional"));
		json_object_object_add(o, "execution", ann);
	}
	return o;
}

struct json_object *
mcp_tools_array(int v)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < tools_count(); i++)
		json_object_array_add(arr, mcp_tool_json(tools_at(i), v, false));
	return arr;
}

/* A prebuilt array's serializer: its text, as built (json-c calls it when
 * the reply is written out; nothing reads the array in between). */
static int
mcp_text_serialize(struct json_object *o, struct printbuf *pb, int level, int flags)
{
	const char *text = json_object_get_userdata(o);

	(void)level;
	(void)flags;
	return printbuf_memappend(pb, text, (int)strlen(text));
}

bool
mcp_memory_hidden(struct mcp_session *s)
{
	return s->memory == MCP_MEMORY_OFF ||
	    (s->memory == MCP_MEMORY_AUTO && atomic_load(&s->openclaw));
}

static bool
mcp_is_memory_tool(const char *name)
{
	return strncmp(name, "memory_", 7) == 0;
}

/* The table without the memory tools. */
static struct json_object *
mcp_tools_array_no_memory(int v)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < tools_count(); i++)
		if (!mcp_is_memory_tool(tools_at(i)->name))
			json_object_array_add(arr, mcp_tool_json(tools_at(i), v, false));
	return arr;
}

static struct json_object *
mcp_tools_list(struct mcp_session *s, struct json_object *id, struct json_object *params, int v)
{
	struct json_object *res, *arr, *cursor;
	size_t i;

	if (params != NULL && json_object_object_get_ex(params, "cursor", &cursor) && cursor != NULL)
		return mcp_error(id, MCP_E_PARAMS, NULL, "invalid cursor: tools/list returns every tool at once");
	if (mcp_memory_hidden(s)) {
		arr = mcp_tools_array_no_memory(v);
	} else if (s->nextra == 0 && mcp_tools_text[v] != NULL) {
		arr = json_object_new_array();
		json_object_set_serializer(arr, mcp_text_serialize, (void *)(uintptr_t)mcp_tools_text[v],
		    NULL);
	} else {
		arr = mcp_tools_array(v);
	}
	for (i = 0; i < s->nextra; i++)
		json_object_array_add(arr, mcp_tool_json(&s->extra[i], v, true));
	res = json_object_new_object();
	json_object_object_add(res, "tools", arr);
	if (v == MCP_V_MODERN)
		mcp_modern_result(s, res, true);
	return mcp_response(id, res);
}

/* Whether the request's 2026 clientCapabilities declare the Tasks
 * extension. */
static bool
mcp_wants_tasks(struct json_object *params)
{
	struct json_object *meta, *caps, *ext;

	return params != NULL && json_object_object_get_ex(params, "_meta", &meta) &&
	       json_object_object_get_ex(meta, MCP_META_CAPS, &caps) &&
	       json_object_object_get_ex(caps, "extensions", &ext) &&
	       json_object_is_type(ext, json_type_object) &&
	       json_object_object_get_ex(ext, MCP_TASKS_EXT, NULL);
}

/* -32021 naming the Tasks extension, for what. */
static struct json_object *
mcp_tasks_required(struct json_object *id, const char *what)
{
	struct json_object *data = json_object_new_object(), *req = json_object_new_object();
	struct json_object *ext = json_object_new_object();

	json_object_object_add(ext, MCP_TASKS_EXT, json_object_new_object());
	json_object_object_add(req, "extensions", ext);
	json_object_object_add(data, "requiredCapabilities", req);
	return mcp_error(id, MCP_E_MISSING_CAP, data, "%s needs the client capability "
	                 "extensions[\"%s\"] in this request's clientCapabilities", what, MCP_TASKS_EXT);
}

/* tasks/get, tasks/cancel, tasks/update. */
static struct json_object *
mcp_task_method(struct mcp_session *s, struct json_object *id, struct json_object *params,
                enum mcp_method m, struct mcp_out *out)
{
	struct json_object *res, *tid;
	const char *task;
	int rc;

	if (!mcp_wants_tasks(params))
		return mcp_tasks_required(id, m == M_TASK_GET ? "tasks/get" : m == M_TASK_CANCEL ?
		                          "tasks/cancel" : "tasks/update");
	if (!json_object_object_get_ex(params, "taskId", &tid) || !json_object_is_type(tid, json_type_string))
		return mcp_error(id, MCP_E_PARAMS, NULL, "params.taskId (a string) is required");
	task = json_object_get_string(tid);
	res = json_object_new_object();
	if (m == M_TASK_GET) {
		if (!mcp_tasks_describe(task, true, res))
			goto unknown;
	} else if (m == M_TASK_CANCEL) {
		if ((rc = mcp_tasks_cancel(task)) < 0)
			goto unknown;
		if (rc == 1) {
			out->act = MCP_ACT_TASK_CANCEL;
			snprintf(out->task_key, sizeof out->task_key, "task:%s", task);
		}
	} else if (!mcp_tasks_describe(task, false, json_object_new_object())) {
		goto unknown;   /* tasks/update: detm's tasks never ask for input; an ack */
	}
	mcp_modern_result(s, res, false);
	return mcp_response(id, res);
unknown:
	json_object_put(res);
	return mcp_error(id, MCP_E_PARAMS, NULL, "Unknown task: %.*s", utf8_prec(task, 80), task);
}

/* params.uri when it is a string, else NULL. */
static const char *
mcp_param_uri(struct json_object *params)
{
	struct json_object *u;

	if (params == NULL || !json_object_object_get_ex(params, "uri", &u) ||
	    !json_object_is_type(u, json_type_string))
		return NULL;
	return json_object_get_string(u);
}

/* resources/... and skills/...: one skill, one file (mcp_skill.h). */
static struct json_object *
mcp_skill_method(struct mcp_session *s, struct json_object *id, struct json_object *params,
                 enum mcp_method m, int v)
{
	struct json_object *res = json_object_new_object(), *arr, *cursor, *data;
	const char *uri = mcp_param_uri(params);

	if (m != M_RES_READ && m != M_SKILLS_GET && params != NULL &&
	    json_object_object_get_ex(params, "cursor", &cursor) && cursor != NULL) {
		json_object_put(res);
		return mcp_error(id, MCP_E_PARAMS, NULL, "invalid cursor: the list is returned at once");
	}
	switch (m) {
	case M_RES_LIST:
		arr = json_object_new_array();
		json_object_array_add(arr, mcp_skill_resource());
		json_object_object_add(res, "resources", arr);
		break;
	case M_RES_TEMPLATES:
		json_object_object_add(res, "resourceTemplates", json_object_new_array());
		break;
	case M_SKILLS_LIST:
		arr = json_object_new_array();
		json_object_array_add(arr, mcp_skill_entry());
		json_object_object_add(res, "skills", arr);
		break;
	case M_RES_READ:
		if ((arr = mcp_skill_contents(uri)) == NULL)
			goto unknown;
		json_object_object_add(res, "contents", arr);
		break;
	default:        /* M_SKILLS_GET */
		if (uri == NULL || strcmp(uri, MCP_SKILL_URI) != 0)
			goto unknown;
		json_object_object_add(res, "skill", mcp_skill_entry());
		break;
	}
	if (v == MCP_V_MODERN)
		mcp_modern_result(s, res, true);
	return mcp_response(id, res);
unknown:
	json_object_put(res);
	if (uri == NULL)
		return mcp_error(id, MCP_E_PARAMS, NULL, "params.uri (a string) is required");
	data = json_object_new_object();     /* SEP-2164: the uri asked for */
	json_object_object_add(data, "uri", json_object_new_string(uri));
	return mcp_error(id, MCP_E_PARAMS, data, "Resource not found: %.*s (detm serves %s)",
	                 utf8_prec(uri, 200), uri, MCP_SKILL_URI);
}

/* params._meta.progressToken when it is a string or an integer, else NULL. */
static struct json_object *
mcp_progress_token(struct json_object *params)
{
	struct json_object *meta, *tok;

	if (params == NULL || !json_object_object_get_ex(params, "_meta", &meta) ||
	    !json_object_is_type(meta, json_type_object) ||
	    !json_object_object_get_ex(meta, "progressToken", &tok))
		return NULL;
	if (json_object_is_type(tok, json_type_string) || json_object_is_type(tok, json_type_int))
		return tok;
	return NULL;
}

/* Check a tools/call. Returns a response (error, or isError result for bad
 * arguments) or NULL with out->tool and out->args set. */
static struct json_object *
mcp_call_check(struct mcp_session *s, struct json_object *id, struct json_object *params,
               struct mcp_out *out)
{
	struct json_object *name, *a = NULL, *res;
	char err[512];

	if (params == NULL || !json_object_object_get_ex(params, "name", &name) ||
	    !json_object_is_type(name, json_type_string))
		return mcp_error(id, MCP_E_PARAMS, NULL, "tools/call needs params.name (a string)");
	out->tool = tools_find(json_object_get_string(name));
	for (size_t i = 0; out->tool == NULL && i < s->nextra; i++)
		if (strcmp(s->extra[i].name, json_object_get_string(name)) == 0) {
			out->tool = &s->extra[i];
			/* fixtures: their arguments unchecked, as given */
			if (json_object_object_get_ex(params, "arguments", &a) &&
			    json_object_is_type(a, json_type_object))
				out->args = mcp_copy(a);
			else
				out->args = json_object_new_object();
			return NULL;
		}
	if (out->tool == NULL)
		return mcp_error(id, MCP_E_PARAMS, NULL, "Unknown tool: %.*s",
		    utf8_prec(json_object_get_string(name), 100), json_object_get_string(name));
	if (mcp_is_memory_tool(out->tool->name) && mcp_memory_hidden(s)) {
		out->tool = NULL;
		return mcp_error(id, MCP_E_PARAMS, NULL, "Unknown tool: %s: detm's memory tools are off "
		    "for this client (OpenClaw has its own memory tools over the same files); start "
		    "detm-mcp with --memory-tools on to have them", json_object_get_string(name));
	}
	json_object_object_get_ex(params, "arguments", &a);
	if (a != NULL && !json_object_is_type(a, json_type_object))
		return mcp_error(id, MCP_E_PARAMS, NULL, "tools/call params.arguments must be an object");
	out->args = json_object_new_object();
	if (a != NULL) {
		/* A null argument means "not given": models often send them. */
		json_object_object_foreach(a, key, val) {
			if (val != NULL)
				json_object_object_add(out->args, key, json_object_get(val));
		}
	}
	if (schema_check(tools_check_schema(out->tool), out->args, err, sizeof err) != 0) {
		res = result_error(NULL, "Invalid arguments for %s: %s.", out->tool->name, err);
		json_object_put(out->args);
		out->args = NULL;
		return mcp_call_reply(s, out, res);
	}
	schema_normalize(out->tool->input_schema, out->args);
	return NULL;
}

const char *
mcp_envelope_version(struct json_object *msg)
{
	struct json_object *params, *meta, *v;

	if (!json_object_object_get_ex(msg, "params", &params) ||
	    !json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, "_meta", &meta) ||
	    !json_object_is_type(meta, json_type_object) ||
	    !json_object_object_get_ex(meta, MCP_META_VERSION, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The 2026 envelope of a request: NULL when it is fine (and the session is
 * then stateless), else the error response. */
static struct json_object *
mcp_envelope_check(struct mcp_session *s, struct json_object *msg, struct json_object *id,
                   struct json_object *params)
{
	const char *want = mcp_envelope_version(msg);
	struct json_object *meta, *caps, *data, *sup;
	int expect = MCP_NONE;

	if (mcp_version_find(want) != MCP_V_MODERN) {
		data = json_object_new_object();
		sup = json_object_new_array();
		json_object_array_add(sup, json_object_new_string(mcp_versions[MCP_V_MODERN]));
		json_object_object_add(data, "supported", sup);
		json_object_object_add(data, "requested", json_object_new_string(want));
		return mcp_error(id, MCP_E_UNSUPPORTED, data, "Unsupported protocol version %.*s in "
		                 "_meta (stateless requests speak 2026-07-28)", utf8_prec(want, 40), want);
	}
	json_object_object_get_ex(params, "_meta", &meta);
	if (!json_object_object_get_ex(meta, MCP_META_CAPS, &caps) ||
	    !json_object_is_type(caps, json_type_object))
		return mcp_error(id, MCP_E_PARAMS, NULL, "_meta[\"%s\"] (an object) is required in "
		                 "protocol 2026-07-28", MCP_META_CAPS);
	/* In a handshake session the envelope is extra metadata: ignored. */
	atomic_compare_exchange_strong(&s->version, &expect, MCP_V_MODERN);
	return NULL;
}

/* A request (has an id): answer it or hand back a call. In the stateless
 * era, out->http_status tells an HTTP transport the status the 2026-07-28
 * transport rules give the error: 400 for a bad or missing envelope, 404
 * for a method this server does not serve (initialize, ping and
 * logging/setLevel included: they are gone from that revision). */
static void
mcp_request(struct mcp_session *s, struct json_object *msg, struct json_object *id,
            const char *method, struct json_object *params, bool in_batch, struct mcp_out *out)
{
	size_t i;
	int v, era;
	bool env = mcp_envelope_version(msg) != NULL;

	out->act = MCP_ACT_REPLY;
	v = atomic_load(&s->version);
	if (env && (v == MCP_NONE || v == MCP_V_MODERN) &&
	    (out->reply = mcp_envelope_check(s, msg, id, params)) != NULL) {
		out->http_status = 400;
		return;
	}
	v = atomic_load(&s->version);
	for (i = 0; i < sizeof mcp_methods / sizeof mcp_methods[0]; i++)
		if (strcmp(method, mcp_methods[i].name) == 0)
			break;
	if (i == sizeof mcp_methods / sizeof mcp_methods[0]) {
		out->reply = mcp_error(id, MCP_E_METHOD, NULL, "Method not found: %.*s",
		                       utf8_prec(method, 100), method);
		out->http_status = v == MCP_V_MODERN ? 404 : 0;
		return;
	}
	if (mcp_methods[i].m == M_DISCOVER && v == MCP_NONE) {
		/* server/discover is a 2026-07-28 request: it carries the envelope */
		out->reply = mcp_error(id, MCP_E_PARAMS, NULL, "server/discover needs the _meta envelope "
		                       "of protocol 2026-07-28 (%s, %s)", MCP_META_VERSION, MCP_META_CAPS);
		out->http_status = 400;
		return;
	}
	era = v == MCP_V_MODERN ? ERA_MODERN : ERA_LEGACY;
	if (v != MCP_NONE && !(mcp_methods[i].eras & era) &&
	    (mcp_methods[i].m != M_INITIALIZE || (v == MCP_V_MODERN && env))) {
		out->reply = mcp_error(id, MCP_E_METHOD, NULL, "Method not found: %s (not part of "
		                       "protocol %s)", method, mcp_versions[v]);
		out->http_status = v == MCP_V_MODERN ? 404 : 0;
		return;
	}
	if (v == MCP_V_MODERN && !env && mcp_methods[i].m != M_INITIALIZE) {
		out->reply = mcp_error(id, MCP_E_PARAMS, NULL, "Request is missing the required _meta "
		                       "envelope for protocol revision 2026-07-28 (%s, %s)",
		                       MCP_META_VERSION, MCP_META_CAPS);
		out->http_status = 400;
		return;
	}
	out->version = v;
	switch (mcp_methods[i].m) {
	case M_PING:
		out->reply = mcp_response(id, json_object_new_object());
		return;
	case M_INITIALIZE:
		out->reply = in_batch ? mcp_error(id, MCP_E_REQUEST, NULL, "initialize must not be part of a batch")
		                      : mcp_initialize(s, id, params, out);
		return;
	case M_DISCOVER:
		out->reply = mcp_discover(s, id);
		return;
	case M_SETLEVEL:
		if (v != MCP_NONE) {
			out->reply = mcp_set_level(id, params);
			return;
		}
		break;
	default:
		break;
	}
	if (v == MCP_NONE) {
		out->reply = mcp_error(id, MCP_E_REQUEST, NULL, "not initialized: send initialize first "
		                       "(or use protocol 2026-07-28 with its _meta envelope)");
		return;
	}
	if (mcp_methods[i].m == M_LIST) {
		out->reply = mcp_tools_list(s, id, params, v);
		return;
	}
	if (mcp_methods[i].m == M_TASK_GET || mcp_methods[i].m == M_TASK_CANCEL ||
	    mcp_methods[i].m == M_TASK_UPDATE) {
		out->reply = mcp_task_method(s, id, params, mcp_methods[i].m, out);
		if (out->reply != NULL && json_object_object_get_ex(out->reply, "error", NULL))
			out->http_status = 0;       /* mcp_status: -32021 is 400, -32602 200 */
		return;
	}
	if (mcp_methods[i].m != M_CALL) {
		out->reply = mcp_skill_method(s, id, params, mcp_methods[i].m, v);
		return;
	}
	out->id = id;
	if ((out->reply = mcp_call_check(s, id, params, out)) != NULL)
		return;
	out->act = MCP_ACT_CALL;
	out->progress_token = mcp_progress_token(params);
	out->task = v == MCP_V_MODERN && (out->tool->flags & TOOL_TASK) && mcp_wants_tasks(params);
	if (!out->task && (out->tool->flags & TOOL_TASK_REQUIRED)) {
		json_object_put(out->args);
		out->args = NULL;
		out->act = MCP_ACT_REPLY;
		out->reply = mcp_tasks_required(id, out->tool->name);
	}
}

void
mcp_message(struct mcp_session *s, struct json_object *msg, bool in_batch, struct mcp_out *out)
{
	struct json_object *id = NULL, *jv, *mv, *params = NULL;
	const char *method;
	bool has_id;

	memset(out, 0, sizeof *out);
	out->act = MCP_ACT_REPLY;
	out->version = atomic_load(&s->version);
	if (!json_object_is_type(msg, json_type_object)) {
		out->reply = mcp_error(NULL, MCP_E_REQUEST, NULL, "Invalid Request: a message must be a JSON object");
		return;
	}
	has_id = json_object_object_get_ex(msg, "id", &id);
	if (has_id && !json_object_is_type(id, json_type_string) && !json_object_is_type(id, json_type_int)) {
		out->reply = mcp_error(NULL, MCP_E_REQUEST, NULL, "Invalid Request: id must be a string or an integer");
		return;
	}
	if (!json_object_object_get_ex(msg, "jsonrpc", &jv) || !json_object_is_type(jv, json_type_string) ||
	    strcmp(json_object_get_string(jv), "2.0") != 0) {
		out->reply = mcp_error(id, MCP_E_REQUEST, NULL, "Invalid Request: jsonrpc must be \"2.0\"");
		return;
	}
	if (!json_object_object_get_ex(msg, "method", &mv)) {
		if (has_id && (json_object_object_get_ex(msg, "result", NULL) ||
		               json_object_object_get_ex(msg, "error", NULL)))
			out->act = MCP_ACT_NONE;    /* a response: we send no requests */
		else
			out->reply = mcp_error(id, MCP_E_REQUEST, NULL, "Invalid Request: no method");
		return;
	}
	if (!json_object_is_type(mv, json_type_string)) {
		out->reply = mcp_error(id, MCP_E_REQUEST, NULL, "Invalid Request: method must be a string");
		return;
	}
	method = json_object_get_string(mv);
	if (json_object_object_get_ex(msg, "params", &params) && params != NULL &&
	    !json_object_is_type(params, json_type_object)) {
		if (has_id)
			out->reply = mcp_error(id, MCP_E_PARAMS, NULL, "params must be an object");
		else
			out->act = MCP_ACT_NONE;
		return;
	}
	if (!has_id) {          /* a notification: never answered */
		out->act = MCP_ACT_NONE;
		if (strcmp(method, "notifications/cancelled") == 0 && params != NULL &&
		    json_object_object_get_ex(params, "requestId", &jv) && jv != NULL) {
			out->act = MCP_ACT_CANCEL;
			out->cancel_id = jv;
		}
		return;
	}
	mcp_request(s, msg, id, method, params, in_batch, out);
}

struct json_object *
mcp_task_start(const struct mcp_session *s, const struct mcp_out *out, char task_id[33], char key[160])
{
	struct json_object *res;
	char id[MCP_TASK_ID_LEN + 1];

	if (mcp_tasks_create(id) != 0)
		return NULL;
	snprintf(key, 160, "task:%s", id);
	memcpy(task_id, id, MCP_TASK_ID_LEN + 1);
	res = json_object_new_object();
	mcp_tasks_describe(id, false, res);
	mcp_modern_result(s, res, false);
	json_object_object_add(res, "resultType", json_object_new_string("task"));
	return mcp_response(out->id, res);
}

void
mcp_task_done(const struct mcp_out *out, const char *task_id, struct json_object *result)
{
	struct json_object *err;

	if (result != NULL && json_object_object_get_ex(result, "error", &err) &&
	    !json_object_object_get_ex(result, "content", NULL)) {
		mcp_tasks_fail(task_id, err);       /* a protocol error: the task failed */
	} else {
		if (result != NULL)
			result_for_version(result, out->version);
		mcp_tasks_finish(task_id, result);
	}
	json_object_put(result);
}

struct json_object *
mcp_call_reply(const struct mcp_session *s, const struct mcp_out *out, struct json_object *result)
{
	result_for_version(result, out->version);
	if (out->version == MCP_V_MODERN)
		mcp_modern_result(s, result, false);
	return mcp_response(out->id, result);
}
