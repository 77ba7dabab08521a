/*
 * events.c - the event ring and its subscribers (events.h).
 *
 * The ring holds preformatted SSE records ("id: N\nevent: T\ndata: {...}\n\n")
 * under `mu`; `last` is the newest id (0: none yet). A subscriber keeps the
 * id it has sent up to and a buffer of bytes not yet handed out; when the
 * buffer is empty it refills from the ring, or (nothing new) sends a
 * heartbeat once HEARTBEAT_S passed since its last bytes, or says "nothing
 * now" after checking whether the client hung up, so a dead subscriber is
 * freed within about a second (the HTTP layer asks again at least that
 * often) rather than at the next heartbeat write.
 */
#include "events.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "store/store.h"

#define HEARTBEAT_S     15
#define SUBSCRIBERS_MAX 64
#define BATCH_MAX       (256 * 1024)    /* bytes handed to one read */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char *ring[EVENTS_RING];         /* ring[id % EVENTS_RING] */
static uint64_t last;
static int subscribers;
static bool down;
static void (*notify)(void);     /* atomic: set once, read by publishers */

/* Events of writes not committed yet (a deferred store_tx): published by
 * events_commit when their batch commits, dropped if it fails. */
struct pending {
	uint64_t ticket;
	char *type, *op, *task_id, *ref;
	struct pending *next;
};
static struct pending *pend_head, **pend_tail = &pend_head;
/* The last batch events_commit saw, and the recent ones that failed: an
 * event whose batch committed before it was published (the writer
 * committed it itself, or the committer was quicker) goes out at once
 * instead of waiting for the next commit. */
#define FAILED_SEEN 64
static uint64_t commit_seen, failed_seen[FAILED_SEEN];

struct events_sub {
	uint64_t sent;          /* the last id handed out */
	char *buf;
	size_t len, off;
	bool hello;             /* the first record (retry + hello) went out */
	int fd;                 /* the client's socket (-1: unknown), polled for hang-up */
	int64_t beat_us;        /* a heartbeat is due at this mono_us() */
};

void
events_set_notify(void (*fn)(void))
{
	__atomic_store_n(&notify, fn, __ATOMIC_RELEASE);
}

static void
notify_all(void)
{
	void (*fn)(void) = __atomic_load_n(&notify, __ATOMIC_ACQUIRE);

	if (fn != NULL)
		fn();
}

static void publish_now(const char *type, const char *op, const char *task_id, const char *ref);

void
events_publish(const char *type, const char *op, const char *task_id, const char *ref)
{
	uint64_t ticket = store_defer_ticket();
	struct pending *p;

	if (ticket == 0) {
		publish_now(type, op, task_id, ref);
		return;
	}
	pthread_mutex_lock(&mu);
	if (ticket <= commit_seen) {
		bool ok = failed_seen[ticket % FAILED_SEEN] != ticket;

		pthread_mutex_unlock(&mu);
		if (ok)
			publish_now(type, op, task_id, ref);
		return;
	}
	/* made under the lock, so events_commit cannot pass its batch between
	 * the check above and the append below */
	p = xcalloc(1, sizeof *p);
	p->ticket = ticket;
	p->type = xstrdup(type);
	p->op = xstrdup(op);
	p->task_id = task_id ? xstrdup(task_id) : NULL;
	p->ref = ref ? xstrdup(ref) : NULL;
	*pend_tail = p;
	pend_tail = &p->next;
	pthread_mutex_unlock(&mu);
}

void
events_commit(uint64_t batch, bool ok)
{
	struct pending *done = NULL, **dt = &done, *p, **pp;

	pthread_mutex_lock(&mu);
	if (batch > commit_seen)
		commit_seen = batch;
	if (!ok)
		failed_seen[batch % FAILED_SEEN] = batch;
	for (pp = &pend_head; (p = *pp) != NULL;) {
		if (p->ticket > batch) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		p->next = NULL;
		*dt = p;
		dt = &p->next;
	}
	pend_tail = pp;
	while (*pend_tail != NULL)
		pend_tail = &(*pend_tail)->next;
	pthread_mutex_unlock(&mu);
	for (p = done; p != NULL; p = done) {
		done = p->next;
		if (ok)
			publish_now(p->type, p->op, p->task_id, p->ref);
		free(p->type);
		free(p->op);
		free(p->task_id);
		free(p->ref);
		free(p);
	}
}

/* Whether s (NULL: absent) needs no JSON escaping: the types, ops and ids
 * detmd publishes are all such words. */
static bool
plain(const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return false;
	}
	return true;
}

/* The record's data for plain strings, printed directly: json-c's object,
 * hash table and print buffer for four short words were about 3 % of
 * detmd's time in a POST storm (an event per logged action). Other
 * strings go through json-c. Keys in the same order either way. */
static char *
record_of(uint64_t id, const char *type, const char *op, const char *task_id, const char *ref)
{
	json_object *o;
	char *rec;

	if (plain(type) && plain(op) && plain(task_id) && plain(ref))
		return xasprintf("id: %" PRIu64 "\nevent: %s\ndata: {\"type\":\"%s\",\"op\":\"%s\""
		    "%s%s%s%s%s%s,\"id\":%" PRIu64 "}\n\n", id, type, type, op,
		    task_id ? ",\"task_id\":\"" : "", task_id ? task_id : "", task_id ? "\"" : "",
		    ref ? ",\"ref\":\"" : "", ref ? ref : "", ref ? "\"" : "", id);
	o = json_object_new_object();
	jx_add_str(o, "type", type);
	jx_add_str(o, "op", op);
	if (task_id != NULL)
		jx_add_str(o, "task_id", task_id);
	if (ref != NULL)
		jx_add_str(o, "ref", ref);
	json_object_object_add(o, "id", json_object_new_int64((int64_t)id));
	rec = xasprintf("id: %" PRIu64 "\nevent: %s\ndata: %s\n\n", id, type, jx_string(o, NULL));
	json_object_put(o);
	return rec;
}

static void
publish_now(const char *type, const char *op, const char *task_id, const char *ref)
{
	pthread_mutex_lock(&mu);
	last++;
	free(ring[last % EVENTS_RING]);
	ring[last % EVENTS_RING] = record_of(last, type, op, task_id, ref);
	pthread_mutex_unlock(&mu);
	notify_all();
}

/* Fills s->buf with what the client has not seen (mu held). */
static void
fill(struct events_sub *s)
{
	uint64_t oldest = last >= EVENTS_RING ? last - EVENTS_RING + 1 : 1;
	char *data = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&data, &len);

	if (m == NULL)
		abort();        /* out of memory, as xmalloc would */
	if (!s->hello) {
		fprintf(m, "retry: 2000\nevent: hello\ndata: {\"last_id\":%" PRIu64 "}\n\n", last);
		s->hello = true;
	}
	if (s->sent > last || (s->sent + 1 < oldest && s->sent < last)) {
		/* from before a restart, or further back than the ring */
		fprintf(m, "event: reset\ndata: {\"last_id\":%" PRIu64 "}\n\n", last);
		s->sent = s->sent > last ? last : oldest - 1;
	}
	while (s->sent < last && ftell(m) < BATCH_MAX) {
		s->sent++;
		fputs(ring[s->sent % EVENTS_RING], m);
	}
	if (fclose(m) != 0)
		abort();
	free(s->buf);
	s->buf = data;
	s->len = len;
	s->off = 0;
}

/* Refills an empty buffer: 1 bytes to send, 0 nothing now, -1 the end. */
static int
refill(struct events_sub *s)
{
	int rc = 1;

	pthread_mutex_lock(&mu);
	if (down) {
		rc = -1;
	} else if (!s->hello || s->sent != last) {
		fill(s);
	} else if (mono_us() >= s->beat_us) {
		free(s->buf);
		s->buf = xstrdup(": keep-alive\n\n");
		s->len = strlen(s->buf);
		s->off = 0;
	} else {
		rc = s->fd >= 0 && fd_peer_closed(s->fd) ? -1 : 0;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

long
events_sub_read(struct events_sub *s, char *out, size_t max)
{
	size_t n;

	if (s->off >= s->len) {
		int rc = refill(s);

		if (rc <= 0)
			return rc;
	}
	n = s->len - s->off < max ? s->len - s->off : max;
	memcpy(out, s->buf + s->off, n);
	s->off += n;
	s->beat_us = mono_us() + (int64_t)HEARTBEAT_S * 1000000;
	return (long)n;
}

void
events_sub_close(struct events_sub *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&mu);
	subscribers--;
	pthread_mutex_unlock(&mu);
	free(s->buf);
	free(s);
}

struct events_sub *
events_sub_open(int64_t since, int fd, struct derr *e)
{
	struct events_sub *s;

	pthread_mutex_lock(&mu);
	if (down || subscribers >= SUBSCRIBERS_MAX) {
		pthread_mutex_unlock(&mu);
		derr_set(e, DERR_UNAVAILABLE, NULL, down ? "detmd is stopping" :
		    "%d event streams are open already", SUBSCRIBERS_MAX);
		return NULL;
	}
	subscribers++;
	s = xcalloc(1, sizeof *s);
	s->fd = fd;
	s->sent = since >= 0 ? (uint64_t)since : last;   /* new clients: from now on */
	pthread_mutex_unlock(&mu);
	return s;
}

void
events_shutdown(void)
{
	pthread_mutex_lock(&mu);
	down = true;
	pthread_mutex_unlock(&mu);
	notify_all();
}
