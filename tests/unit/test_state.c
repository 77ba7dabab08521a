/* test_state.c - the status machines, checked against a written-out model. */
#include <string.h>

#include "task/taskstate.h"
#include "unit.h"

static void
test_task_transitions_match_the_documented_machine(void)
{
	/* The doc's table, spelled out independently of taskstate.c. */
	static const char *const legal[] = {
		"active>paused", "active>completed", "active>failed", "active>cancelled",
		"paused>active", "paused>cancelled" };
	int from, to;
	size_t i;

	for (from = 0; from < TASK__COUNT; from++) {
		for (to = 0; to < TASK__COUNT; to++) {
			char key[40];
			int expect = from == to;

			snprintf(key, sizeof key, "%s>%s", task_status_name(from), task_status_name(to));
			for (i = 0; i < sizeof legal / sizeof legal[0]; i++)
				expect |= strcmp(key, legal[i]) == 0;
			if (task_status_can(from, to) != expect)
				fprintf(stderr, "    task %s: expected %d\n", key, expect);
			CHECK(task_status_can(from, to) == expect);
		}
	}
	CHECK(task_status_final(TASK_COMPLETED) && task_status_final(TASK_CANCELLED) &&
	    task_status_final(TASK_FAILED) && !task_status_final(TASK_PAUSED));
}

static void
test_item_transitions_match_the_documented_machine(void)
{
	static const char *const legal[] = {
		"pending>active", "pending>completed", "pending>failed",
		"pending>skipped", "pending>scrapped",
		"active>completed", "active>failed", "active>skipped", "active>scrapped",
		"failed>active" };
	int from, to;
	size_t i;

	for (from = 0; from < ITEM__COUNT; from++) {
		for (to = 0; to < ITEM__COUNT; to++) {
			char key[40];
			int expect = from == to;

			snprintf(key, sizeof key, "%s>%s", item_status_name(from), item_status_name(to));
			for (i = 0; i < sizeof legal / sizeof legal[0]; i++)
				expect |= strcmp(key, legal[i]) == 0;
			CHECK(item_status_can(from, to) == expect);
		}
	}
}

static void
test_status_names_parse_case_insensitively(void)
{
	CHECK(task_status_parse("Cancelled") == TASK_CANCELLED);
	CHECK(task_status_parse(" canceled ") == TASK_CANCELLED);
	CHECK(task_status_parse("ACTIVE") == TASK_ACTIVE);
	CHECK(task_status_parse("done") == -1);
	CHECK(task_status_parse("") == -1);
	CHECK(item_status_parse("Skipped") == ITEM_SKIPPED);
	CHECK(item_status_parse("cancelled") == -1);
	CHECK(item_status_parse("COMPLETED") == ITEM_COMPLETED);
	CHECK(task_status_parse("CANCELED") == TASK_CANCELLED);
	CHECK(task_status_parse("Completed") == TASK_COMPLETED);
}

static void
test_allowed_lists_name_the_next_states(void)
{
	char buf[128];

	task_status_allowed(TASK_PAUSED, buf, sizeof buf);
	CHECK(strcmp(buf, "active, cancelled") == 0);
	task_status_allowed(TASK_COMPLETED, buf, sizeof buf);
	CHECK(strstr(buf, "final") != NULL);
	item_status_allowed(ITEM_PENDING, buf, sizeof buf);
	CHECK(strcmp(buf, "active, completed, failed, skipped, scrapped") == 0);
	item_status_allowed(ITEM_FAILED, buf, sizeof buf);
	CHECK(strcmp(buf, "active") == 0);
}

const struct harness_test state_tests[] = {
	{ "task_transitions_match_the_documented_machine", test_task_transitions_match_the_documented_machine },
	{ "item_transitions_match_the_documented_machine", test_item_transitions_match_the_documented_machine },
	{ "status_names_parse_case_insensitively", test_status_names_parse_case_insensitively },
	{ "allowed_lists_name_the_next_states", test_allowed_lists_name_the_next_states },
	{ NULL, NULL },
};
