/*
 * http_side.c - where a handler runs, and replies that wait for a commit.
 *
 * Threads: MHD's own pool of `http-threads` epoll workers (one per CPU by
 * default) reads, checks and answers every connection; an idle connection
 * costs no thread. A handler that never blocks (the store's reads and
 * writes, listed in inline_fns) runs on the worker. Any other handler (X
 * work, model calls, long polls, tool calls: anything that may take
 * milliseconds or minutes) runs on a side worker while its connection is
 * suspended, so it never stalls the other connections of its MHD worker.
 * A ROUTE_TRY handler (a desktop action: quick unless the display is busy,
 * not yet connected or silent; a logged write: quick unless the store is
 * restarting its WAL) is first run on the worker in nowait mode
 * (nowait.h); if it refuses, it runs again on a side worker. For a click
 * that saves the two thread hand-offs, about a sixth of it; for a write it
 * keeps a WAL restart's milliseconds of fsync from stalling the worker's
 * other connections (reads among them). A refused logged write goes to
 * the write lane: one side worker runs those in turn.
 * Side workers are started on demand (at most max-connections) and leave
 * after SIDE_IDLE_S idle.
 *
 * Deferred replies: a handler of deferred_fns runs with a deferred
 * acknowledgement (store_defer_begin); its reply waits, the connection
 * suspended on http.deferred, until the store's commit hook (http_on_commit)
 * reports its batch, then a failed batch becomes the store's error.
 * Invariants: every suspended connection here is resumed exactly once
 * (by side_run or http_on_commit); running counts jobs queued or running
 * (under mu); a job on the deferred list has ticket > committed_seen.
 *
 * Not here: running the handler and sending its reply (http_req.c), the
 * access handler's steps (http.c).
 */
#include "http_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/nowait.h"
#include "store/store.h"
#include "task/events.h"

#define SIDE_IDLE_S     10      /* a side worker with nothing to do leaves */

static _Thread_local bool side_thread;  /* this thread is a side_main */

bool
http_on_side_worker(void)
{
	return side_thread;
}

enum MHD_Result
http_reply_or_peer(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url)
{
	if (!hr->to_peer)
		return http_handler_reply(hr, conn, method, url);
	log_debug("%s %s: not here, asking the peers on a side worker", method, url);
	http_reply_release(&hr->r);
	json_object_put(hr->r.body);
	hr->r.body = NULL;
	derr_clear(&hr->e);
	hr->rc = -1;
	hr->ticket = 0;
	hr->to_peer = false;
	free(hr->method);
	free(hr->url);
	http_side_queue(h, hr, conn, method, url, false);
	return MHD_YES;
}

/* A deferred reply whose batch did not end well becomes the store's error
 * for it (state < 0): not committed (no_space, io_error, internal), or
 * stored but not durable. */
void
http_commit_result(struct http *h, struct hreq *hr, int state)
{
	if (state >= 0 || hr->rc != 0)
		return;
	json_object_put(hr->r.reply);
	hr->r.reply = NULL;
	hr->rc = -1;
	store_ticket_error(h->app->store, hr->ticket, &hr->e);
}

/* Handlers that never block: the store's reads and writes (a write waits
 * at most for the group commit in flight), stream set-ups, static files.
 * They run on the HTTP worker; every other one on a side worker. */
static const route_fn inline_fns[] = {
	api_health, api_livez, api_readyz, api_drain_get, api_version, api_capabilities, api_routes_list, api_task_list, api_task_get,
	api_item_get, api_action_get, api_action_patch,
	api_messages_get, api_events, api_live_task, api_live_shared,
	api_live_list, api_wait_list, api_dashboard, api_dashboard_file, api_tools_list,
	api_humanize_get,
};

bool
http_runs_inline(const struct hreq *hr, struct MHD_Connection *conn)
{
	const char *block;
	size_t i;

	if (hr->route->fn == api_wait_get || hr->route->fn == api_record_get) {
		block = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "block_s");
		return block == NULL || block[strspn(block, "0")] == '\0';
	}
	for (i = 0; i < ARRAY_LEN(inline_fns); i++)
		if (hr->route->fn == inline_fns[i])
			return true;
	return false;
}

/* A ROUTE_TRY handler, on the HTTP worker in nowait mode: true if it ran
 * to an answer (sent like any inline handler's), false if it refused to
 * wait (it changed nothing; its request is reset for a side worker). */
bool
http_try_inline(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url)
{
	bool refused;

	nowait_begin();
	http_handler_call(h, hr, conn, method, url);
	refused = nowait_end();
	if (!refused)
		return true;
	/* A refusal comes before anything is changed: nothing was written. */
	assert(hr->ticket == 0);
	log_debug("%s %s: on a side worker (%s)", method, url, hr->e.message);
	http_reply_release(&hr->r);
	json_object_put(hr->r.body);
	hr->r.body = NULL;
	derr_clear(&hr->e);
	hr->rc = -1;
	return false;
}

/* After a deferred handler: true if the reply must wait for hr->ticket's
 * commit (the connection is then suspended until the hook resumes it;
 * conn NULL: it is suspended already, a write lane job). When the batch
 * failed, the reply becomes a 500. */
bool
http_commit_wait(struct http *h, struct hreq *hr, struct MHD_Connection *conn)
{
	int state = store_ticket_state(h->app->store, hr->ticket);

	if (state == 0) {
		pthread_mutex_lock(&h->d_mu);
		if (h->committed_seen < hr->ticket) {
			hr->phase = PH_COMMIT;
			hr->next = h->deferred;
			h->deferred = hr;
			if (conn != NULL)
				MHD_suspend_connection(conn);
			pthread_mutex_unlock(&h->d_mu);
			return true;
		}
		pthread_mutex_unlock(&h->d_mu);
		state = store_ticket_state(h->app->store, hr->ticket);
	}
	http_commit_result(h, hr, state);
	return false;
}

/* The store's commit hook: events of the batch go out, then its replies. */
void
http_on_commit(void *arg, uint64_t batch, bool ok)
{
	struct http *h = arg;
	struct hreq **pp, *hr;

	events_commit(batch, ok);
	pthread_mutex_lock(&h->d_mu);
	if (batch > h->committed_seen)
		h->committed_seen = batch;
	for (pp = &h->deferred; (hr = *pp) != NULL;) {
		if (hr->ticket > batch) {
			pp = &hr->next;
			continue;
		}
		*pp = hr->next;
		MHD_resume_connection(hr->conn);
	}
	pthread_mutex_unlock(&h->d_mu);
}

static void *side_main(void *arg);
static void *lane_main(void *arg);

/* A detached side worker running fn (h->mu held); false if none started. */
static bool
side_spawn(struct http *h, void *(*fn)(void *))
{
	pthread_t t;
	pthread_attr_t at;
	bool ok;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	ok = pthread_create(&t, &at, fn, h) == 0;
	pthread_attr_destroy(&at);
	if (ok)
		h->nside++;
	return ok;
}

/* Hands hr to a side worker and suspends its connection (worker thread).
 * lane: a logged write refused while the store lock was held for long
 * (the write lane, one worker for all); else a worker of its own. */
void
http_side_queue(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url, bool lane)
{
	hr->phase = PH_QUEUED;
	hr->conn = conn;
	hr->method = xstrdup(method);
	hr->url = xstrdup(url);
	MHD_suspend_connection(conn);
	pthread_mutex_lock(&h->mu);
	hr->next = NULL;
	h->running++;
	/* If the lane's worker cannot start, the job runs on a general one. */
	if (lane && !h->w_busy)
		h->w_busy = side_spawn(h, lane_main);
	hr->lane = lane && h->w_busy;
	if (hr->lane) {
		*h->w_tail = hr;
		h->w_tail = &hr->next;
		pthread_mutex_unlock(&h->mu);
		return;
	}
	*h->q_tail = hr;
	h->q_tail = &hr->next;
	h->queued++;
	/* Every queued job needs a thread of its own (it may block for long):
	 * an idle one that has not picked up an earlier job yet does not count. */
	if (h->queued > h->nidle && h->nside < h->app->cfg->max_conns &&
	    !side_spawn(h, side_main) && h->nside == 0)
		log_error("cannot start a side worker; requests wait for one");
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* Runs a queued job and resumes its connection (a write lane job's, once
 * its batch committed); h->mu held on entry and on return (let go
 * meanwhile). */
static void
side_run(struct http *h, struct hreq *hr)
{
	pthread_mutex_unlock(&h->mu);
	http_handler_call(h, hr, hr->conn, hr->method, hr->url);
	if (hr->ticket == 0 || !http_commit_wait(h, hr, NULL)) {
		hr->phase = PH_RAN;
		MHD_resume_connection(hr->conn);
	}
	pthread_mutex_lock(&h->mu);
	h->running--;
	pthread_cond_broadcast(&h->idle_cv);
}

/* The write lane's worker: runs the lane's jobs in turn, leaves when it
 * is empty (the next refused write starts a new one). */
static void *
lane_main(void *arg)
{
	struct http *h = arg;
	struct hreq *hr;

	pthread_mutex_lock(&h->mu);
	while ((hr = h->w_head) != NULL) {
		h->w_head = hr->next;
		if (h->w_head == NULL)
			h->w_tail = &h->w_head;
		side_run(h, hr);
	}
	h->w_busy = false;
	h->nside--;
	pthread_cond_broadcast(&h->idle_cv);
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static void *
side_main(void *arg)
{
	struct http *h = arg;
	struct hreq *hr;
	struct timespec ts;

	side_thread = true;
	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (h->q_head == NULL && !h->stopping) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += SIDE_IDLE_S;
			h->nidle++;
			int w = pthread_cond_timedwait(&h->cv, &h->mu, &ts);
			h->nidle--;
			if (w != 0 && h->q_head == NULL)
				break;
		}
		hr = h->q_head;
		if (hr == NULL)
			break;
		h->q_head = hr->next;
		h->queued--;
		if (h->q_head == NULL)
			h->q_tail = &h->q_head;
		side_run(h, hr);
	}
	h->nside--;
	pthread_cond_broadcast(&h->idle_cv);
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

void
http_side_stop(struct http *h)
{
	/* Side workers: finish what runs (it resumes its connection), then leave.
	 * MHD may not stop while a connection is suspended. */
	pthread_mutex_lock(&h->mu);
	while (h->running > 0)
		pthread_cond_wait(&h->idle_cv, &h->mu);
	h->stopping = true;
	pthread_cond_broadcast(&h->cv);
	while (h->nside > 0)
		pthread_cond_wait(&h->idle_cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	/* Replies waiting for a commit: the committer resumes them shortly. */
	for (;;) {
		bool none;

		pthread_mutex_lock(&h->d_mu);
		none = h->deferred == NULL;
		pthread_mutex_unlock(&h->d_mu);
		if (none)
			break;
		usleep(1000);
	}
}
