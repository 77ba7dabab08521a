/*
 * api_probe.c - what an orchestrator asks (issue 39): GET /livez (the
 * process answers), GET /readyz (it should be sent new work), GET and
 * POST /api/drain (stop taking new tasks before the pod goes away).
 *
 * /livez touches nothing but this handler: a daemon whose disk is full is
 * alive (restarting it would not help), it is just not ready. /readyz
 * checks, in this order, and names the first that fails as the error's
 * field (503 unavailable), listing every check either way:
 *   draining  POST /api/drain was called (drain.h)
 *   db        the database answers a read (store_ok), the store has seen
 *             no write failure since its last good commit (store_degraded),
 *             and the data dir takes a new file with one byte in it
 *             (created, written, removed: a full or read-only disk fails)
 *   displays  a task display slot is free (ACU_MAX_DISPLAYS)
 * Both are open without the token (routes.c ROUTE_OPEN; security.md says
 * why) and so answer nothing a stranger could use: no ids, no paths.
 *
 * Does not: cancel or hand back tasks (drain refuses new ones only), keep
 * state (drain.c does).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "store/store.h"
#include "task/drain.h"
#include "x11/display.h"

int
api_livez(struct req *r, struct derr *e)
{
	json_object *o = json_object_new_object();

	(void)e;
	json_object_object_add(o, "status", json_object_new_string("alive"));
	return req_reply(r, 200, o);
}

/* The data dir takes a one-byte file. true, or false with why. */
static bool
dir_writable(const char *dir, char *why, size_t cap)
{
	static atomic_uint seq;
	char path[4200];
	int fd, err = 0;

	/* A name per probe: two at once never remove each other's file. */
	snprintf(path, sizeof path, "%s/.readyz.%u", dir, atomic_fetch_add(&seq, 1));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		err = errno;
	else if (write(fd, "r", 1) != 1)
		err = errno ? errno : EIO;
	if (fd >= 0) {
		if (close(fd) != 0 && err == 0)
			err = errno;
		unlink(path);
	}
	if (err != 0)
		snprintf(why, cap, "the data dir takes no new file (%s)", strerror(err));
	return err == 0;
}

static bool
db_ready(struct req *r, char *why, size_t cap)
{
	char cause[400];

	if (!store_ok(r->app->store)) {
		snprintf(why, cap, "the database does not answer");
		return false;
	}
	if (store_degraded(r->app->store, cause, sizeof cause)) {
		snprintf(why, cap, "database writes fail: %s", cause);
		return false;
	}
	return dir_writable(r->app->cfg->data_dir, why, cap);
}

static json_object *
check_obj(bool ok, const char *why)
{
	json_object *c = json_object_new_object();

	json_object_object_add(c, "ok", json_object_new_boolean(ok));
	if (!ok)
		json_object_object_add(c, "why", json_object_new_string(why));
	return c;
}

int
api_readyz(struct req *r, struct derr *e)
{
	json_object *o = json_object_new_object(), *checks = json_object_new_object(), *dl, *c;
	char why[3][512] = { "", "", "" };
	bool ok[3];
	int64_t running, max;
	const char *failed = NULL;
	int fi = -1;

	ok[0] = !drain_on();
	if (!ok[0])
		snprintf(why[0], sizeof why[0], "draining (POST /api/drain): no new task is taken");
	ok[1] = db_ready(r, why[1], sizeof why[1]);
	dl = display_list();
	running = (int64_t)json_object_array_length(json_object_object_get(dl, "displays"));
	max = json_object_get_int64(json_object_object_get(dl, "max"));
	json_object_put(dl);
	ok[2] = running < max;
	if (!ok[2])
		snprintf(why[2], sizeof why[2], "all %lld task display slots are in use (ACU_MAX_DISPLAYS)",
		    (long long)max);
	json_object_object_add(checks, "draining", check_obj(ok[0], why[0]));
	json_object_object_add(checks, "db", check_obj(ok[1], why[1]));
	c = check_obj(ok[2], why[2]);
	json_object_object_add(c, "running", json_object_new_int64(running));
	json_object_object_add(c, "max", json_object_new_int64(max));
	json_object_object_add(checks, "displays", c);
	for (int i = 0; i < 3 && fi < 0; i++)
		if (!ok[i])
			fi = i;
	json_object_object_add(o, "status", json_object_new_string(fi < 0 ? "ready" : "not_ready"));
	json_object_object_add(o, "checks", checks);
	if (fi < 0)
		return req_reply(r, 200, o);
	failed = fi == 0 ? "draining" : fi == 1 ? "db" : "displays";
	derr_set(e, DERR_UNAVAILABLE, failed, "not ready: %s", why[fi]);
	derr_add_json(o, e);
	derr_clear(e);
	return req_reply(r, 503, o);
}

static int
drain_reply(struct req *r, const struct drain_state *s)
{
	json_object *o = json_object_new_object();
	char iso[ISO_TIME_LEN];

	json_object_object_add(o, "draining", json_object_new_boolean(s->draining));
	if (s->draining)
		iso_time(s->since_ms, iso);
	json_object_object_add(o, "since", s->draining ? json_object_new_string(iso) : NULL);
	json_object_object_add(o, "active", json_object_new_int64(s->active));
	json_object_object_add(o, "paused", json_object_new_int64(s->paused));
	json_object_object_add(o, "drained", json_object_new_boolean(s->drained));
	return req_reply(r, 200, o);
}

int
api_drain_get(struct req *r, struct derr *e)
{
	struct drain_state s;

	if (drain_state(r->app->store, &s, e) != 0)
		return -1;
	return drain_reply(r, &s);
}

int
api_drain_post(struct req *r, struct derr *e)
{
	struct drain_state s;
	int64_t wait;

	if (api_body_check(r, api_drain_post, e) != 0 ||
	    req_query_int(r, "wait", 0, DRAIN_WAIT_MAX_S, 0, &wait, e) != 0)
		return -1;
	drain_start(r->app->store);
	if (drain_wait(r->app->store, (int)wait, &s, e) != 0)
		return -1;
	return drain_reply(r, &s);
}
