/*
 * http.c - the libmicrohttpd glue: http_start/http_stop, the access
 * handler (on_access) and MHD's callbacks (completion, URI, log). See
 * http.h for the order of checks and the threading model, http_int.h for
 * a request's states and the files that share the work.
 *
 * Owns: the MHD daemon (its connection callback is http_conns.c's), the server singleton (http_server) and the store's
 * commit hook while the server runs (http_side.c's; events_commit_hook
 * before and after), and the per-connection struct hreq from on_uri (or
 * the first call of on_access) to on_completed, which frees it.
 * on_access drives a request through its states: checks at the first call
 * (http_check.c), the body, then the handler inline, tried in nowait mode,
 * or queued for a side worker (http_side.c); a resumed connection comes
 * back here to send what its handler left (http_req.c).
 * Invariant: a request gets exactly one response queued; on_access never
 * blocks (nothing here waits for a lock held across I/O).
 *
 * Not here: the checks themselves (http_check.c), streams (http_stream.c),
 * side workers and commit waits (http_side.c), replies and the req_* API
 * (http_req.c).
 */
#include "http_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/pipejob.h"
#include "lim.h"

#define PIPEJOB_STOP_MS 5000    /* http_stop waits this long for reply producers */
#include "ops/metrics.h"
#include "store/store.h"
#include "task/events.h"

struct http *http_server;

/* A new request object, on the live list. */
static struct hreq *
hreq_new(struct http *h)
{
	struct hreq *hr = xcalloc(1, sizeof *hr);

	hr->t0 = mono_us();
	hr->r.fd = -1;
	pthread_mutex_lock(&h->l_mu);
	hr->live_next = h->live;
	if (h->live != NULL)
		h->live->live_prev = hr;
	h->live = hr;
	pthread_mutex_unlock(&h->l_mu);
	return hr;
}

/* Off the live list, and freed with everything it holds. */
static void
hreq_free(struct http *h, struct hreq *hr)
{
	int i;

	pthread_mutex_lock(&h->l_mu);
	if (hr->live_prev != NULL)
		hr->live_prev->live_next = hr->live_next;
	else
		h->live = hr->live_next;
	if (hr->live_next != NULL)
		hr->live_next->live_prev = hr->live_prev;
	pthread_mutex_unlock(&h->l_mu);
	buf_free(&hr->body);
	for (i = 0; i < ROUTE_MAX_PARAMS; i++)
		free(hr->param_copies[i]);
	http_reply_release(&hr->r);
	json_object_put(hr->r.body);
	free(hr->method);
	free(hr->url);
	free(hr->raw_path);
	free(hr);
}

static enum MHD_Result
on_access(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **con_cls)
{
	struct http *h = cls;
	struct hreq *hr = *con_cls;

	if (hr == NULL) {               /* no URI callback ran: cannot route */
		hr = hreq_new(h);
		*con_cls = hr;
	}
	if (!hr->started) {
		hr->started = true;
		http_conn_busy(h, conn, true);
		http_check_headers(h, hr, conn, method, url, version);
		if (hr->err.code == DERR_OK && hr->route != NULL &&
		    (hr->route->flags & ROUTE_STREAM))
			http_stream_admit(h, hr);
		buf_init(&hr->body, hr->route ? hr->route->max_body : 0);
		if (hr->err.code != DERR_OK) {
			log_debug("%s %s -> %d: %s", method, url, derr_status(hr->err.code),
			    hr->err.message);
			if (!http_answer_before_body(conn))
				return MHD_YES;         /* drain, then answer */
			/* Answer now; MHD discards any unread body and closes. */
			return http_send_error(conn, &hr->err, hr->allow);
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
			return http_send_error(conn, &hr->err, hr->allow);   /* enough: close */
		return MHD_YES;
	}
	if (hr->phase == PH_RAN)
		return http_reply_or_peer(h, hr, conn, method, url);
	if (hr->phase == PH_COMMIT) {
		http_commit_result(h, hr, store_ticket_state(h->app->store, hr->ticket));
		return http_reply_or_peer(h, hr, conn, method, url);
	}
	if (hr->phase == PH_QUEUED)
		return MHD_YES;         /* not ours: resumed too early (cannot happen) */
	if (hr->err.code != DERR_OK)
		return http_send_error(conn, &hr->err, hr->allow);
	if (hr->route->flags & ROUTE_TRY) {
		if (!http_try_inline(h, hr, conn, method, url)) {
			http_side_queue(h, hr, conn, method, url, http_defers(hr));
			return MHD_YES;
		}
	} else if (http_runs_inline(hr, conn)) {
		http_handler_call(h, hr, conn, method, url);
	} else {
		http_side_queue(h, hr, conn, method, url, false);
		return MHD_YES;
	}
	hr->conn = conn;
	if (hr->ticket != 0 && http_commit_wait(h, hr, conn))
		return MHD_YES;
	return http_reply_or_peer(h, hr, conn, method, url);
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct http *h = cls;
	struct hreq *hr = *con_cls;

	http_conn_busy(h, conn, false);
	if (hr == NULL)
		return;
	http_stream_release(h, hr);
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		log_debug("request ended early (code %d)", (int)toe);
	metrics_observe(hr->route != NULL ? (int)(hr->route - api_routes) : -1, conn, mono_us() - hr->t0);
	hreq_free(h, hr);
	*con_cls = NULL;
}

/* MHD's URI callback: runs once per request with the request target as
 * sent, before MHD decodes it. Its result becomes the request's state, so
 * routing can see "%2F" as data rather than as a separator. */
static void *
on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct hreq *hr = hreq_new(cls);
	size_t n = strcspn(uri, "?");

	(void)conn;
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
	pthread_mutex_destroy(&h->c_mu);
	pthread_mutex_destroy(&h->l_mu);
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
	pthread_mutex_init(&h->l_mu, NULL);
	h->q_tail = &h->q_head;
	h->w_tail = &h->w_head;
	http_conns_init(h);
	http_server = h;
	store_set_commit_hook(app->store, http_on_commit, h);
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
	    MHD_OPTION_NOTIFY_CONNECTION, http_conn_notify, h,
	    MHD_OPTION_END);
	if (h->mhd == NULL) {
		store_set_commit_hook(app->store, events_commit_hook, NULL);
		http_server = NULL;
		http_free(h);
		derr_set(e, DERR_INTERNAL, NULL, "libmicrohttpd failed to start");
		return NULL;
	}
	http_ticker_start(h);
	log_info("HTTP: %u epoll workers; %ld connections (%ld kept free), %ld streams, "
	    "headers within %ld s", threads, app->cfg->max_conns, app->cfg->max_conns - h->conn_soft,
	    h->stream_cap, app->cfg->header_timeout_s);
	return h;
}

void
http_stop(struct http *h)
{
	int n;

	if (h == NULL)
		return;
	http_streams_stop(h);
	http_side_stop(h);
	MHD_stop_daemon(h->mhd);
	/* Producers of replies (http_pipe.c) whose connections just closed stop
	 * at their next write: let them close their files and connections
	 * before the process ends. */
	if ((n = pipejob_wait_all(PIPEJOB_STOP_MS)) > 0)
		log_warn("%d reply producers still run after %d ms", n, PIPEJOB_STOP_MS);
	/* MHD has closed every connection: a request object still live was
	 * never completed (issue 33: one leaked at shutdown under LSan). */
	while (h->live != NULL) {
		log_warn("HTTP stop: a request (%s %.100s, phase %d) was never completed by "
		    "libmicrohttpd; freed", h->live->method ? h->live->method : "-",
		    h->live->raw_path ? h->live->raw_path : "-", (int)h->live->phase);
		hreq_free(h, h->live);
	}
	store_set_commit_hook(h->app->store, events_commit_hook, NULL);
	http_server = NULL;
	http_free(h);
}
