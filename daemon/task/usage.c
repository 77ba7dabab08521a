/*
 * usage.c - the choke-point hooks of usage.h: the per-thread call context,
 * which requests are model calls and whose, what each reply says it cost,
 * the usage_events row, and counters since start for /metrics.
 *
 * State: usage_state (under its mu): the store (NULL before usage_init and after
 * usage_shutdown: then nothing is recorded or refused), the configured
 * backend URLs for provider matching, the counters. The call context is a
 * thread-local copy, never shared.
 *
 * Does not: price models (usage_price.c), read stats (usage_stats.c),
 * decide budgets (budget.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/httpc.h"
#include "budget.h"
#include "core/log.h"
#include "usage.h"

#define USAGE_MAX_COUNTERS 64
#define ID_RETRIES 8

static const char SQL_INSERT[] =
    "INSERT INTO usage_events (id, ts, provider, model, task_id, purpose, input_tokens, "
    "output_tokens, requests, cost_usd, latency_ms, outcome, http_status) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9, ?10, ?11, ?12)";

struct base { const char *provider; char *url; };

static struct {
	pthread_mutex_t mu;
	struct store *st;
	struct base bases[4];
	size_t nbases;
	struct usage_counter c[USAGE_MAX_COUNTERS];
	size_t nc;
	uint64_t refused;      /* model calls refused for a budget */
} usage_state = { .mu = PTHREAD_MUTEX_INITIALIZER };

static _Thread_local struct {
	char task_id[ID_LEN];
	const char *purpose;
} scope;

/* ---- context ---- */

int
usage_scope(const char *task_id, const char *purpose, struct derr *e)
{
	char why[400];

	snprintf(scope.task_id, sizeof scope.task_id, "%s", task_id != NULL ? task_id : "");
	scope.purpose = purpose;
	if (scope.task_id[0] == '\0' || budget_check(scope.task_id, why, sizeof why) == 0)
		return 0;
	pthread_mutex_lock(&usage_state.mu);
	usage_state.refused++;
	pthread_mutex_unlock(&usage_state.mu);
	return derr_set(e, DERR_CONFLICT, "budget", "task %s has reached its budget: %s. No model call "
	    "was made; raise the budget (PATCH /api/tasks/%s {\"budget\":{...}}) and resume the task",
	    scope.task_id, why, scope.task_id);
}

/* ---- providers ---- */

static void
base_add(const char *provider, const char *url)
{
	size_t n;

	if (url == NULL || url[0] == '\0' || usage_state.nbases >= ARRAY_LEN(usage_state.bases))
		return;
	n = strlen(url);
	while (n > 0 && url[n - 1] == '/')
		n--;
	usage_state.bases[usage_state.nbases].provider = provider;
	usage_state.bases[usage_state.nbases++].url = xstrndup(url, n);
}

static bool
ends_with(const char *s, size_t n, const char *tail)
{
	size_t t = strlen(tail);

	return n >= t && strncmp(s + n - t, tail, t) == 0;
}

/* The wire family of a path: what a provider at that URL must speak. */
static const char *
path_family(const char *path, size_t n)
{
	if (ends_with(path, n, "/api/chat"))
		return "ollama";
	if (ends_with(path, n, "/messages"))
		return "anthropic";
	if (ends_with(path, n, "/chat/completions"))
		return "openai";
	if (ends_with(path, n, ":generateContent"))
		return "gemini";
	return "";
}

static bool
family_fits(const char *provider, const char *family)
{
	if (strcmp(family, "openai") == 0)
		return strcmp(provider, "openrouter") == 0 || strcmp(provider, "vllm") == 0;
	return strcmp(provider, family) == 0;
}

const char *
usage_provider(const char *url)
{
	size_t n = strcspn(url, "?"), best = 0;
	const char *fam = path_family(url, n), *p = NULL;

	pthread_mutex_lock(&usage_state.mu);
	for (size_t i = 0; i < usage_state.nbases; i++) {
		size_t len = strlen(usage_state.bases[i].url);

		if (strncmp(url, usage_state.bases[i].url, len) != 0 || (url[len] != '/' && url[len] != '\0'))
			continue;
		if (!family_fits(usage_state.bases[i].provider, fam))
			continue;
		if (p == NULL || len > best) {
			p = usage_state.bases[i].provider;
			best = len;
		}
	}
	pthread_mutex_unlock(&usage_state.mu);
	if (p != NULL)
		return p;
	if (strcmp(fam, "openai") == 0)
		return strstr(url, "openrouter.ai") != NULL ? "openrouter" : "openai";
	return fam[0] != '\0' ? fam : "unknown";
}

/* ---- replies ---- */

/* Either of two reads found its count (both calls have run: each fills
 * its own count, so neither may be skipped). */
static bool
both(bool a, bool b)
{
	return a || b;
}

static bool
num_at(json_object *o, const char *k1, const char *k2, int64_t *out)
{
	json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, k1, &v))
		return false;
	if (k2 != NULL && !json_object_object_get_ex(v, k2, &v))
		return false;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return false;
	*out = json_object_get_int64(v);
	return *out >= 0;
}

bool
usage_tokens(json_object *reply, int64_t *in, int64_t *out, double *cost)
{
	json_object *u = NULL, *c;
	int64_t a = 0, b = 0, x;
	bool found = false;

	*in = *out = 0;
	*cost = -1;
	if (reply == NULL || !json_object_is_type(reply, json_type_object))
		return false;
	if (json_object_object_get_ex(reply, "usage", &u) && json_object_is_type(u, json_type_object)) {
		if (both(num_at(u, "prompt_tokens", NULL, &a), num_at(u, "completion_tokens", NULL, &b)))
			found = true;   /* OpenAI, OpenRouter, vLLM */
		else if (both(num_at(u, "input_tokens", NULL, &a), num_at(u, "output_tokens", NULL, &b))) {
			found = true;   /* Anthropic: cache reads and writes are input too */
			if (num_at(u, "cache_creation_input_tokens", NULL, &x))
				a += x;
			if (num_at(u, "cache_read_input_tokens", NULL, &x))
				a += x;
		}
		if (json_object_object_get_ex(u, "cost", &c) &&
		    (json_object_is_type(c, json_type_double) || json_object_is_type(c, json_type_int)) &&
		    json_object_get_double(c) >= 0)
			*cost = json_object_get_double(c);
	} else if (both(num_at(reply, "prompt_eval_count", NULL, &a), num_at(reply, "eval_count", NULL, &b))) {
		found = true;           /* Ollama */
	} else if (both(num_at(reply, "usageMetadata", "promptTokenCount", &a),
	    num_at(reply, "usageMetadata", "candidatesTokenCount", &b))) {
		found = true;           /* Gemini: thinking tokens are billed as output */
		if (num_at(reply, "usageMetadata", "thoughtsTokenCount", &x))
			b += x;
	}
	*in = a;
	*out = b;
	return found;
}

/* ---- the hooks ---- */

static struct usage_counter *
counter_locked(const char *provider, const char *model)
{
	size_t i;

	for (i = 0; i < usage_state.nc; i++)
		if (strcmp(usage_state.c[i].provider, provider) == 0 && strcmp(usage_state.c[i].model, model) == 0)
			return &usage_state.c[i];
	if (usage_state.nc == USAGE_MAX_COUNTERS) {
		/* the last slot collects whatever does not fit */
		i = USAGE_MAX_COUNTERS - 1;
		snprintf(usage_state.c[i].provider, sizeof usage_state.c[i].provider, "other");
		snprintf(usage_state.c[i].model, sizeof usage_state.c[i].model, "other");
		return &usage_state.c[i];
	}
	memset(&usage_state.c[usage_state.nc], 0, sizeof usage_state.c[usage_state.nc]);
	snprintf(usage_state.c[usage_state.nc].provider, sizeof usage_state.c[usage_state.nc].provider, "%s", provider);
	snprintf(usage_state.c[usage_state.nc].model, sizeof usage_state.c[usage_state.nc].model, "%s", model);
	return &usage_state.c[usage_state.nc++];
}

int
usage_call_begin(const struct httpc_req *rq, struct usage_call *uc, char *err, size_t cap)
{
	json_object *m, *msgs;
	const char *gm = strstr(rq->url, "/models/");
	char why[400];
	bool live;

	memset(uc, 0, sizeof *uc);
	if (rq->body == NULL || !json_object_is_type(rq->body, json_type_object) ||
	    (rq->method != NULL && strcmp(rq->method, "POST") != 0))
		return 0;
	if (!(json_object_object_get_ex(rq->body, "messages", &msgs) ||
	    json_object_object_get_ex(rq->body, "contents", &msgs)) ||
	    !json_object_is_type(msgs, json_type_array))
		return 0;
	if (json_object_object_get_ex(rq->body, "model", &m) && json_object_is_type(m, json_type_string))
		snprintf(uc->name, sizeof uc->name, "%s", json_object_get_string(m));
	else if (gm != NULL)    /* Gemini: .../models/NAME:generateContent */
		snprintf(uc->name, sizeof uc->name, "%.*s", (int)strcspn(gm + 8, ":?"), gm + 8);
	else
		return 0;
	uc->model = true;
	snprintf(uc->provider, sizeof uc->provider, "%s", usage_provider(rq->url));
	memcpy(uc->task_id, scope.task_id, ID_LEN);
	uc->purpose = scope.purpose;
	pthread_mutex_lock(&usage_state.mu);
	live = usage_state.st != NULL;
	pthread_mutex_unlock(&usage_state.mu);
	if (!live || uc->task_id[0] == '\0' || budget_check(uc->task_id, why, sizeof why) == 0)
		return 0;
	snprintf(err, cap, "refused: task %s has reached its budget: %s", uc->task_id, why);
	pthread_mutex_lock(&usage_state.mu);
	counter_locked(uc->provider, uc->name)->refused++;
	usage_state.refused++;
	pthread_mutex_unlock(&usage_state.mu);
	uc->model = false;      /* not sent: nothing to record */
	return -1;
}

struct row {
	const struct usage_call *uc;
	int64_t in, out;
	double cost;            /* < 0: unknown */
	double latency_ms;
	const char *outcome;
	long status;
};

static int
insert_tx(struct store *st, int64_t now, void *arg, struct derr *e)
{
	const struct row *r = arg;
	sqlite3_stmt *s = store_stmt(st, SQL_INSERT);
	char id[ID_LEN];

	if (s == NULL)
		return store_fail(st, "usage insert", e);
	sqlite3_bind_int64(s, 2, now);
	sqlite3_bind_text(s, 3, r->uc->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, r->uc->name, -1, SQLITE_STATIC);
	if (r->uc->task_id[0] != '\0')
		sqlite3_bind_text(s, 5, r->uc->task_id, -1, SQLITE_STATIC);
	if (r->uc->purpose != NULL)
		sqlite3_bind_text(s, 6, r->uc->purpose, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 7, r->in);
	sqlite3_bind_int64(s, 8, r->out);
	if (r->cost >= 0)
		sqlite3_bind_double(s, 9, r->cost);
	sqlite3_bind_double(s, 10, r->latency_ms);
	sqlite3_bind_text(s, 11, r->outcome, -1, SQLITE_STATIC);
	if (r->status > 0)
		sqlite3_bind_int64(s, 12, r->status);
	for (int tries = 0; tries < ID_RETRIES; tries++) {
		int rc;

		id_new(id);
		sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(s);
		sqlite3_reset(s);
		if (rc == SQLITE_DONE)
			return 0;
		if (sqlite3_extended_errcode(store_db(st)) != SQLITE_CONSTRAINT_PRIMARYKEY)
			break;
	}
	return store_fail(st, "usage insert", e);
}

static const char *
outcome_of(int rc, const struct httpc_resp *rs)
{
	if (rc == HTTPC_ETIMEOUT)
		return "timeout";
	if (rc == HTTPC_ECANCELLED)
		return "cancelled";
	if (rc != HTTPC_OK)
		return "error";
	if (rs->status < 200 || rs->status > 299)
		return "http_error";
	return rs->json != NULL ? "ok" : "bad_reply";
}

/* The cost of one call: the provider's own figure, else the table's; -1
 * when the model's price is unknown (or it is not free and the reply did
 * not say how many tokens it used). */
static double
cost_of(const struct usage_call *uc, int64_t in, int64_t out, double reported, bool have_tokens)
{
	double pin, pout;

	if (reported >= 0)
		return reported;
	if (!usage_price(uc->provider, uc->name, &pin, &pout))
		return -1;
	if (!have_tokens && (pin > 0 || pout > 0))
		return -1;
	return ((double)in * pin + (double)out * pout) / 1e6;
}

void
usage_call_end(const struct usage_call *uc, int rc, const struct httpc_resp *rs)
{
	struct row r = { .uc = uc, .cost = -1 };
	struct usage_counter *c;
	struct store *st;
	struct derr e;
	double reported = -1;
	bool have = false, answered;

	if (!uc->model)
		return;
	r.outcome = outcome_of(rc, rs);
	r.status = rs->status;
	r.latency_ms = (double)rs->latency_us / 1000.0;
	answered = rc == HTTPC_OK && rs->status >= 200 && rs->status <= 299;
	if (answered)
		have = usage_tokens(rs->json, &r.in, &r.out, &reported);
	/* A call that got no answer (or an error status) used no tokens; one
	 * that answered and says nothing about them has an unknown cost
	 * (unless the model is free). */
	r.cost = answered ? cost_of(uc, r.in, r.out, reported, have) : cost_of(uc, 0, 0, -1, true);
	pthread_mutex_lock(&usage_state.mu);
	st = usage_state.st;
	c = counter_locked(uc->provider, uc->name);
	c->calls++;
	if (strcmp(r.outcome, "ok") != 0)
		c->errors++;
	c->tokens_in += (uint64_t)r.in;
	c->tokens_out += (uint64_t)r.out;
	if (r.cost > 0)
		c->cost_usd += r.cost;
	c->latency_s += r.latency_ms / 1000.0;
	pthread_mutex_unlock(&usage_state.mu);
	if (st == NULL)
		return;
	if (store_tx(st, insert_tx, &r, &e) != 0)
		log_warn("usage: cannot record a %s/%s call: %s", uc->provider, uc->name, e.message);
	if (uc->task_id[0] != '\0')
		budget_note(uc->task_id, r.cost, r.in + r.out);
}

uint64_t
usage_refused_total(void)
{
	uint64_t n;

	pthread_mutex_lock(&usage_state.mu);
	n = usage_state.refused;
	pthread_mutex_unlock(&usage_state.mu);
	return n;
}

size_t
usage_counters(struct usage_counter *out, size_t cap)
{
	size_t n;

	pthread_mutex_lock(&usage_state.mu);
	n = usage_state.nc < cap ? usage_state.nc : cap;
	memcpy(out, usage_state.c, n * sizeof *out);
	pthread_mutex_unlock(&usage_state.mu);
	return n;
}

/* httpc's meter: a model call's record lives from begin to end. */
static void *
meter_begin(const struct httpc_req *rq, char *err, size_t cap, bool *refused)
{
	struct usage_call *uc = xmalloc(sizeof *uc);

	*refused = usage_call_begin(rq, uc, err, cap) != 0;
	if (*refused || !uc->model) {
		free(uc);
		return NULL;
	}
	return uc;
}

static void
meter_end(void *call, int rc, const struct httpc_resp *rs)
{
	usage_call_end(call, rc, rs);
	free(call);
}

static const struct httpc_meter usage_meter = { meter_begin, meter_end };

/* ---- life ---- */

int
usage_init(struct store *st, const struct config *cfg, struct derr *e)
{
	(void)e;
	usage_price_init(cfg->data_dir);
	httpc_set_meter(&usage_meter);      /* stays: calls after shutdown are still counted */
	pthread_mutex_lock(&usage_state.mu);
	usage_state.st = st;
	base_add("openrouter", cfg->openrouter_url);
	base_add("anthropic", cfg->claude_url);
	base_add("ollama", cfg->ollama_url);
	base_add("vllm", cfg->vllm_url);
	pthread_mutex_unlock(&usage_state.mu);
	return 0;
}

void
usage_shutdown(void)
{
	pthread_mutex_lock(&usage_state.mu);
	usage_state.st = NULL;
	for (size_t i = 0; i < usage_state.nbases; i++)
		free(usage_state.bases[i].url);
	usage_state.nbases = 0;
	pthread_mutex_unlock(&usage_state.mu);
}
