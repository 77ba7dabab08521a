/*
 * harness.h - the one harness of the C test programs (test-unit, test-x11,
 * test-vision, test-mcp, httpcase): checks, counting and the closing line
 * "N passed, N failed" that tests/run.sh and run_part read.
 *
 *   CHECK(cond)            in a test: if cond is false, print file:line and
 *                          the expression and count a failed check; the test
 *                          goes on, so one run shows every broken check
 *   REQUIRE(cond, fmt...)  the same with a printf-style note, then leave
 *                          the test through its `out:` label (tests that
 *                          own resources)
 *   harness_run(t, filter) run a table of void tests (ended by {NULL, NULL})
 *                          whose name contains filter (NULL: all); a test
 *                          passes when none of its checks failed
 *   harness_result(name, ok)  count one result and print "ok   name" or
 *                          "FAIL name"; harness_count(ok) counts only
 *   return harness_finish();  the closing line; 1 if anything failed
 *
 * One program defines the counters once, at file scope: HARNESS_DEFINE;
 * Checks may run on several threads (the count is atomic); results are
 * counted by the main thread.
 */
#ifndef DETM_TEST_HARNESS_H
#define DETM_TEST_HARNESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

extern atomic_int harness_checks_failed;
extern int harness_passed, harness_failed;

#define HARNESS_DEFINE \
	atomic_int harness_checks_failed; \
	int harness_passed, harness_failed

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "    %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			harness_checks_failed++; \
		} \
	} while (0)

#define CHECK_MSG(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "    %s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			harness_checks_failed++; \
		} \
	} while (0)

#define REQUIRE(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "    %s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			harness_checks_failed++; \
			goto out; \
		} \
	} while (0)

struct harness_test {
	const char *name;
	void (*fn)(void);
};

static inline void
harness_count(bool ok)
{
	if (ok)
		harness_passed++;
	else
		harness_failed++;
}

static inline void
harness_result(const char *name, bool ok)
{
	harness_count(ok);
	printf("%s %s\n", ok ? "ok  " : "FAIL", name);
	fflush(stdout);
}

static inline void
harness_run(const struct harness_test *t, const char *filter)
{
	for (; t->name != NULL; t++) {
		int before = harness_checks_failed;

		if (filter != NULL && strstr(t->name, filter) == NULL)
			continue;
		t->fn();
		harness_result(t->name, harness_checks_failed == before);
	}
}

static inline int
harness_finish(void)
{
	printf("%d passed, %d failed\n", harness_passed, harness_failed);
	fflush(stdout);
	return harness_failed != 0;
}

#endif
