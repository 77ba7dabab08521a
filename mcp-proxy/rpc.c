/*
 * rpc.c - see rpc.h. Owns the negotiated protocol version and stdout.
 *
 * Error codes: -32700 unparseable JSON (id null); -32600 not a request
 * object, jsonrpc not "2.0", bad id, oversize line, a batch outside
 * 2025-03-26, requests before initialize; -32601 unknown method
 * (server/discover included: this is a handshake-era server, and the
 * error makes dual-era clients fall back to initialize); -32602 bad params,
 * unknown tool, a cursor (we never hand one out). Problems with a known
 * tool's arguments are tool results with isError (MCP 2025-11-25), never
 * protocol errors.
 *
 * Not here: reading stdin (main.c), threads and cancellation (worker.c),
 * HTTP (forward.c).
 */
#include "rpc.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jxkeep.h"
#include "utf8.h"
#include "caps.h"
#include "log.h"
#include "result.h"
#include "schema.h"
#include "tools.h"
#include "worker.h"

#define E_PARSE    (-32700)
#define E_REQUEST  (-32600)
#define E_METHOD   (-32601)
#define E_PARAMS   (-32602)
#define E_INTERNAL (-32603)

/* Oldest first; the index is what result_for_version takes. */
static const char *const rpc_versions[] = { "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25" };
#define V_COUNT  4
#define V_LATEST 3
#define V_BATCH  1          /* the only version with JSON-RPC batches */
#define V_ANNOT  1          /* tool annotations from 2025-03-26 */
#define V_TITLE  2          /* Tool.title, Implementation.title from 2025-06-18 */
#define V_PROGRESS_MSG 1    /* ProgressNotification.message from 2025-03-26 */

static atomic_int rpc_version = -1;     /* -1 until initialize */
static pthread_mutex_t rpc_out_lock = PTHREAD_MUTEX_INITIALIZER;
static bool rpc_out_broken;

void
rpc_send(struct json_object *msg)
{
	const char *s = json_object_to_json_string_ext(msg,
		JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t len = strlen(s), off = 0;
	char *line;
	ssize_t n;

	/* Compact JSON escapes every newline inside strings, so the only '\n'
	 * on the wire is the frame end. json-c passes bytes >= 0x80 through
	 * unchecked: anything invalid that reached a string (a daemon reply, a
	 * tool's text) is repaired here, so every line sent is valid UTF-8. */
	if (utf8_valid(s, len)) {
		line = malloc(len + 2);
		if (line == NULL)
			abort();
		memcpy(line, s, len + 1);
	} else {
		log_warn("repairing invalid UTF-8 in an outgoing message");
		line = utf8_dup(s, len, &len);  /* room for the '\n': see utf8_dup */
	}
	line[len++] = '\n';
	pthread_mutex_lock(&rpc_out_lock);
	while (!rpc_out_broken && off < len) {
		n = write(STDOUT_FILENO, line + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_warn("cannot write to stdout (%s); dropping output", strerror(errno));
			rpc_out_broken = true;
			break;
		}
		off += (size_t)n;
	}
	pthread_mutex_unlock(&rpc_out_lock);
	free(line);
	json_object_put(msg);
}

void
rpc_progress(void *ud, double elapsed_s, const char *message)
{
	struct json_object *token = ud, *n = json_object_new_object(), *p = json_object_new_object();
	char buf[320];

	if (json_object_is_type(token, json_type_string))
		json_object_object_add(p, "progressToken", json_object_new_string(json_object_get_string(token)));
	else
		json_object_object_add(p, "progressToken", json_object_new_int64(json_object_get_int64(token)));
	json_object_object_add(p, "progress", json_object_new_double(elapsed_s));
	if (atomic_load(&rpc_version) >= V_PROGRESS_MSG) {
		utf8_fix(buf, sizeof buf, message, strlen(message));
		json_object_object_add(p, "message", json_object_new_string(buf));
	}
	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method", json_object_new_string("notifications/progress"));
	json_object_object_add(n, "params", p);
	rpc_send(n);
}

/* params._meta.progressToken when it is a string or an integer, else NULL. */
static struct json_object *
rpc_progress_token(struct json_object *params)
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

/* A response envelope; id may be NULL (sent as null). Takes result. */
static struct json_object *
rpc_response(struct json_object *id, struct json_object *result)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "id", id ? json_object_get(id) : NULL);
	json_object_object_add(r, "result", result);
	return r;
}

static struct json_object *
rpc_error(struct json_object *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct json_object *
rpc_error(struct json_object *id, int code, const char *fmt, ...)
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
	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "id", id ? json_object_get(id) : NULL);
	json_object_object_add(r, "error", e);
	return r;
}

void
rpc_reject_oversize(size_t len)
{
	log_warn("discarded a %zu-byte line (limit %ld)", len, CAP_LINE_BYTES);
	rpc_send(rpc_error(NULL, E_REQUEST, "Invalid Request: message of %zu bytes exceeds the "
	                   "%ld-byte limit", len, CAP_LINE_BYTES));
}

static struct json_object *
rpc_initialize(struct json_object *id, struct json_object *params)
{
	struct json_object *pv, *res, *caps, *tools, *info;
	const char *want;
	int v, expect = -1;

	if (!json_object_object_get_ex(params, "protocolVersion", &pv) ||
	    !json_object_is_type(pv, json_type_string))
		return rpc_error(id, E_PARAMS, "initialize needs params.protocolVersion (a string)");
	want = json_object_get_string(pv);
	for (v = 0; v < V_COUNT; v++)
		if (strcmp(want, rpc_versions[v]) == 0)
			break;
	if (v == V_COUNT)
		v = V_LATEST;       /* spec: answer our latest; the client decides */
	if (!atomic_compare_exchange_strong(&rpc_version, &expect, v))
		return rpc_error(id, E_REQUEST, "already initialized (protocol version %s)",
		                 rpc_versions[atomic_load(&rpc_version)]);
	log_info("initialize: client asked for %s, using %s", want, rpc_versions[v]);

	res = json_object_new_object();
	json_object_object_add(res, "protocolVersion", json_object_new_string(rpc_versions[v]));
	caps = json_object_new_object();
	tools = json_object_new_object();
	json_object_object_add(tools, "listChanged", json_object_new_boolean(0));
	json_object_object_add(caps, "tools", tools);
	json_object_object_add(res, "capabilities", caps);
	info = json_object_new_object();
	json_object_object_add(info, "name", json_object_new_string("detm-mcp"));
	json_object_object_add(info, "version", json_object_new_string(DETM_MCP_VERSION));
	if (v >= V_TITLE)
		json_object_object_add(info, "title", json_object_new_string("detm desktop task manager"));
	json_object_object_add(res, "serverInfo", info);
	json_object_object_add(res, "instructions", json_object_new_string(tools_instructions()));
	return rpc_response(id, res);
}

static void
rpc_hint(struct json_object *o, const char *key, bool on)
{
	json_object_object_add(o, key, json_object_new_boolean(on));
}

static struct json_object *
rpc_tools_list(struct json_object *id, struct json_object *params)
{
	struct json_object *res, *arr, *cursor;
	int v = atomic_load(&rpc_version);
	size_t i;

	if (params != NULL && json_object_object_get_ex(params, "cursor", &cursor) && cursor != NULL)
		return rpc_error(id, E_PARAMS, "invalid cursor: tools/list returns every tool at once");
	arr = json_object_new_array();
	for (i = 0; i < tools_count(); i++) {
		const struct tool *t = tools_at(i);
		struct json_object *o = json_object_new_object(), *schema = NULL, *ann;

		json_object_object_add(o, "name", json_object_new_string(t->name));
		if (v >= V_TITLE)
			json_object_object_add(o, "title", json_object_new_string(t->title));
		json_object_object_add(o, "description", json_object_new_string(t->description));
		/* a private copy: json-c reference counts are not thread-safe */
		if (json_object_deep_copy(t->input_schema, &schema, NULL) != 0)
			abort();
		json_object_object_add(o, "inputSchema", schema);
		if (v >= V_TITLE && tools_output_schema(t) != NULL) {
			/* outputSchema (and structuredContent) from 2025-06-18 */
			schema = NULL;
			if (json_object_deep_copy(tools_output_schema(t), &schema, NULL) != 0)
				abort();
			json_object_object_add(o, "outputSchema", schema);
		}
		if (v >= V_ANNOT) {
			ann = json_object_new_object();
			json_object_object_add(ann, "title", json_object_new_string(t->title));
			rpc_hint(ann, "readOnlyHint", t->flags & TOOL_READ_ONLY);
			rpc_hint(ann, "destructiveHint", t->flags & TOOL_DESTRUCTIVE);
			rpc_hint(ann, "idempotentHint", t->flags & TOOL_IDEMPOTENT);
			rpc_hint(ann, "openWorldHint", t->flags & TOOL_OPEN_WORLD);
			json_object_object_add(o, "annotations", ann);
		}
		json_object_array_add(arr, o);
	}
	res = json_object_new_object();
	json_object_object_add(res, "tools", arr);
	return rpc_response(id, res);
}

/* Check a tools/call. Returns a response (error, or isError result for bad
 * arguments) or NULL with *tool and *args (a new object without top-level
 * nulls) set for forwarding. */
static struct json_object *
rpc_call_check(struct json_object *id, struct json_object *params, const struct tool **tool,
               struct json_object **args)
{
	struct json_object *name, *a = NULL;
	char err[512];

	*tool = NULL;
	*args = NULL;
	if (params == NULL || !json_object_object_get_ex(params, "name", &name) ||
	    !json_object_is_type(name, json_type_string))
		return rpc_error(id, E_PARAMS, "tools/call needs params.name (a string)");
	if ((*tool = tools_find(json_object_get_string(name))) == NULL)
		return rpc_error(id, E_PARAMS, "Unknown tool: %.*s",
		    utf8_prec(json_object_get_string(name), 100), json_object_get_string(name));
	json_object_object_get_ex(params, "arguments", &a);
	if (a != NULL && !json_object_is_type(a, json_type_object))
		return rpc_error(id, E_PARAMS, "tools/call params.arguments must be an object");
	*args = json_object_new_object();
	if (a != NULL) {
		/* A null argument means "not given": models often send them. */
		json_object_object_foreach(a, key, val) {
			if (val != NULL)
				json_object_object_add(*args, key, json_object_get(val));
		}
	}
	if (schema_check(tools_check_schema(*tool), *args, err, sizeof err) != 0) {
		struct json_object *res = result_error(NULL, "Invalid arguments for %s: %s.",
		                                       (*tool)->name, err);
		json_object_put(*args);
		*args = NULL;
		result_for_version(res, atomic_load(&rpc_version));
		return rpc_response(id, res);
	}
	schema_normalize((*tool)->input_schema, *args);
	return NULL;
}

/* Handle one message (not a batch). on_worker: run tools/call here rather
 * than queueing it. Returns the response, or NULL for none. Does not take
 * msg. */
static struct json_object *
rpc_message(struct json_object *msg, bool on_worker, bool in_batch)
{
	struct json_object *id = NULL, *jv, *mv, *params = NULL, *args, *res;
	const struct tool *t;
	const char *method;
	bool has_id;

	if (!json_object_is_type(msg, json_type_object))
		return rpc_error(NULL, E_REQUEST, "Invalid Request: a message must be a JSON object");
	has_id = json_object_object_get_ex(msg, "id", &id);
	if (has_id && !json_object_is_type(id, json_type_string) && !json_object_is_type(id, json_type_int))
		return rpc_error(NULL, E_REQUEST, "Invalid Request: id must be a string or an integer");
	if (!json_object_object_get_ex(msg, "jsonrpc", &jv) || !json_object_is_type(jv, json_type_string) ||
	    strcmp(json_object_get_string(jv), "2.0") != 0)
		return rpc_error(id, E_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"");
	if (!json_object_object_get_ex(msg, "method", &mv)) {
		if (has_id && (json_object_object_get_ex(msg, "result", NULL) ||
		               json_object_object_get_ex(msg, "error", NULL))) {
			log_debug("ignoring a response: detm-mcp sends no requests");
			return NULL;
		}
		return rpc_error(id, E_REQUEST, "Invalid Request: no method");
	}
	if (!json_object_is_type(mv, json_type_string))
		return rpc_error(id, E_REQUEST, "Invalid Request: method must be a string");
	method = json_object_get_string(mv);
	if (json_object_object_get_ex(msg, "params", &params) && params != NULL &&
	    !json_object_is_type(params, json_type_object))
		return has_id ? rpc_error(id, E_PARAMS, "params must be an object") : NULL;

	if (!has_id) {          /* a notification: never answered */
		if (strcmp(method, "notifications/cancelled") == 0 && params != NULL &&
		    json_object_object_get_ex(params, "requestId", &jv))
			worker_cancel(jv);
		else if (strcmp(method, "notifications/initialized") == 0)
			log_debug("client initialized");
		else
			log_debug("ignoring notification %.100s", method);
		return NULL;
	}
	if (strcmp(method, "ping") == 0)
		return rpc_response(id, json_object_new_object());
	if (strcmp(method, "initialize") == 0)
		return in_batch ? rpc_error(id, E_REQUEST, "initialize must not be part of a batch")
		                : rpc_initialize(id, params);
	if (strcmp(method, "tools/list") != 0 && strcmp(method, "tools/call") != 0)
		return rpc_error(id, E_METHOD, "Method not found: %.*s", utf8_prec(method, 100),
		    method);
	if (atomic_load(&rpc_version) < 0)
		return rpc_error(id, E_REQUEST, "not initialized: send initialize first");
	if (strcmp(method, "tools/list") == 0)
		return rpc_tools_list(id, params);

	if ((res = rpc_call_check(id, params, &t, &args)) != NULL)
		return res;
	if (!on_worker) {
		/* the worker gets its own copy: json-c reference counts are not
		 * thread-safe, and the reader drops msg right after this */
		struct json_object *copy = NULL;
		if (json_object_deep_copy(msg, &copy, NULL) != 0)
			abort();
		json_object_put(args);
		if (worker_submit(copy, id) != 0) {
			json_object_put(copy);
			return rpc_error(id, E_INTERNAL, "too many calls in progress (%d queued); retry "
			                 "later", CAP_QUEUE);
		}
		return NULL;
	}
	res = worker_forward(t, args, id, rpc_progress_token(params));
	json_object_put(args);
	if (res == NULL)
		return NULL;        /* cancelled: no response */
	result_for_version(res, atomic_load(&rpc_version));
	return rpc_response(id, res);
}

struct json_object *
rpc_execute(struct json_object *msg)
{
	struct json_object *out, *r;
	size_t i;

	if (!json_object_is_type(msg, json_type_array))
		return rpc_message(msg, true, false);
	out = json_object_new_array();
	for (i = 0; i < json_object_array_length(msg); i++) {
		r = rpc_message(json_object_array_get_idx(msg, i), true, true);
		if (r != NULL)
			json_object_array_add(out, r);
	}
	if (json_object_array_length(out) == 0) {
		json_object_put(out);   /* only notifications: nothing to send */
		return NULL;
	}
	return out;
}

void
rpc_handle_line(const char *line, size_t len)
{
	struct json_tokener *tok;
	struct json_object *msg, *res;
	enum json_tokener_error jerr;
	struct derr e;
	size_t i;
	int v;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return;             /* blank line */
	/* json-c's UTF-8 check lets overlong and surrogate sequences through,
	 * and an id is echoed back as it came: refuse them all here. */
	if (!utf8_valid(line, len)) {
		rpc_send(rpc_error(NULL, E_PARSE, "Parse error: the message is not valid UTF-8"));
		return;
	}
	tok = json_tokener_new();
	if (tok == NULL)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	msg = json_tokener_parse_ex(tok, line, (int)len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_success && json_tokener_get_parse_end(tok) != len)
		jerr = json_tokener_error_parse_unexpected;     /* trailing bytes */
	if (jerr == json_tokener_continue) {
		/* A bare number ("42") is only complete at the end of input, which
		 * json-c learns from a terminating NUL. */
		msg = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
		if (jerr == json_tokener_continue)
			jerr = json_tokener_error_parse_eof;
	}
	json_tokener_free(tok);
	if (jerr != json_tokener_success) {
		json_object_put(msg);
		rpc_send(rpc_error(NULL, E_PARSE, "Parse error: %s", json_tokener_error_desc(jerr)));
		return;
	}
	/* json-c clamps integers past 64 bits, cuts keys at \u0000 and keeps
	 * the last of duplicate keys: read the line as detmd reads a body. */
	if (msg != NULL && jxkeep_fix(line, len, &msg, &e) != 0) {
		json_object_put(msg);
		rpc_send(rpc_error(NULL, E_PARSE, "Parse error: %s", e.message));
		return;
	}
	if (!json_object_is_type(msg, json_type_array)) {
		res = rpc_message(msg, false, false);
		if (res != NULL)
			rpc_send(res);
		json_object_put(msg);
		return;
	}
	v = atomic_load(&rpc_version);
	if (v != V_BATCH)
		res = rpc_error(NULL, E_REQUEST, "Invalid Request: JSON-RPC batches are only accepted "
		                "in protocol version 2025-03-26 (this session: %s)",
		                v < 0 ? "not initialized" : rpc_versions[v]);
	else if (json_object_array_length(msg) == 0)
		res = rpc_error(NULL, E_REQUEST, "Invalid Request: empty batch");
	else if (worker_submit(msg, NULL) != 0)
		res = rpc_error(NULL, E_INTERNAL, "too many calls in progress; retry later");
	else
		return;             /* the worker owns msg now */
	rpc_send(res);
	json_object_put(msg);
}
