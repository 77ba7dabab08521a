/*
 * metrics.h - counters for GET /metrics and their Prometheus text form
 * (exposition format 0.0.4).
 *
 * http.c calls metrics_observe once per finished request (the request's
 * route index in api_routes, or -1 when none matched); metrics_render
 * writes every family: requests by route and status, latency histograms
 * by route, tasks by status, watching waits, displays, recordings, model
 * calls/tokens/cost by provider and model (usage.h), wake deliveries
 * (wake.h), the database's size and group-commit counters.
 *
 * Counters are C11 atomics (relaxed): observing a request takes no lock.
 * The text is written by hand: Debian has no C client library for the
 * format (prometheus-cpp is C++), and the format is a few lines of text.
 */
#ifndef DETM_METRICS_H
#define DETM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "store/store.h"

#define METRICS_MAX_ROUTES 200

struct MHD_Connection;

/* One finished request: route index (-1 none), the connection (for the
 * status it was answered with; 0 when none was sent), its duration. */
void metrics_observe(int route, struct MHD_Connection *conn, int64_t usec);

/* What the HTTP layer knows and metrics.c may not include. */
struct metrics_view {
	const char *const *methods;     /* per route index */
	const char *const *patterns;
	size_t nroutes;
	int recordings;                 /* task recordings running now */
	int64_t started_ms;
};

/* The whole exposition as a malloc'd NUL-terminated text (*len bytes). */
char *metrics_render(struct store *st, const struct config *cfg, const struct metrics_view *v,
    size_t *len);

#endif
