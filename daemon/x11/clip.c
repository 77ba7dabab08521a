/*
 * clip.c - detmd as the owner of a display's selections (clip.h): the
 * owners' registry and the writers' side. One owner per display that was
 * written to, each with its own Xlib connection (display_open_extra), an
 * unmapped 1x1 window and a thread (clip_serve.c) that answers the X
 * server's selection events.
 *
 * Invariants: owners are listed under reg, by display name and generation
 * (display_lease_gen), so an owner of a display gone and replaced under
 * the same name is never reused; each is refcounted (the list's reference
 * and each user's) and freed, its thread joined, by the last one. A writer
 * hands its blob to the thread through o->cmd under o->mu and waits for
 * the answer (one command at a time). An owner whose X server went away
 * marks itself dead and leaves; it is unlisted at the next write (or at
 * shutdown) and freed once nobody uses it.
 *
 * Not here: the owner's thread (clip_serve.c), reading (clip_read.c).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <X11/Xatom.h>
#include <X11/Xutil.h>

#include "clip_int.h"
#include "core/log.h"
#include "xerr.h"

static pthread_mutex_t reg = PTHREAD_MUTEX_INITIALIZER;
static struct clip_owner *owners;

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

/* ---- owners ---- */

static void
owner_wake(struct clip_owner *o)
{
	ssize_t n = write(o->wake[1], "x", 1);

	(void)n;        /* a full pipe already wakes it */
}

/* The last reference: the thread is stopped and joined (it closed its
 * connection), memory freed. */
static void
owner_destroy(struct clip_owner *o)
{
	pthread_mutex_lock(&o->mu);
	o->stop = true;
	pthread_mutex_unlock(&o->mu);
	owner_wake(o);
	pthread_join(o->th, NULL);
	for (int s = 0; s < 2; s++)
		clip_blob_unref(o->held[s].b);
	for (size_t i = 0; i < CLIP_XFERS; i++)
		clip_blob_unref(o->xf[i].b);
	clip_blob_unref(o->cmd.b);
	display_close_extra(o->d);
	close(o->wake[0]);
	close(o->wake[1]);
	pthread_cond_destroy(&o->cv);
	pthread_mutex_destroy(&o->mu);
	free(o);
}

static void
owner_put(struct clip_owner *o)
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
static struct clip_owner *
owner_new(const struct display_lease *l, struct derr *e)
{
	struct clip_owner *o = xcalloc(1, sizeof *o);
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
	if (xerr_io_dead(o->d) || pthread_create(&o->th, NULL, clip_owner_main, o) != 0)
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
sweep_locked(const char *name, int64_t gen, struct clip_owner **gone)
{
	struct clip_owner **pp = &owners;

	while (*pp != NULL) {
		struct clip_owner *o = *pp;
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
static struct clip_owner *
find_locked(const char *name, int64_t gen)
{
	for (struct clip_owner *o = owners; o != NULL; o = o->next)
		if (strcmp(o->name, name) == 0 && o->gen == gen)
			return o;
	return NULL;
}

/* The owner of l's display, made if there is none (a reference the caller
 * puts). NULL with e. */
static struct clip_owner *
owner_get(const struct display_lease *l, int64_t gen, struct derr *e)
{
	struct clip_owner *o, *gone = NULL, *made = NULL;

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
			struct clip_owner *g = gone;

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
	struct clip_owner *o;
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
		o->cmd = (struct clip_cmd){ .busy = true, .posted = true, .sel = sel, .kind = kind,
		    .b = clip_blob_new(data, len) };
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
		clip_blob_unref(o->cmd.b);   /* not taken: the thread left first */
		o->cmd = (struct clip_cmd){ 0 };
	}
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	owner_put(o);
	return rc;
}

unsigned long
clip_owner_window(const char *name, int64_t gen)
{
	unsigned long w = 0;
	struct clip_owner *o;

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
	struct clip_owner *list;

	pthread_mutex_lock(&reg);
	list = owners;
	owners = NULL;
	pthread_mutex_unlock(&reg);
	while (list != NULL) {
		struct clip_owner *o = list;

		list = o->next;
		pthread_mutex_lock(&o->mu);
		o->stop = true;
		pthread_cond_broadcast(&o->cv);
		pthread_mutex_unlock(&o->mu);
		owner_wake(o);
		owner_put(o);
	}
}
