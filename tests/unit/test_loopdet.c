/* test_loopdet.c - the loop detector's rules (daemon/task/loopdet.c): each
 * signal from a sequence of actions alone, and the sequences that make
 * progress (the screen changes, the target changes) never flagged. */
#include <string.h>

#include "task/loopdet.h"
#include "unit.h"

static const struct loopdet_opts OPTS = { .repeats = 3, .noops = 4, .item_factor = 4,
	.item_min = 12, .px = 8 };

static uint8_t SCREEN_A[LOOPDET_SIG_N], SCREEN_B[LOOPDET_SIG_N], SCREEN_C[LOOPDET_SIG_N];

static void
screens(void)
{
	memset(SCREEN_A, 200, sizeof SCREEN_A);
	memcpy(SCREEN_B, SCREEN_A, sizeof SCREEN_B);
	for (int i = 0; i < 20; i++)          /* a menu: 20 cells darker */
		SCREEN_B[100 + i] = 90;
	memcpy(SCREEN_C, SCREEN_A, sizeof SCREEN_C);
}

/* An input act: name, target, point (x < 0: none), effect, signature. */
static struct loopdet_act
in(const char *name, const char *target, int x, int y, const char *fx, const uint8_t *sig,
    int64_t at)
{
	return (struct loopdet_act){ .input = true, .name = name, .target = target,
		.has_point = x >= 0, .x = x, .y = y, .effect = fx, .sig = sig, .ordinal = -1,
		.at_ms = at };
}

static void
test_repeat_on_a_still_screen(void)
{
	struct loopdet *d = loopdet_new();
	struct loopdet_act a;
	struct loopdet_hit h;

	screens();
	a = in("click", "", 20, 700, "suspected_noop", SCREEN_A, 1000);
	CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	a.x = 23;       /* within px */
	a.at_ms = 2000;
	CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	a.at_ms = 3000;
	CHECK(loopdet_feed(d, &OPTS, &a, &h));
	CHECK(h.signal == LOOPDET_REPEAT && h.period == 1 && h.times == 3 && h.since_ms == 1000);
	CHECK(strstr(h.what, "click at (") != NULL && strstr(h.sentence, "3 times in a row since") != NULL);
	CHECK(strstr(h.sentence, "signal: repeat") != NULL);
	/* reported once: two more are not yet a new loop, the third is */
	CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	CHECK(loopdet_feed(d, &OPTS, &a, &h) && h.signal == LOOPDET_REPEAT);
	/* without signatures, a suspected_noop before is the evidence */
	loopdet_reset(d);
	a = in("press_key", "{\"keys\":\"F9\"}", -1, 0, "suspected_noop", NULL, 5000);
	CHECK(!loopdet_feed(d, &OPTS, &a, &h) && !loopdet_feed(d, &OPTS, &a, &h));
	CHECK(loopdet_feed(d, &OPTS, &a, &h) && h.signal == LOOPDET_REPEAT);
	/* ... and with neither, nothing can be told */
	loopdet_reset(d);
	a = in("press_key", "{\"keys\":\"F9\"}", -1, 0, "unverifiable", NULL, 5000);
	for (int i = 0; i < 8; i++)
		CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	loopdet_free(d);
}

static void
test_progress_is_not_a_loop(void)
{
	struct loopdet *d = loopdet_new();
	struct loopdet_act a;
	struct loopdet_hit h;
	static uint8_t sig[10][LOOPDET_SIG_N];

	screens();
	/* the same input, but the screen changes each time (a line more) */
	for (int i = 0; i < 10; i++) {
		memcpy(sig[i], SCREEN_A, sizeof sig[i]);
		memset(sig[i] + i * 32, 60, 10);
		a = in("type", "{\"text\":\"echo step\\n\"}", -1, 0, "confirmed", sig[i], 1000 * i);
		CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	}
	/* the same screen, but different targets */
	for (int i = 0; i < 10; i++) {
		a = in("click", "", 100 + 40 * i, 300, "confirmed", SCREEN_A, 20000 + i);
		CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	}
	/* a caret's worth of change (two cells) is still the same screen */
	memcpy(SCREEN_C, SCREEN_A, sizeof SCREEN_C);
	SCREEN_C[5] = 0;
	SCREEN_C[6] = 0;
	CHECK(loopdet_sig_same(SCREEN_A, SCREEN_C));
	SCREEN_C[7] = 0;
	CHECK(!loopdet_sig_same(SCREEN_A, SCREEN_C));
	loopdet_free(d);
}

static void
test_cycle_of_two(void)
{
	struct loopdet *d = loopdet_new();
	struct loopdet_act a, b;
	struct loopdet_hit h;
	int i, hit_at = -1;

	screens();
	a = in("type", "{\"text\":\"x\"}", -1, 0, "confirmed", SCREEN_A, 0);
	b = in("press_key", "{\"keys\":\"BackSpace\"}", -1, 0, "confirmed", SCREEN_B, 0);
	for (i = 0; i < 12 && hit_at < 0; i++) {
		struct loopdet_act *x = i % 2 == 0 ? &a : &b;

		x->at_ms = 1000 * (i + 1);
		if (loopdet_feed(d, &OPTS, x, &h))
			hit_at = i;
	}
	CHECK(hit_at == 5);     /* the third round's second input */
	CHECK(h.signal == LOOPDET_CYCLE && h.period == 2 && h.times == 3 && h.since_ms == 1000);
	CHECK(strstr(h.what, "type {\"text\":\"x\"} then press_key") != NULL);
	CHECK(strstr(h.sentence, "signal: cycle") != NULL);
	/* a cycle on a screen that moves on each round is progress */
	loopdet_reset(d);
	for (i = 0; i < 12; i++) {
		static uint8_t s[12][LOOPDET_SIG_N];

		memcpy(s[i], SCREEN_A, sizeof s[i]);
		memset(s[i] + i * 40, 0, 8);
		a.sig = b.sig = s[i];
		CHECK(!loopdet_feed(d, &OPTS, i % 2 == 0 ? &a : &b, &h));
	}
	loopdet_free(d);
}

static void
test_noops_in_a_row(void)
{
	struct loopdet *d = loopdet_new();
	struct loopdet_act a;
	struct loopdet_hit h;
	char text[32];
	int i, hit_at = -1;

	screens();
	for (i = 0; i < 10 && hit_at < 0; i++) {
		snprintf(text, sizeof text, "{\"text\":\"word %d\"}", i);
		a = in("type", text, -1, 0, i == 1 ? "unverifiable" : "suspected_noop", SCREEN_A, 1000 * i);
		if (loopdet_feed(d, &OPTS, &a, &h))
			hit_at = i;
	}
	CHECK(hit_at == 4);     /* the unverifiable one neither counts nor breaks the row */
	CHECK(h.signal == LOOPDET_NOOP && h.times == 4 && h.since_ms == 0);
	CHECK(strstr(h.sentence, "signal: noop") != NULL && strstr(h.sentence, "word 4") != NULL);
	/* a confirmed input breaks the row */
	for (i = 0; i < 3; i++) {
		snprintf(text, sizeof text, "{\"text\":\"w %d\"}", i);
		a = in("type", text, -1, 0, "suspected_noop", NULL, 0);
		CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	}
	a = in("type", "{\"text\":\"ok\"}", -1, 0, "confirmed", NULL, 0);
	CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	a = in("type", "{\"text\":\"again\"}", -1, 0, "suspected_noop", NULL, 0);
	CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	loopdet_free(d);
}

static void
test_item_far_longer_than_its_siblings(void)
{
	struct loopdet *d = loopdet_new();
	struct loopdet_act a = { .name = "note", .target = "" };
	struct loopdet_hit h;
	int64_t t = 0;
	int i, hit_at = -1;

	/* items 0 and 1: 3 actions over 2 s each */
	for (int it = 0; it < 2; it++)
		for (i = 0; i < 3; i++) {
			a.ordinal = it;
			a.at_ms = t += 1000;
			CHECK(!loopdet_feed(d, &OPTS, &a, &h));
		}
	for (i = 0; i < 40 && hit_at < 0; i++) {
		a.ordinal = 2;
		a.at_ms = t += 1000;
		if (loopdet_feed(d, &OPTS, &a, &h))
			hit_at = i;
	}
	/* 12 actions (item_min, and 4 x 3) over 11 s (>= 4 x 2 s) */
	CHECK(hit_at == 11);
	CHECK(h.signal == LOOPDET_ITEM && h.ordinal == 2 && h.times == 12);
	CHECK(strstr(h.sentence, "plan item 2 has taken 12 actions") != NULL);
	/* again only once the count has doubled */
	for (i = 12; i < 23; i++) {
		a.at_ms = t += 1000;
		CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	}
	a.at_ms = t += 1000;
	CHECK(loopdet_feed(d, &OPTS, &a, &h) && h.times == 24);
	/* the first item has no siblings: never flagged */
	loopdet_free(d);
	d = loopdet_new();
	a.ordinal = 0;
	for (i = 0; i < 50; i++) {
		a.at_ms = 1000 * i;
		CHECK(!loopdet_feed(d, &OPTS, &a, &h));
	}
	CHECK(strcmp(loopdet_signal_name(LOOPDET_CYCLE), "cycle") == 0);
	loopdet_free(d);
}

const struct harness_test loopdet_tests[] = {
	{ "loopdet: the same input on a still screen", test_repeat_on_a_still_screen },
	{ "loopdet: progress is not a loop", test_progress_is_not_a_loop },
	{ "loopdet: a cycle of two inputs", test_cycle_of_two },
	{ "loopdet: suspected_noop in a row", test_noops_in_a_row },
	{ "loopdet: an item far longer than its siblings", test_item_far_longer_than_its_siblings },
	{ NULL, NULL },
};
