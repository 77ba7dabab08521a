/*
 * forward.c - see forward.h. Owns the HTTP side: building the URL from a
 * tool's route template, the libcurl exchange (one reused easy handle,
 * keep-alive, connect and total timeouts, a capped response buffer, a
 * progress callback that aborts on cancel) and the mapping of daemon
 * replies to tool results:
 *
 *   2xx JSON object               -> result_ok / result_image
 *   404 "no route ..." or 501     -> "detmd at URL does not support X yet ..."
 *                                    (names GET /api/capabilities' answer)
 *   other 4xx/5xx {"error":{...}} -> the daemon's message, code and field
 *   connect/resolve failure       -> "detmd is not reachable at URL ...; start it"
 *   timeout, oversize, non-JSON   -> one sentence each
 *
 * libcurl is loaded with dlopen at the first tools/call (forward_global_init):
 * initialize and tools/list never map it and its ~30 dependent libraries
 * (that loading was most of detm-mcp's start-up time). After the load, the
 * table `fw_curl` is read-only.
 *
 * Not here: argument checking (schema.c, done before), threads and
 * cancellation bookkeeping (worker.c), the wording of results (result.c).
 */
#include "forward.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jxkeep.h"
#include "utf8.h"
#include "caps.h"
#include "log.h"
#include "result.h"
#include "toolreq.h"

struct forward {
	CURL *curl;
	char *base;                 /* no trailing slash */
	char *auth;                 /* "Authorization: Bearer ..." or NULL */
	bool fleet;                 /* one of several detmds (route.h) */
};

struct fw_reply {
	long status;                /* HTTP status; 0 when none arrived */
	CURLcode cc;
	bool overflow;              /* body beyond CAP_HTTP_BODY */
	char *data;
	size_t len;
	struct json_object *json;   /* parsed body, or NULL */
	char cerr[CURL_ERROR_SIZE];
};

enum { FW_OK = 0, FW_TRANSPORT = -1, FW_CANCELLED = -2 };

/* The libcurl functions used here, from dlopen. */
static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	CURLcode (*easy_perform)(CURL *);
	void (*easy_reset)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} fw_curl;
static pthread_once_t fw_curl_once = PTHREAD_ONCE_INIT;
static int fw_curl_rc = -1;
static char fw_curl_err[256];

#define FW_SYM(field, name) { #name, (void **)&fw_curl.field }

static void
fw_curl_load(void)
{
	const struct { const char *name; void **slot; } syms[] = {
		FW_SYM(global_init, curl_global_init), FW_SYM(easy_init, curl_easy_init),
		FW_SYM(easy_cleanup, curl_easy_cleanup), FW_SYM(easy_setopt, curl_easy_setopt),
		FW_SYM(easy_getinfo, curl_easy_getinfo), FW_SYM(easy_perform, curl_easy_perform),
		FW_SYM(easy_reset, curl_easy_reset), FW_SYM(easy_strerror, curl_easy_strerror),
		FW_SYM(slist_append, curl_slist_append), FW_SYM(slist_free_all, curl_slist_free_all),
	};
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (h == NULL) {
		snprintf(fw_curl_err, sizeof fw_curl_err, "libcurl is unavailable: %s "
		    "(Debian package libcurl4)", dlerror());
		return;
	}
	for (i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (*syms[i].slot == NULL) {
			snprintf(fw_curl_err, sizeof fw_curl_err, "libcurl has no %s", syms[i].name);
			return;     /* the handle stays open: harmless, once */
		}
	}
	if (fw_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(fw_curl_err, sizeof fw_curl_err, "libcurl failed to initialise");
		return;
	}
	fw_curl_rc = 0;
}

int
forward_global_init(char *err, size_t errlen)
{
	pthread_once(&fw_curl_once, fw_curl_load);
	if (fw_curl_rc != 0)
		snprintf(err, errlen, "%s", fw_curl_err);
	return fw_curl_rc;
}

static char *
fw_strdup(const char *s)
{
	char *d = strdup(s);

	if (d == NULL)
		abort();
	return d;
}

struct forward *
forward_new(const char *base_url, const char *token)
{
	struct forward *fw = calloc(1, sizeof *fw);
	size_t n;

	if (fw == NULL || (fw->curl = fw_curl.easy_init()) == NULL)
		abort();
	fw->base = fw_strdup(base_url);
	n = strlen(fw->base);
	while (n > 0 && fw->base[n - 1] == '/')
		fw->base[--n] = '\0';
	if (token != NULL && token[0] != '\0') {
		n = strlen(token) + 32;
		fw->auth = malloc(n);
		if (fw->auth == NULL)
			abort();
		snprintf(fw->auth, n, "Authorization: Bearer %s", token);
	}
	return fw;
}

void
forward_free(struct forward *fw)
{
	if (fw == NULL)
		return;
	fw_curl.easy_cleanup(fw->curl);
	free(fw->base);
	free(fw->auth);
	free(fw);
}

static size_t
fw_on_data(char *ptr, size_t size, size_t nmemb, void *userp)
{
	struct fw_reply *r = userp;
	size_t n = size * nmemb;
	char *grown;

	if (r->len + n > (size_t)CAP_HTTP_BODY) {
		r->overflow = true;
		return 0;               /* CURLE_WRITE_ERROR */
	}
	grown = realloc(r->data, r->len + n + 1);
	if (grown == NULL)
		abort();
	r->data = grown;
	memcpy(r->data + r->len, ptr, n);
	r->len += n;
	r->data[r->len] = '\0';
	return n;
}

static long long
fw_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Send a progress notification if one is wanted and due. */
static void
fw_tick(struct forward_ctl *ctl)
{
	char line[300];
	long long now;
	double el;

	if (ctl->progress == NULL)
		return;
	now = fw_now_ms();
	if (now - ctl->last_ms < TIME_PROGRESS_MS)
		return;
	ctl->last_ms = now;
	el = (double)(now - ctl->t0_ms) / 1000.0;
	if (ctl->message[0] != '\0')
		snprintf(line, sizeof line, "%s: %s", ctl->tool, ctl->message);
	else
		snprintf(line, sizeof line, "%s: running, %.0f s", ctl->tool, el);
	ctl->progress(ctl->ud, el, line);
}

/* libcurl calls this about once a second even while nothing moves. */
static int
fw_on_progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
               curl_off_t ulnow)
{
	struct forward_ctl *ctl = clientp;

	(void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
	fw_tick(ctl);
	return atomic_load(ctl->cancel) != 0;   /* non-zero aborts the transfer */
}

static void
fw_reply_clear(struct fw_reply *r)
{
	free(r->data);
	json_object_put(r->json);
	memset(r, 0, sizeof *r);
}

/* One HTTP exchange. path starts with '/' and may hold a query. body (may be
 * NULL) is sent as JSON. Returns FW_OK when an HTTP response arrived (any
 * status; r->json set if the body is JSON), else FW_TRANSPORT or
 * FW_CANCELLED. The caller clears r. */
static int
fw_request(struct forward *fw, const char *method, const char *path, struct json_object *body,
           long timeout_s, struct forward_ctl *ctl, struct fw_reply *r)
{
	struct curl_slist *hdrs = NULL;
	char url[CAP_URL_BYTES + 256];
	struct derr e;
	const char *payload;
	CURL *c = fw->curl;
	int rc = FW_TRANSPORT;

	memset(r, 0, sizeof *r);
	snprintf(url, sizeof url, "%s%s", fw->base, path);
	/* reset keeps the connection cache, so keep-alive survives */
	fw_curl.easy_reset(c);
	hdrs = fw_curl.slist_append(hdrs, "Accept: application/json");
	hdrs = fw_curl.slist_append(hdrs, "Expect:");
	if (fw->auth != NULL)
		hdrs = fw_curl.slist_append(hdrs, fw->auth);
	if (ctl->local)
		hdrs = fw_curl.slist_append(hdrs, "X-Detm-Forwarded: 1");
	if (body != NULL) {
		hdrs = fw_curl.slist_append(hdrs, "Content-Type: application/json");
		payload = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
		fw_curl.easy_setopt(c, CURLOPT_POSTFIELDS, payload);
		fw_curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(payload));
	}
	if (strcmp(method, "GET") == 0)
		fw_curl.easy_setopt(c, CURLOPT_HTTPGET, 1L);
	else
		fw_curl.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	fw_curl.easy_setopt(c, CURLOPT_URL, url);
	fw_curl.easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	fw_curl.easy_setopt(c, CURLOPT_USERAGENT, "detm-mcp/" DETM_MCP_VERSION);
	fw_curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	fw_curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, TIME_CONNECT_S);
	fw_curl.easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	fw_curl.easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	fw_curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	fw_curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, fw_on_data);
	fw_curl.easy_setopt(c, CURLOPT_WRITEDATA, r);
	fw_curl.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	fw_curl.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, fw_on_progress);
	fw_curl.easy_setopt(c, CURLOPT_XFERINFODATA, ctl);
	fw_curl.easy_setopt(c, CURLOPT_ERRORBUFFER, r->cerr);

	r->cc = fw_curl.easy_perform(c);
	if (r->cc == CURLE_ABORTED_BY_CALLBACK) {
		rc = FW_CANCELLED;
		goto out;
	}
	if (r->cc != CURLE_OK)
		goto out;
	fw_curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->data != NULL) {
		r->json = json_tokener_parse(r->data);
		/* Numbers past 64 bits keep their text (daemon/jxkeep.h). */
		if (r->json != NULL && jxkeep_fix(r->data, r->len, &r->json, &e) != 0)
			log_debug("reply of %s %s: %s", method, path, e.message);
	}
	rc = FW_OK;
out:
	log_debug("%s %s -> %ld (%s)", method, path, r->status,
	          r->cc == CURLE_OK ? "ok" : fw_curl.easy_strerror(r->cc));
	fw_curl.easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	fw_curl.slist_free_all(hdrs);
	return rc;
}

/* "tasks; not yet: waits, desktop" from GET /api/capabilities into out.
 * Returns whether the daemon claims capability `want` (false when unknown
 * or want is NULL). */
static bool
fw_capabilities(struct forward *fw, struct forward_ctl *ctl, const char *want, char *out,
                size_t len)
{
	bool has = false;
	struct json_object *caps;
	struct fw_reply r;
	char yes[200] = "", no[200] = "";   /* both fit in the caller's 512 */
	size_t yo = 0, no_o = 0;

	snprintf(out, len, "unknown (GET /api/capabilities failed)");
	if (fw_request(fw, "GET", "/api/capabilities", NULL, TIME_CALL_S, ctl, &r) != FW_OK ||
	    r.status != 200 || !json_object_object_get_ex(r.json, "capabilities", &caps) ||
	    !json_object_is_type(caps, json_type_object))
		goto out;
	json_object_object_foreach(caps, key, val) {
		if (want != NULL && strcmp(key, want) == 0)
			has = json_object_get_boolean(val);
		if (json_object_get_boolean(val) && yo < sizeof yes)
			yo += (size_t)snprintf(yes + yo, sizeof yes - yo, "%s%s", yo ? ", " : "", key);
		else if (no_o < sizeof no)
			no_o += (size_t)snprintf(no + no_o, sizeof no - no_o, "%s%s", no_o ? ", " : "", key);
	}
	snprintf(out, len, "%s%s%s", yo ? yes : "none", no_o ? "; not yet: " : "", no);
out:
	fw_reply_clear(&r);
	return has;
}

/* The result for a transport failure or a non-2xx reply of method path.
 * Takes r's JSON. */
static struct json_object *
fw_failure(struct forward *fw, const struct tool *t, const char *method, const char *path,
           struct fw_reply *r, struct forward_ctl *ctl)
{
	struct json_object *err = NULL, *v;
	const char *code = "", *msg = "", *field = NULL;
	struct json_object *body = r->json;
	char caps[512];

	if (r->status == 0) {
		switch (r->cc) {
		case CURLE_COULDNT_CONNECT:
		case CURLE_COULDNT_RESOLVE_HOST:
		case CURLE_COULDNT_RESOLVE_PROXY:
			if (fw->fleet)
				return result_error(NULL, "unavailable: the detmd at %s did not answer (%s); "
					"it may be down or restarting (its tasks are unavailable until it is back; "
					"the other detmds still answer). Try again later.", fw->base,
					r->cerr[0] ? r->cerr : fw_curl.easy_strerror(r->cc));
			return result_error(NULL, "detmd is not reachable at %s (%s): start it with "
				"`make run` in the detm source tree or by running `detmd`, or point "
				"detm-mcp at it with --url or ACU_DAEMON_URL.", fw->base,
				r->cerr[0] ? r->cerr : fw_curl.easy_strerror(r->cc));
		case CURLE_OPERATION_TIMEDOUT:
			return result_error(NULL, "detmd at %s did not answer %s %s within %ld s (%s).",
				fw->base, method, path, ctl->timeout_s > 0 ? ctl->timeout_s : t->timeout_s, r->cerr);
		default:
			if (r->overflow)
				return result_error(NULL, "detmd's reply to %s %s is larger than %ld MiB; "
					"ask for less (a smaller limit or detail level).", method, path,
					CAP_HTTP_BODY >> 20);
			return result_error(NULL, "the request %s %s to detmd at %s failed: %s.",
				method, path, fw->base, r->cerr[0] ? r->cerr : fw_curl.easy_strerror(r->cc));
		}
	}
	r->json = NULL;             /* body now ours */
	if (json_object_object_get_ex(body, "error", &err) &&
	    json_object_is_type(err, json_type_object)) {
		if (json_object_object_get_ex(err, "code", &v))
			code = json_object_get_string(v);
		if (json_object_object_get_ex(err, "message", &v))
			msg = json_object_get_string(v);
		if (json_object_object_get_ex(err, "field", &v) && json_object_is_type(v, json_type_string))
			field = json_object_get_string(v);
	} else if (r->status >= 200 && r->status < 300) {
		json_object_put(body);
		return result_error(NULL, "detmd answered %s %s with HTTP %ld but the body is not a "
			"JSON object.", method, path, r->status);
	} else if (body != NULL) {
		return result_error(body, "detmd answered %s %s with HTTP %ld: %.*s", method, path,
			r->status, utf8_prec(json_object_to_json_string_ext(body,
			    JSON_C_TO_STRING_PLAIN), 1000), json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
	} else {
		return result_error(NULL, "detmd answered %s %s with HTTP %ld and a body that is not "
			"JSON.", method, path, r->status);
	}
	/* A route-level 404 means a missing feature only if the daemon does not
	 * claim the capability; otherwise the path itself was odd (an id with
	 * a slash, say) and the daemon's message says more. */
	if (((r->status == 404 && strncmp(msg, "no route", 8) == 0) || r->status == 501) &&
	    !fw_capabilities(fw, ctl, t->capability, caps, sizeof caps)) {
		if (r->status == 404)
			return result_error(body, "detmd at %s does not support %s yet (no route %s "
				"%.*s); this daemon's capabilities: %s.", fw->base,
				t->capability ? tools_capability_name(t->capability) : t->name,
				method, (int)strcspn(path, "?"), path, caps);
		return result_error(body, "detmd at %s does not support %s yet (%s); this daemon's "
			"capabilities: %s.", fw->base,
			t->capability ? tools_capability_name(t->capability) : t->name, msg, caps);
	}
	if (r->status == 401)
		return result_error(body, "detmd at %s rejected the request: %s (unauthorized). Give "
			"detm-mcp the daemon's token with --token or ACU_TOKEN.", fw->base, msg);
	if (field != NULL)
		return result_error(body, "%s (detmd: %s, field '%s').", msg, code, field);
	return result_error(body, "%s (detmd: %s).", msg, code);
}

/* Run one exchange. On a 2xx JSON object: NULL, *json set (caller owns).
 * Otherwise the failure result, or NULL and *json NULL when cancelled. */
static struct json_object *
fw_fetch(struct forward *fw, const struct tool *t, const char *method, const char *path,
         struct json_object *body, struct forward_ctl *ctl, struct json_object **json)
{
	struct json_object *res = NULL;
	struct fw_reply r;
	int rc;

	*json = NULL;
	rc = fw_request(fw, method, path, body, ctl->timeout_s > 0 ? ctl->timeout_s : t->timeout_s, ctl, &r);
	if (rc == FW_CANCELLED)
		goto out;
	if (rc == FW_OK && r.status >= 200 && r.status < 300 && r.data == NULL)
		r.json = json_object_new_object();  /* an empty 2xx body counts as {} */
	if (rc != FW_OK || r.status < 200 || r.status >= 300 ||
	    !json_object_is_type(r.json, json_type_object)) {
		res = fw_failure(fw, t, method, path, &r, ctl);
		goto out;
	}
	*json = r.json;
	r.json = NULL;
out:
	fw_reply_clear(&r);
	return res;
}

/* An error result of a tool with an outputSchema keeps the daemon's error
 * object as text, not as structuredContent: clients check structuredContent
 * against the outputSchema even when isError is set. Takes res. */
static struct json_object *
fw_error_unstructured(const struct tool *t, struct json_object *res)
{
	struct json_object *sc, *content, *blk;

	if (res == NULL || tools_output_schema(t) == NULL ||
	    !json_object_object_get_ex(res, "isError", NULL) ||
	    !json_object_object_get_ex(res, "structuredContent", &sc) ||
	    !json_object_object_get_ex(res, "content", &content))
		return res;
	blk = json_object_new_object();
	json_object_object_add(blk, "type", json_object_new_string("text"));
	json_object_object_add(blk, "text", json_object_new_string(
		json_object_to_json_string_ext(sc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
	json_object_array_add(content, blk);
	json_object_object_del(res, "structuredContent");
	return res;
}

/* Run one exchange and shape it. NULL when cancelled. */
static struct json_object *
fw_exchange(struct forward *fw, const struct tool *t, const char *method, const char *path,
            struct json_object *body, struct forward_ctl *ctl, bool *ok)
{
	struct json_object *res, *json;

	*ok = false;
	res = fw_fetch(fw, t, method, path, body, ctl, &json);
	if (json == NULL)
		return res;
	*ok = true;
	return result_shape(t, json);
}

/* A cancelled clip: ask detmd to end it now (nothing is sent back). */
static void
fw_clip_stop(struct forward *fw, const struct tool *t, const char *clip_id)
{
	struct forward_ctl quiet = { 0 };
	struct json_object *res, *json;
	struct tool tc = *t;
	atomic_int never = 0;
	char path[96];

	quiet.cancel = &never;
	tc.timeout_s = TIME_CLIP_STOP_S;        /* detmd's own stop gives up before */
	snprintf(path, sizeof path, "/api/record/%s/stop", clip_id);
	res = fw_fetch(fw, &tc, "POST", path, NULL, &quiet, &json);
	log_info("video_record cancelled: clip %s %s", clip_id, json ? "stopped" : "could not be stopped");
	json_object_put(res);
	json_object_put(json);
}

/* video_record: start the clip without waiting, then follow it with
 * GET /api/record/{id}?block_s=... so progress can say how far it is and
 * a cancellation can stop it. The whole call has a deadline of the clip's
 * duration plus TIME_CLIP_MARGIN_S (each exchange too: tc's timeout): a
 * clip that never finishes is a tool error then, not a call that hangs. */
static struct json_object *
fw_clip(struct forward *fw, const struct tool *t, const char *path, struct json_object *body,
        struct forward_ctl *ctl)
{
	struct json_object *res, *json, *v;
	long long dur = 10, frames = 0;
	char id[16], poll[128];
	struct tool tc = *t;
	const char *st;
	bool follow;

	if (json_object_object_get_ex(body, "duration", &v))
		dur = json_object_get_int64(v);
	tc.timeout_s = (long)dur + TIME_CLIP_MARGIN_S;
	/* a task follows its clip to the end, whatever its length */
	follow = tools_clip_follows(body) || ctl->follow;
	res = fw_fetch(fw, &tc, "POST", path, body, ctl, &json);
	while (json != NULL) {
		st = json_object_object_get_ex(json, "status", &v) ? json_object_get_string(v) : "";
		if (!follow || strcmp(st, "recording") != 0 || !json_object_object_get_ex(json, "clip_id", &v))
			return result_clip(t, json);
		snprintf(id, sizeof id, "%s", json_object_get_string(v));
		if (json_object_object_get_ex(json, "frames", &v))
			frames = json_object_get_int64(v);
		snprintf(ctl->message, sizeof ctl->message, "recording clip %s, %.0f/%lld s, %lld frames",
		         id, (double)(fw_now_ms() - ctl->t0_ms) / 1000.0, dur, frames);
		json_object_put(json);
		if (fw_now_ms() - ctl->t0_ms > tc.timeout_s * 1000L) {
			fw_clip_stop(fw, t, id);
			return result_error(NULL, "the clip %s did not finish within its %lld s and %ld s "
			                    "more; it was asked to stop (see GET /api/record/%s).", id, dur,
			                    TIME_CLIP_MARGIN_S, id);
		}
		snprintf(poll, sizeof poll, "/api/record/%s?block_s=%ld", id, TIME_CLIP_POLL_S);
		res = fw_fetch(fw, &tc, "GET", poll, NULL, ctl, &json);
		if (res == NULL && json == NULL) {
			fw_clip_stop(fw, t, id);
			return NULL;
		}
	}
	return res;
}

/* smart_wait run as a task (ctl->follow): start the wait, then follow it
 * with GET /api/waits/{id}?block_s= until it stops watching (its own
 * timeout, at most an hour, ends it); its last record is the result. A
 * cancelled call cancels the wait (DELETE /api/waits/{id}). */
static struct json_object *
fw_wait(struct forward *fw, const struct tool *t, const char *path, struct json_object *body,
        struct forward_ctl *ctl)
{
	struct json_object *res, *json, *v;
	struct tool tw = *t;
	char id[16] = "", poll[128];
	atomic_int never = 0;
	struct forward_ctl quiet = { 0 };

	tw.timeout_s = TIME_WAIT_POLL_S + 30;
	res = fw_fetch(fw, &tw, "POST", path, body, ctl, &json);
	while (json != NULL) {
		if (!json_object_object_get_ex(json, "status", &v) ||
		    strcmp(json_object_get_string(v), "watching") != 0 ||
		    !json_object_object_get_ex(json, "wait_id", &v))
			return result_shape(t, json);
		snprintf(id, sizeof id, "%s", json_object_get_string(v));
		snprintf(ctl->message, sizeof ctl->message, "smart_wait: wait %s watching, %.0f s", id,
		         (double)(fw_now_ms() - ctl->t0_ms) / 1000.0);
		json_object_put(json);
		snprintf(poll, sizeof poll, "/api/waits/%s?block_s=%ld", id, TIME_WAIT_POLL_S);
		res = fw_fetch(fw, &tw, "GET", poll, NULL, ctl, &json);
	}
	if (res == NULL && id[0] != '\0') {         /* cancelled: so is the wait */
		quiet.cancel = &never;
		snprintf(poll, sizeof poll, "/api/waits/%s", id);
		res = fw_fetch(fw, &tw, "DELETE", poll, NULL, &quiet, &json);
		log_info("smart_wait task cancelled: wait %s %s", id, json ? "cancelled" : "could not be cancelled");
		json_object_put(res);
		json_object_put(json);
		res = NULL;
	}
	return res;
}

struct json_object *
forward_call(struct forward *fw, const struct tool *t, struct json_object *args,
             struct forward_ctl *ctl)
{
	struct json_object *body = json_object_new_object(), *query = json_object_new_object();
	struct json_object *res = NULL, *msg = NULL, *post;
	char path[CAP_URL_BYTES], full[CAP_URL_BYTES];
	bool has_body = strcmp(t->method, "POST") == 0 || strcmp(t->method, "PATCH") == 0 ||
	    strcmp(t->method, "PUT") == 0;
	bool ok;

	ctl->tool = t->name;
	ctl->t0_ms = ctl->last_ms = fw_now_ms();
	ctl->message[0] = '\0';
	if (toolreq_build(t, args, true, path, sizeof path, query, body) != 0 ||
	    (snprintf(full, sizeof full, "%s", path),
	     toolreq_query_string(query, full, sizeof full) != 0)) {
		res = result_error(NULL, "the path arguments of %s are too long to fit in a URL or hold a NUL byte.", t->name);
		goto out;
	}
	if ((t->flags & TOOL_POST_MESSAGE_FIRST) && json_object_object_get_ex(body, "message", &msg)) {
		post = json_object_new_object();
		json_object_object_add(post, "content", json_object_get(msg));
		json_object_object_add(post, "role", json_object_new_string("agent"));
		res = fw_exchange(fw, t, "POST", path, post, ctl, &ok);
		json_object_put(post);
		json_object_object_del(body, "message");
		if (!ok)
			goto out;       /* the error, or NULL when cancelled */
		json_object_put(res);
		res = NULL;
	}
	if (t->flags & TOOL_CLIP)
		res = fw_clip(fw, t, full, body, ctl);
	else if ((t->flags & TOOL_WAIT) && ctl->follow)
		res = fw_wait(fw, t, full, body, ctl);
	else
		res = fw_exchange(fw, t, t->method, full, has_body ? body : NULL, ctl, &ok);
out:
	res = fw_error_unstructured(t, res);
	json_object_put(query);
	json_object_put(body);
	return res;
}

void
forward_check_version(struct forward *fw, atomic_int *cancel)
{
	struct forward_ctl ctl = { 0 };
	struct json_object *v;
	struct fw_reply r;
	long long api = -1;

	ctl.cancel = cancel;
	if (fw_request(fw, "GET", "/api/version", NULL, TIME_VERSION_S, &ctl, &r) != FW_OK) {
		if (r.cc != CURLE_ABORTED_BY_CALLBACK)
			log_warn("detmd is not reachable at %s yet (%s); tool calls will fail until it "
			         "runs (make run, or detmd)", fw->base,
			         r.cerr[0] ? r.cerr : fw_curl.easy_strerror(r.cc));
		goto out;
	}
	if (json_object_object_get_ex(r.json, "api_version", &v) &&
	    json_object_is_type(v, json_type_int))
		api = json_object_get_int64(v);
	if (r.status != 200 || api != DETM_API_VERSION)
		log_warn("API version mismatch: detmd at %s speaks api_version %lld (HTTP %ld), "
		         "detm-mcp %s speaks api_version %d; calls may fail", fw->base, api, r.status,
		         DETM_MCP_VERSION, DETM_API_VERSION);
	else
		log_info("detmd at %s speaks api_version %lld", fw->base, api);
out:
	fw_reply_clear(&r);
}

long
forward_probe(struct forward *fw, const char *path, long timeout_s, struct json_object **json)
{
	struct forward_ctl ctl = { 0 };
	atomic_int never = 0;
	struct fw_reply r;
	long st = 0;

	ctl.cancel = &never;
	ctl.local = true;
	if (json != NULL)
		*json = NULL;
	if (fw_request(fw, "GET", path, NULL, timeout_s, &ctl, &r) == FW_OK) {
		st = r.status;
		if (json != NULL) {
			*json = r.json;
			r.json = NULL;
		}
	}
	fw_reply_clear(&r);
	return st;
}

void
forward_set_fleet(struct forward *fw, bool fleet)
{
	fw->fleet = fleet;
}

const char *
forward_base(const struct forward *fw)
{
	return fw->base;
}
