/*
 * clip.c - detmd as the owner of a display's selections (clip.h).
 *
 * Owns: one owner per display that was written to (a list under reg),
 * each with its own Xlib connection (display_open_extra), an unmapped 1x1
 * window, a thread that answers the X server's SelectionRequest,
 * SelectionClear and PropertyNotify events, and what it holds for
 * CLIPBOARD and PRIMARY (a refcounted blob each, plus one per INCR
 * transfer in flight, so a new write never frees bytes a transfer sends).
 *
 * Invariants: only the owner's thread uses its connection, its held data
 * and its transfers; a writer hands its blob over through o->cmd under
 * o->mu and waits for the answer (one command at a time). The selection is
 * taken with a real server timestamp (a zero-length property append on our
 * window), never CurrentTime, and a request stamped before it is refused
 * (ICCCM 2.2). Data that does not fit one plain request (XMaxRequestSize)
 * goes out INCR, in chunks of that size; a transfer without progress for
 * CLIP_ANSWER_MS is dropped, at most CLIP_XFERS run at once. An owner
 * whose X server went away marks itself dead and leaves; it is freed at
 * the next write (or at shutdown) once nobody uses it.
 *
 * Does not: read selections (clip_read.c), pick displays, or log.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <X11/Xatom.h>
#include <X11/Xutil.h>

#include "clip_int.h"
#include "core/log.h"
#include "xerr.h"

struct blob {
	int refs;               /* owner thread only, once handed over */
	size_t len;
	unsigned char data[];
};

struct held {
	struct blob *b;         /* NULL: nothing held */
	enum clip_kind kind;
	Time ts;                /* when we took the selection */
};

struct xfer {
	struct blob *b;         /* NULL: the slot is free */
	Window req;
	Atom prop, type;
	size_t off;
	int64_t last_us;
};

struct cmd {
	bool busy;              /* a writer owns the command slot */
	bool posted;            /* waiting for the thread */
	bool done;
	enum clip_sel sel;
	enum clip_kind kind;
	struct blob *b;         /* the thread takes it (NULL then) */
	int rc;
	struct derr e;
};

struct owner {
	char name[16];
	int64_t gen;
	int refs;               /* under reg: the list's and each user's */
	Display *d;
	Window win;
	Atom a[CA_COUNT];
	size_t chunk;           /* the most one plain ChangeProperty carries */
	pthread_t th;
	int wake[2];
	pthread_mutex_t mu;     /* stop, dead, cmd, owned */
	pthread_cond_t cv;
	bool stop, dead;
	bool owned[2];          /* mirror of held[i].b != NULL, for clip_holds */
	struct cmd cmd;
	struct held held[2];    /* owner thread */
	struct xfer xf[CLIP_XFERS];
	struct owner *next;     /* under reg */
};

static pthread_mutex_t reg = PTHREAD_MUTEX_INITIALIZER;
static struct owner *owners;

static const char *const atom_names[CA_COUNT] = {
	[CA_CLIPBOARD] = "CLIPBOARD", [CA_TARGETS] = "TARGETS", [CA_TIMESTAMP] = "TIMESTAMP",
	[CA_MULTIPLE] = "MULTIPLE", [CA_UTF8] = "UTF8_STRING", [CA_TEXT] = "TEXT",
	[CA_INCR] = "INCR", [CA_PNG] = "image/png", [CA_PLAIN_UTF8] = "text/plain;charset=utf-8",
	[CA_PROP] = "DETM_CLIP", [CA_STAMP] = "DETM_CLIP_STAMP",
};

int
clip_sel_parse(const char *s, enum clip_sel *sel)
{
	if (s == NULL || strcasecmp(s, "clipboard") == 0)
		*sel = CLIP_CLIPBOARD;
	else if (strcasecmp(s, "primary") == 0)
		*sel = CLIP_PRIMARY;
	else
		return -1;
	return 0;
}

const char *
clip_sel_name(enum clip_sel sel)
{
	return sel == CLIP_PRIMARY ? "PRIMARY" : "CLIPBOARD";
}

int
clip_atoms(Display *d, Atom a[CA_COUNT])
{
	return XInternAtoms(d, (char **)(uintptr_t)atom_names, CA_COUNT, False, a) != 0 ? 0 : -1;
}

Atom
clip_sel_atom(const Atom a[CA_COUNT], enum clip_sel sel)
{
	return sel == CLIP_PRIMARY ? XA_PRIMARY : a[CA_CLIPBOARD];
}

/* ---- blobs ---- */

static struct blob *
blob_new(const unsigned char *p, size_t n)
{
	struct blob *b = xmalloc(sizeof *b + n + 1);

	b->refs = 1;
	b->len = n;
	if (n > 0)
		memcpy(b->data, p, n);
	b->data[n] = '\0';
	return b;
}

static struct blob *
blob_ref(struct blob *b)
{
	b->refs++;
	return b;
}

static void
blob_unref(struct blob *b)
{
	if (b != NULL && --b->refs == 0)
		free(b);
}

/* UTF-8 text as ICCCM's STRING (ISO Latin-1): a character beyond U+00FF
 * becomes '?'. */
static struct blob *
blob_latin1(const struct blob *u)
{
	struct blob *b = blob_new(u->data, u->len);   /* the same size or less */
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
	const struct owner *o = (const struct owner *)(void *)arg;

	(void)d;
	return ev->type == PropertyNotify && ev->xproperty.window == o->win &&
	    ev->xproperty.atom == o->a[CA_STAMP];
}

/* The server's time now: append nothing to a property of our window and
 * read the time off its PropertyNotify (ICCCM 2.1). Other events stay
 * queued for the loop. */
static int
server_time(struct owner *o, Time *ts, struct derr *e)
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
held_drop(struct owner *o, enum clip_sel sel)
{
	blob_unref(o->held[sel].b);
	o->held[sel].b = NULL;
	pthread_mutex_lock(&o->mu);
	o->owned[sel] = false;
	pthread_mutex_unlock(&o->mu);
}

/* Takes the selection for the command's blob (owner thread). */
static int
do_set(struct owner *o, enum clip_sel sel, enum clip_kind kind, struct blob *b, struct derr *e)
{
	Atom s = clip_sel_atom(o->a, sel);
	Window now;
	Time ts = CurrentTime;

	if (server_time(o, &ts, e) != 0) {
		blob_unref(b);
		return -1;
	}
	XSetSelectionOwner(o->d, s, o->win, ts);
	now = XGetSelectionOwner(o->d, s);
	if (xerr_io_dead(o->d) || now != o->win) {
		blob_unref(b);
		return derr_set(e, DERR_UNAVAILABLE, NULL, "display %s: the X server did not make "
		    "detmd the owner of %s", o->name, clip_sel_name(sel));
	}
	blob_unref(o->held[sel].b);
	o->held[sel] = (struct held){ b, kind, ts };
	pthread_mutex_lock(&o->mu);
	o->owned[sel] = true;
	pthread_mutex_unlock(&o->mu);
	log_debug("clipboard: detmd owns %s on %s (%zu bytes of %s)", clip_sel_name(sel), o->name,
	    b->len, kind == CLIP_PNG ? "PNG" : "text");
	return 0;
}

static void
on_clear(struct owner *o, const XSelectionClearEvent *ev)
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
send_data(struct owner *o, Window req, Atom prop, Atom type, struct blob *b)
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
	o->xf[i] = (struct xfer){ blob_ref(b), req, prop, type, 0, mono_us() };
	XSelectInput(o->d, req, PropertyChangeMask);
	XChangeProperty(o->d, req, prop, o->a[CA_INCR], 32, PropModeReplace,
	    (const unsigned char *)&size, 1);
	return 0;
}

/* What a request for target gets from h; 0 served, -1 refused. */
static int
serve(struct owner *o, const struct held *h, Window req, Atom prop, Atom target)
{
	const Atom *a = o->a;
	struct blob *b;
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
	blob_unref(b);
	return rc;
}

static void
on_request(struct owner *o, const XSelectionRequestEvent *rq)
{
	XEvent ne;
	const struct held *h = NULL;
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
xfer_end(struct owner *o, struct xfer *x)
{
	Window req = x->req;

	blob_unref(x->b);
	x->b = NULL;
	for (size_t i = 0; i < CLIP_XFERS; i++)
		if (o->xf[i].b != NULL && o->xf[i].req == req)
			return;
	XSelectInput(o->d, req, NoEventMask);
}

/* The requestor took a chunk (deleted the property): the next one, or the
 * zero-length end. */
static void
on_property(struct owner *o, const XPropertyEvent *ev)
{
	if (ev->state != PropertyDelete || ev->window == o->win)
		return;
	for (size_t i = 0; i < CLIP_XFERS; i++) {
		struct xfer *x = &o->xf[i];
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
xfers_expire(struct owner *o)
{
	int64_t now = mono_us(), next = -1;

	for (size_t i = 0; i < CLIP_XFERS; i++) {
		struct xfer *x = &o->xf[i];
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
run_cmd(struct owner *o)
{
	struct derr e;
	struct blob *b;
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
dispatch(struct owner *o, XEvent *ev)
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

static void *
owner_main(void *arg)
{
	struct owner *o = arg;
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
	o->owned[0] = o->owned[1] = false;
	stopped = o->stop;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	if (!stopped)
		log_info("clipboard: the X server of %s went away; detmd's selections there ended",
		    o->name);
	return NULL;
}

/* ---- owners ---- */

static void
owner_wake(struct owner *o)
{
	ssize_t n = write(o->wake[1], "x", 1);

	(void)n;        /* a full pipe already wakes it */
}

/* The last reference: the thread is stopped and joined (it closed its
 * connection), memory freed. */
static void
owner_destroy(struct owner *o)
{
	pthread_mutex_lock(&o->mu);
	o->stop = true;
	pthread_mutex_unlock(&o->mu);
	owner_wake(o);
	pthread_join(o->th, NULL);
	for (int s = 0; s < 2; s++)
		blob_unref(o->held[s].b);
	for (size_t i = 0; i < CLIP_XFERS; i++)
		blob_unref(o->xf[i].b);
	blob_unref(o->cmd.b);
	display_close_extra(o->d);
	close(o->wake[0]);
	close(o->wake[1]);
	pthread_cond_destroy(&o->cv);
	pthread_mutex_destroy(&o->mu);
	free(o);
}

static void
owner_put(struct owner *o)
{
	bool last;

	if (o == NULL)
		return;
	pthread_mutex_lock(&reg);
	last = --o->refs == 0;
	pthread_mutex_unlock(&reg);
	if (last)
		owner_destroy(o);
}

/* A new owner on l's display, its thread running; NULL with e. */
static struct owner *
owner_new(const struct display_lease *l, struct derr *e)
{
	struct owner *o = xcalloc(1, sizeof *o);
	XTextProperty tp;
	char *title = (char *)(uintptr_t)"detm clipboard";

	o->refs = 1;
	snprintf(o->name, sizeof o->name, "%s", l->name);
	o->wake[0] = o->wake[1] = -1;
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->cv, NULL);
	o->gen = display_lease_gen(l);
	o->d = display_open_extra(l);
	if (o->d == NULL || clip_atoms(o->d, o->a) != 0 || pipe2(o->wake, O_CLOEXEC | O_NONBLOCK) != 0)
		goto fail;
	o->chunk = (size_t)XMaxRequestSize(o->d) * 4 - 256;
	if (o->chunk > 256 * 1024)
		o->chunk = 256 * 1024;
	o->win = XCreateSimpleWindow(o->d, DefaultRootWindow(o->d), -10, -10, 1, 1, 0, 0, 0);
	XSelectInput(o->d, o->win, PropertyChangeMask);
	if (XStringListToTextProperty(&title, 1, &tp) != 0) {
		XSetWMName(o->d, o->win, &tp);
		XFree(tp.value);
	}
	XSync(o->d, False);
	if (xerr_io_dead(o->d) || pthread_create(&o->th, NULL, owner_main, o) != 0)
		goto fail;
	return o;
fail:
	derr_set(e, DERR_UNAVAILABLE, "display", "display %s: cannot set up detmd's clipboard "
	    "owner (no connection to the X server)", l->name);
	display_close_extra(o->d);
	if (o->wake[0] >= 0) {
		close(o->wake[0]);
		close(o->wake[1]);
	}
	pthread_cond_destroy(&o->cv);
	pthread_mutex_destroy(&o->mu);
	free(o);
	return NULL;
}

/* reg held: unlinks dead owners (and those of an older display of the
 * same name) onto *gone, which the caller puts outside reg. */
static void
sweep_locked(const char *name, int64_t gen, struct owner **gone)
{
	struct owner **pp = &owners;

	while (*pp != NULL) {
		struct owner *o = *pp;
		bool dead;

		pthread_mutex_lock(&o->mu);
		dead = o->dead;
		pthread_mutex_unlock(&o->mu);
		if (dead || (strcmp(o->name, name) == 0 && o->gen != gen)) {
			*pp = o->next;
			o->next = *gone;
			*gone = o;
		} else {
			pp = &o->next;
		}
	}
}

/* reg held: the live owner of name/gen, or NULL. */
static struct owner *
find_locked(const char *name, int64_t gen)
{
	for (struct owner *o = owners; o != NULL; o = o->next)
		if (strcmp(o->name, name) == 0 && o->gen == gen)
			return o;
	return NULL;
}

/* The owner of l's display, made if there is none (a reference the caller
 * puts). NULL with e. */
static struct owner *
owner_get(const struct display_lease *l, int64_t gen, struct derr *e)
{
	struct owner *o, *gone = NULL, *made = NULL;

	for (;;) {
		pthread_mutex_lock(&reg);
		sweep_locked(l->name, gen, &gone);
		o = find_locked(l->name, gen);
		if (o == NULL && made != NULL) {
			made->next = owners;
			owners = made;      /* the list's reference */
			o = made;
			made = NULL;
		}
		if (o != NULL)
			o->refs++;
		pthread_mutex_unlock(&reg);
		while (gone != NULL) {
			struct owner *g = gone;

			gone = g->next;
			owner_put(g);
		}
		if (o != NULL || (made = owner_new(l, e)) == NULL)
			break;
	}
	owner_put(made);        /* another thread's came first */
	return o;
}

int
clip_write(const struct display_lease *l, enum clip_sel sel, enum clip_kind kind,
    const unsigned char *data, size_t len, struct derr *e)
{
	struct owner *o;
	int rc = -1;

	if (len > CLIP_MAX_BYTES)
		return derr_set(e, DERR_TOO_LARGE, kind == CLIP_PNG ? "image_base64" : "text",
		    "the clipboard holds at most %d bytes (got %zu)", CLIP_MAX_BYTES, len);
	/* By the display's generation too: an owner of a display gone and
	 * replaced under the same name is never reused. */
	if ((o = owner_get(l, display_lease_gen(l), e)) == NULL)
		return -1;
	pthread_mutex_lock(&o->mu);
	while (o->cmd.busy && !o->dead)
		pthread_cond_wait(&o->cv, &o->mu);
	if (!o->dead) {
		o->cmd = (struct cmd){ .busy = true, .posted = true, .sel = sel, .kind = kind,
		    .b = blob_new(data, len) };
		owner_wake(o);
		while (!o->cmd.done && !o->dead)
			pthread_cond_wait(&o->cv, &o->mu);
	}
	if (o->cmd.busy && o->cmd.done) {
		rc = o->cmd.rc;
		*e = o->cmd.e;
	} else {
		derr_set(e, DERR_UNAVAILABLE, "display", "display %s: the X server went away", l->name);
	}
	if (o->cmd.busy) {
		blob_unref(o->cmd.b);   /* not taken: the thread left first */
		o->cmd = (struct cmd){ 0 };
	}
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	owner_put(o);
	return rc;
}

bool
clip_holds(const struct display_lease *l, enum clip_sel sel)
{
	struct owner *o;
	bool r = false;

	pthread_mutex_lock(&reg);
	o = find_locked(l->name, display_lease_gen(l));
	if (o != NULL) {
		pthread_mutex_lock(&o->mu);
		r = !o->dead && o->owned[sel];
		pthread_mutex_unlock(&o->mu);
	}
	pthread_mutex_unlock(&reg);
	return r;
}

unsigned long
clip_owner_window(const char *name, int64_t gen)
{
	unsigned long w = 0;
	struct owner *o;

	pthread_mutex_lock(&reg);
	o = find_locked(name, gen);
	if (o != NULL) {
		pthread_mutex_lock(&o->mu);
		w = o->dead ? 0 : o->win;
		pthread_mutex_unlock(&o->mu);
	}
	pthread_mutex_unlock(&reg);
	return w;
}

void
clip_shutdown(void)
{
	struct owner *list;

	pthread_mutex_lock(&reg);
	list = owners;
	owners = NULL;
	pthread_mutex_unlock(&reg);
	while (list != NULL) {
		struct owner *o = list;

		list = o->next;
		pthread_mutex_lock(&o->mu);
		o->stop = true;
		pthread_cond_broadcast(&o->cv);
		pthread_mutex_unlock(&o->mu);
		owner_wake(o);
		owner_put(o);
	}
}
