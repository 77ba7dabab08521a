/*
 * humanize.h - human-like pointer paths and key timing for synthetic input.
 *
 * Owns one daemon-wide switch (on/off, since when, why), as the Python DETM
 * did: an agent turns it on for sites that watch how the pointer moves, and
 * off again for speed. The switch is not persisted; its start value is
 * ACU_HUMANIZE. xinput.c asks humanize_enabled() on every pointer move,
 * click, drag and typing call and, when on, uses the shapes below.
 *
 * The shapes are pure functions of their arguments and a caller-owned
 * random state, so they are unit-tested without X:
 *  - a move is a quadratic Bezier from the current point to the target with
 *    its control point 8-25 % of the distance off the straight line on a
 *    random side, walked on a smoothstep schedule in 6-40 steps of ~14 ms
 *    (140 + 80 * log2(1 + d/100) ms in all); every point is on the screen
 *    and the last one is exactly the target;
 *  - a click lands within +-2 px of the target (clamped to the screen) and
 *    holds the button 40-120 ms;
 *  - typing goes one character at a time with a log-normal gap (mode about
 *    115 ms, clamped to 55-320 ms) and, at a word boundary, a 22 % chance of
 *    a 180-600 ms pause.
 *
 * Thread-safe: the switch is read and written under its own mutex.
 * Does not: touch X, sleep, or decide which calls are humanised.
 */
#ifndef DETM_HUMANIZE_H
#define DETM_HUMANIZE_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#define HUMANIZE_PATH_MAX   40      /* points in one move */
#define HUMANIZE_TYPE_MAX   2000    /* characters one humanised type call takes */
#define HUMANIZE_JITTER_PX  2

struct hpoint {
	int x, y;
};

/* Sets the switch at start-up (no reason recorded). */
void humanize_configure(bool enabled);
bool humanize_enabled(void);
/* Turns it on or off; reason may be NULL. Returns the new snapshot. */
json_object *humanize_set(bool enabled, const char *reason);
/* {enabled, since (epoch s), reason, defaults{...}}; caller owns it. */
json_object *humanize_snapshot(void);

/* A random state for one call, seeded from the clock and the thread. */
uint64_t humanize_seed(void);
/* Uniform in [lo, hi]. */
int humanize_uniform(uint64_t *rng, int lo, int hi);

/* Fills pts with the move from (x0, y0) to (x1, y1) on a w x h screen and
 * returns how many points (1..HUMANIZE_PATH_MAX; 1 when the points are the
 * same). *step_ms gets the pause between points. */
int humanize_path(int x0, int y0, int x1, int y1, int w, int h, uint64_t *rng,
    struct hpoint pts[HUMANIZE_PATH_MAX], int *step_ms);
/* Where a click aimed at (x, y) lands: within HUMANIZE_JITTER_PX, on screen. */
struct hpoint humanize_jitter(int x, int y, int w, int h, uint64_t *rng);
/* How long a button is held, in ms (40-120). */
int humanize_hold_ms(uint64_t *rng);
/* The gap before the next character, in ms; word_boundary when the
 * character just typed was a space or newline. */
int humanize_key_gap_ms(uint64_t *rng, bool word_boundary);

#endif
