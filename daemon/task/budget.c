/*
 * budget.c - per-task budgets (see budget.h).
 *
 * State, under budget_state.mu: the table of live budgeted tasks (entries: limits,
 * spent figures, status, `tripped`), the queue of tasks to pause, and the
 * stop flag. An entry's figures start from the database (entry_read) and
 * then grow with budget_note; its status follows the task hook.
 * `tripped` is set when a pause for the budget has been queued and cleared
 * when the task is resumed or its budget changes, so one crossing queues
 * one pause.
 *
 * The budget thread pauses queued tasks (task_control_by, then a wake-up)
 * and, once a second and whenever a budget changes, queues the active tasks
 * that are at or over a limit (minutes run out; a budget set below what is
 * already spent). It holds no lock while it writes.
 *
 * Does not: record usage (usage.c) or refuse calls itself (usage.c asks
 * budget_check).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "budget.h"
#include "core/jx.h"
#include "core/log.h"
#include "task.h"
#include "taskstate.h"
#include "wake.h"

#define BUDGET_TICK_MS 1000
#define BUDGET_QUEUE_MAX 256

static const char SQL_ROW[] =
    "SELECT b.usd, b.model_calls, b.tokens, b.minutes, t.created_at, t.status, t.updated_at "
    "FROM task_budgets b JOIN tasks t ON t.id = b.task_id WHERE b.task_id = ?1";
static const char SQL_SPENT[] =
    "SELECT COUNT(*), TOTAL(cost_usd), TOTAL(input_tokens + output_tokens), "
    "TOTAL(cost_usd IS NULL) FROM usage_events WHERE task_id = ?1";
static const char SQL_LIVE[] =
    "SELECT b.task_id FROM task_budgets b JOIN tasks t ON t.id = b.task_id "
    "WHERE t.status IN ('active', 'paused')";

struct entry {
	char id[ID_LEN];
	bool has[BUDGET__COUNT];
	double lim[BUDGET__COUNT];
	double usd;
	int64_t calls, tokens, unpriced;
	int64_t created_ms, ended_ms;   /* ended_ms: a final task's last update, else 0 */
	int status;
	bool tripped;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct store *st;
	struct entry *e;
	size_t n, cap;
	char queue[BUDGET_QUEUE_MAX][ID_LEN];
	size_t nq;
	bool stopping, started;
	pthread_t thread;
} budget_state = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* Reads one task's budget and spent figures (rd: a read snapshot).
 * 1 found, 0 no budget, -1 error. */
static int
entry_read(struct store *rd, const char *id, struct entry *en)
{
	sqlite3_stmt *s = store_stmt(rd, SQL_ROW);
	int rc, found = 0;

	memset(en, 0, sizeof *en);
	snprintf(en->id, sizeof en->id, "%s", id);
	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		for (int k = 0; k < BUDGET__COUNT; k++) {
			en->has[k] = sqlite3_column_type(s, k) != SQLITE_NULL;
			en->lim[k] = sqlite3_column_double(s, k);
		}
		en->created_ms = sqlite3_column_int64(s, 4);
		en->status = task_status_parse((const char *)sqlite3_column_text(s, 5));
		if (task_status_final(en->status))
			en->ended_ms = sqlite3_column_int64(s, 6);
		found = 1;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? 0 : -1;
	s = store_stmt(rd, SQL_SPENT);
	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW) {
		en->calls = sqlite3_column_int64(s, 0);
		en->usd = sqlite3_column_double(s, 1);
		en->tokens = (int64_t)sqlite3_column_double(s, 2);
		en->unpriced = (int64_t)sqlite3_column_double(s, 3);
	}
	sqlite3_reset(s);
	return found;
}

/* ---- the table ---- */

static struct entry *
find_locked(const char *id)
{
	for (size_t i = 0; i < budget_state.n; i++)
		if (strcmp(budget_state.e[i].id, id) == 0)
			return &budget_state.e[i];
	return NULL;
}

static void
remove_locked(const char *id)
{
	struct entry *en = find_locked(id);

	if (en != NULL)
		*en = budget_state.e[--budget_state.n];
}

static void
put_locked(const struct entry *en)
{
	struct entry *old = find_locked(en->id);

	if (old == NULL) {
		if (budget_state.n == budget_state.cap) {
			budget_state.cap = budget_state.cap ? budget_state.cap * 2 : 16;
			budget_state.e = xrealloc(budget_state.e, budget_state.cap * sizeof *budget_state.e);
		}
		old = &budget_state.e[budget_state.n++];
	}
	*old = *en;
}

static double
spent(const struct entry *en, int k, int64_t now)
{
	switch (k) {
	case BUDGET_USD:
		return en->usd;
	case BUDGET_CALLS:
		return (double)en->calls;
	case BUDGET_TOKENS:
		return (double)en->tokens;
	default:
		return (double)((en->ended_ms ? en->ended_ms : now) - en->created_ms) / 60000.0;
	}
}

/* The first limit reached, or -1. */
static int
reached(const struct entry *en, int64_t now)
{
	for (int k = 0; k < BUDGET__COUNT; k++)
		if (en->has[k] && spent(en, k, now) >= en->lim[k])
			return k;
	return -1;
}

static void
describe(const struct entry *en, int k, int64_t now, char *out, size_t cap)
{
	static const char *const units[BUDGET__COUNT] = { "USD spent", "model calls made", "tokens used",
		"minutes since the task was registered" };
	char lim[48], got[48];

	if (k == BUDGET_USD) {
		snprintf(lim, sizeof lim, "$%.6f", en->lim[k]);
		snprintf(got, sizeof got, "$%.6f", spent(en, k, now));
	} else if (k == BUDGET_MINUTES) {
		snprintf(lim, sizeof lim, "%.2f", en->lim[k]);
		snprintf(got, sizeof got, "%.2f", spent(en, k, now));
	} else {
		snprintf(lim, sizeof lim, "%.0f", en->lim[k]);
		snprintf(got, sizeof got, "%.0f", spent(en, k, now));
	}
	snprintf(out, cap, "the %s limit is reached: %s of %s %s (so far: $%.6f, %lld model calls, "
	    "%lld tokens, %.2f minutes%s)", budget_key_names[k], got, lim, units[k], en->usd,
	    (long long)en->calls, (long long)en->tokens, spent(en, BUDGET_MINUTES, now),
	    en->unpriced ? "; some calls had no known price" : "");
}

/* mu held: queues a pause for en once per crossing (active tasks only). */
static void
trip_locked(struct entry *en)
{
	if (en->tripped || en->status != TASK_ACTIVE || budget_state.nq == BUDGET_QUEUE_MAX)
		return;
	en->tripped = true;
	memcpy(budget_state.queue[budget_state.nq++], en->id, ID_LEN);
	pthread_cond_signal(&budget_state.cv);
}

int
budget_check(const char *task_id, char *why, size_t cap)
{
	struct entry *en;
	int64_t now = now_ms();
	int k = -1;

	pthread_mutex_lock(&budget_state.mu);
	en = budget_state.started ? find_locked(task_id) : NULL;
	if (en != NULL && (k = reached(en, now)) >= 0) {
		describe(en, k, now, why, cap);
		trip_locked(en);
	}
	pthread_mutex_unlock(&budget_state.mu);
	return k >= 0 ? -1 : 0;
}

void
budget_note(const char *task_id, double cost, int64_t tokens)
{
	struct entry *en;

	pthread_mutex_lock(&budget_state.mu);
	en = budget_state.started ? find_locked(task_id) : NULL;
	if (en != NULL) {
		en->calls++;
		en->tokens += tokens;
		if (cost >= 0)
			en->usd += cost;
		else
			en->unpriced++;
		if (reached(en, now_ms()) >= 0)
			trip_locked(en);
	}
	pthread_mutex_unlock(&budget_state.mu);
}

/* Reloads the task's entry from the database (after a committed change). */
static void
budget_reload(const char *task_id)
{
	struct entry en;
	struct store *rd, *st;
	int r;

	pthread_mutex_lock(&budget_state.mu);
	st = budget_state.started ? budget_state.st : NULL;
	pthread_mutex_unlock(&budget_state.mu);
	if (st == NULL)
		return;
	rd = store_read_begin(st);
	r = entry_read(rd, task_id, &en);
	store_read_end(rd);
	pthread_mutex_lock(&budget_state.mu);
	if (r > 0 && !task_status_final(en.status))
		put_locked(&en);        /* tripped is false: a new budget may pause again */
	else if (r == 0)
		remove_locked(task_id);
	pthread_cond_signal(&budget_state.cv);     /* a budget already spent pauses at once */
	pthread_mutex_unlock(&budget_state.mu);
	if (r < 0)
		log_warn("budget: cannot read the budget of task %s", task_id);
}

json_object *
budget_json(struct store *st, const char *task_id)
{
	struct store *rd = store_read_begin(st);
	json_object *o = budget_json_read(rd, task_id);

	store_read_end(rd);
	return o;
}

json_object *
budget_json_read(struct store *rd, const char *task_id)
{
	struct entry en;
	int r = entry_read(rd, task_id, &en), k;
	int64_t now = now_ms();
	json_object *o, *sp;

	if (r <= 0)
		return NULL;
	o = json_object_new_object();
	sp = json_object_new_object();
	for (k = 0; k < BUDGET__COUNT; k++) {
		bool integer = k == BUDGET_CALLS || k == BUDGET_TOKENS;

		json_object_object_add(o, budget_key_names[k], !en.has[k] ? NULL : integer ?
		    json_object_new_int64((int64_t)en.lim[k]) : json_object_new_double(en.lim[k]));
		json_object_object_add(sp, budget_key_names[k], integer ? json_object_new_int64((int64_t)spent(&en, k, now)) :
		    json_object_new_double(round(spent(&en, k, now) * 1e6) / 1e6));
	}
	json_object_object_add(o, "spent", sp);
	k = reached(&en, now);
	jx_add_str(o, "reached", k >= 0 ? budget_key_names[k] : NULL);
	json_object_object_add(o, "unpriced_calls", json_object_new_int64(en.unpriced));
	return o;
}

/* ---- the thread ---- */

static void
pause_task(const char *id)
{
	struct entry en;
	struct store *rd = store_read_begin(budget_state.st);
	int64_t now = now_ms();
	char why[400], *text;
	struct derr e;
	int r = entry_read(rd, id, &en), k;
	json_object *payload;

	store_read_end(rd);
	pthread_mutex_lock(&budget_state.mu);
	{
		struct entry *live = find_locked(id);

		if (r > 0 && live != NULL) {    /* the freshest figures are the table's */
			en.usd = live->usd;
			en.calls = live->calls;
			en.tokens = live->tokens;
			en.unpriced = live->unpriced;
		}
	}
	pthread_mutex_unlock(&budget_state.mu);
	if (r <= 0 || en.status != TASK_ACTIVE || (k = reached(&en, now)) < 0)
		return;
	describe(&en, k, now, why, sizeof why);
	text = xasprintf("%s; model calls for this task are refused until the budget is raised "
	    "(PATCH /api/tasks/%s {\"budget\":{...}}) and the task resumed", why, id);
	if (task_control_by(budget_state.st, id, TASK_PAUSED, "Budget", text, &e) != 0) {
		log_warn("budget: cannot pause task %s: %s", id, e.message);
		free(text);
		return;
	}
	log_info("budget: task %s paused: %s", id, why);
	payload = budget_json(budget_state.st, id);
	free(text);
	text = xasprintf("[budget] Task %s paused: %s. Raise its budget and resume it to go on.", id, why);
	wake_post("budget_reached", id, text, payload);
	free(text);
}

static void *
thread_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&budget_state.mu);
	while (!budget_state.stopping) {
		struct timespec ts;
		int64_t now = now_ms();

		for (size_t i = 0; i < budget_state.n; i++)     /* minutes run out; a budget set below what is spent */
			if (reached(&budget_state.e[i], now) >= 0)
				trip_locked(&budget_state.e[i]);
		while (budget_state.nq > 0 && !budget_state.stopping) {
			char id[ID_LEN];

			memcpy(id, budget_state.queue[--budget_state.nq], ID_LEN);
			pthread_mutex_unlock(&budget_state.mu);
			pause_task(id);
			pthread_mutex_lock(&budget_state.mu);
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += BUDGET_TICK_MS / 1000;
		if (!budget_state.stopping && budget_state.nq == 0)
			pthread_cond_timedwait(&budget_state.cv, &budget_state.mu, &ts);
	}
	pthread_mutex_unlock(&budget_state.mu);
	return NULL;
}

static void
on_task_change(const char *task_id, int from, int to, void *arg)
{
	struct entry *en;

	(void)from;
	(void)arg;
	if (to == TASK_HOOK_BUDGET) {
		budget_reload(task_id);
		return;
	}
	pthread_mutex_lock(&budget_state.mu);
	en = find_locked(task_id);
	if (en != NULL && (to == TASK_HOOK_DELETED || task_status_final(to))) {
		remove_locked(task_id);
	} else if (en != NULL) {
		en->status = to;
		if (to == TASK_ACTIVE) {
			en->tripped = false;    /* resumed: a call over budget pauses it again */
			pthread_cond_signal(&budget_state.cv);
		}
	}
	pthread_mutex_unlock(&budget_state.mu);
}

int
budget_init(struct store *st, const struct config *cfg, struct derr *e)
{
	struct store *rd;
	sqlite3_stmt *s;
	size_t n = 0;

	(void)cfg;
	pthread_mutex_lock(&budget_state.mu);
	budget_state.st = st;
	budget_state.started = true;
	budget_state.stopping = false;
	rd = store_read_begin(st);
	s = store_stmt(rd, SQL_LIVE);
	while (s != NULL && sqlite3_step(s) == SQLITE_ROW) {
		struct entry en;

		if (entry_read(rd, (const char *)sqlite3_column_text(s, 0), &en) > 0) {
			put_locked(&en);
			n++;
		}
	}
	if (s != NULL)
		sqlite3_reset(s);
	store_read_end(rd);
	pthread_mutex_unlock(&budget_state.mu);
	task_hook_add_all(on_task_change, NULL);
	if (pthread_create(&budget_state.thread, NULL, thread_main, NULL) != 0) {
		budget_state.started = false;
		return derr_set(e, DERR_INTERNAL, NULL, "budget: cannot start a thread: %s", strerror(errno));
	}
	if (n > 0)
		log_info("budget: %zu live tasks have a budget", n);
	return 0;
}

void
budget_shutdown(void)
{
	pthread_mutex_lock(&budget_state.mu);
	if (!budget_state.started) {
		pthread_mutex_unlock(&budget_state.mu);
		return;
	}
	budget_state.stopping = true;
	pthread_cond_signal(&budget_state.cv);
	pthread_mutex_unlock(&budget_state.mu);
	pthread_join(budget_state.thread, NULL);
	pthread_mutex_lock(&budget_state.mu);
	budget_state.started = false;
	free(budget_state.e);
	budget_state.e = NULL;
	budget_state.n = budget_state.cap = 0;
	budget_state.nq = 0;
	pthread_mutex_unlock(&budget_state.mu);
}
