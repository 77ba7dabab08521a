/*
 * httpc.h - a small blocking JSON-over-HTTP client on libcurl, for calls
 * from the daemon to model servers (vision backends, later grounding).
 *
 * Thread-safety: every function here may be called from any thread at
 * once (libcurl's global state is made once, at the first request). Easy
 * handles live in a small mutex-guarded pool: a call takes one, uses it and
 * gives it back after curl_easy_reset, which keeps the handle's live
 * connections, DNS and TLS session caches. So a worker that calls the same
 * backend again usually reuses a warm (TLS) connection, and concurrent
 * calls each get their own handle: no handle is ever used by two threads.
 *
 * Replies are capped (HTTPC_MAX_REPLY unless the request says otherwise);
 * request bodies are capped at HTTPC_MAX_REQUEST. Only http and https URLs
 * are followed; redirects are not. No signals (CURLOPT_NOSIGNAL), no
 * verbose output.
 *
 * Every request passes the meter here (the one choke point), which an upper
 * layer sets (usage.c, at usage_init): a model call is recorded with its
 * tokens and cost, or refused before it is sent when its task's budget is
 * reached. This file calls nothing above it: without a meter nothing is
 * recorded or refused.
 */
#ifndef DETM_HTTPC_H
#define DETM_HTTPC_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#define HTTPC_MAX_REPLY   (1024 * 1024)
#define HTTPC_MAX_REQUEST (48 * 1024 * 1024)
#define HTTPC_POOL_IDLE   16          /* idle easy handles kept for reuse */

/* httpc_do's result: 0 when an HTTP response arrived (any status). */
enum httpc_fail {
	HTTPC_OK = 0,
	HTTPC_ECONNECT = -1,   /* DNS, refused, reset, TLS, send/recv: transient */
	HTTPC_ETIMEOUT = -2,   /* the whole request took longer than timeout_ms */
	HTTPC_ETOOBIG = -3,    /* reply over max_reply, or request over the cap */
	HTTPC_EOTHER = -4,     /* bad URL, unsupported protocol, internal */
	HTTPC_EREFUSED = -5,   /* a model call the task's budget refused (usage.h): not sent */
	HTTPC_ECANCELLED = -6, /* the client of the request that made this call gave up
	                        * (cancel.h: an MCP cancel, a hang-up): abandoned */
};

struct httpc_req {
	const char *method;            /* "GET", "POST", "DELETE"; NULL = GET, or POST with a body */
	const char *url;
	const char *const *headers;    /* NULL-terminated "Name: value" list, or NULL */
	json_object *body;             /* sent as application/json; NULL = none */
	long timeout_ms;               /* whole request; <= 0 means 30 s */
	size_t max_reply;              /* 0 = HTTPC_MAX_REPLY */
};

struct httpc_resp {
	long status;                   /* 0 when no response arrived */
	json_object *json;             /* parsed body when it is JSON, else NULL (owned) */
	char excerpt[256];             /* start of the body, one line, for messages */
	long retry_after_ms;           /* Retry-After in seconds, as ms; -1 when absent */
	int64_t latency_us;
	char error[256];               /* transport error text when the result is < 0 */
};

/* libcurl's global state is made at the first request (once, from any
 * thread; see httpc.c for what it costs). httpc_global_cleanup frees the
 * pooled handles and, if a request was made, calls curl_global_cleanup;
 * after all threads using httpc are done. */
void httpc_global_cleanup(void);

/* Performs one request. Returns 0 (a response arrived: look at rs->status)
 * or an enum httpc_fail value with rs->error filled. Always free rs with
 * httpc_resp_free, whatever the result. */
int httpc_do(const struct httpc_req *rq, struct httpc_resp *rs);
/* As httpc_do, with raw_len bytes at raw (borrowed; not NULL) as the body
 * instead of rq->body; rq->headers give their Content-Type. */
int httpc_do_bytes(const struct httpc_req *rq, const void *raw, size_t raw_len, struct httpc_resp *rs);
void httpc_resp_free(struct httpc_resp *rs);

/* Convenience forms. Return as httpc_do; *status is the HTTP status (0 on
 * transport failure), *reply the parsed JSON body or NULL (caller puts it),
 * errbuf a transport error or, for a non-2xx or non-JSON reply, a body
 * excerpt. headers, errbuf may be NULL. */
int httpc_post_json(const char *url, const char *const *headers, json_object *body,
    long timeout_ms, long *status, json_object **reply, char *errbuf, size_t errlen);
int httpc_get_json(const char *url, const char *const *headers, long timeout_ms,
    long *status, json_object **reply, char *errbuf, size_t errlen);

/* The meter: begin(rq, err, cap, &refused) before a request returns what
 * end gets after it (NULL: nothing to record); refused set true (err
 * filled) means do not send it (HTTPC_EREFUSED). end(call, rc, rs) with
 * httpc_do's return; it owns call. Both may run on any thread at once. */
struct httpc_meter {
	void *(*begin)(const struct httpc_req *rq, char *err, size_t cap, bool *refused);
	void (*end)(void *call, int rc, const struct httpc_resp *rs);
};
/* Sets the meter (NULL: none); m must outlive every request. */
void httpc_set_meter(const struct httpc_meter *m);

/* A GET whose body goes on as it comes (a peer's live view or video, for
 * the fleet): head(status, content_type, arg) once, when the first bytes
 * (or the end of an empty body) arrive (false stops the transfer); then
 * body(p, n, arg) for each piece (non-zero stops it). No total timeout; a
 * transfer under 1 byte/s for stall_s seconds (<= 0: 60) ends. Not
 * metered (no model call). Returns as httpc_do: 0 when it ended after a
 * response or was stopped by a callback, else the failure with err. */
struct httpc_stream_cb {
	bool (*head)(long status, const char *content_type, void *arg);
	int (*body)(const void *p, size_t n, void *arg);
	void *arg;
	long stall_s;
};
int httpc_stream(const char *url, const char *const *headers, const struct httpc_stream_cb *cb,
    char *err, size_t errlen);

#endif
