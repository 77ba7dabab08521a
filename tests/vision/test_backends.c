/*
 * test_backends.c - each backend against bin/vision-stub: verdicts, the
 * request on the wire (path, model, auth, images, prompt), tokens, retries,
 * auth failures, timeouts, concurrency, health and vision_new errors.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vt.h"

static void
settings_for(const char *backend, struct vision_settings *s)
{
	memset(s, 0, sizeof *s);
	s->backend = backend;
	s->ollama_url = vt_url;
	s->vllm_url = vt_url;
	s->vllm_api_key = vt_key;
	s->claude_url = vt_url;
	s->anthropic_api_key = vt_key;
	s->openrouter_url = vt_url;
	s->openrouter_api_key = vt_key;
	s->timeout_ms = 5000;
	s->retry_backoff_ms = 5;
}

static struct vision *
new_for(const char *backend)
{
	struct vision_settings s;
	struct derr e = { 0 };
	struct vision *v;

	settings_for(backend, &s);
	v = vision_new(&s, &e);
	CHECK(v != NULL);
	if (v == NULL)
		fprintf(stderr, "    vision_new(%s): %s\n", backend, e.message);
	return v;
}

static const char *
sget(json_object *o, const char *a, const char *b)
{
	json_object *x;

	if (!json_object_object_get_ex(o, a, &x))
		return NULL;
	if (b != NULL && !json_object_object_get_ex(x, b, &x))
		return NULL;
	return json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL;
}

static long
lget(json_object *o, const char *a, const char *b)
{
	json_object *x;

	if (!json_object_object_get_ex(o, a, &x))
		return -999;
	if (b != NULL && !json_object_object_get_ex(x, b, &x))
		return -999;
	return (long)json_object_get_int64(x);
}

static bool
contains(const char *s, const char *needle)
{
	return s != NULL && strstr(s, needle) != NULL;
}

/* The recorded model requests (health probes left out); a new array. */
static json_object *
model_requests(void)
{
	json_object *all = vt_requests(), *out = json_object_new_array();

	for (size_t i = 0; i < json_object_array_length(all); i++) {
		json_object *r = json_object_array_get_idx(all, i);

		if (!contains(sget(r, "api", NULL), "health"))
			json_object_array_add(out, json_object_get(r));
	}
	json_object_put(all);
	return out;
}

/* Checks one recorded image against what was sent. */
static void
check_image(json_object *rec, size_t i, const struct vision_image *im, int w, int h)
{
	json_object *imgs, *x;
	char fnv[17];

	vt_fnv1a(im->jpeg, im->len, fnv);
	CHECK(json_object_object_get_ex(rec, "images", &imgs) && json_object_array_length(imgs) > i);
	x = json_object_array_get_idx(imgs, i);
	CHECK(x != NULL && json_object_get_boolean(json_object_object_get(x, "b64_ok")));
	CHECK(x != NULL && json_object_get_boolean(json_object_object_get(x, "jpeg")));
	CHECK(lget(x, "bytes", NULL) == (long)im->len);
	CHECK(contains(sget(x, "fnv1a", NULL), fnv));
	CHECK(lget(x, "width", NULL) == w && lget(x, "height", NULL) == h);
}

/*
 * The common backend test: three verdicts with one frame, then a two-frame
 * call, then the recorded requests.
 */
static void
run_backend(const char *backend, const char *path, const char *api)
{
	static const struct {
		enum vision_verdict v;
		const char *reason;
	} want[] = {
		{ VISION_YES, "The dialog is gone." }, { VISION_NO, "still spinning" },
		{ VISION_PARTIAL, "progress bar at 60%" }, { VISION_PARTIAL, "progress bar at 60%" },
	};
	struct vision *v = new_for(backend);
	struct vision_result res[4];
	struct vision_image two[2] = { vt_jpeg_b, vt_jpeg_a };
	char cond[4][96];
	json_object *reqs;
	struct derr e;
	long conn0 = -1;

	if (v == NULL)
		return;
	CHECK(strcmp(vision_backend(v), backend) == 0 && !vision_is_passthrough(v));
	vt_reset();
	vt_script("{\"answers\":[\"YES\\nThe dialog is gone.\",\"NO: still spinning\","
	    "\"PARTIAL\\nprogress bar at 60%\"]}");
	for (int i = 0; i < 4; i++) {
		int rc;

		snprintf(cond[i], sizeof cond[i], "the Save dialog is closed [%s-%d]", backend, i);
		rc = vision_eval(v, cond[i], i < 3 ? &vt_jpeg_a : two, i < 3 ? 1 : 2, &res[i], &e);
		CHECK(rc == 0);
		if (rc != 0) {
			fprintf(stderr, "    %s eval %d: %s\n", backend, i, e.message);
			continue;
		}
		CHECK(res[i].verdict == want[i].v && res[i].parsed);
		CHECK(strstr(res[i].reason, want[i].reason) != NULL);
		CHECK(res[i].attempts == 1 && res[i].http_status == 200);
		CHECK(res[i].tokens_in > 0 && res[i].tokens_out > 0);
		CHECK(strcmp(res[i].model, vision_model(v)) == 0);
		CHECK(res[i].latency_us > 0);
	}

	reqs = model_requests();
	CHECK(json_object_array_length(reqs) == 4);
	for (size_t i = 0; i < json_object_array_length(reqs) && i < 4; i++) {
		json_object *r = json_object_array_get_idx(reqs, i);

		CHECK(contains(sget(r, "path", NULL), path) && strcmp(sget(r, "path", NULL), path) == 0);
		CHECK(contains(sget(r, "api", NULL), api));
		CHECK(contains(sget(r, "model", NULL), vision_model(v)));
		CHECK(contains(sget(r, "prompt", NULL), cond[i]));
		CHECK(contains(sget(r, "prompt", NULL), "YES, NO or PARTIAL"));
		CHECK(contains(sget(r, "system", NULL), "SmartWait"));
		CHECK(lget(r, "status", NULL) == 200);
		CHECK(lget(r, "tokens_in", NULL) == res[i].tokens_in);
		CHECK(lget(r, "tokens_out", NULL) == res[i].tokens_out);
		CHECK(lget(r, "image_count", NULL) == (i < 3 ? 1 : 2));
		if (i < 3) {
			check_image(r, 0, &vt_jpeg_a, 64, 48);
		} else {
			check_image(r, 0, &vt_jpeg_b, 40, 30);     /* oldest first */
			check_image(r, 1, &vt_jpeg_a, 64, 48);
			CHECK(contains(sget(r, "prompt", NULL), "2 screenshots"));
		}
		/* One persistent connection for all four calls. */
		if (i == 0)
			conn0 = lget(r, "conn", NULL);
		CHECK(lget(r, "conn", NULL) == conn0);

		if (strcmp(api, "ollama") == 0) {
			CHECK(contains(sget(r, "keep_alive", NULL), "10m"));
			CHECK(json_object_object_get(r, "stream") != NULL &&
			    !json_object_get_boolean(json_object_object_get(r, "stream")));
			CHECK(lget(r, "options", "temperature") == 0);
			CHECK(sget(r, "headers", "authorization") == NULL);
		} else if (strcmp(api, "openai") == 0) {
			char bearer[256];

			snprintf(bearer, sizeof bearer, "Bearer %s", vt_key);
			CHECK(contains(sget(r, "headers", "authorization"), bearer));
			CHECK(lget(r, "temperature", NULL) == 0 && lget(r, "max_tokens", NULL) == 100);
		} else {
			CHECK(contains(sget(r, "headers", "x-api-key"), vt_key));
			CHECK(contains(sget(r, "headers", "anthropic-version"), "2023-06-01"));
			CHECK(lget(r, "max_tokens", NULL) == 100);
		}
		if (strcmp(backend, "openrouter") == 0)
			CHECK(sget(r, "headers", "x-title") != NULL);
		if (strcmp(api, "ollama") != 0) {
			json_object *im = json_object_array_get_idx(json_object_object_get(r, "images"), 0);

			CHECK(contains(sget(im, "media_type", NULL), "image/jpeg"));
		}
	}
	json_object_put(reqs);
	vision_free(v);
}

static void test_ollama(void) { run_backend("ollama", "/api/chat", "ollama"); }
static void test_vllm(void) { run_backend("vllm", "/v1/chat/completions", "openai"); }
static void test_openrouter(void) { run_backend("openrouter", "/chat/completions", "openai"); }
static void test_claude(void) { run_backend("claude", "/v1/messages", "anthropic"); }

static void
test_vllm_base_with_v1(void)
{
	struct vision_settings s;
	struct derr e;
	struct vision_result r;
	struct vision *v;
	char url[300];
	json_object *reqs;

	settings_for("vllm", &s);
	snprintf(url, sizeof url, "%s/v1/", vt_url);
	s.vllm_url = url;
	v = vision_new(&s, &e);
	CHECK(v != NULL);
	if (v == NULL)
		return;
	vt_reset();
	CHECK(vision_eval(v, "anything", &vt_jpeg_a, 1, &r, &e) == 0 && r.verdict == VISION_YES);
	reqs = model_requests();
	CHECK(json_object_array_length(reqs) == 1 &&
	    contains(sget(json_object_array_get_idx(reqs, 0), "path", NULL), "/v1/chat/completions"));
	CHECK(strcmp(sget(json_object_array_get_idx(reqs, 0), "path", NULL), "/v1/chat/completions") == 0);
	json_object_put(reqs);
	vision_free(v);
}

static void
test_unparseable_reply(void)
{
	struct vision *v = new_for("ollama");
	struct vision_result r;
	struct derr e;

	if (v == NULL)
		return;
	vt_reset();
	vt_script("{\"answers\":[\"I am not able to see the screen clearly.\"]}");
	CHECK(vision_eval(v, "the dialog is closed", &vt_jpeg_a, 1, &r, &e) == 0);
	CHECK(r.verdict == VISION_NO && !r.parsed);
	CHECK(strstr(r.reason, "unparseable model output: I am not able") != NULL);
	vision_free(v);
}

static void
test_retry_then_answer(void)
{
	static const char *const backends[] = { "ollama", "vllm", "openrouter", "claude" };

	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
		struct vision *v = new_for(backends[i]);
		struct vision_result r;
		struct derr e;
		json_object *reqs;

		if (v == NULL)
			continue;
		vt_reset();
		vt_script("{\"fail\":[503,503],\"answers\":[\"YES\\nready\"]}");
		CHECK(vision_eval(v, "ready", &vt_jpeg_a, 1, &r, &e) == 0);
		CHECK(r.verdict == VISION_YES && r.attempts == 3 && r.http_status == 200);
		reqs = model_requests();
		CHECK(json_object_array_length(reqs) == 3);
		CHECK(lget(json_object_array_get_idx(reqs, 0), "status", NULL) == 503);
		CHECK(lget(json_object_array_get_idx(reqs, 2), "status", NULL) == 200);
		json_object_put(reqs);
		vision_free(v);
	}
}

static void
test_retry_kinds(void)
{
	struct vision *v = new_for("vllm");
	struct vision_result r;
	struct derr e;

	if (v == NULL)
		return;
	/* A 429 with Retry-After, a malformed 200, an empty 200: all retried
	 * (max_retries 2 means three attempts). */
	vt_reset();
	vt_script("{\"fail\":[429,\"malformed\"],\"retry_after\":0,\"answers\":[\"NO\\nnot yet\"]}");
	CHECK(vision_eval(v, "x", &vt_jpeg_a, 1, &r, &e) == 0 && r.attempts == 3 && r.verdict == VISION_NO);
	/* A dropped connection: libcurl itself resends once on a reused
	 * connection that dies, so the stub sees three requests for two or
	 * three attempts of ours. */
	vt_reset();
	vt_script("{\"fail\":[\"empty\",\"close\"],\"answers\":[\"PARTIAL\"]}");
	CHECK(vision_eval(v, "x", &vt_jpeg_a, 1, &r, &e) == 0 && r.verdict == VISION_PARTIAL);
	CHECK(r.attempts == 2 || r.attempts == 3);
	{
		json_object *reqs = model_requests();

		CHECK(json_object_array_length(reqs) == 3);
		json_object_put(reqs);
	}
	/* Retry-After: 1 is honoured (backoff would be ~5 ms). */
	vt_script("{\"fail\":[429],\"retry_after\":1,\"answers\":[\"YES\"]}");
	CHECK(vision_eval(v, "x", &vt_jpeg_a, 1, &r, &e) == 0 && r.attempts == 2);
	CHECK(r.latency_us >= 900000);
	vision_free(v);
}

static void
test_retry_exhausted(void)
{
	struct vision *v = new_for("ollama");
	struct vision_result r;
	struct derr e = { 0 };

	if (v == NULL)
		return;
	vt_reset();
	vt_script("{\"fail_always\":503}");
	CHECK(vision_eval(v, "x", &vt_jpeg_a, 1, &r, &e) == -1);
	CHECK(e.code == DERR_UNAVAILABLE && r.attempts == 3 && r.http_status == 503);
	CHECK(strstr(e.message, "vision backend ollama") != NULL && strstr(e.message, "HTTP 503") != NULL);
	CHECK(strstr(e.message, "injected") != NULL && strstr(e.message, "3 attempts") != NULL);
	vision_free(v);

	/* VISION_NO_RETRIES: one attempt only. */
	{
		struct vision_settings s;

		settings_for("claude", &s);
		s.max_retries = VISION_NO_RETRIES;
		v = vision_new(&s, &e);
		CHECK(v != NULL);
		if (v != NULL) {
			CHECK(vision_eval(v, "x", &vt_jpeg_a, 1, &r, &e) == -1 && r.attempts == 1);
			CHECK(strstr(e.message, "api_error") != NULL);
			vision_free(v);
		}
	}
	vt_reset();
}

static void
test_auth_failure(void)
{
	static const struct {
		const char *backend, *env;
	} cases[] = { { "claude", "ANTHROPIC_API_KEY" }, { "openrouter", "OPENROUTER_API_KEY" } };

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct vision_settings s;
		struct vision_result r;
		struct derr e = { 0 };
		struct vision *v;

		settings_for(cases[i].backend, &s);
		s.anthropic_api_key = s.openrouter_api_key = "wrong-key";
		v = vision_new(&s, &e);
		CHECK(v != NULL);
		if (v == NULL)
			continue;
		vt_reset();
		CHECK(vision_eval(v, "x", &vt_jpeg_a, 1, &r, &e) == -1);
		CHECK(e.code == DERR_UNAVAILABLE && r.attempts == 1 && r.http_status == 401);
		CHECK(strstr(e.message, "401") != NULL && strstr(e.message, cases[i].env) != NULL);
		CHECK(strstr(e.message, "wrong-key") == NULL);     /* never echo a key */
		vision_free(v);
	}
}

static void
test_timeout(void)
{
	struct vision_settings s;
	struct vision_result r;
	struct derr e = { 0 };
	struct vision *v;

	settings_for("ollama", &s);
	s.timeout_ms = 300;
	v = vision_new(&s, &e);
	CHECK(v != NULL);
	if (v == NULL)
		return;
	vt_reset();
	vt_script("{\"delay_ms\":1500}");
	CHECK(vision_eval(v, "x", &vt_jpeg_a, 1, &r, &e) == -1);
	CHECK(e.code == DERR_UNAVAILABLE && strstr(e.message, "300 ms") != NULL);
	CHECK(r.attempts == 1);
	/* The stub records the abandoned request when its 1.5 s sleep ends:
	 * wait for that, or it lands among the next test's requests. */
	for (int i = 0; i < 200; i++) {
		json_object *reqs = model_requests();
		size_t n = json_object_array_length(reqs);

		json_object_put(reqs);
		if (n >= 1)
			break;
		usleep(50000);
	}
	vt_reset();
	vision_free(v);
}

/* A loopback port nobody listens on (bound, then closed). */
static int
closed_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		port = 1;
	else
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static void
test_connect_refused(void)
{
	struct vision_settings s;
	struct vision_result r;
	struct derr e = { 0 };
	struct vision *v;
	char url[64];

	snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
	settings_for("ollama", &s);
	s.ollama_url = url;
	s.max_retries = 1;
	v = vision_new(&s, &e);
	CHECK(v != NULL);
	if (v == NULL)
		return;
	CHECK(vision_eval(v, "x", &vt_jpeg_a, 1, &r, &e) == -1);
	CHECK(e.code == DERR_UNAVAILABLE && r.attempts == 2 && r.http_status == 0);
	CHECK(strstr(e.message, "cannot reach") != NULL && strstr(e.message, url) != NULL);
	vision_free(v);
}

struct worker {
	struct vision *v;
	int id;
	int wrong;
};

static void *
worker_main(void *arg)
{
	struct worker *w = arg;

	for (int j = 0; j < 10; j++) {
		static const char *const kinds[] = { "want-yes", "want-no", "want-partial" };
		static const enum vision_verdict verdicts[] = { VISION_YES, VISION_NO, VISION_PARTIAL };
		int k = (w->id + j) % 3;
		struct vision_result r;
		struct derr e;
		char cond[64];

		snprintf(cond, sizeof cond, "thread %d call %d %s", w->id, j, kinds[k]);
		if (vision_eval(w->v, cond, &vt_jpeg_a, 1, &r, &e) != 0 || r.verdict != verdicts[k] ||
		    strstr(r.reason, kinds[k]) == NULL)
			w->wrong++;
	}
	return NULL;
}

static void
test_concurrency(void)
{
	static const char *const backends[] = { "ollama", "claude" };

	for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
		struct vision *v = new_for(backends[b]);
		struct worker w[8];
		pthread_t t[8];
		json_object *reqs;
		long conns[80];
		size_t nconn = 0;

		if (v == NULL)
			continue;
		vt_reset();
		vt_script("{\"rules\":[{\"contains\":\"want-yes\",\"answer\":\"YES\\nsaw want-yes\"},"
		    "{\"contains\":\"want-partial\",\"answer\":\"PARTIAL: saw want-partial\"},"
		    "{\"contains\":\"want-no\",\"answer\":\"NO - saw want-no\"}],\"delay_ms\":5}");
		for (int i = 0; i < 8; i++) {
			w[i] = (struct worker){ v, i, 0 };
			CHECK(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0);
		}
		for (int i = 0; i < 8; i++) {
			pthread_join(t[i], NULL);
			CHECK(w[i].wrong == 0);
		}
		reqs = model_requests();
		CHECK(json_object_array_length(reqs) == 80);
		/* Connections are reused: far fewer than one per call. */
		for (size_t i = 0; i < json_object_array_length(reqs); i++) {
			long c = lget(json_object_array_get_idx(reqs, i), "conn", NULL);
			size_t k = 0;

			while (k < nconn && conns[k] != c)
				k++;
			if (k == nconn && nconn < 80)
				conns[nconn++] = c;
		}
		CHECK(nconn <= 16);
		json_object_put(reqs);
		vision_free(v);
	}
}

static void
test_health(void)
{
	static const char *const backends[] = { "ollama", "vllm", "openrouter", "claude", "passthrough" };

	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
		struct vision *v = new_for(backends[i]);
		json_object *h;

		if (v == NULL)
			continue;
		h = vision_health(v);
		CHECK(contains(sget(h, "backend", NULL), backends[i]));
		CHECK(json_object_get_boolean(json_object_object_get(h, "ok")));
		CHECK(sget(h, "detail", NULL) != NULL);
		if (!json_object_get_boolean(json_object_object_get(h, "ok")))
			fprintf(stderr, "    health %s: %s\n", backends[i], json_object_to_json_string(h));
		json_object_put(h);
		vision_free(v);
	}
	/* The health probes used the cheap endpoints, with auth where needed. */
	{
		json_object *all = vt_requests();
		bool tags = false, v1models = false, models = false;

		for (size_t i = 0; i < json_object_array_length(all); i++) {
			json_object *r = json_object_array_get_idx(all, i);
			const char *p = sget(r, "path", NULL);

			tags |= p != NULL && strcmp(p, "/api/tags") == 0;
			v1models |= p != NULL && strcmp(p, "/v1/models") == 0 &&
			    contains(sget(r, "headers", "authorization"), vt_key);
			models |= p != NULL && strcmp(p, "/models") == 0;
		}
		CHECK(tags && v1models && models);
		json_object_put(all);
	}
}

static void
test_health_failures(void)
{
	struct vision_settings s;
	struct derr e;
	struct vision *v;
	json_object *h;
	char url[64];

	/* A model that is not pulled. */
	settings_for("ollama", &s);
	s.ollama_model = "llava:13b";
	v = vision_new(&s, &e);
	h = v != NULL ? vision_health(v) : NULL;
	CHECK(h != NULL && !json_object_get_boolean(json_object_object_get(h, "ok")));
	CHECK(contains(sget(h, "detail", NULL), "not pulled"));
	json_object_put(h);
	vision_free(v);

	/* A wrong key on vLLM's /v1/models. */
	settings_for("vllm", &s);
	s.vllm_api_key = "nope";
	v = vision_new(&s, &e);
	h = v != NULL ? vision_health(v) : NULL;
	CHECK(h != NULL && !json_object_get_boolean(json_object_object_get(h, "ok")));
	CHECK(contains(sget(h, "detail", NULL), "401"));
	json_object_put(h);
	vision_free(v);

	/* Nobody listening. */
	snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
	settings_for("ollama", &s);
	s.ollama_url = url;
	v = vision_new(&s, &e);
	h = v != NULL ? vision_health(v) : NULL;
	CHECK(h != NULL && !json_object_get_boolean(json_object_object_get(h, "ok")));
	CHECK(contains(sget(h, "detail", NULL), url));
	CHECK(contains(sget(h, "backend", NULL), "ollama") && contains(sget(h, "model", NULL), "minicpm-v"));
	json_object_put(h);
	vision_free(v);
}

static void
test_new_errors(void)
{
	struct vision_settings s;
	struct derr e;
	struct vision *v;

	memset(&s, 0, sizeof s);
	s.backend = "gpt5-magic";
	derr_clear(&e);
	CHECK(vision_new(&s, &e) == NULL && e.code == DERR_INVALID && strcmp(e.field, "backend") == 0);
	CHECK(strstr(e.message, "gpt5-magic") != NULL && strstr(e.message, "ollama") != NULL);

	memset(&s, 0, sizeof s);
	s.backend = "claude";
	CHECK(vision_new(&s, &e) == NULL && e.code == DERR_INVALID);
	CHECK(strstr(e.message, "ANTHROPIC_API_KEY") != NULL);

	memset(&s, 0, sizeof s);
	s.backend = "openrouter";
	s.openrouter_api_key = "";
	CHECK(vision_new(&s, &e) == NULL && strstr(e.message, "OPENROUTER_API_KEY") != NULL);

	memset(&s, 0, sizeof s);
	s.ollama_url = "ftp://example.com";
	CHECK(vision_new(&s, &e) == NULL && strcmp(e.field, "ollama_url") == 0);

	memset(&s, 0, sizeof s);
	s.backend = "vllm";
	s.vllm_api_key = "a\r\nX-Injected: 1";
	CHECK(vision_new(&s, &e) == NULL && e.code == DERR_INVALID);

	memset(&s, 0, sizeof s);
	s.timeout_ms = 5;
	CHECK(vision_new(&s, &e) == NULL && strcmp(e.field, "timeout_ms") == 0);

	/* Defaults: ollama, minicpm-v; NULL settings are all defaults. */
	v = vision_new(NULL, &e);
	CHECK(v != NULL && strcmp(vision_backend(v), "ollama") == 0 && strcmp(vision_model(v), "minicpm-v") == 0);
	vision_free(v);
	vision_free(NULL);
}

static void
test_passthrough_and_args(void)
{
	struct vision *v = new_for("passthrough");
	struct vision *o = new_for("ollama");
	struct vision_image bad = { (const unsigned char *)"GIF89a", 6 };
	struct vision_image five[5] = { vt_jpeg_a, vt_jpeg_a, vt_jpeg_a, vt_jpeg_a, vt_jpeg_a };
	struct vision_result r;
	struct derr e;

	if (v == NULL || o == NULL)
		goto out;
	CHECK(vision_is_passthrough(v));
	vt_reset();
	CHECK(vision_eval(v, "x", &vt_jpeg_a, 1, &r, &e) == 0 && r.verdict == VISION_NO && r.attempts == 0);
	CHECK(vision_eval(o, "x", &vt_jpeg_a, 0, &r, &e) == -1 && e.code == DERR_INVALID);
	CHECK(vision_eval(o, "x", five, 5, &r, &e) == -1 && e.code == DERR_INVALID);
	CHECK(vision_eval(o, "x", &bad, 1, &r, &e) == -1 && strcmp(e.field, "images") == 0);
	CHECK(vision_eval(o, "", &vt_jpeg_a, 1, &r, &e) == -1 && strcmp(e.field, "condition") == 0);
	CHECK(vision_eval(o, "x", five, 4, &r, &e) == 0);     /* four is the most */
	{
		json_object *reqs = model_requests();

		CHECK(json_object_array_length(reqs) == 1);
		json_object_put(reqs);
	}
out:
	vision_free(v);
	vision_free(o);
}

const struct harness_test backend_tests[] = {
	{ "new_errors", test_new_errors },
	{ "ollama", test_ollama },
	{ "vllm", test_vllm },
	{ "openrouter", test_openrouter },
	{ "claude", test_claude },
	{ "vllm_base_with_v1", test_vllm_base_with_v1 },
	{ "unparseable_reply", test_unparseable_reply },
	{ "retry_503_then_answer", test_retry_then_answer },
	{ "retry_kinds", test_retry_kinds },
	{ "retry_exhausted", test_retry_exhausted },
	{ "auth_failure_not_retried", test_auth_failure },
	{ "timeout", test_timeout },
	{ "connect_refused", test_connect_refused },
	{ "concurrency", test_concurrency },
	{ "health", test_health },
	{ "health_failures", test_health_failures },
	{ "passthrough_and_args", test_passthrough_and_args },
	{ NULL, NULL },
};
