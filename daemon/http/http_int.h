/*
 * http_int.h - what the files of the HTTP server share (private to
 * daemon/http/): the server (struct http), a request's state (struct hreq),
 * a streamed reply (struct stream), and the calls between the files:
 *
 *   http.c         libmicrohttpd glue: start, stop, the access handler and
 *                  its callbacks (completion, URI, log)
 *   http_check.c   what a request must pass before a handler runs: framing,
 *                  URL, Host/Origin, token, route, body cap, content type
 *   http_stream.c  streamed replies (SSE, MJPEG): suspend, wake, the ticker
 *   http_side.c    where a handler runs (worker, side worker, write lane) and
 *                  replies waiting for their batch's commit
 *   http_req.c     the request API of api.h (req_*) and sending a reply
 *   http_conns.c   connection slots: the header deadline, the reserve of
 *                  free slots, the stream cap
 *
 * A request (struct hreq) lives in MHD's con_cls from the URI callback to
 * the completion callback. States: NEW (headers read, checks done) -> BODY
 * (accumulating) -> [QUEUED -> RAN: a side worker ran the handler, the
 * connection suspended meanwhile] -> [COMMIT: the reply waits, suspended,
 * for its writes' batch to commit] -> REPLIED (a response was queued). An
 * early error is remembered and sent when the body has been consumed.
 *
 * Locks: mu (side workers, the write lane, the ticker's sleep), s_mu
 * (waiting streams), d_mu (replies waiting for a commit), c_mu (open
 * connections, the stream count). mu may be held when s_mu is taken
 * (http_streams_stop), never the other way round; d_mu and c_mu are taken
 * alone.
 */
#ifndef DETM_HTTP_INT_H
#define DETM_HTTP_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "api.h"
#include "core/buf.h"
#include "http.h"

enum phase { PH_NEW, PH_QUEUED, PH_RAN, PH_COMMIT };

struct hreq;
struct conn_slot;

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
	/* open connections (http_conns.c): oldest first */
	pthread_mutex_t c_mu;
	struct conn_slot *c_head, *c_tail;
	long nconns, nstreams;
	long conn_soft;                 /* past this many, the oldest idle one closes */
	long stream_cap;
	int64_t header_us;              /* the header deadline */
	/* every request object from its allocation to on_completed: what
	 * libmicrohttpd never completes is freed (and named) at http_stop */
	pthread_mutex_t l_mu;
	struct hreq *live;
};

/* The server (one per process, set by http_start, cleared by http_stop):
 * req_streams_wake needs it without a handle. */
extern struct http *http_server;

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
	bool stream_slot;       /* holds one of the stream cap's slots */
	bool to_peer;           /* 404 here, a peer may have the id: run again on a
	                         * side worker, which forwards (api_fleet.c) */
	struct hreq *live_prev, *live_next;     /* on http.live (l_mu) */
};

/* http_check.c */
/* The checks that need only the headers, then the route. Fills hr->err on
 * failure (hr->allow for a 405). */
void http_check_headers(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url, const char *version);
/* After an error found in the headers: true to answer at once, false to
 * read and drop the body first. */
bool http_answer_before_body(struct MHD_Connection *conn);
/* The route for a path as sent (undecoded); fills hr->route, its decoded
 * parameters, or hr->err (400/404/405). */
void http_route_find(struct hreq *hr, const char *method, const char *url);

/* http_stream.c */
/* The MHD response of r's stream (r gives its stream up to it), or NULL
 * (r still owns it). */
struct MHD_Response *http_stream_response(struct MHD_Connection *conn, struct req *r);
/* The one-second ticker of waiting streams: start (a failure is logged),
 * and stop with every stream's waiting (first step of http_stop). */
void http_ticker_start(struct http *h);
void http_streams_stop(struct http *h);

/* http_conns.c */
/* Sets the limits from the configuration (before MHD starts). */
void http_conns_init(struct http *h);
/* MHD's connection callback (MHD_OPTION_NOTIFY_CONNECTION). */
void http_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
    enum MHD_ConnectionNotificationCode code);
/* conn's request has its headers (busy) or has ended (idle: the next
 * request's header deadline starts now). */
void http_conn_busy(struct http *h, struct MHD_Connection *conn, bool busy);
/* Closes connections whose headers are late (the ticker, every second). */
void http_conns_sweep(struct http *h);
/* A ROUTE_STREAM request takes a stream slot (hr->stream_slot), or gets
 * its 503 in hr->err; http_stream_release gives the slot back. */
void http_stream_admit(struct http *h, struct hreq *hr);
void http_stream_release(struct http *h, struct hreq *hr);

/* http_side.c */
/* A handler that never blocks runs on the HTTP worker. */
bool http_runs_inline(const struct hreq *hr, struct MHD_Connection *conn);
/* hr's reply (http_handler_reply), unless hr->to_peer: then hr is reset
 * and queued for a side worker (asking a peer blocks: never on the HTTP
 * worker or the write lane). */
enum MHD_Result http_reply_or_peer(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url);
/* True on a side worker (not the HTTP workers, not the write lane). */
bool http_on_side_worker(void);
/* A ROUTE_TRY handler in nowait mode on the worker: false if it refused
 * (hr is reset for a side worker). */
bool http_try_inline(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url);
/* Hands hr to a side worker (lane: the write lane) and suspends conn. */
void http_side_queue(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url, bool lane);
/* True if hr's reply must wait for its ticket's commit (conn is then
 * suspended); else hr holds the batch's outcome. */
bool http_commit_wait(struct http *h, struct hreq *hr, struct MHD_Connection *conn);
/* Makes a failed batch's outcome (state < 0) hr's reply. */
void http_commit_result(struct http *h, struct hreq *hr, int state);
/* The store's commit hook while the server runs (arg: the server). */
void http_on_commit(void *arg, uint64_t batch, bool ok);
/* Waits for the side workers to finish and leave, then for every reply
 * waiting for a commit to be resumed (second step of http_stop). */
void http_side_stop(struct http *h);

/* http_req.c */
/* Does hr's handler run with a deferred acknowledgement (store.h)? */
bool http_defers(const struct hreq *hr);
/* Runs hr's handler into hr->r, hr->rc, hr->e (parses the body). */
void http_handler_call(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url);
/* Sends what http_handler_call left (on the connection's HTTP worker). */
enum MHD_Result http_handler_reply(struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url);
/* Queues e's JSON error reply (allow: the Allow header of a 405, or NULL). */
enum MHD_Result http_send_error(struct MHD_Connection *conn, const struct derr *e,
    const char *allow);
/* Frees what a reply owns that was not handed to MHD. */
void http_reply_release(struct req *r);

#endif
