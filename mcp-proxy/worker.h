/*
 * worker.h - the thread that talks to detmd.
 *
 * The reader thread (main.c -> rpc.c) answers initialize, ping and
 * tools/list itself and queues tools/call requests and batches here, so a
 * long call (gui_do can take minutes) never delays the protocol. One worker
 * thread runs the queue in order with one struct forward (one keep-alive
 * connection). notifications/cancelled marks a queued job dropped or aborts
 * the transfer in flight through a flag the curl progress callback checks.
 *
 * States of a job: QUEUED -> RUNNING -> DONE, or QUEUED/RUNNING -> CANCELLED
 * (worker_cancel); a cancelled job sends no response.
 */
#ifndef DETM_MCP_WORKER_H
#define DETM_MCP_WORKER_H

#include <json-c/json.h>

#include "tools.h"

/* Start the worker thread (url and token are copied). libcurl is loaded,
 * the curl handle made and detmd's API version checked (logged) only at the
 * first tools/call, on the worker, so initialize and tools/list touch
 * neither libcurl nor the daemon. 0, or -1 if the thread cannot start. */
int worker_start(const char *url, const char *token) __attribute__((warn_unused_result));

/* Queue msg (a tools/call request or a batch array) for rpc_execute on the
 * worker thread. id is the request's id (NULL for a batch), used to match
 * a later cancellation. Takes ownership of msg on success (0); returns -1
 * when CAP_QUEUE jobs are already waiting (msg not taken). */
int worker_submit(struct json_object *msg, struct json_object *id)
	__attribute__((warn_unused_result));

/* Cancel the request with this id: drop it if queued, abort it if running.
 * Unknown or finished ids are ignored. Any thread. */
void worker_cancel(struct json_object *request_id);

/* On the worker thread only: run tool t for request id. Returns the result,
 * or NULL when the request was cancelled (send nothing). */
struct json_object *worker_forward(const struct tool *t, struct json_object *args,
                                   struct json_object *id);

/* Stdin reached EOF: let queued and running calls finish for up to
 * grace_ms, then abort what is left and join the threads. */
void worker_stop(int grace_ms);

#endif
