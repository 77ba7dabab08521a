/*
 * test_lease.c - the display lease (display.c) against a real Xvfb that is
 * stopped (SIGSTOP) while a reader holds the display inside an X round
 * trip: another lease gives up with DERR_DISPLAY_UNRESPONSIVE instead of
 * waiting until the server resumes, and after SIGCONT the holder finishes
 * and leases work again on the same connection.
 *
 * The holder leases BEFORE the stop and gives the lease back only after
 * its XSync returns, so the second lease always meets a held display whose
 * server is silent: no race decides which path runs. The one bound checked
 * (the waiter is done within 60 s while the server stays stopped) is
 * generous; the old code waited until SIGCONT, so the check failed there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/config.h"
#include "core/util.h"
#include "x11/display.h"
#include "xh.h"

#define WAITER_LIMIT_S 60
#define LEASE_TASK "1ea5e0ab"   /* a task id (id_valid) */

struct waiter {
	const char *stop_task;  /* display_stop(stop_task) instead of a lease */
	const char *task;       /* the lease's task (NULL: the shared display) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	int rc;
	struct derr e;
};

static void *
holder_main(void *arg)
{
	struct display_lease *l = arg;

	XSync(l->d, False);     /* blocks while the server is stopped */
	display_unlease(l);
	return NULL;
}

static void *
waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct display_lease l;
	struct derr e;
	int rc;

	derr_clear(&e);
	if (w->stop_task != NULL) {
		rc = display_stop(w->stop_task);
	} else if ((rc = display_lease(w->task, w->task ? DISPLAY_TASK : DISPLAY_SHARED, &l,
	    &e)) == 0) {
		display_unlease(&l);
	}
	pthread_mutex_lock(&w->mu);
	w->rc = rc;
	w->e = e;
	w->done = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* True when the waiter finished within WAITER_LIMIT_S. */
static bool
waiter_wait(struct waiter *w)
{
	struct timespec until;
	bool done;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAITER_LIMIT_S;
	pthread_mutex_lock(&w->mu);
	while (!w->done && pthread_cond_timedwait(&w->cv, &w->mu, &until) != ETIMEDOUT)
		;
	done = w->done;
	pthread_mutex_unlock(&w->mu);
	return done;
}

static char lease_dir[] = "/tmp/detm-lease-XXXXXX";

static void
lease_cleanup(void)
{
	char cmd[64];

	snprintf(cmd, sizeof cmd, "rm -rf %s", lease_dir);     /* a mkdtemp name */
	if (system(cmd) != 0)
		fprintf(stderr, "    cannot remove %s\n", lease_dir);
}

/* display_init, once per process (it keeps cfg and its tables for the
 * process's life): a data dir of the test's own (with logs/, where Xvfb
 * logs), `shared` as the shared display. Returns 0 or -1. */
static int
lease_init(const char *shared)
{
	static struct config c;
	static bool done;
	static int rc = -1;
	char logs[64];
	struct derr e;

	if (done)
		return rc;
	done = true;
	if (mkdtemp(lease_dir) == NULL)
		return -1;
	atexit(lease_cleanup);
	snprintf(logs, sizeof logs, "%s/logs", lease_dir);
	if (mkdir(logs, 0700) != 0)
		return -1;
	c.data_dir = lease_dir;
	c.display = (char *)(uintptr_t)shared;
	c.max_displays = 2;
	c.display_wait_ms = 1000;
	c.display_w = 320;
	c.display_h = 240;
	c.shared_xvfb = (char *)(uintptr_t)"";
	c.window_manager = (char *)(uintptr_t)"";
	c.xvfb = (char *)(uintptr_t)"Xvfb";
	derr_clear(&e);
	if ((rc = display_init(&c, &e)) != 0)
		fprintf(stderr, "    display_init: %s\n", e.message);
	return rc;
}

/* A task display (an Xvfb of detmd's own, with a cookie) stopped while a
 * reader holds it: leases give up, and stopping the display (DELETE
 * /api/tasks/{id}/display, a task's end) kills the server first instead
 * of waiting for the holder forever; the holder's call then fails. */
static void
test_stop_stuck_display(void)
{
	struct waiter w = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	struct waiter ws = { .stop_task = LEASE_TASK, .mu = PTHREAD_MUTEX_INITIALIZER,
		.cv = PTHREAD_COND_INITIALIZER };
	struct display_lease held, again;
	json_object *info = NULL, *v;
	struct derr e;
	pthread_t ht, wt, st;
	pid_t pid;

	derr_clear(&e);
	if (lease_init(":9") != 0) {    /* no shared display is used here */
		CHECK_MSG(false, "no display_init");
		return;
	}
	if (display_start(LEASE_TASK, 0, 0, &info, &e) != 0) {
		CHECK_MSG(false, "display_start: %s", e.message);
		goto out;
	}
	pid = json_object_object_get_ex(info, "pid", &v) ? (pid_t)json_object_get_int(v) : 0;
	CHECK(pid > 0);
	CHECK_MSG(display_lease(LEASE_TASK, DISPLAY_TASK, &held, &e) == 0, "%s", e.message);
	if (held.d == NULL || pid <= 0)
		goto out;
	kill(pid, SIGSTOP);
	CHECK(pthread_create(&ht, NULL, holder_main, &held) == 0);
	w.task = LEASE_TASK;
	CHECK(pthread_create(&wt, NULL, waiter_main, &w) == 0);
	CHECK_MSG(waiter_wait(&w), "a lease of a held, stopped task display still waits");
	CHECK_MSG(w.rc == -1 && w.e.code == DERR_DISPLAY_UNRESPONSIVE &&
	    strstr(w.e.message, LEASE_TASK) != NULL, "rc %d code %d: %s", w.rc, (int)w.e.code,
	    w.e.message);
	CHECK(pthread_create(&st, NULL, waiter_main, &ws) == 0);
	CHECK_MSG(waiter_wait(&ws), "stopping a held, stopped display still waits");
	CHECK(ws.rc == 0);
	if (!ws.done)
		kill(pid, SIGCONT);
	pthread_join(ht, NULL);         /* its XSync failed: the server is gone */
	pthread_join(wt, NULL);
	pthread_join(st, NULL);
	CHECK(kill(pid, 0) != 0);
	derr_clear(&e);
	CHECK(display_lease(LEASE_TASK, DISPLAY_TASK, &again, &e) != 0 && e.code == DERR_CONFLICT);
out:
	json_object_put(info);
	display_shutdown();
}

static void
test_stopped_holder(void)
{
	struct xh_server s;
	struct waiter w = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	struct display_lease held, again;
	struct derr e;
	pthread_t ht, wt;
	bool waited;

	derr_clear(&e);
	if (xh_server_start(&s, 320, 240) != 0) {
		CHECK_MSG(false, "no Xvfb");
		return;
	}
	if (lease_init(s.name) != 0) {
		CHECK_MSG(false, "no display_init");
		xh_server_stop(&s);
		return;
	}
	CHECK(display_lease(NULL, DISPLAY_SHARED, &held, &e) == 0);
	if (held.d == NULL)
		goto out;
	kill(s.pid, SIGSTOP);
	CHECK(pthread_create(&ht, NULL, holder_main, &held) == 0);
	CHECK(pthread_create(&wt, NULL, waiter_main, &w) == 0);
	waited = waiter_wait(&w);
	CHECK_MSG(waited, "a lease on a held display of a stopped server still waits after %d s",
	    WAITER_LIMIT_S);
	CHECK_MSG(w.rc == -1 && w.e.code == DERR_DISPLAY_UNRESPONSIVE &&
	    strstr(w.e.message, s.name) != NULL && strstr(w.e.message, "has not answered for") != NULL,
	    "rc %d code %d: %s", w.rc, (int)w.e.code, w.e.message);
	kill(s.pid, SIGCONT);
	pthread_join(ht, NULL);
	pthread_join(wt, NULL);
	/* The holder finished its round trip; the connection is whole. */
	derr_clear(&e);
	CHECK_MSG(display_lease(NULL, DISPLAY_SHARED, &again, &e) == 0, "%s", e.message);
	if (again.d != NULL) {
		CHECK(held.d == NULL && again.width == 320);
		CHECK(XSync(again.d, False) != 0);
		display_unlease(&again);
	}
out:
	display_shutdown();
	xh_server_stop(&s);
}

const struct harness_test lease_tests[] = {
	{ "lease_stopped_holder", test_stopped_holder },
	{ "lease_stop_stuck_display", test_stop_stuck_display },
	{ NULL, NULL },
};
