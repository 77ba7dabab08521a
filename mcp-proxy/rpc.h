/*
 * rpc.h - JSON-RPC 2.0 over stdio for MCP: parsing lines, batches, stdout,
 * and handing tools/call to the worker pool. rpc.c owns stdout and the
 * process's one session (common/mcp.h: the protocol, both eras; the first
 * message that decides fixes the era: initialize -> the handshake era,
 * a request with the 2026-07-28 _meta envelope or server/discover -> the
 * stateless era).
 */
#ifndef DETM_MCP_RPC_H
#define DETM_MCP_RPC_H

#include <stddef.h>

#include <json-c/json.h>

#include "mcp.h"
#include "worker.h"

/* Handle one line read from stdin (without its '\n'; a trailing '\r' is
 * allowed). Reader thread only. Answers inline or queues to the worker. */
void rpc_handle_line(const char *line, size_t len);

/* A line longer than CAP_LINE_BYTES was discarded: answer -32600, id null. */
void rpc_reject_oversize(size_t len);

/* Worker thread: run a queued tools/call request or batch; returns the
 * response to send (a new object) or NULL when there is nothing to send. */
struct json_object *rpc_execute(struct json_object *msg);

/* notifications/progress for the progress token ud (a json_object,
 * borrowed): progress = elapsed_s, with message. Any thread. */
void rpc_progress(void *ud, double elapsed_s, const char *message);

/* Write one message to stdout as one line; takes ownership of msg. Any
 * thread. A write error (the client went away) is logged once and later
 * messages are dropped. */
void rpc_send(struct json_object *msg);
/* The memory tools policy (mcp.h), before the first line is read. */
void rpc_set_memory(enum mcp_memory m);

/* rpc_execute, rpc_send and rpc_progress for the worker pool
 * (worker_start), which calls nothing of this file by name. */
extern const struct worker_ops rpc_worker_ops;

#endif
