/*
 * mcp_tasks.h - the task table of the MCP Tasks extension (SEP-2663,
 * "io.modelcontextprotocol/tasks"): a tools/call of a task-supporting tool
 * (TOOL_TASK: smart_wait, gui_agent, video_record), from a request that
 * declares the extension in its clientCapabilities, is answered at once
 * with a task; the call runs on the transport's own thread and its result
 * lands here; tasks/get reads it, tasks/cancel cancels the call through
 * the transport (mcp_out.act MCP_ACT_TASK_CANCEL, key "task:<id>").
 *
 * One table per process: detmd's /mcp (every stateless client) and each
 * detm-mcp. MCP_TASKS_MAX entries; a finished task is kept MCP_TASK_TTL_MS
 * after it finished and then its slot is reused; a table full of live
 * tasks refuses a new one (the caller then runs the call synchronously,
 * which the extension allows). Ids are 128 random bits in hex.
 * Results are kept as JSON text, so no json-c object crosses threads.
 *
 * States: WORKING -> COMPLETED (a result; a tool error is a completed
 * task with isError) | FAILED (a protocol error) | CANCELLED.
 * Does not: run calls, speak JSON-RPC (common/mcp.c), send notifications.
 * Thread-safe (one mutex).
 */
#ifndef DETM_MCP_TASKS_H
#define DETM_MCP_TASKS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define MCP_TASKS_EXT      "io.modelcontextprotocol/tasks"
#define MCP_TASKS_MAX      128
#define MCP_TASK_TTL_MS    3600000      /* a finished task stays readable 1 h */
#define MCP_TASK_POLL_MS   1000
#define MCP_TASK_ID_LEN    32

/* A new WORKING task. Fills id. 0, or -1 when the table is full of live
 * tasks. */
int mcp_tasks_create(char id[MCP_TASK_ID_LEN + 1]);

/* The call of task id ended: result (a CallToolResult, borrowed) or, when
 * NULL, the call was cancelled. A task already cancelled stays so. */
void mcp_tasks_finish(const char *id, struct json_object *result);

/* The call of task id failed with a protocol error (a JSON-RPC error
 * object, borrowed): FAILED, unless it was cancelled. */
void mcp_tasks_fail(const char *id, struct json_object *error);

/* The task's fields (taskId, status, createdAt, lastUpdatedAt, ttlMs,
 * pollIntervalMs; with `result` when completed or `error` when failed,
 * when detail) added to o.
 * false when id is unknown (o untouched). */
bool mcp_tasks_describe(const char *id, bool detail, struct json_object *o);

/* Mark task id cancelled unless it has finished. 1: it was working (the
 * caller cancels its call), 0: it had finished already (nothing to do),
 * -1: unknown id. */
int mcp_tasks_cancel(const char *id);

#endif
