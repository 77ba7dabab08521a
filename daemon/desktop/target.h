/*
 * target.h - what an input was aimed at, for replay (issue 38 item 3):
 * every logged input action with a point (click, double/right/middle
 * click, drag, scroll, mouse_move) gets a target descriptor on its row
 * (actions.target, task/replay_rows.h):
 *
 *   {"point":{x,y}, "window":{title,class,x,y,width,height,rel_x,rel_y},
 *    "element":{role,name,bounds,path:[{role,name}...],index,of},
 *    "text":"OCR text around the point", "text_box":{x,y,w,h},
 *    "read_after_ms":n}
 *
 * Read AFTER the input, never before (issue 35: reading the tree before a
 * press delayed input on real apps): the action hook queues a job and one
 * background worker reads it, so no input waits for it. The worker reads
 * the X windows, the display's whole tree (TARGET_ELEMENTS) and a capture
 * around the point, and keeps the windows and the tree as the task's
 * snapshot (the last TARGET_SNAPS tasks): the state BEFORE its next input.
 * The window is the one the effect watch saw under the point BEFORE the
 * input (its evidence.window, from X only: effect.c), as it is now, or as
 * it was when the input closed it (an OK button: "seen": "before"); an
 * input that was not watched takes the topmost window at the point now
 * that the input did not open (its evidence's "appeared"), else the
 * snapshot's. The element is the snapshot's when the snapshot was read
 * before the input began (the tree the input found: "seen": "before";
 * what the tree showed there after it, when another element, in
 * "after"), else the one holding the point now, else the snapshot's;
 * one read after an input that closed or retitled a window or opened a
 * popup (evidence.windows) is marked "seen": "after_change" (it may show another
 * state of the window: replay does not let it contradict). The element
 * is the deepest one of that window whose bounds hold the point; the OCR
 * box (the element's bounds when small, else TARGET_TEXT_W x
 * TARGET_TEXT_H around the point) is read only from pixels seen now.
 * A snapshot is as old as the task's last input: a window that opened
 * later on its own is not in it.
 * "index"/"of": the element's place among the window's elements with the
 * same role and name (0-based), how many there were.
 *
 * Keys and text (type, press_key) write no target (their row already
 * names focus_window), but their job reads the windows and the tree after
 * them into the snapshot: the "before" of the click that follows (a path
 * typed into a Save As dialog, then its Save button clicked: the tree read
 * after the click may show the dialog closing). A full queue drops the
 * job (logged): the step then replays by window-relative position only.
 */
#ifndef DETM_TARGET_H
#define DETM_TARGET_H

#include "core/app.h"
#include "derr.h"

#define TARGET_QUEUE 64
#define TARGET_TEXT_W 240       /* the OCR box around a point */
#define TARGET_TEXT_H 36
#define TARGET_CAP_W 480        /* the pixels captured around a point */
#define TARGET_CAP_H 120
#define TARGET_SNAPS 16          /* tasks whose last state is kept */
#define TARGET_ELEMENTS 400     /* elements read per input */

/* Starts the worker and adds the action hook (nothing with
 * --replay-targets 0). 0, or -1 with e. */
int target_init(struct app *app, struct derr *e) DETM_NODISCARD;
/* Stops the worker (jobs still queued are dropped). */
void target_shutdown(void);
/* Waits until every job queued so far is written (at most timeout_ms);
 * 0, or -1 on timeout. Replay calls it before it reads a source. */
int target_flush(int timeout_ms);

#endif
