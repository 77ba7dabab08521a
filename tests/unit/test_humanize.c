/* test_humanize.c - the shapes of humanised input (daemon/x11/humanize.c). */
#include <math.h>
#include <stdlib.h>

#include "unit.h"
#include "x11/humanize.h"

/* Distance of p from the line through a and b. */
static double
off_line(struct hpoint a, struct hpoint b, struct hpoint p)
{
	double dx = b.x - a.x, dy = b.y - a.y;

	return fabs(dy * (p.x - a.x) - dx * (p.y - a.y)) / sqrt(dx * dx + dy * dy);
}

static void
test_paths_end_exactly_stay_on_screen_and_curve(void)
{
	static const struct { int x0, y0, x1, y1; } moves[] = {
		{ 0, 0, 1919, 1079 }, { 1900, 10, 20, 1070 }, { 500, 500, 530, 500 },
		{ 0, 540, 1919, 540 }, { 960, 0, 960, 1079 }, { 3, 3, 5, 4 },
	};
	uint64_t rng = 42;

	for (size_t m = 0; m < sizeof moves / sizeof moves[0]; m++) {
		for (int k = 0; k < 200; k++) {
			struct hpoint pts[HUMANIZE_PATH_MAX];
			struct hpoint a = { moves[m].x0, moves[m].y0 }, b = { moves[m].x1, moves[m].y1 };
			double d = hypot(b.x - a.x, b.y - a.y), far = 0;
			int step = -1, n = humanize_path(a.x, a.y, b.x, b.y, 1920, 1080, &rng, pts, &step);

			CHECK(n >= 6 && n <= HUMANIZE_PATH_MAX);
			CHECK(pts[n - 1].x == b.x && pts[n - 1].y == b.y);
			CHECK(step >= 5 && step <= 40);
			for (int i = 0; i < n; i++) {
				CHECK(pts[i].x >= 0 && pts[i].x < 1920 && pts[i].y >= 0 && pts[i].y < 1080);
				far = fmax(far, off_line(a, b, pts[i]));
			}
			/* The control point is 8-25 % of d off the line, so the
			 * curve bulges 4-12.5 % of d (less where the screen edge
			 * clamps it, as along the top and left edges). */
			if (d > 500 && a.y != 540 && a.x != 960)
				CHECK(far <= 0.13 * d + 2);
			if (d > 500 && (a.y == 540 || a.x == 960))
				CHECK(far >= 0.04 * d - 2 && far <= 0.13 * d + 2);
			/* Longer moves take longer, within the 6-40 step bounds. */
			CHECK(n * step >= 130 && n * step <= 40 * 40);
		}
	}
}

static void
test_a_move_to_the_same_point_is_one_event(void)
{
	struct hpoint pts[HUMANIZE_PATH_MAX];
	uint64_t rng = 7;
	int step = -1;

	CHECK(humanize_path(10, 10, 10, 10, 100, 100, &rng, pts, &step) == 1);
	CHECK(pts[0].x == 10 && pts[0].y == 10 && step == 0);
}

static void
test_jitter_holds_and_gaps_stay_in_their_ranges(void)
{
	uint64_t rng = humanize_seed();
	int pauses = 0, words = 0, lo = 1000, hi = 0, moved = 0;

	for (int i = 0; i < 20000; i++) {
		struct hpoint p = humanize_jitter(0, 1079, 1920, 1080, &rng);
		struct hpoint q = humanize_jitter(100, 100, 1920, 1080, &rng);
		int hold = humanize_hold_ms(&rng), gap = humanize_key_gap_ms(&rng, false);
		int wgap = humanize_key_gap_ms(&rng, true);

		CHECK(p.x >= 0 && p.x <= 2 && p.y >= 1077 && p.y <= 1079);
		CHECK(abs(q.x - 100) <= 2 && abs(q.y - 100) <= 2);
		moved += q.x != 100 || q.y != 100;
		CHECK(hold >= 40 && hold <= 120);
		CHECK(gap >= 55 && gap <= 320);
		lo = gap < lo ? gap : lo;
		hi = gap > hi ? gap : hi;
		CHECK(wgap >= 55 && wgap <= 320 + 600);
		pauses += wgap > 320;
		words++;
	}
	/* Both ends of the clamp are reached, and word pauses happen about
	 * 22 % of the time (a pause can add as little as 180 ms to a short
	 * gap and stay under 320, so the count is a lower bound). */
	CHECK(lo == 55 && hi > 250);
	CHECK(pauses > words / 10 && pauses < words * 30 / 100);
	CHECK(moved > 15000);
}

static void
test_the_switch_reports_state_and_reason(void)
{
	json_object *o;

	humanize_configure(false);
	CHECK(!humanize_enabled());
	o = humanize_set(true, "linkedin");
	CHECK(humanize_enabled());
	CHECK(json_object_get_boolean(json_object_object_get(o, "enabled")));
	CHECK(json_object_get_string(json_object_object_get(o, "reason"))[0] == 'l');
	CHECK(json_object_object_get(json_object_object_get(o, "defaults"), "key_gap_ms") != NULL);
	json_object_put(o);
	json_object_put(humanize_set(false, NULL));
	CHECK(!humanize_enabled());
}

const struct harness_test humanize_tests[] = {
	{ "humanize_paths_end_exactly_stay_on_screen_and_curve", test_paths_end_exactly_stay_on_screen_and_curve },
	{ "humanize_a_move_to_the_same_point_is_one_event", test_a_move_to_the_same_point_is_one_event },
	{ "humanize_jitter_holds_and_gaps_stay_in_their_ranges", test_jitter_holds_and_gaps_stay_in_their_ranges },
	{ "humanize_the_switch_reports_state_and_reason", test_the_switch_reports_state_and_reason },
	{ NULL, NULL },
};
