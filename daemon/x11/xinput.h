/*
 * xinput.h - synthetic keyboard and mouse input through XTest, in process.
 *
 * Every function works on one Display connection that the caller holds
 * exclusively (display.h's lease: one thread per connection at a time), and
 * XSyncs before it returns, so the server has processed the input when the
 * call returns. Errors come back as derr values (xerr.h); nothing exits.
 *
 * Coordinates are screen pixels of the display's default screen; callers
 * check bounds (display.h knows the size) but functions also refuse
 * off-screen points with DERR_INVALID field "x"/"y".
 *
 * Does not: scale image coordinates, log actions, or pick the display.
 */
#ifndef DETM_XINPUT_H
#define DETM_XINPUT_H

#include <stddef.h>

#include <X11/Xlib.h>

#include "core/util.h"
#include "derr.h"

/* Buttons: 1 left, 2 middle, 3 right (4-7 are the scroll buttons), 8 back,
 * 9 forward. */

/* Moves the pointer to (x, y). */
int xinput_move(Display *d, int x, int y, struct derr *e);
/* Moves the pointer to (x, y) at once, never humanised (a human's input). */
int xinput_move_now(Display *d, int x, int y, struct derr *e);
/* Clicks `button` `count` times (1 = click, 2 = double click) at the
 * current pointer position. On a display without a window manager, a press
 * also gives input focus to (and raises) the top-level window under the
 * pointer, as a click-to-focus window manager would. */
int xinput_click(Display *d, int button, int count, struct derr *e);
/* Before a press whose effect is watched: gives the focus to (and raises)
 * the top-level window under the pointer now, as the press itself would
 * (a window manager's click-to-focus, through _NET_ACTIVE_WINDOW; without
 * one, as xinput_click does), so the focus change and its redraw happen
 * before the watch's baseline, not after the press. 1 if it asked for the
 * focus to move, 0 if the focus is already there or nothing is under the
 * pointer, -1 with e when the server went silent or away. */
int xinput_focus_pointer(Display *d, struct derr *e);
/* Moves to (x, y) and clicks there, with one round trip less than
 * xinput_move + xinput_click. */
int xinput_click_at(Display *d, int x, int y, int button, int count, struct derr *e);
/* Presses (down != 0) or releases one button. */
int xinput_button(Display *d, int button, int down, struct derr *e);
/* Press at (x1, y1), move in steps to (x2, y2), release. */
int xinput_drag(Display *d, int x1, int y1, int x2, int y2, int button,
    struct derr *e);
/* direction: "up", "down", "left", "right"; amount 1..100 wheel clicks.
 * DERR_INVALID field "direction" for anything else. */
int xinput_scroll(Display *d, const char *direction, int amount, struct derr *e);
/* Types UTF-8 text (any code point: accents, CJK, emoji) whatever the
 * keyboard layout: characters without a keycode in the map are typed
 * through spare keycodes bound to their keysyms, and those bindings are
 * kept for later calls on the same Display (see xinput_idle). No keycode is
 * rebound until QUIET_MS (xinput.c) after its last key event reached the
 * server, so a client still translating earlier events never sees a
 * changed map for them; text needing more distinct keysyms than there are
 * spare keycodes waits that long between parts. *sent (may be NULL): how
 * many characters ("\r\n" counts one) were sent, also on failure.
 * DERR_INVALID field "text" if s is not valid UTF-8. */
int xinput_type(Display *d, const char *s, size_t len, size_t *sent, struct derr *e);
/* Presses a key or chord such as "Return", "ctrl+shift+t", "alt+F4",
 * "super"; several chords may be separated by spaces ("ctrl+a BackSpace").
 * Modifier names: ctrl/control, shift, alt, meta, super/win/cmd, hyper.
 * Key names are X keysym names (case-insensitive fallback) or a single
 * character. All pressed keys are released before returning, even on error.
 * DERR_INVALID field "keys" for an unknown key name. */
int xinput_keys(Display *d, const char *combo, struct derr *e);
/* Presses (down != 0) the keys of one chord ("ctrl+shift", "a") in order
 * and leaves them down, or releases (down 0) that chord's keys in reverse
 * order. The caller releases what it pressed, also when what it did in
 * between failed. DERR_INVALID field "keys" as xinput_keys, and for more
 * than one chord. */
int xinput_keys_hold(Display *d, const char *combo, int down, struct derr *e);
/* What xinput_type / xinput_keys would refuse before touching a display
 * (bad UTF-8, a control character, an unknown key name, too long): 0, or
 * -1 with e filled as they fill it (field "text" / "keys"). Pure. */
int xinput_type_check(const char *s, size_t len, struct derr *e);
int xinput_keys_check(const char *combo, struct derr *e);
/* If no key went through a kept binding (xinput_type, xinput_keys) on d
 * for idle_ms, puts those keycodes back to NoSymbol and returns 1 (0:
 * nothing to do). Keycodes someone else rebound meanwhile are left alone. */
int xinput_idle(Display *d, int idle_ms);
/* After XOpenDisplay: asks the server now, without a deadline, for what
 * later calls would otherwise ask on first use (the XTEST extension's
 * opcode), so a quick action in nowait mode (nowait.h) never waits for it. */
void xinput_prepare(Display *d);
/* Restores d's kept bindings now (unless the connection is dead) and
 * forgets d: call before XCloseDisplay. NULL or unknown d is a no-op. */
void xinput_forget(Display *d);
/* How long a display must be idle before display.c restores its map. */
#define XINPUT_IDLE_MS 5000

/* The pointer position. */
int xinput_pointer(Display *d, int *x, int *y, struct derr *e);

#endif
