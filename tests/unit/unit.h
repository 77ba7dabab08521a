/*
 * unit.h - a very small test harness: each test is a function that calls
 * CHECK(); a failed CHECK prints file:line and the expression and marks the
 * test failed (the test goes on, so one run shows every broken check).
 */
#ifndef DETM_UNIT_H
#define DETM_UNIT_H

#include <stdio.h>

extern int unit_failed_checks;

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "    %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			unit_failed_checks++; \
		} \
	} while (0)

struct unit_test {
	const char *name;
	void (*fn)(void);
};

/* Each test file exports its table, ended by { NULL, NULL }. */
extern const struct unit_test util_tests[];
extern const struct unit_test state_tests[];
extern const struct unit_test http_tests[];
extern const struct unit_test store_tests[];
extern const struct unit_test humanize_tests[];
extern const struct unit_test takeover_tests[];

#endif
