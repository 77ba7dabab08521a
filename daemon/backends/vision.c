/*
 * vision.c - the backend table (one row per backend: name, init, call,
 * parse, endpoints, headers), settings, the prompt, retries and health.
 * See vision.h; the wire formats are in vision_wire.c, the verdict parser
 * in vision_verdict.c.
 */
#include "vision.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/jx.h"
#include "core/log.h"
#include "httpc.h"
#include "vision_int.h"

#define DEF_TIMEOUT_MS   60000L
#define DEF_RETRIES      2
#define DEF_BACKOFF_MS   250L
#define MAX_BACKOFF_MS   8000L
#define MAX_RETRY_AFTER  10000L     /* a longer Retry-After is cut to this */
#define HEALTH_MAX_MS    5000L
#define HEALTH_MAX_REPLY (16 * 1024 * 1024)   /* openrouter's /models is large */

static const char system_prompt[] =
    "You are SmartWait, a careful screen-state checker for a desktop automation agent. "
    "You look at screenshots of a computer screen and decide whether a stated condition is true "
    "right now. Be decisive: answer YES when the visible evidence reasonably shows the condition "
    "holds. Always follow the answer format exactly.";

/* ---- settings --------------------------------------------------------- */

static const char *
pick(const char *s, const char *def)
{
	return s != NULL && s[0] != '\0' ? s : def;
}

static bool
has_ctl(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static int
check_url(const char *url, const char *field, struct derr *e)
{
	if ((strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) ||
	    strlen(url) > 1000 || has_ctl(url) || strchr(url, ' ') != NULL)
		return derr_set(e, DERR_INVALID, field, "%s must be an http:// or https:// URL, not \"%.*s\"",
		    field, utf8_prec(url, 100), url);
	return 0;
}

static int
check_text(const char *s, size_t max, const char *field, struct derr *e)
{
	if (strlen(s) > max || has_ctl(s))
		return derr_set(e, DERR_INVALID, field, "%s must be at most %zu printable characters", field, max);
	return 0;
}

/* A copy of url without trailing slashes. */
static char *
base_copy(const char *url)
{
	size_t n = strlen(url);

	while (n > 0 && url[n - 1] == '/')
		n--;
	return xstrndup(url, n);
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ---- the backends ------------------------------------------------------ */

static void
ollama_init(struct vision *v, const struct vision_settings *s, struct vision_conf *c)
{
	c->url = pick(s->ollama_url, "http://127.0.0.1:11434");
	c->url_field = "ollama_url";
	c->model = pick(s->ollama_model, "minicpm-v");
	v->keep_alive = xstrdup(pick(s->ollama_keep_alive, "10m"));
}

static void
vllm_init(struct vision *v, const struct vision_settings *s, struct vision_conf *c)
{
	c->url = pick(s->vllm_url, "http://127.0.0.1:8000");
	c->url_field = "vllm_url";
	c->model = pick(s->vllm_model, "ui-tars-1.5-7b");
	c->key = pick(s->vllm_api_key, NULL);
	c->key_field = "vllm_api_key";
}

static void
claude_init(struct vision *v, const struct vision_settings *s, struct vision_conf *c)
{
	c->url = pick(s->claude_url, "https://api.anthropic.com");
	c->url_field = "claude_url";
	c->model = pick(s->claude_model, "claude-sonnet-4-20250514");
	c->key = pick(s->anthropic_api_key, NULL);
	c->key_field = "anthropic_api_key";
}

static void
openrouter_init(struct vision *v, const struct vision_settings *s, struct vision_conf *c)
{
	c->url = pick(s->openrouter_url, "https://openrouter.ai/api/v1");
	c->url_field = "openrouter_url";
	c->model = pick(s->openrouter_model, "google/gemini-2.0-flash-001");
	c->key = pick(s->openrouter_api_key, NULL);
	c->key_field = "openrouter_api_key";
}

static void
passthrough_init(struct vision *v, const struct vision_settings *s, struct vision_conf *c)
{
	c->model = "";
}

#define BEARER "Authorization: Bearer "

/* One row per backend (vision_int.h). */
static const struct vbackend backends[] = {
	{ .name = "ollama", .init = ollama_init, .call = vwire_ollama_call,
	  .parse = vwire_ollama_parse, .chat_path = "/api/chat", .health_path = "/api/tags",
	  .pulls_models = true },
	{ .name = "vllm", .init = vllm_init, .call = vwire_openai_call, .parse = vwire_openai_parse,
	  .key_env = "the vLLM API key", .auth_prefix = BEARER, .v1_optional = true,
	  .chat_path = "/chat/completions", .health_path = "/models" },
	{ .name = "claude", .init = claude_init, .call = vwire_claude_call,
	  .parse = vwire_claude_parse, .key_required = true, .key_env = "ANTHROPIC_API_KEY",
	  .auth_prefix = "x-api-key: ", .v1_optional = true, .chat_path = "/messages",
	  .health_detail = "ANTHROPIC_API_KEY is set (not verified: no call is made)",
	  .extra_headers = { "anthropic-version: 2023-06-01" } },
	{ .name = "openrouter", .init = openrouter_init, .call = vwire_openai_call,
	  .parse = vwire_openai_parse, .key_required = true, .key_env = "OPENROUTER_API_KEY",
	  .auth_prefix = BEARER, .chat_path = "/chat/completions", .health_path = "/models",
	  .extra_headers = { "HTTP-Referer: https://github.com/detm/detm", "X-Title: detm smart wait" } },
	{ .name = "passthrough", .init = passthrough_init,
	  .health_detail = "no vision model: the wait engine decides alone" },
};

static const struct vbackend *
backend_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_LEN(backends); i++)
		if (strcmp(backends[i].name, name) == 0)
			return &backends[i];
	return NULL;
}

/* ---- vision_new ------------------------------------------------------- */

/* Step 1: the row's settings are well formed (URL, model, key). */
static int
check_conf(const struct vision *v, const struct vision_conf *c, struct derr *e)
{
	if (c->url != NULL && check_url(c->url, c->url_field, e) != 0)
		return -1;
	if (check_text(c->model, 127, "model", e) != 0)
		return -1;
	if (v->keep_alive != NULL && check_text(v->keep_alive, 32, "ollama_keep_alive", e) != 0)
		return -1;
	if (v->be->key_required && c->key == NULL)
		return derr_set(e, DERR_INVALID, c->key_field, "vision backend %s needs an API key: set %s",
		    v->be->name, v->be->key_env);
	if (c->key != NULL && check_text(c->key, 512, c->key_field, e) != 0)
		return -1;
	return 0;
}

/* Step 2: timeouts and retries (shared by every backend). */
static int
set_limits(struct vision *v, const struct vision_settings *s, struct derr *e)
{
	if (s->timeout_ms != 0 && (s->timeout_ms < 100 || s->timeout_ms > 600000))
		return derr_set(e, DERR_INVALID, "timeout_ms", "vision timeout must be 100..600000 ms, not %ld",
		    s->timeout_ms);
	if (s->max_retries > 10 || s->max_retries < VISION_NO_RETRIES)
		return derr_set(e, DERR_INVALID, "max_retries", "vision max_retries must be 0..10, not %d",
		    s->max_retries);
	if (s->retry_backoff_ms != 0 && (s->retry_backoff_ms < 1 || s->retry_backoff_ms > 10000))
		return derr_set(e, DERR_INVALID, "retry_backoff_ms", "vision retry backoff must be 1..10000 ms");
	v->timeout_ms = s->timeout_ms ? s->timeout_ms : DEF_TIMEOUT_MS;
	v->max_retries = s->max_retries == 0 ? DEF_RETRIES : s->max_retries < 0 ? 0 : s->max_retries;
	v->backoff_ms = s->retry_backoff_ms ? s->retry_backoff_ms : DEF_BACKOFF_MS;
	return 0;
}

/* Step 3: the endpoints and request headers the row asks for. */
static void
set_wire(struct vision *v, const struct vision_conf *c)
{
	const struct vbackend *be = v->be;
	int nh = 0;

	if (c->url != NULL) {
		const char *v1;

		v->base_url = base_copy(c->url);
		v1 = be->v1_optional && !ends_with(v->base_url, "/v1") ? "/v1" : "";
		v->chat_url = xasprintf("%s%s%s", v->base_url, v1, be->chat_path);
		if (be->health_path != NULL)
			v->health_url = xasprintf("%s%s%s", v->base_url, v1, be->health_path);
	}
	if (c->key != NULL && be->auth_prefix != NULL)
		v->auth_header = xasprintf("%s%s", be->auth_prefix, c->key);
	if (v->auth_header != NULL)
		v->headers[nh++] = v->auth_header;
	for (size_t i = 0; i < ARRAY_LEN(be->extra_headers) && be->extra_headers[i] != NULL; i++)
		v->headers[nh++] = be->extra_headers[i];
	v->headers[nh] = NULL;
}

struct vision *
vision_new(const struct vision_settings *s, struct derr *e)
{
	static const struct vision_settings none;
	struct vision_conf c = { 0 };
	const struct vbackend *be;
	const char *backend;
	struct vision *v;

	if (s == NULL)
		s = &none;
	backend = pick(s->backend, "ollama");
	be = backend_find(backend);
	if (be == NULL) {
		derr_set(e, DERR_INVALID, "backend",
		    "unknown vision backend \"%.*s\" (ollama, vllm, claude, openrouter or passthrough)",
		    utf8_prec(backend, 64), backend);
		return NULL;
	}
	v = xcalloc(1, sizeof *v);
	v->be = be;
	be->init(v, s, &c);
	if (check_conf(v, &c, e) != 0 || set_limits(v, s, e) != 0) {
		vision_free(v);
		return NULL;
	}
	v->model = xstrdup(c.model);
	set_wire(v, &c);
	return v;
}

void
vision_free(struct vision *v)
{
	if (v == NULL)
		return;
	free(v->base_url);
	free(v->chat_url);
	free(v->health_url);
	free(v->model);
	free(v->keep_alive);
	free(v->auth_header);
	free(v);
}

const char *
vision_backend(const struct vision *v)
{
	return v->be->name;
}

const char *
vision_model(const struct vision *v)
{
	return v->model;
}

bool
vision_is_passthrough(const struct vision *v)
{
	return v->be->call == NULL;
}

/* ---- evaluation -------------------------------------------------------- */

static char *
build_prompt(const char *condition, size_t n, double elapsed_s)
{
	char frames[256], since[96] = "";

	/* As the Python prompt did: how long the agent has been waiting, so
	 * "has it finished?" can weigh a stalled screen. */
	if (elapsed_s >= 0 && elapsed_s < 60)
		snprintf(since, sizeof since, "WAITING FOR: %.0fs\n", elapsed_s);
	else if (elapsed_s >= 60 && elapsed_s < 3600)
		snprintf(since, sizeof since, "WAITING FOR: %.1fmin\n", elapsed_s / 60);
	else if (elapsed_s >= 3600)
		snprintf(since, sizeof since, "WAITING FOR: %.1fh\n", elapsed_s / 3600);

	if (n > 1)
		snprintf(frames, sizeof frames,
		    "You are given %zu screenshots of the same screen in time order, oldest first. "
		    "Judge the condition on the LAST one (the current screen); use the earlier ones "
		    "only to see what is changing.\n", n);
	else
		snprintf(frames, sizeof frames, "Judge the condition on the screenshot.\n");
	return xasprintf(
	    "CONDITION: %s\n%s\n%s"
	    "Answer in exactly two lines, then the FINAL_JSON line:\n"
	    "Line 1: YES, NO or PARTIAL, alone on the line.\n"
	    "  YES = the condition is clearly true now.\n"
	    "  PARTIAL = not true yet, but visibly in progress or partly true "
	    "(a progress bar, a page still loading).\n"
	    "  NO = not true.\n"
	    "Line 2: one short sentence naming the visible evidence.\n"
	    "Then one more line, exactly in this form (JSON on one line):\n"
	    "FINAL_JSON: {\"decision\": \"resolved\" | \"partial\" | \"watching\", "
	    "\"confidence\": 0.0 to 1.0, \"evidence\": [\"what you see that decides it\"], "
	    "\"summary\": \"one sentence\"}\n"
	    "(resolved = YES, partial = PARTIAL, watching = NO.)",
	    condition, since, frames);
}

static long
backoff(const struct vision *v, int attempt, long retry_after_ms)
{
	unsigned seed = (unsigned)mono_us() ^ (unsigned)attempt;
	long d = v->backoff_ms;

	for (int i = 1; i < attempt && d < MAX_BACKOFF_MS; i++)
		d *= 2;
	if (d > MAX_BACKOFF_MS)
		d = MAX_BACKOFF_MS;
	d = d * 3 / 4 + (long)(rand_r(&seed) % (unsigned)(d / 2 + 1));   /* +-25 % jitter */
	if (retry_after_ms > d)
		d = retry_after_ms < MAX_RETRY_AFTER ? retry_after_ms : MAX_RETRY_AFTER;
	return d;
}

/* A FINAL_JSON line into out: the verdict, and as the reason the summary
 * (or, without one, the first evidence; or the line 2 sentence). */
static int
final_read(const char *text, struct vision_result *out)
{
	struct vision_final f;

	if (vision_parse_final(text, &f) != 0)
		return -1;
	out->parsed = true;
	out->structured = true;
	out->verdict = f.verdict;
	out->confidence = f.confidence;
	memcpy(out->summary, f.summary, sizeof out->summary);
	memcpy(out->evidence, f.evidence, sizeof out->evidence);
	if (f.summary[0] != '\0') {
		snprintf(out->reason, sizeof out->reason, "%s", f.summary);
	} else {
		enum vision_verdict ignored;

		if (vision_parse_verdict(text, &ignored, out->reason, sizeof out->reason) != 0)
			snprintf(out->reason, sizeof out->reason, "%.300s", f.evidence[0] ? f.evidence : "(no summary)");
	}
	return 0;
}

/* What one attempt came to. */
enum outcome { OK, TRANSIENT, FATAL };

static enum outcome
judge(struct vision *v, int rc, struct httpc_resp *rs, struct vision_result *out,
    char *msg, size_t cap)
{
	char etext[300];

	out->http_status = rs->status;
	if (rc == HTTPC_ECONNECT) {
		snprintf(msg, cap, "cannot reach %s: %s", v->chat_url, rs->error);
		return TRANSIENT;
	}
	if (rc == HTTPC_ETIMEOUT) {
		snprintf(msg, cap, "no answer from %s within %ld ms", v->chat_url, v->timeout_ms);
		return FATAL;
	}
	if (rc != HTTPC_OK) {
		snprintf(msg, cap, "%s", rs->error);
		return FATAL;
	}
	if (rs->status >= 200 && rs->status <= 299) {
		const char *text, *model;
		char err[128];

		if (rs->json != NULL && vwire_reply(v, rs->json, &text, &out->tokens_in, &out->tokens_out,
		    &model, err, sizeof err) == 0) {
			if (final_read(text, out) != 0)
				out->parsed = vision_parse_verdict(text, &out->verdict, out->reason,
				    sizeof out->reason) == 0;
			if (model != NULL && model[0] != '\0')
				snprintf(out->model, sizeof out->model, "%s", model);
			if (!out->parsed)
				log_warn("vision %s: %s", v->be->name, out->reason);
			return OK;
		}
		if (rs->json != NULL && vwire_error_text(rs->json, etext, sizeof etext) == 0) {
			snprintf(msg, cap, "HTTP %ld with an error: %s", rs->status, etext);
			return vwire_error_transient(rs->json) ? TRANSIENT : FATAL;
		}
		snprintf(msg, cap, "HTTP %ld but %s: %.*s", rs->status,
		    rs->json == NULL ? "the body is not JSON" : err, utf8_prec(rs->excerpt, 120),
		    rs->excerpt);
		return TRANSIENT;
	}
	if (vwire_error_text(rs->json, etext, sizeof etext) != 0)
		snprintf(etext, sizeof etext, "%.*s",
		    utf8_prec(rs->excerpt[0] ? rs->excerpt : "(empty body)", 160),
		    rs->excerpt[0] ? rs->excerpt : "(empty body)");
	if (rs->status == 429 || rs->status >= 500) {
		snprintf(msg, cap, "HTTP %ld: %s", rs->status, etext);
		return TRANSIENT;
	}
	if (rs->status == 401 || rs->status == 403)
		snprintf(msg, cap, "HTTP %ld: %s; check %s", rs->status, etext,
		    v->be->key_env != NULL ? v->be->key_env : "the backend's API key");
	else if (rs->status == 404 && v->be->pulls_models)
		snprintf(msg, cap, "HTTP 404: %s (is the model pulled? ollama pull %s)", etext, v->model);
	else
		snprintf(msg, cap, "HTTP %ld: %s", rs->status, etext);
	return FATAL;
}

int
vision_eval(struct vision *v, const char *condition, const struct vision_image *images,
    size_t n, struct vision_result *out, struct derr *e)
{
	return vision_eval_at(v, condition, -1, images, n, out, e);
}

int
vision_eval_at(struct vision *v, const char *condition, double elapsed_s,
    const struct vision_image *images, size_t n, struct vision_result *out, struct derr *e)
{
	int64_t t0 = mono_us();
	json_object *body;
	char *prompt;
	char msg[400] = "";
	enum outcome oc = FATAL;

	memset(out, 0, sizeof *out);
	out->verdict = VISION_NO;
	out->confidence = -1;
	snprintf(out->model, sizeof out->model, "%s", v->model);
	if (condition == NULL || condition[0] == '\0' || strlen(condition) > VISION_MAX_CONDITION)
		return derr_set(e, DERR_INVALID, "condition", "the condition must be 1..%d bytes",
		    VISION_MAX_CONDITION);
	if (images == NULL || n < 1 || n > VISION_MAX_IMAGES)
		return derr_set(e, DERR_INVALID, "images", "vision needs 1..%d images, not %zu",
		    VISION_MAX_IMAGES, n);
	for (size_t i = 0; i < n; i++) {
		if (images[i].jpeg == NULL || images[i].len < 4 || images[i].len > VISION_MAX_IMAGE_BYTES ||
		    images[i].jpeg[0] != 0xFF || images[i].jpeg[1] != 0xD8)
			return derr_set(e, DERR_INVALID, "images",
			    "image %zu is not a JPEG of at most %d bytes", i, VISION_MAX_IMAGE_BYTES);
	}
	if (v->be->call == NULL) {
		snprintf(out->reason, sizeof out->reason, "passthrough backend: no vision model evaluates conditions");
		out->parsed = true;
		return 0;
	}

	prompt = build_prompt(condition, n, elapsed_s);
	body = v->be->call(v, system_prompt, prompt, images, n);
	for (int attempt = 1;; attempt++) {
		struct httpc_req rq = { "POST", v->chat_url, v->headers, body, v->timeout_ms, VISION_MAX_REPLY };
		struct httpc_resp rs;
		int rc;

		out->attempts = attempt;
		rc = httpc_do(&rq, &rs);
		oc = judge(v, rc, &rs, out, msg, sizeof msg);
		if (oc != TRANSIENT || attempt > v->max_retries) {
			httpc_resp_free(&rs);
			break;
		}
		log_debug("vision %s: attempt %d: %s; retrying", v->be->name, attempt, msg);
		sleep_ms(backoff(v, attempt, rs.retry_after_ms));
		httpc_resp_free(&rs);
	}
	json_object_put(body);
	free(prompt);
	out->latency_us = mono_us() - t0;
	if (oc == OK)
		return 0;
	if (out->attempts > 1)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "vision backend %s: %s (after %d attempts)",
		    v->be->name, msg, out->attempts);
	return derr_set(e, DERR_UNAVAILABLE, NULL, "vision backend %s: %s", v->be->name, msg);
}

/* ---- health ------------------------------------------------------------ */

/* Whether a model list (ollama "models":[{name}], OpenAI "data":[{id}])
 * names model; ollama's "x" also matches "x:latest". *count = list size. */
static bool
lists_model(json_object *reply, const char *model, size_t *count)
{
	json_object *arr;
	size_t mlen = strlen(model);

	*count = 0;
	if (!json_object_object_get_ex(reply, "models", &arr) && !json_object_object_get_ex(reply, "data", &arr))
		return false;
	if (!json_object_is_type(arr, json_type_array))
		return false;
	*count = json_object_array_length(arr);
	for (size_t i = 0; i < *count; i++) {
		json_object *m = json_object_array_get_idx(arr, i);
		static const char *const keys[] = { "name", "model", "id" };

		for (size_t k = 0; k < ARRAY_LEN(keys); k++) {
			json_object *x;
			const char *s;

			if (!json_object_object_get_ex(m, keys[k], &x) || !json_object_is_type(x, json_type_string))
				continue;
			s = json_object_get_string(x);
			if (strcmp(s, model) == 0 ||
			    (strncmp(s, model, mlen) == 0 && strcmp(s + mlen, ":latest") == 0))
				return true;
		}
	}
	return false;
}

json_object *
vision_health(struct vision *v)
{
	json_object *o = json_object_new_object();
	struct httpc_req rq = { "GET", v->health_url, v->headers, NULL,
		v->timeout_ms < HEALTH_MAX_MS ? v->timeout_ms : HEALTH_MAX_MS, HEALTH_MAX_REPLY };
	struct httpc_resp rs;
	char detail[400];
	bool ok = false;
	size_t count;
	int rc;

	json_object_object_add(o, "backend", json_object_new_string(v->be->name));
	jx_add_str(o, "model", v->be->call == NULL ? NULL : v->model);
	jx_add_str(o, "url", v->base_url);
	if (v->health_url == NULL) {         /* the row makes no health call */
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		json_object_object_add(o, "reachable", json_object_new_boolean(1));
		json_object_object_add(o, "detail", json_object_new_string(v->be->health_detail));
		return o;
	}
	rc = httpc_do(&rq, &rs);
	if (rc != HTTPC_OK) {
		snprintf(detail, sizeof detail, "%s: %s", v->health_url, rs.error);
	} else if (rs.status < 200 || rs.status > 299) {
		char etext[300];

		if (vwire_error_text(rs.json, etext, sizeof etext) != 0)
			snprintf(etext, sizeof etext, "%.*s", utf8_prec(rs.excerpt, 160),
			    rs.excerpt);
		snprintf(detail, sizeof detail, "%s: HTTP %ld: %s%s%s", v->health_url, rs.status, etext,
		    (rs.status == 401 || rs.status == 403) && v->be->key_env ? "; check " : "",
		    (rs.status == 401 || rs.status == 403) && v->be->key_env ? v->be->key_env : "");
	} else if (rs.json == NULL) {
		snprintf(detail, sizeof detail, "%s: HTTP %ld but not JSON: %.*s", v->health_url,
		    rs.status, utf8_prec(rs.excerpt, 120), rs.excerpt);
	} else if (lists_model(rs.json, v->model, &count)) {
		ok = true;
		snprintf(detail, sizeof detail, "model %s is available (%zu listed)", v->model, count);
	} else if (v->be->pulls_models) {
		snprintf(detail, sizeof detail, "ollama answers but model %s is not pulled (ollama pull %s)",
		    v->model, v->model);
	} else {
		snprintf(detail, sizeof detail, "%s answers but does not list model %s (%zu models listed)",
		    v->be->name, v->model, count);
	}
	json_object_object_add(o, "ok", json_object_new_boolean(ok));
	json_object_object_add(o, "reachable", json_object_new_boolean(rc == HTTPC_OK));
	json_object_object_add(o, "detail", json_object_new_string(detail));
	json_object_object_add(o, "latency_ms", json_object_new_int64(rs.latency_us / 1000));
	httpc_resp_free(&rs);
	return o;
}
