/*
 * clip_serve.c - the thread of detmd's selection owner on one display
 * (clip_int.h, clip.h): the ICCCM owner's side.
 *
 * Owns, on the owner's thread only: its connection, what it holds for
 * CLIPBOARD and PRIMARY (a refcounted blob each, plus one per INCR
 * transfer in flight, so a new write never frees bytes a transfer sends)
 * and its transfers. Commands come from clip.c through o->cmd under o->mu.
 *
 * Invariants: the selection is taken with a real server timestamp (a
 * zero-length property append on our window), never CurrentTime, and a
 * request stamped before it is refused (ICCCM 2.2). Data that does not fit
 * one plain request (XMaxRequestSize) goes out INCR, in chunks of that
 * size; a transfer without progress for CLIP_ANSWER_MS is dropped, at most
 * CLIP_XFERS run at once. The thread closes its own connection when it
 * ends: Xlib leaves a dead connection's lock to the thread that met the
 * I/O error, so another thread's XCloseDisplay would wait forever.
 *
 * Not here: the owners' registry and the writers' side (clip.c).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <X11/Xatom.h>

#include "clip_int.h"
#include "core/log.h"
#include "utf8.h"
#include "xerr.h"

/* ---- blobs ---- */

struct clip_blob *
clip_blob_new(const unsigned char *p, size_t n)
{
	struct clip_blob *b = xmalloc(sizeof *b + n + 1);

	b->refs = 1;
	b->len = n;
	if (n > 0)
		memcpy(b->data, p, n);
	b->data[n] = '\0';
	return b;
}

static struct clip_blob *
blob_ref(struct clip_blob *b)
{
	b->refs++;
	return b;
}

void
clip_blob_unref(struct clip_blob *b)
{
	if (b != NULL && --b->refs == 0)
		free(b);
}

/* UTF-8 text as ICCCM's STRING (ISO Latin-1): a character beyond U+00FF
 * becomes '?'. */
static struct clip_blob *
blob_latin1(const struct clip_blob *u)
{
	struct clip_blob *b = clip_blob_new(u->data, u->len);   /* the same size or less */
	size_t i = 0, o = 0;

	while (i < u->len) {
		size_t n = utf8_seq((const char *)u->data + i, u->len - i);
		unsigned c = u->data[i];

		if (n == 2 && c < 0xc4)
			b->data[o++] = (unsigned char)((c & 0x1f) << 6 | (u->data[i + 1] & 0x3f));
		else
			b->data[o++] = n <= 1 && c < 0x80 ? (unsigned char)c : '?';
		i += n > 0 ? n : 1;
	}
	b->len = o;
	return b;
}

/* ---- the owner's thread ---- */

static Bool
is_stamp(Display *d, XEvent *ev, XPointer arg)
{
	const struct clip_owner *o = (const struct clip_owner *)(void *)arg;

	(void)d;
	return ev->type == PropertyNotify && ev->xproperty.window == o->win &&
	    ev->xproperty.atom == o->a[CA_STAMP];
}

/* The server's time now: append nothing to a property of our window and
 * read the time off its PropertyNotify (ICCCM 2.1). Other events stay
 * queued for the loop. */
static int
server_time(struct clip_owner *o, Time *ts, struct derr *e)
{
	int64_t end = mono_us() + (int64_t)CLIP_ANSWER_MS * 1000;
	struct pollfd p = { .fd = ConnectionNumber(o->d), .events = POLLIN };
	XEvent ev;

	XChangeProperty(o->d, o->win, o->a[CA_STAMP], XA_STRING, 8, PropModeAppend,
	    (const unsigned char *)"", 0);
	XFlush(o->d);
	while (!XCheckIfEvent(o->d, &ev, is_stamp, (XPointer)(void *)o)) {
		int64_t left = end - mono_us();

		if (xerr_io_dead(o->d))
			return derr_set(e, DERR_UNAVAILABLE, NULL, "display %s: the X server is gone",
			    o->name);
		if (left <= 0)
			return derr_set(e, DERR_UNAVAILABLE, NULL, "display %s: the X server did not "
			    "answer within %d ms", o->name, CLIP_ANSWER_MS);
		(void)poll(&p, 1, (int)((left + 999) / 1000));
	}
	*ts = ev.xproperty.time;
	return 0;
}

static void
held_drop(struct clip_owner *o, enum clip_sel sel)
{
	clip_blob_unref(o->held[sel].b);
	o->held[sel].b = NULL;
}

/* Takes the selection for the command's blob (owner thread). */
static int
do_set(struct clip_owner *o, enum clip_sel sel, enum clip_kind kind, struct clip_blob *b,
    struct derr *e)
{
	Atom s = clip_sel_atom(o->a, sel);
	Window now;
	Time ts = CurrentTime;

	if (server_time(o, &ts, e) != 0) {
		clip_blob_unref(b);
		return -1;
	}
	XSetSelectionOwner(o->d, s, o->win, ts);
	now = XGetSelectionOwner(o->d, s);
	if (xerr_io_dead(o->d) || now != o->win) {
		clip_blob_unref(b);
		return derr_set(e, DERR_UNAVAILABLE, NULL, "display %s: the X server did not make "
		    "detmd the owner of %s", o->name, clip_sel_name(sel));
	}
	clip_blob_unref(o->held[sel].b);
	o->held[sel] = (struct clip_held){ b, kind, ts };
	log_debug("clipboard: detmd owns %s on %s (%zu bytes of %s)", clip_sel_name(sel), o->name,
	    b->len, kind == CLIP_PNG ? "PNG" : "text");
	return 0;
}

static void
on_clear(struct clip_owner *o, const XSelectionClearEvent *ev)
{
	for (int s = CLIP_CLIPBOARD; s <= CLIP_PRIMARY; s++)
		if (ev->selection == clip_sel_atom(o->a, (enum clip_sel)s) && o->held[s].b != NULL &&
		    (ev->time == CurrentTime || ev->time >= o->held[s].ts)) {
			log_debug("clipboard: another client took %s on %s",
			    clip_sel_name((enum clip_sel)s), o->name);
			held_drop(o, (enum clip_sel)s);
		}
}

/* Serves b as type on the requestor's property: at once, or INCR. 0, or
 * -1 when every transfer slot is busy (the request is refused). */
static int
send_data(struct clip_owner *o, Window req, Atom prop, Atom type, struct clip_blob *b)
{
	long size = (long)b->len;
	size_t i;

	if (b->len <= o->chunk) {
		XChangeProperty(o->d, req, prop, type, 8, PropModeReplace, b->data, (int)b->len);
		return 0;
	}
	for (i = 0; i < CLIP_XFERS && o->xf[i].b != NULL; i++)
		;
	if (i == CLIP_XFERS) {
		log_warn("clipboard: %d INCR transfers already run on %s; a request is refused",
		    CLIP_XFERS, o->name);
		return -1;
	}
	o->xf[i] = (struct clip_xfer){ blob_ref(b), req, prop, type, 0, mono_us() };
	XSelectInput(o->d, req, PropertyChangeMask);
	XChangeProperty(o->d, req, prop, o->a[CA_INCR], 32, PropModeReplace,
	    (const unsigned char *)&size, 1);
	return 0;
}

/* What a request for target gets from h; 0 served, -1 refused. */
static int
serve(struct clip_owner *o, const struct clip_held *h, Window req, Atom prop, Atom target)
{
	const Atom *a = o->a;
	struct clip_blob *b;
	int rc;

	if (target == a[CA_TARGETS]) {
		long t[8];
		int n = 0;

		t[n++] = (long)a[CA_TARGETS];
		t[n++] = (long)a[CA_TIMESTAMP];
		if (h->kind == CLIP_PNG) {
			t[n++] = (long)a[CA_PNG];
		} else {
			t[n++] = (long)a[CA_UTF8];
			t[n++] = (long)a[CA_PLAIN_UTF8];
			t[n++] = (long)XA_STRING;
			t[n++] = (long)a[CA_TEXT];
		}
		XChangeProperty(o->d, req, prop, XA_ATOM, 32, PropModeReplace,
		    (const unsigned char *)t, n);
		return 0;
	}
	if (target == a[CA_TIMESTAMP]) {
		long ts = (long)h->ts;

		XChangeProperty(o->d, req, prop, XA_INTEGER, 32, PropModeReplace,
		    (const unsigned char *)&ts, 1);
		return 0;
	}
	if (h->kind == CLIP_PNG)
		return target == a[CA_PNG] ? send_data(o, req, prop, a[CA_PNG], h->b) : -1;
	if (target == a[CA_UTF8] || target == a[CA_TEXT])
		return send_data(o, req, prop, a[CA_UTF8], h->b);
	if (target == a[CA_PLAIN_UTF8])
		return send_data(o, req, prop, a[CA_PLAIN_UTF8], h->b);
	if (target != XA_STRING)
		return -1;      /* MULTIPLE and anything else: not offered */
	b = blob_latin1(h->b);
	rc = send_data(o, req, prop, XA_STRING, b);
	clip_blob_unref(b);
	return rc;
}

static void
on_request(struct clip_owner *o, const XSelectionRequestEvent *rq)
{
	XEvent ne;
	const struct clip_held *h = NULL;
	Atom prop = rq->property != None ? rq->property : rq->target;  /* obsolete clients */

	for (int s = CLIP_CLIPBOARD; s <= CLIP_PRIMARY; s++)
		if (rq->selection == clip_sel_atom(o->a, (enum clip_sel)s))
			h = &o->held[s];
	memset(&ne, 0, sizeof ne);
	ne.xselection.type = SelectionNotify;
	ne.xselection.requestor = rq->requestor;
	ne.xselection.selection = rq->selection;
	ne.xselection.target = rq->target;
	ne.xselection.time = rq->time;
	ne.xselection.property = prop;
	if (h == NULL || h->b == NULL || rq->owner != o->win ||
	    (rq->time != CurrentTime && rq->time < h->ts) ||
	    serve(o, h, rq->requestor, prop, rq->target) != 0)
		ne.xselection.property = None;
	XSendEvent(o->d, rq->requestor, False, NoEventMask, &ne);
}

/* A transfer is over: its slot is freed, and the requestor's window no
 * longer reports its properties to us unless another transfer needs it. */
static void
xfer_end(struct clip_owner *o, struct clip_xfer *x)
{
	Window req = x->req;

	clip_blob_unref(x->b);
	x->b = NULL;
	for (size_t i = 0; i < CLIP_XFERS; i++)
		if (o->xf[i].b != NULL && o->xf[i].req == req)
			return;
	XSelectInput(o->d, req, NoEventMask);
}

/* The requestor took a chunk (deleted the property): the next one, or the
 * zero-length end. */
static void
on_property(struct clip_owner *o, const XPropertyEvent *ev)
{
	if (ev->state != PropertyDelete || ev->window == o->win)
		return;
	for (size_t i = 0; i < CLIP_XFERS; i++) {
		struct clip_xfer *x = &o->xf[i];
		size_t n;

		if (x->b == NULL || x->req != ev->window || x->prop != ev->atom)
			continue;
		n = x->b->len - x->off < o->chunk ? x->b->len - x->off : o->chunk;
		XChangeProperty(o->d, x->req, x->prop, x->type, 8, PropModeReplace,
		    x->b->data + x->off, (int)n);
		x->off += n;
		x->last_us = mono_us();
		if (n == 0)     /* the end was sent */
			xfer_end(o, x);
		return;
	}
}

/* Drops transfers without progress; the ms until the next could expire
 * (-1: none runs). */
static int
xfers_expire(struct clip_owner *o)
{
	int64_t now = mono_us(), next = -1;

	for (size_t i = 0; i < CLIP_XFERS; i++) {
		struct clip_xfer *x = &o->xf[i];
		int64_t left;

		if (x->b == NULL)
			continue;
		left = x->last_us + (int64_t)CLIP_ANSWER_MS * 1000 - now;
		if (left <= 0) {
			log_debug("clipboard: an INCR transfer on %s stalled at %zu of %zu bytes; dropped",
			    o->name, x->off, x->b->len);
			xfer_end(o, x);
			continue;
		}
		if (next < 0 || left < next)
			next = left;
	}
	return next < 0 ? -1 : (int)(next / 1000 + 1);
}

/* Runs a posted command, if any (owner thread). */
static void
run_cmd(struct clip_owner *o)
{
	struct derr e;
	struct clip_blob *b;
	enum clip_sel sel;
	enum clip_kind kind;
	int rc;

	pthread_mutex_lock(&o->mu);
	if (!o->cmd.posted) {
		pthread_mutex_unlock(&o->mu);
		return;
	}
	b = o->cmd.b;
	sel = o->cmd.sel;
	kind = o->cmd.kind;
	o->cmd.b = NULL;
	o->cmd.posted = false;
	pthread_mutex_unlock(&o->mu);
	derr_clear(&e);
	rc = do_set(o, sel, kind, b, &e);
	pthread_mutex_lock(&o->mu);
	o->cmd.rc = rc;
	o->cmd.e = e;
	o->cmd.done = true;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
}

static void
dispatch(struct clip_owner *o, XEvent *ev)
{
	switch (ev->type) {
	case SelectionRequest:
		on_request(o, &ev->xselectionrequest);
		break;
	case SelectionClear:
		on_clear(o, &ev->xselectionclear);
		break;
	case PropertyNotify:
		on_property(o, &ev->xproperty);
		break;
	default:
		break;
	}
}

void *
clip_owner_main(void *arg)
{
	struct clip_owner *o = arg;
	struct pollfd p[2] = {
		{ .fd = ConnectionNumber(o->d), .events = POLLIN },
		{ .fd = o->wake[0], .events = POLLIN },
	};
	char junk[64];
	bool stopped;

	for (;;) {
		bool stop;

		pthread_mutex_lock(&o->mu);
		stop = o->stop;
		pthread_mutex_unlock(&o->mu);
		if (stop)
			break;
		run_cmd(o);
		while (!xerr_io_dead(o->d) && XPending(o->d) > 0) {
			XEvent ev;

			XNextEvent(o->d, &ev);
			dispatch(o, &ev);
		}
		if (xerr_io_dead(o->d))
			break;
		XFlush(o->d);
		(void)poll(p, 2, xfers_expire(o));
		while (read(o->wake[0], junk, sizeof junk) > 0)
			;
	}
	/* Closed here, on the thread that met the I/O error if there was one:
	 * Xlib leaves a dead connection's lock to that thread, so another
	 * thread's XCloseDisplay would wait for it forever. */
	display_close_extra(o->d);
	o->d = NULL;
	pthread_mutex_lock(&o->mu);
	o->dead = true;
	stopped = o->stop;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	if (!stopped)
		log_info("clipboard: the X server of %s went away; detmd's selections there ended",
		    o->name);
	return NULL;
}
