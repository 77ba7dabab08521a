/*
 * humanize.c - the humanize switch and the shapes of human-like input
 * (humanize.h). The switch is a few fields under one mutex; everything
 * else is arithmetic on a caller-owned xorshift state.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/jx.h"
#include "core/util.h"
#include "humanize.h"

#define REASON_MAX 256

#define MOVE_BASE_MS    140.0
#define MOVE_LOG_MS     80.0
#define MOVE_STEP_MS    14
#define MOVE_MIN_STEPS  6
#define CURVE_MIN_PCT   8
#define CURVE_MAX_PCT   25
#define HOLD_MIN_MS     40
#define HOLD_MAX_MS     120
#define GAP_MODE_MS     115.0
#define GAP_SIGMA       0.35
#define GAP_MIN_MS      55
#define GAP_MAX_MS      320
#define PAUSE_PCT       22
#define PAUSE_MIN_MS    180
#define PAUSE_MAX_MS    600

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool on;
static int64_t since_ms;
static char why[REASON_MAX];

void
humanize_configure(bool enabled)
{
	pthread_mutex_lock(&lock);
	on = enabled;
	since_ms = now_ms();
	why[0] = '\0';
	pthread_mutex_unlock(&lock);
}

bool
humanize_enabled(void)
{
	bool v;

	pthread_mutex_lock(&lock);
	v = on;
	pthread_mutex_unlock(&lock);
	return v;
}

json_object *
humanize_set(bool enabled, const char *reason)
{
	pthread_mutex_lock(&lock);
	if (on != enabled)
		since_ms = now_ms();
	on = enabled;
	snprintf(why, sizeof why, "%s", reason != NULL ? reason : "");
	pthread_mutex_unlock(&lock);
	return humanize_snapshot();
}

static void
add_range(json_object *o, const char *key, int lo, int hi)
{
	json_object *a = json_object_new_array();

	json_object_array_add(a, json_object_new_int(lo));
	json_object_array_add(a, json_object_new_int(hi));
	json_object_object_add(o, key, a);
}

json_object *
humanize_snapshot(void)
{
	json_object *o = json_object_new_object(), *d = json_object_new_object();

	pthread_mutex_lock(&lock);
	json_object_object_add(o, "enabled", json_object_new_boolean(on));
	json_object_object_add(o, "since", json_object_new_double((double)since_ms / 1000.0));
	jx_add_str(o, "reason", why);
	pthread_mutex_unlock(&lock);
	json_object_object_add(d, "move_ms", json_object_new_string(
	    "140 + 80 * log2(1 + distance/100)"));
	add_range(d, "move_steps", MOVE_MIN_STEPS, HUMANIZE_PATH_MAX);
	add_range(d, "curve_offset_pct", CURVE_MIN_PCT, CURVE_MAX_PCT);
	json_object_object_add(d, "click_jitter_px", json_object_new_int(HUMANIZE_JITTER_PX));
	add_range(d, "click_hold_ms", HOLD_MIN_MS, HOLD_MAX_MS);
	json_object_object_add(d, "key_gap_mode_ms", json_object_new_int((int)GAP_MODE_MS));
	add_range(d, "key_gap_ms", GAP_MIN_MS, GAP_MAX_MS);
	json_object_object_add(d, "word_pause_pct", json_object_new_int(PAUSE_PCT));
	add_range(d, "word_pause_ms", PAUSE_MIN_MS, PAUSE_MAX_MS);
	json_object_object_add(d, "type_max_chars", json_object_new_int(HUMANIZE_TYPE_MAX));
	json_object_object_add(o, "defaults", d);
	return o;
}

/* ---- randomness ------------------------------------------------------- */

uint64_t
humanize_seed(void)
{
	struct timespec ts;
	uint64_t s;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
	    (uint64_t)(uintptr_t)pthread_self();
	return s != 0 ? s : 0x9e3779b97f4a7c15ULL;
}

static uint64_t
next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* Uniform in [0, 1). */
static double
unit(uint64_t *rng)
{
	return (double)(next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

int
humanize_uniform(uint64_t *rng, int lo, int hi)
{
	if (hi <= lo)
		return lo;
	return lo + (int)(next(rng) % (uint64_t)(hi - lo + 1));
}

static int
clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* ---- shapes ----------------------------------------------------------- */

int
humanize_path(int x0, int y0, int x1, int y1, int w, int h, uint64_t *rng,
    struct hpoint pts[HUMANIZE_PATH_MAX], int *step_ms)
{
	double dx = x1 - x0, dy = y1 - y0, d = sqrt(dx * dx + dy * dy);
	double ms, off, side, cx, cy;
	int n;

	if (d < 1.0) {
		pts[0] = (struct hpoint){ x1, y1 };
		*step_ms = 0;
		return 1;
	}
	ms = MOVE_BASE_MS + MOVE_LOG_MS * log2(1.0 + d / 100.0);
	n = clampi((int)lround(ms / MOVE_STEP_MS), MOVE_MIN_STEPS, HUMANIZE_PATH_MAX);
	*step_ms = (int)lround(ms / n);
	/* Control point: off the midpoint, perpendicular to the line. */
	off = d * humanize_uniform(rng, CURVE_MIN_PCT, CURVE_MAX_PCT) / 100.0;
	side = (next(rng) & 1) ? 1.0 : -1.0;
	cx = (x0 + x1) / 2.0 - dy / d * off * side;
	cy = (y0 + y1) / 2.0 + dx / d * off * side;
	for (int i = 1; i <= n; i++) {
		double t = (double)i / n, s = t * t * (3.0 - 2.0 * t), u = 1.0 - s;
		double x = u * u * x0 + 2.0 * u * s * cx + s * s * x1;
		double y = u * u * y0 + 2.0 * u * s * cy + s * s * y1;

		pts[i - 1] = (struct hpoint){ clampi((int)lround(x), 0, w - 1),
		    clampi((int)lround(y), 0, h - 1) };
	}
	pts[n - 1] = (struct hpoint){ x1, y1 };
	return n;
}

struct hpoint
humanize_jitter(int x, int y, int w, int h, uint64_t *rng)
{
	return (struct hpoint){
		clampi(x + humanize_uniform(rng, -HUMANIZE_JITTER_PX, HUMANIZE_JITTER_PX), 0, w - 1),
		clampi(y + humanize_uniform(rng, -HUMANIZE_JITTER_PX, HUMANIZE_JITTER_PX), 0, h - 1),
	};
}

int
humanize_hold_ms(uint64_t *rng)
{
	return humanize_uniform(rng, HOLD_MIN_MS, HOLD_MAX_MS);
}

int
humanize_key_gap_ms(uint64_t *rng, bool word_boundary)
{
	/* Log-normal with mode exp(mu - sigma^2) = GAP_MODE_MS; a normal
	 * deviate from Box-Muller. */
	double mu = log(GAP_MODE_MS) + GAP_SIGMA * GAP_SIGMA;
	double u1 = unit(rng), u2 = unit(rng);
	double z = sqrt(-2.0 * log(u1 > 0.0 ? u1 : 1e-12)) * cos(2.0 * M_PI * u2);
	int gap = clampi((int)lround(exp(mu + GAP_SIGMA * z)), GAP_MIN_MS, GAP_MAX_MS);

	if (word_boundary && humanize_uniform(rng, 1, 100) <= PAUSE_PCT)
		gap += humanize_uniform(rng, PAUSE_MIN_MS, PAUSE_MAX_MS);
	return gap;
}
