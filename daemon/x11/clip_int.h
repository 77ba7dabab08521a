/*
 * clip_int.h - what clip.c (the owner) and clip_read.c (the reader) share:
 * the atoms both use, interned in one round trip per connection, and the
 * owner's window for a reader that wants to know who answered.
 */
#ifndef DETM_CLIP_INT_H
#define DETM_CLIP_INT_H

#include <stdint.h>

#include <X11/Xlib.h>

#include "clip.h"

enum clip_atom {
	CA_CLIPBOARD, CA_TARGETS, CA_TIMESTAMP, CA_MULTIPLE, CA_UTF8, CA_TEXT, CA_INCR,
	CA_PNG, CA_PLAIN_UTF8, CA_PROP, CA_STAMP, CA_COUNT
};

/* Interns every atom of enum clip_atom on d (one round trip). 0, or -1. */
int clip_atoms(Display *d, Atom a[CA_COUNT]);
/* The selection's atom. */
Atom clip_sel_atom(const Atom a[CA_COUNT], enum clip_sel sel);
/* The window of detmd's owner on display name (of generation gen), or 0
 * when it has none running there. */
unsigned long clip_owner_window(const char *name, int64_t gen);

#endif
