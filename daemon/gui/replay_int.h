/*
 * replay_int.h - what the replay's files share (replay.h is the contract).
 *
 *   replay.c         the runs: thread, steps in order, progress, status
 *   replay_ground.c  finding a recorded target again (the four ways) and
 *                    waiting for windows and the keyboard focus
 */
#ifndef DETM_REPLAY_INT_H
#define DETM_REPLAY_INT_H

#include <stdatomic.h>
#include <stdbool.h>

#include <json-c/json.h>

#include "core/app.h"
#include "x11/xwin.h"

struct rp_ground {
	int x, y;                       /* the point found (screen) */
	const char *by;                 /* accessibility | ocr | window | model | screen */
	bool model_call;                /* one model call was made */
	bool not_ready;                 /* the element found stayed insensitive (clicked all the same) */
	char looked_for[400];           /* what was searched, in words */
	char why[480];                  /* not found: why */
};

/* Waits up to timeout_ms for a visible window whose title is title (else,
 * with class non-empty and no title match, one of that class). 1 with *w,
 * 0 not seen (or *stop set). */
int rp_wait_window(struct app *app, const char *task_id, const char *title, const char *cls,
    int timeout_ms, atomic_int *stop, struct xwin *w);
/* Grounds a recorded target (desktop/target.h) on task_id's display (the
 * model only with ask_model). 1 with g->x, g->y and g->by; 0 with
 * g->looked_for and g->why. g->model_call either way. */
int rp_ground(struct app *app, const char *task_id, json_object *target, int timeout_ms,
    bool ask_model, atomic_int *stop, struct rp_ground *g);
/* Waits until the window titled title has the keyboard focus, focusing it
 * (by title) when it does not come within a second. 1 ok, 0 not. */
int rp_wait_focus(struct app *app, const char *task_id, const char *title, int timeout_ms,
    atomic_int *stop, char *why, size_t cap);

#endif
