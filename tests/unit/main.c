/* main.c - runs every unit-test table; prints "N passed, N failed". */
#include <string.h>

#include "unit.h"

HARNESS_DEFINE;

int
main(int argc, char **argv)
{
	const struct harness_test *const tables[] = { util_tests, state_tests, http_tests, store_tests, store_fault_tests,
	    humanize_tests,
	    takeover_tests, usage_tests, checks_tests, a11ymatch_tests, jsjson_tests, a11yreply_tests, completion_tests, launch_tests, taskview_tests, expect_tests, oswform_tests, loopdet_tests, peerlist_tests };

	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		harness_run(tables[t], argc > 1 ? argv[1] : NULL);
	return harness_finish();
}
