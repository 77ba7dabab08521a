/*
 * test_checks.c - the state checkers are live in debug and ASan builds: a
 * consistent state passes, a broken one aborts (a forked child runs each
 * check, so an assertion ends only it). Under NDEBUG the checks are
 * compiled out and every case must pass instead.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "waits/waits_check.h"

/* Runs fn(arg) in a child with stderr closed; true if it aborted. */
static bool
aborts(void (*fn)(const void *), const void *arg)
{
	pid_t pid;
	int st = 0;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDERR_FILENO);
		fn(arg);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void
job(const void *v)
{
	waits_check_job(v);
}

static void
tally(const void *t)
{
	waits_check_tally(t);
}

#ifdef NDEBUG
#define BROKEN_ABORTS false
#else
#define BROKEN_ABORTS true
#endif

static void
test_wait_checks_accept_a_consistent_job_and_refuse_broken_ones(void)
{
	struct wait_view ok = { .id = "0123abcd", .queued = true, .has_criteria = true,
	    .created_ms = 1000, .deadline_ms = 5000, .in_ring = true };
	struct wait_view both = ok, removed = ok, bad_id = ok, ring = ok;

	both.running = true;            /* queued and running at once */
	removed.done = removed.removed = true;   /* removed but still reachable */
	bad_id.id = "XYZ";
	ring.queued = false;            /* in the ring without the flag */
	CHECK(!aborts(job, &ok));
	CHECK(aborts(job, &both) == BROKEN_ABORTS);
	CHECK(aborts(job, &removed) == BROKEN_ABORTS);
	CHECK(aborts(job, &bad_id) == BROKEN_ABORTS);
	CHECK(aborts(job, &ring) == BROKEN_ABORTS);
}

static void
test_wait_checks_match_the_ring_to_the_table(void)
{
	struct wait_tally ok = { .cap = 8, .workers = 2, .qhead = 7, .qlen = 3,
	    .table_queued = 3, .table_running = 2 };
	struct wait_tally lost = ok, busy = ok, head = ok;

	lost.table_queued = 2;          /* a queued job missing from the ring */
	busy.table_running = 3;         /* more running than workers */
	head.qhead = 8;
	CHECK(!aborts(tally, &ok));
	CHECK(aborts(tally, &lost) == BROKEN_ABORTS);
	CHECK(aborts(tally, &busy) == BROKEN_ABORTS);
	CHECK(aborts(tally, &head) == BROKEN_ABORTS);
}

const struct harness_test checks_tests[] = {
	{ "wait_checks_accept_a_consistent_job_and_refuse_broken_ones",
	  test_wait_checks_accept_a_consistent_job_and_refuse_broken_ones },
	{ "wait_checks_match_the_ring_to_the_table", test_wait_checks_match_the_ring_to_the_table },
	{ NULL, NULL },
};
