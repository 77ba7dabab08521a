/*
 * usage.h - usage and cost of every model call, recorded at one choke
 * point: httpc_do (the one HTTP client every backend uses) calls
 * usage_call_begin before and usage_call_end after each request.
 *
 * A request is a model call when it POSTs a JSON object with a string
 * "model" and a "messages" (Ollama /api/chat, OpenAI chat completions,
 * Anthropic Messages) or "contents" (Gemini) array. Health checks, the
 * OmniParser parse server and wake-up webhooks are not model calls.
 *
 * The call context (which task, for what) is per thread: the code that
 * starts model work for a task calls usage_scope first (the wait engine
 * before judging, gui_do/gui_find before grounding, gui_agent before each
 * supervisor turn). usage_scope also answers whether the task's budget
 * (budget.h) still allows a call; so does usage_call_begin, which refuses
 * the request before it is sent when it does not.
 *
 * Each finished call becomes one usage_events row (written through the
 * store's group commit, before httpc_do returns): provider, model, task,
 * purpose, tokens in/out as the provider reported them (OpenAI
 * usage.prompt_tokens/completion_tokens, Anthropic usage.input_tokens/
 * output_tokens plus cache tokens, Ollama prompt_eval_count/eval_count,
 * Gemini usageMetadata), latency, outcome and cost. Cost comes from the
 * price table (defaults for the models detm names, overridden by
 * DATA_DIR/prices.json, re-read when it changes); a model the table does not
 * know costs NULL, never 0. A provider that reports the cost itself
 * (OpenRouter's usage.cost) is believed.
 *
 * Not here: budgets and pausing (budget.c), HTTP handlers (api_usage.c),
 * the Prometheus text (metrics.c).
 */
#ifndef DETM_USAGE_H
#define DETM_USAGE_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/config.h"
#include "core/util.h"
#include "derr.h"
#include "store/store.h"

struct httpc_req;
struct httpc_resp;

/* Starts recording into st (prices from data_dir/prices.json when present;
 * a broken file is logged and the defaults stay). Before it, calls are
 * neither recorded nor refused. 0, or -1 with e. */
int usage_init(struct store *st, const struct config *cfg, struct derr *e) DETM_NODISCARD;
/* Stops recording (before the store closes). */
void usage_shutdown(void);

/* Sets this thread's call context: task_id (NULL or "" for none) and
 * purpose (a static string: "wait", "ground", "agent"). Returns 0, or -1
 * with e (DERR_CONFLICT, field "budget") when the task has reached its
 * budget: then make no model call (the task is being paused). */
int usage_scope(const char *task_id, const char *purpose, struct derr *e);

/* httpc_do's hooks. begin: whether rq is a model call (uc->model) and, if
 * so, whether it may be sent: -1 with err filled when the task's budget
 * refuses it. end: records a model call begun with 0 (rc as httpc_do
 * returns it). */
struct usage_call {
	bool model;
	char provider[32];
	char name[128];         /* the model */
	char task_id[ID_LEN];
	const char *purpose;
};
int usage_call_begin(const struct httpc_req *rq, struct usage_call *uc, char *err, size_t cap);
void usage_call_end(const struct usage_call *uc, int rc, const struct httpc_resp *rs);

/* ---- pieces, exposed for tests ---- */

/* Where prices.json is (usage_init calls it; tests may too). */
void usage_price_init(const char *data_dir);

/* Token counts in a reply of any of the four shapes; *cost the provider's
 * own figure (usage.cost) or -1. Returns true when the reply has them. */
bool usage_tokens(json_object *reply, int64_t *in, int64_t *out, double *cost);
/* The price of provider/model in USD per million tokens: true when known. */
bool usage_price(const char *provider, const char *model, double *in_per_m, double *out_per_m);
/* The provider of a model call to url (ollama, vllm, openrouter,
 * anthropic, openai, gemini), matched against the configured URLs. */
const char *usage_provider(const char *url);

/* ---- reads ---- */

/* GET /api/usage/stats: since_days < 0 for all time; task_id may be NULL.
 * {rows:[{provider,model,requests,input_tokens,output_tokens,cost_usd,
 * unpriced_requests,errors,avg_latency_ms}], totals:{...}, daily:[30 x
 * {date,cost_usd,requests,input_tokens,output_tokens}], since, task_id}. */
json_object *usage_stats(struct store *st, double since_days, const char *task_id, struct derr *e);
/* One task's totals {requests,input_tokens,output_tokens,cost_usd,
 * unpriced_requests}: new object, never NULL. */
json_object *usage_task_totals(struct store *st, const char *task_id);
/* Adds "usage" (and "budget" when the task has one) to a task summary. */
void usage_summary_add(struct store *st, const char *task_id, json_object *summary);
/* The effective price table {source, prices:[{provider,model,
 * input_per_mtok,output_per_mtok,origin}]}. */
json_object *usage_prices_json(void);

/* Counters since start per provider/model (for /metrics). */
struct usage_counter {
	char provider[32];
	char model[128];
	uint64_t calls, errors, refused;
	uint64_t tokens_in, tokens_out;
	double cost_usd;        /* priced calls only */
	double latency_s;       /* summed */
};
/* Copies up to cap counters into out; returns how many. */
size_t usage_counters(struct usage_counter *out, size_t cap);
/* Model calls refused for a budget since start (usage_scope and begin). */
uint64_t usage_refused_total(void);

#endif
