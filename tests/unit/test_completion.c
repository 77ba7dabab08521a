/* test_completion.c - the rules of "done, checked" (daemon/task/completion.c):
 * every verdict from the evidence alone, the effect read from output JSON,
 * done_when conditions parsed. */
#include <string.h>

#include "task/completion.h"
#include "unit.h"

#define ACTS(...) ((const struct completion_act[]){ __VA_ARGS__ })

/* The verdict of `in`; *sentence copied into buf. */
static enum completion_verdict
judge(const struct completion_in *in, char *buf, size_t cap)
{
	json_object *why = NULL;
	enum completion_verdict v = completion_judge(in, &why);

	snprintf(buf, cap, "%s", json_object_get_string(json_object_object_get(why, "sentence")));
	CHECK(json_object_is_type(json_object_object_get(why, "reasons"), json_type_array));
	json_object_put(why);
	return v;
}

static void
test_every_verdict_from_actions_and_waits(void)
{
	struct completion_in in = { .scope = "since the item started" };
	char s[1024];

	CHECK(judge(&in, s, sizeof s) == COMPLETION_UNCHECKED && strstr(s, "no actions") != NULL);
	in.acts = ACTS({ "failed", NULL, "click Save" });
	in.n_acts = 1;
	CHECK(judge(&in, s, sizeof s) == COMPLETION_CONTRADICTED);
	CHECK(strstr(s, "1 failed action since the item started") != NULL && strstr(s, "click Save") != NULL);
	/* a failure followed by a success is resolved; the success's effect decides */
	in.acts = ACTS({ "failed", NULL, "a" }, { "completed", "confirmed", "b" });
	in.n_acts = 2;
	CHECK(judge(&in, s, sizeof s) == COMPLETION_EVIDENCED && strstr(s, "confirmed") != NULL);
	in.acts = ACTS({ "completed", NULL, "a" });
	in.n_acts = 1;
	CHECK(judge(&in, s, sizeof s) == COMPLETION_UNCHECKED && strstr(s, "no effect verdict") != NULL);
	in.acts = ACTS({ "completed", "unverifiable", "a" });
	CHECK(judge(&in, s, sizeof s) == COMPLETION_UNCHECKED && strstr(s, "unverifiable") != NULL);
	in.acts = ACTS({ "completed", "suspected_noop", "a" });
	CHECK(judge(&in, s, sizeof s) == COMPLETION_CONTRADICTED && strstr(s, "suspected_noop") != NULL);
	/* a started action is not finished: the one before it decides */
	in.acts = ACTS({ "completed", "confirmed", "a" }, { "started", NULL, "b" });
	in.n_acts = 2;
	CHECK(judge(&in, s, sizeof s) == COMPLETION_EVIDENCED);
	/* two failures after the last success */
	in.acts = ACTS({ "completed", "confirmed", "a" }, { "failed", NULL, "b" }, { "failed", NULL, "c" });
	in.n_acts = 3;
	CHECK(judge(&in, s, sizeof s) == COMPLETION_CONTRADICTED && strstr(s, "2 failed actions") != NULL);
	/* an open wait contradicts even a confirmed success */
	in.acts = ACTS({ "completed", "confirmed", "a" });
	in.n_acts = 1;
	in.open_waits = 1;
	CHECK(judge(&in, s, sizeof s) == COMPLETION_CONTRADICTED && strstr(s, "1 smart wait") != NULL);
}

static void
test_done_when_decides(void)
{
	struct completion_in in = { .scope = "in the task", .with_conds = true };
	struct completion_cond yes = { "file:\"/a\"", "/a exists", 1 }, no = { "file:\"/b\"", "no file /b", 0 },
	    cant = { "text:\"X\"", "cannot check text synchronously", -1 };
	char s[1024];

	CHECK(judge(&in, s, sizeof s) == COMPLETION_UNCHECKED && strstr(s, "no done_when") != NULL);
	in.conds = &yes;
	in.n_conds = 1;
	CHECK(judge(&in, s, sizeof s) == COMPLETION_EVIDENCED && strstr(s, "/a exists") != NULL);
	in.conds = &no;
	in.acts = ACTS({ "completed", "confirmed", "a" });
	in.n_acts = 1;
	CHECK(judge(&in, s, sizeof s) == COMPLETION_CONTRADICTED && strstr(s, "is false: no file /b") != NULL);
	in.conds = &cant;
	in.n_acts = 0;
	CHECK(judge(&in, s, sizeof s) == COMPLETION_UNCHECKED && strstr(s, "unchecked: cannot check text") != NULL);
	in.with_conds = false;
	in.n_conds = 0;
	CHECK(judge(&in, s, sizeof s) == COMPLETION_UNCHECKED && strstr(s, "done_when") == NULL);
}

static void
test_effect_and_conditions_parse(void)
{
	const char *kind;
	char arg[64];

	CHECK(strcmp(completion_effect("{\"effect\":\"confirmed\"}"), "confirmed") == 0);
	CHECK(strcmp(completion_effect("{\"result\":{\"effect\":\"suspected_noop\"}}"), "suspected_noop") == 0);
	CHECK(strcmp(completion_effect("{\"verification\":{\"effect\":{\"verdict\":\"unverifiable\"}}}"),
	    "unverifiable") == 0);
	CHECK(completion_effect("{\"verification\":{\"effect\":\"none\"}}") == NULL);  /* a11y's words */
	CHECK(completion_effect("not json") == NULL && completion_effect(NULL) == NULL);
	CHECK(completion_effect("[1]") == NULL && completion_effect("\"confirmed\"") == NULL);
	CHECK(completion_cond_parse("file:\"/tmp/x y\"", &kind, arg, sizeof arg) == 0 &&
	    strcmp(kind, "file") == 0 && strcmp(arg, "/tmp/x y") == 0);
	CHECK(completion_cond_parse("text: Exported ", &kind, arg, sizeof arg) == 0 &&
	    strcmp(kind, "text") == 0 && strcmp(arg, "Exported") == 0);
	CHECK(completion_cond_parse("element:button \"OK\"", &kind, arg, sizeof arg) == 0 &&
	    strcmp(kind, "element") == 0 && strcmp(arg, "button \"OK\"") == 0);
	CHECK(completion_cond_parse("file:", &kind, arg, sizeof arg) != 0);
	CHECK(completion_cond_parse("file:\"\"", &kind, arg, sizeof arg) != 0);
	CHECK(completion_cond_parse("screen:x", &kind, arg, sizeof arg) != 0);
	CHECK(completion_cond_parse("file:aaaaaaaaaaaaaaaa", &kind, arg, 8) != 0);     /* past the cap */
	CHECK(strcmp(completion_name(COMPLETION_CONTRADICTED), "contradicted") == 0);
}

const struct harness_test completion_tests[] = {
	{ "completion: every verdict from actions and waits", test_every_verdict_from_actions_and_waits },
	{ "completion: done_when decides", test_done_when_decides },
	{ "completion: effects and conditions parse", test_effect_and_conditions_parse },
	{ NULL, NULL },
};
