/*
 * mcp_tasks.c - see mcp_tasks.h. A fixed array under one mutex; slots are
 * found by a linear scan (MCP_TASKS_MAX is small and tasks are rare:
 * long calls only).
 */
#include "mcp_tasks.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

enum { T_FREE, T_WORKING, T_COMPLETED, T_FAILED, T_CANCELLED };
static const char *const task_status[] = { "", "working", "completed", "failed", "cancelled" };

struct mtask {
	int state;
	char id[MCP_TASK_ID_LEN + 1];
	int64_t created_ms, updated_ms;
	char *result;               /* COMPLETED: the CallToolResult, FAILED: the
	                             * error, as JSON text */
};

static pthread_mutex_t tasks_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mtask tasks[MCP_TASKS_MAX];

static int64_t
tasks_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
tasks_iso(int64_t ms, char out[64])
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

static void
tasks_new_id(char id[MCP_TASK_ID_LEN + 1])
{
	unsigned char b[MCP_TASK_ID_LEN / 2];
	size_t got = 0;
	ssize_t n;

	while (got < sizeof b && (n = getrandom(b + got, sizeof b - got, 0)) > 0)
		got += (size_t)n;
	if (got < sizeof b)
		abort();            /* no randomness: never hand out guessable ids */
	for (size_t i = 0; i < sizeof b; i++)
		snprintf(id + 2 * i, 3, "%02x", b[i]);
}

/* tasks_mu held: the slot of id, or NULL. */
static struct mtask *
tasks_find(const char *id)
{
	if (id == NULL || strlen(id) != MCP_TASK_ID_LEN)
		return NULL;
	for (int i = 0; i < MCP_TASKS_MAX; i++)
		if (tasks[i].state != T_FREE && strcmp(tasks[i].id, id) == 0)
			return &tasks[i];
	return NULL;
}

int
mcp_tasks_create(char id[MCP_TASK_ID_LEN + 1])
{
	int64_t now = tasks_now_ms();
	struct mtask *t = NULL;

	tasks_new_id(id);
	pthread_mutex_lock(&tasks_mu);
	for (int i = 0; i < MCP_TASKS_MAX && t == NULL; i++) {
		struct mtask *c = &tasks[i];

		if (c->state != T_FREE && c->state != T_WORKING && now - c->updated_ms > MCP_TASK_TTL_MS) {
			free(c->result);    /* expired */
			c->result = NULL;
			c->state = T_FREE;
		}
		if (c->state == T_FREE)
			t = c;
	}
	if (t != NULL) {
		t->state = T_WORKING;
		memcpy(t->id, id, MCP_TASK_ID_LEN + 1);
		t->created_ms = t->updated_ms = now;
	}
	pthread_mutex_unlock(&tasks_mu);
	return t != NULL ? 0 : -1;
}

/* End task id in state (COMPLETED or FAILED) with what (may be NULL). */
static void
tasks_end(const char *id, int state, struct json_object *what)
{
	const char *text = what != NULL ?
		json_object_to_json_string_ext(what, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
	char *copy = text != NULL ? strdup(text) : NULL;
	struct mtask *t;

	pthread_mutex_lock(&tasks_mu);
	t = tasks_find(id);
	if (t != NULL && t->state == T_WORKING) {
		t->state = state;
		t->result = copy;
		copy = NULL;
		t->updated_ms = tasks_now_ms();
	}
	pthread_mutex_unlock(&tasks_mu);
	free(copy);
}

void
mcp_tasks_fail(const char *id, struct json_object *error)
{
	tasks_end(id, T_FAILED, error);
}

void
mcp_tasks_finish(const char *id, struct json_object *result)
{
	if (result != NULL)
		tasks_end(id, T_COMPLETED, result);
	else
		tasks_end(id, T_CANCELLED, NULL);
}

bool
mcp_tasks_describe(const char *id, bool detail, struct json_object *o)
{
	struct mtask *t;
	char created[64], updated[64];
	char *result = NULL;
	int state;

	pthread_mutex_lock(&tasks_mu);
	t = tasks_find(id);
	if (t == NULL) {
		pthread_mutex_unlock(&tasks_mu);
		return false;
	}
	state = t->state;
	tasks_iso(t->created_ms, created);
	tasks_iso(t->updated_ms, updated);
	if (detail && t->result != NULL)
		result = strdup(t->result);
	pthread_mutex_unlock(&tasks_mu);
	json_object_object_add(o, "taskId", json_object_new_string(id));
	json_object_object_add(o, "status", json_object_new_string(task_status[state]));
	json_object_object_add(o, "createdAt", json_object_new_string(created));
	json_object_object_add(o, "lastUpdatedAt", json_object_new_string(updated));
	json_object_object_add(o, "ttlMs", json_object_new_int(MCP_TASK_TTL_MS));
	json_object_object_add(o, "pollIntervalMs", json_object_new_int(MCP_TASK_POLL_MS));
	if (result != NULL)
		json_object_object_add(o, state == T_FAILED ? "error" : "result", json_tokener_parse(result));
	free(result);
	return true;
}

int
mcp_tasks_cancel(const char *id)
{
	struct mtask *t;
	int rc = -1;

	pthread_mutex_lock(&tasks_mu);
	t = tasks_find(id);
	if (t != NULL) {
		rc = t->state == T_WORKING ? 1 : 0;
		if (rc == 1) {
			t->state = T_CANCELLED;
			t->updated_ms = tasks_now_ms();
		}
	}
	pthread_mutex_unlock(&tasks_mu);
	return rc;
}
