/*
 * stub.c - bin/vision-stub: a local stand-in for vision model servers that
 * speaks their real wire formats, for tests of the vision layer and the
 * wait engine. Listens on 127.0.0.1 only.
 *
 *   bin/vision-stub [--port N] [--port-file F] [--key K] [--script FILE]
 *
 * --port 0 (the default) binds a free port; --port-file gets the port
 * number once the server is listening (written atomically). --key K makes
 * the OpenAI-style and Anthropic routes check the key like the real APIs
 * (401 in their error shape otherwise). --script FILE loads a script (the
 * JSON below) at start. Runs until SIGTERM or SIGINT.
 *
 * Model routes (POST, JSON):
 *   /api/chat                              Ollama chat  -> message.content,
 *                                          prompt_eval_count, eval_count
 *   /v1/chat/completions, /chat/completions OpenAI style (vLLM, OpenRouter)
 *                                          -> choices[0].message.content, usage
 *   /v1/messages                           Anthropic Messages (needs the
 *                                          anthropic-version header) -> content[0].text, usage
 *   /parse/                                OmniParser server: {"base64_image"} ->
 *                                          {"parsed_content_list": script "parsed",
 *                                          "som_image_base64":"", "latency":0.01}
 * Cheap routes (GET): /api/tags (Ollama), /v1/models (key checked), /models.
 * Unknown paths are 404, wrong methods 405.
 *
 * Control API (JSON; no key needed):
 *   GET    /_stub/ping       {"ok":true}
 *   POST   /_stub/script     replaces the script and resets its counters:
 *     {"answers":["NO","NO","YES: done"],  model texts, used in order; the last
 *                                          repeats (default "YES\nstub default answer")
 *      "rules":[{"contains":"want-yes","answer":"YES\n..."}],
 *                                          checked first: the first rule whose
 *                                          text occurs in the prompt answers
 *      "fail":[503, 429, "malformed", "empty", "close"],
 *                                          consumed one per model request before
 *                                          answering: a status (error body in the
 *                                          route's real shape), "malformed" (200
 *                                          text/html), "empty" (200 {}), "close"
 *                                          (connection dropped, no response)
 *      "fail_always": 503,                 every model request fails so (0 = off)
 *      "retry_after": 1,                   seconds, sent with injected 429/503
 *      "delay_ms": 0,                      sleep before answering a model request
 *      "hold": 0,                          the Nth model request after this script
 *                                          (1-based; 0 = none) waits before answering
 *                                          until POST /_stub/release (at most 120 s),
 *                                          so a test can act while a caller waits
 *                                          on the model
 *      "tokens_in": 0, "tokens_out": 0,    0 = computed from the request
 *      "usage": false,                     answers carry no token counts at all
 *      "cost": 0.0012,                     OpenAI style: usage.cost (OpenRouter's
 *                                          own figure, USD); absent = not sent
 *      "models": ["minicpm-v:latest", ...], for /api/tags and /models
 *      An OpenAI-style answer "TOOL_CALL name {json}" becomes
 *      message.tool_calls[0] {id, type function, function {name, arguments}}.
 *      In any answer "$FRAME" / "$FRAME0" become the last / first
 *      "frameId <uuid>" of the request (OpenClaw's computer tool results).
 *      An OpenAI request with "stream": true is answered as SSE
 *      (chat.completion.chunk deltas, then "data: [DONE]").
 *      "tool_use": {"action":"left_click","coordinate":[x,y]},
 *                                          an Anthropic request that declares
 *                                          "tools" gets this tool_use block
 *                                          (name "computer") after the text,
 *                                          stop_reason "tool_use"
 *      "parsed": [{"type":"text","bbox":[x1,y1,x2,y2],"interactivity":true,
 *                  "content":"Save"}, ...]}  what /parse/ answers (bbox: 0..1 ratios)
 *   GET    /_stub/script     the script plus "answers_used", "fails_used",
 *                            "model_requests" (since it was loaded), "held" (waiting now)
 *   POST   /_stub/release    lets the held request answer: {"ok":true,"released":N}
 *   GET    /_stub/requests   {"requests":[record...], "dropped":N}
 *   DELETE /_stub/requests   forgets the records
 *   POST   /_stub/reset      default script, no records
 *
 * A record (one per non-control request, in arrival order):
 *   {"seq":1, "conn":3, "method":"POST", "path":"/api/chat",
 *    "api":"ollama"|"openai"|"anthropic"|"health",
 *    "headers":{"authorization":..,"x-api-key":..,"anthropic-version":..,
 *               "content-type":..,"http-referer":..,"x-title":..},   (present ones)
 *    "model":.., "stream":false, "keep_alive":.., "temperature":0, "max_tokens":100,
 *    "options":{...}, "system":"...", "prompt":"all user text parts, joined",
 *    "image_count":1, "images":[{"bytes":1234,"jpeg":true,"width":64,"height":48,
 *        "fnv1a":"0123456789abcdef","media_type":"image/jpeg","b64_ok":true}],
 *    "status":200, "answer":"YES...", "tokens_in":.., "tokens_out":.., "fail":"503"}
 * "conn" numbers TCP connections, so a test can check connection reuse.
 * fnv1a is the 64-bit FNV-1a hash of the decoded image bytes, in hex.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY     (64 * 1024 * 1024)
#define MAX_RECORDS  10000

struct script {
	json_object *answers, *rules, *fail, *models, *tool_use, *parsed;
	size_t next_answer, next_fail;
	long fail_always, retry_after, delay_ms, tokens_in, tokens_out;
	long hold, nmodel;      /* the request to hold (0: none); model requests so far */
	bool no_usage;
	double cost;            /* < 0: no usage.cost */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cv = PTHREAD_COND_INITIALIZER;
/* Set (under lock, with held_cv broadcast) when SIGTERM/SIGINT arrives:
 * a delayed or held answer ends at once, so MHD_stop_daemon, which joins
 * every connection thread, does not wait out a 90 s delay_ms. */
static int quitting;
static long held_now;                   /* requests held (under lock) */
static unsigned long release_gen;       /* bumped by POST /_stub/release */
static struct script sc = { .cost = -1 };
static json_object *records;
static long seq, dropped;
static uintptr_t conn_counter;
static const char *api_key;

struct rq {
	char *body;
	size_t len, alloc;
	bool too_big;
};

/* ---- small helpers ---------------------------------------------------- */

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (p == NULL) {
		perror("vision-stub");
		abort();
	}
	return p;
}

static const char *
jstr(json_object *o, const char *key)
{
	json_object *x;

	return json_object_object_get_ex(o, key, &x) && json_object_is_type(x, json_type_string)
	    ? json_object_get_string(x) : NULL;
}

static long
jlong(json_object *o, const char *key, long def)
{
	json_object *x;

	return json_object_object_get_ex(o, key, &x) && json_object_is_type(x, json_type_int)
	    ? (long)json_object_get_int64(x) : def;
}

static json_object *
jget(json_object *o, const char *key)
{
	json_object *x;

	return json_object_object_get_ex(o, key, &x) ? x : NULL;
}

static json_object *
parse(const char *p, size_t len)
{
	json_tokener *tok;
	json_object *o;

	if (p == NULL || len == 0 || len > INT32_MAX)
		return NULL;
	tok = json_tokener_new();
	o = json_tokener_parse_ex(tok, p, (int)len);
	if (o != NULL && (json_tokener_get_error(tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(tok) < len)) {
		/* trailing whitespace is fine, anything else is not */
		size_t i = json_tokener_get_parse_end(tok);

		while (i < len && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t'))
			i++;
		if (i < len) {
			json_object_put(o);
			o = NULL;
		}
	}
	json_tokener_free(tok);
	return o;
}

static int
b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Decodes standard base64 (padding required for a partial group). Returns
 * a malloc'd buffer and *n, or NULL if s is not valid base64. */
static unsigned char *
b64_decode(const char *s, size_t *n)
{
	size_t len = strlen(s), o = 0;
	unsigned char *out;
	uint32_t acc = 0;
	int bits = 0, pad = 0;

	if (len % 4 != 0)
		return NULL;
	out = xrealloc(NULL, len / 4 * 3 + 1);
	for (size_t i = 0; i < len; i++) {
		int v;

		if (s[i] == '=') {
			if (i < len - 2)
				goto bad;
			pad++;
			continue;
		}
		if (pad > 0 || (v = b64_val((unsigned char)s[i])) < 0)
			goto bad;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	*n = o;
	return out;
bad:
	free(out);
	return NULL;
}

static uint64_t
fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Reads width and height from a JPEG's SOF segment; 0 or -1. */
static int
jpeg_size(const unsigned char *p, size_t n, int *w, int *h)
{
	size_t i = 2;

	if (n < 4 || p[0] != 0xFF || p[1] != 0xD8)
		return -1;
	while (i + 4 <= n) {
		unsigned m;
		size_t seglen;

		if (p[i] != 0xFF)
			return -1;
		while (i < n && p[i] == 0xFF)
			i++;
		if (i >= n)
			return -1;
		m = p[i++];
		if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7))
			continue;
		if (m == 0xD9 || m == 0xDA || i + 2 > n)
			return -1;
		seglen = (size_t)p[i] << 8 | p[i + 1];
		if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
			if (i + 7 > n)
				return -1;
			*h = p[i + 3] << 8 | p[i + 4];
			*w = p[i + 5] << 8 | p[i + 6];
			return 0;
		}
		i += seglen;
	}
	return -1;
}

/* Records one image given as base64 (data is a raw base64 string). */
static void
add_image(json_object *imgs, const char *data, const char *media_type)
{
	json_object *o = json_object_new_object();
	size_t n = 0;
	unsigned char *bytes = data != NULL ? b64_decode(data, &n) : NULL;
	int w = 0, h = 0;
	char hex[17];

	json_object_object_add(o, "b64_ok", json_object_new_boolean(bytes != NULL));
	if (media_type != NULL)
		json_object_object_add(o, "media_type", json_object_new_string(media_type));
	if (bytes != NULL) {
		json_object_object_add(o, "bytes", json_object_new_int64((int64_t)n));
		json_object_object_add(o, "jpeg", json_object_new_boolean(n >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8));
		if (jpeg_size(bytes, n, &w, &h) == 0) {
			json_object_object_add(o, "width", json_object_new_int(w));
			json_object_object_add(o, "height", json_object_new_int(h));
		}
		snprintf(hex, sizeof hex, "%016llx", (unsigned long long)fnv1a(bytes, n));
		json_object_object_add(o, "fnv1a", json_object_new_string(hex));
	}
	free(bytes);
	json_object_array_add(imgs, o);
}

/* Appends s to a growing text with a newline between parts. */
static void
append_text(char **acc, const char *s)
{
	size_t a = *acc ? strlen(*acc) : 0, b = strlen(s);

	*acc = xrealloc(*acc, a + b + 2);
	if (a > 0)
		(*acc)[a++] = '\n';
	memcpy(*acc + a, s, b + 1);
}

/* ---- the script ------------------------------------------------------- */

static void
script_clear(void)
{
	json_object_put(sc.answers);
	json_object_put(sc.rules);
	json_object_put(sc.fail);
	json_object_put(sc.models);
	json_object_put(sc.tool_use);
	json_object_put(sc.parsed);
	memset(&sc, 0, sizeof sc);
	sc.cost = -1;
}

/* Replaces the script from a JSON object; caller holds the lock. */
static int
script_load(json_object *o, char *err, size_t errlen)
{
	json_object *x;

	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "script must be a JSON object");
		return -1;
	}
	static const char *const arrays[] = { "answers", "rules", "fail", "models", "parsed" };
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
		if ((x = jget(o, arrays[i])) != NULL && !json_object_is_type(x, json_type_array)) {
			snprintf(err, errlen, "%s must be an array", arrays[i]);
			return -1;
		}
	}
	script_clear();
	sc.answers = json_object_get(jget(o, "answers"));
	sc.rules = json_object_get(jget(o, "rules"));
	sc.fail = json_object_get(jget(o, "fail"));
	sc.models = json_object_get(jget(o, "models"));
	sc.tool_use = json_object_get(jget(o, "tool_use"));
	sc.parsed = json_object_get(jget(o, "parsed"));
	sc.fail_always = jlong(o, "fail_always", 0);
	sc.retry_after = jlong(o, "retry_after", 0);
	sc.delay_ms = jlong(o, "delay_ms", 0);
	sc.hold = jlong(o, "hold", 0);
	sc.tokens_in = jlong(o, "tokens_in", 0);
	sc.tokens_out = jlong(o, "tokens_out", 0);
	sc.no_usage = (x = jget(o, "usage")) != NULL && json_object_is_type(x, json_type_boolean) &&
	    !json_object_get_boolean(x);
	sc.cost = (x = jget(o, "cost")) != NULL ? json_object_get_double(x) : -1;
	return 0;
}

static json_object *
script_json(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "answers", json_object_get(sc.answers));
	json_object_object_add(o, "rules", json_object_get(sc.rules));
	json_object_object_add(o, "fail", json_object_get(sc.fail));
	json_object_object_add(o, "models", json_object_get(sc.models));
	json_object_object_add(o, "tool_use", json_object_get(sc.tool_use));
	json_object_object_add(o, "parsed", json_object_get(sc.parsed));
	json_object_object_add(o, "fail_always", json_object_new_int64(sc.fail_always));
	json_object_object_add(o, "retry_after", json_object_new_int64(sc.retry_after));
	json_object_object_add(o, "delay_ms", json_object_new_int64(sc.delay_ms));
	json_object_object_add(o, "tokens_in", json_object_new_int64(sc.tokens_in));
	json_object_object_add(o, "tokens_out", json_object_new_int64(sc.tokens_out));
	json_object_object_add(o, "usage", json_object_new_boolean(!sc.no_usage));
	json_object_object_add(o, "cost", sc.cost >= 0 ? json_object_new_double(sc.cost) : NULL);
	json_object_object_add(o, "answers_used", json_object_new_int64((int64_t)sc.next_answer));
	json_object_object_add(o, "fails_used", json_object_new_int64((int64_t)sc.next_fail));
	json_object_object_add(o, "hold", json_object_new_int64(sc.hold));
	json_object_object_add(o, "model_requests", json_object_new_int64(sc.nmodel));
	json_object_object_add(o, "held", json_object_new_int64(held_now));
	return o;
}

static const char *const default_models[] = {
	"minicpm-v:latest", "ui-tars-1.5-7b", "google/gemini-2.0-flash-001", "claude-sonnet-4-20250514",
};

/* A held request waits for POST /_stub/release (or 120 s). */
static void
hold_wait(void)
{
	struct timespec ts;
	unsigned long gen;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 120;
	pthread_mutex_lock(&lock);
	held_now++;
	gen = release_gen;
	while (release_gen == gen && !quitting && pthread_cond_timedwait(&held_cv, &lock, &ts) != ETIMEDOUT)
		;
	held_now--;
	pthread_mutex_unlock(&lock);
}

/* ---- replies ---------------------------------------------------------- */

static enum MHD_Result
send_text(struct MHD_Connection *c, unsigned status, const char *type, const char *text,
    long retry_after)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text),
	    (void *)(uintptr_t)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", type);
	if (retry_after > 0) {
		char b[32];

		snprintf(b, sizeof b, "%ld", retry_after);
		MHD_add_response_header(r, "Retry-After", b);
	}
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Sends obj (and puts it). */
static enum MHD_Result
send_json(struct MHD_Connection *c, unsigned status, json_object *obj, long retry_after)
{
	enum MHD_Result ret = send_text(c, status, "application/json",
	    json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	    retry_after);

	json_object_put(obj);
	return ret;
}

/* An error body in the shape the route's real API uses. */
static json_object *
api_error(const char *api, unsigned status, const char *msg)
{
	json_object *o = json_object_new_object(), *e;
	const char *type;

	if (strcmp(api, "ollama") == 0) {
		json_object_object_add(o, "error", json_object_new_string(msg));
		return o;
	}
	e = json_object_new_object();
	if (strcmp(api, "anthropic") == 0) {
		type = status == 401 ? "authentication_error" : status == 429 ? "rate_limit_error" :
		    status == 529 ? "overloaded_error" : status >= 500 ? "api_error" : "invalid_request_error";
		json_object_object_add(o, "type", json_object_new_string("error"));
		json_object_object_add(e, "type", json_object_new_string(type));
		json_object_object_add(e, "message", json_object_new_string(msg));
	} else {
		type = status == 401 ? "invalid_request_error" : status >= 500 ? "server_error" : "invalid_request_error";
		json_object_object_add(e, "message", json_object_new_string(msg));
		json_object_object_add(e, "type", json_object_new_string(type));
		json_object_object_add(e, "code", json_object_new_int((int)status));
	}
	json_object_object_add(o, "error", e);
	return o;
}

static json_object *
models_list(bool ollama)
{
	json_object *arr = json_object_new_array(), *o = json_object_new_object();
	size_t n = sc.models ? json_object_array_length(sc.models) : sizeof default_models / sizeof default_models[0];

	for (size_t i = 0; i < n; i++) {
		const char *name = sc.models ? json_object_get_string(json_object_array_get_idx(sc.models, i))
		                             : default_models[i];
		json_object *m = json_object_new_object();

		if (ollama) {
			json_object_object_add(m, "name", json_object_new_string(name));
			json_object_object_add(m, "model", json_object_new_string(name));
			json_object_object_add(m, "modified_at", json_object_new_string("2025-01-01T00:00:00Z"));
			json_object_object_add(m, "size", json_object_new_int64(5697586946));
			json_object_object_add(m, "digest", json_object_new_string("c92bfad01205f1e0b3e2b4f3a7c7c7a1"));
		} else {
			json_object_object_add(m, "id", json_object_new_string(name));
			json_object_object_add(m, "object", json_object_new_string("model"));
			json_object_object_add(m, "created", json_object_new_int64(1700000000));
			json_object_object_add(m, "owned_by", json_object_new_string("vision-stub"));
		}
		json_object_array_add(arr, m);
	}
	if (ollama) {
		json_object_object_add(o, "models", arr);
	} else {
		json_object_object_add(o, "object", json_object_new_string("list"));
		json_object_object_add(o, "data", arr);
	}
	return o;
}

static json_object *
answer_json(const char *api, const char *model, const char *answer, long tin, long tout, long n,
    json_object *tool_use)
{
	json_object *o = json_object_new_object();
	char id[64];

	if (strcmp(api, "ollama") == 0) {
		json_object *m = json_object_new_object();

		json_object_object_add(o, "model", json_object_new_string(model));
		json_object_object_add(o, "created_at", json_object_new_string("2025-01-01T00:00:00.000000Z"));
		json_object_object_add(m, "role", json_object_new_string("assistant"));
		json_object_object_add(m, "content", json_object_new_string(answer));
		json_object_object_add(o, "message", m);
		json_object_object_add(o, "done_reason", json_object_new_string("stop"));
		json_object_object_add(o, "done", json_object_new_boolean(1));
		json_object_object_add(o, "total_duration", json_object_new_int64(512000000));
		json_object_object_add(o, "load_duration", json_object_new_int64(1000000));
		json_object_object_add(o, "prompt_eval_count", json_object_new_int64(tin));
		json_object_object_add(o, "prompt_eval_duration", json_object_new_int64(400000000));
		json_object_object_add(o, "eval_count", json_object_new_int64(tout));
		json_object_object_add(o, "eval_duration", json_object_new_int64(100000000));
	} else if (strcmp(api, "openai") == 0) {
		json_object *ch = json_object_new_array(), *c0 = json_object_new_object();
		json_object *m = json_object_new_object(), *u = json_object_new_object();

		snprintf(id, sizeof id, "chatcmpl-stub-%ld", n);
		json_object_object_add(o, "id", json_object_new_string(id));
		json_object_object_add(o, "object", json_object_new_string("chat.completion"));
		json_object_object_add(o, "created", json_object_new_int64((int64_t)time(NULL)));
		json_object_object_add(o, "model", json_object_new_string(model));
		json_object_object_add(m, "role", json_object_new_string("assistant"));
		if (strncmp(answer, "TOOL_CALL ", 10) == 0) {
			/* "TOOL_CALL name {json}": an OpenAI tool call (gui_agent). */
			const char *nm = answer + 10, *args = strchr(nm, ' ');
			json_object *calls = json_object_new_array(), *call = json_object_new_object();
			json_object *fn = json_object_new_object();
			char cid[32];

			snprintf(cid, sizeof cid, "call_%ld", n);
			json_object_object_add(fn, "name", json_object_new_string_len(nm,
			    args ? (int)(args - nm) : (int)strlen(nm)));
			json_object_object_add(fn, "arguments", json_object_new_string(args ? args + 1 : "{}"));
			json_object_object_add(call, "id", json_object_new_string(cid));
			json_object_object_add(call, "type", json_object_new_string("function"));
			json_object_object_add(call, "function", fn);
			json_object_array_add(calls, call);
			json_object_object_add(m, "content", NULL);
			json_object_object_add(m, "tool_calls", calls);
		} else {
			json_object_object_add(m, "content", json_object_new_string(answer));
		}
		json_object_object_add(c0, "index", json_object_new_int(0));
		json_object_object_add(c0, "message", m);
		json_object_object_add(c0, "finish_reason", json_object_new_string(
		    strncmp(answer, "TOOL_CALL ", 10) == 0 ? "tool_calls" : "stop"));
		json_object_array_add(ch, c0);
		json_object_object_add(o, "choices", ch);
		json_object_object_add(u, "prompt_tokens", json_object_new_int64(tin));
		json_object_object_add(u, "completion_tokens", json_object_new_int64(tout));
		json_object_object_add(u, "total_tokens", json_object_new_int64(tin + tout));
		json_object_object_add(o, "usage", u);
	} else {
		json_object *content = json_object_new_array(), *b = json_object_new_object();
		json_object *u = json_object_new_object();

		snprintf(id, sizeof id, "msg_stub_%ld", n);
		json_object_object_add(o, "id", json_object_new_string(id));
		json_object_object_add(o, "type", json_object_new_string("message"));
		json_object_object_add(o, "role", json_object_new_string("assistant"));
		json_object_object_add(o, "model", json_object_new_string(model));
		json_object_object_add(b, "type", json_object_new_string("text"));
		json_object_object_add(b, "text", json_object_new_string(answer));
		json_object_array_add(content, b);
		if (tool_use != NULL) {
			json_object *tu = json_object_new_object();

			snprintf(id, sizeof id, "toolu_stub_%ld", n);
			json_object_object_add(tu, "type", json_object_new_string("tool_use"));
			json_object_object_add(tu, "id", json_object_new_string(id));
			json_object_object_add(tu, "name", json_object_new_string("computer"));
			json_object_object_add(tu, "input", json_object_get(tool_use));
			json_object_array_add(content, tu);
		}
		json_object_object_add(o, "content", content);
		json_object_object_add(o, "stop_reason",
		    json_object_new_string(tool_use != NULL ? "tool_use" : "end_turn"));
		json_object_object_add(o, "stop_sequence", NULL);
		json_object_object_add(u, "input_tokens", json_object_new_int64(tin));
		json_object_object_add(u, "output_tokens", json_object_new_int64(tout));
		json_object_object_add(o, "usage", u);
	}
	return o;
}

/* The script's "usage": false drops every token count; "cost" adds
 * OpenRouter's usage.cost to an OpenAI-style answer. Returns o. */
static json_object *
usage_adjust(json_object *o, bool no_usage, double cost)
{
	json_object *u = jget(o, "usage");

	if (no_usage) {
		json_object_object_del(o, "usage");
		json_object_object_del(o, "prompt_eval_count");
		json_object_object_del(o, "eval_count");
		return o;
	}
	if (cost >= 0 && u != NULL && jget(u, "prompt_tokens") != NULL)
		json_object_object_add(u, "cost", json_object_new_double(cost));
	return o;
}

/* ---- reading a model request ------------------------------------------ */

/* Fills rec with model, system, prompt and images from body. */
static void
describe(const char *api, json_object *body, json_object *rec)
{
	json_object *msgs = jget(body, "messages"), *imgs = json_object_new_array(), *x;
	char *prompt = NULL, *system = NULL;
	static const char *const copy[] = { "model", "stream", "keep_alive", "temperature", "max_tokens", "options",
		"tools", "tool_choice" };

	for (size_t i = 0; i < sizeof copy / sizeof copy[0]; i++)
		if ((x = jget(body, copy[i])) != NULL)
			json_object_object_add(rec, copy[i], json_object_get(x));
	if ((x = jget(body, "system")) != NULL && json_object_is_type(x, json_type_string))
		append_text(&system, json_object_get_string(x));
	for (size_t i = 0; msgs != NULL && json_object_is_type(msgs, json_type_array) &&
	    i < json_object_array_length(msgs); i++) {
		json_object *m = json_object_array_get_idx(msgs, i), *content = jget(m, "content");
		const char *role = jstr(m, "role");
		char **acc = role != NULL && strcmp(role, "system") == 0 ? &system : &prompt;

		if (content != NULL && json_object_is_type(content, json_type_string))
			append_text(acc, json_object_get_string(content));
		if (strcmp(api, "ollama") == 0 && (x = jget(m, "images")) != NULL &&
		    json_object_is_type(x, json_type_array)) {
			for (size_t k = 0; k < json_object_array_length(x); k++)
				add_image(imgs, json_object_get_string(json_object_array_get_idx(x, k)), NULL);
		}
		for (size_t k = 0; content != NULL && json_object_is_type(content, json_type_array) &&
		    k < json_object_array_length(content); k++) {
			json_object *p = json_object_array_get_idx(content, k);
			const char *type = jstr(p, "type");

			if (type == NULL)
				continue;
			if (strcmp(type, "text") == 0 && jstr(p, "text") != NULL) {
				append_text(acc, jstr(p, "text"));
			} else if (strcmp(type, "image_url") == 0) {
				const char *url = jstr(jget(p, "image_url"), "url");
				const char *comma = url != NULL ? strchr(url, ',') : NULL;
				char mt[64] = "";

				if (url != NULL && strncmp(url, "data:", 5) == 0 && comma != NULL &&
				    strstr(url, ";base64,") == comma - 7) {
					snprintf(mt, sizeof mt, "%.*s", (int)(comma - 7 - (url + 5)), url + 5);
					add_image(imgs, comma + 1, mt);
				} else {
					add_image(imgs, NULL, NULL);
				}
			} else if (strcmp(type, "image") == 0) {
				json_object *src = jget(p, "source");
				const char *st = jstr(src, "type");

				add_image(imgs, st != NULL && strcmp(st, "base64") == 0 ? jstr(src, "data") : NULL,
				    jstr(src, "media_type"));
			}
		}
	}
	json_object_object_add(rec, "system", system ? json_object_new_string(system) : NULL);
	json_object_object_add(rec, "prompt", json_object_new_string(prompt ? prompt : ""));
	json_object_object_add(rec, "image_count", json_object_new_int((int)json_object_array_length(imgs)));
	json_object_object_add(rec, "images", imgs);
	free(prompt);
	free(system);
}

static void
record_headers(struct MHD_Connection *c, json_object *rec)
{
	static const char *const names[] = { "authorization", "x-api-key", "anthropic-version",
		"content-type", "http-referer", "x-title", "user-agent", "anthropic-beta" };
	json_object *h = json_object_new_object();

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, names[i]);

		if (v != NULL)
			json_object_object_add(h, names[i], json_object_new_string(v));
	}
	json_object_object_add(rec, "headers", h);
}

static void
record_add(json_object *rec)
{
	pthread_mutex_lock(&lock);
	if (json_object_array_length(records) < MAX_RECORDS) {
		json_object_array_add(records, rec);
		rec = NULL;
	} else {
		dropped++;
	}
	pthread_mutex_unlock(&lock);
	json_object_put(rec);
}

static bool
auth_ok(struct MHD_Connection *c, const char *api)
{
	const char *v;

	if (api_key == NULL || strcmp(api, "ollama") == 0)
		return true;
	if (strcmp(api, "anthropic") == 0) {
		v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "x-api-key");
		return v != NULL && strcmp(v, api_key) == 0;
	}
	v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "authorization");
	return v != NULL && strncmp(v, "Bearer ", 7) == 0 && strcmp(v + 7, api_key) == 0;
}

/* Sleeps ms milliseconds, or less if the stub is told to quit. */
static void
sleep_ms(long ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&lock);
	while (!quitting && pthread_cond_timedwait(&held_cv, &lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&lock);
}

/* ---- OpenAI streaming and frame ids (OpenClaw's computer tool) ---------- */

/* The answer with "$FRAME0" / "$FRAME" replaced by the first / last
 * "frameId <uuid>" in the raw request (OpenClaw's computer tool names its
 * screenshot frames so; a scripted model must echo them). Caller frees. */
static char *
frame_subst(const char *answer, const char *body, size_t len)
{
	const char *first = NULL, *last = NULL, *p = body, *end = body + len;
	char *out;
	size_t cap, o = 0;

	while (p != NULL && p < end) {
		const char *q = memmem(p, (size_t)(end - p), "frameId ", 8);

		if (q == NULL)
			break;
		q += 8;
		if (end - q >= 36 && strspn(q, "0123456789abcdef-") >= 36) {
			if (first == NULL)
				first = q;
			last = q;
		}
		p = q;
	}
	cap = strlen(answer) * 2 + 64;
	out = malloc(cap);
	if (out == NULL)
		return strdup(answer);
	for (const char *a = answer; *a != '\0';) {
		const char *id = NULL;
		size_t skip = 1;

		if (strncmp(a, "$FRAME0", 7) == 0)
			id = first, skip = 7;
		else if (strncmp(a, "$FRAME", 6) == 0)
			id = last, skip = 6;
		if (skip > 1) {
			const char *v = id != NULL ? id : "no-frame-seen";
			size_t n = id != NULL ? 36 : strlen(v);

			if (o + n + 1 >= cap)
				break;
			memcpy(out + o, v, n);
			o += n;
			a += skip;
			continue;
		}
		if (o + 2 >= cap)
			break;
		out[o++] = *a++;
	}
	out[o] = '\0';
	return out;
}

/* A chat.completion as OpenAI's stream:true SSE: one delta chunk with the
 * whole message (tool calls indexed), one with finish_reason, one with the
 * usage, then [DONE]. Puts completion. Caller frees. */
static char *
sse_from_completion(json_object *completion)
{
	json_object *c0 = json_object_array_get_idx(jget(completion, "choices"), 0);
	json_object *msg = jget(c0, "message"), *calls = jget(msg, "tool_calls");
	const char *fin = jstr(c0, "finish_reason");
	json_object *chunk[3];
	size_t cap = 64, o = 0;
	char *out;

	for (size_t i = 0; calls != NULL && i < json_object_array_length(calls); i++)
		json_object_object_add(json_object_array_get_idx(calls, i), "index", json_object_new_int((int)i));
	for (int k = 0; k < 3; k++) {
		json_object *ch = json_object_new_array(), *c = json_object_new_object();

		chunk[k] = json_object_new_object();
		json_object_object_add(chunk[k], "id", json_object_get(jget(completion, "id")));
		json_object_object_add(chunk[k], "object", json_object_new_string("chat.completion.chunk"));
		json_object_object_add(chunk[k], "created", json_object_get(jget(completion, "created")));
		json_object_object_add(chunk[k], "model", json_object_get(jget(completion, "model")));
		if (k == 2) {
			json_object_object_add(chunk[k], "choices", ch);
			json_object_put(c);
			json_object_object_add(chunk[k], "usage", json_object_get(jget(completion, "usage")));
			continue;
		}
		json_object_object_add(c, "index", json_object_new_int(0));
		json_object_object_add(c, "delta", k == 0 ? json_object_get(msg) : json_object_new_object());
		json_object_object_add(c, "finish_reason", k == 1 && fin != NULL ? json_object_new_string(fin) : NULL);
		json_object_array_add(ch, c);
		json_object_object_add(chunk[k], "choices", ch);
	}
	for (int k = 0; k < 3; k++)
		cap += strlen(json_object_to_json_string_ext(chunk[k], JSON_C_TO_STRING_PLAIN)) + 16;
	out = malloc(cap);
	if (out != NULL) {
		for (int k = 0; k < 3; k++)
			o += (size_t)snprintf(out + o, cap - o, "data: %s\n\n",
			    json_object_to_json_string_ext(chunk[k], JSON_C_TO_STRING_PLAIN));
		snprintf(out + o, cap - o, "data: [DONE]\n\n");
	}
	for (int k = 0; k < 3; k++)
		json_object_put(chunk[k]);
	json_object_put(completion);
	return out;
}

static enum MHD_Result
model_request(struct MHD_Connection *c, const char *api, const char *path, struct rq *r,
    json_object *rec)
{
	json_object *body = parse(r->body, r->len), *fail = NULL, *tool_use = NULL;
	const char *answer = NULL, *model, *prompt;
	long delay, tin, tout, n, retry_after, fail_always;
	bool hold;
	bool no_usage;
	double cost;
	char failbuf[32] = "";
	unsigned status = 200;
	enum MHD_Result ret;

	record_headers(c, rec);
	if (body == NULL || !json_object_is_type(body, json_type_object)) {
		json_object_object_add(rec, "status", json_object_new_int(400));
		record_add(rec);
		json_object_put(body);
		return send_json(c, 400, api_error(api, 400, "stub: the body is not a JSON object"), 0);
	}
	describe(api, body, rec);
	model = jstr(body, "model");
	if (!auth_ok(c, api)) {
		json_object_object_add(rec, "status", json_object_new_int(401));
		record_add(rec);
		json_object_put(body);
		return send_json(c, 401, api_error(api, 401, strcmp(api, "anthropic") == 0
		    ? "invalid x-api-key" : "Incorrect API key provided"), 0);
	}
	if (strcmp(api, "anthropic") == 0 &&
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "anthropic-version") == NULL) {
		json_object_object_add(rec, "status", json_object_new_int(400));
		record_add(rec);
		json_object_put(body);
		return send_json(c, 400, api_error(api, 400, "anthropic-version: header is required"), 0);
	}
	if (model == NULL || model[0] == '\0') {
		json_object_object_add(rec, "status", json_object_new_int(400));
		record_add(rec);
		json_object_put(body);
		return send_json(c, 400, api_error(api, 400, "model is required"), 0);
	}

	/* Take what the script says for this request, under the lock. */
	pthread_mutex_lock(&lock);
	n = ++seq;
	hold = sc.hold > 0 && ++sc.nmodel == sc.hold;
	delay = sc.delay_ms;
	retry_after = sc.retry_after;
	fail_always = sc.fail_always;
	no_usage = sc.no_usage;
	cost = sc.cost;
	if (sc.fail != NULL && sc.next_fail < json_object_array_length(sc.fail))
		fail = json_object_get(json_object_array_get_idx(sc.fail, sc.next_fail++));
	prompt = json_object_get_string(jget(rec, "prompt"));
	for (size_t i = 0; answer == NULL && sc.rules != NULL && i < json_object_array_length(sc.rules); i++) {
		json_object *rule = json_object_array_get_idx(sc.rules, i);
		const char *needle = jstr(rule, "contains");

		if (needle != NULL && strstr(prompt, needle) != NULL)
			answer = jstr(rule, "answer");
	}
	if (answer == NULL && sc.answers != NULL && json_object_array_length(sc.answers) > 0) {
		size_t len = json_object_array_length(sc.answers);
		size_t i = sc.next_answer < len ? sc.next_answer : len - 1;

		if (fail == NULL && fail_always == 0)
			sc.next_answer++;
		answer = json_object_get_string(json_object_array_get_idx(sc.answers, i));
	}
	answer = frame_subst(answer != NULL ? answer : "YES\nstub default answer", r->body, r->len);
	tin = sc.tokens_in ? sc.tokens_in : 50 + 100 * (long)json_object_get_int(jget(rec, "image_count")) +
	    (long)strlen(prompt) / 4;
	tout = sc.tokens_out ? sc.tokens_out : (long)strlen(answer) / 4 + 1;
	json_object_object_add(rec, "seq", json_object_new_int64(n));
	if (strcmp(api, "anthropic") == 0 && jget(body, "tools") != NULL && sc.tool_use != NULL)
		tool_use = json_object_get(sc.tool_use);
	pthread_mutex_unlock(&lock);

	if (hold)
		hold_wait();
	sleep_ms(delay);
	if (fail == NULL && fail_always != 0)
		fail = json_object_new_int64(fail_always);
	if (fail != NULL) {
		snprintf(failbuf, sizeof failbuf, "%s", json_object_get_string(fail));
		json_object_object_add(rec, "fail", json_object_new_string(failbuf));
		if (json_object_is_type(fail, json_type_int))
			status = (unsigned)json_object_get_int(fail);
	}
	if (strcmp(failbuf, "close") == 0) {
		record_add(rec);
		ret = MHD_NO;
	} else if (strcmp(failbuf, "malformed") == 0) {
		json_object_object_add(rec, "status", json_object_new_int(200));
		record_add(rec);
		ret = send_text(c, 200, "text/html", "<html><body>502 Bad Gateway (stub malformed)</body></html>", 0);
	} else if (strcmp(failbuf, "empty") == 0) {
		json_object_object_add(rec, "status", json_object_new_int(200));
		record_add(rec);
		ret = send_text(c, 200, "application/json", "{}", 0);
	} else if (status != 200) {
		char msg[96];

		snprintf(msg, sizeof msg, "stub: injected HTTP %u", status);
		json_object_object_add(rec, "status", json_object_new_int((int)status));
		record_add(rec);
		ret = send_json(c, status, api_error(api, status, msg),
		    status == 429 || status == 503 ? retry_after : 0);
	} else {
		json_object_object_add(rec, "status", json_object_new_int(200));
		json_object_object_add(rec, "answer", json_object_new_string(answer));
		json_object_object_add(rec, "tokens_in", json_object_new_int64(tin));
		json_object_object_add(rec, "tokens_out", json_object_new_int64(tout));
		record_add(rec);
		if (tool_use != NULL)
			json_object_object_add(rec, "tool_use", json_object_get(tool_use));
		json_object *done = usage_adjust(answer_json(api, model, answer, tin, tout, n, tool_use),
		    no_usage, cost);

		if (strcmp(api, "openai") == 0 && json_object_get_boolean(jget(body, "stream"))) {
			char *sse = sse_from_completion(done);

			ret = sse != NULL ? send_text(c, 200, "text/event-stream", sse, 0) : MHD_NO;
			free(sse);
		} else {
			ret = send_json(c, 200, done, 0);
		}
	}
	json_object_put(tool_use);
	(void)path;
	json_object_put(fail);
	json_object_put(body);
	free((void *)(uintptr_t)answer);
	return ret;
}

/* OmniParser's POST /parse/: the scripted elements. */
static enum MHD_Result
parse_request(struct MHD_Connection *c, struct rq *r, json_object *rec)
{
	json_object *body = parse(r->body, r->len), *o, *imgs = json_object_new_array();
	const char *b64 = jstr(body, "base64_image");
	long delay;

	record_headers(c, rec);
	if (b64 != NULL)
		add_image(imgs, b64, "image/jpeg");
	json_object_object_add(rec, "image_count", json_object_new_int((int)json_object_array_length(imgs)));
	json_object_object_add(rec, "images", imgs);
	json_object_put(body);
	if (b64 == NULL) {
		json_object_object_add(rec, "status", json_object_new_int(422));
		record_add(rec);
		o = json_object_new_object();
		json_object_object_add(o, "detail", json_object_new_string("base64_image is required"));
		return send_json(c, 422, o, 0);
	}
	o = json_object_new_object();
	pthread_mutex_lock(&lock);
	json_object_object_add(rec, "seq", json_object_new_int64(++seq));
	json_object_object_add(o, "som_image_base64", json_object_new_string(""));
	json_object_object_add(o, "parsed_content_list", sc.parsed != NULL ? json_object_get(sc.parsed)
	    : json_object_new_array());
	delay = sc.delay_ms;
	pthread_mutex_unlock(&lock);
	json_object_object_add(o, "latency", json_object_new_double(0.01));
	json_object_object_add(rec, "status", json_object_new_int(200));
	record_add(rec);
	sleep_ms(delay);
	return send_json(c, 200, o, 0);
}

/* ---- routing ---------------------------------------------------------- */

static enum MHD_Result
control(struct MHD_Connection *c, const char *method, const char *url, struct rq *r)
{
	json_object *o;
	char err[128];
	const char *text;

	if (strcmp(url, "/_stub/ping") == 0) {
		o = json_object_new_object();
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		return send_json(c, 200, o, 0);
	}
	if (strcmp(url, "/_stub/script") == 0 && strcmp(method, "POST") == 0) {
		json_object *s = parse(r->body, r->len);
		int rc;

		pthread_mutex_lock(&lock);
		rc = script_load(s, err, sizeof err);
		pthread_mutex_unlock(&lock);
		json_object_put(s);
		o = json_object_new_object();
		json_object_object_add(o, "ok", json_object_new_boolean(rc == 0));
		if (rc != 0)
			json_object_object_add(o, "error", json_object_new_string(err));
		return send_json(c, rc == 0 ? 200 : 400, o, 0);
	}
	if (strcmp(url, "/_stub/script") == 0 && strcmp(method, "GET") == 0) {
		pthread_mutex_lock(&lock);
		o = script_json();
		pthread_mutex_unlock(&lock);
		return send_json(c, 200, o, 0);
	}
	if (strcmp(url, "/_stub/release") == 0 && strcmp(method, "POST") == 0) {
		o = json_object_new_object();
		pthread_mutex_lock(&lock);
		json_object_object_add(o, "released", json_object_new_int64(held_now));
		release_gen++;
		pthread_cond_broadcast(&held_cv);
		pthread_mutex_unlock(&lock);
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		return send_json(c, 200, o, 0);
	}
	if (strcmp(url, "/_stub/requests") == 0 && strcmp(method, "GET") == 0) {
		enum MHD_Result ret;

		pthread_mutex_lock(&lock);
		o = json_object_new_object();
		json_object_object_add(o, "requests", json_object_get(records));
		json_object_object_add(o, "dropped", json_object_new_int64(dropped));
		text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		ret = send_text(c, 200, "application/json", text, 0);
		json_object_put(o);
		pthread_mutex_unlock(&lock);
		return ret;
	}
	if ((strcmp(url, "/_stub/requests") == 0 && strcmp(method, "DELETE") == 0) ||
	    (strcmp(url, "/_stub/reset") == 0 && strcmp(method, "POST") == 0)) {
		pthread_mutex_lock(&lock);
		json_object_put(records);
		records = json_object_new_array();
		dropped = 0;
		if (strcmp(url, "/_stub/reset") == 0)
			script_clear();
		pthread_mutex_unlock(&lock);
		o = json_object_new_object();
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		return send_json(c, 200, o, 0);
	}
	o = json_object_new_object();
	json_object_object_add(o, "error", json_object_new_string("stub: unknown control route"));
	return send_json(c, 404, o, 0);
}

static enum MHD_Result
dispatch(struct MHD_Connection *c, const char *method, const char *url, struct rq *r)
{
	static const struct {
		const char *path, *method, *api;
	} routes[] = {
		{ "/api/chat", "POST", "ollama" },
		{ "/v1/chat/completions", "POST", "openai" },
		{ "/chat/completions", "POST", "openai" },
		{ "/v1/messages", "POST", "anthropic" },
		{ "/parse/", "POST", "omniparser" },
		{ "/api/tags", "GET", "health-ollama" },
		{ "/v1/models", "GET", "health-v1" },
		{ "/models", "GET", "health" },
	};
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	json_object *rec;

	if (strncmp(url, "/_stub/", 7) == 0)
		return control(c, method, url, r);
	if (r->too_big)
		return send_json(c, 413, api_error("openai", 413, "stub: body too large"), 0);
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		if (strcmp(url, routes[i].path) != 0)
			continue;
		if (strcmp(method, routes[i].method) != 0)
			return send_json(c, 405, api_error("openai", 405, "stub: method not allowed"), 0);
		rec = json_object_new_object();
		json_object_object_add(rec, "conn", json_object_new_int64(
		    ci != NULL ? (int64_t)(uintptr_t)ci->socket_context : 0));
		json_object_object_add(rec, "method", json_object_new_string(method));
		json_object_object_add(rec, "path", json_object_new_string(url));
		if (strncmp(routes[i].api, "health", 6) == 0) {
			bool v1 = strcmp(routes[i].api, "health-v1") == 0;
			json_object *reply;

			json_object_object_add(rec, "api", json_object_new_string("health"));
			record_headers(c, rec);
			if (v1 && !auth_ok(c, "openai")) {
				json_object_object_add(rec, "status", json_object_new_int(401));
				record_add(rec);
				return send_json(c, 401, api_error("openai", 401, "Incorrect API key provided"), 0);
			}
			json_object_object_add(rec, "status", json_object_new_int(200));
			record_add(rec);
			pthread_mutex_lock(&lock);
			reply = models_list(strcmp(routes[i].api, "health-ollama") == 0);
			pthread_mutex_unlock(&lock);
			return send_json(c, 200, reply, 0);
		}
		json_object_object_add(rec, "api", json_object_new_string(routes[i].api));
		if (strcmp(routes[i].api, "omniparser") == 0)
			return parse_request(c, r, rec);
		return model_request(c, routes[i].api, url, r, rec);
	}
	return send_json(c, 404, api_error("ollama", 404, "stub: no such route"), 0);
}

static enum MHD_Result
on_access(void *cls, struct MHD_Connection *c, const char *url, const char *method,
    const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct rq *r = *con_cls;

	(void)cls;
	(void)version;
	if (r == NULL) {
		r = calloc(1, sizeof *r);
		if (r == NULL)
			return MHD_NO;
		*con_cls = r;
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (!r->too_big && r->len + *upload_size <= MAX_BODY) {
			if (r->len + *upload_size + 1 > r->alloc) {
				r->alloc = (r->len + *upload_size + 1) * 2;
				r->body = xrealloc(r->body, r->alloc);
			}
			memcpy(r->body + r->len, upload, *upload_size);
			r->len += *upload_size;
			r->body[r->len] = '\0';
		} else {
			r->too_big = true;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	return dispatch(c, method, url, r);
}

static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct rq *r = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (r != NULL) {
		free(r->body);
		free(r);
		*con_cls = NULL;
	}
}

static void
on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
    enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)c;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		pthread_mutex_lock(&lock);
		*socket_context = (void *)++conn_counter;
		pthread_mutex_unlock(&lock);
	}
}

/* ---- main ------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr, "usage: vision-stub [--port N] [--port-file F] [--key K] [--script FILE]\n");
	exit(2);
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t n = 0, a = 0, got;

	if (f == NULL)
		return NULL;
	do {
		if (n + 4096 > a)
			p = xrealloc(p, a = (a + 4096) * 2);
		got = fread(p + n, 1, a - n, f);
		n += got;
	} while (got > 0);
	fclose(f);
	*len = n;
	return p;
}

int
main(int argc, char **argv)
{
	const char *port_file = NULL, *script_file = NULL;
	struct sockaddr_in sa;
	socklen_t salen = sizeof sa;
	struct MHD_Daemon *d;
	sigset_t set;
	int port = 0, fd, one = 1, sig;

	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--port") == 0)
			port = atoi(argv[++i]);
		else if (strcmp(argv[i], "--port-file") == 0)
			port_file = argv[++i];
		else if (strcmp(argv[i], "--key") == 0)
			api_key = argv[++i];
		else if (strcmp(argv[i], "--script") == 0)
			script_file = argv[++i];
		else
			usage();
	}
	records = json_object_new_array();
	if (script_file != NULL) {
		size_t len = 0;
		char *text = slurp(script_file, &len), err[128];
		json_object *s = parse(text, len);

		if (script_load(s, err, sizeof err) != 0) {
			fprintf(stderr, "vision-stub: %s: %s\n", script_file, text ? err : strerror(errno));
			return 1;
		}
		json_object_put(s);
		free(text);
	}

	/* Block the quit signals before any thread starts, then sigwait. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &salen) != 0) {
		perror("vision-stub: listen");
		return 1;
	}
	d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
	    MHD_USE_POLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_access, NULL,
	    MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
	    MHD_OPTION_END);
	if (d == NULL) {
		fprintf(stderr, "vision-stub: libmicrohttpd failed to start\n");
		return 1;
	}
	port = ntohs(sa.sin_port);
	if (port_file != NULL) {
		char tmp[4096];
		FILE *f;

		snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
		f = fopen(tmp, "w");
		if (f == NULL || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 || rename(tmp, port_file) != 0) {
			perror("vision-stub: port file");
			return 1;
		}
	}
	fprintf(stderr, "vision-stub: listening on 127.0.0.1:%d%s\n", port, api_key ? " (key checked)" : "");
	while (sigwait(&set, &sig) != 0)
		;
	pthread_mutex_lock(&lock);
	quitting = 1;
	pthread_cond_broadcast(&held_cv);
	pthread_mutex_unlock(&lock);
	MHD_stop_daemon(d);
	close(fd);
	pthread_mutex_lock(&lock);
	script_clear();
	json_object_put(records);
	pthread_mutex_unlock(&lock);
	return 0;
}
