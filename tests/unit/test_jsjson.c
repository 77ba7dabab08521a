/* test_jsjson.c - common/jsjson.c against what Node's JSON.stringify
 * printed for the same values (node -e, v20; the expected strings below). */
#include <stdlib.h>
#include <string.h>

#include "jsjson.h"
#include "unit.h"

static void
test_numbers_as_javascript_writes_them(void)
{
	static const struct { double d; const char *js; } cases[] = {
		{ 1, "1" }, { 0.5, "0.5" }, { -0.0, "0" }, { 1e21, "1e+21" },
		{ 1e20, "100000000000000000000" }, { 123456789012.0, "123456789012" },
		{ 1.5e-7, "1.5e-7" }, { 0.000001, "0.000001" }, { 0.0000012, "0.0000012" },
		{ -2.5, "-2.5" }, { 3.14159, "3.14159" }, { 1.0 / 3, "0.3333333333333333" },
		{ 9007199254740992.0, "9007199254740992" }, { 1e-7, "1e-7" }, { 123e-20, "1.23e-18" },
		{ 5e300, "5e+300" }, { -1e-300, "-1e-300" }, { 0.1 + 0.2, "0.30000000000000004" },
		{ 100, "100" }, { 1e6, "1000000" },
	};
	char out[JSJSON_NUM_LEN];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		jsjson_number(cases[i].d, out);
		CHECK_MSG(strcmp(out, cases[i].js) == 0, "%.17g: got %s, want %s", cases[i].d, out, cases[i].js);
	}
}

static void
test_objects_as_json_stringify_2_writes_them(void)
{
	json_object *o = json_tokener_parse("{\"b\":1,\"a\":[],\"10\":\"x\",\"2\":{},"
	    "\"c\":[1,{\"d\":\"q\\\"\\\\\\n\\t\\u0001\\u007f/\xc3\xa9\"}],\"01\":true,\"e\":null}");
	const char *want = "{\n  \"2\": {},\n  \"10\": \"x\",\n  \"b\": 1,\n  \"a\": [],\n  \"c\": [\n"
	    "    1,\n    {\n      \"d\": \"q\\\"\\\\\\n\\t\\u0001\x7f/\xc3\xa9\"\n    }\n  ],\n"
	    "  \"01\": true,\n  \"e\": null\n}";
	size_t len = 0;
	char *got;

	CHECK(o != NULL);
	got = jsjson_pretty(o, 4096, &len);
	CHECK_MSG(got != NULL && strcmp(got, want) == 0, "got:\n%s", got ? got : "(null)");
	CHECK(got != NULL && len == strlen(want));
	free(got);
	CHECK(jsjson_pretty(o, 20, NULL) == NULL);      /* over the cap: nothing */
	json_object_put(o);
	o = json_object_new_double(2.0);                /* an integral double */
	got = jsjson_pretty(o, 64, NULL);
	CHECK(got != NULL && strcmp(got, "2") == 0);
	free(got);
	json_object_put(o);
}

const struct harness_test jsjson_tests[] = {
	{ "jsjson numbers as JavaScript writes them", test_numbers_as_javascript_writes_them },
	{ "jsjson objects as JSON.stringify(v, null, 2)", test_objects_as_json_stringify_2_writes_them },
	{ NULL, NULL },
};
