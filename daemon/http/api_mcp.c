/*
 * api_mcp.c - MCP over Streamable HTTP at /mcp: the same protocol as
 * detm-mcp on stdio (common/mcp.c: methods, eras, tools/list from the tool
 * table), with tool calls run in process through the tool router
 * (api_tool_run, req_dispatch) instead of over HTTP.
 *
 *   POST   /mcp   one JSON-RPC message. A request gets a JSON reply, or,
 *                 for tools/call when the client accepts text/event-stream,
 *                 an SSE stream: notifications/progress every 2 s while
 *                 the call runs (when the request has a progressToken),
 *                 then the response, then the end of the stream. A
 *                 notification or a response gets 202 and no body.
 *                 A body that is not JSON is 400 -32700 (http_req.c passes a
 *                 ROUTE_RPC route a NULL body); a batch (array) is served
 *                 in a 2025-03-26 session only (calls synchronous, one JSON
 *                 array back), else 400 -32600.
 *   DELETE /mcp   end a 2025-era session (Mcp-Session-Id).
 *   GET    /mcp   no route: 405 (we never send server-initiated messages,
 *                 which the spec allows).
 *
 * Eras: a 2025-era client starts with initialize (no session header) and
 * gets Mcp-Session-Id; every later request must carry it (400 without,
 * 404 for an unknown or ended one). A 2026-07-28 request carries the _meta
 * envelope and no session: it is served statelessly; MCP-Protocol-Version
 * and Mcp-Method headers, when sent, must match the body (400, -32020).
 *
 * Calls: each tools/call runs on its own thread (at most MCP_CALLS_MAX at
 * once), so a quick call never waits for a long one. It stops early when
 * notifications/cancelled names it (same session, same id; a stateless
 * client cancels by closing the stream) or the client hangs up on its stream:
 * a clip (video_record) is stopped on the recorder, a gui_agent run ends
 * at its next step (cancel.h), a model request in flight is abandoned
 * (httpc.c asks cancel.h); other calls run to their end and their result
 * is dropped.
 *
 * Host/Origin checks and the bearer token are http_check.c's, as for every route.
 * Limits: a 1 MiB request body (routes.c), MCP_SESSIONS sessions,
 * MCP_CALLS_MAX calls in flight. A new session takes a free slot, else the
 * slot of the session idle longest if that one has been idle (no request,
 * no call in flight) for MCP_SESSION_IDLE_S; else initialize is refused
 * with 503 and a JSON-RPC error naming the cap (Retry-After). So a client
 * that opens sessions in a loop can fill the table but never ends another
 * client's live session.
 * Not here: the protocol (common/mcp.c), the tools (common/tools.c).
 */
#include <pthread.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "core/cancel.h"
#include "core/jx.h"
#include "core/log.h"
#include "core/util.h"
#include "lim.h"
#include "mcp.h"
#include "mcp_fixtures.h"
#include "recorder/recorder.h"
#include "result.h"
#include "toolreq.h"
#include "utf8.h"

#define MCP_SESSIONS    64
#define MCP_CALLS_MAX   32
/* JSON-RPC's server-error range (-32000..-32099); -32001 is "Session not
 * found" below. */
#define MCP_E_SESSIONS_FULL (-32002)
#define MCP_PROGRESS_US 2000000
#define MCP_SID_LEN     (SECRET_LEN - 1)
/* A session with no request and no call in flight for this long may be
 * dropped to make room for a new one (only when all MCP_SESSIONS are
 * taken). 10 minutes: longer than any client's pause between requests in
 * practice; a client that comes back later gets 404 and initializes anew. */
#define MCP_SESSION_IDLE_S 600

struct msess {
	char id[MCP_SID_LEN + 1];   /* "" when the slot is free */
	int version;
	int64_t used_us;
};

struct mcall {
	pthread_mutex_t mu;
	int refs;                   /* the thread and the stream */
	atomic_int cancel;
	bool done;                  /* the call returned (its response, if any, is in buf) */
	char *buf;                  /* SSE bytes not yet read */
	size_t len, off;
	struct app *app;
	const struct tool *tool;
	json_object *args;          /* owned */
	struct mcp_session sess;
	struct mcp_out out;         /* out.id and out.progress_token point into `msg` */
	json_object *msg;           /* a private copy of the request */
	char skey[MCP_SID_LEN + 1]; /* the session, "" when stateless */
	char idkey[160];            /* the request id as JSON text */
	int64_t t0_us, last_us;
	char message[200];          /* what runs, for progress (under mu) */
	int fd;                     /* the client's socket (-1: none) */
	char task_id[33];           /* a task's call (Tasks extension): its id, else "" */
	struct mcall *next;         /* in `calls` */
};

static pthread_mutex_t mcp_mu = PTHREAD_MUTEX_INITIALIZER;
static struct msess sessions[MCP_SESSIONS];
static struct mcall *calls;     /* in flight, under mcp_mu */
static int ncalls;

static const char *
mcp_str(json_object *o, const char *key, const char *def)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return def;
	return json_object_get_string(v);
}

/* --- sessions (2025 era) --- */

/* mcp_mu held: a call of session sid is in flight. */
static bool
sess_busy(const char *sid)
{
	for (const struct mcall *c = calls; c != NULL; c = c->next)
		if (strcmp(c->skey, sid) == 0)
			return true;
	return false;
}

/* A new session in a free slot, or in the one idle longest if that one is
 * idle past MCP_SESSION_IDLE_S. 0, or -1 when every slot holds a live
 * session (nothing is dropped). */
static int
sess_new(int version, char out[MCP_SID_LEN + 1])
{
	int64_t now = mono_us();
	int i, slot = -1;

	secret_new(out);
	pthread_mutex_lock(&mcp_mu);
	for (i = 0; i < MCP_SESSIONS; i++) {
		if (sessions[i].id[0] == '\0') {
			slot = i;
			break;
		}
		if (now - sessions[i].used_us < (int64_t)MCP_SESSION_IDLE_S * 1000000 ||
		    sess_busy(sessions[i].id))
			continue;
		if (slot < 0 || sessions[i].used_us < sessions[slot].used_us)
			slot = i;
	}
	if (slot >= 0) {
		memcpy(sessions[slot].id, out, MCP_SID_LEN + 1);
		sessions[slot].version = version;
		sessions[slot].used_us = now;
	}
	pthread_mutex_unlock(&mcp_mu);
	return slot >= 0 ? 0 : -1;
}

/* The version of session id, or MCP_NONE when unknown. del: end it. */
static int
sess_find(const char *id, bool del)
{
	int v = MCP_NONE;

	if (id == NULL || strlen(id) != MCP_SID_LEN)
		return MCP_NONE;
	pthread_mutex_lock(&mcp_mu);
	for (int i = 0; i < MCP_SESSIONS; i++) {
		if (strcmp(sessions[i].id, id) != 0)
			continue;
		v = sessions[i].version;
		sessions[i].used_us = mono_us();
		if (del)
			sessions[i].id[0] = '\0';
		break;
	}
	pthread_mutex_unlock(&mcp_mu);
	return v;
}

/* --- replies --- */

/* A JSON reply sent raw, so that its headers (Mcp-Session-Id) go out
 * (http_req.c adds extra headers to raw replies only). Takes msg. */
static int
mcp_reply(struct req *r, int status, json_object *msg)
{
	size_t n;
	const char *text = jx_string(msg, &n);
	unsigned char *body;

	if (utf8_valid(text, n)) {
		body = xmalloc(n + 1);
		memcpy(body, text, n + 1);
	} else {
		body = (unsigned char *)utf8_dup(text, n, &n);
	}
	json_object_put(msg);
	return req_reply_raw(r, status, "application/json", body, n);
}

static int
mcp_accepted(struct req *r)
{
	return req_reply_raw(r, 202, "application/json", xmalloc(1), 0);
}

/* HTTP status of an error the transport found before dispatch. */
static int
mcp_status(json_object *reply)
{
	json_object *err, *code;
	int c;

	if (!json_object_object_get_ex(reply, "error", &err) ||
	    !json_object_object_get_ex(err, "code", &code))
		return 200;
	c = json_object_get_int(code);
	return c == MCP_E_HEADER_MISMATCH || c == MCP_E_UNSUPPORTED || c == MCP_E_MISSING_CAP ? 400 : 200;
}

/* --- running a call in process --- */

static void
sub_init(struct req *s, struct app *app, const char *method, const char *path)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	s->app = app;
	s->method = method;
	s->path = path;
	s->status = 200;
}

static void
sub_release(struct req *s)
{
	json_object_put(s->reply);
	s->reply = NULL;
	free(s->raw);
	s->raw = NULL;
	if (s->fd >= 0)
		close(s->fd);
	if (s->stream_done != NULL)
		s->stream_done(s->stream_cls);
	s->stream_done = NULL;
}

/* A route's outcome as a tool result; *json gets a 2xx JSON object reply
 * instead when json is not NULL. Releases s. */
static json_object *
mc_outcome(const struct tool *t, int rc, struct req *s, struct derr *e, json_object **json)
{
	json_object *res = NULL;

	if (rc == 0 && s->status >= 200 && s->status < 300 &&
	    json_object_is_type(s->reply, json_type_object)) {
		if (json != NULL)
			*json = s->reply;
		else
			res = result_shape(t, s->reply);
		s->reply = NULL;
	} else if (rc == 0) {
		res = result_error(NULL, "detmd answered %s with HTTP %d but the body is not a JSON "
		                   "object.", t->name, s->status);
	} else if (e->field[0] != '\0') {
		res = result_error(NULL, "%s (detmd: %s, field '%s').", e->message, derr_name(e->code), e->field);
	} else {
		res = result_error(NULL, "%s (detmd: %s).", e->message, derr_name(e->code));
	}
	sub_release(s);
	return res;
}

/* One in-process request; see mc_outcome. */
static json_object *
mc_dispatch(struct mcall *c, const char *method, const char *path, json_object *query,
            json_object *body, json_object **json)
{
	json_object *none = json_object_new_object(), *res;
	struct req s;
	struct derr e;
	int rc;

	derr_clear(&e);
	sub_init(&s, c->app, method, path);
	rc = req_dispatch(&s, method, path, query, body != NULL ? body : none, &e);
	res = mc_outcome(c->tool, rc, &s, &e, json);
	json_object_put(none);
	return res;
}

static void
mc_say(struct mcall *c, const char *fmt, ...) DETM_PRINTF(2, 3);

static void
mc_say(struct mcall *c, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&c->mu);
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof c->message, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&c->mu);
}

/* One follow step of a clip or a wait: GET base+id?block_s=1 (its reply
 * in *json, as mc_dispatch). */
static json_object *
mc_poll(struct mcall *c, const char *base, const char *id, json_object **json)
{
	char p[96];
	json_object *q = json_object_new_object(), *res;

	snprintf(p, sizeof p, "%s%s", base, id);
	json_object_object_add(q, "block_s", json_object_new_string("1"));
	res = mc_dispatch(c, "GET", p, q, NULL, json);
	json_object_put(q);
	return res;
}

/* video_record: start without waiting, follow the clip, stop it when the
 * call is cancelled (NULL then). */
static json_object *
mc_clip(struct mcall *c)
{
	json_object *query = json_object_new_object(), *body = json_object_new_object();
	json_object *res = NULL, *json = NULL, *v;
	char path[LIM_URL_BYTES + 1], id[16], p2[96];
	long long dur = 10;
	bool follow;

	if (toolreq_build(c->tool, c->args, true, path, sizeof path, query, body) != 0) {
		res = result_error(NULL, "the arguments of %s do not fit in a request.", c->tool->name);
		goto out;
	}
	if (json_object_object_get_ex(body, "duration", &v))
		dur = json_object_get_int64(v);
	/* a task follows its clip to the end, whatever its length */
	follow = tools_clip_follows(body) || c->task_id[0] != '\0';
	res = mc_dispatch(c, "POST", path, query, body, &json);
	while (json != NULL) {
		if (!follow || strcmp(mcp_str(json, "status", ""), "recording") != 0 ||
		    !json_object_object_get_ex(json, "clip_id", &v)) {
			res = result_clip(c->tool, json);
			goto out;
		}
		snprintf(id, sizeof id, "%s", json_object_get_string(v));
		json_object_put(json);
		json = NULL;
		mc_say(c, "video_record: recording clip %s, %.0f/%lld s", id,
		       (double)(mono_us() - c->t0_us) / 1e6, dur);
		if (rec_stopping() || mono_us() - c->t0_us > (dur + CLIP_MARGIN_S) * 1000000) {
			snprintf(p2, sizeof p2, "/api/record/%s/stop", id);
			json_object_put(mc_dispatch(c, "POST", p2, NULL, NULL, NULL));
			res = result_error(NULL, "the clip %s did not finish within its %lld s and %d s "
			    "more%s; it was asked to stop.", id, dur, CLIP_MARGIN_S,
			    rec_stopping() ? " (detmd is stopping)" : "");
			goto out;
		}
		if (atomic_load(&c->cancel)) {
			snprintf(p2, sizeof p2, "/api/record/%s/stop", id);
			json_object_put(mc_dispatch(c, "POST", p2, NULL, NULL, NULL));
			log_info("mcp: video_record cancelled: clip %s stopped", id);
			goto out;
		}
		res = mc_poll(c, "/api/record/", id, &json);
	}
out:
	json_object_put(query);
	json_object_put(body);
	return res;
}

/* smart_wait run as a task: start the wait, follow it (GET
 * /api/waits/{id}?block_s=) until it stops watching, and answer its last
 * record; cancelled: cancel the wait (DELETE) and answer NULL. */
static json_object *
mc_wait(struct mcall *c)
{
	json_object *query = json_object_new_object(), *body = json_object_new_object();
	json_object *res = NULL, *json = NULL, *v;
	char path[LIM_URL_BYTES + 1], id[16] = "", p2[96];

	if (toolreq_build(c->tool, c->args, true, path, sizeof path, query, body) != 0) {
		res = result_error(NULL, "the arguments of %s do not fit in a request.", c->tool->name);
		goto out;
	}
	res = mc_dispatch(c, "POST", path, query, body, &json);
	while (json != NULL) {
		if (strcmp(mcp_str(json, "status", ""), "watching") != 0 ||
		    !json_object_object_get_ex(json, "wait_id", &v)) {
			res = result_shape(c->tool, json);
			goto out;
		}
		snprintf(id, sizeof id, "%s", json_object_get_string(v));
		json_object_put(json);
		json = NULL;
		mc_say(c, "smart_wait: wait %s watching, %.0f s", id, (double)(mono_us() - c->t0_us) / 1e6);
		if (atomic_load(&c->cancel) || rec_stopping()) {
			snprintf(p2, sizeof p2, "/api/waits/%s", id);
			json_object_put(mc_dispatch(c, "DELETE", p2, NULL, NULL, NULL));
			log_info("mcp: smart_wait task cancelled: wait %s cancelled", id);
			goto out;
		}
		res = mc_poll(c, "/api/waits/", id, &json);
	}
out:
	json_object_put(query);
	json_object_put(body);
	return res;
}

static void mc_event(struct mcall *c, json_object *msg);

/* A fixture's progress (mcp_fixtures.c): one notifications/progress on the
 * call's stream now, when the request has a progressToken. */
static void
mc_progress(void *cls, double progress, double total, const char *message)
{
	struct mcall *c = cls;

	(void)total;
	pthread_mutex_lock(&c->mu);
	if (c->out.progress_token != NULL) {
		c->last_us = mono_us();
		mc_event(c, mcp_progress(c->out.progress_token, c->out.version, progress, message));
	}
	pthread_mutex_unlock(&c->mu);
	req_streams_wake(c);
}

/* Run the call: its result, or NULL when it was cancelled. */
static json_object *
mc_run(struct mcall *c)
{
	char path[LIM_URL_BYTES + 1];
	json_object *res;
	struct req s;
	struct derr e;
	int rc;

	if (mcp_fixtures_has(c->tool)) {
		res = mcp_fixtures_run(c->tool, c->args, mc_progress, c);
	} else if (c->tool->flags & TOOL_CLIP) {
		res = mc_clip(c);
	} else if ((c->tool->flags & TOOL_WAIT) && c->task_id[0] != '\0') {
		res = mc_wait(c);
	} else {
		derr_clear(&e);
		snprintf(path, sizeof path, "/api/tools/%s", c->tool->name);
		sub_init(&s, c->app, "POST", path);
		s.params[0] = c->tool->name;
		s.nparams = 1;
		s.body = c->args;
		s.query = json_object_new_object();
		rc = api_tool_run(&s, c->tool->name, false, &e);     /* strict, as /api/tools/{name} */
		json_object_put(s.query);
		res = mc_outcome(c->tool, rc, &s, &e, NULL);
	}
	if (atomic_load(&c->cancel)) {
		json_object_put(res);
		return NULL;
	}
	return res;
}

/* --- the call's life --- */

static void
mc_unref(struct mcall *c)
{
	int left;

	pthread_mutex_lock(&c->mu);
	left = --c->refs;
	pthread_mutex_unlock(&c->mu);
	if (left > 0)
		return;
	pthread_mutex_destroy(&c->mu);
	json_object_put(c->args);
	json_object_put(c->msg);
	free(c->buf);
	free(c);
}

/* Append one SSE event holding msg (taken); mu held. */
static void
mc_event(struct mcall *c, json_object *msg)
{
	size_t n;
	const char *text = jx_string(msg, &n);
	char *fixed = utf8_valid(text, n) ? NULL : utf8_dup(text, n, &n);
	char *grown;

	grown = realloc(c->buf, c->len + n + 32);
	if (grown == NULL)
		abort();
	c->buf = grown;
	c->len += (size_t)sprintf(c->buf + c->len, "event: message\ndata: ");
	memcpy(c->buf + c->len, fixed ? fixed : text, n);
	c->len += n;
	c->len += (size_t)sprintf(c->buf + c->len, "\n\n");
	free(fixed);
	json_object_put(msg);
}

static void
mc_register(struct mcall *c, bool on)
{
	struct mcall **p;

	pthread_mutex_lock(&mcp_mu);
	if (on) {
		c->next = calls;
		calls = c;
		ncalls++;
	} else {
		for (p = &calls; *p != NULL; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				ncalls--;
				break;
			}
	}
	pthread_mutex_unlock(&mcp_mu);
}

static void
mc_cancel_key(const char *skey, const char *key)
{
	pthread_mutex_lock(&mcp_mu);
	for (struct mcall *c = calls; c != NULL; c = c->next)
		if (strcmp(c->skey, skey) == 0 && strcmp(c->idkey, key) == 0)
			atomic_store(&c->cancel, 1);
	pthread_mutex_unlock(&mcp_mu);
}

static void
mc_cancel(const char *skey, json_object *id)
{
	mc_cancel_key(skey, json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN));
}

static void *
mc_thread(void *arg)
{
	struct mcall *c = arg;
	json_object *res;

	cancel_bind(&c->cancel, -1);
	res = mc_run(c);
	cancel_bind(NULL, -1);
	if (c->task_id[0] != '\0') {    /* no stream: the result goes to the task */
		mcp_task_done(&c->out, c->task_id, res);
		res = NULL;
	}
	pthread_mutex_lock(&c->mu);
	if (res != NULL)
		mc_event(c, mcp_call_reply(&c->sess, &c->out, res));
	c->done = true;
	pthread_mutex_unlock(&c->mu);
	req_streams_wake(c);
	mc_register(c, false);
	mc_unref(c);
	return NULL;
}

/* The SSE reader: progress while the call runs, then its response. It
 * never blocks its HTTP worker: with nothing to send it answers
 * REQ_STREAM_WAIT, and the connection sleeps until the call adds an event
 * (req_streams_wake(c)) or the server's one-second tick, when a progress
 * notification may be due and a client that hung up is noticed. */
static long
mc_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct mcall *c = cls;
	size_t n;

	(void)pos;
	pthread_mutex_lock(&c->mu);
	if (c->off >= c->len && !c->done) {
		int64_t now = mono_us();

		if (c->fd >= 0 && fd_peer_closed(c->fd)) {
			atomic_store(&c->cancel, 1);    /* the client hung up */
			pthread_mutex_unlock(&c->mu);
			return REQ_STREAM_END;
		}
		if (c->out.progress_token != NULL && now - c->last_us >= MCP_PROGRESS_US) {
			double el = (double)(now - c->t0_us) / 1e6;
			char line[300];

			c->last_us = now;
			if (c->message[0] != '\0')
				snprintf(line, sizeof line, "%s", c->message);
			else
				snprintf(line, sizeof line, "%s: running, %.0f s", c->tool->name, el);
			mc_event(c, mcp_progress(c->out.progress_token, c->out.version, el, line));
		}
	}
	if (c->off >= c->len) {
		bool done = c->done;

		pthread_mutex_unlock(&c->mu);
		return done ? REQ_STREAM_END : REQ_STREAM_WAIT;
	}
	n = c->len - c->off < max ? c->len - c->off : max;
	memcpy(out, c->buf + c->off, n);
	c->off += n;
	pthread_mutex_unlock(&c->mu);
	return (long)n;
}

static void
mc_done(void *cls)
{
	struct mcall *c = cls;

	atomic_store(&c->cancel, 1);    /* harmless after the end; stops an abandoned call */
	mc_unref(c);
}

/* A synchronous call's response (NULL: none): into *out when out is not
 * NULL (a batch collects them), else the reply. */
static int
mc_give(struct req *r, json_object **out, json_object *res)
{
	if (out != NULL) {
		*out = res;
		return 0;
	}
	return res != NULL ? mcp_reply(r, 200, res) : mcp_accepted(r);
}

/* Start tools/call `o` of message msg: on its own thread with an SSE reply
 * (sse), or here with a JSON reply. Takes o->args. mcp_mu orders the call
 * table; c->mu guards the SSE buffer, and every json-c object of the call
 * is touched by one thread at a time (the reply and progress events are
 * built under c->mu). */
static int
mc_start(struct req *r, struct mcp_session *s, struct mcp_out *o, json_object *msg,
         const char *skey, bool sse, json_object **out, struct derr *e)
{
	struct mcall *c = xcalloc(1, sizeof *c);
	json_object *res, *params;
	pthread_t th;
	char key[160];

	pthread_mutex_init(&c->mu, NULL);
	c->refs = 2;
	c->app = r->app;
	c->tool = o->tool;
	/* a private copy: the values are shared with the request body, which
	 * the HTTP thread frees, and json-c reference counts are not atomic */
	if (json_object_deep_copy(o->args, &c->args, NULL) != 0)
		abort();
	json_object_put(o->args);
	c->sess = (struct mcp_session){ atomic_load(&s->version), s->server_name, NULL, 0, s->memory, atomic_load(&s->openclaw) };
	c->out = *o;
	if (json_object_deep_copy(msg, &c->msg, NULL) != 0)
		abort();
	/* point id and token into the private copy (threads must not share) */
	json_object_object_get_ex(c->msg, "id", &c->out.id);
	params = json_object_object_get(c->msg, "params");
	c->out.progress_token = NULL;
	if (o->progress_token != NULL)
		c->out.progress_token = json_object_object_get(json_object_object_get(params, "_meta"),
		                                               "progressToken");
	snprintf(c->skey, sizeof c->skey, "%s", skey);
	snprintf(c->idkey, sizeof c->idkey, "%s", json_object_to_json_string_ext(c->out.id, JSON_C_TO_STRING_PLAIN));
	c->t0_us = c->last_us = mono_us();
	c->fd = req_conn_fd(r);
	pthread_mutex_lock(&mcp_mu);
	if (ncalls >= MCP_CALLS_MAX) {
		pthread_mutex_unlock(&mcp_mu);
		res = mcp_error(o->id, MCP_E_INTERNAL, NULL, "%d tool calls are running already; retry "
		                "later", MCP_CALLS_MAX);
		c->refs = 1;
		mc_unref(c);
		return mc_give(r, out, res);
	}
	pthread_mutex_unlock(&mcp_mu);
	if (o->task && (res = mcp_task_start(&c->sess, &c->out, c->task_id, key)) != NULL) {
		/* a task: answered now, run on its own thread, cancelled by
		 * tasks/cancel under its key (any client that knows the id) */
		snprintf(c->skey, sizeof c->skey, "task");
		json_object *k = json_object_new_string(key);
		snprintf(c->idkey, sizeof c->idkey, "%s", json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN));
		json_object_put(k);
		c->refs = 1;
		c->fd = -1;
		mc_register(c, true);
		if (pthread_create(&th, NULL, mc_thread, c) != 0) {
			mcp_task_done(&c->out, c->task_id, NULL);
			mc_register(c, false);
			mc_unref(c);
		} else {
			pthread_detach(th);
		}
		return mc_give(r, out, res);
	}
	mc_register(c, true);
	if (!sse) {
		c->refs = 1;
		cancel_bind(&c->cancel, c->fd);
		res = mc_run(c);
		cancel_bind(NULL, req_conn_fd(r));
		mc_register(c, false);
		if (res != NULL)            /* NULL: cancelled, no response */
			res = mcp_call_reply(&c->sess, &c->out, res);
		mc_unref(c);
		return mc_give(r, out, res);
	}
	if (pthread_create(&th, NULL, mc_thread, c) != 0) {
		mc_register(c, false);
		c->refs = 1;
		mc_unref(c);
		return derr_set(e, DERR_UNAVAILABLE, NULL, "cannot start a thread for the call");
	}
	pthread_detach(th);
	req_header(r, "X-Accel-Buffering", "no");
	req_stream_key(r, c);
	return req_reply_stream(r, 200, "text/event-stream", mc_read, mc_done, c);
}

/* --- the routes --- */

/* The body field that a 2026-07-28 request's Mcp-Name header mirrors
 * (SEP-2243's table), or NULL when the method has none. */
static const char *
mcp_name_field(const char *method)
{
	static const char *const tab[][2] = {
		{ "tools/call", "name" }, { "prompts/get", "name" }, { "resources/read", "uri" },
		{ "tasks/get", "taskId" }, { "tasks/update", "taskId" }, { "tasks/cancel", "taskId" },
	};

	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcmp(method, tab[i][0]) == 0)
			return tab[i][1];
	return NULL;
}

/* h without the optional whitespace around it (RFC 9110 5.5), into buf. */
static const char *
mcp_trim(const char *h, char *buf, size_t cap)
{
	size_t n;

	while (*h == ' ' || *h == '\t')
		h++;
	n = strlen(h);
	while (n > 0 && (h[n - 1] == ' ' || h[n - 1] == '\t'))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, h, n);
	buf[n] = '\0';
	return buf;
}

/* 2026-07-28 over HTTP (SEP-2243): a request names its version, method and
 * (for the methods of mcp_name_field) its target in MCP-Protocol-Version,
 * Mcp-Method and Mcp-Name, and they match the body; else 400 with -32020.
 * A version we do not serve is left to mcp_message (-32022); a
 * notification may come without the headers. */
static json_object *
mcp_headers_check(struct req *r, json_object *msg)
{
	const char *env = mcp_envelope_version(msg), *hv, *hm, *hn, *method, *field, *want;
	json_object *id = NULL;
	char buf[LIM_URL_BYTES + 1];
	bool request = json_object_object_get_ex(msg, "id", &id);

	method = mcp_str(msg, "method", "");
	hv = req_in_header(r, "MCP-Protocol-Version");
	hm = req_in_header(r, "Mcp-Method");
	hn = req_in_header(r, "Mcp-Name");
	if (hv != NULL && strcmp(mcp_trim(hv, buf, sizeof buf), env) != 0)
		return mcp_error(id, MCP_E_HEADER_MISMATCH, NULL, "the MCP-Protocol-Version header "
		                 "(%.40s) does not match _meta (%.40s)", hv, env);
	if (hm != NULL && strcmp(mcp_trim(hm, buf, sizeof buf), method) != 0)
		return mcp_error(id, MCP_E_HEADER_MISMATCH, NULL, "the Mcp-Method header (%.60s) does "
		                 "not match the body's method (%.60s)", hm, method);
	if (!request || mcp_version_find(env) != MCP_V_MODERN)
		return NULL;
	if (hv == NULL || hm == NULL)
		return mcp_error(id, MCP_E_HEADER_MISMATCH, NULL, "a 2026-07-28 request over HTTP "
		                 "carries the %s header", hv == NULL ? "MCP-Protocol-Version" : "Mcp-Method");
	if ((field = mcp_name_field(method)) == NULL)
		return NULL;
	want = mcp_str(json_object_object_get(msg, "params"), field, NULL);
	if (want == NULL)
		return NULL;        /* a bad body: mcp_message says what is wrong */
	if (hn == NULL)
		return mcp_error(id, MCP_E_HEADER_MISMATCH, NULL, "a %s request carries the Mcp-Name "
		                 "header (params.%s)", method, field);
	if (strcmp(mcp_trim(hn, buf, sizeof buf), want) != 0)
		return mcp_error(id, MCP_E_HEADER_MISMATCH, NULL, "the Mcp-Name header (%.60s) does not "
		                 "match params.%s (%.60s)", hn, field, want);
	return NULL;
}

/* A JSON-RPC batch (array): only protocol 2025-03-26 has them (in a
 * session); each message is handled in order, calls run here (no SSE),
 * and the responses come back as one array (202 when there are none). */
static int
mcp_batch(struct req *r, struct mcp_session *s, const char *sid, struct derr *e)
{
	json_object *replies, *one;
	struct mcp_out o;
	size_t i, n = json_object_array_length(r->body);
	int v = atomic_load(&s->version);

	if (v != MCP_V_BATCH)
		return mcp_reply(r, 400, mcp_error(NULL, MCP_E_REQUEST, NULL, "Invalid Request: JSON-RPC "
		                 "batches are only accepted in protocol version 2025-03-26 (this session: "
		                 "%s)", v < 0 ? "none" : mcp_version_name(v)));
	if (n == 0)
		return mcp_reply(r, 400, mcp_error(NULL, MCP_E_REQUEST, NULL, "Invalid Request: empty batch"));
	replies = json_object_new_array();
	for (i = 0; i < n; i++) {
		json_object *msg = json_object_array_get_idx(r->body, i);

		one = NULL;
		mcp_message(s, msg, true, &o);
		if (o.act == MCP_ACT_CANCEL)
			mc_cancel(sid, o.cancel_id);
		else if (o.act == MCP_ACT_REPLY)
			one = o.reply;
		else if (o.act == MCP_ACT_CALL && mc_start(r, s, &o, msg, sid, false, &one, e) != 0)
			break;
		if (one != NULL)
			json_object_array_add(replies, one);
	}
	if (i < n || json_object_array_length(replies) == 0) {
		json_object_put(replies);
		return i < n ? -1 : mcp_accepted(r);
	}
	return mcp_reply(r, 200, replies);
}

/* A conformance fixture that needs a client capability the request's
 * 2026 envelope does not declare: the -32021 error (MCP
 * MissingRequiredClientCapabilityError), else NULL. detm's own tools need
 * none. Takes o->args on error. */
static json_object *
mcp_missing_cap(json_object *msg, struct mcp_out *o)
{
	const char *cap = mcp_fixtures_needs(o->tool);
	json_object *caps = NULL, *data, *req;

	if (cap == NULL || o->version != MCP_V_MODERN)
		return NULL;
	caps = json_object_object_get(json_object_object_get(json_object_object_get(msg, "params"),
	                              "_meta"), MCP_META_CAPS);
	if (json_object_object_get_ex(caps, cap, NULL))
		return NULL;
	json_object_put(o->args);
	o->args = NULL;
	data = json_object_new_object();
	req = json_object_new_object();
	json_object_object_add(req, cap, json_object_new_object());
	json_object_object_add(data, "requiredCapabilities", req);
	return mcp_error(o->id, MCP_E_MISSING_CAP, data, "%s needs the client capability '%s', "
	                 "which this request's clientCapabilities do not declare", o->tool->name, cap);
}

int
api_mcp_post(struct req *r, struct derr *e)
{
	json_object *msg = r->body, *res;
	const char *sid = req_in_header(r, "Mcp-Session-Id"), *accept = req_in_header(r, "Accept");
	const char *method;
	struct mcp_session s = { MCP_NONE, "detmd", NULL, 0, MCP_MEMORY_AUTO, false };
	bool modern;
	char newsid[MCP_SID_LEN + 1];
	struct mcp_out o;

	if (r->app->cfg->mcp_conformance_tools)
		s.extra = mcp_fixtures(&s.nextra);
	if (msg == NULL)        /* http_req.c: not JSON (ROUTE_RPC) */
		return mcp_reply(r, 400, mcp_error(NULL, MCP_E_PARSE, NULL, "Parse error: the body is "
		                 "not valid JSON"));
	if (json_object_is_type(msg, json_type_array)) {
		if (sid != NULL)
			atomic_store(&s.version, sess_find(sid, false));
		if (sid != NULL && atomic_load(&s.version) == MCP_NONE)
			return mcp_reply(r, 404, mcp_error(NULL, -32001, NULL, "Session not found: it "
			                 "ended or never existed; initialize again"));
		return mcp_batch(r, &s, sid != NULL ? sid : "", e);
	}
	if (!json_object_is_type(msg, json_type_object))
		return mcp_reply(r, 400, mcp_error(NULL, MCP_E_REQUEST, NULL, "Invalid Request: a "
		                 "message must be a JSON object or, in 2025-03-26, a batch"));
	method = mcp_str(msg, "method", "");
	modern = mcp_envelope_version(msg) != NULL;
	if (modern && sid == NULL && (res = mcp_headers_check(r, msg)) != NULL)
		return mcp_reply(r, 400, res);
	if (sid != NULL) {
		atomic_store(&s.version, sess_find(sid, false));
		if (atomic_load(&s.version) == MCP_NONE)
			return mcp_reply(r, 404, mcp_error(json_object_object_get(msg, "id"), -32001, NULL,
			                 "Session not found: it ended or never existed; initialize again"));
	} else if (!modern && strcmp(method, "initialize") != 0 && strcmp(method, "server/discover") != 0) {
		return mcp_reply(r, 400, mcp_error(json_object_object_get(msg, "id"), MCP_E_REQUEST, NULL,
		                 "Bad Request: Mcp-Session-Id header is required (send initialize first, "
		                 "or use protocol 2026-07-28 with its _meta envelope)"));
	}
	mcp_message(&s, msg, false, &o);
	switch (o.act) {
	case MCP_ACT_NONE:
		return mcp_accepted(r);
	case MCP_ACT_CANCEL:
		/* Within a session only: stateless clients cancel by closing the
		 * call's stream, and their request ids are not unique across
		 * clients. */
		if (sid != NULL)
			mc_cancel(sid, o.cancel_id);
		return mcp_accepted(r);
	case MCP_ACT_TASK_CANCEL: {
		json_object *k = json_object_new_string(o.task_key);

		mc_cancel_key("task", json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN));
		json_object_put(k);
		return mcp_reply(r, 200, o.reply);
	}
	case MCP_ACT_REPLY:
		if (o.initialized && sess_new(o.version, newsid) != 0) {
			json_object_put(o.reply);
			req_header(r, "Retry-After", "%d", 60);
			return mcp_reply(r, 503, mcp_error(json_object_object_get(msg, "id"),
			                 MCP_E_SESSIONS_FULL, NULL, "Too many MCP sessions: all %d are in "
			                 "use (a session is dropped only after %d s without a request). "
			                 "Retry later, or end a session you no longer need with DELETE "
			                 "/mcp (its Mcp-Session-Id)", MCP_SESSIONS, MCP_SESSION_IDLE_S));
		}
		if (o.initialized)
			req_header(r, "Mcp-Session-Id", "%s", newsid);
		return mcp_reply(r, sid == NULL && o.http_status != 0 ? o.http_status : mcp_status(o.reply),
		                 o.reply);
	case MCP_ACT_CALL:
		break;
	}
	if ((res = mcp_missing_cap(msg, &o)) != NULL)
		return mcp_reply(r, 400, res);
	return mc_start(r, &s, &o, msg, sid != NULL ? sid : "",
	                accept != NULL && strstr(accept, "text/event-stream") != NULL, NULL, e);
}

int
api_mcp_delete(struct req *r, struct derr *e)
{
	const char *sid = req_in_header(r, "Mcp-Session-Id");

	if (sid == NULL)
		return derr_set(e, DERR_INVALID, "Mcp-Session-Id", "DELETE /mcp needs the Mcp-Session-Id "
		                "header of the session to end");
	if (sess_find(sid, true) == MCP_NONE)
		return derr_set(e, DERR_NOT_FOUND, "Mcp-Session-Id", "no MCP session %.40s", sid);
	return req_reply(r, 200, json_object_new_object());
}
