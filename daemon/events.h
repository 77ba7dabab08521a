/*
 * events.h - change notifications for live clients: GET /api/events as
 * Server-Sent Events.
 *
 * Writers (task.c after each commit, waits.c, recorder.c) publish small
 * events {"type","op","task_id","ref"}; the dashboard refetches what it
 * shows when one concerns it. Events get increasing ids and sit in a ring
 * of the last EVENTS_RING, so a client that reconnects with Last-Event-ID
 * (or ?since=) gets what it missed; one that missed more than the ring (or
 * comes back to a restarted detmd: ids start again at 1) first gets an
 * "event: reset" and should refetch everything. A comment line goes out
 * every 15 s when nothing happens, so proxies and clients see the stream
 * is alive. Publishing never blocks on subscribers.
 *
 * Thread-safe. events_shutdown ends every stream (before the HTTP server
 * stops).
 */
#ifndef DETM_EVENTS_H
#define DETM_EVENTS_H

#include "api.h"
#include "derr.h"
#include "util.h"

#define EVENTS_RING 1024

/* type: task, item, action, log, message, wait, recording; op: created,
 * updated, deleted; ref: the item ordinal / action / wait id, or NULL. */
void events_publish(const char *type, const char *op, const char *task_id, const char *ref);
/* GET /api/events. */
int api_events(struct req *r, struct derr *e);
void events_shutdown(void);

#endif
