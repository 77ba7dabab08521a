/*
 * xinput_int.h - what the files of xinput share (not for other modules;
 * xinput.h is the contract): the caps on what a client controls, and the
 * keyboard map of one call (struct keymap) with the functions of
 * xinput_keymap.c that xinput_keys.c types through.
 *
 * A struct keymap lives for one call on the caller's Display (held
 * exclusively): xkm_load reads the server's map and the display's kept
 * bindings, xkm_done keeps the pool's bindings for later calls and frees
 * it (xinput_idle and xinput_forget put them back as they were). Between
 * the two, nothing but the calling thread touches it.
 */
#ifndef DETM_XINPUT_INT_H
#define DETM_XINPUT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <X11/Xlib.h>

#include "derr.h"

#define TYPE_MAX_BYTES   (64 * 1024)   /* xinput_type text */
#define TYPE_CHUNK       50            /* characters between XSyncs */
#define KEYS_MAX_BYTES   1024          /* xinput_keys combo */
#define KEYS_MAX_CHORDS  64
#define CHORD_MAX_KEYS   8             /* names in one chord */
#define CHORD_MAX_PRESS  (CHORD_MAX_KEYS + 2)  /* plus implied Shift, Level3 */
#define KEY_NAME_MAX     64
#define POOL_MAX         256           /* spare keycodes (all of them) */
#define CACHE_MAX        256           /* displays with kept bindings */
#define QUIET_MS         500           /* a binding's last use, before rebinding it */
#define CLICK_MAX        3
#define BUTTON_MAX       9             /* 8 back, 9 forward */
#define SCROLL_MAX       100
#define DRAG_STEPS       10
#define DRAG_STEP_MS     5

/* What a keycode needs held to produce a keysym. */
#define NEED_SHIFT  1u
#define NEED_LEVEL3 2u

struct kcache;

/* One call's view of the keyboard map plus its spare-keycode pool. */
struct keymap {
	Display *d;
	struct kcache *cache;           /* the display's kept bindings */
	int min, max, per;
	KeySym *syms;                   /* XGetKeyboardMapping, pool blanked; XFree */
	KeySym *orig;                   /* the same, kept bindings as they were before; free */
	KeyCode shift, level3;          /* 0 when the map has none */
	int npool;                      /* pool[0..nowned) came bound from the cache */
	int nowned;
	KeyCode pool[POOL_MAX];         /* spare keycodes (each in two slots), */
	int lvl[POOL_MAX];              /* at level 0 (alone) or 1 (NEED_SHIFT) */
	KeySym bound[POOL_MAX];         /* what each is bound to (NoSymbol: free) */
	int64_t used[POOL_MAX];         /* ms (monotonic) its last event reached the server */
	unsigned stamp[POOL_MAX];       /* batch that last planned to use it */
	bool dirty[POOL_MAX];           /* bound[] not yet sent */
};

KeySym xkm_at(const struct keymap *km, int kc, int col);
KeyCode xkm_find_col0(const struct keymap *km, KeySym sym);
/* Reads the map, finds Shift and Level3, and builds the pool: the keycodes
 * the cache holds that still carry their binding (blanked in km->syms, so
 * map_find never returns them), every keycode with no symbol at all, then
 * the keycodes with vendor keysyms only (borrowed, blanked too).
 * Bindings someone else changed since are dropped from the cache. */
int xkm_load(Display *d, struct keymap *km, struct derr *e);
/* The keycode that types sym from the map (outside the pool), and what
 * must be held with it. */
bool xkm_find(const struct keymap *km, KeySym sym, KeyCode *kc, unsigned *need);
int xkm_pool_find(const struct keymap *km, KeySym sym);
/* What slot s needs held: NEED_SHIFT at level 1. */
unsigned xkm_pool_need(const struct keymap *km, int slot);
/* Binds sym to a pool keycode not used by batch `stamp`: a free one, else
 * the least recently used binding, if its last key event reached the server
 * QUIET_MS ago or more. Returns the slot, or -1 with *wait_ms > 0 (retry
 * after that long) or 0 (every keycode is in this batch). */
int xkm_pool_take(struct keymap *km, KeySym sym, unsigned stamp, int *wait_ms);
/* Marks the slots of batch `stamp` used now: call once its key events
 * reached the server (after an XSync). */
void xkm_pool_used(struct keymap *km, unsigned stamp);
/* Sends the pending bindings: a keycode's level 0 keysym alone and its
 * level 1 one with Shift (one keysym in both while only one is bound). Inside the caller's error
 * bracket; the key events that follow on this connection are processed
 * after it, and every client gets its MappingNotify before them. */
void xkm_pool_write(struct keymap *km);
/* Keeps the pool's bindings in the display's cache (nothing is restored
 * here: see xinput_idle) and frees the map. */
void xkm_done(struct keymap *km);
/* Presses kc with what it needs held, releases in reverse. */
void xkm_tap(const struct keymap *km, KeyCode kc, unsigned need);

#endif
