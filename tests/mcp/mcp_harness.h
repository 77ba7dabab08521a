/*
 * mcp_harness.h - drive bin/detm-mcp over pipes from a C test, and a tiny
 * fake detmd for the cases a real one cannot produce (a reply that never
 * comes, a screenshot, a different api_version, header checks).
 */
#ifndef DETM_MCP_HARNESS_H
#define DETM_MCP_HARNESS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* ---- the proxy as a child process ---- */

struct mproc {
	pid_t pid;
	int to_child, from_child;
	char *buf;                  /* bytes read but not yet returned */
	size_t len;
	char errlog[128];           /* the child's stderr goes here */
};

/* Start DETM_BIN/detm-mcp (bin/ by default) with args (NULL-terminated,
 * after argv[0]). 0 or -1. */
int mproc_open(struct mproc *p, const char *const *args);

/* Write line plus '\n'. 0 or -1. */
int mproc_send(struct mproc *p, const char *line);
int mproc_sendf(struct mproc *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The next message line, parsed; NULL on timeout, EOF or bad JSON. */
struct json_object *mproc_recv(struct mproc *p, int timeout_ms);

/* Read messages until the one whose id is the integer id (others are
 * dropped). NULL on timeout. */
struct json_object *mproc_wait_id(struct mproc *p, int id, int timeout_ms);

/* Send a request with integer id and params (JSON text or NULL) and wait
 * for its response. */
struct json_object *mproc_call(struct mproc *p, int id, const char *method, const char *params);

/* initialize with version, then notifications/initialized. Returns the
 * initialize response. */
struct json_object *mproc_init(struct mproc *p, const char *version);

/* tools/call name with arguments (JSON text or NULL); returns the result
 * object (owned by the returned response *resp), or NULL. */
struct json_object *mproc_tool(struct mproc *p, int id, const char *name, const char *args,
                               struct json_object **resp);

/* Close stdin and wait up to timeout_ms for exit. Returns the exit status,
 * or -1 if it had to be killed. Sets *elapsed_ms. Frees p's buffers. */
int mproc_close(struct mproc *p, int timeout_ms, long *elapsed_ms);

/* Does the child's stderr contain needle (waits up to 3 s for it)? */
bool mproc_stderr_has(struct mproc *p, const char *needle);

/* ---- a fake detmd on 127.0.0.1 ---- */

/* FAKE_SILENT answers GET /api/version (canned) and nothing else. */
enum fake_mode { FAKE_CANNED, FAKE_SILENT };

struct fake {
	int fd, port;
	enum fake_mode mode;
	int status;                 /* FAKE_CANNED: HTTP status */
	char body[4096];            /* FAKE_CANNED: response body */
	char last_head[4096];       /* request line and headers of the last request */
	volatile int requests;      /* requests seen */
	volatile int silent_seen;   /* FAKE_SILENT: requests left unanswered */
	volatile int closed_early;  /* FAKE_SILENT: clients that hung up */
	volatile bool stop;
	void *thread;               /* pthread_t, opaque here */
};

int fake_start(struct fake *f, enum fake_mode mode);
void fake_stop(struct fake *f);

/* helpers over json-c */
const char *jget_str(struct json_object *o, const char *path);   /* "a.b.c" */
struct json_object *jget(struct json_object *o, const char *path);
long long jget_int(struct json_object *o, const char *path, long long dflt);
/* The text of result.content[0] ("" if none). */
const char *result_text(struct json_object *result);

#endif
