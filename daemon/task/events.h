/*
 * events.h - change notifications for live clients: the event ring and
 * its subscribers (api_events.c serves them as Server-Sent Events on
 * GET /api/events).
 *
 * Writers (task.c after each commit, waits.c, recorder.c) publish small
 * events {"type","op","task_id","ref"}; the dashboard refetches what it
 * shows when one concerns it. Events get increasing ids and sit in a ring
 * of the last EVENTS_RING, so a client that reconnects with Last-Event-ID
 * (or ?since=) gets what it missed; one that missed more than the ring (or
 * comes back to a restarted detmd: ids start again at 1) first gets an
 * "event: reset" and should refetch everything. A comment line goes out
 * every 15 s when nothing happens, so proxies and clients see the stream
 * is alive. Publishing never blocks on subscribers, and reading never
 * blocks: a subscriber with nothing to send says so and is called again
 * after the notify hook ran (or on its own clock).
 *
 * Thread-safe. events_shutdown ends every stream (before the HTTP server
 * stops).
 */
#ifndef DETM_EVENTS_H
#define DETM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util.h"
#include "derr.h"

#define EVENTS_RING 1024

/* type: task, item, action, log, message, wait, recording, completion,
 * loop (loop_rows.c); op: created,
 * updated, deleted; ref: the item ordinal / action / wait id, or NULL. */
void events_publish(const char *type, const char *op, const char *task_id, const char *ref);
/* Inside a deferred store_tx (store_defer_begin), events_publish holds the
 * event back until its batch commits: events_commit(batch, ok) publishes
 * (ok) or drops (the batch failed) the events of batches up to `batch`.
 * Called by whoever installed the store's commit hook. */
void events_commit(uint64_t batch, bool ok);

struct events_sub;

/* A subscriber that gets the events after id `since` (-1: from now on);
 * fd is the client's socket, polled for a hang-up (-1: none). NULL with e
 * set (DERR_UNAVAILABLE) when detmd is stopping or too many are open. */
struct events_sub *events_sub_open(int64_t since, int fd, struct derr *e);
/* The next bytes of the stream into buf: how many (1..max); 0 when there
 * is nothing to send now (ask again after the notify hook ran, or within a
 * second for the heartbeat); -1 when the stream ended (shutdown, or the
 * client hung up). Never blocks. One caller at a time per subscriber. */
long events_sub_read(struct events_sub *s, char *buf, size_t max);
/* Frees s. NULL is a no-op. */
void events_sub_close(struct events_sub *s);
/* fn runs after every publish and at shutdown (on that thread, no lock of
 * this module held). Set once, before the server starts. */
void events_set_notify(void (*fn)(void));
void events_shutdown(void);

#endif
