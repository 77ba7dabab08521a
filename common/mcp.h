/*
 * mcp.h - the MCP protocol without a transport: the method table, the two
 * protocol eras, initialize / server/discover results, tools/list from the
 * tool table (tools.c), the shape of tools/call results per version, the
 * JSON-RPC error replies, and two extensions: skills (SEP-2640:
 * skills/list, skills/get and the resources methods for detm's one skill,
 * mcp_skill.h) and, in the stateless era, Tasks (SEP-2663: tasks/get,
 * tasks/cancel, tasks/update; the table is mcp_tasks.h, the transport runs
 * the call: mcp_task_start). Used by detm-mcp over stdio
 * (mcp-proxy/rpc.c) and by detmd over Streamable HTTP (daemon/api_mcp.c),
 * so both speak the same protocol from the same table.
 *
 * Eras. The handshake era (2024-11-05 ... 2025-11-25): initialize picks a
 * version for the session, then ping, tools/list, tools/call. The
 * stateless era (2026-07-28): no handshake; every request carries
 * params._meta["io.modelcontextprotocol/protocolVersion"] and
 * ["io.modelcontextprotocol/clientCapabilities"]; server/discover says what
 * the server offers; every result has resultType and
 * _meta["io.modelcontextprotocol/serverInfo"]; tools/list has ttlMs and
 * cacheScope; ping is gone.
 *
 * Session states (struct mcp_session.version): MCP_NONE (nothing decided)
 * --initialize--> a handshake version (0..MCP_V_LEGACY_LATEST), or
 * --a request with the 2026 envelope, or server/discover--> MCP_V_2026.
 * The first message that decides fixes the era for the session: after
 * initialize, server/discover is -32601 and the envelope is ignored; after
 * a stateless request, initialize is -32600 and a request without the
 * envelope is -32602. A stateless transport (HTTP without a session) uses a
 * fresh session per request.
 *
 * Does not: read or write bytes, run tools, keep threads (the transport
 * does). Thread-safe: the session's version is atomic; the rest is pure.
 */
#ifndef DETM_MCP_H
#define DETM_MCP_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "tools.h"

/* Protocol versions, oldest first (an index is what result_for_version and
 * the session's version hold). */
enum {
	MCP_V_2024_11_05, MCP_V_2025_03_26, MCP_V_2025_06_18, MCP_V_2025_11_25,
	MCP_V_2026_07_28, MCP_V_COUNT,
};
#define MCP_NONE            (-1)
#define MCP_V_LEGACY_LATEST MCP_V_2025_11_25
#define MCP_V_BATCH         MCP_V_2025_03_26    /* the only version with batches */
#define MCP_V_MODERN        MCP_V_2026_07_28

/* tools/list's "tools" array for each protocol version, serialized at
 * build time from the tool table (tools/gen-tools-list.c writes
 * build/gen/tools_list.c), so detm-mcp answers tools/list without parsing
 * a schema. NULL where none was built (the generator's own copy); then
 * tools/list builds the array from the table. */
extern const char *const mcp_tools_text[MCP_V_COUNT];
/* The "tools" array of tools/list for version v, built from the table
 * (what the generator serializes). The caller owns it. */
struct json_object *mcp_tools_array(int v);

/* JSON-RPC and MCP error codes. */
#define MCP_E_PARSE            (-32700)
#define MCP_E_REQUEST          (-32600)
#define MCP_E_METHOD           (-32601)
#define MCP_E_PARAMS           (-32602)
#define MCP_E_INTERNAL         (-32603)
#define MCP_E_HEADER_MISMATCH  (-32020)     /* 2026-07-28 */
#define MCP_E_MISSING_CAP      (-32021)     /* 2026-07-28 */
#define MCP_E_UNSUPPORTED      (-32022)     /* 2026-07-28: data {supported, requested} */

/* The 2026-07-28 _meta keys. */
#define MCP_META_VERSION  "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS     "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_SERVER   "io.modelcontextprotocol/serverInfo"

#define MCP_SERVER_VERSION "0.2.0"
#define MCP_LIST_TTL_MS    3600000     /* tools/list and discover: the table is fixed */

/* Whether the memory tools (memory_search, memory_read, memory_append)
 * are served. AUTO: not to an OpenClaw client (initialize's
 * clientInfo.name holds "openclaw"), which has its own memory tools over
 * the same files; to every other client. */
enum mcp_memory { MCP_MEMORY_AUTO = 0, MCP_MEMORY_ON, MCP_MEMORY_OFF };

struct mcp_session {
	atomic_int version;         /* MCP_NONE or an MCP_V_* index */
	const char *server_name;    /* serverInfo.name (static) */
	/* Extra tools a transport serves beside the table (detmd's conformance
	 * fixtures, daemon/mcp_fixtures.c), or NULL/0: listed after the table
	 * and callable by name; their arguments are passed unchecked (their
	 * input_schema must be set). Borrowed, static. */
	const struct tool *extra;
	size_t nextra;
	enum mcp_memory memory;     /* set by the transport before the first message */
	atomic_bool openclaw;       /* initialize named an OpenClaw client */
};

/* Whether s hides the memory tools (listed nowhere, refused when called). */
bool mcp_memory_hidden(struct mcp_session *s);

/* What the transport must do with one message. */
enum mcp_act {
	MCP_ACT_NONE,       /* nothing (a notification, a response) */
	MCP_ACT_REPLY,      /* send out.reply */
	MCP_ACT_CALL,       /* run out.tool with out.args, then mcp_call_reply */
	MCP_ACT_CANCEL,     /* notifications/cancelled for out.cancel_id */
	MCP_ACT_TASK_CANCEL, /* send out.reply, and cancel the call of key
	                      * out.task_key (tasks/cancel of a working task) */
};

struct mcp_out {
	enum mcp_act act;
	struct json_object *reply;      /* REPLY: owned by the caller */
	const struct tool *tool;        /* CALL */
	struct json_object *args;       /* CALL: checked and normalised; owned by the caller */
	struct json_object *id;         /* CALL: borrowed from the message */
	struct json_object *progress_token; /* CALL: borrowed, or NULL */
	struct json_object *cancel_id;  /* CANCEL: borrowed */
	int version;                    /* the version the reply is for */
	bool initialized;               /* REPLY: this was a successful initialize */
	bool task;                      /* CALL: run it as a task (the Tasks extension;
	                                 * see mcp_task_start) */
	char task_key[160];             /* TASK_CANCEL: "task:<id>" */
	int http_status;                /* REPLY: 0, or the HTTP status of this error in
	                                 * the stateless era (400 bad envelope, 404 no
	                                 * such method) for an HTTP transport */
};

/* Handle one message (an object; not a batch). in_batch: it came inside a
 * JSON-RPC batch (initialize is refused there). Fills out; never fails. */
void mcp_message(struct mcp_session *s, struct json_object *msg, bool in_batch,
                 struct mcp_out *out);

/* The response to a CALL: takes result (a CallToolResult), shapes it for
 * out->version (strips what older versions lack; adds resultType and the
 * serverInfo _meta in 2026-07-28). New object. */
struct json_object *mcp_call_reply(const struct mcp_session *s, const struct mcp_out *out,
                                   struct json_object *result);

/* A CALL with out->task: make its task, whose call key (for
 * cancellation: the transport runs the call under this key, and
 * MCP_ACT_TASK_CANCEL names it) is written to key ("task:<id>"), and
 * return the CreateTaskResult response to send now; the task id goes to
 * task_id. NULL when the task table is full: run the call as usual. */
struct json_object *mcp_task_start(const struct mcp_session *s, const struct mcp_out *out,
                                   char task_id[33], char key[160]);

/* The call of task task_id ended: result (a CallToolResult, taken; NULL
 * when it was cancelled) is shaped for out->version and kept for
 * tasks/get. A result {"error": {code, message}} without content is a
 * protocol error: the task failed. */
void mcp_task_done(const struct mcp_out *out, const char *task_id, struct json_object *result);

/* notifications/progress for token (borrowed) at version v. New object. */
struct json_object *mcp_progress(struct json_object *token, int v, double progress,
                                 const char *message);

/* A JSON-RPC error response; id may be NULL (sent as null); data (taken)
 * may be NULL. New object. */
struct json_object *mcp_error(struct json_object *id, int code, struct json_object *data,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The version named s, or -1. */
int mcp_version_find(const char *s);
const char *mcp_version_name(int v);

/* params._meta[MCP_META_VERSION] of a request message when it is a string,
 * else NULL (borrowed). */
const char *mcp_envelope_version(struct json_object *msg);

#endif
