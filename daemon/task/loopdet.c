/*
 * loopdet.c - the loop detector's rules (see loopdet.h): one state per
 * task, fed one logged action at a time.
 *
 * State: the last LOOPDET_MAX_PERIOD inputs (newest first), for each
 * period p the run of consecutive inputs that matched the one p before
 * (and when that run began), the row of suspected_noop effects, and the
 * action counts and time spans of the last LOOPDET_ITEMS plan items.
 *
 * Invariants: a run only grows on evidence that the screen came back the
 * same (equal signatures, or a suspected_noop right before); a hit clears
 * the runs it counted, so a loop is reported once per `repeats`.
 *
 * Does not: read the store, the clock or JSON (loopwatch.c in desktop/
 * turns a logged row into a struct loopdet_act and records a hit).
 */
#include "loopdet.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { FX_NONE, FX_CONFIRMED, FX_NOOP, FX_UNVERIFIABLE };

struct ent {
	char name[48];
	char show[140];         /* the target as shown in the sentence */
	uint64_t thash;         /* of the whole target */
	bool has_point;
	int x, y;
	int effect;
	bool has_sig;
	uint8_t sig[LOOPDET_SIG_N];
	int64_t at_ms;
};

struct item {
	int64_t ordinal;
	int count, flagged;
	int64_t first, last;
};

struct loopdet {
	struct ent hist[LOOPDET_MAX_PERIOD];    /* hist[0]: the newest input */
	int nhist;
	int run[LOOPDET_MAX_PERIOD + 1];
	int64_t run_since[LOOPDET_MAX_PERIOD + 1];
	int noops;
	int64_t noop_since;
	struct item items[LOOPDET_ITEMS];
	int nitems;
};

struct loopdet *
loopdet_new(void)
{
	return calloc(1, sizeof(struct loopdet));
}

void
loopdet_free(struct loopdet *d)
{
	free(d);
}

void
loopdet_reset(struct loopdet *d)
{
	d->nhist = 0;
	memset(d->run, 0, sizeof d->run);
	d->noops = 0;
}

const char *
loopdet_signal_name(enum loopdet_signal s)
{
	switch (s) {
	case LOOPDET_REPEAT: return "repeat";
	case LOOPDET_CYCLE: return "cycle";
	case LOOPDET_NOOP: return "noop";
	case LOOPDET_ITEM: return "item";
	default: return "none";
	}
}

bool
loopdet_sig_same(const uint8_t *a, const uint8_t *b)
{
	int n = 0;

	for (size_t i = 0; i < LOOPDET_SIG_N; i++) {
		int d = (int)a[i] - (int)b[i];

		if ((d < 0 ? -d : d) > LOOPDET_SIG_DELTA && ++n > LOOPDET_SIG_CELLS)
			return false;
	}
	return true;
}

static uint64_t
fnv(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int
effect_of(const char *s)
{
	if (s == NULL)
		return FX_NONE;
	if (strcmp(s, "confirmed") == 0)
		return FX_CONFIRMED;
	if (strcmp(s, "suspected_noop") == 0)
		return FX_NOOP;
	return strcmp(s, "unverifiable") == 0 ? FX_UNVERIFIABLE : FX_NONE;
}

static void
ent_fill(struct ent *e, const struct loopdet_act *a)
{
	const char *t = a->target != NULL ? a->target : "";

	snprintf(e->name, sizeof e->name, "%s", a->name != NULL ? a->name : "?");
	if (strlen(t) > 100)
		snprintf(e->show, sizeof e->show, "%.100s...", t);
	else
		snprintf(e->show, sizeof e->show, "%s", t);
	e->thash = fnv(t);
	e->has_point = a->has_point;
	e->x = a->x;
	e->y = a->y;
	e->effect = effect_of(a->effect);
	e->has_sig = a->sig != NULL;
	if (e->has_sig)
		memcpy(e->sig, a->sig, LOOPDET_SIG_N);
	e->at_ms = a->at_ms;
}

/* e repeats prev (p inputs before it) on a screen that came back. */
static bool
matches(const struct ent *e, const struct ent *prev, int p, int px)
{
	if (strcmp(e->name, prev->name) != 0 || e->thash != prev->thash ||
	    e->has_point != prev->has_point)
		return false;
	if (e->has_point && (abs(e->x - prev->x) > px || abs(e->y - prev->y) > px))
		return false;
	if (e->has_sig && prev->has_sig)
		return loopdet_sig_same(e->sig, prev->sig);
	return p == 1 && prev->effect == FX_NOOP;
}

static void
describe(const struct ent *e, char *out, size_t len)
{
	int n = snprintf(out, len, "%s", e->name);

	if (n < 0 || (size_t)n >= len)
		return;
	if (e->has_point)
		n += snprintf(out + n, len - (size_t)n, " at (%d, %d)", e->x, e->y);
	if (e->show[0] != '\0' && (size_t)n < len)
		snprintf(out + n, len - (size_t)n, " %s", e->show);
}

/* "A then B" for the p newest inputs (hist[0] newest), oldest first. */
static void
describe_cycle(const struct loopdet *d, int p, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (int i = p - 1; i >= 0 && o < len; i--) {
		char one[200];

		describe(&d->hist[i], one, sizeof one);
		o += (size_t)snprintf(out + o, len - o, "%s%s", i == p - 1 ? "" : " then ", one);
	}
}

static void
clock_of(int64_t ms, char *out, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(out, len, "%H:%M:%S", &tm) == 0)
		snprintf(out, len, "?");
}

static void
duration_of(int64_t ms, char *out, size_t len)
{
	if (ms < 120000)
		snprintf(out, len, "%" PRId64 " s", ms / 1000);
	else
		snprintf(out, len, "%" PRId64 " min", ms / 60000);
}

/* The runs, after e (not yet in hist) was compared with hist. */
static bool
runs_hit(struct loopdet *d, const struct loopdet_opts *o, const struct ent *e,
    struct loopdet_hit *h)
{
	char at[16];

	for (int p = 1; p <= LOOPDET_MAX_PERIOD; p++) {
		if (d->run[p] < p * (o->repeats - 1))
			continue;
		h->signal = p == 1 ? LOOPDET_REPEAT : LOOPDET_CYCLE;
		h->period = p;
		h->times = d->run[p] / p + 1;
		h->since_ms = d->run_since[p];
		describe_cycle(d, p, h->what, sizeof h->what);
		clock_of(h->since_ms, at, sizeof at);
		if (p == 1)
			snprintf(h->sentence, sizeof h->sentence, "the same input (%.300s) %d times in a "
			    "row since %s UTC, the screen the same before each (signal: repeat)",
			    h->what, h->times, at);
		else
			snprintf(h->sentence, sizeof h->sentence, "the same %d inputs (%.300s) %d times "
			    "in a row since %s UTC, the screen back where it was at each round (signal: "
			    "cycle)", p, h->what, h->times, at);
		return true;
	}
	if (o->noops > 0 && d->noops >= o->noops) {
		h->signal = LOOPDET_NOOP;
		h->times = d->noops;
		h->since_ms = d->noop_since;
		describe(e, h->what, sizeof h->what);
		clock_of(h->since_ms, at, sizeof at);
		snprintf(h->sentence, sizeof h->sentence, "%d inputs in a row since %s UTC changed "
		    "nothing on the screen (effect suspected_noop), the latest %.300s (signal: noop)",
		    h->times, at, h->what);
		return true;
	}
	return false;
}

static bool
feed_input(struct loopdet *d, const struct loopdet_opts *o, const struct loopdet_act *a,
    struct loopdet_hit *h)
{
	struct ent e;
	bool hit;

	ent_fill(&e, a);
	for (int p = 1; p <= LOOPDET_MAX_PERIOD; p++) {
		if (d->nhist >= p && matches(&e, &d->hist[p - 1], p, o->px)) {
			if (d->run[p]++ == 0)
				d->run_since[p] = d->hist[p - 1].at_ms;
		} else {
			d->run[p] = 0;
		}
	}
	if (e.effect == FX_NOOP) {
		if (d->noops++ == 0)
			d->noop_since = e.at_ms;
	} else if (e.effect == FX_CONFIRMED) {
		d->noops = 0;
	}
	memmove(&d->hist[1], &d->hist[0], sizeof d->hist[0] * (LOOPDET_MAX_PERIOD - 1));
	d->hist[0] = e;
	if (d->nhist < LOOPDET_MAX_PERIOD)
		d->nhist++;
	hit = runs_hit(d, o, &e, h);
	if (hit)
		loopdet_reset(d);
	return hit;
}

static struct item *
item_get(struct loopdet *d, int64_t ordinal, int64_t at)
{
	int i, old = 0;

	for (i = 0; i < d->nitems; i++)
		if (d->items[i].ordinal == ordinal)
			return &d->items[i];
	if (d->nitems < LOOPDET_ITEMS) {
		i = d->nitems++;
	} else {
		for (i = 1; i < d->nitems; i++)
			if (d->items[i].last < d->items[old].last)
				old = i;
		i = old;
	}
	d->items[i] = (struct item){ .ordinal = ordinal, .first = at, .last = at };
	return &d->items[i];
}

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static bool
feed_item(struct loopdet *d, const struct loopdet_opts *o, const struct loopdet_act *a,
    struct loopdet_hit *h)
{
	struct item *it = item_get(d, a->ordinal, a->at_ms);
	int64_t counts[LOOPDET_ITEMS], spans[LOOPDET_ITEMS], span, mc, ms;
	char at[16], took[32], med[32];
	int n = 0;

	it->count++;
	if (a->at_ms > it->last)
		it->last = a->at_ms;
	for (int i = 0; i < d->nitems; i++) {
		if (&d->items[i] == it || d->items[i].count == 0)
			continue;
		counts[n] = d->items[i].count;
		spans[n++] = d->items[i].last - d->items[i].first;
	}
	if (n == 0 || it->count < o->item_min || it->count < 2 * it->flagged)
		return false;
	qsort(counts, (size_t)n, sizeof counts[0], cmp64);
	qsort(spans, (size_t)n, sizeof spans[0], cmp64);
	mc = counts[n / 2];
	ms = spans[n / 2] < 1000 ? 1000 : spans[n / 2];
	span = it->last - it->first;
	if (it->count < o->item_factor * mc || span < o->item_factor * ms)
		return false;
	it->flagged = it->count;
	h->signal = LOOPDET_ITEM;
	h->times = it->count;
	h->since_ms = it->first;
	h->ordinal = it->ordinal;
	snprintf(h->what, sizeof h->what, "plan item %" PRId64, it->ordinal);
	clock_of(it->first, at, sizeof at);
	duration_of(span, took, sizeof took);
	duration_of(spans[n / 2], med, sizeof med);
	snprintf(h->sentence, sizeof h->sentence, "plan item %" PRId64 " has taken %d actions over "
	    "%s since %s UTC, at least %d times the median of the %d items worked on before it "
	    "(%" PRId64 " actions over %s) (signal: item)", it->ordinal, it->count, took, at,
	    o->item_factor, n, mc, med);
	return true;
}

bool
loopdet_feed(struct loopdet *d, const struct loopdet_opts *o, const struct loopdet_act *a,
    struct loopdet_hit *hit)
{
	struct loopdet_hit h2;
	bool got = false;

	memset(hit, 0, sizeof *hit);
	hit->ordinal = -1;
	if (a->input)
		got = feed_input(d, o, a, hit);
	if (a->ordinal >= 0) {
		memset(&h2, 0, sizeof h2);
		if (feed_item(d, o, a, &h2) && !got) {
			*hit = h2;
			got = true;
		}
	}
	return got;
}
