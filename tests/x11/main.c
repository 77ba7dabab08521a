/* main.c - runs the x11 suite's tables; prints "N passed, N failed". */
#include <string.h>

#include "xerr.h"
#include "xh.h"

int
main(int argc, char **argv)
{
	const struct xh_test *const tables[] = { input_tests, window_tests, capture_tests,
	    ocr_tests };
	int passed = 0, failed = 0;

	xerr_init();
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
		for (const struct xh_test *u = tables[t]; u->name != NULL; u++) {
			int before = xh_failed_checks;

			if (argc > 1 && strstr(u->name, argv[1]) == NULL)
				continue;
			u->fn();
			if (xh_failed_checks == before) {
				passed++;
				printf("ok   %s\n", u->name);
			} else {
				failed++;
				printf("FAIL %s\n", u->name);
			}
			fflush(stdout);
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
