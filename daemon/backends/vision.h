/*
 * vision.h - asks a vision model whether a natural-language condition holds
 * on the screen: YES, NO or PARTIAL, with a one-sentence reason.
 *
 * Backends (struct vision_settings.backend):
 *   ollama      POST {ollama_url}/api/chat            (local, default)
 *   vllm        POST {vllm_url}/v1/chat/completions   (OpenAI style, optional key)
 *   openrouter  POST {openrouter_url}/chat/completions (OpenAI style, key required)
 *   claude      POST {claude_url}/v1/messages          (Anthropic Messages, key required)
 *   passthrough no model: vision_eval answers NO without a call; the wait
 *               engine is expected to check vision_is_passthrough and decide alone.
 *
 * A struct vision is immutable after vision_new, so any number of threads
 * may call vision_eval and vision_health on it at once. HTTP goes through
 * httpc (pooled curl handles, persistent connections).
 *
 * Errors are values (derr.h): a bad setting is DERR_INVALID naming the
 * field; a backend that cannot answer is DERR_UNAVAILABLE with the backend,
 * HTTP status and a short body excerpt in the message; a bad argument to
 * vision_eval (no images, not JPEG, too large) is DERR_INVALID.
 */
#ifndef DETM_VISION_H
#define DETM_VISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/util.h"
#include "derr.h"

#define VISION_MAX_IMAGES      4
#define VISION_MAX_IMAGE_BYTES (8 * 1024 * 1024)   /* one JPEG */
#define VISION_MAX_CONDITION   4000                /* bytes of condition text */
#define VISION_MAX_REPLY       (1024 * 1024)       /* model reply body */
#define VISION_NO_RETRIES      (-1)                /* max_retries value: try once */

enum vision_verdict { VISION_NO = 0, VISION_YES, VISION_PARTIAL };

/* Strings are borrowed (copied by vision_new); NULL or "" = the default.
 * Numbers: 0 = the default. */
struct vision_settings {
	const char *backend;            /* ollama (default) | vllm | claude | openrouter | passthrough */
	const char *ollama_url;         /* http://127.0.0.1:11434 */
	const char *ollama_model;       /* minicpm-v */
	const char *ollama_keep_alive;  /* 10m */
	const char *vllm_url;           /* http://127.0.0.1:8000 (a trailing /v1 is accepted) */
	const char *vllm_model;         /* ui-tars-1.5-7b */
	const char *vllm_api_key;       /* optional (vllm --api-key) */
	const char *claude_url;         /* https://api.anthropic.com */
	const char *claude_model;       /* claude-sonnet-4-20250514 */
	const char *anthropic_api_key;  /* required for claude (ANTHROPIC_API_KEY) */
	const char *openrouter_url;     /* https://openrouter.ai/api/v1 */
	const char *openrouter_model;   /* google/gemini-2.0-flash-001 */
	const char *openrouter_api_key; /* required for openrouter (OPENROUTER_API_KEY) */
	long timeout_ms;                /* per attempt, 100..600000; default 60000 */
	int max_retries;                /* retries after the first attempt, 0..10; default 2;
	                                 * VISION_NO_RETRIES for none */
	long retry_backoff_ms;          /* first backoff, doubled each retry (capped 8 s),
	                                 * 1..10000; default 250. Retry-After wins when longer */
};

/* One JPEG frame (starts with FF D8). The caller keeps it <= 960 px wide. */
struct vision_image {
	const unsigned char *jpeg;
	size_t len;
};

struct vision_result {
	enum vision_verdict verdict;
	char reason[1024];      /* the model's one sentence, or why the output was not understood */
	bool parsed;            /* false: the output was unparseable and mapped to NO */
	long tokens_in, tokens_out;  /* as the backend reported them; 0 when absent */
	long http_status;       /* of the last attempt; 0 when none answered */
	int attempts;           /* HTTP requests made (0 for passthrough) */
	int64_t latency_us;     /* the whole call, backoff included */
	char model[128];        /* as the backend named it, else as configured */
	/* From a FINAL_JSON line (structured = true); else confidence -1 and
	 * summary, evidence "". */
	bool structured;
	double confidence;      /* 0..1, or -1 when the model gave none */
	char summary[512];
	char evidence[1024];    /* a JSON array of strings, or "" */
};

/* A structured verdict: the line `FINAL_JSON: {"decision":"resolved"|
 * "partial"|"watching", "confidence":0..1, "evidence":[..], "summary":..}`
 * as the Python DETM asked for it. */
struct vision_final {
	enum vision_verdict verdict;
	double confidence;      /* 0..1 (a 1..100 figure is read as percent); -1 none */
	char summary[512];
	char evidence[1024];    /* JSON array of up to 8 strings (each cut to 200 bytes), or "" */
};

struct vision;

/* NULL with e filled (DERR_INVALID, field = the setting) on a bad setting:
 * unknown backend, a URL that is not http(s), a missing key for claude or
 * openrouter (the message names ANTHROPIC_API_KEY / OPENROUTER_API_KEY). */
struct vision *vision_new(const struct vision_settings *s, struct derr *e);
void vision_free(struct vision *v);                 /* NULL ok */
const char *vision_backend(const struct vision *v); /* "ollama", ... */
const char *vision_model(const struct vision *v);   /* configured model; "" for passthrough */
bool vision_is_passthrough(const struct vision *v);

/*
 * Asks whether condition holds. images: 1..VISION_MAX_IMAGES frames, oldest
 * first; the last is the current screen and the one judged. Blocking and
 * thread-safe. Connect errors, 429, 5xx (and 529) and malformed 2xx bodies
 * are retried with exponential backoff up to max_retries; a timeout and any
 * other 4xx are not (a 401/403 message names the key's variable). Returns
 * 0 with *out filled (an unparseable reply is verdict NO, parsed = false),
 * or -1 with e filled; *out (attempts, http_status, latency) is filled
 * either way.
 */
int vision_eval(struct vision *v, const char *condition, const struct vision_image *images,
    size_t n, struct vision_result *out, struct derr *e);
/* The same, telling the model how long the wait has been running
 * (elapsed_s >= 0; vision_eval passes -1: not said). */
int vision_eval_at(struct vision *v, const char *condition, double elapsed_s,
    const struct vision_image *images, size_t n, struct vision_result *out, struct derr *e);

/*
 * A cheap check: ollama GET /api/tags and whether the model is pulled;
 * vllm GET /v1/models, openrouter GET /models (and whether the model is
 * listed); claude: whether a key is set (no call); passthrough: ok.
 * Returns a new object (caller puts it):
 *   {"backend":"ollama","ok":true,"reachable":true,"model":"minicpm-v","url":"...",
 *    "detail":"..."}   (reachable: the server answered HTTP at all)
 */
json_object *vision_health(struct vision *v);

/*
 * The verdict parser (exposed for tests). Accepts a strict first line
 * (YES / NO / PARTIAL, any case, markdown around it, "Answer: yes",
 * "YES: reason", "Yes, the dialog is gone"), JSON ({"answer"|"verdict"|
 * "decision"|"result": "yes", "reason": ...}, or a boolean "met"), a
 * <think> block before the answer, and a lone verdict line after some
 * prose. Words count only whole ("Yesterday", "know" do not match); "not"
 * and "not yet" are NO. Returns 0 with *v and reason set, or -1 when the
 * text is unparseable: then *v is NO and reason is
 * "unparseable model output: <excerpt>".
 */
int vision_parse_verdict(const char *text, enum vision_verdict *v, char *reason, size_t reason_len);

/*
 * Reads the last FINAL_JSON line of text (after any </think>): decision
 * "resolved" / "yes" / "met" is YES, "partial" / "in_progress" PARTIAL,
 * "watching" / "no" / "not_met" NO. Returns 0 with *f filled, or -1 when
 * there is no such line or it has no known decision (then the caller
 * falls back to vision_parse_verdict).
 */
int vision_parse_final(const char *text, struct vision_final *f);

const char *vision_verdict_name(enum vision_verdict v);   /* "YES", "NO", "PARTIAL" */

#endif
