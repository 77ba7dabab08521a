/*
 * http.c - libmicrohttpd glue: checks, routing, body caps, replies.
 * See http.h for the order of checks and the threading model.
 *
 * Per-connection request state (struct hreq) lives in MHD's con_cls from
 * the first call of the access handler until the completion callback.
 * States: NEW (headers read, checks done) -> BODY (accumulating) ->
 * [QUEUED -> RAN: a side worker ran the handler, the connection suspended
 * meanwhile] -> REPLIED (a response was queued). An early error is
 * remembered and sent when the body has been consumed.
 *
 * Threads: MHD's own pool of `http-threads` epoll workers (one per CPU by
 * default) reads, checks and answers every connection; an idle connection
 * costs no thread. A handler that never blocks (the store's reads and
 * writes, listed in inline_fns) runs on the worker. Any other handler (X
 * work, model calls, long polls, tool calls: anything that may take
 * milliseconds or minutes) runs on a side worker while its connection is
 * suspended, so it never stalls the other connections of its MHD worker.
 * A ROUTE_TRY handler (a desktop action: quick unless the display is busy,
 * not yet connected or silent; a logged write: quick unless the store is
 * restarting its WAL) is first run on the worker in nowait mode
 * (nowait.h); if it refuses, it runs again on a side worker. For a click
 * that saves the two thread hand-offs, about a sixth of it; for a write it
 * keeps a WAL restart's milliseconds of fsync from stalling the worker's
 * other connections (reads among them).
 * Side workers are started on demand (at most max-connections) and leave
 * after SIDE_IDLE_S idle.
 *
 * Streams (SSE, MJPEG): their reader returns REQ_STREAM_WAIT when it has
 * nothing to send; the connection is then suspended (on `waiting`) until
 * req_streams_wake names its key, or the ticker's second passes. wake_gen
 * counts wakes, so a wake between the reader's answer and the suspension
 * is not lost (the reader is asked again at once). Lock order: a module's
 * own lock may be held when calling req_streams_wake (s_mu inside it);
 * s_mu is never held while calling into a module.
 */
#include "core/cancel.h"
#include "core/nowait.h"
#include "http.h"

#include <assert.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/jx.h"
#include "core/log.h"
#include "lim.h"
#include "ops/metrics.h"
#include "task/events.h"

#define SIDE_IDLE_S     10      /* a side worker with nothing to do leaves */
#define TICK_MS         1000    /* waiting streams are asked again at least this often */

enum phase { PH_NEW, PH_QUEUED, PH_RAN, PH_COMMIT };

struct hreq;

/* A streamed reply, owned by MHD's response from queue to free. */
struct stream {
	struct req r;           /* the handler's reply: stream, stream_done, stream_cls */
	const void *key;
	bool waiting;           /* on http.waiting, its connection suspended (s_mu) */
	struct stream *next;
};

struct http {
	struct MHD_Daemon *mhd;
	struct app *app;
	/* side workers */
	pthread_mutex_t mu;
	pthread_cond_t cv;              /* a job queued, or stopping */
	pthread_cond_t idle_cv;         /* a job ended */
	struct hreq *q_head, **q_tail;
	int nside, nidle, running, queued;
	bool stopping;
	/* the write lane: logged writes refused in nowait mode (a WAL restart
	 * held the store lock) wait for that one lock anyway, so one side
	 * worker runs them in turn instead of a thread each */
	struct hreq *w_head, **w_tail;
	bool w_busy;                    /* its worker runs (counted in nside) */
	/* suspended streams */
	pthread_mutex_t s_mu;
	struct stream *waiting;
	uint64_t wake_gen;              /* atomic reads; writes under s_mu */
	bool streams_down;
	pthread_t ticker;
	bool ticker_running;
	pthread_cond_t tick_cv;
	/* replies waiting for their commit (suspended) */
	pthread_mutex_t d_mu;
	struct hreq *deferred;
	uint64_t committed_seen;        /* the last batch the commit hook saw */
};

/* The server (one per process): req_streams_wake needs it without a handle. */
static struct http *server;

struct hreq {
	const struct route *route;
	struct buf body;
	struct derr err;        /* code != OK: reply with it */
	char allow[64];         /* for 405 */
	char *param_copies[ROUTE_MAX_PARAMS];
	const char *params[ROUTE_MAX_PARAMS];
	int nparams;
	int64_t t0;
	char *raw_path;         /* the request target's path as sent, undecoded */
	bool started;           /* the access handler has seen the headers */
	uint64_t drained;       /* body bytes read and dropped after an early error */
	bool raw_too_long;      /* it was over LIM_URL_BYTES (raw_path NULL) */
	/* a handler run on a side worker */
	enum phase phase;
	struct MHD_Connection *conn;
	char *method, *url;     /* copies, for the side worker */
	struct req r;           /* its reply, sent when the connection resumes */
	struct derr e;
	int rc;
	struct hreq *next;      /* in the side queue, or on http.deferred */
	uint64_t ticket;        /* its writes' batch: the reply waits for its commit */
	bool lane;              /* on the write lane: runs deferred there too */
};

int
http_route_match(const char *pattern, const char *path,
    const char *params[ROUTE_MAX_PARAMS], size_t lens[ROUTE_MAX_PARAMS], int *nparams)
{
	const char *p = pattern, *u = path;

	*nparams = 0;
	while (*p != '\0' && *u != '\0') {
		if (*p == '{') {
			const char *close = strchr(p, '}');
			size_t n = strcspn(u, "/");

			if (close == NULL || n == 0 || *nparams >= ROUTE_MAX_PARAMS)
				return 0;
			params[*nparams] = u;
			lens[*nparams] = n;
			(*nparams)++;
			p = close + 1;
			u += n;
			continue;
		}
		if (*p != *u)
			return 0;
		p++;
		u++;
	}
	/* Tolerate one trailing slash on the request. */
	if (*p == '\0' && u[0] == '/' && u[1] == '\0')
		return 1;
	return *p == '\0' && *u == '\0';
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Copies a host (without :port or [brackets]) into out. */
static void
host_name(const char *host, char *out, size_t cap)
{
	size_t n;

	if (host[0] == '[') {
		const char *close = strchr(host, ']');

		n = close ? (size_t)(close - host - 1) : strlen(host + 1);
		host++;
	} else {
		n = strcspn(host, ":");
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(out, host, n);
	out[n] = '\0';
}

int
http_host_ok(const char *host, const char *listen, int port)
{
	static const char *const loopback[] = { "localhost", "127.0.0.1", "::1" };
	char name[256];
	const char *colon;
	size_t i;

	if (host == NULL)
		return 1;               /* HTTP/1.0 without Host: nothing to check */
	host_name(host, name, sizeof name);
	colon = host[0] == '[' ? strstr(host, "]:") : strchr(host, ':');
	if (colon != NULL && atoi(colon + (host[0] == '[' ? 2 : 1)) != port)
		return 0;
	for (i = 0; i < ARRAY_LEN(loopback); i++) {
		if (strcasecmp(name, loopback[i]) == 0)
			return 1;
	}
	return strcasecmp(name, listen) == 0;
}

int
http_origin_ok(const char *origin, const char *host)
{
	if (origin == NULL)
		return 1;
	if (host == NULL || strncmp(origin, "http://", 7) != 0)
		return 0;
	return strcasecmp(origin + 7, host) == 0;
}

static int
is_loopback(const char *addr)
{
	return strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0 ||
	    strcmp(addr, "localhost") == 0;
}

/* Frees what a reply owns that was not handed to MHD. */
static void
reply_release(struct req *r)
{
	json_object_put(r->reply);
	r->reply = NULL;
	free(r->raw);
	r->raw = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	if (r->stream_done != NULL)
		r->stream_done(r->stream_cls);
	r->stream = NULL;
	r->stream_done = NULL;
}

/* Suspends s's connection until a wake, unless one came since gen. */
static void
stream_park(struct stream *s, uint64_t gen)
{
	struct http *h = server;

	pthread_mutex_lock(&h->s_mu);
	if (!h->streams_down && h->wake_gen == gen && s->r.conn != NULL) {
		s->waiting = true;
		s->next = h->waiting;
		h->waiting = s;
		MHD_suspend_connection(s->r.conn);
	}
	pthread_mutex_unlock(&h->s_mu);
}

static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	uint64_t gen = __atomic_load_n(&server->wake_gen, __ATOMIC_ACQUIRE);
	long n = s->r.stream(s->r.stream_cls, pos, buf, max);

	if (n > 0)
		return (ssize_t)n;
	if (n != REQ_STREAM_WAIT)
		return MHD_CONTENT_READER_END_OF_STREAM;
	/* Nothing yet: 0 makes MHD ask again, after the resume. */
	stream_park(s, gen);
	return 0;
}

static void
stream_unlink(struct http *h, struct stream *s)
{
	struct stream **pp;

	for (pp = &h->waiting; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	s->waiting = false;
}

static void
stream_free(void *cls)
{
	struct stream *s = cls;

	pthread_mutex_lock(&server->s_mu);
	if (s->waiting)
		stream_unlink(server, s);
	pthread_mutex_unlock(&server->s_mu);
	if (s->r.stream_done != NULL)
		s->r.stream_done(s->r.stream_cls);
	free(s);
}

void
req_streams_wake(const void *key)
{
	struct http *h = server;
	struct stream **pp, *s;

	if (h == NULL)
		return;
	pthread_mutex_lock(&h->s_mu);
	__atomic_store_n(&h->wake_gen, h->wake_gen + 1, __ATOMIC_RELEASE);
	for (pp = &h->waiting; (s = *pp) != NULL;) {
		if (key != NULL && s->key != key) {
			pp = &s->next;
			continue;
		}
		*pp = s->next;
		s->waiting = false;
		MHD_resume_connection(s->r.conn);
	}
	pthread_mutex_unlock(&h->s_mu);
}

void
req_stream_key(struct req *r, const void *key)
{
	r->stream_key = key;
}

/* A non-JSON reply: a buffer, a file or a stream. */
static enum MHD_Result
send_raw(struct MHD_Connection *conn, struct req *r)
{
	struct MHD_Response *resp = NULL;
	enum MHD_Result ret;
	int i;

	if (r->stream != NULL) {
		struct stream *owner = xcalloc(1, sizeof *owner);

		owner->r = *r;  /* the stream's state outlives this request struct */
		owner->r.conn = conn;
		owner->key = r->stream_key;
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, stream_read,
		    owner, stream_free);
		if (resp == NULL) {
			free(owner);
			return MHD_NO;  /* r still owns the stream: the caller releases it */
		}
		r->stream = NULL;
		r->stream_done = NULL;
	} else if (r->fd >= 0) {
		resp = MHD_create_response_from_fd_at_offset64(r->fd_len, r->fd, r->fd_off);
		if (resp == NULL)
			return MHD_NO;
		r->fd = -1;     /* MHD closes it */
	} else {
		resp = MHD_create_response_from_buffer(r->raw_len, r->raw, MHD_RESPMEM_MUST_FREE);
		if (resp == NULL)
			return MHD_NO;
		r->raw = NULL;  /* MHD frees it */
	}
	MHD_add_response_header(resp, "Content-Type", r->raw_type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	for (i = 0; i < r->nhdr; i++)
		MHD_add_response_header(resp, r->hdr_name[i], r->hdr_val[i]);
	ret = MHD_queue_response(conn, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
send_json(struct MHD_Connection *conn, int status, json_object *obj, const char *allow)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	const char *text;
	size_t len;

	text = jx_string(obj, &len);
	if (!utf8_valid(text, len)) {
		/* The last guard (json-c passes bytes >= 0x80 through): the
		 * sources repair their text, this catches whatever they miss. */
		char *fixed = utf8_dup(text, len, &len);

		log_warn("repaired invalid UTF-8 in a reply");
		resp = MHD_create_response_from_buffer(len, fixed, MHD_RESPMEM_MUST_FREE);
		if (resp == NULL)
			free(fixed);
	} else {
		resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)text,
		    MHD_RESPMEM_MUST_COPY);
	}
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "application/json; charset=utf-8");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (allow != NULL && allow[0] != '\0')
		MHD_add_response_header(resp, "Allow", allow);
	if (status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"detm\"");
	ret = MHD_queue_response(conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
send_error(struct MHD_Connection *conn, const struct derr *e, const char *allow)
{
	json_object *obj = derr_to_json(e);
	enum MHD_Result ret = send_json(conn, derr_status(e->code), obj, allow);

	json_object_put(obj);
	return ret;
}

/* Decodes %XX escapes in a path parameter in place. -1 (s unchanged in
 * meaning) when an escape is malformed or decodes to NUL: a parameter is
 * text, and a NUL would cut it short further on. */
static int
param_decode(char *s)
{
	char *o = s;

	for (; *s != '\0'; s++) {
		int hi, lo;

		if (*s != '%') {
			*o++ = *s;
			continue;
		}
		hi = hexval(s[1]);
		lo = hi < 0 ? -1 : hexval(s[2]);
		if (lo < 0 || (hi == 0 && lo == 0))
			return -1;
		*o++ = (char)(hi * 16 + lo);
		s += 2;
	}
	*o = '\0';
	return 0;
}

/* Finds the route for a path as sent (percent-escapes undecoded, so an
 * escaped '/' stays inside one parameter); parameters come out decoded.
 * Fills hr->err with 400/404/405 when there is none. */
static void
route_find(struct hreq *hr, const char *method, const char *url)
{
	const char *params[ROUTE_MAX_PARAMS];
	size_t lens[ROUTE_MAX_PARAMS], i;
	const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;
	int np, k, path_known = 0;

	for (i = 0; i < api_nroutes; i++) {
		const struct route *rt = &api_routes[i];

		if (!http_route_match(rt->pattern, url, params, lens, &np))
			continue;
		if (strcmp(rt->method, m) != 0) {
			size_t o = strlen(hr->allow);

			if (o + strlen(rt->method) + 3 < sizeof hr->allow)
				snprintf(hr->allow + o, sizeof hr->allow - o, "%s%s",
				    o ? ", " : "", rt->method);
			path_known = 1;
			continue;
		}
		hr->route = rt;
		for (k = 0; k < np; k++) {
			hr->param_copies[k] = xstrndup(params[k], lens[k]);
			hr->params[k] = hr->param_copies[k];
		}
		hr->nparams = np;
		for (k = 0; k < np; k++)
			if (param_decode(hr->param_copies[k]) != 0) {
				derr_set(&hr->err, DERR_INVALID, NULL,
				    "a path segment holds a NUL byte or a bad %%-escape");
				hr->route = NULL;
				return;
			}
		return;
	}
	if (path_known)
		derr_set(&hr->err, DERR_METHOD, NULL, "%s is not allowed on %s (allowed: %s)",
		    method, url, hr->allow);
	else
		derr_set(&hr->err, DERR_NOT_FOUND, NULL, "no route %s %s (GET /api/routes lists them)",
		    method, url);
}

/* Adds the length of one query argument (key=value&) to *cls. */
static enum MHD_Result
query_len(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	size_t *total = cls;

	(void)kind;
	*total += strlen(key) + (value != NULL ? strlen(value) : 0) + 2;
	return MHD_YES;
}

struct hdr_count {
	int clen, te, host;
};

static enum MHD_Result
count_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct hdr_count *c = cls;

	(void)kind;
	(void)value;
	if (strcasecmp(key, "Content-Length") == 0)
		c->clen++;
	else if (strcasecmp(key, "Transfer-Encoding") == 0)
		c->te++;
	else if (strcasecmp(key, "Host") == 0)
		c->host++;
	return MHD_YES;
}

/* Request framing that libmicrohttpd 0.9.75 lets through (RFC 9112 6.3,
 * 3.2): several Content-Length or Host headers, Content-Length together
 * with Transfer-Encoding, a coding other than chunked, HTTP/1.1 without
 * Host. Checked before any body byte is read, so nothing ambiguous is ever
 * parsed. (A Content-Length MHD cannot parse at all it answers itself,
 * before this runs; see docs/security.md.) Fills *e; -1 on a bad frame. */
static int
check_framing(struct MHD_Connection *conn, const char *version, struct derr *e)
{
	struct hdr_count c = { 0, 0, 0 };
	const char *te;

	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_framing, &c);
	if (c.clen > 1)
		return derr_set(e, DERR_INVALID, NULL, "several Content-Length headers");
	if (c.te > 1 || (c.te == 1 && c.clen == 1))
		return derr_set(e, DERR_INVALID, NULL,
		    "Transfer-Encoding must come alone and once (no Content-Length beside it)");
	if (c.host > 1)
		return derr_set(e, DERR_INVALID, NULL, "several Host headers");
	if (c.host == 0 && version != NULL && strcmp(version, "HTTP/1.0") != 0)
		return derr_set(e, DERR_INVALID, NULL, "an HTTP/1.1 request needs a Host header");
	te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
	if (te != NULL && strcasecmp(te, "chunked") != 0)
		return derr_set(e, DERR_NOT_IMPLEMENTED, NULL,
		    "Transfer-Encoding '%.32s' is not supported (only chunked)", te);
	return 0;
}

/* The checks that need only the headers. Fills hr->err on failure. */
static void
check_headers(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url, const char *version)
{
	const struct config *cfg = h->app->cfg;
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	const char *auth, *clen, *ctype, *te;
	size_t qlen = 0;

	if (check_framing(conn, version, &hr->err) != 0)
		return;
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, query_len, &qlen);
	if (hr->raw_too_long || hr->raw_path == NULL || strlen(url) + qlen > LIM_URL_BYTES) {
		derr_set(&hr->err, DERR_INVALID, NULL, "URL too long (at most %d bytes)", LIM_URL_BYTES);
		return;
	}
	if (!utf8_valid(url, strlen(url)) || !utf8_valid(hr->raw_path, strlen(hr->raw_path))) {
		derr_set(&hr->err, DERR_INVALID, NULL, "URL is not valid UTF-8");
		return;
	}
	/* With a token and a public address the token is the defence; on
	 * loopback, Host pinning stops DNS rebinding. */
	if ((cfg->token[0] == '\0' || is_loopback(cfg->listen)) &&
	    !http_host_ok(host, cfg->listen, h->app->port)) {
		derr_set(&hr->err, DERR_FORBIDDEN, NULL,
		    "Host '%s' is not this daemon (use 127.0.0.1 or localhost)", host);
		return;
	}
	if (!http_origin_ok(origin, host)) {
		derr_set(&hr->err, DERR_FORBIDDEN, NULL,
		    "cross-origin requests are refused (Origin '%s')", origin);
		return;
	}
	if (cfg->token[0] != '\0') {
		/* The header; for browsers, the dashboard's cookie; for GET
		 * links (<img>, <video>, the first visit of /dashboard), ?token=. */
		const char *cookie = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, "detm_token");
		const char *qtok = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ?
		    MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token") : NULL;
		bool good;

		auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
		if (auth != NULL)
			good = strncasecmp(auth, "Bearer ", 7) == 0 && secure_streq(auth + 7, cfg->token);
		else if (qtok != NULL)
			good = secure_streq(qtok, cfg->token);
		else
			good = cookie != NULL && secure_streq(cookie, cfg->token);
		if (!good) {
			derr_set(&hr->err, DERR_UNAUTHORIZED, NULL, "%s",
			    auth || qtok || cookie ? "wrong token" :
			    "this daemon needs 'Authorization: Bearer <token>'");
			return;
		}
	}
	route_find(hr, method, hr->raw_path);
	if (hr->route == NULL)
		return;
	clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
	if ((clen == NULL || strcmp(clen, "0") == 0) && te == NULL)
		return;                 /* no body */
	if (clen != NULL && strtoull(clen, NULL, 10) > (hr->route->max_body ? hr->route->max_body : 0)) {
		if (hr->route->max_body == 0)
			derr_set(&hr->err, DERR_TOO_LARGE, NULL, "%s %s takes no body", method,
			    hr->route->pattern);
		else
			derr_set(&hr->err, DERR_TOO_LARGE, NULL, "body too large (at most %zu bytes)",
			    hr->route->max_body);
		return;
	}
	ctype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0 ||
	    (ctype[16] != '\0' && ctype[16] != ';' && ctype[16] != ' ')) {
		derr_set(&hr->err, DERR_MEDIA, NULL,
		    "the body must be JSON sent with Content-Type: application/json (got %s)",
		    ctype ? ctype : "none");
		return;
	}
}

/* Handlers that only write through store_tx and then build their reply
 * from what they wrote (no read back): on an HTTP worker they run with a
 * deferred acknowledgement, so the worker never waits for a COMMIT; the
 * connection is suspended until the batch commits, then the reply goes. */
static const route_fn deferred_fns[] = {
	api_action_create, api_log_create, api_message_create,
};

static bool
defers(const struct hreq *hr)
{
	size_t i;

	if (hr->phase != PH_NEW && !hr->lane)
		return false;   /* a side worker can wait (the write lane must not) */
	for (i = 0; i < ARRAY_LEN(deferred_fns); i++)
		if (hr->route->fn == deferred_fns[i])
			return true;
	return false;
}

/* A deferred reply whose batch did not end well becomes the store's error
 * for it (state < 0): not committed (no_space, io_error, internal), or
 * stored but not durable. */
static void
commit_result(struct http *h, struct hreq *hr, int state)
{
	if (state >= 0 || hr->rc != 0)
		return;
	json_object_put(hr->r.reply);
	hr->r.reply = NULL;
	hr->rc = -1;
	store_ticket_error(h->app->store, hr->ticket, &hr->e);
}

/* Runs hr's handler into hr->r / hr->rc / hr->e (on an HTTP worker or a
 * side worker): parses the body, calls the route. */
static void
handler_call(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url)
{
	struct req *r = &hr->r;

	memset(r, 0, sizeof *r);
	r->fd = -1;
	derr_clear(&hr->e);
	r->app = h->app;
	r->conn = conn;
	r->method = method;
	r->path = url;
	memcpy(r->params, hr->params, sizeof r->params);
	r->nparams = hr->nparams;
	r->status = 200;
	hr->rc = -1;
	if (hr->body.len > 0) {
		r->body = jx_parse(hr->body.data, hr->body.len, &hr->e);
		if (hr->route->flags & ROUTE_RPC)
			derr_clear(&hr->e);     /* JSON-RPC answers it: NULL body = parse error, or a batch */
		else if (r->body == NULL)
			return;
		if (r->body != NULL && !(hr->route->flags & ROUTE_RPC) &&
		    !json_object_is_type(r->body, json_type_object)) {
			derr_set(&hr->e, DERR_INVALID, NULL, "the body must be a JSON object");
			return;
		}
	} else {
		r->body = json_object_new_object();
	}
	cancel_bind(NULL, req_conn_fd(r));      /* a hang-up cancels long work (cancel.h) */
	if (!defers(hr)) {
		hr->rc = hr->route->fn(r, &hr->e);
	} else {
		store_defer_begin();
		hr->rc = hr->route->fn(r, &hr->e);
		hr->ticket = store_defer_end();
	}
	cancel_bind(NULL, -1);
}

/* Sends what handler_call left (on the connection's HTTP worker). */
static enum MHD_Result
handler_reply(struct hreq *hr, struct MHD_Connection *conn, const char *method, const char *url)
{
	struct req *r = &hr->r;
	struct derr *e = &hr->e;
	enum MHD_Result ret;

	if (hr->rc == 0 && (r->raw != NULL || r->fd >= 0 || r->stream != NULL)) {
		ret = send_raw(conn, r);
		log_debug("%s %s -> %d raw (%lld us)", method, url, r->status, (long long)(mono_us() - hr->t0));
		reply_release(r);
		json_object_put(r->body);
		r->body = NULL;
		return ret;
	}
	if (hr->rc == 0 && r->reply != NULL) {
		ret = send_json(conn, r->status, r->reply, NULL);
		log_debug("%s %s -> %d (%lld us)", method, url, r->status, (long long)(mono_us() - hr->t0));
		json_object_put(r->reply);
		r->reply = NULL;
		json_object_put(r->body);
		r->body = NULL;
		return ret;
	}
	if (e->code == DERR_OK)
		derr_set(e, DERR_INTERNAL, NULL, "internal error");
	reply_release(r);
	json_object_put(r->body);
	r->body = NULL;
	if (derr_status(e->code) >= 500)
		log_warn("%s %s -> %d: %s", method, url, derr_status(e->code), e->message);
	else
		log_debug("%s %s -> %d: %s", method, url, derr_status(e->code), e->message);
	return send_error(conn, e, NULL);
}

/* Handlers that never block: the store's reads and writes (a write waits
 * at most for the group commit in flight), stream set-ups, static files.
 * They run on the HTTP worker; every other one on a side worker. */
static const route_fn inline_fns[] = {
	api_health, api_version, api_capabilities, api_routes_list, api_task_list, api_task_get,
	api_item_get, api_action_get, api_action_patch,
	api_messages_get, api_events, api_live_task, api_live_shared,
	api_live_list, api_wait_list, api_dashboard, api_dashboard_file, api_tools_list,
	api_humanize_get,
};

static bool
runs_inline(const struct hreq *hr, struct MHD_Connection *conn)
{
	const char *block;
	size_t i;

	if (hr->route->fn == api_wait_get || hr->route->fn == api_record_get) {
		block = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "block_s");
		return block == NULL || block[strspn(block, "0")] == '\0';
	}
	for (i = 0; i < ARRAY_LEN(inline_fns); i++)
		if (hr->route->fn == inline_fns[i])
			return true;
	return false;
}

/* A ROUTE_TRY handler, on the HTTP worker in nowait mode: true if it ran
 * to an answer (sent like any inline handler's), false if it refused to
 * wait (it changed nothing; its request is reset for a side worker). */
static bool
try_inline(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url)
{
	bool refused;

	nowait_begin();
	handler_call(h, hr, conn, method, url);
	refused = nowait_end();
	if (!refused)
		return true;
	/* A refusal comes before anything is changed: nothing was written. */
	assert(hr->ticket == 0);
	log_debug("%s %s: on a side worker (%s)", method, url, hr->e.message);
	reply_release(&hr->r);
	json_object_put(hr->r.body);
	hr->r.body = NULL;
	derr_clear(&hr->e);
	hr->rc = -1;
	return false;
}

/* After a deferred handler: true if the reply must wait for hr->ticket's
 * commit (the connection is then suspended until the hook resumes it;
 * conn NULL: it is suspended already, a write lane job). When the batch
 * failed, the reply becomes a 500. */
static bool
commit_wait(struct http *h, struct hreq *hr, struct MHD_Connection *conn)
{
	int state = store_ticket_state(h->app->store, hr->ticket);

	if (state == 0) {
		pthread_mutex_lock(&h->d_mu);
		if (h->committed_seen < hr->ticket) {
			hr->phase = PH_COMMIT;
			hr->next = h->deferred;
			h->deferred = hr;
			if (conn != NULL)
				MHD_suspend_connection(conn);
			pthread_mutex_unlock(&h->d_mu);
			return true;
		}
		pthread_mutex_unlock(&h->d_mu);
		state = store_ticket_state(h->app->store, hr->ticket);
	}
	commit_result(h, hr, state);
	return false;
}

/* The store's commit hook: events of the batch go out, then its replies. */
static void
on_commit(void *arg, uint64_t batch, bool ok)
{
	struct http *h = arg;
	struct hreq **pp, *hr;

	events_commit(batch, ok);
	pthread_mutex_lock(&h->d_mu);
	if (batch > h->committed_seen)
		h->committed_seen = batch;
	for (pp = &h->deferred; (hr = *pp) != NULL;) {
		if (hr->ticket > batch) {
			pp = &hr->next;
			continue;
		}
		*pp = hr->next;
		MHD_resume_connection(hr->conn);
	}
	pthread_mutex_unlock(&h->d_mu);
}

static void *side_main(void *arg);
static void *lane_main(void *arg);

/* A detached side worker running fn (h->mu held); false if none started. */
static bool
side_spawn(struct http *h, void *(*fn)(void *))
{
	pthread_t t;
	pthread_attr_t at;
	bool ok;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	ok = pthread_create(&t, &at, fn, h) == 0;
	pthread_attr_destroy(&at);
	if (ok)
		h->nside++;
	return ok;
}

/* Hands hr to a side worker and suspends its connection (worker thread).
 * lane: a logged write refused while the store lock was held for long
 * (the write lane, one worker for all); else a worker of its own. */
static void
side_queue(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url, bool lane)
{
	hr->phase = PH_QUEUED;
	hr->conn = conn;
	hr->method = xstrdup(method);
	hr->url = xstrdup(url);
	MHD_suspend_connection(conn);
	pthread_mutex_lock(&h->mu);
	hr->next = NULL;
	h->running++;
	/* If the lane's worker cannot start, the job runs on a general one. */
	if (lane && !h->w_busy)
		h->w_busy = side_spawn(h, lane_main);
	hr->lane = lane && h->w_busy;
	if (hr->lane) {
		*h->w_tail = hr;
		h->w_tail = &hr->next;
		pthread_mutex_unlock(&h->mu);
		return;
	}
	*h->q_tail = hr;
	h->q_tail = &hr->next;
	h->queued++;
	/* Every queued job needs a thread of its own (it may block for long):
	 * an idle one that has not picked up an earlier job yet does not count. */
	if (h->queued > h->nidle && h->nside < h->app->cfg->max_conns &&
	    !side_spawn(h, side_main) && h->nside == 0)
		log_error("cannot start a side worker; requests wait for one");
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* Runs a queued job and resumes its connection (a write lane job's, once
 * its batch committed); h->mu held on entry and on return (let go
 * meanwhile). */
static void
side_run(struct http *h, struct hreq *hr)
{
	pthread_mutex_unlock(&h->mu);
	handler_call(h, hr, hr->conn, hr->method, hr->url);
	if (hr->ticket == 0 || !commit_wait(h, hr, NULL)) {
		hr->phase = PH_RAN;
		MHD_resume_connection(hr->conn);
	}
	pthread_mutex_lock(&h->mu);
	h->running--;
	pthread_cond_broadcast(&h->idle_cv);
}

/* The write lane's worker: runs the lane's jobs in turn, leaves when it
 * is empty (the next refused write starts a new one). */
static void *
lane_main(void *arg)
{
	struct http *h = arg;
	struct hreq *hr;

	pthread_mutex_lock(&h->mu);
	while ((hr = h->w_head) != NULL) {
		h->w_head = hr->next;
		if (h->w_head == NULL)
			h->w_tail = &h->w_head;
		side_run(h, hr);
	}
	h->w_busy = false;
	h->nside--;
	pthread_cond_broadcast(&h->idle_cv);
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static void *
side_main(void *arg)
{
	struct http *h = arg;
	struct hreq *hr;
	struct timespec ts;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (h->q_head == NULL && !h->stopping) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += SIDE_IDLE_S;
			h->nidle++;
			int w = pthread_cond_timedwait(&h->cv, &h->mu, &ts);
			h->nidle--;
			if (w != 0 && h->q_head == NULL)
				break;
		}
		hr = h->q_head;
		if (hr == NULL)
			break;
		h->q_head = hr->next;
		h->queued--;
		if (h->q_head == NULL)
			h->q_tail = &h->q_head;
		side_run(h, hr);
	}
	h->nside--;
	pthread_cond_broadcast(&h->idle_cv);
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* After an error found in the headers: answer at once, or first read and
 * drop the body? A reply sent while the client is still sending is often
 * lost: closing a socket with unread bytes makes the kernel reset the
 * connection, and the client sees "connection reset" instead of our 413 or
 * 404. So a body of up to LIM_DRAIN_BYTES (declared, or chunked: counted as
 * it comes) is read and dropped first. A client that sent "Expect:
 * 100-continue" waits for us and gets the answer at once; so does a body
 * declared larger than LIM_DRAIN_BYTES, and a request without a body. */
static bool
answer_before_body(struct MHD_Connection *conn)
{
	const char *clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
	const char *expect = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Expect");

	if (expect != NULL && strcasecmp(expect, "100-continue") == 0)
		return true;
	if (te != NULL)         /* chunked is drained; any other coding cannot be */
		return strcasecmp(te, "chunked") != 0;
	if (clen == NULL)
		return true;
	return strtoull(clen, NULL, 10) == 0 || strtoull(clen, NULL, 10) > LIM_DRAIN_BYTES;
}

static enum MHD_Result
on_access(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **con_cls)
{
	struct http *h = cls;
	struct hreq *hr = *con_cls;

	if (hr == NULL) {               /* no URI callback ran: cannot route */
		hr = xcalloc(1, sizeof *hr);
		hr->t0 = mono_us();
		hr->r.fd = -1;
		*con_cls = hr;
	}
	if (!hr->started) {
		hr->started = true;
		check_headers(h, hr, conn, method, url, version);
		buf_init(&hr->body, hr->route ? hr->route->max_body : 0);
		if (hr->err.code != DERR_OK) {
			log_debug("%s %s -> %d: %s", method, url, derr_status(hr->err.code),
			    hr->err.message);
			if (!answer_before_body(conn))
				return MHD_YES;         /* drain, then answer */
			/* Answer now; MHD discards any unread body and closes. */
			return send_error(conn, &hr->err, hr->allow);
		}
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (hr->err.code == DERR_OK &&
		    buf_append(&hr->body, upload_data, *upload_data_size) != 0)
			derr_set(&hr->err, DERR_TOO_LARGE, NULL, "body too large (at most %zu bytes)",
			    hr->route->max_body);
		if (hr->err.code != DERR_OK)
			hr->drained += *upload_data_size;
		*upload_data_size = 0;
		if (hr->drained > LIM_DRAIN_BYTES)
			return send_error(conn, &hr->err, hr->allow);   /* enough: close */
		return MHD_YES;
	}
	if (hr->phase == PH_RAN)
		return handler_reply(hr, conn, method, url);
	if (hr->phase == PH_COMMIT) {
		commit_result(h, hr, store_ticket_state(h->app->store, hr->ticket));
		return handler_reply(hr, conn, method, url);
	}
	if (hr->phase == PH_QUEUED)
		return MHD_YES;         /* not ours: resumed too early (cannot happen) */
	if (hr->err.code != DERR_OK)
		return send_error(conn, &hr->err, hr->allow);
	if (hr->route->flags & ROUTE_TRY) {
		if (!try_inline(h, hr, conn, method, url)) {
			side_queue(h, hr, conn, method, url, defers(hr));
			return MHD_YES;
		}
	} else if (runs_inline(hr, conn)) {
		handler_call(h, hr, conn, method, url);
	} else {
		side_queue(h, hr, conn, method, url, false);
		return MHD_YES;
	}
	hr->conn = conn;
	if (hr->ticket != 0 && commit_wait(h, hr, conn))
		return MHD_YES;
	return handler_reply(hr, conn, method, url);
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct hreq *hr = *con_cls;
	int i;

	if (hr == NULL)
		return;
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		log_debug("request ended early (code %d)", (int)toe);
	metrics_observe(hr->route != NULL ? (int)(hr->route - api_routes) : -1, conn, mono_us() - hr->t0);
	buf_free(&hr->body);
	for (i = 0; i < ROUTE_MAX_PARAMS; i++)
		free(hr->param_copies[i]);
	reply_release(&hr->r);
	json_object_put(hr->r.body);
	free(hr->method);
	free(hr->url);
	free(hr->raw_path);
	free(hr);
	*con_cls = NULL;
}

/* MHD's URI callback: runs once per request with the request target as
 * sent, before MHD decodes it. Its result becomes the request's state, so
 * routing can see "%2F" as data rather than as a separator. */
static void *
on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct hreq *hr = xcalloc(1, sizeof *hr);
	size_t n = strcspn(uri, "?");

	(void)cls;
	(void)conn;
	hr->t0 = mono_us();
	hr->r.fd = -1;
	if (n > LIM_URL_BYTES)
		hr->raw_too_long = true;
	else
		hr->raw_path = xstrndup(uri, n);
	return hr;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof msg, fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_warn("microhttpd: %s", msg);
}

/* Wakes every waiting stream once a second (heartbeats, hang-ups, ends). */
static void *
tick_main(void *arg)
{
	struct http *h = arg;
	struct timespec ts;

	pthread_mutex_lock(&h->mu);
	while (!h->streams_down) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += TICK_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&h->tick_cv, &h->mu, &ts);
		pthread_mutex_unlock(&h->mu);
		req_streams_wake(NULL);
		pthread_mutex_lock(&h->mu);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* After the server: events of deferred writes (none are left) still go. */
static void
events_commit_hook(void *arg, uint64_t batch, bool ok)
{
	(void)arg;
	events_commit(batch, ok);
}

static unsigned
pool_size(const struct config *cfg)
{
	long n = cfg->http_threads > 0 ? cfg->http_threads : sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (unsigned)n;
}

static void
http_free(struct http *h)
{
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
	pthread_cond_destroy(&h->idle_cv);
	pthread_mutex_destroy(&h->s_mu);
	pthread_cond_destroy(&h->tick_cv);
	pthread_mutex_destroy(&h->d_mu);
	free(h);
}

struct http *
http_start(struct app *app, int listen_fd, struct derr *e)
{
	struct http *h = xcalloc(1, sizeof *h);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
	    MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	unsigned threads = pool_size(app->cfg);

	h->app = app;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	pthread_cond_init(&h->idle_cv, NULL);
	pthread_mutex_init(&h->s_mu, NULL);
	pthread_cond_init(&h->tick_cv, NULL);
	pthread_mutex_init(&h->d_mu, NULL);
	h->q_tail = &h->q_head;
	h->w_tail = &h->w_head;
	server = h;
	store_set_commit_hook(app->store, on_commit, h);
	if (strchr(app->cfg->listen, ':') != NULL)
		flags |= MHD_USE_IPv6;
	h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_access, h,
	    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
	    MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
	    MHD_OPTION_THREAD_POOL_SIZE, threads,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)app->cfg->max_conns,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)app->cfg->conn_timeout_s,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
	    MHD_OPTION_URI_LOG_CALLBACK, on_uri, h,
	    MHD_OPTION_END);
	if (h->mhd == NULL) {
		store_set_commit_hook(app->store, events_commit_hook, NULL);
		server = NULL;
		http_free(h);
		derr_set(e, DERR_INTERNAL, NULL, "libmicrohttpd failed to start");
		return NULL;
	}
	if (pthread_create(&h->ticker, NULL, tick_main, h) == 0)
		h->ticker_running = true;
	else
		log_warn("no stream ticker: idle streams notice a hang-up only at their next event");
	log_info("HTTP: %u epoll workers", threads);
	return h;
}

void
http_stop(struct http *h)
{
	if (h == NULL)
		return;
	/* Streams: no more waiting (their modules have ended them). */
	pthread_mutex_lock(&h->mu);
	pthread_mutex_lock(&h->s_mu);
	h->streams_down = true;
	pthread_mutex_unlock(&h->s_mu);
	pthread_cond_broadcast(&h->tick_cv);
	pthread_mutex_unlock(&h->mu);
	req_streams_wake(NULL);
	if (h->ticker_running)
		pthread_join(h->ticker, NULL);
	/* Side workers: finish what runs (it resumes its connection), then leave.
	 * MHD may not stop while a connection is suspended. */
	pthread_mutex_lock(&h->mu);
	while (h->running > 0)
		pthread_cond_wait(&h->idle_cv, &h->mu);
	h->stopping = true;
	pthread_cond_broadcast(&h->cv);
	while (h->nside > 0)
		pthread_cond_wait(&h->idle_cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	/* Replies waiting for a commit: the committer resumes them shortly. */
	for (;;) {
		bool none;

		pthread_mutex_lock(&h->d_mu);
		none = h->deferred == NULL;
		pthread_mutex_unlock(&h->d_mu);
		if (none)
			break;
		usleep(1000);
	}
	MHD_stop_daemon(h->mhd);
	store_set_commit_hook(h->app->store, events_commit_hook, NULL);
	server = NULL;
	http_free(h);
}

int
req_reply(struct req *r, int status, json_object *obj)
{
	json_object_put(r->reply);
	r->status = status;
	r->reply = obj;
	return 0;
}

int
req_reply_fd(struct req *r, int status, const char *type, int fd, uint64_t off, uint64_t len)
{
	reply_release(r);
	r->status = status;
	r->raw_type = type;
	r->fd = fd;
	r->fd_off = off;
	r->fd_len = len;
	return 0;
}

int
req_reply_stream(struct req *r, int status, const char *type, req_stream_fn read,
    void (*done)(void *cls), void *cls)
{
	reply_release(r);
	r->status = status;
	r->raw_type = type;
	r->stream = read;
	r->stream_done = done;
	r->stream_cls = cls;
	return 0;
}

int
req_reply_raw(struct req *r, int status, const char *type, unsigned char *data, size_t len)
{
	free(r->raw);
	r->status = status;
	r->raw = data;
	r->raw_len = len;
	r->raw_type = type;
	return 0;
}

void
req_header(struct req *r, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (r->nhdr >= REQ_MAX_HEADERS)
		return;
	va_start(ap, fmt);
	vsnprintf(r->hdr_val[r->nhdr], sizeof r->hdr_val[0], fmt, ap);
	va_end(ap);
	r->hdr_name[r->nhdr++] = name;
}

int
req_conn_fd(struct req *r)
{
	const union MHD_ConnectionInfo *ci;

	if (r->conn == NULL)
		return -1;
	ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	return ci != NULL ? (int)ci->connect_fd : -1;
}

const char *
req_in_header(struct req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *
req_query(struct req *r, const char *key)
{
	json_object *v;

	if (r->query != NULL)
		return json_object_object_get_ex(r->query, key, &v) ? json_object_get_string(v) : NULL;
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

int
req_dispatch(struct req *r, const char *method, const char *path,
    json_object *query, json_object *body, struct derr *e)
{
	bool own_query = query == NULL;
	struct hreq hr;
	struct req sub;
	size_t blen;
	int rc = -1, k;

	memset(&hr, 0, sizeof hr);
	route_find(&hr, method, path);
	if (hr.route == NULL) {
		*e = hr.err;
		goto out;
	}
	blen = json_object_object_length(body) > 0 ?
	    strlen(json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN)) : 0;
	if (blen > hr.route->max_body) {
		derr_set(e, DERR_TOO_LARGE, NULL, hr.route->max_body == 0 ?
		    "%s %s takes no body" : "body too large for %s %s", method, hr.route->pattern);
		goto out;
	}
	memset(&sub, 0, sizeof sub);
	sub.fd = -1;
	sub.app = r->app;
	sub.conn = r->conn;
	sub.method = method;
	sub.path = path;
	memcpy(sub.params, hr.params, sizeof sub.params);
	sub.nparams = hr.nparams;
	sub.body = body;
	sub.query = query != NULL ? query : json_object_new_object();
	sub.status = 200;
	rc = hr.route->fn(&sub, e);
	if (own_query)
		json_object_put(sub.query);
	if (rc != 0 || (sub.reply == NULL && sub.raw == NULL && sub.fd < 0 && sub.stream == NULL)) {
		if (rc == 0 || e->code == DERR_OK)
			derr_set(e, DERR_INTERNAL, NULL, "internal error");
		reply_release(&sub);
		rc = -1;
		goto out;
	}
	reply_release(r);
	r->status = sub.status;
	r->reply = sub.reply;
	r->raw = sub.raw;
	r->raw_len = sub.raw_len;
	r->raw_type = sub.raw_type;
	r->fd = sub.fd;
	r->fd_off = sub.fd_off;
	r->fd_len = sub.fd_len;
	r->stream = sub.stream;
	r->stream_done = sub.stream_done;
	r->stream_cls = sub.stream_cls;
	r->nhdr = sub.nhdr;
	memcpy(r->hdr_name, sub.hdr_name, sizeof r->hdr_name);
	memcpy(r->hdr_val, sub.hdr_val, sizeof r->hdr_val);
out:
	for (k = 0; k < hr.nparams; k++)
		free(hr.param_copies[k]);
	return rc;
}

int
req_task_id(struct req *r, int i, const char **out, struct derr *e)
{
	const char *id = i < r->nparams ? r->params[i] : NULL;

	if (id == NULL || !id_valid(id))
		return derr_set(e, DERR_NOT_FOUND, i == 0 ? "task_id" : "action_id",
		    "no %s with id '%.64s'", i == 0 ? "task" : "action", id ? id : "");
	*out = id;
	return 0;
}

int
req_query_int(struct req *r, const char *key, int64_t min, int64_t max,
    int64_t def, int64_t *out, struct derr *e)
{
	const char *v = req_query(r, key);

	*out = def;
	if (v == NULL || v[0] == '\0')
		return 0;
	return jx_parse_int(v, key, min, max, out, e);
}
