/*
 * usage_price.c - the price table of usage.h: USD per million input and
 * output tokens for (provider, model prefix).
 *
 * Owns: the built-in defaults (the models detm names, at the providers'
 * list prices when this was written) and the override entries read from
 * DATA_DIR/prices.json, under one mutex. The file is stat()ed at most once
 * a second by usage_price and re-read when its mtime or size changed; a
 * file that does not parse is logged once per change and ignored (the
 * previous overrides stay).
 *
 * Matching: an entry matches when its provider is "*" or equal to the
 * call's, and the model starts with the entry's model prefix ("" matches
 * any). Among the overrides that match, the longest prefix wins (a named
 * provider beats "*" on a tie); the defaults are consulted only when no
 * override matches. No match: the price is unknown and the call's cost is
 * NULL.
 *
 * prices.json: {"prices":[{"provider":"openrouter","model":"google/gemini-2.0-flash",
 *                          "input_per_mtok":0.1,"output_per_mtok":0.4}, ...]}
 * (a bare array works too; provider defaults to "*").
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/jx.h"
#include "core/log.h"
#include "usage.h"

#define PRICE_MAX_OVERRIDES 256
#define PRICE_FILE_MAX (256 * 1024)

struct price {
	char provider[32];      /* "*" = any */
	char model[128];        /* prefix; "" = any */
	double in, out;         /* USD per 1M tokens */
};

/* Defaults. Local servers cost nothing; cloud models at list price. */
static const struct price defaults[] = {
	{ "ollama", "", 0, 0 },
	{ "vllm", "", 0, 0 },
	/* Anthropic, direct (ACU_CLAUDE_VISION_MODEL, the OmniParser picker, claude_cu) */
	{ "*", "claude-sonnet-4", 3, 15 },
	{ "*", "claude-opus-4", 15, 75 },
	{ "*", "claude-haiku-4-5", 1, 5 },
	{ "*", "claude-3-5-haiku", 0.8, 4 },
	{ "*", "claude-3-7-sonnet", 3, 15 },
	/* OpenRouter names */
	{ "*", "anthropic/claude-sonnet-4", 3, 15 },
	{ "*", "anthropic/claude-opus-4", 15, 75 },
	{ "*", "anthropic/claude-haiku-4.5", 1, 5 },
	{ "*", "google/gemini-2.0-flash-001", 0.1, 0.4 },
	{ "*", "google/gemini-2.0-flash-lite", 0.075, 0.3 },
	{ "*", "google/gemini-2.5-flash-lite", 0.1, 0.4 },
	{ "*", "google/gemini-2.5-flash", 0.3, 2.5 },
	{ "*", "google/gemini-2.5-pro", 1.25, 10 },
	{ "*", "google/gemini-3-flash-preview", 0.5, 3 },
	{ "*", "bytedance/ui-tars-1.5-7b", 0.1, 0.2 },
	{ "*", "openai/gpt-4o-mini", 0.15, 0.6 },
	{ "*", "openai/gpt-4o", 2.5, 10 },
};

static struct {
	pthread_mutex_t mu;
	char path[4096];
	struct price over[PRICE_MAX_OVERRIDES];
	size_t nover;
	time_t mtime;
	off_t size;
	int64_t checked_us;
	bool file_ok;           /* the last read parsed */
} price_state = { .mu = PTHREAD_MUTEX_INITIALIZER };

static bool
entry_read(json_object *o, struct price *p)
{
	json_object *v;
	const char *prov = "*", *model = NULL;

	if (!json_object_is_type(o, json_type_object))
		return false;
	if (json_object_object_get_ex(o, "provider", &v) && json_object_is_type(v, json_type_string))
		prov = json_object_get_string(v);
	if (json_object_object_get_ex(o, "model", &v) && json_object_is_type(v, json_type_string))
		model = json_object_get_string(v);
	if (model == NULL)
		return false;
	snprintf(p->provider, sizeof p->provider, "%s", prov);
	snprintf(p->model, sizeof p->model, "%s", model);
	if (!json_object_object_get_ex(o, "input_per_mtok", &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return false;
	p->in = json_object_get_double(v);
	if (!json_object_object_get_ex(o, "output_per_mtok", &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return false;
	p->out = json_object_get_double(v);
	return p->in >= 0 && p->out >= 0;
}

/* Reads the file (mu held). */
static void
file_load(const struct stat *sb)
{
	FILE *f = fopen(price_state.path, "r");
	char *text = NULL;
	size_t n = 0;
	json_object *root = NULL, *arr;
	struct derr e;
	size_t i, k = 0;

	price_state.mtime = sb->st_mtime;
	price_state.size = sb->st_size;
	price_state.file_ok = false;
	if (f == NULL || sb->st_size > PRICE_FILE_MAX) {
		log_warn("prices: cannot read %s (missing, unreadable or over %d bytes)", price_state.path, PRICE_FILE_MAX);
		goto out;
	}
	text = xmalloc((size_t)sb->st_size + 1);
	n = fread(text, 1, (size_t)sb->st_size, f);
	text[n] = '\0';
	if ((root = jx_parse(text, n, &e)) == NULL) {
		log_warn("prices: %s is not JSON: %s (the previous prices stay)", price_state.path, e.message);
		goto out;
	}
	arr = root;
	if (json_object_is_type(root, json_type_object))
		json_object_object_get_ex(root, "prices", &arr);
	if (arr == NULL || !json_object_is_type(arr, json_type_array)) {
		log_warn("prices: %s has no \"prices\" array (the previous prices stay)", price_state.path);
		goto out;
	}
	for (i = 0; i < json_object_array_length(arr) && k < PRICE_MAX_OVERRIDES; i++) {
		if (!entry_read(json_object_array_get_idx(arr, i), &price_state.over[k])) {
			log_warn("prices: %s entry %zu needs model, input_per_mtok and output_per_mtok "
			    "(numbers >= 0); skipped", price_state.path, i);
			continue;
		}
		k++;
	}
	price_state.nover = k;
	price_state.file_ok = true;
	log_info("prices: %zu entries from %s", k, price_state.path);
out:
	json_object_put(root);
	free(text);
	if (f != NULL)
		fclose(f);
}

/* Re-reads the file when it changed (mu held; at most once a second). */
static void
file_check(void)
{
	struct stat sb;
	int64_t now = mono_us();

	if (price_state.path[0] == '\0' || (price_state.checked_us != 0 && now - price_state.checked_us < 1000000))
		return;
	price_state.checked_us = now;
	if (stat(price_state.path, &sb) != 0) {
		if (price_state.mtime != 0 || price_state.nover != 0)
			log_info("prices: %s is gone; the defaults apply", price_state.path);
		price_state.nover = 0;
		price_state.mtime = 0;
		price_state.size = 0;
		price_state.file_ok = false;
		return;
	}
	if (sb.st_mtime != price_state.mtime || sb.st_size != price_state.size)
		file_load(&sb);
}

void
usage_price_init(const char *data_dir)
{
	pthread_mutex_lock(&price_state.mu);
	snprintf(price_state.path, sizeof price_state.path, "%s/prices.json", data_dir);
	price_state.checked_us = 0;
	price_state.nover = 0;
	price_state.mtime = 0;
	file_check();
	pthread_mutex_unlock(&price_state.mu);
}

/* The best entry of tab[0..n) for provider/model, or NULL. */
static const struct price *
best(const struct price *tab, size_t n, const char *provider, const char *model)
{
	const struct price *b = NULL;
	size_t blen = 0;

	for (size_t i = 0; i < n; i++) {
		const struct price *p = &tab[i];
		size_t len = strlen(p->model);
		bool named = strcmp(p->provider, "*") != 0;

		if (named && strcasecmp(p->provider, provider) != 0)
			continue;
		if (strncasecmp(model, p->model, len) != 0)
			continue;
		if (b == NULL || len > blen || (len == blen && named && strcmp(b->provider, "*") == 0)) {
			b = p;
			blen = len;
		}
	}
	return b;
}

bool
usage_price(const char *provider, const char *model, double *in_per_m, double *out_per_m)
{
	const struct price *p;
	bool known = false;

	pthread_mutex_lock(&price_state.mu);
	file_check();
	p = best(price_state.over, price_state.nover, provider, model);
	if (p == NULL)
		p = best(defaults, ARRAY_LEN(defaults), provider, model);
	if (p != NULL) {
		*in_per_m = p->in;
		*out_per_m = p->out;
		known = true;
	}
	pthread_mutex_unlock(&price_state.mu);
	return known;
}

static void
add_entries(json_object *arr, const struct price *tab, size_t n, const char *origin)
{
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_new_object();

		jx_add_str(o, "provider", tab[i].provider);
		jx_add_str(o, "model", tab[i].model);
		json_object_object_add(o, "input_per_mtok", json_object_new_double(tab[i].in));
		json_object_object_add(o, "output_per_mtok", json_object_new_double(tab[i].out));
		jx_add_str(o, "origin", origin);
		json_object_array_add(arr, o);
	}
}

json_object *
usage_prices_json(void)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();

	pthread_mutex_lock(&price_state.mu);
	file_check();
	jx_add_str(o, "file", price_state.path[0] ? price_state.path : NULL);
	json_object_object_add(o, "file_loaded", json_object_new_boolean(price_state.file_ok));
	add_entries(arr, price_state.over, price_state.nover, "prices.json");
	add_entries(arr, defaults, ARRAY_LEN(defaults), "default");
	pthread_mutex_unlock(&price_state.mu);
	jx_add_str(o, "unit", "USD per million tokens");
	jx_add_str(o, "unknown_models", "cost null: add them to prices.json");
	json_object_object_add(o, "prices", arr);
	return o;
}
