/*
 * worker.c - see worker.h. Owns the job queue, the running jobs (one slot
 * per pool thread) and the per-job cancel flags; all under one mutex (a
 * flag is also atomic because forward.c reads it without the lock).
 *
 * Request ids are compared by their compact JSON text, so 5 and "5" stay
 * different ids, as JSON-RPC requires.
 *
 * Not here: what a job means, the wire format of progress (rpc.c, through
 * the worker_ops it gives worker_start), HTTP (forward.c).
 */
#include "worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "caps.h"
#include "forward.h"
#include "log.h"
#include "merge.h"
#include "peerlist.h"
#include "result.h"
#include "route.h"

struct job {
	struct job *next;
	struct json_object *msg;
	char *key;                  /* id as JSON text, NULL for a batch */
	char *inflight;             /* key of the tools/call running now */
	bool cancelled;             /* dropped while queued */
	atomic_int cancel;          /* abort the running call */
};

static pthread_mutex_t wk_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wk_cond = PTHREAD_COND_INITIALIZER;
static struct job *wk_head, *wk_tail;
static size_t wk_queued, wk_busy;
static struct job *wk_running[CAP_WORKERS];
static bool wk_stopping;
static bool wk_aborting;            /* grace over: cancel everything */
static atomic_int wk_shutdown;      /* abort the startup version check */
static struct peerset *wk_peers;   /* the detmds (peerlist.h: names re-resolved) */
static bool wk_resolve_all;
static long wk_resolve_s;
static char *wk_token;
static const struct worker_ops *wk_ops;      /* rpc.c's, set once by worker_start */
static pthread_t wk_threads[CAP_WORKERS];
static size_t wk_nthreads;         /* started so far (under wk_lock) */
static size_t wk_waiting;          /* of those, waiting for a job (under wk_lock) */
/* libcurl and the API version check come with the first tools/call, on
 * whichever worker runs it, so initialize and tools/list touch neither
 * libcurl nor detmd. Under wk_init_lock: 1 not yet, 0 ready, -1 failed. */
static pthread_mutex_t wk_init_lock = PTHREAD_MUTEX_INITIALIZER;
static int wk_init_state = 1;
static char wk_init_err[300];

/* The job this pool thread runs, and its connection to detmd. */
static _Thread_local struct job *wk_cur;
static _Thread_local struct forward *wk_fw[PEERLIST_MAX];   /* one per URL, made at first use */
static _Thread_local int wk_nfw;
static _Thread_local unsigned wk_gen;      /* of the peerset wk_fw was made from */

static char *
wk_key(struct json_object *id)
{
	char *k;

	if (id == NULL)
		return NULL;
	k = strdup(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN));
	if (k == NULL)
		abort();
	return k;
}

static void
job_free(struct job *j)
{
	if (j == NULL)
		return;
	json_object_put(j->msg);
	free(j->key);
	free(j->inflight);
	free(j);
}

/* Take the next job (lock held); NULL when stopping and the queue is empty. */
static struct job *
wk_take(size_t slot)
{
	struct job *j;

	while (wk_head == NULL && !wk_stopping) {
		wk_waiting++;
		pthread_cond_wait(&wk_cond, &wk_lock);
		wk_waiting--;
	}
	j = wk_head;
	if (j == NULL)
		return NULL;
	wk_head = j->next;
	if (wk_head == NULL)
		wk_tail = NULL;
	wk_queued--;
	if (!j->cancelled) {
		wk_running[slot] = j;
		wk_busy++;
	}
	return j;
}

static void *
wk_main(void *arg)
{
	size_t slot = (size_t)(uintptr_t)arg;
	struct json_object *resp;
	struct job *j;
	bool ran;

	for (;;) {
		pthread_mutex_lock(&wk_lock);
		j = wk_take(slot);
		ran = j != NULL && wk_running[slot] == j;
		pthread_mutex_unlock(&wk_lock);
		if (j == NULL)
			break;
		if (ran) {
			wk_cur = j;
			resp = wk_ops->execute(j->msg);
			wk_cur = NULL;
			if (resp != NULL)
				wk_ops->send(resp);
		}
		pthread_mutex_lock(&wk_lock);
		if (ran) {
			wk_running[slot] = NULL;
			wk_busy--;
		}
		job_free(j);
		pthread_cond_broadcast(&wk_cond);
		pthread_mutex_unlock(&wk_lock);
	}
	for (int u = 0; u < wk_nfw; u++) {
		forward_free(wk_fw[u]);
		wk_fw[u] = NULL;
	}
	return NULL;
}

/* This thread's handles for the current URL list (made again when the
 * list changed: a name re-resolved to other pods). */
static void
wk_handles(void)
{
	struct peerlist pl;
	unsigned gen = peerset_get(wk_peers, &pl);

	if (gen == wk_gen && wk_nfw > 0)
		return;
	for (int u = 0; u < wk_nfw; u++) {
		forward_free(wk_fw[u]);
		wk_fw[u] = NULL;
	}
	for (int u = 0; u < pl.n; u++) {
		wk_fw[u] = forward_new(pl.url[u], wk_token);
		forward_set_fleet(wk_fw[u], pl.n > 1);
	}
	wk_nfw = pl.n;
	wk_gen = gen;
}

/* The first call on any worker loads libcurl and checks every detmd's API
 * version (logged on a mismatch); later calls find it done. Each worker
 * then makes its own connections' handles, and route.c says which one t
 * goes to. NULL with a sentence in err when libcurl cannot be loaded or
 * no detmd can take the call. */
static struct forward *
wk_forward_get(const struct tool *t, struct json_object *args, int *which, char *err, size_t errlen)
{
	int state;

	pthread_mutex_lock(&wk_init_lock);
	if (wk_init_state == 1) {
		wk_init_state = forward_global_init(wk_init_err, sizeof wk_init_err) == 0 ? 0 : -1;
		struct peerlist pl;

		peerset_get(wk_peers, &pl);
		for (int u = 0; wk_init_state == 0 && u < pl.n; u++) {
			struct forward *fw = forward_new(pl.url[u], wk_token);

			forward_check_version(fw, &wk_shutdown);
			forward_free(fw);
		}
	}
	state = wk_init_state;
	snprintf(err, errlen, "%s", wk_init_err);
	pthread_mutex_unlock(&wk_init_lock);
	if (state != 0)
		return NULL;
	wk_handles();
	*which = route_choose(wk_fw, wk_nfw, t, args, err, errlen);
	return *which >= 0 ? wk_fw[*which] : NULL;
}

/* Threads start with the first jobs, not here: a client that only lists
 * the tools (every MCP client at start) pays for none (6 pthread_creates
 * and their malloc arenas were ~1/3 of spawn -> tools/list). */
int
worker_start(const char *const *urls, int nurls, const char *token, const struct worker_ops *ops)
{
	struct peerlist pl = { 0 };
	char err[200];

	wk_ops = ops;
	for (int u = 0; u < nurls; u++)
		if (peerlist_parse(urls[u], &pl, err, sizeof err) != 0) {
			log_error("%s", err);
			return -1;
		}
	wk_peers = peerset_new(&pl, wk_resolve_all, wk_resolve_s);
	wk_token = token != NULL ? strdup(token) : NULL;
	if (token != NULL && wk_token == NULL)
		abort();
	return 0;
}

/* One more thread when the queue holds more jobs than threads wait (lock
 * held). Without any thread, -1. */
static int
wk_grow(void)
{
	if (wk_queued <= wk_waiting || wk_nthreads >= CAP_WORKERS)
		return 0;
	if (pthread_create(&wk_threads[wk_nthreads], NULL, wk_main, (void *)(uintptr_t)wk_nthreads) == 0)
		wk_nthreads++;
	return wk_nthreads > 0 ? 0 : -1;
}

int
worker_submit(struct json_object *msg, struct json_object *id)
{
	struct job *j;
	int rc = -1;

	pthread_mutex_lock(&wk_lock);
	if (wk_queued >= CAP_QUEUE || wk_stopping)
		goto out;
	j = calloc(1, sizeof *j);
	if (j == NULL)
		abort();
	j->msg = msg;
	j->key = wk_key(id);
	if (wk_tail != NULL)
		wk_tail->next = j;
	else
		wk_head = j;
	wk_tail = j;
	wk_queued++;
	pthread_cond_signal(&wk_cond);
	rc = 0;
	if (wk_grow() != 0) {
		log_error("cannot start a worker thread");
		wk_head = wk_tail = NULL;       /* j is the only job: nothing runs it */
		wk_queued = 0;
		j->msg = NULL;
		job_free(j);
		rc = -1;
	}
out:
	pthread_mutex_unlock(&wk_lock);
	return rc;
}

void
worker_cancel(struct json_object *request_id)
{
	char *key = wk_key(request_id);
	struct job *j;
	size_t i;

	if (key == NULL)
		return;
	pthread_mutex_lock(&wk_lock);
	for (i = 0; i < CAP_WORKERS; i++) {
		j = wk_running[i];
		if (j != NULL && j->inflight != NULL && strcmp(j->inflight, key) == 0) {
			atomic_store(&j->cancel, 1);
			log_info("cancelling request %s in flight", key);
		}
	}
	for (j = wk_head; j != NULL; j = j->next)
		if (j->key != NULL && strcmp(j->key, key) == 0) {
			j->cancelled = true;
			log_info("dropping queued request %s", key);
		}
	pthread_mutex_unlock(&wk_lock);
	free(key);
}

void
worker_resolve_all(bool on, long every_s)
{
	wk_resolve_all = on;
	wk_resolve_s = every_s;
}

struct json_object *
worker_forward(const struct tool *t, struct json_object *args, bool follow, struct json_object *id,
               struct json_object *progress_token)
{
	struct forward_ctl ctl = { 0 };
	struct json_object *res;
	struct job *j = wk_cur;
	struct forward *fw;
	char *key = wk_key(id), err[900];
	int which = 0;

	pthread_mutex_lock(&wk_lock);
	free(j->inflight);
	j->inflight = key;
	atomic_store(&j->cancel, wk_aborting);
	pthread_mutex_unlock(&wk_lock);

	ctl.cancel = &j->cancel;
	ctl.follow = follow;
	if (progress_token != NULL) {
		ctl.progress = wk_ops->progress;
		ctl.ud = progress_token;
	}
	fw = wk_forward_get(t, args, &which, err, sizeof err);
	if (fw != NULL && wk_nfw > 1 && route_merges(t, args))
		res = merge_call(wk_fw, wk_nfw, t, args, &ctl);
	else
		res = fw != NULL ? forward_call(fw, t, args, &ctl) : result_error(NULL, "%s", err);
	/* the ids a reply carries go into route.c's cache: the next call
	 * naming one needs no lookup */
	if (fw != NULL && res != NULL && wk_nfw > 1)
		route_remember_result(res, forward_base(fw));

	pthread_mutex_lock(&wk_lock);
	j->inflight = NULL;
	if (atomic_load(&j->cancel) && res != NULL) {
		/* cancelled after the reply arrived: the client expects nothing */
		json_object_put(res);
		res = NULL;
	}
	pthread_mutex_unlock(&wk_lock);
	free(key);
	return res;
}

void
worker_stop(int grace_ms)
{
	struct timespec deadline;
	struct job *j;
	size_t i, n;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += grace_ms / 1000;
	deadline.tv_nsec += (long)(grace_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	atomic_store(&wk_shutdown, 1);
	pthread_mutex_lock(&wk_lock);
	wk_stopping = true;
	pthread_cond_broadcast(&wk_cond);
	while ((wk_head != NULL || wk_busy > 0) && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&wk_cond, &wk_lock, &deadline);
	if (wk_head != NULL || wk_busy > 0) {
		log_info("stdin closed: abandoning %zu queued call(s) and %zu in flight", wk_queued,
		         wk_busy);
		for (j = wk_head; j != NULL; j = j->next)
			j->cancelled = true;
		wk_aborting = true; /* batch elements not yet started abort too */
		for (i = 0; i < CAP_WORKERS; i++)
			if (wk_running[i] != NULL)
				atomic_store(&wk_running[i]->cancel, 1);
	}
	n = wk_nthreads;
	pthread_mutex_unlock(&wk_lock);
	for (i = 0; i < n; i++)
		pthread_join(wk_threads[i], NULL);
	wk_nthreads = 0;
	peerset_free(wk_peers);
	wk_peers = NULL;
	free(wk_token);
	wk_token = NULL;
}
