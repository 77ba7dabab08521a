/*
 * clip_int.h - what the clipboard's files share (private to daemon/x11/):
 * the atoms all use, interned in one round trip per connection; an
 * owner's state, shared by the registry and the writers (clip.c) and the
 * owner's thread (clip_serve.c) under the rules each field names; and the
 * owner's window, for a reader (clip_read.c) that wants to know who
 * answered.
 */
#ifndef DETM_CLIP_INT_H
#define DETM_CLIP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <X11/Xlib.h>

#include "clip.h"

enum clip_atom {
	CA_CLIPBOARD, CA_TARGETS, CA_TIMESTAMP, CA_MULTIPLE, CA_UTF8, CA_TEXT, CA_INCR,
	CA_PNG, CA_PLAIN_UTF8, CA_PROP, CA_STAMP, CA_COUNT
};

/* What an owner holds or sends: refcounted, touched only by the owner's
 * thread once handed over (a writer makes it with refs 1). */
struct clip_blob {
	int refs;               /* owner thread only, once handed over */
	size_t len;
	unsigned char data[];
};

struct clip_held {
	struct clip_blob *b;         /* NULL: nothing held */
	enum clip_kind kind;
	Time ts;                /* when we took the selection */
};

struct clip_xfer {
	struct clip_blob *b;         /* NULL: the slot is free */
	Window req;
	Atom prop, type;
	size_t off;
	int64_t last_us;
};

struct clip_cmd {
	bool busy;              /* a writer owns the command slot */
	bool posted;            /* waiting for the thread */
	bool done;
	enum clip_sel sel;
	enum clip_kind kind;
	struct clip_blob *b;         /* the thread takes it (NULL then) */
	int rc;
	struct derr e;
};

struct clip_owner {
	char name[16];
	int64_t gen;
	int refs;               /* under reg: the list's and each user's */
	Display *d;
	Window win;
	Atom a[CA_COUNT];
	size_t chunk;           /* the most one plain ChangeProperty carries */
	pthread_t th;
	int wake[2];
	pthread_mutex_t mu;     /* stop, dead, cmd */
	pthread_cond_t cv;
	bool stop, dead;
	struct clip_cmd cmd;
	struct clip_held held[2];    /* owner thread */
	struct clip_xfer xf[CLIP_XFERS];
	struct clip_owner *next;     /* under reg */
};

/* A blob of n bytes copied from p (refs 1; NUL after the bytes). */
struct clip_blob *clip_blob_new(const unsigned char *p, size_t n);
void clip_blob_unref(struct clip_blob *b);      /* NULL ok */
/* The owner's thread (clip_serve.c): answers its display's selection
 * events, runs posted commands, and at the end (o->stop, or the X server
 * gone) closes its connection itself and marks the owner dead. */
void *clip_owner_main(void *arg);

/* Interns every atom of enum clip_atom on d (one round trip). 0, or -1. */
int clip_atoms(Display *d, Atom a[CA_COUNT]);
/* The selection's atom. */
Atom clip_sel_atom(const Atom a[CA_COUNT], enum clip_sel sel);
/* The window of detmd's owner on display name (of generation gen), or 0
 * when it has none running there. */
unsigned long clip_owner_window(const char *name, int64_t gen);

#endif
