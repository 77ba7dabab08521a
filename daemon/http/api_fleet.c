/*
 * api_fleet.c - one detmd answering for the fleet (issue 39 item 3), when
 * --peers (ACU_PEERS) names the other detmds (URLs, or a DNS name with
 * --peers-resolve-all: peerlist.h):
 *
 *   GET /api/fleet/tasks   this detmd's task list and every peer's, merged
 *                          newest first; each task says its "pod" (host
 *                          name) and "detmd" (the URL it was read from,
 *                          "self" for this one); "pods" lists each detmd
 *                          asked, "unreachable" each that did not answer,
 *                          "collisions" each task id more than one holds.
 *                          The peers are asked at once (one thread each,
 *                          at most PEERLIST_MAX): a hung peer costs one
 *                          FLEET_TIMEOUT_MS, not one per peer.
 *                          ?local=1 (what peers ask each other) is this
 *                          detmd's part only, with its instance id, so a
 *                          peer list that includes this detmd (a headless
 *                          Service lists every pod) does not count it twice.
 *   forwarding             a request on /api/tasks/{id}/..., /api/waits/{id},
 *                          /api/record/{id}, /api/gui/agent/{id} that this
 *                          detmd answers 404 not_found: every peer is asked
 *                          at once whether it has the id (GET /api/tasks/{id}
 *                          etc. with X-Detm-Forwarded); exactly one has it:
 *                          the request goes to it with this detmd's token
 *                          and X-Detm-Forwarded (JSON and raw-byte bodies as
 *                          they came, capped at HTTPC_MAX_REQUEST); two or
 *                          more: 409 conflict naming them (ids are random
 *                          per detmd; nothing picks one); none while some
 *                          did not answer: 503 naming those; none: 404.
 *                          A forwarded request is never forwarded again.
 *                          A GET whose reply is bytes (live.mjpeg, frame.jpg,
 *                          videos, exports, raw files) is streamed through:
 *                          httpc_stream on a pipe job, the reply its pipe.
 *
 * Why forward, not redirect: the dashboard authenticates with a cookie
 * scoped to the pod it was opened on, and a browser drops Authorization on
 * a cross-origin redirect; pod addresses are often not reachable from the
 * operator's browser at all. So the pod that was asked asks its peer.
 * Not detected: an id this detmd holds itself and a peer holds too (this
 * detmd answers for its own; the fleet list names it in "collisions"), or
 * one a peer that did not answer holds too. Asking a peer blocks, so it
 * happens only on a side worker (http_reply_or_peer moves a request there).
 * Invariant: an id goes into a peer URL only as 8 lowercase hex digits.
 */
#include <microhttpd.h>
#include <pthread.h>
#include <strings.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "api.h"
#include "backends/httpc.h"
#include "core/jx.h"
#include "core/log.h"
#include "lim.h"
#include "core/util.h"
#include "desktop/live.h"
#include "fanout.h"
#include "peerlist.h"

#define FLEET_TIMEOUT_MS 5000L          /* a peer's list, an ownership probe */
#define FLEET_FORWARD_MS 150000L        /* a forwarded request (long polls: block_s) */

static pthread_mutex_t fl_mu = PTHREAD_MUTEX_INITIALIZER;
static struct peerset *fl_peers;        /* NULL: no --peers */
static bool fl_ready;
static char fl_instance[20], fl_pod[128];
static char fl_self[PEERLIST_URL];      /* this detmd's URL in the list, once seen */

/* The peer set (made at the first call; it resolves nothing), or NULL
 * without --peers. */
static struct peerset *
fleet_set(struct req *r)
{
	struct peerset *ps;

	pthread_mutex_lock(&fl_mu);
	if (!fl_ready) {
		struct peerlist pl = { 0 };
		char err[300];
		const char *list = r->app->cfg->peers;

		fl_ready = true;
		uint64_t rnd = 0;

		/* random per process: pods alike (same pid 1, same seed) must differ */
		if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
			rnd = (uint64_t)mono_us() ^ ((uint64_t)getpid() << 32);
		snprintf(fl_instance, sizeof fl_instance, "%016llx", (unsigned long long)rnd);
		if (gethostname(fl_pod, sizeof fl_pod) != 0)
			snprintf(fl_pod, sizeof fl_pod, "detmd");
		if (list != NULL && list[0] != '\0') {
			if (peerlist_parse(list, &pl, err, sizeof err) != 0)
				log_warn("--peers: %s; no fleet", err);
			else
				fl_peers = peerset_new(&pl, r->app->cfg->peers_resolve_all,
				    r->app->cfg->peers_resolve_s);
		}
	}
	ps = fl_peers;
	pthread_mutex_unlock(&fl_mu);
	return ps;
}

/* The peers' current URLs (resolving names when due: may block); false
 * when there are none. */
static bool
fleet_peers(struct req *r, struct peerlist *out)
{
	struct peerset *ps = fleet_set(r);

	out->n = 0;
	if (ps != NULL)
		peerset_get(ps, out);
	return out->n > 0;
}

/* ---- asking every peer at once ---- */

/* One GET to one peer, on a thread of its own: a hung peer costs one
 * FLEET_TIMEOUT_MS for the whole fan-out, not one per peer. The reply is
 * capped by httpc (HTTPC_MAX_REPLY). */
struct ask {
	const char *peer;               /* the peer's base URL (the caller's list) */
	char u[PEERLIST_URL + 200];     /* what is asked */
	const char *const *hdrs;
	long status;                    /* 0: no answer (why in err) */
	json_object *rep;               /* owned; NULL when not JSON */
	char err[256];
};

static void *
ask_run(void *arg)
{
	struct ask *a = arg;

	httpc_get_json(a->u, a->hdrs, FLEET_TIMEOUT_MS, &a->status, &a->rep, a->err, sizeof a->err);
	return NULL;
}

static void
ask_free(struct ask *a, int n)
{
	for (int i = 0; i < n; i++)
		json_object_put(a[i].rep);
}

/* ---- the merged task list ---- */

static void
tag_tasks(json_object *tasks, const char *pod, const char *detmd)
{
	for (size_t i = 0; i < json_object_array_length(tasks); i++) {
		json_object *t = json_object_array_get_idx(tasks, i);

		jx_add_str(t, "pod", pod);
		jx_add_str(t, "detmd", detmd);
	}
}

static const char *
sget(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : "";
}

static int
task_id_cmp(const void *a, const void *b)
{
	return strcmp(sget(*(json_object *const *)a, "task_id"), sget(*(json_object *const *)b, "task_id"));
}

/* The peer's query: ?local=1 and the caller's status/limit when they are
 * plain words/digits. */
static void
ask_url(struct req *r, struct ask *a, const char *url)
{
	const char *st = req_query(r, "status"), *lim = req_query(r, "limit");

	snprintf(a->u, sizeof a->u, "%s/api/fleet/tasks?local=1%s%.20s%s%.8s", url,
	    st != NULL && st[0] != '\0' && strspn(st, "abcdefghijklmnopqrstuvwxyz_") == strlen(st) ? "&status=" : "",
	    st != NULL && strspn(st, "abcdefghijklmnopqrstuvwxyz_") == strlen(st) ? st : "",
	    lim != NULL && lim[0] != '\0' && strspn(lim, "0123456789") == strlen(lim) ? "&limit=" : "",
	    lim != NULL && strspn(lim, "0123456789") == strlen(lim) ? lim : "");
}

/* One peer's answer into all/pods/down (nothing when it is this detmd). */
static void
fleet_take(const struct ask *a, json_object *all, json_object *pods, json_object *down)
{
	json_object *tasks, *p;
	const char *url = a->peer;

	if (a->status == 200 && json_object_object_get_ex(a->rep, "tasks", &tasks)) {
		if (strcmp(sget(a->rep, "instance"), fl_instance) == 0) {
			pthread_mutex_lock(&fl_mu);
			snprintf(fl_self, sizeof fl_self, "%s", url);  /* not asked when forwarding */
			pthread_mutex_unlock(&fl_mu);
			return;
		}
		for (size_t i = 0; i < json_object_array_length(tasks); i++) {
			json_object *t = json_object_array_get_idx(tasks, i);

			jx_add_str(t, "detmd", url);
			json_object_array_add(all, json_object_get(t));
		}
		p = json_object_new_object();
		jx_add_str(p, "pod", sget(a->rep, "pod"));
		jx_add_str(p, "detmd", url);
		json_object_object_add(p, "tasks", json_object_new_int64((int64_t)json_object_array_length(tasks)));
		json_object_array_add(pods, p);
		return;
	}
	p = json_object_new_object();
	jx_add_str(p, "detmd", url);
	jx_add_str(p, "error", a->status == 0 ? a->err : a->rep != NULL ?
	    sget(json_object_object_get(a->rep, "error"), "message") : a->err);
	json_object_array_add(down, p);
}

/* The ids that more than one detmd holds: [{task_id, detmds:[...]}]
 * (all sorted by id first; at most PEERLIST_MAX detmds an id). */
static json_object *
fleet_collisions(json_object *all)
{
	json_object *out = json_object_new_array(), *cur = NULL;
	size_t n = json_object_array_length(all);
	json_object **v = xcalloc(n + 1, sizeof *v);

	for (size_t i = 0; i < n; i++)
		v[i] = json_object_array_get_idx(all, i);
	qsort(v, n, sizeof *v, task_id_cmp);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(sget(v[i], "task_id"), sget(v[i - 1], "task_id")) != 0) {
			cur = NULL;
			continue;
		}
		if (cur == NULL) {
			json_object *c = json_object_new_object();

			jx_add_str(c, "task_id", sget(v[i], "task_id"));
			cur = json_object_new_array();
			json_object_array_add(cur, json_object_new_string(sget(v[i - 1], "detmd")));
			json_object_object_add(c, "detmds", cur);
			json_object_array_add(out, c);
		}
		json_object_array_add(cur, json_object_new_string(sget(v[i], "detmd")));
	}
	free(v);
	return out;
}

int
api_fleet_tasks(struct req *r, struct derr *e)
{
	struct peerlist pl;
	json_object *out, *all, *pods, *down, *p, *v;
	const char *local = req_query(r, "local");
	char auth[600];
	const char *hdrs[] = { auth, "X-Detm-Forwarded: 1", NULL };
	int64_t limit = 0;
	bool peers = fleet_peers(r, &pl);

	if (api_task_list(r, e) != 0)
		return -1;
	out = r->reply;
	r->reply = NULL;
	all = json_object_object_get(out, "tasks");
	tag_tasks(all, fl_pod, "self");
	jx_add_str(out, "pod", fl_pod);
	jx_add_str(out, "instance", fl_instance);
	pods = json_object_new_array();
	down = json_object_new_array();
	p = json_object_new_object();
	jx_add_str(p, "pod", fl_pod);
	jx_add_str(p, "detmd", "self");
	json_object_object_add(p, "tasks", json_object_new_int64((int64_t)json_object_array_length(all)));
	json_object_array_add(pods, p);
	snprintf(auth, sizeof auth, "Authorization: Bearer %.500s", r->app->cfg->token);
	if (r->app->cfg->token[0] == '\0')
		hdrs[0] = "X-Detm-Fleet: 1";
	if (peers && !(local != NULL && strcmp(local, "1") == 0)) {
		struct ask *a = xcalloc((size_t)pl.n, sizeof *a);

		for (int i = 0; i < pl.n; i++) {
			a[i].peer = pl.url[i];
			a[i].hdrs = hdrs;
			ask_url(r, &a[i], pl.url[i]);
		}
		fanout_run(a, (size_t)pl.n, sizeof *a, ask_run);
		for (int i = 0; i < pl.n; i++)
			fleet_take(&a[i], all, pods, down);
		ask_free(a, pl.n);
		free(a);
	}
	json_object_object_add(out, "collisions", fleet_collisions(all));
	json_object_array_sort(all, peerlist_newest_first);
	if (req_query(r, "limit") != NULL && json_object_object_get_ex(out, "tasks", &v))
		limit = atoll(req_query(r, "limit"));
	if (limit > 0 && json_object_array_length(all) > (size_t)limit)
		json_object_array_del_idx(all, (size_t)limit, json_object_array_length(all) - (size_t)limit);
	if (json_object_object_get_ex(out, "count", NULL))
		json_object_object_add(out, "count", json_object_new_int64((int64_t)json_object_array_length(all)));
	json_object_object_add(out, "pods", pods);
	json_object_object_add(out, "unreachable", down);
	json_object_object_add(out, "peers", json_object_new_boolean(peers));
	return req_reply(r, 200, out);
}

/* ---- forwarding a request for a peer's id ---- */

/* The id of an id-bearing path and the path that says who has it
 * ("/api/tasks/ID"); false for any other path. */
static bool
path_id(const char *path, char id[9], char *probe, size_t cap)
{
	static const char *const pre[] = { "/api/tasks/", "/api/waits/", "/api/record/", "/api/gui/agent/" };

	for (size_t k = 0; k < ARRAY_LEN(pre); k++) {
		size_t n = strlen(pre[k]);
		const char *s = path + n;

		if (strncmp(path, pre[k], n) != 0 || strspn(s, "0123456789abcdef") != 8 ||
		    (s[8] != '\0' && s[8] != '/'))
			continue;
		memcpy(id, s, 8);
		id[8] = '\0';
		snprintf(probe, cap, "%s%s", pre[k], id);
		return true;
	}
	return false;
}

/* Whether the route answers JSON (forwardable) rather than bytes. */
static bool
json_route(struct req *r)
{
	static const char *const tails[] = { ".mjpeg", ".jpg", ".mp4", "/export" };
	size_t n = strlen(r->path);
	const char *fmt = req_query(r, "format");

	if (r->in_raw != NULL)
		return false;
	for (size_t k = 0; k < ARRAY_LEN(tails); k++)
		if (n >= strlen(tails[k]) && strcmp(r->path + n - strlen(tails[k]), tails[k]) == 0)
			return false;
	return !(strstr(r->path, "/files/") != NULL && strcmp(r->method, "GET") == 0 &&
	    (fmt == NULL || strcmp(fmt, "json") != 0));
}

struct qbuf {
	char *s;
	size_t len, cap;
};

static void
q_esc(struct qbuf *q, const char *v, bool slash)
{
	for (; v != NULL && *v != '\0' && q->len + 4 < q->cap; v++) {
		unsigned char c = (unsigned char)*v;

		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    c == '-' || c == '_' || c == '.' || c == '~' || (slash && c == '/'))
			q->s[q->len++] = (char)c;
		else
			q->len += (size_t)snprintf(q->s + q->len, q->cap - q->len, "%%%02X", c);
	}
	q->s[q->len] = '\0';
}

static enum MHD_Result
q_add(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct qbuf *q = cls;

	(void)kind;
	if (strcmp(key, "token") == 0 || q->len + 8 >= q->cap)
		return MHD_YES;         /* the dashboard's token is ours, not the peer's */
	q->s[q->len] = q->len == 0 ? '?' : '&';
	q->len++;
	q_esc(q, key, false);
	if (value != NULL && q->len + 2 < q->cap) {
		q->s[q->len++] = '=';
		q_esc(q, value, false);
	}
	return MHD_YES;
}

/* Sends r to the detmd at url (body: the request's JSON as received, or
 * NULL): 1 it answered (r's reply set), 0 it has not the id (404), -1 it
 * did not answer (why in down). */
static int
forward_to(struct req *r, const char *url, const char *const *hdrs, const char *query,
    const char *raw, size_t len, char *down, size_t dcap)
{
	char u[PEERLIST_URL + 4 * LIM_URL_BYTES], path[3 * LIM_URL_BYTES + 1];
	struct qbuf pq = { path, 0, sizeof path };
	bool has_body = strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0;
	const char *bytes = r->in_raw != NULL ? r->in_raw : raw;
	size_t n = r->in_raw != NULL ? r->in_raw_len : len;
	struct httpc_req rq = { .method = r->method, .url = u, .headers = hdrs, .timeout_ms = FLEET_FORWARD_MS,
	    .max_reply = 32u << 20 };
	struct httpc_resp rs;
	int rc;

	q_esc(&pq, r->path, true);      /* the path as decoded: escaped again */
	snprintf(u, sizeof u, "%s%s%s", url, path, query);
	rc = has_body ? httpc_do_bytes(&rq, bytes, n, &rs) : httpc_do(&rq, &rs);

	if (rc != HTTPC_OK || rs.status == 0) {
		size_t o = strlen(down);

		snprintf(down + o, dcap - o, "%s%s (%s)", o ? ", " : "", url, rs.error);
		httpc_resp_free(&rs);
		return -1;
	}
	if (rs.status == 404) {
		httpc_resp_free(&rs);
		return 0;
	}
	if (rs.json == NULL)
		rs.json = json_object_new_object();
	req_reply(r, (int)rs.status, rs.json);
	rs.json = NULL;
	httpc_resp_free(&rs);
	return 1;
}

bool
api_fleet_wants(struct req *r)
{
	char id[9], probe[64];

	/* on an HTTP worker: nothing here may block (no name resolution) */
	return r->conn != NULL && req_in_header(r, "X-Detm-Forwarded") == NULL &&
	    path_id(r->path, id, probe, sizeof probe) && fleet_set(r) != NULL;
}

/* ---- a peer's bytes (live view, frame, video, export, raw file) ---- */

/* Between the side worker that answers and the pipe job that reads the
 * peer: the head (status, type) handed over once; freed by the last of
 * the two. */
struct bridge {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;
	int state;              /* 0 waiting for the head, 1 head in, -1 ended without */
	long status;
	char ctype[128], err[256], auth[600];
	char url[PEERLIST_URL + 4 * LIM_URL_BYTES];
	struct pipejob *job;
};

static void
bridge_put(void *arg)
{
	struct bridge *b = arg;
	int left;

	pthread_mutex_lock(&b->mu);
	left = --b->refs;
	pthread_mutex_unlock(&b->mu);
	if (left > 0)
		return;
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	free(b);
}

static bool
br_head(long status, const char *ctype, void *arg)
{
	struct bridge *b = arg;

	pthread_mutex_lock(&b->mu);
	b->status = status;
	snprintf(b->ctype, sizeof b->ctype, "%s", ctype);
	b->state = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return status == 200;
}

static int
br_body(const void *p, size_t n, void *arg)
{
	return pipejob_write(((struct bridge *)arg)->job, p, n);
}

/* The pipe job: the peer's body into the pipe as it comes. */
static int
br_run(struct pipejob *j, void *arg)
{
	struct bridge *b = arg;
	const char *hdrs[] = { "X-Detm-Forwarded: 1", b->auth[0] ? b->auth : NULL, NULL };
	struct httpc_stream_cb cb = { br_head, br_body, b, 60 };
	int rc;

	b->job = j;
	rc = httpc_stream(b->url, hdrs, &cb, b->err, sizeof b->err);
	pthread_mutex_lock(&b->mu);
	if (b->state == 0)
		b->state = -1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return rc == 0 && b->status == 200 ? 0 : -1;
}

/* Our own static text for a type a peer sent (a reply's type must be). */
static const char *
static_type(const char *t)
{
	static const char *const known[] = { "image/jpeg", "image/png", "video/mp4", "application/zip",
	    "multipart/x-mixed-replace; boundary=" LIVE_BOUNDARY, "text/plain; charset=utf-8",
	    "application/json; charset=utf-8" };

	for (size_t k = 0; k < ARRAY_LEN(known); k++)
		if (strcasecmp(t, known[k]) == 0)
			return known[k];
	return "application/octet-stream";
}

/* The head of the peer's reply, waited for at most FLEET_TIMEOUT_MS * 3. */
static int
br_wait(struct bridge *b, long *status, char *err, size_t cap)
{
	struct timespec ts;
	int state;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += FLEET_TIMEOUT_MS * 3 / 1000;
	pthread_mutex_lock(&b->mu);
	while (b->state == 0 && pthread_cond_timedwait(&b->cv, &b->mu, &ts) == 0)
		;
	state = b->state;
	*status = b->status;
	snprintf(err, cap, "%s", b->err[0] ? b->err : "no answer in time");
	pthread_mutex_unlock(&b->mu);
	return state;
}

/* r's reply: the GET's bytes from the peer at base, streamed through. */
static int
bytes_from(struct req *r, const char *base, const char *qs, const char *auth, struct derr *e)
{
	struct bridge *b;
	struct pipejob *job;
	struct qbuf pq;
	char path[3 * LIM_URL_BYTES + 1], err[256];
	long status = 0;
	int fd = -1;

	if (req_bulk_take(REQ_BULK_VIEW, e) != 0)
		return -1;
	b = xcalloc(1, sizeof *b);
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	b->refs = 2;
	snprintf(b->auth, sizeof b->auth, "%s", auth != NULL ? auth : "");
	pq = (struct qbuf){ path, 0, sizeof path };
	q_esc(&pq, r->path, true);
	snprintf(b->url, sizeof b->url, "%s%s%s", base, path, qs);
	job = pipejob_spawn(br_run, b, bridge_put, req_streams_wake, &fd, err, sizeof err);
	if (job == NULL) {
		b->refs = 1;
		bridge_put(b);
		return req_reply_pipe(r, REQ_BULK_VIEW, NULL, -1, NULL, err, e);
	}
	if (br_wait(b, &status, err, sizeof err) == 1 && status == 200) {
		const char *type = static_type(b->ctype);

		bridge_put(b);
		return req_reply_pipe(r, REQ_BULK_VIEW, job, fd, type, NULL, e);
	}
	bridge_put(b);
	close(fd);
	pipejob_release(job);
	req_bulk_give(REQ_BULK_VIEW);
	if (status == 404)
		return derr_set(e, DERR_NOT_FOUND, NULL, "the detmd at %s that has it answered 404 for %s",
		    base, r->path);
	return derr_set(e, DERR_UNAVAILABLE, NULL, "the detmd at %s that has it answered %s %ld: %s",
	    base, r->path, status, err);
}

/* Which peers have the id: each of pl (but self) asked GET probe at once;
 * the indexes of those that answered 200 into have (their count
 * returned), those that did not answer into down. */
static int
fleet_owners(const struct peerlist *pl, const char *self, const char *probe, const char *const *hdrs,
    int have[PEERLIST_MAX], char *down, size_t dcap)
{
	struct ask a[PEERLIST_MAX];
	int n = 0, nh = 0;

	memset(a, 0, sizeof a);
	for (int i = 0; i < pl->n; i++) {
		if (strcmp(pl->url[i], self) == 0)
			continue;
		a[n].peer = pl->url[i];
		a[n].hdrs = hdrs;
		snprintf(a[n].u, sizeof a[n].u, "%s%s", pl->url[i], probe);
		n++;
	}
	fanout_run(a, (size_t)n, sizeof *a, ask_run);
	for (int i = 0; i < n; i++) {
		if (a[i].status == 200) {
			for (int k = 0; k < pl->n; k++)
				if (pl->url[k] == a[i].peer)
					have[nh++] = k;
		} else if (a[i].status == 0) {
			size_t o = strlen(down);

			snprintf(down + o, dcap - o, "%s%s (%s)", o ? ", " : "", a[i].peer, a[i].err);
		}
	}
	ask_free(a, n);
	return nh;
}

/* The error for an id more than one peer has: 409 naming them. */
static int
fleet_clash(const struct peerlist *pl, const int *have, int nh, const char *id, struct derr *e)
{
	char who[1024] = "";

	for (int i = 0; i < nh; i++) {
		size_t o = strlen(who);

		snprintf(who + o, sizeof who - o, "%s%s", i ? ", " : "", pl->url[have[i]]);
	}
	return derr_set(e, DERR_CONFLICT, NULL, "%s is on %d detmds (%.900s): task ids are random per "
	    "detmd and two drew the same; ask the one you mean directly (its URL), not through this one",
	    id, nh, who);
}

int
api_fleet_forward(struct req *r, const char *raw, size_t len, struct derr *e)
{
	struct peerlist pl;
	char id[9], probe[64], self[PEERLIST_URL], down[1024] = "", auth[600], ctype[160];
	char qs[LIM_URL_BYTES] = "";
	const char *hdrs[] = { "X-Detm-Forwarded: 1", NULL, NULL, NULL }, *url, *ct;
	struct qbuf q = { qs, 0, sizeof qs };
	json_object *body = NULL;
	struct derr pe;
	int have[PEERLIST_MAX], nh, got;

	if (!api_fleet_wants(r) || !path_id(r->path, id, probe, sizeof probe) || !fleet_peers(r, &pl))
		return -1;
	/* the body as it came (a handler may have changed r->body) */
	if (json_route(r) && len > 0 && (body = jx_parse(raw, len, &pe)) == NULL)
		return -1;
	json_object_put(body);
	if (r->app->cfg->token[0] != '\0') {
		snprintf(auth, sizeof auth, "Authorization: Bearer %.500s", r->app->cfg->token);
		hdrs[1] = auth;
	}
	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, q_add, &q);
	pthread_mutex_lock(&fl_mu);
	snprintf(self, sizeof self, "%s", fl_self);
	pthread_mutex_unlock(&fl_mu);
	nh = fleet_owners(&pl, self, probe, hdrs, have, down, sizeof down);
	if (nh > 1)
		return fleet_clash(&pl, have, nh, id, e);
	if (nh == 0 && down[0] != '\0')
		return derr_set(e, DERR_UNAVAILABLE, NULL, "unavailable: %s is not on this detmd and on no "
		    "peer that answered; these did not answer: %.700s (its detmd may be down or restarting)",
		    id, down);
	if (nh == 0)
		return -1;
	url = pl.url[have[0]];
	if (strcmp(r->method, "GET") == 0 && !json_route(r)) {
		derr_clear(e);
		return bytes_from(r, url, qs, hdrs[1], e);
	}
	/* the body's type as it came: JSON, or a raw upload's own (bytes as they came) */
	ct = r->in_raw != NULL ? req_in_header(r, "Content-Type") : "application/json";
	snprintf(ctype, sizeof ctype, "Content-Type: %.140s", ct != NULL && ct[0] != '\0' &&
	    strpbrk(ct, "\r\n") == NULL ? ct : "application/octet-stream");
	hdrs[hdrs[1] != NULL ? 2 : 1] = ctype;
	got = forward_to(r, url, hdrs, qs, raw, len, down, sizeof down);
	if (got == 1) {
		derr_clear(e);
		return 0;
	}
	if (got == 0)
		return derr_set(e, DERR_NOT_FOUND, NULL, "the detmd at %s that has %s answered 404 for %s",
		    url, id, r->path);
	return derr_set(e, DERR_UNAVAILABLE, NULL, "unavailable: the detmd at %s that has %s did not "
	    "answer: %.700s", url, id, down);
}
