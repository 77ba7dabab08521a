/*
 * rpc.c - see rpc.h. Owns the stdio session (common/mcp.h: its era and
 * version are fixed by the first message that decides them) and stdout.
 * The protocol itself (methods, eras, results, errors) is common/mcp.c;
 * here are only the stdio parts: parsing a line (-32700 for unparseable
 * JSON, id null; -32600 for an oversize line), JSON-RPC batches (accepted
 * in 2025-03-26 only), and handing tools/call to the worker pool.
 *
 * Not here: reading stdin (main.c), threads and cancellation (worker.c),
 * HTTP (forward.c).
 */
#include "rpc.h"

#include <errno.h>
#include <pthread.h>
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
#include "mcp.h"
#include "result.h"
#include "worker.h"

static struct mcp_session rpc_session = { MCP_NONE, "detm-mcp", NULL, 0, MCP_MEMORY_AUTO, false };

void
rpc_set_memory(enum mcp_memory m)
{
	rpc_session.memory = m;
}
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
	rpc_send(mcp_progress(ud, atomic_load(&rpc_session.version), elapsed_s, message));
}

void
rpc_reject_oversize(size_t len)
{
	log_warn("discarded a %zu-byte line (limit %ld)", len, CAP_LINE_BYTES);
	rpc_send(mcp_error(NULL, MCP_E_REQUEST, NULL, "Invalid Request: message of %zu bytes "
	                   "exceeds the %ld-byte limit", len, CAP_LINE_BYTES));
}

/* A tools/call to run as a task (the Tasks extension, common/mcp_tasks.h).
 * On the reader: make the task, queue the call under the key "task:<id>"
 * (tasks/cancel cancels it by that key) with the id in the job's copy
 * ("detm_task"), and answer the CreateTaskResult now; a full task table
 * queues it as a plain call. On a worker: run it and file the result with
 * the task; nothing is sent. Takes out->args. */
static struct json_object *
rpc_task(struct json_object *msg, bool on_worker, struct mcp_out *out)
{
	struct json_object *res, *copy = NULL, *key, *tid;
	char id[33], k[160];

	if (on_worker && json_object_object_get_ex(msg, "detm_task", &tid) &&
	    json_object_is_type(tid, json_type_string)) {
		snprintf(id, sizeof id, "%s", json_object_get_string(tid));
		snprintf(k, sizeof k, "task:%s", id);
		key = json_object_new_string(k);
		/* a task ends when its work does: a wait when it resolves */
		res = worker_forward(out->tool, out->args, true, key, out->progress_token);
		json_object_put(key);
		json_object_put(out->args);
		mcp_task_done(out, id, res);
		return NULL;
	}
	if (on_worker) {        /* queued as a plain call: the table was full */
		res = worker_forward(out->tool, out->args, false, out->id, out->progress_token);
		json_object_put(out->args);
		return res != NULL ? mcp_call_reply(&rpc_session, out, res) : NULL;
	}
	json_object_put(out->args);
	if (json_object_deep_copy(msg, &copy, NULL) != 0)
		abort();
	res = mcp_task_start(&rpc_session, out, id, k);
	if (res != NULL)
		json_object_object_add(copy, "detm_task", json_object_new_string(id));
	else
		json_object_object_del(copy, "detm_task");     /* only ours mean a task */
	key = res != NULL ? json_object_new_string(k) : json_object_get(out->id);
	if (worker_submit(copy, key) != 0) {
		json_object_put(copy);
		if (res != NULL)
			mcp_task_done(out, id, result_error(NULL, "too many calls in progress (%d queued); "
			              "the task did not run", CAP_QUEUE));
		else
			res = mcp_error(out->id, MCP_E_INTERNAL, NULL, "too many calls in progress (%d "
			                "queued); retry later", CAP_QUEUE);
	}
	json_object_put(key);
	return res;
}

/* Handle one message (not a batch). on_worker: run tools/call here rather
 * than queueing it. Returns the response, or NULL for none. Does not take
 * msg. */
static struct json_object *
rpc_message(struct json_object *msg, bool on_worker, bool in_batch)
{
	struct json_object *res, *copy = NULL;
	struct mcp_out out;

	mcp_message(&rpc_session, msg, in_batch, &out);
	switch (out.act) {
	case MCP_ACT_NONE:
		return NULL;
	case MCP_ACT_REPLY:
		if (out.initialized)
			log_info("initialize: using protocol %s", mcp_version_name(out.version));
		return out.reply;
	case MCP_ACT_CANCEL:
		worker_cancel(out.cancel_id);
		return NULL;
	case MCP_ACT_TASK_CANCEL:
		copy = json_object_new_string(out.task_key);
		worker_cancel(copy);
		json_object_put(copy);
		return out.reply;
	case MCP_ACT_CALL:
		break;
	}
	if (out.task)
		return rpc_task(msg, on_worker, &out);
	if (!on_worker) {
		/* the worker gets its own copy: json-c reference counts are not
		 * thread-safe, and the reader drops msg right after this */
		json_object_put(out.args);
		if (json_object_deep_copy(msg, &copy, NULL) != 0)
			abort();
		if (worker_submit(copy, out.id) != 0) {
			json_object_put(copy);
			return mcp_error(out.id, MCP_E_INTERNAL, NULL, "too many calls in progress (%d "
			                 "queued); retry later", CAP_QUEUE);
		}
		return NULL;
	}
	res = worker_forward(out.tool, out.args, false, out.id, out.progress_token);
	json_object_put(out.args);
	if (res == NULL)
		return NULL;        /* cancelled: no response */
	return mcp_call_reply(&rpc_session, &out, res);
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

/* Parse one line strictly. Returns the message, or NULL with the error
 * response sent. *ok false on failure (a JSON null parses to NULL too). */
static struct json_object *
rpc_parse(const char *line, size_t len, bool *ok)
{
	struct json_tokener *tok;
	struct json_object *msg;
	enum json_tokener_error jerr;
	struct derr e;

	*ok = false;
	/* json-c's UTF-8 check lets overlong and surrogate sequences through,
	 * and an id is echoed back as it came: refuse them all here. */
	if (!utf8_valid(line, len)) {
		rpc_send(mcp_error(NULL, MCP_E_PARSE, NULL, "Parse error: the message is not valid UTF-8"));
		return NULL;
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
		rpc_send(mcp_error(NULL, MCP_E_PARSE, NULL, "Parse error: %s", json_tokener_error_desc(jerr)));
		return NULL;
	}
	/* json-c clamps integers past 64 bits, cuts keys at \u0000 and keeps
	 * the last of duplicate keys: read the line as detmd reads a body. */
	if (msg != NULL && jxkeep_fix(line, len, &msg, &e) != 0) {
		json_object_put(msg);
		rpc_send(mcp_error(NULL, MCP_E_PARSE, NULL, "Parse error: %s", e.message));
		return NULL;
	}
	*ok = true;
	return msg;
}

void
rpc_handle_line(const char *line, size_t len)
{
	struct json_object *msg, *res;
	bool ok;
	size_t i;
	int v;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return;             /* blank line */
	msg = rpc_parse(line, len, &ok);
	if (!ok)
		return;
	if (!json_object_is_type(msg, json_type_array)) {
		res = rpc_message(msg, false, false);
		if (res != NULL)
			rpc_send(res);
		json_object_put(msg);
		return;
	}
	v = atomic_load(&rpc_session.version);
	if (v != MCP_V_BATCH)
		res = mcp_error(NULL, MCP_E_REQUEST, NULL, "Invalid Request: JSON-RPC batches are only "
		                "accepted in protocol version 2025-03-26 (this session: %s)",
		                v < 0 ? "not initialized" : mcp_version_name(v));
	else if (json_object_array_length(msg) == 0)
		res = mcp_error(NULL, MCP_E_REQUEST, NULL, "Invalid Request: empty batch");
	else if (worker_submit(msg, NULL) != 0)
		res = mcp_error(NULL, MCP_E_INTERNAL, NULL, "too many calls in progress; retry later");
	else
		return;             /* the worker owns msg now */
	rpc_send(res);
	json_object_put(msg);
}

const struct worker_ops rpc_worker_ops = { rpc_execute, rpc_send, rpc_progress };
