/*
 * http_req.c - the request API of api.h (req_reply*, req_header, req_query,
 * req_dispatch, ...) and the two ends of a handler's run: calling it with
 * a struct req built from the request (http_handler_call) and sending the
 * reply it left (http_handler_reply: JSON, a buffer, a file, a stream, or
 * the error).
 *
 * Invariants: a struct req owns its reply (reply, raw, fd, stream) until
 * it is handed to MHD or released (http_reply_release), so a reply is
 * freed exactly once whatever path the request takes; every error leaves
 * through derr_to_json (one shape); every JSON reply is valid UTF-8 (the
 * last guard is send_json's).
 *
 * Not here: the checks before a handler (http_check.c), which thread runs
 * it (http_side.c), streams' waiting (http_stream.c).
 */
#include "http_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/cancel.h"
#include "core/jx.h"
#include "core/log.h"
#include "store/store.h"

/* Frees what a reply owns that was not handed to MHD. */
void
http_reply_release(struct req *r)
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

/* A non-JSON reply: a buffer, a file or a stream. */
static enum MHD_Result
send_raw(struct MHD_Connection *conn, struct req *r)
{
	struct MHD_Response *resp = NULL;
	enum MHD_Result ret;
	int i;

	if (r->stream != NULL) {
		resp = http_stream_response(conn, r);
		if (resp == NULL)
			return MHD_NO;  /* r still owns the stream: the caller releases it */
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
send_json(struct MHD_Connection *conn, int status, json_object *obj, const char *allow, int retry_s)
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
	if (retry_s > 0) {
		char v[16];

		snprintf(v, sizeof v, "%d", retry_s);
		MHD_add_response_header(resp, "Retry-After", v);
	}
	ret = MHD_queue_response(conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result
http_send_error(struct MHD_Connection *conn, const struct derr *e, const char *allow)
{
	json_object *obj = derr_to_json(e);
	enum MHD_Result ret = send_json(conn, derr_status(e->code), obj, allow,
	    derr_retry_after(e->code));

	json_object_put(obj);
	return ret;
}

/* Handlers that only write through store_tx and then build their reply
 * from what they wrote (no read back): on an HTTP worker they run with a
 * deferred acknowledgement, so the worker never waits for a COMMIT; the
 * connection is suspended until the batch commits, then the reply goes. */
static const route_fn deferred_fns[] = {
	api_action_create, api_log_create, api_message_create,
};

bool
http_defers(const struct hreq *hr)
{
	size_t i;

	if (hr->phase != PH_NEW && !hr->lane)
		return false;   /* a side worker can wait (the write lane must not) */
	for (i = 0; i < ARRAY_LEN(deferred_fns); i++)
		if (hr->route->fn == deferred_fns[i])
			return true;
	return false;
}

/* A ROUTE_RAW route's body sent as anything but application/json (or
 * with no Content-Type): bytes for the handler, not JSON to parse. */
static bool
raw_body(const struct hreq *hr, struct MHD_Connection *conn)
{
	const char *ct;

	if (!(hr->route->flags & ROUTE_RAW))
		return false;
	ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	return ct == NULL || strncasecmp(ct, "application/json", 16) != 0 ||
	    (ct[16] != '\0' && ct[16] != ';' && ct[16] != ' ');
}

/* Runs hr's handler into hr->r / hr->rc / hr->e (on an HTTP worker or a
 * side worker): parses the body, calls the route. */
void
http_handler_call(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
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
	if (raw_body(hr, conn)) {
		r->in_raw = hr->body.data != NULL ? hr->body.data : "";
		r->in_raw_len = hr->body.len;
		r->body = json_object_new_object();
	} else if (hr->body.len > 0) {
		r->body = jx_parse(hr->body.data, hr->body.len, &hr->e);
		if (hr->route->flags & ROUTE_RPC)
			derr_clear(&hr->e);     /* JSON-RPC answers it: NULL body = parse error, or a batch */
		else if (r->body == NULL)
			return;
		if (r->body != NULL && !(hr->route->flags & (ROUTE_RPC | ROUTE_FOREIGN)) &&
		    !json_object_is_type(r->body, json_type_object)) {
			derr_set(&hr->e, DERR_INVALID, NULL, "the body must be a JSON object");
			return;
		}
	} else {
		r->body = json_object_new_object();
	}
	cancel_bind(NULL, req_conn_fd(r));      /* a hang-up cancels long work (cancel.h) */
	if (!http_defers(hr)) {
		hr->rc = hr->route->fn(r, &hr->e);
	} else {
		store_defer_begin();
		hr->rc = hr->route->fn(r, &hr->e);
		hr->ticket = store_defer_end();
	}
	/* an id this detmd does not have may be a peer's (api_fleet.c); asking
	 * blocks, so only a side worker asks (http_reply_or_peer) */
	if (hr->rc != 0 && hr->e.code == DERR_NOT_FOUND && api_fleet_wants(r)) {
		if (!http_on_side_worker())
			hr->to_peer = true;
		else if (api_fleet_forward(r, hr->body.data, hr->body.len, &hr->e) == 0)
			hr->rc = 0;
	}
	cancel_bind(NULL, -1);
}

/* Sends what http_handler_call left (on the connection's HTTP worker). */
enum MHD_Result
http_handler_reply(struct hreq *hr, struct MHD_Connection *conn, const char *method, const char *url)
{
	struct req *r = &hr->r;
	struct derr *e = &hr->e;
	enum MHD_Result ret;

	if (hr->rc == 0 && (r->raw != NULL || r->fd >= 0 || r->stream != NULL)) {
		ret = send_raw(conn, r);
		log_debug("%s %s -> %d raw (%lld us)", method, url, r->status, (long long)(mono_us() - hr->t0));
		http_reply_release(r);
		json_object_put(r->body);
		r->body = NULL;
		return ret;
	}
	if (hr->rc == 0 && r->reply != NULL) {
		ret = send_json(conn, r->status, r->reply, NULL, 0);
		log_debug("%s %s -> %d (%lld us)", method, url, r->status, (long long)(mono_us() - hr->t0));
		json_object_put(r->reply);
		r->reply = NULL;
		json_object_put(r->body);
		r->body = NULL;
		return ret;
	}
	if (e->code == DERR_OK)
		derr_set(e, DERR_INTERNAL, NULL, "internal error");
	http_reply_release(r);
	json_object_put(r->body);
	r->body = NULL;
	if (derr_status(e->code) >= 500)
		log_warn("%s %s -> %d: %s", method, url, derr_status(e->code), e->message);
	else
		log_debug("%s %s -> %d: %s", method, url, derr_status(e->code), e->message);
	return http_send_error(conn, e, NULL);
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
	http_reply_release(r);
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
	http_reply_release(r);
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
	http_route_find(&hr, method, path);
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
		http_reply_release(&sub);
		rc = -1;
		goto out;
	}
	http_reply_release(r);
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
	r->stream_key = sub.stream_key;
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
