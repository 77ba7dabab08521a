/* taskstate.c - transition tables. See taskstate.h. */
#include "taskstate.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const task_names[TASK__COUNT] = {
	"active", "paused", "completed", "failed", "cancelled" };
static const char *const item_names[ITEM__COUNT] = {
	"pending", "active", "completed", "failed", "skipped", "scrapped" };

/* task_moves[from][to]: may a task go from `from` to `to`? */
static const bool task_moves[TASK__COUNT][TASK__COUNT] = {
	[TASK_ACTIVE] = { [TASK_PAUSED] = true, [TASK_COMPLETED] = true,
	    [TASK_FAILED] = true, [TASK_CANCELLED] = true },
	[TASK_PAUSED] = { [TASK_ACTIVE] = true, [TASK_CANCELLED] = true },
};

static const bool item_moves[ITEM__COUNT][ITEM__COUNT] = {
	/* pending -> completed|failed: work done (or given up) without being
	 * marked active first, as the Python DETM allowed; the item gets
	 * started_at = completed_at and a duration of 0. */
	[ITEM_PENDING] = { [ITEM_ACTIVE] = true, [ITEM_COMPLETED] = true,
	    [ITEM_FAILED] = true, [ITEM_SKIPPED] = true, [ITEM_SCRAPPED] = true },
	[ITEM_ACTIVE] = { [ITEM_COMPLETED] = true, [ITEM_FAILED] = true,
	    [ITEM_SKIPPED] = true, [ITEM_SCRAPPED] = true },
	[ITEM_FAILED] = { [ITEM_ACTIVE] = true },
};

static int
parse_name(const char *s, const char *const *names, int n)
{
	char word[32];
	size_t len;
	int i;

	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	if (len == 0 || len >= sizeof word)
		return -1;
	memcpy(word, s, len);
	word[len] = '\0';
	if (strcasecmp(word, "canceled") == 0)
		strcpy(word, "cancelled");
	for (i = 0; i < n; i++) {
		if (strcasecmp(word, names[i]) == 0)
			return i;
	}
	return -1;
}

int
task_status_parse(const char *s)
{
	return parse_name(s, task_names, TASK__COUNT);
}

int
item_status_parse(const char *s)
{
	return parse_name(s, item_names, ITEM__COUNT);
}

const char *
task_status_name(int st)
{
	return st >= 0 && st < TASK__COUNT ? task_names[st] : "unknown";
}

const char *
item_status_name(int st)
{
	return st >= 0 && st < ITEM__COUNT ? item_names[st] : "unknown";
}

bool
task_status_can(int from, int to)
{
	if (from < 0 || from >= TASK__COUNT || to < 0 || to >= TASK__COUNT)
		return false;
	return from == to || task_moves[from][to];
}

bool
item_status_can(int from, int to)
{
	if (from < 0 || from >= ITEM__COUNT || to < 0 || to >= ITEM__COUNT)
		return false;
	return from == to || item_moves[from][to];
}

bool
task_status_final(int st)
{
	return st == TASK_COMPLETED || st == TASK_FAILED || st == TASK_CANCELLED;
}

bool
item_status_final(int st)
{
	return st == ITEM_COMPLETED || st == ITEM_SKIPPED || st == ITEM_SCRAPPED;
}

bool
item_status_ends(int st)
{
	return st == ITEM_COMPLETED || st == ITEM_FAILED || st == ITEM_SKIPPED ||
	    st == ITEM_SCRAPPED;
}

static void
allowed(const bool *row, const char *const *names, int n, char *out, size_t cap)
{
	size_t o = 0;
	int i;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (row[i] && o < cap)
			o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? ", " : "", names[i]);
	}
	if (o == 0)
		snprintf(out, cap, "none: it is final");
}

void
task_status_allowed(int from, char *out, size_t cap)
{
	allowed(task_moves[from], task_names, TASK__COUNT, out, cap);
}

void
item_status_allowed(int from, char *out, size_t cap)
{
	allowed(item_moves[from], item_names, ITEM__COUNT, out, cap);
}

const char *
task_status_all(void)
{
	return "active, paused, completed, failed, cancelled";
}

const char *
item_status_all(void)
{
	return "pending, active, completed, failed, skipped, scrapped";
}
