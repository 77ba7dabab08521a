/*
 * stuck.c - the stuck checker: a thread that finds idle active tasks and
 * wakes their agent with a resume packet. See stuck.h.
 *
 * Owns: one thread, sleeping on a condition variable between checks (so
 * stuck_shutdown is prompt), and an in-memory table of when each task was last
 * reported. A check: one query for candidates (active, updated_at <= now -
 * after, no 'watching' wait), then per candidate not in its cooldown: build
 * the packet from the task views, write the "stuck" message (which also
 * re-checks, in the same statement, that the task is still active), post
 * the wake-up, remember the time.
 *
 * Decisions:
 * - The stuck message does NOT bump tasks.updated_at (it is written with
 *   this module's own INSERT rather than task_message_add, which counts as
 *   activity). So updated_at stays the agent's last real activity, the
 *   packet's idle_seconds is truthful, and a task that stays idle is
 *   reported again every --stuck-cooldown seconds (not every
 *   max(after, cooldown)). Any real activity still resets the idle clock.
 * - The cooldown is kept in memory only (the Python daemon stamped
 *   metadata.last_stuck_alert_at): writing metadata would be activity too.
 *   A restart therefore may report a still-idle task once more, one check
 *   interval after start.
 * - Orphaned 'watching' rows (a wait engine that died without closing its
 *   rows) keep a task from being reported, as in the Python daemon; the
 *   wait engine owns cleaning them up at start.
 * - The packet is capped at STUCK_PACKET_MAX bytes (one argv string must
 *   stay under 128 KiB for the openclaw CLI): long strings are cut first,
 *   then lists shortened, then bulky parts dropped, and "truncated" is set.
 *
 * Not here: delivery (wake.c), and what counts as activity (task.c).
 */
#include "stuck.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/jx.h"
#include "core/log.h"
#include "task/task.h"
#include "task/wake.h"

#define STUCK_SCAN_MAX     1000        /* candidates read per check */
#define STUCK_ALERTS_MAX   100         /* alerts per check */
#define STUCK_MEMO_MAX     4096        /* tasks remembered for the cooldown */
#define STUCK_ACTIONS      10          /* latest actions of the current item */
#define STUCK_MESSAGES     5
#define STUCK_WAITS        10
#define STUCK_STR_MAX      2000        /* bytes per string in the packet */
#define STUCK_PACKET_MAX   (64 * 1024)
#define STUCK_ID_MAX       72

static const char SQL_STUCK_CANDIDATES[] =
    "SELECT t.id, t.updated_at FROM tasks t WHERE t.status = 'active' AND t.updated_at <= ?1 "
    "AND NOT EXISTS (SELECT 1 FROM wait_jobs w WHERE w.task_id = t.id AND w.status = 'watching') "
    "ORDER BY t.updated_at LIMIT ?2";
static const char SQL_STUCK_WAITS[] =
    "SELECT id, status, target, criteria, created_at, resolved_at FROM wait_jobs "
    "WHERE task_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT ?2";
static const char SQL_STUCK_MSG[] =
    "INSERT INTO task_messages (id, task_id, role, msg_type, content, created_at) "
    "SELECT ?1, ?2, 'system', 'stuck', ?3, ?4 "
    "WHERE EXISTS (SELECT 1 FROM tasks WHERE id = ?2 AND status = 'active')";

struct stuck_memo {
	char id[STUCK_ID_MAX];
	int64_t at_us;          /* mono_us of the last alert */
};

struct stuck_cand {
	char id[STUCK_ID_MAX];
	int64_t updated_at;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool started, stopping;
	struct store *st;
	int64_t check_us, after_ms, cooldown_us;
	/* the checker thread's own: */
	struct stuck_memo memo[STUCK_MEMO_MAX];
	size_t nmemo;
} stuck_state = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* ---- cooldown memory (checker thread only) ---- */

static void
stuck_memo_prune(int64_t now_us)
{
	size_t i = 0;

	while (i < stuck_state.nmemo) {
		if (now_us - stuck_state.memo[i].at_us >= stuck_state.cooldown_us)
			stuck_state.memo[i] = stuck_state.memo[--stuck_state.nmemo];
		else
			i++;
	}
}

static bool
stuck_memo_cooling(const char *id, int64_t now_us)
{
	size_t i;

	for (i = 0; i < stuck_state.nmemo; i++)
		if (strcmp(stuck_state.memo[i].id, id) == 0)
			return now_us - stuck_state.memo[i].at_us < stuck_state.cooldown_us;
	return false;
}

static void
stuck_memo_set(const char *id, int64_t now_us)
{
	size_t i, oldest = 0;

	for (i = 0; i < stuck_state.nmemo; i++) {
		if (strcmp(stuck_state.memo[i].id, id) == 0) {
			stuck_state.memo[i].at_us = now_us;
			return;
		}
		if (stuck_state.memo[i].at_us < stuck_state.memo[oldest].at_us)
			oldest = i;
	}
	i = stuck_state.nmemo < STUCK_MEMO_MAX ? stuck_state.nmemo++ : oldest;
	snprintf(stuck_state.memo[i].id, sizeof stuck_state.memo[i].id, "%s", id);
	stuck_state.memo[i].at_us = now_us;
}

/* ---- the packet ---- */

static json_object *
stuck_get(json_object *o, const char *key)
{
	json_object *v = NULL;

	return o != NULL && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A new reference to o[key], or NULL (JSON null). */
static json_object *
stuck_ref(json_object *o, const char *key)
{
	return json_object_get(stuck_get(o, key));
}

/* Cuts every string inside o to at most max bytes (UTF-8 safe). */
static void
stuck_trim(json_object *o, size_t max)
{
	size_t i, n, cut;
	const char *s;

	switch (json_object_get_type(o)) {
	case json_type_string:
		s = json_object_get_string(o);
		n = (size_t)json_object_get_string_len(o);
		if (n <= max)
			return;
		cut = max;
		while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
			cut--;
		{
			char *t = xasprintf("%.*s...[%zu bytes cut]", (int)cut, s, n - cut);

			json_object_set_string(o, t);
			free(t);
		}
		return;
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			stuck_trim(json_object_array_get_idx(o, i), max);
		return;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			(void)k;
			stuck_trim(v, max);
		}
		return;
	}
	default:
		return;
	}
}

/* Keeps at most keep elements of array a, from index first. */
static void
stuck_array_window(json_object *a, size_t first, size_t keep)
{
	size_t n = a ? json_object_array_length(a) : 0;

	if (n == 0)
		return;
	if (first > n)
		first = n;
	if (first > 0)
		json_object_array_del_idx(a, 0, first);
	n = json_object_array_length(a);
	if (n > keep)
		json_object_array_del_idx(a, keep, n - keep);
}

static size_t
stuck_size(json_object *o)
{
	size_t len = 0;

	jx_string(o, &len);
	return len;
}

/* Shrinks the packet under STUCK_PACKET_MAX, in steps. */
static void
stuck_fit(json_object *p, int64_t cur_ord)
{
	json_object *ci = stuck_get(p, "current_item");

	if (stuck_size(p) <= STUCK_PACKET_MAX)
		return;
	json_object_object_add(p, "truncated", json_object_new_boolean(true));
	stuck_trim(p, 200);
	if (stuck_size(p) <= STUCK_PACKET_MAX)
		return;
	stuck_array_window(stuck_get(ci, "actions"),
	    json_object_array_length(stuck_get(ci, "actions")) > 3
	    ? json_object_array_length(stuck_get(ci, "actions")) - 3 : 0, 3);
	stuck_array_window(stuck_get(p, "items"), cur_ord > 5 ? (size_t)cur_ord - 5 : 0, 50);
	if (stuck_size(p) <= STUCK_PACKET_MAX)
		return;
	json_object_object_del(p, "items");
	json_object_object_del(p, "metadata");
	if (ci != NULL)
		json_object_object_del(ci, "actions");
	json_object_object_del(stuck_get(p, "wait"), "waits");
}

/* The task's recent waits; lock taken here. NULL with e on a DB error. */
static json_object *
stuck_waits(struct store *st, const char *id, struct derr *e)
{
	json_object *waits = json_object_new_array();
	sqlite3_stmt *s;
	int rc;

	store_lock(st);
	s = store_stmt(st, SQL_STUCK_WAITS);
	if (s == NULL) {
		store_fail(st, "stuck waits", e);
		store_unlock(st);
		json_object_put(waits);
		return NULL;
	}
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, STUCK_WAITS);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_object *w = json_object_new_object();

		jx_add_str(w, "wait_id", (const char *)sqlite3_column_text(s, 0));
		jx_add_str(w, "status", (const char *)sqlite3_column_text(s, 1));
		jx_add_str(w, "target", (const char *)sqlite3_column_text(s, 2));
		jx_add_str(w, "criteria", (const char *)sqlite3_column_text(s, 3));
		jx_add_time(w, "created_at", sqlite3_column_int64(s, 4));
		jx_add_time(w, "resolved_at", sqlite3_column_type(s, 5) == SQLITE_NULL
		    ? 0 : sqlite3_column_int64(s, 5));
		json_object_array_add(waits, w);
	}
	sqlite3_reset(s);
	store_unlock(st);
	if (rc != SQLITE_DONE) {
		json_object_put(waits);
		derr_set(e, DERR_INTERNAL, NULL, "stuck waits: database error");
		return NULL;
	}
	return waits;
}

/* {active_wait_ids, last_wait_state, last_wait_event_at, waits} */
static json_object *
stuck_wait_state(json_object *waits)
{
	json_object *w = json_object_new_object(), *active = json_object_new_array(), *last;
	size_t i, n = json_object_array_length(waits);

	for (i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(waits, i);
		const char *st = json_object_get_string(stuck_get(x, "status"));

		if (st != NULL && strcmp(st, "watching") == 0)
			json_object_array_add(active, stuck_ref(x, "wait_id"));
	}
	last = n > 0 ? json_object_array_get_idx(waits, 0) : NULL;
	json_object_object_add(w, "active_wait_ids", active);
	json_object_object_add(w, "last_wait_state", stuck_ref(last, "status"));
	json_object_object_add(w, "last_wait_event_at", last == NULL ? NULL :
	    stuck_get(last, "resolved_at") ? stuck_ref(last, "resolved_at") : stuck_ref(last, "created_at"));
	json_object_object_add(w, "waits", waits);
	return w;
}

/* The packet's head: who, why and since when. */
static json_object *
stuck_head(json_object *sum, const char *id, int64_t updated_at, int64_t idle)
{
	json_object *p = json_object_new_object();
	char when[ISO_TIME_LEN], reason[128];

	if (idle >= 120)
		snprintf(reason, sizeof reason, "no updates for %lld minutes and no active smart wait",
		    (long long)(idle / 60));
	else
		snprintf(reason, sizeof reason, "no updates for %lld seconds and no active smart wait",
		    (long long)idle);
	iso_time(updated_at, when);
	json_object_object_add(p, "task_id", json_object_new_string(id));
	json_object_object_add(p, "name", stuck_ref(sum, "name"));
	json_object_object_add(p, "status", stuck_ref(sum, "status"));
	json_object_object_add(p, "agent_id", stuck_ref(sum, "agent_id"));
	json_object_object_add(p, "reason", json_object_new_string(reason));
	json_object_object_add(p, "updated_at", json_object_new_string(when));
	json_object_object_add(p, "idle_seconds", json_object_new_int64(idle));
	json_object_object_add(p, "metadata", stuck_ref(sum, "metadata"));
	return p;
}

/* The current item: the first active one, else the first pending (-1: none). */
static int64_t
stuck_current(json_object *items, int64_t *count, const char **title)
{
	size_t n = items ? json_object_array_length(items) : 0;
	int64_t cur = -1;
	bool active = false;

	*count = 0;
	*title = NULL;
	for (size_t i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i);
		const char *ist = json_object_get_string(stuck_get(it, "status"));

		if (ist == NULL)
			continue;
		if ((strcmp(ist, "active") == 0 && !active) ||
		    (strcmp(ist, "pending") == 0 && cur < 0)) {
			active = strcmp(ist, "active") == 0;
			cur = json_object_get_int64(stuck_get(it, "ordinal"));
			*title = json_object_get_string(stuck_get(it, "title"));
			*count = json_object_get_int64(stuck_get(it, "actions"));
		}
	}
	return cur;
}

/* Adds "progress" (completed, current, remaining, pct) and the brief
 * "items" to p; returns the current item's ordinal (-1: none). */
static int64_t
stuck_progress(json_object *p, json_object *sum, int64_t *cur_count)
{
	json_object *items = stuck_get(sum, "items"), *brief = json_object_new_array(),
	    *done = json_object_new_array(), *rest = json_object_new_array(), *prog;
	size_t n = items ? json_object_array_length(items) : 0;
	const char *cur_title;
	int64_t cur = stuck_current(items, cur_count, &cur_title);

	for (size_t i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i), *b = json_object_new_object();
		const char *ist = json_object_get_string(stuck_get(it, "status"));
		int64_t ord = json_object_get_int64(stuck_get(it, "ordinal"));

		json_object_object_add(b, "ordinal", stuck_ref(it, "ordinal"));
		json_object_object_add(b, "title", stuck_ref(it, "title"));
		json_object_object_add(b, "status", stuck_ref(it, "status"));
		json_object_array_add(brief, b);
		if (ist != NULL && strcmp(ist, "completed") == 0)
			json_object_array_add(done, json_object_new_int64(ord));
		if (ist != NULL && strcmp(ist, "pending") == 0 && ord != cur)
			json_object_array_add(rest, json_object_new_int64(ord));
	}
	prog = json_object_new_object();
	json_object_object_add(prog, "completed", done);
	json_object_object_add(prog, "current", cur >= 0 ? json_object_new_int64(cur) : NULL);
	jx_add_str(prog, "current_name", cur_title);
	json_object_object_add(prog, "remaining", rest);
	json_object_object_add(prog, "pct", stuck_ref(sum, "progress_pct"));
	json_object_object_add(p, "progress", prog);
	json_object_object_add(p, "items", brief);
	return cur;
}

/* The current item with its last STUCK_ACTIONS actions; NULL with e set. */
static json_object *
stuck_current_item(struct store *st, const char *id, int64_t cur, int64_t count,
    struct derr *e)
{
	int off = count > STUCK_ACTIONS ? (int)(count - STUCK_ACTIONS) : 0;
	json_object *view = task_item_view(st, id, cur, STUCK_ACTIONS, off, e), *ci;

	if (view == NULL)
		return NULL;
	ci = json_object_new_object();
	json_object_object_add(ci, "ordinal", stuck_ref(view, "ordinal"));
	json_object_object_add(ci, "title", stuck_ref(view, "title"));
	json_object_object_add(ci, "status", stuck_ref(view, "status"));
	json_object_object_add(ci, "started_at", stuck_ref(view, "started_at"));
	json_object_object_add(ci, "action_count", stuck_ref(view, "action_count"));
	json_object_object_add(ci, "actions", stuck_ref(view, "actions"));
	json_object_put(view);
	stuck_trim(ci, STUCK_STR_MAX);
	return ci;
}

/* The last STUCK_MESSAGES messages of the thread; NULL with e set. */
static json_object *
stuck_messages(struct store *st, const char *id, struct derr *e)
{
	json_object *thread = task_thread(st, id, STUCK_MESSAGES, e), *msgs, *v;
	size_t n;

	if (thread == NULL)
		return NULL;
	msgs = json_object_new_array();
	v = stuck_get(thread, "messages");
	n = v ? json_object_array_length(v) : 0;
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(v, i), *b = json_object_new_object();

		json_object_object_add(b, "role", stuck_ref(m, "role"));
		json_object_object_add(b, "msg_type", stuck_ref(m, "msg_type"));
		json_object_object_add(b, "content", stuck_ref(m, "content"));
		json_object_object_add(b, "created_at", stuck_ref(m, "created_at"));
		json_object_array_add(msgs, b);
	}
	json_object_put(thread);
	stuck_trim(msgs, STUCK_STR_MAX);
	return msgs;
}

/* The resume packet for task id, or NULL: *gone is set when the task no
 * longer exists or is no longer active (not an error). */
static json_object *
stuck_packet(struct store *st, const char *id, int64_t updated_at, int64_t now,
    bool *gone, struct derr *e)
{
	json_object *sum, *p = NULL, *ci = NULL, *msgs, *waits;
	const char *status;
	int64_t cur_ord, cur_count;

	*gone = false;
	sum = task_summary(st, id, DETAIL_ITEMS, false, e);
	if (sum == NULL) {
		*gone = e->code == DERR_NOT_FOUND;
		return NULL;
	}
	status = json_object_get_string(stuck_get(sum, "status"));
	if (status == NULL || strcmp(status, "active") != 0) {
		*gone = true;
		goto fail;
	}
	p = stuck_head(sum, id, updated_at, (now - updated_at) / 1000);
	cur_ord = stuck_progress(p, sum, &cur_count);
	if (cur_ord >= 0 && (ci = stuck_current_item(st, id, cur_ord, cur_count, e)) == NULL) {
		*gone = e->code == DERR_NOT_FOUND;
		goto fail;
	}
	json_object_object_add(p, "current_item", ci);
	if ((msgs = stuck_messages(st, id, e)) == NULL) {
		*gone = e->code == DERR_NOT_FOUND;
		goto fail;
	}
	json_object_object_add(p, "recent_messages", msgs);
	if ((waits = stuck_waits(st, id, e)) == NULL)
		goto fail;
	json_object_object_add(p, "wait", stuck_wait_state(waits));
	stuck_fit(p, cur_ord);
	json_object_put(sum);
	return p;
fail:
	json_object_put(p);
	json_object_put(sum);
	return NULL;
}

/* Writes the stuck message if the task is still active. 1 written, 0 the
 * task is gone or no longer active, -1 on a database error (logged). */
static int
stuck_message(struct store *st, const char *id, const char *content)
{
	sqlite3_stmt *s;
	char mid[ID_LEN];
	int rc = -1, tries, step;

	store_lock(st);
	for (tries = 0; tries < 8; tries++) {
		s = store_stmt(st, SQL_STUCK_MSG);
		if (s == NULL)
			break;
		id_new(mid);
		sqlite3_bind_text(s, 1, mid, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, content, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, store_now(st));
		step = sqlite3_step(s);
		sqlite3_reset(s);
		if (step == SQLITE_DONE) {
			rc = sqlite3_changes(store_db(st)) > 0 ? 1 : 0;
			break;
		}
		if (step != SQLITE_CONSTRAINT) {
			log_error("stuck: cannot write the message for task %s: %s", id,
			    sqlite3_errmsg(store_db(st)));
			break;
		}
	}
	store_unlock(st);
	return rc;
}

/* Reports one task; true if it was reported. */
static bool
stuck_report(const char *id, int64_t updated_at, int64_t now)
{
	struct derr e;
	json_object *p;
	const char *json, *reason;
	char *text, *content;
	bool gone = false;
	int wrote;

	derr_clear(&e);
	p = stuck_packet(stuck_state.st, id, updated_at, now, &gone, &e);
	if (p == NULL) {
		if (!gone)
			log_warn("stuck: cannot build the resume packet for task %s: %s", id, e.message);
		return false;
	}
	json = jx_string(p, NULL);
	text = xasprintf("[task_stuck_resume] %s", json);
	reason = json_object_get_string(stuck_get(p, "reason"));
	content = xasprintf("Task looks stuck: %s. The agent was sent a resume packet.",
	    reason ? reason : "idle");
	wrote = stuck_message(stuck_state.st, id, content);
	if (wrote > 0) {
		log_info("stuck: task %s (%s); waking the agent", id, reason ? reason : "idle");
		wake_post("task_stuck", id, text, p);
		p = NULL;
	}
	json_object_put(p);
	free(text);
	free(content);
	return wrote > 0;
}

static void
stuck_check(void)
{
	struct stuck_cand *c = xcalloc(STUCK_SCAN_MAX, sizeof *c);
	int64_t now = now_ms(), now_us = mono_us();
	size_t n = 0, i, alerts = 0;
	sqlite3_stmt *s;
	int rc = SQLITE_DONE;

	store_lock(stuck_state.st);
	s = store_stmt(stuck_state.st, SQL_STUCK_CANDIDATES);
	if (s != NULL) {
		sqlite3_bind_int64(s, 1, now - stuck_state.after_ms);
		sqlite3_bind_int(s, 2, STUCK_SCAN_MAX);
		while (n < STUCK_SCAN_MAX && (rc = sqlite3_step(s)) == SQLITE_ROW) {
			snprintf(c[n].id, sizeof c[n].id, "%s", (const char *)sqlite3_column_text(s, 0));
			c[n].updated_at = sqlite3_column_int64(s, 1);
			n++;
		}
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			log_error("stuck: candidate query: %s", sqlite3_errmsg(store_db(stuck_state.st)));
		sqlite3_reset(s);
	}
	store_unlock(stuck_state.st);

	stuck_memo_prune(now_us);
	for (i = 0; i < n && alerts < STUCK_ALERTS_MAX; i++) {
		bool stop;

		pthread_mutex_lock(&stuck_state.mu);
		stop = stuck_state.stopping;
		pthread_mutex_unlock(&stuck_state.mu);
		if (stop)
			break;
		if (stuck_memo_cooling(c[i].id, now_us))
			continue;
		if (stuck_report(c[i].id, c[i].updated_at, now)) {
			stuck_memo_set(c[i].id, now_us);
			alerts++;
		}
	}
	if (alerts > 0)
		log_debug("stuck: %zu candidate(s), %zu reported", n, alerts);
	free(c);
}

static void
stuck_deadline(int64_t us_from_now, struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(us_from_now / 1000000);
	ts->tv_nsec += (long)(us_from_now % 1000000) * 1000;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void *
stuck_main(void *arg)
{
	struct timespec next;

	(void)arg;
	pthread_mutex_lock(&stuck_state.mu);
	stuck_deadline(stuck_state.check_us, &next);
	while (!stuck_state.stopping) {
		if (pthread_cond_timedwait(&stuck_state.cv, &stuck_state.mu, &next) != ETIMEDOUT)
			continue;       /* a signal to stop, or spurious */
		pthread_mutex_unlock(&stuck_state.mu);
		stuck_check();
		pthread_mutex_lock(&stuck_state.mu);
		stuck_deadline(stuck_state.check_us, &next);
	}
	pthread_mutex_unlock(&stuck_state.mu);
	return NULL;
}

int
stuck_init(struct store *st, const struct config *cfg, struct derr *e)
{
	pthread_condattr_t ca;
	int err;

	if (stuck_state.started)
		return 0;
	if (!cfg->stuck_detection) {
		log_info("stuck detection is off");
		return 0;
	}
	stuck_state.st = st;
	stuck_state.check_us = (int64_t)cfg->stuck_check_s * 1000000;
	stuck_state.after_ms = (int64_t)cfg->stuck_after_s * 1000;
	stuck_state.cooldown_us = (int64_t)cfg->stuck_cooldown_s * 1000000;
	stuck_state.nmemo = 0;
	stuck_state.stopping = false;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&stuck_state.cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((err = pthread_create(&stuck_state.thread, NULL, stuck_main, NULL)) != 0) {
		pthread_cond_destroy(&stuck_state.cv);
		return derr_set(e, DERR_INTERNAL, NULL, "cannot start stuck detection: %s", strerror(err));
	}
	stuck_state.started = true;
	log_info("stuck detection: every %ld s, idle %ld s, cooldown %ld s", cfg->stuck_check_s,
	    cfg->stuck_after_s, cfg->stuck_cooldown_s);
	return 0;
}

void
stuck_shutdown(void)
{
	if (!stuck_state.started)
		return;
	pthread_mutex_lock(&stuck_state.mu);
	stuck_state.stopping = true;
	pthread_cond_signal(&stuck_state.cv);
	pthread_mutex_unlock(&stuck_state.mu);
	pthread_join(stuck_state.thread, NULL);
	pthread_cond_destroy(&stuck_state.cv);
	stuck_state.started = false;
}
