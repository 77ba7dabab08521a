/*
 * live.h - the live view: shared capture threads that keep the latest JPEG
 * of a task's display (or of the shared one), and the viewers that read
 * it as a multipart/x-mixed-replace stream (MJPEG; api_live.c serves it),
 * plus single frames for polling clients.
 *
 * Viewers of one display share one capture thread, started by the first
 * viewer and ended when the last one leaves: nothing is captured while no
 * one watches. The thread grabs at most LIVE_FPS times a second, only when
 * XDamage says something was drawn (else it re-sends the last frame every
 * two seconds so viewers know the stream is alive), at most 1280 px wide.
 *
 * Thread-safe. Reading a view never blocks. live_shutdown ends every
 * stream (before the HTTP server stops).
 */
#ifndef DETM_LIVE_H
#define DETM_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "core/util.h"
#include "derr.h"

#define LIVE_FPS 5
#define LIVE_BOUNDARY "detmframe"

struct live_view;

/* Joins the live view of task_id's display (NULL: the shared one),
 * starting its capture thread if needed. NULL with e set (503: stopping or
 * too many viewers; 500: no thread). Close with live_view_close. */
struct live_view *live_view_open(const char *task_id, struct derr *e) DETM_NODISCARD;
/* The next bytes of the MJPEG body (parts "--" LIVE_BOUNDARY ...) into
 * buf: how many (1..max); 0 when this viewer has seen the latest frame
 * (ask again after the notify hook ran for live_view_key(v), or later);
 * -1 when the stream ended (capture error, shutdown). One caller at a
 * time per view. */
long live_view_read(struct live_view *v, char *buf, size_t max);
/* What the notify hook passes when v's display changes (an opaque key). */
const void *live_view_key(const struct live_view *v);
/* Leaves the view (the last viewer ends the capture). NULL is a no-op. */
void live_view_close(struct live_view *v);
/* fn(key) runs when a display's viewers have something new (key: as
 * live_view_key; NULL: every view, at shutdown), possibly with this
 * module's lock held: fn must not call back into it. Set once. */
void live_set_notify(void (*fn)(const void *key));

/* One JPEG of the display (task_id NULL: the shared one): the stream's
 * latest frame if one is running (*shared true), else a fresh grab.
 * *jpeg is malloc'd (caller frees). 0, or -1 with e set. */
int live_frame(const char *task_id, unsigned char **jpeg, size_t *len, bool *shared,
    struct derr *e) DETM_NODISCARD;
/* {streams:[{task_id, viewers, capturing, frames}]}; caller owns. */
json_object *live_list(void);
void live_shutdown(void);

#endif
