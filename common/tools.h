/*
 * tools.h - the MCP tool table: the one place that says which tools exist,
 * how each is described to the model, its input schema, its annotations and
 * the detmd route it forwards to. Data only; forward.c interprets it.
 *
 * Route templates name their path arguments in braces:
 * "/api/tasks/{task_id}/items/{ordinal}". "{name?}" is an optional last
 * segment: when the argument is absent the segment and its slash are dropped
 * ("/api/waits/{wait_id?}" -> "/api/waits"). A template may carry a fixed
 * query ("?format=json"). `query` lists the arguments sent as query
 * parameters, comma-separated, each "arg" or "arg:param" to rename. Every
 * other argument goes into the JSON body (POST/PUT/PATCH only; tools_init
 * rejects a table where a GET/DELETE tool has body arguments).
 *
 * Part of common/: used by detm-mcp (forwarding) and detmd (the tool
 * router); includes nothing from daemon/ or mcp-proxy/.
 */
#ifndef DETM_MCP_TOOLS_H
#define DETM_MCP_TOOLS_H

#include <json-c/json.h>
#include <stdbool.h>

/* How long a forwarded call may take (seconds): most tools, and the ones
 * that wait on a model or a recording (gui_do, gui_find, video_record). */
#define TOOL_CALL_S       30L
#define TOOL_LONG_CALL_S  330L
/* video_record follows a clip of up to this many seconds to its end; a
 * longer one comes back as a handle (a gateway cuts calls at 60 s). */
#define TOOL_CLIP_WAIT_MAX_S 55L

enum tool_flag {
	TOOL_READ_ONLY   = 1 << 0,
	TOOL_DESTRUCTIVE = 1 << 1,
	TOOL_IDEMPOTENT  = 1 << 2,
	TOOL_OPEN_WORLD  = 1 << 3,
	/* task_thread: when `message` is given, first POST it to the thread
	 * as {"content": message, "role": "agent"}, then read the thread. */
	TOOL_POST_MESSAGE_FIRST = 1 << 4,
	/* The reply may carry a screenshot (image_b64): answer with MCP image
	 * content. */
	TOOL_IMAGE = 1 << 5,
	/* video_record: started with wait:false and followed through
	 * GET /api/record/{clip_id} (progress while it records;
	 * POST /api/record/{clip_id}/stop when the call is cancelled). */
	TOOL_CLIP = 1 << 6,
	/* A long call that a client declaring the MCP Tasks extension gets as a
	 * task (common/mcp_tasks.h): gui_agent, video_record. */
	TOOL_TASK = 1 << 7,
	/* With TOOL_TASK: only as a task; a client without the extension gets
	 * -32021 (the conformance fixture failing_job; no detm tool). */
	TOOL_TASK_REQUIRED = 1 << 8,
	/* smart_wait: as a task (with TOOL_TASK) the call follows the wait
	 * through GET /api/waits/{wait_id}?block_s= until it stops watching,
	 * and the task's result is the wait's last record; cancelling the task
	 * cancels the wait (DELETE /api/waits/{id}). As a plain call it
	 * answers at once with the wait_id handle, as always. */
	TOOL_WAIT = 1 << 9,
};

struct tool {
	const char *name;
	const char *title;
	const char *description;     /* one paragraph, written for the model */
	const char *schema;          /* JSON with ' for ", parsed by tools_init */
	unsigned flags;              /* enum tool_flag */
	const char *method;          /* GET POST PUT PATCH DELETE */
	const char *route;           /* template, see above */
	const char *query;           /* "arg[:param],..." or NULL */
	const char *capability;      /* key in GET /api/capabilities */
	long timeout_s;              /* whole HTTP exchange */
	struct json_object *input_schema; /* parsed by tools_init, read-only after */
};

/* Parse every schema and check the table against itself (path arguments
 * exist and are required unless optional, GET/DELETE tools have no body
 * arguments). Returns 0, or -1 with a message in err. Call once, before
 * threads start; or never: tools_find and tools_at parse the table at
 * their first call (once, thread-safe; a table that does not parse then
 * aborts, which the build's own call in tools/gen-tools-list.c already
 * refused). detm-mcp leaves it to them, so a client's initialize and
 * tools/list (answered from the text built at build time) never wait for
 * ~2.4 ms of schema parsing. */
int tools_init(char *err, size_t errlen) __attribute__((warn_unused_result));
/* video_record's request body (built from its arguments): whether the call
 * follows the clip to its end. The call's `wait` when given, else whether
 * `duration` (default 10) is at most TOOL_CLIP_WAIT_MAX_S. Sets the body's
 * `wait` to false: the call starts the clip and follows it itself. */
bool tools_clip_follows(struct json_object *body);
void tools_free(void);

/* The tool called name, or NULL. Valid for the life of the process (until
 * tools_free). */
const struct tool *tools_find(const char *name);

/* The whole table, in listing order. */
const struct tool *tools_at(size_t i);
size_t tools_count(void);

/* The outputSchema of t (what structuredContent of its successful results
 * holds), or NULL when none is declared. Parsed by tools_init. */
struct json_object *tools_output_schema(const struct tool *t);
/* What schema_check validates t's arguments against: input_schema plus
 * the "$comment": SCHEMA_ANY_JSON marks, which the advertised input_schema
 * leaves out (some providers refuse keywords they do not know). Owned by
 * the table. */
struct json_object *tools_check_schema(const struct tool *t);

/* The server instructions for the model (initialize result). */
const char *tools_instructions(void);

/* A human name for a capability key ("waits" -> "smart waits"). */
const char *tools_capability_name(const char *capability);

#endif
