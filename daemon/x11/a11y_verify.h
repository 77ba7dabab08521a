/*
 * a11y_verify.h - grounding through a display's accessibility tree, and
 * checking a click through it (a11y_verify.c).
 *
 * Grounding: a target in words is matched (a11y_match.h) against the
 * visible elements of the task display; a confident unique match gives
 * the element and its bounds centre, with no model call.
 *
 * Verification of a click at (x, y): BEFORE the press, the element under
 * the point (GetAccessibleAtPoint) and the focused element; AFTER it, for
 * up to VERIFY_EFFECT_MS (stopping at the first change), whether that element went away (its window
 * closed), changed states, or the focus moved. The verdict:
 *   unknown (null)  no tree up on the display, or no accessible window
 *                   under the point (the tree does not know what is there)
 *   with an expected element (grounded through the tree): true when the
 *                   element under the point is it (or lies inside it),
 *                   false otherwise
 *   with words (grounded by vision): true when the element under the
 *                   point matches the words; else as below
 *   otherwise (desktop_action): true when the element under the point
 *                   takes actions or the click had an effect, false for
 *                   an inert element (a label, a filler) with no effect
 *   and in every case false when the X window on top at the point is not
 *   the element's window (a window with no tree covers it; by title).
 * gui_do clicks a tree-grounded element that is covered through its own
 * AT-SPI action instead (click, press, activate); that is verified by its
 * effect (the element went away, changed states or took the focus).
 *
 * Cost: nothing at all on a display whose accessibility bus is not up
 * (a11y_active): no helper, no bus activation.
 *
 * Does not: move the pointer or press (gui.c, desktop.c).
 */
#ifndef DETM_A11Y_VERIFY_H
#define DETM_A11Y_VERIFY_H

#include <stdbool.h>

#include <X11/Xlib.h>
#include <json-c/json.h>

#define VERIFY_EFFECT_MS 400     /* after a click: the verdict rarely needs it */
#define VERIFY_ACTION_MS 3000    /* after an element's own action: the only evidence */

struct tree_pick {
	json_object *element;   /* the match (caller owns), or NULL */
	int x, y;               /* its bounds centre */
	char why[480];          /* no match: why (a11y_reply_hint for none) */
	double ms;
};

/* Grounds words on display number's tree (-1: no display of a task).
 * 1 with a unique confident match, 0 otherwise (p->why says why). */
int tree_ground(int number, const char *words, struct tree_pick *p);

struct click_check {
	int number;             /* -1: nothing checked */
	int x, y;
	json_object *before;    /* the at_point answer */
	json_object *focus;     /* the focused elements' keys before (array of strings) */
	double ms;
	bool xtop_known;        /* verify_xtop found the X window on top at the point: */
	char xtop[256];         /* its title */
	unsigned long xtop_id;  /* and its id */
};

/* Before a click at (x, y). Cheap no-op when the display has no tree. */
void verify_before(int number, int x, int y, struct click_check *k);
/* Under the display lease (d): the topmost visible X window at the point,
 * whose title the verdict compares with the accessible element's window
 * (a window without a tree covering the element gets the click). */
void verify_xtop(struct click_check *k, Display *d);
/* The element under the point (before) is not in the X window on top
 * there: the click would go elsewhere. By X window id when detm-a11y tied
 * the element's window to one ("xid"), else by title. */
bool verify_covered(const struct click_check *k, json_object *el);
/* After the element's own action ran instead of a click (it was covered):
 * like verify_after, judged by the effect on el alone. */
void verify_after_action(struct click_check *k, json_object *el, const char *action, json_object *r);
/* After it: adds "verified" (true, false or null) and "verification"
 * {result, reason, at_point, expected, effect, checked[], ms} to r, and
 * frees k's members. expected and words may be NULL. */
void verify_after(struct click_check *k, json_object *expected, const char *words, json_object *r);

#endif
