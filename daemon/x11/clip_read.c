/*
 * clip_read.c - reading a display's selection (clip.h): the ICCCM
 * requestor's side, on a connection and a window of the call's own.
 *
 * One read: who owns the selection (none: empty, no error), its TARGETS,
 * the target chosen from them, ConvertSelection into our window's
 * DETM_CLIP property, SelectionNotify awaited with CLIP_ANSWER_MS, then
 * the property read and deleted; an INCR answer is followed chunk by
 * chunk (each PropertyNotify NewValue read and deleted, each within
 * CLIP_ANSWER_MS) until the empty chunk, and stops at CLIP_MAX_BYTES.
 * The whole read stops at CLIP_READ_MS.
 *
 * Invariants: nothing here blocks without a deadline but the server's own
 * round trips (GetSelectionOwner, GetProperty, InternAtoms) on a side
 * worker; PropertyNotify events left from an earlier step are dropped
 * before each conversion, so a stale one is never taken for a chunk. Text
 * comes back valid UTF-8 (STRING is converted from Latin-1; anything else
 * repaired).
 *
 * Does not: hold selections (clip.c).
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <X11/Xatom.h>

#include "clip_int.h"
#include "core/buf.h"
#include "utf8.h"
#include "xerr.h"

#define MAX_TARGETS 256

struct rd {
	Display *d;
	Window win;
	Atom a[CA_COUNT];
	Atom sel;
	const char *what;       /* "CLIPBOARD" */
	int64_t end_us;         /* the whole read's deadline */
};

struct got {
	Atom type;
	int format;
	unsigned char *p;       /* XFree */
	unsigned long n;        /* items */
};

static Bool
is_notify(Display *d, XEvent *ev, XPointer arg)
{
	const struct rd *r = (const struct rd *)(void *)arg;

	(void)d;
	return ev->type == SelectionNotify && ev->xselection.requestor == r->win;
}

static Bool
is_new_value(Display *d, XEvent *ev, XPointer arg)
{
	const struct rd *r = (const struct rd *)(void *)arg;

	(void)d;
	return ev->type == PropertyNotify && ev->xproperty.window == r->win &&
	    ev->xproperty.atom == r->a[CA_PROP] && ev->xproperty.state == PropertyNewValue;
}

static Bool
is_ours(Display *d, XEvent *ev, XPointer arg)
{
	const struct rd *r = (const struct rd *)(void *)arg;

	(void)d;
	return ev->type == PropertyNotify && ev->xproperty.window == r->win;
}

/* The next event pred accepts, within ms (and the read's deadline). */
static int
rd_wait(struct rd *r, Bool (*pred)(Display *, XEvent *, XPointer), XEvent *ev, struct derr *e)
{
	int64_t end = mono_us() + (int64_t)CLIP_ANSWER_MS * 1000;
	struct pollfd p = { .fd = ConnectionNumber(r->d), .events = POLLIN };

	if (end > r->end_us)
		end = r->end_us;
	while (!XCheckIfEvent(r->d, ev, pred, (XPointer)(void *)r)) {
		int64_t left = end - mono_us();

		if (xerr_io_dead(r->d))
			return derr_set(e, DERR_UNAVAILABLE, NULL, "reading %s: the X server is gone",
			    r->what);
		if (left <= 0)
			return derr_set(e, DERR_UNAVAILABLE, NULL, "the owner of %s did not answer "
			    "within %d ms", r->what, end == r->end_us ? CLIP_READ_MS : CLIP_ANSWER_MS);
		(void)poll(&p, 1, (int)((left + 999) / 1000));
	}
	return 0;
}

/* Reads and deletes our property. */
static int
rd_prop(struct rd *r, struct got *g, struct derr *e)
{
	unsigned long after = 0;

	g->p = NULL;
	if (XGetWindowProperty(r->d, r->win, r->a[CA_PROP], 0, CLIP_MAX_BYTES / 4 + 1, True,
	    AnyPropertyType, &g->type, &g->format, &g->n, &after, &g->p) != Success ||
	    xerr_io_dead(r->d))
		return derr_set(e, DERR_UNAVAILABLE, NULL, "reading %s: the X server did not give "
		    "the property", r->what);
	if (after > 0) {
		XFree(g->p);
		g->p = NULL;
		return derr_set(e, DERR_TOO_LARGE, NULL, "%s holds more than %d bytes", r->what,
		    CLIP_MAX_BYTES);
	}
	return 0;
}

/* Bytes of an 8-bit property (other formats are not data we take). */
static size_t
got_bytes(const struct got *g)
{
	return g->format == 8 ? g->n : 0;
}

/* The rest of an INCR answer into b. */
static int
rd_incr(struct rd *r, struct buf *b, Atom *type, struct derr *e)
{
	for (;;) {
		struct got g;
		XEvent ev;
		int rc;

		if (rd_wait(r, is_new_value, &ev, e) != 0 || rd_prop(r, &g, e) != 0)
			return -1;
		*type = g.type;
		rc = got_bytes(&g) == 0 ? 1 : buf_append(b, g.p, got_bytes(&g));
		XFree(g.p);
		if (rc == 1)
			return 0;       /* the empty chunk: done */
		if (rc != 0)
			return derr_set(e, DERR_TOO_LARGE, NULL, "%s holds more than %d bytes", r->what,
			    CLIP_MAX_BYTES);
	}
}

/* Converts the selection to target. 0 with the bytes in b (and *type, *incr),
 * 1 when the owner refused that target, -1 with e. */
static int
rd_convert(struct rd *r, Atom target, struct buf *b, Atom *type, bool *incr, struct derr *e)
{
	struct got g;
	XEvent ev;
	int rc = 0;

	while (XCheckIfEvent(r->d, &ev, is_ours, (XPointer)(void *)r))
		;               /* stale PropertyNotify from an earlier step */
	XConvertSelection(r->d, r->sel, target, r->a[CA_PROP], r->win, CurrentTime);
	if (rd_wait(r, is_notify, &ev, e) != 0)
		return -1;
	if (ev.xselection.property == None)
		return 1;
	while (XCheckIfEvent(r->d, &ev, is_ours, (XPointer)(void *)r))
		;               /* the owner's write of the property itself */
	if (rd_prop(r, &g, e) != 0)
		return -1;
	*type = g.type;
	*incr = g.type == r->a[CA_INCR];
	if (!*incr && buf_append(b, g.p, got_bytes(&g)) != 0)
		rc = derr_set(e, DERR_TOO_LARGE, NULL, "%s holds more than %d bytes", r->what,
		    CLIP_MAX_BYTES);
	XFree(g.p);
	if (rc == 0 && *incr)
		rc = rd_incr(r, b, type, e);    /* deleting the INCR property started it */
	return rc;
}

/* The owner's TARGETS: atoms in t (*n 0 when it refuses to list them)
 * and their names (*names, or NULL). -1 with e when it does not answer. */
static int
rd_targets(struct rd *r, Atom *t, int *n, json_object **names, struct derr *e)
{
	char *nm[MAX_TARGETS];
	const long *v;
	struct got g;
	XEvent ev;

	*n = 0;
	*names = NULL;
	while (XCheckIfEvent(r->d, &ev, is_ours, (XPointer)(void *)r))
		;
	XConvertSelection(r->d, r->sel, r->a[CA_TARGETS], r->a[CA_PROP], r->win, CurrentTime);
	if (rd_wait(r, is_notify, &ev, e) != 0)
		return -1;
	if (ev.xselection.property == None || rd_prop(r, &g, e) != 0)
		return 0;       /* no list: conversions are tried blind */
	/* 32-bit items: Xlib hands them over as longs. */
	v = (const long *)(const void *)g.p;
	for (unsigned long i = 0; g.format == 32 && i < g.n && *n < MAX_TARGETS; i++)
		t[(*n)++] = (Atom)v[i];
	XFree(g.p);
	xerr_begin();
	if (*n > 0 && XGetAtomNames(r->d, t, *n, nm) != 0) {
		*names = json_object_new_array();
		for (int i = 0; i < *n; i++) {
			json_object_array_add(*names, json_object_new_string(nm[i]));
			XFree(nm[i]);
		}
	}
	return 0;
}

struct cand {
	Atom atom;
	enum clip_kind kind;
};

/* The targets to try, best first, for want: those the owner lists, or
 * all of them when it lists none. Returns how many. */
static int
candidates(const struct rd *r, const Atom *t, int n, enum clip_want want, struct cand c[5])
{
	const struct cand all[] = {
		{ r->a[CA_UTF8], CLIP_TEXT }, { r->a[CA_PLAIN_UTF8], CLIP_TEXT },
		{ XA_STRING, CLIP_TEXT }, { r->a[CA_TEXT], CLIP_TEXT }, { r->a[CA_PNG], CLIP_PNG },
	};
	int k = 0;

	for (size_t i = 0; i < ARRAY_LEN(all); i++) {
		bool listed = n == 0;

		if ((want == CLIP_WANT_TEXT && all[i].kind != CLIP_TEXT) ||
		    (want == CLIP_WANT_IMAGE && all[i].kind != CLIP_PNG))
			continue;
		for (int j = 0; j < n && !listed; j++)
			listed = t[j] == all[i].atom;
		/* Blind, TEXT may come as COMPOUND_TEXT: not worth a try. */
		if (listed && !(n == 0 && all[i].atom == r->a[CA_TEXT]))
			c[k++] = all[i];
	}
	return k;
}

/* b's bytes as out's data: text made valid UTF-8 (STRING is Latin-1). */
static void
take(struct clip_data *out, struct buf *b, enum clip_kind kind, Atom type)
{
	out->kind = kind;
	if (kind == CLIP_TEXT && type == XA_STRING) {
		unsigned char *u = xmalloc(b->len * 2 + 1);
		size_t o = 0;

		for (size_t i = 0; i < b->len; i++) {
			unsigned char c = (unsigned char)b->data[i];

			if (c < 0x80) {
				u[o++] = c;
			} else {
				u[o++] = (unsigned char)(0xc0 | c >> 6);
				u[o++] = (unsigned char)(0x80 | (c & 0x3f));
			}
		}
		u[o] = '\0';
		out->data = u;
		out->len = o;
	} else if (kind == CLIP_TEXT && !utf8_valid(b->data != NULL ? b->data : "", b->len)) {
		out->data = (unsigned char *)utf8_dup(b->data, b->len, &out->len);   /* repaired */
	} else {
		out->len = b->len;
		out->data = (unsigned char *)buf_take(b);
		if (out->data == NULL)
			out->data = (unsigned char *)xstrdup("");
	}
}

/* What was listed, for a message: "image/png, TARGETS" (cut to fit). */
static void
listed(const json_object *names, char *out, size_t cap)
{
	size_t o = 0;

	snprintf(out, cap, "nothing it lists");
	for (size_t i = 0; names != NULL && i < json_object_array_length(names) && o + 4 < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? ", " : "",
		    json_object_get_string(json_object_array_get_idx(names, i)));
}

/* The read proper, the owner known and our window made. */
static int
rd_run(struct rd *r, enum clip_want want, struct clip_data *out, struct derr *e)
{
	Atom t[MAX_TARGETS], type = None;
	struct cand c[5];
	char offers[400];
	int n, k, rc = 1;

	if (rd_targets(r, t, &n, &out->targets, e) != 0)
		return -1;
	k = candidates(r, t, n, want, c);
	for (int i = 0; i < k && rc == 1; i++) {
		struct buf b;
		bool incr = false;

		buf_init(&b, CLIP_MAX_BYTES);
		rc = rd_convert(r, c[i].atom, &b, &type, &incr, e);
		if (rc == 0) {
			take(out, &b, c[i].kind, type);
			out->incr = incr;
			snprintf(out->target, sizeof out->target, "%s",
			    c[i].atom == XA_STRING ? "STRING" : c[i].atom == r->a[CA_UTF8] ? "UTF8_STRING" :
			    c[i].atom == r->a[CA_TEXT] ? "TEXT" : c[i].atom == r->a[CA_PNG] ? "image/png" :
			    "text/plain;charset=utf-8");
		}
		buf_free(&b);
	}
	if (rc != 1)
		return rc;
	listed(out->targets, offers, sizeof offers);
	return derr_set(e, DERR_NOT_FOUND, "format", "%s holds no %s that detmd reads (its owner "
	    "offers %s)", r->what, want == CLIP_WANT_TEXT ? "text" : want == CLIP_WANT_IMAGE ?
	    "PNG image" : "text or PNG image", offers);
}

int
clip_read(const struct display_lease *l, enum clip_sel sel, enum clip_want want,
    struct clip_data *out, struct derr *e)
{
	struct rd r = { .what = clip_sel_name(sel), .end_us = mono_us() + (int64_t)CLIP_READ_MS * 1000 };
	Window owner;
	int rc = -1;

	memset(out, 0, sizeof *out);
	r.d = display_open_extra(l);
	if (r.d == NULL || clip_atoms(r.d, r.a) != 0) {
		derr_set(e, DERR_UNAVAILABLE, "display", "display %s is not reachable", l->name);
		goto out;
	}
	r.sel = clip_sel_atom(r.a, sel);
	owner = XGetSelectionOwner(r.d, r.sel);
	if (owner == None) {
		out->kind = CLIP_NONE;          /* empty: nobody owns it */
		rc = 0;
		goto out;
	}
	out->owner = owner;
	out->ours = owner == clip_owner_window(l->name, display_lease_gen(l));
	r.win = XCreateSimpleWindow(r.d, DefaultRootWindow(r.d), -10, -10, 1, 1, 0, 0, 0);
	XSelectInput(r.d, r.win, PropertyChangeMask);
	rc = rd_run(&r, want, out, e);
out:
	if (r.d != NULL && r.win != None && !xerr_io_dead(r.d))
		XDestroyWindow(r.d, r.win);
	display_close_extra(r.d);
	return rc;
}

void
clip_data_free(struct clip_data *c)
{
	if (c == NULL)
		return;
	free(c->data);
	json_object_put(c->targets);
	memset(c, 0, sizeof *c);
}
