/*
 * http_conns.c - connection slots, so that a slow crowd cannot lock
 * everyone out: the header deadline, the reserve of free slots, and the
 * cap on long-lived streams.
 *
 * libmicrohttpd's connection timeout restarts at every byte, so a client
 * that trickles a header line every few seconds keeps its slot forever,
 * and MHD_OPTION_CONNECTION_LIMIT then refuses everyone else. MHD 0.9
 * does not call the access handler before the headers are complete, so
 * the slots are tracked here: MHD's connection callback
 * (MHD_OPTION_NOTIFY_CONNECTION) puts every connection, with its socket
 * (MHD_CONNECTION_INFO_CONNECTION_FD) and its start, on a list, oldest
 * first. A connection is busy from the access handler's first call (the
 * headers are in) to the completion callback; then it is idle again and
 * its clock restarts at the list's tail (keep-alive: the next request has
 * its deadline too). Two rules close an idle connection:
 *   - the header deadline (--header-timeout, 10 s): the ticker's sweep
 *     (every second) closes idle connections older than it;
 *   - the reserve (--connection-reserve, max-connections/8): when a new
 *     connection makes more than max-connections minus the reserve, the
 *     oldest idle one is closed at once, so a new request always finds a
 *     free slot.
 * "Closed" is shutdown(fd, SHUT_RDWR): the MHD worker sees the end of the
 * stream and closes the connection itself (nothing of MHD's is touched
 * from here). A busy connection (a handler, a body, a reply, a stream) is
 * never closed here.
 * Long-lived streams (ROUTE_STREAM: the event stream, the MJPEG views) take
 * a slot of the stream cap (--max-streams, max-connections/4) from their
 * checks to their completion; past it they get a 503 JSON error that names
 * the cap, so streams cannot take the slots short requests need.
 *
 * Invariants: a slot is on the list from NOTIFY_STARTED to NOTIFY_CLOSED,
 * which MHD calls before it closes the socket, so a socket is only shut
 * down under c_mu while it is still the connection's. c_mu is taken alone.
 *
 * Not here: the connection timeout of stalled connections with a request
 * (MHD's), per-address limits (all clients are usually local), what a
 * stream sends (http_stream.c).
 */
#include "http_int.h"

#include <stdlib.h>
#include <sys/socket.h>

#include "core/log.h"

struct conn_slot {
	int fd;
	int64_t since;          /* connect, or the end of the last request (mono_us) */
	bool busy;              /* a request's headers are in, it is not completed */
	bool shut;              /* shut down here: MHD is closing it */
	struct conn_slot *prev, *next;
};

void
http_conns_init(struct http *h)
{
	const struct config *cfg = h->app->cfg;
	long reserve = cfg->conn_reserve > 0 ? cfg->conn_reserve : cfg->max_conns / 8;
	long cap = cfg->max_streams > 0 ? cfg->max_streams : cfg->max_conns / 4;

	if (reserve < 1)
		reserve = 1;
	if (reserve > cfg->max_conns / 2)
		reserve = cfg->max_conns / 2;
	h->conn_soft = cfg->max_conns - reserve;
	if (cap > h->conn_soft)
		cap = h->conn_soft;
	h->stream_cap = cap < 1 ? 1 : cap;
	h->header_us = (int64_t)cfg->header_timeout_s * 1000000;
	pthread_mutex_init(&h->c_mu, NULL);
}

static void
slot_unlink(struct http *h, struct conn_slot *c)
{
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		h->c_head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		h->c_tail = c->prev;
	c->prev = c->next = NULL;
}

static void
slot_append(struct http *h, struct conn_slot *c)
{
	c->prev = h->c_tail;
	c->next = NULL;
	if (h->c_tail != NULL)
		h->c_tail->next = c;
	else
		h->c_head = c;
	h->c_tail = c;
}

static void
slot_shut(struct conn_slot *c)
{
	c->shut = true;
	if (c->fd >= 0)
		shutdown(c->fd, SHUT_RDWR);
}

/* Past the soft limit: closes the oldest idle connection but self. */
static void
evict_oldest(struct http *h, const struct conn_slot *self)
{
	struct conn_slot *c;

	for (c = h->c_head; c != NULL; c = c->next)
		if (c != self && !c->busy && !c->shut) {
			log_debug("HTTP: %ld connections: the oldest without a request closes",
			    h->nconns);
			slot_shut(c);
			return;
		}
}

void
http_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
    enum MHD_ConnectionNotificationCode code)
{
	struct http *h = cls;
	struct conn_slot *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = xcalloc(1, sizeof *c);
		c->fd = ci != NULL ? ci->connect_fd : -1;
		c->since = mono_us();
		*socket_context = c;
		pthread_mutex_lock(&h->c_mu);
		slot_append(h, c);
		if (++h->nconns > h->conn_soft)
			evict_oldest(h, c);
		pthread_mutex_unlock(&h->c_mu);
		return;
	}
	if (c == NULL)
		return;
	pthread_mutex_lock(&h->c_mu);
	slot_unlink(h, c);
	h->nconns--;
	pthread_mutex_unlock(&h->c_mu);
	free(c);
	*socket_context = NULL;
}

void
http_conn_busy(struct http *h, struct MHD_Connection *conn, bool busy)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn_slot *c = ci != NULL ? ci->socket_context : NULL;

	if (c == NULL)
		return;
	pthread_mutex_lock(&h->c_mu);
	if (c->busy && !busy) {         /* idle again: the clock restarts */
		c->since = mono_us();
		slot_unlink(h, c);
		slot_append(h, c);
	}
	c->busy = busy;
	pthread_mutex_unlock(&h->c_mu);
}

void
http_conns_sweep(struct http *h)
{
	int64_t now = mono_us();
	struct conn_slot *c;
	int n = 0;

	pthread_mutex_lock(&h->c_mu);
	/* Idle slots are in the order of their clocks: stop at the first in time. */
	for (c = h->c_head; c != NULL; c = c->next) {
		if (c->busy || c->shut)
			continue;
		if (now - c->since < h->header_us)
			break;
		slot_shut(c);
		n++;
	}
	pthread_mutex_unlock(&h->c_mu);
	if (n > 0)
		log_debug("HTTP: %d connections without a request in %lld s closed", n,
		    (long long)(h->header_us / 1000000));
}

void
http_stream_admit(struct http *h, struct hreq *hr)
{
	bool ok;

	pthread_mutex_lock(&h->c_mu);
	ok = h->nstreams < h->stream_cap;
	if (ok)
		h->nstreams++;
	pthread_mutex_unlock(&h->c_mu);
	if (ok) {
		hr->stream_slot = true;
		return;
	}
	derr_set(&hr->err, DERR_BUSY, NULL,
	    "too many streams: %ld event streams and live views are open, the cap "
	    "(ACU_MAX_STREAMS / --max-streams); close one, or retry later", h->stream_cap);
}

void
http_stream_release(struct http *h, struct hreq *hr)
{
	if (!hr->stream_slot)
		return;
	hr->stream_slot = false;
	pthread_mutex_lock(&h->c_mu);
	h->nstreams--;
	pthread_mutex_unlock(&h->c_mu);
}
