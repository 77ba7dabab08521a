/*
 * completion.c - the rules of "done, checked" (completion.h): evidence in,
 * verdict and reasons out. Pure: no store, no clock, no files, no state,
 * so tests/unit/test_completion.c runs every verdict directly.
 *
 * Invariants: every reason is one sentence fragment naming what was seen;
 * summaries quoted in reasons are cut to 80 bytes between UTF-8
 * characters; the sentence is the deciding reasons only (the reasons list
 * has them all).
 *
 * Does not: read rows, stat files or check text on screen
 * (completion_rows.c gathers; the verdicts of conditions arrive checked).
 */
#include "completion.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "utf8.h"

#define REASON_MAX 512

const char *
completion_name(enum completion_verdict v)
{
	switch (v) {
	case COMPLETION_EVIDENCED: return "evidenced";
	case COMPLETION_CONTRADICTED: return "contradicted";
	default: return "unchecked";
	}
}

static bool
is(const char *a, const char *b)
{
	return a != NULL && strcmp(a, b) == 0;
}

/* A reason: added to `all`, and to `deciding` when it decides. */
struct why {
	json_object *all;
	struct buf contra, evid, unch;
};

static void
why_add(struct why *w, struct buf *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
why_add(struct why *w, struct buf *b, const char *fmt, ...)
{
	char text[REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	utf8_fix_in_place(text, sizeof text);
	json_object_array_add(w->all, json_object_new_string(text));
	/* A sentence past the cap keeps the reasons that fit (the list has all). */
	if (b->len > 0 && buf_append(b, "; ", 2) != 0)
		return;
	if (buf_append(b, text, strlen(text)) != 0)
		return;
}

/* s cut to 80 bytes between characters, in out. */
static const char *
clip(const char *s, char out[84])
{
	if (s == NULL)
		return "?";
	snprintf(out, 84, "%.*s", utf8_prec(s, 80), s);
	return out;
}

/* Failures after the last completed action; their first summary. */
static size_t
unresolved_failures(const struct completion_in *in, const char **first)
{
	size_t i, n = 0;

	*first = NULL;
	for (i = 0; i < in->n_acts; i++) {
		if (is(in->acts[i].status, "completed")) {
			n = 0;
			*first = NULL;
		} else if (is(in->acts[i].status, "failed")) {
			if (n++ == 0)
				*first = in->acts[i].summary;
		}
	}
	return n;
}

static const struct completion_act *
last_finished(const struct completion_in *in)
{
	for (size_t i = in->n_acts; i > 0; i--)
		if (!is(in->acts[i - 1].status, "started"))
			return &in->acts[i - 1];
	return NULL;
}

static void
judge_actions(const struct completion_in *in, struct why *w)
{
	const struct completion_act *last = last_finished(in);
	const char *first, *scope = in->scope ? in->scope : "";
	size_t nf = unresolved_failures(in, &first);
	char c[84];

	if (nf > 0)
		why_add(w, &w->contra, "%zu failed action%s %s not followed by a successful one (\"%s\")",
		    nf, nf == 1 ? "" : "s", scope, clip(first, c));
	if (in->open_waits > 0)
		why_add(w, &w->contra, "%d smart wait%s on the task still watching", in->open_waits,
		    in->open_waits == 1 ? "" : "s");
	if (last == NULL) {
		why_add(w, &w->unch, "no action%s logged %s", in->n_acts > 0 ? " finished" : "s", scope);
		return;
	}
	if (is(last->effect, "suspected_noop"))
		why_add(w, &w->contra, "the last action's effect was suspected_noop (\"%s\")",
		    clip(last->summary, c));
	else if (is(last->effect, "confirmed") && is(last->status, "completed"))
		why_add(w, &w->evid, "the last action (\"%s\") succeeded with its effect confirmed",
		    clip(last->summary, c));
	else if (is(last->effect, "unverifiable"))
		why_add(w, &w->unch, "the last action's effect (\"%s\") is unverifiable", clip(last->summary, c));
	else if (is(last->status, "completed"))
		why_add(w, &w->unch, "the last action (\"%s\") succeeded but reported no effect verdict",
		    clip(last->summary, c));
}

static void
judge_conds(const struct completion_in *in, struct why *w)
{
	char c[84];

	if (in->n_conds == 0 && in->with_conds) {
		why_add(w, &w->unch, "no done_when condition declared");
		return;
	}
	for (size_t i = 0; i < in->n_conds; i++) {
		const struct completion_cond *k = &in->conds[i];
		const char *why = k->why ? k->why : "";

		if (k->result > 0)
			why_add(w, &w->evid, "done_when %s is true: %s", clip(k->cond, c), why);
		else if (k->result == 0)
			why_add(w, &w->contra, "done_when %s is false: %s", clip(k->cond, c), why);
		else
			why_add(w, &w->unch, "done_when %s unchecked: %s", clip(k->cond, c), why);
	}
}

enum completion_verdict
completion_judge(const struct completion_in *in, json_object **why_out)
{
	struct why w = { .all = json_object_new_array() };
	enum completion_verdict v;
	struct buf *b;

	buf_init(&w.contra, 4096);
	buf_init(&w.evid, 4096);
	buf_init(&w.unch, 4096);
	judge_actions(in, &w);
	judge_conds(in, &w);
	if (w.contra.len > 0)
		v = COMPLETION_CONTRADICTED, b = &w.contra;
	else if (w.evid.len > 0)
		v = COMPLETION_EVIDENCED, b = &w.evid;
	else
		v = COMPLETION_UNCHECKED, b = &w.unch;
	*why_out = json_object_new_object();
	json_object_object_add(*why_out, "sentence", json_object_new_string(b->data ? b->data : ""));
	json_object_object_add(*why_out, "reasons", w.all);
	buf_free(&w.contra);
	buf_free(&w.evid);
	buf_free(&w.unch);
	return v;
}

/* The effect verdict held by v: a string, or an object's "verdict". */
static const char *
effect_of(json_object *v)
{
	static const char *const known[] = { "confirmed", "suspected_noop", "unverifiable" };
	json_object *x;
	const char *s;

	if (v != NULL && json_object_is_type(v, json_type_object) &&
	    json_object_object_get_ex(v, "verdict", &x))
		v = x;
	if (v == NULL || !json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(s, known[i]) == 0)
			return known[i];
	return NULL;
}

const char *
completion_effect(const char *output_json)
{
	static const char *const where[] = { NULL, "result", "verification" };
	json_object *o, *in, *v;
	const char *found = NULL;

	if (output_json == NULL || (o = json_tokener_parse(output_json)) == NULL)
		return NULL;
	for (size_t i = 0; i < 3 && found == NULL; i++) {
		in = o;
		if (where[i] != NULL && !json_object_object_get_ex(o, where[i], &in))
			continue;
		if (in != NULL && json_object_is_type(in, json_type_object) &&
		    json_object_object_get_ex(in, "effect", &v))
			found = effect_of(v);
	}
	json_object_put(o);
	return found;
}

int
completion_cond_parse(const char *cond, const char **kind, char *arg, size_t cap)
{
	static const char *const kinds[] = { "text", "file", "element" };
	const char *p = NULL, *end;
	size_t i, k, n;

	*kind = NULL;
	if (cond == NULL || cap == 0)
		return -1;
	for (i = 0; i < 3 && p == NULL; i++) {
		k = strlen(kinds[i]);
		if (strncmp(cond, kinds[i], k) == 0 && cond[k] == ':') {
			*kind = kinds[i];
			p = cond + k + 1;
		}
	}
	if (p == NULL)
		return -1;
	while (*p == ' ')
		p++;
	end = p + strlen(p);
	while (end > p && end[-1] == ' ')
		end--;
	/* text:"x" and file:"x" lose their quotes; an element keeps its
	 * role and quoted name as written (button "OK"). */
	if (strcmp(*kind, "element") != 0 && end - p >= 2 && *p == '"' && end[-1] == '"')
		p++, end--;
	n = (size_t)(end - p);
	if (n == 0 || n >= cap)
		return -1;
	memcpy(arg, p, n);
	arg[n] = '\0';
	return 0;
}
