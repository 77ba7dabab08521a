/* main.c - runs every unit-test table; prints "N passed, N failed". */
#include <string.h>

#include "unit.h"

int unit_failed_checks;

int
main(int argc, char **argv)
{
	const struct unit_test *const tables[] = { util_tests, state_tests, http_tests, store_tests, humanize_tests, takeover_tests };
	int passed = 0, failed = 0;
	size_t t;

	for (t = 0; t < sizeof tables / sizeof tables[0]; t++) {
		const struct unit_test *u;

		for (u = tables[t]; u->name != NULL; u++) {
			int before = unit_failed_checks;

			if (argc > 1 && strstr(u->name, argv[1]) == NULL)
				continue;
			u->fn();
			if (unit_failed_checks == before) {
				passed++;
				printf("ok   %s\n", u->name);
			} else {
				failed++;
				printf("FAIL %s\n", u->name);
			}
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
