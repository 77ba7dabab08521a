/*
 * budget_rows.c - a task's budget as given in a request, and its row
 * (task_budgets): parsing and the write inside a store_tx body. Beside the
 * task family's rows (task_rows.c) so that task.c writes a budget without
 * reaching up into the budget engine (budget.c), which hears of the change
 * through the task hook (TASK_HOOK_BUDGET) once it committed.
 *
 * Does not: keep the live table, pause tasks or check calls (budget.c).
 */
#include "budget_rows.h"

#include <stdio.h>
#include <string.h>

#include "core/jx.h"

const char *const budget_key_names[BUDGET__COUNT] = { "usd", "model_calls", "tokens", "minutes" };

static const char SQL_UPSERT[] =
    "INSERT INTO task_budgets (task_id, usd, model_calls, tokens, minutes, updated_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (task_id) DO UPDATE SET usd = excluded.usd, "
    "model_calls = excluded.model_calls, tokens = excluded.tokens, minutes = excluded.minutes, "
    "updated_at = excluded.updated_at";
static const char SQL_DELETE[] = "DELETE FROM task_budgets WHERE task_id = ?1";
static const char SQL_CURRENT[] =
    "SELECT usd, model_calls, tokens, minutes FROM task_budgets WHERE task_id = ?1";

/* ---- parsing ---- */

int
budget_parse(json_object *body, struct budget *b, bool *present, struct derr *e)
{
	json_object *o, *v;

	memset(b, 0, sizeof *b);
	*present = false;
	if (body == NULL || !json_object_object_get_ex(body, "budget", &o))
		return 0;
	*present = true;
	if (o == NULL) {
		b->clear = true;
		return 0;
	}
	if (!json_object_is_type(o, json_type_object))
		return derr_set(e, DERR_INVALID, "budget", "budget must be an object like "
		    "{\"usd\":0.5,\"model_calls\":100,\"tokens\":200000,\"minutes\":30} (or null)");
	if (jx_only(o, budget_key_names, BUDGET__COUNT, e) != 0) {
		snprintf(e->field, sizeof e->field, "budget");
		return -1;
	}
	for (int k = 0; k < BUDGET__COUNT; k++) {
		bool integer = k == BUDGET_CALLS || k == BUDGET_TOKENS;
		double d;

		if (!json_object_object_get_ex(o, budget_key_names[k], &v))
			continue;
		b->given[k] = true;
		if (v == NULL) {
			b->null[k] = true;
			continue;
		}
		if (!json_object_is_type(v, json_type_int) && !(json_object_is_type(v, json_type_double) && !integer))
			return derr_set(e, DERR_INVALID, "budget", "budget.%s must be %s >= 0 or null",
			    budget_key_names[k], integer ? "an integer" : "a number");
		d = json_object_get_double(v);
		if (!(d >= 0) || d > 1e12)
			return derr_set(e, DERR_INVALID, "budget", "budget.%s must be between 0 and 1e12 (got %g)",
			    budget_key_names[k], d);
		b->v[k] = d;
	}
	return 0;
}

/* ---- the row ---- */

static void
bind_opt(sqlite3_stmt *s, int i, bool has, double v, bool integer)
{
	if (!has)
		sqlite3_bind_null(s, i);
	else if (integer)
		sqlite3_bind_int64(s, i, (int64_t)v);
	else
		sqlite3_bind_double(s, i, v);
}

int
budget_write_tx(struct store *st, const char *task_id, const struct budget *b, int64_t now,
    struct derr *e)
{
	sqlite3_stmt *s = store_stmt(st, SQL_CURRENT);
	bool has[BUDGET__COUNT] = { false }, any = false;
	double v[BUDGET__COUNT] = { 0 };
	int rc;

	if (s == NULL)
		return store_fail(st, "budget read", e);
	sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	for (int k = 0; rc == SQLITE_ROW && k < BUDGET__COUNT; k++) {
		has[k] = sqlite3_column_type(s, k) != SQLITE_NULL;
		v[k] = sqlite3_column_double(s, k);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, "budget read", e);
	for (int k = 0; k < BUDGET__COUNT; k++) {
		if (b->clear)
			has[k] = false;
		else if (b->given[k]) {
			has[k] = !b->null[k];
			v[k] = b->v[k];
		}
		any |= has[k];
	}
	s = store_stmt(st, any ? SQL_UPSERT : SQL_DELETE);
	if (s != NULL) {
		sqlite3_bind_text(s, 1, task_id, -1, SQLITE_STATIC);
		if (any) {
			for (int k = 0; k < BUDGET__COUNT; k++)
				bind_opt(s, 2 + k, has[k], v[k], k == BUDGET_CALLS || k == BUDGET_TOKENS);
			sqlite3_bind_int64(s, 6, now);
		}
	}
	return store_exec(st, s, "budget write", e);
}
