/* main.c - runs the x11 suite's tables; prints "N passed, N failed". */
#include <stdlib.h>
#include <string.h>

#include "x11/xerr.h"
#include "xh.h"

HARNESS_DEFINE;

int
main(int argc, char **argv)
{
	const struct harness_test *const tables[] = { input_tests, window_tests, capture_tests,
	    ocr_tests, typing_tests, lease_tests };

	xerr_init();
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		harness_run(tables[t], argc > 1 ? argv[1] : NULL);
	/* The typing runs under busy loops of their own (test_typing.c):
	 * DETM_TYPING_REPRO=1. */
	if (getenv("DETM_TYPING_REPRO") != NULL)
		harness_run(typing_load_tests, argc > 1 ? argv[1] : NULL);
	return harness_finish();
}
