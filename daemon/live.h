/*
 * live.h - the live view: a multipart/x-mixed-replace JPEG stream (MJPEG)
 * of a task's display or of the shared one, and single frames for
 * polling clients.
 *
 * Viewers of one display share one capture thread, started by the first
 * viewer and ended when the last one leaves: nothing is captured while no
 * one watches. The thread grabs at most LIVE_FPS times a second, only when
 * XDamage says something was drawn (else it re-sends the last frame every
 * two seconds so viewers know the stream is alive), at most 1280 px wide.
 *
 * Thread-safe. live_shutdown ends every stream (before the HTTP server
 * stops: its connection threads wait for them).
 */
#ifndef DETM_LIVE_H
#define DETM_LIVE_H

#include <json-c/json.h>

#include "api.h"
#include "derr.h"
#include "util.h"

#define LIVE_FPS 5
#define LIVE_BOUNDARY "detmframe"

/* Makes r an MJPEG stream of task_id's display (NULL: the shared one). */
int live_stream(struct req *r, const char *task_id, struct derr *e) DETM_NODISCARD;
/* Sets r's reply to one JPEG of the display: the stream's latest frame if
 * one is running, else a fresh grab. */
int live_frame(struct req *r, const char *task_id, struct derr *e) DETM_NODISCARD;
/* {streams:[{task_id, viewers, capturing, frames}]}; caller owns. */
json_object *live_list(void);
void live_shutdown(void);

#endif
