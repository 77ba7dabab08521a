/*
 * worker.h - the threads that talk to detmd.
 *
 * The reader thread (main.c -> rpc.c) answers initialize, ping and
 * tools/list itself and queues tools/call requests and batches here, so a
 * long call (gui_do can take minutes, video_record up to two) never delays
 * the protocol. A pool of CAP_WORKERS threads runs the queue, each with its
 * own struct forward (one keep-alive connection, made at its first job), so
 * a quick call never waits behind a slow one while fewer than CAP_WORKERS
 * calls run. notifications/cancelled marks a queued job dropped or aborts
 * the call in flight through its job's flag, which forward.c checks.
 *
 * States of a job: QUEUED -> RUNNING -> DONE, or QUEUED/RUNNING -> CANCELLED
 * (worker_cancel); a cancelled job sends no response.
 */
#ifndef DETM_MCP_WORKER_H
#define DETM_MCP_WORKER_H

#include <json-c/json.h>
#include <stdbool.h>

#include "tools.h"

/* What a job means, from the layer above (rpc.c), so this file calls
 * nothing of it: execute runs a job's message and returns its response
 * (NULL: send nothing), send writes a message to stdout, progress writes
 * a notifications/progress for a call's token. */
struct worker_ops {
	struct json_object *(*execute)(struct json_object *msg);
	void (*send)(struct json_object *msg);
	void (*progress)(void *ud, double elapsed_s, const char *message);
};

/* Before worker_start: expand each URL's DNS name to every address it has
 * (re-resolved every every_s seconds; <= 0: PEERLIST_RESOLVE_S; peerlist.h). */
void worker_resolve_all(bool on, long every_s);
/* Set the pool up for the detmds of urls (each a URL or a comma-separated
 * list, up to PEERLIST_MAX in all; route.h says which one each call goes
 * to; urls and token are copied; ops must outlive the pool);
 * its threads start with the first jobs, up to CAP_WORKERS. libcurl is
 * loaded and detmd's API version checked (logged) only at the first
 * tools/call, so initialize and tools/list touch neither libcurl nor the
 * daemon, nor start a thread. Returns 0, or -1 (logged) for a bad URL. */
int worker_start(const char *const *urls, int nurls, const char *token, const struct worker_ops *ops)
	__attribute__((warn_unused_result));

/* Queue msg (a tools/call request or a batch array) for ops->execute on a
 * worker thread. id is the request's id (NULL for a batch), used to match
 * a later cancellation. Takes ownership of msg on success (0); returns -1
 * when CAP_QUEUE jobs are already waiting (msg not taken). */
int worker_submit(struct json_object *msg, struct json_object *id)
	__attribute__((warn_unused_result));

/* Cancel the request with this id: drop it if queued, abort it if running.
 * Unknown or finished ids are ignored. Any thread. */
void worker_cancel(struct json_object *request_id);

/* On a worker thread only: run tool t for request id (follow: a
 * TOOL_WAIT tool run as a task follows its wait to the end, forward.h).
 * progress_token (may
 * be NULL; borrowed) is the request's _meta.progressToken: while the call
 * runs, notifications/progress go out for it (ops->progress). Returns the
 * result, or NULL when the request was cancelled (send nothing). */
struct json_object *worker_forward(const struct tool *t, struct json_object *args, bool follow,
                                   struct json_object *id, struct json_object *progress_token);

/* Stdin reached EOF: let queued and running calls finish for up to
 * grace_ms, then abort what is left and join the threads. */
void worker_stop(int grace_ms);

#endif
