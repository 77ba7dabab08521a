/* httpc.c - see httpc.h. */
#include "httpc.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/cancel.h"
#include "core/util.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static CURL *pool_idle[HTTPC_POOL_IDLE];
static size_t pool_n;

/* libcurl's global state, made once at the first request (from whichever
 * thread asks first), so no caller has to set it up before threads start.
 *
 * curl_global_init initialises OpenSSL, twice over (curl's TLS and
 * libssh2's crypto): 2.3 MB of detmd's resident memory, most of it tables
 * detmd never reads. Before it, OpenSSL is told to leave out the error
 * strings and the legacy name tables of every cipher and digest (TLS
 * fetches its algorithms from the providers; curl words its own TLS
 * errors, and a certificate problem still names the verify error): 1.2 MB
 * instead of 2.3 (measured with libcurl 7.88 and OpenSSL 3.0 on Debian 12).
 * The system's OpenSSL configuration is still loaded. */
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static bool global_ok;

static void
global_init(void)
{
	(void)OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS |
	    OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_ADD_ALL_DIGESTS, NULL);
	global_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

void
httpc_global_cleanup(void)
{
	pthread_mutex_lock(&pool_lock);
	while (pool_n > 0)
		curl_easy_cleanup(pool_idle[--pool_n]);
	pthread_mutex_unlock(&pool_lock);
	if (global_ok)
		curl_global_cleanup();
}

static CURL *
pool_get(void)
{
	CURL *c = NULL;

	pthread_once(&global_once, global_init);
	if (!global_ok)
		return NULL;
	pthread_mutex_lock(&pool_lock);
	if (pool_n > 0)
		c = pool_idle[--pool_n];
	pthread_mutex_unlock(&pool_lock);
	return c != NULL ? c : curl_easy_init();
}

/* Gives the handle back. A handle whose transfer failed is dropped, so a
 * half-dead connection is not handed to the next caller. */
static void
pool_put(CURL *c, bool healthy)
{
	if (c == NULL)
		return;
	if (healthy) {
		curl_easy_reset(c);
		pthread_mutex_lock(&pool_lock);
		if (pool_n < HTTPC_POOL_IDLE) {
			pool_idle[pool_n++] = c;
			c = NULL;
		}
		pthread_mutex_unlock(&pool_lock);
	}
	if (c != NULL)
		curl_easy_cleanup(c);
}

struct sink {
	struct buf body;
	bool overflow;
	long retry_after_ms;
};

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;

	if (buf_append(&s->body, p, size * n) != 0) {
		s->overflow = true;
		return 0;       /* aborts the transfer with CURLE_WRITE_ERROR */
	}
	return size * n;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;
	static const char name[] = "retry-after:";

	if (len > sizeof name - 1 && len < 128 && strncasecmp(p, name, sizeof name - 1) == 0) {
		char tmp[128];
		char *end;
		double secs;

		memcpy(tmp, p + sizeof name - 1, len - (sizeof name - 1));
		tmp[len - (sizeof name - 1)] = '\0';
		secs = strtod(tmp, &end);
		/* Only the delta-seconds form; an HTTP date is ignored. */
		if (end != tmp && secs >= 0 && secs < 86400)
			s->retry_after_ms = (long)(secs * 1000);
	}
	return len;
}

/* Copies the start of a body into out as one printable line. */
static void
excerpt(const char *p, size_t len, char *out, size_t cap)
{
	size_t o = 0;

	if (cap == 0)
		return;
	while (len > 0 && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++, len--;
	for (size_t i = 0; i < len && o + 1 < cap; i++) {
		unsigned char c = (unsigned char)p[i];

		out[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	/* Do not end in the middle of a UTF-8 sequence. */
	while (o > 0 && ((unsigned char)out[o - 1] & 0xC0) == 0x80)
		o--;
	if (o > 0 && ((unsigned char)out[o - 1] & 0xC0) == 0xC0)
		o--;
	out[o] = '\0';
}

/* curl's progress callback: a call made for a request whose client gave up
 * (cancel.h; unbound threads, such as the smart-wait workers, never are)
 * is abandoned, asked at most every 100 ms. Non-zero aborts the transfer. */
static int
on_progress(void *arg, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	int64_t *next = arg, now = mono_us();

	(void)dlt;
	(void)dln;
	(void)ult;
	(void)uln;
	if (now < *next)
		return 0;
	*next = now + 100000;
	return cancel_requested() ? 1 : 0;
}

static int
map_curl_error(CURLcode rc)
{
	switch (rc) {
	case CURLE_ABORTED_BY_CALLBACK:
		return HTTPC_ECANCELLED;
	case CURLE_OPERATION_TIMEDOUT:
		return HTTPC_ETIMEOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_WEIRD_SERVER_REPLY:
		return HTTPC_ECONNECT;
	default:
		return HTTPC_EOTHER;
	}
}

static json_object *
parse_json(const char *p, size_t len)
{
	json_tokener *tok;
	json_object *o;

	if (p == NULL || len == 0 || len > INT32_MAX)
		return NULL;
	tok = json_tokener_new();
	o = json_tokener_parse_ex(tok, p, (int)len);
	if (o != NULL && json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* Sets c up for rq (headers hl, body of body_len bytes or NULL), its
 * reply into s, errors into cerr, cancellation checks through next_check. */
static void
request_setup(CURL *c, const struct httpc_req *rq, struct curl_slist *hl, const char *body,
    size_t body_len, long timeout, struct sink *sp, char *cerr, int64_t *next_check)
{
	curl_easy_setopt(c, CURLOPT_URL, rq->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout < 10000 ? timeout : 10000L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "detm/1 (vision)");
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, sp);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, sp);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, next_check);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	if (rq->method != NULL && strcmp(rq->method, "GET") == 0 && body == NULL)
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	else if (rq->method != NULL && strcmp(rq->method, "POST") != 0 && strcmp(rq->method, "GET") != 0)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
	else if (rq->method != NULL && strcmp(rq->method, "POST") == 0 && body == NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	}
}

/* The meter usage.c sets (httpc_set_meter); read once per request. */
static _Atomic(const struct httpc_meter *) httpc_meter;

void
httpc_set_meter(const struct httpc_meter *m)
{
	atomic_store(&httpc_meter, m);
}

static int
do_req(const struct httpc_req *rq, const char *raw, size_t raw_len, struct httpc_resp *rs)
{
	struct sink s;
	struct curl_slist *hl = NULL;
	char cerr[CURL_ERROR_SIZE] = "";
	const char *body = NULL;
	size_t body_len = 0;
	long timeout = rq->timeout_ms > 0 ? rq->timeout_ms : 30000;
	int64_t t0 = mono_us(), next_check = 0;
	const struct httpc_meter *meter = atomic_load(&httpc_meter);
	void *call = NULL;
	bool refused = false;
	CURLcode rc;
	CURL *c;
	int ret = HTTPC_OK;

	memset(rs, 0, sizeof *rs);
	rs->retry_after_ms = -1;
	if (rq->body != NULL) {
		body = json_object_to_json_string_ext(rq->body,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		body_len = strlen(body);
	} else if (raw != NULL) {
		body = raw;
		body_len = raw_len;
	}
	if (body_len > HTTPC_MAX_REQUEST) {
		snprintf(rs->error, sizeof rs->error, "request body of %zu bytes is over the %d byte cap",
		    body_len, HTTPC_MAX_REQUEST);
		return HTTPC_ETOOBIG;
	}
	if (meter != NULL && (call = meter->begin(rq, rs->error, sizeof rs->error, &refused), refused))
		return HTTPC_EREFUSED;
	c = pool_get();
	if (c == NULL) {
		snprintf(rs->error, sizeof rs->error, "curl_easy_init failed");
		return HTTPC_EOTHER;
	}
	buf_init(&s.body, rq->max_reply ? rq->max_reply : HTTPC_MAX_REPLY);
	s.overflow = false;
	s.retry_after_ms = -1;

	if (rq->body != NULL)
		hl = curl_slist_append(hl, "Content-Type: application/json");
	hl = curl_slist_append(hl, "Accept: application/json");
	hl = curl_slist_append(hl, "Expect:");       /* no 100-continue round trip */
	for (const char *const *h = rq->headers; h != NULL && *h != NULL; h++)
		hl = curl_slist_append(hl, *h);

	request_setup(c, rq, hl, body, body_len, timeout, &s, cerr, &next_check);

	rc = curl_easy_perform(c);
	rs->latency_us = mono_us() - t0;
	if (rc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &rs->status);
		rs->json = parse_json(s.body.data, s.body.len);
		excerpt(s.body.data ? s.body.data : "", s.body.len, rs->excerpt, sizeof rs->excerpt);
		rs->retry_after_ms = s.retry_after_ms;
	} else if (s.overflow) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &rs->status);
		snprintf(rs->error, sizeof rs->error, "reply larger than %zu bytes", s.body.cap);
		ret = HTTPC_ETOOBIG;
	} else {
		ret = map_curl_error(rc);
		snprintf(rs->error, sizeof rs->error, "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
		if (ret == HTTPC_ETIMEOUT)
			snprintf(rs->error, sizeof rs->error, "timed out after %ld ms", timeout);
		else if (ret == HTTPC_ECANCELLED)
			snprintf(rs->error, sizeof rs->error, "cancelled: the client that asked gave up");
	}
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	pool_put(c, rc == CURLE_OK);
	curl_slist_free_all(hl);
	buf_free(&s.body);
	if (call != NULL)
		meter->end(call, ret, rs);
	return ret;
}

int
httpc_do(const struct httpc_req *rq, struct httpc_resp *rs)
{
	return do_req(rq, NULL, 0, rs);
}

int
httpc_do_bytes(const struct httpc_req *rq, const void *raw, size_t raw_len, struct httpc_resp *rs)
{
	struct httpc_req r = *rq;

	r.body = NULL;
	return do_req(&r, raw != NULL ? raw : "", raw_len, rs);
}

void
httpc_resp_free(struct httpc_resp *rs)
{
	if (rs == NULL)
		return;
	json_object_put(rs->json);
	rs->json = NULL;
}

static int
simple(const char *method, const char *url, const char *const *headers, json_object *body,
    long timeout_ms, long *status, json_object **reply, char *errbuf, size_t errlen)
{
	struct httpc_req rq = { method, url, headers, body, timeout_ms, 0 };
	struct httpc_resp rs;
	int rc = httpc_do(&rq, &rs);

	if (status != NULL)
		*status = rs.status;
	if (errbuf != NULL && errlen > 0) {
		errbuf[0] = '\0';
		if (rc != HTTPC_OK)
			snprintf(errbuf, errlen, "%s", rs.error);
		else if (rs.status < 200 || rs.status > 299 || rs.json == NULL)
			snprintf(errbuf, errlen, "%s", rs.excerpt);
	}
	if (reply != NULL) {
		*reply = rs.json;
		rs.json = NULL;
	}
	httpc_resp_free(&rs);
	return rc;
}

int
httpc_post_json(const char *url, const char *const *headers, json_object *body,
    long timeout_ms, long *status, json_object **reply, char *errbuf, size_t errlen)
{
	return simple("POST", url, headers, body, timeout_ms, status, reply, errbuf, errlen);
}

int
httpc_get_json(const char *url, const char *const *headers, long timeout_ms,
    long *status, json_object **reply, char *errbuf, size_t errlen)
{
	return simple("GET", url, headers, NULL, timeout_ms, status, reply, errbuf, errlen);
}

/* ---- a GET whose body is passed on as it comes (httpc_stream) ---- */

struct stream_sink {
	const struct httpc_stream_cb *cb;
	CURL *c;
	bool head_sent, stopped;
	char ctype[128];
};

static size_t
on_stream_header(char *p, size_t size, size_t n, void *arg)
{
	struct stream_sink *s = arg;
	size_t len = size * n;
	static const char name[] = "content-type:";

	if (len > sizeof name - 1 && strncasecmp(p, name, sizeof name - 1) == 0) {
		size_t o = sizeof name - 1, k = 0;

		while (o < len && p[o] == ' ')
			o++;
		while (o < len && p[o] != '\r' && p[o] != '\n' && k + 1 < sizeof s->ctype)
			s->ctype[k++] = p[o++];
		s->ctype[k] = '\0';
	}
	return len;
}

static size_t
on_stream_body(char *p, size_t size, size_t n, void *arg)
{
	struct stream_sink *s = arg;
	long status = 0;

	if (!s->head_sent) {
		s->head_sent = true;
		curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &status);
		if (!s->cb->head(status, s->ctype, s->cb->arg)) {
			s->stopped = true;
			return 0;
		}
	}
	if (s->cb->body(p, size * n, s->cb->arg) != 0) {
		s->stopped = true;
		return 0;
	}
	return size * n;
}

int
httpc_stream(const char *url, const char *const *headers, const struct httpc_stream_cb *cb,
    char *err, size_t errlen)
{
	struct stream_sink s = { .cb = cb };
	struct curl_slist *hl = NULL;
	char cerr[CURL_ERROR_SIZE] = "";
	CURLcode rc;
	long status = 0;
	int ret = HTTPC_OK;

	if ((s.c = pool_get()) == NULL)
		return snprintf(err, errlen, "curl_easy_init failed"), HTTPC_EOTHER;
	for (const char *const *h = headers; h != NULL && *h != NULL; h++)
		hl = curl_slist_append(hl, *h);
	curl_easy_setopt(s.c, CURLOPT_URL, url);
	curl_easy_setopt(s.c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(s.c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s.c, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(s.c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	/* no total timeout (a live view has no end): a stalled one ends */
	curl_easy_setopt(s.c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(s.c, CURLOPT_LOW_SPEED_TIME, cb->stall_s > 0 ? cb->stall_s : 60L);
	curl_easy_setopt(s.c, CURLOPT_USERAGENT, "detm/1 (fleet)");
	curl_easy_setopt(s.c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(s.c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(s.c, CURLOPT_WRITEFUNCTION, on_stream_body);
	curl_easy_setopt(s.c, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(s.c, CURLOPT_HEADERFUNCTION, on_stream_header);
	curl_easy_setopt(s.c, CURLOPT_HEADERDATA, &s);
	rc = curl_easy_perform(s.c);
	curl_easy_getinfo(s.c, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_OK && !s.head_sent)         /* an empty body: the head still goes */
		cb->head(status, s.ctype, cb->arg);
	if (rc != CURLE_OK && !s.stopped) {
		ret = map_curl_error(rc);
		snprintf(err, errlen, "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
	}
	curl_easy_setopt(s.c, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(s.c, CURLOPT_HTTPHEADER, NULL);
	pool_put(s.c, rc == CURLE_OK);
	curl_slist_free_all(hl);
	return ret;
}
