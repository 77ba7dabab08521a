/* test_usage.c - usage.h's pieces: token counts in each provider's reply,
 * the price table and prices.json, provider matching. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "task/usage.h"
#include "unit.h"

static bool
tokens_of(const char *json, int64_t *in, int64_t *out, double *cost)
{
	json_object *o = json_tokener_parse(json);
	bool r = usage_tokens(o, in, out, cost);

	json_object_put(o);
	return r;
}

static void
test_usage_tokens_every_shape(void)
{
	int64_t in, out;
	double cost;

	CHECK(tokens_of("{\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}", &in, &out, &cost) &&
	    in == 12 && out == 3 && cost < 0);
	CHECK(tokens_of("{\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"cost\":0.5}}", &in, &out, &cost) &&
	    cost == 0.5);
	CHECK(tokens_of("{\"usage\":{\"input_tokens\":100,\"output_tokens\":7,\"cache_read_input_tokens\":50,"
	    "\"cache_creation_input_tokens\":5}}", &in, &out, &cost) && in == 155 && out == 7);
	CHECK(tokens_of("{\"prompt_eval_count\":40,\"eval_count\":9}", &in, &out, &cost) && in == 40 && out == 9);
	CHECK(tokens_of("{\"usageMetadata\":{\"promptTokenCount\":30,\"candidatesTokenCount\":4,"
	    "\"thoughtsTokenCount\":6}}", &in, &out, &cost) && in == 30 && out == 10);
	CHECK(!tokens_of("{\"choices\":[]}", &in, &out, &cost) && in == 0 && out == 0);
	CHECK(!tokens_of("{\"usage\":{\"prompt_tokens\":-5}}", &in, &out, &cost));
	CHECK(!usage_tokens(NULL, &in, &out, &cost));
}

static void
test_usage_prices_defaults_and_file(void)
{
	char dir[] = "/tmp/detm-unit-prices.XXXXXX", path[256];
	double i, o;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	usage_price_init(dir);
	CHECK(usage_price("openrouter", "google/gemini-2.0-flash-001", &i, &o) && i == 0.1 && o == 0.4);
	CHECK(usage_price("openrouter", "google/gemini-2.0-flash-lite-001", &i, &o) && i == 0.075);
	CHECK(usage_price("anthropic", "claude-sonnet-4-20250514", &i, &o) && i == 3 && o == 15);
	CHECK(usage_price("ollama", "anything:7b", &i, &o) && i == 0 && o == 0);
	CHECK(!usage_price("openrouter", "acme/unknown", &i, &o));
	snprintf(path, sizeof path, "%s/prices.json", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f != NULL) {
		fputs("{\"prices\":[{\"model\":\"acme/\",\"input_per_mtok\":1,\"output_per_mtok\":2},"
		    "{\"provider\":\"openrouter\",\"model\":\"acme/x\",\"input_per_mtok\":5,\"output_per_mtok\":6},"
		    "{\"model\":\"bad\"}]}", f);
		fclose(f);
	}
	usage_price_init(dir);  /* re-reads now */
	CHECK(usage_price("openrouter", "acme/unknown", &i, &o) && i == 1 && o == 2);
	CHECK(usage_price("openrouter", "acme/x-large", &i, &o) && i == 5 && o == 6);   /* longest prefix */
	CHECK(usage_price("vllm", "acme/x-large", &i, &o) && i == 1);                   /* provider must match */
	CHECK(!usage_price("openrouter", "bad", &i, &o));                              /* an entry without prices is skipped */
	unlink(path);
	rmdir(dir);
	usage_price_init(dir);
}

const struct harness_test usage_tests[] = {
	{ "usage_tokens_every_shape", test_usage_tokens_every_shape },
	{ "usage_prices_defaults_and_file", test_usage_prices_defaults_and_file },
	{ NULL, NULL },
};
