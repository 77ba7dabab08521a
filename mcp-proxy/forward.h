/*
 * forward.h - turn one validated tool call into HTTP requests to detmd and
 * the reply into an MCP tool result.
 *
 * A struct forward owns one libcurl easy handle, reused for every call so
 * the connection to detmd stays alive. It is used by one thread at a time.
 * Every failure (daemon down, timeout, daemon error, route missing) becomes
 * an isError tool result with one sentence the model can act on; only a
 * cancelled call yields no result.
 */
#ifndef DETM_MCP_FORWARD_H
#define DETM_MCP_FORWARD_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "tools.h"

struct forward;

/* Loads libcurl (dlopen) and runs curl_global_init, once per process (later
 * calls return the first result); call it before forward_new, on the thread
 * of the first tools/call. 0, or -1 with a sentence in err. */
int forward_global_init(char *err, size_t errlen) __attribute__((warn_unused_result));

/* base_url: "http://host:port" (a trailing slash is ignored); token may be
 * NULL. Both are copied. Aborts on out-of-memory. */
struct forward *forward_new(const char *base_url, const char *token);
void forward_free(struct forward *fw);          /* NULL is a no-op */

/* How one call is steered while it runs. The caller fills cancel and,
 * when the client asked for progress, progress + ud; forward.c owns the
 * rest. progress is called from the calling thread every TIME_PROGRESS_MS
 * at most (and at least about every 2 s while detmd works), with the
 * seconds since the call began (strictly growing) and one line saying what
 * runs ("video_record: recording clip 1a2b3c4d, 12/70 s"). */
struct forward_ctl {
	atomic_int *cancel;         /* non-zero aborts the call */
	void (*progress)(void *ud, double elapsed_s, const char *message);
	void *ud;
	bool follow;                /* a TOOL_WAIT tool run as a task: follow the
	                             * wait until it ends (its record is the result) */
	long timeout_s;             /* > 0: each exchange's limit instead of the tool's
	                             * (a merged list's part, merge.c) */
	/* private */
	bool local;                 /* X-Detm-Forwarded: 1 (a probe asks this detmd
	                             * only, not its --peers) */
	const char *tool;
	long long t0_ms, last_ms;
	char message[200];
};

/* Run tool t with args (already checked by schema_check; not modified).
 * While it runs, a non-zero *ctl->cancel aborts it (a clip is stopped on
 * detmd: POST /api/record/{id}/stop). Returns a new CallToolResult object,
 * or NULL if the call was cancelled. */
struct json_object *forward_call(struct forward *fw, const struct tool *t,
                                 struct json_object *args, struct forward_ctl *ctl);

/* GET /api/version and log (stderr) a mismatch with DETM_API_VERSION, or
 * that detmd is not reachable yet. Never fails; aborted by *cancel. */
void forward_check_version(struct forward *fw, atomic_int *cancel);

/* GET path (a probe for route.c: no progress, no cancel): the HTTP status,
 * 0 when no answer came within timeout_s (down, refused, timed out). json
 * (may be NULL) gets the parsed body or NULL (caller puts it). */
long forward_probe(struct forward *fw, const char *path, long timeout_s, struct json_object **json);
/* The daemon's base URL, as given (borrowed). */
const char *forward_base(const struct forward *fw);

/* fw is one of several detmds: a detmd that does not answer is reported
 * "unavailable" (down or restarting), not "start it". */
void forward_set_fleet(struct forward *fw, bool fleet);

#endif
