/*
 * worker.c - see worker.h. Owns the job queue, the in-flight request key
 * and the cancel flag; all three under one mutex (the flag is also atomic
 * because curl's progress callback reads it without the lock).
 *
 * Request ids are compared by their compact JSON text, so 5 and "5" stay
 * different ids, as JSON-RPC requires.
 *
 * Not here: what a job means (rpc_execute in rpc.c), HTTP (forward.c).
 */
#include "worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "caps.h"
#include "forward.h"
#include "log.h"
#include "result.h"
#include "rpc.h"

struct job {
	struct job *next;
	struct json_object *msg;
	char *key;                  /* id as JSON text, NULL for a batch */
	bool cancelled;
};

static pthread_mutex_t wk_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wk_cond = PTHREAD_COND_INITIALIZER;
static struct job *wk_head, *wk_tail;
static size_t wk_queued;
static bool wk_stopping, wk_busy;
static bool wk_aborting;          /* grace over: cancel everything */
static char *wk_inflight;           /* key of the running tools/call */
static atomic_int wk_cancel;        /* abort the running transfer */
static struct forward *wk_fw;       /* made at the first tools/call */
static char *wk_url, *wk_token;
static pthread_t wk_thread;

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
	free(j);
}

static void *
wk_main(void *arg)
{
	struct json_object *resp;
	struct job *j;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&wk_lock);
		while (wk_head == NULL && !wk_stopping)
			pthread_cond_wait(&wk_cond, &wk_lock);
		j = wk_head;
		if (j == NULL) {
			pthread_mutex_unlock(&wk_lock);
			break;
		}
		wk_head = j->next;
		if (wk_head == NULL)
			wk_tail = NULL;
		wk_queued--;
		wk_busy = !j->cancelled;
		pthread_mutex_unlock(&wk_lock);

		if (!j->cancelled) {
			resp = rpc_execute(j->msg);
			if (resp != NULL)
				rpc_send(resp);
		}
		job_free(j);
		pthread_mutex_lock(&wk_lock);
		wk_busy = false;
		pthread_cond_broadcast(&wk_cond);
		pthread_mutex_unlock(&wk_lock);
	}
	return NULL;
}

int
worker_start(const char *url, const char *token)
{
	wk_url = strdup(url);
	wk_token = token ? strdup(token) : NULL;
	if (wk_url == NULL || (token != NULL && wk_token == NULL))
		abort();
	return pthread_create(&wk_thread, NULL, wk_main, NULL) != 0 ? -1 : 0;
}

/* The first tools/call (worker thread): load libcurl, make the connection's
 * handle and check detmd's API version before the call goes out. NULL with
 * a sentence in err when libcurl cannot be loaded. */
static struct forward *
wk_forward_get(char *err, size_t errlen)
{
	if (wk_fw != NULL)
		return wk_fw;
	if (forward_global_init(err, errlen) != 0)
		return NULL;
	wk_fw = forward_new(wk_url, wk_token);
	forward_check_version(wk_fw, &wk_cancel);
	return wk_fw;
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
	pthread_cond_broadcast(&wk_cond);
	rc = 0;
out:
	pthread_mutex_unlock(&wk_lock);
	return rc;
}

void
worker_cancel(struct json_object *request_id)
{
	char *key = wk_key(request_id);
	struct job *j;

	if (key == NULL)
		return;
	pthread_mutex_lock(&wk_lock);
	if (wk_inflight != NULL && strcmp(wk_inflight, key) == 0) {
		atomic_store(&wk_cancel, 1);
		log_info("cancelling request %s in flight", key);
	}
	for (j = wk_head; j != NULL; j = j->next)
		if (j->key != NULL && strcmp(j->key, key) == 0) {
			j->cancelled = true;
			log_info("dropping queued request %s", key);
		}
	pthread_mutex_unlock(&wk_lock);
	free(key);
}

struct json_object *
worker_forward(const struct tool *t, struct json_object *args, struct json_object *id)
{
	struct json_object *res;
	struct forward *fw;
	char *key = wk_key(id), err[300];

	pthread_mutex_lock(&wk_lock);
	wk_inflight = key;
	atomic_store(&wk_cancel, wk_aborting);
	pthread_mutex_unlock(&wk_lock);

	fw = wk_forward_get(err, sizeof err);
	res = fw ? forward_call(fw, t, args, &wk_cancel) : result_error(NULL, "%s", err);

	pthread_mutex_lock(&wk_lock);
	wk_inflight = NULL;
	if (atomic_load(&wk_cancel) && res != NULL) {
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
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += grace_ms / 1000;
	deadline.tv_nsec += (long)(grace_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&wk_lock);
	wk_stopping = true;
	pthread_cond_broadcast(&wk_cond);
	while ((wk_head != NULL || wk_busy) && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&wk_cond, &wk_lock, &deadline);
	if (wk_head != NULL || wk_busy) {
		log_info("stdin closed: abandoning %zu queued call(s) and the one in flight", wk_queued);
		for (j = wk_head; j != NULL; j = j->next)
			j->cancelled = true;
		wk_aborting = true; /* batch elements not yet started abort too */
		atomic_store(&wk_cancel, 1);
	}
	pthread_mutex_unlock(&wk_lock);
	pthread_join(wk_thread, NULL);
	forward_free(wk_fw);
	wk_fw = NULL;
	free(wk_url);
	free(wk_token);
	wk_url = wk_token = NULL;
}
