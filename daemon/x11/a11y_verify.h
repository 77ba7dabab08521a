/*
 * a11y_verify.h - grounding through a display's accessibility tree, and
 * whether another window covers what it grounded (a11y_verify.c).
 *
 * Grounding: a target in words is matched (a11y_match.h) against the
 * visible elements of the task display; a confident unique match gives
 * the element and its bounds centre, with no model call.
 *
 * Covered: gui_do clicks a tree-grounded element through its own AT-SPI
 * action (click, press, activate) instead of XTest when the X window on
 * top at its point (by X stacking order, bottom to top as xwin_list gives
 * it) is not the element's window (by title): a window with no tree
 * covers it. What any input did is desktop/effect.h's verdict, from X
 * events; nothing here reads the tree before or after a press.
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
	int number;             /* the task display (-1: none) */
	int x, y;               /* the point */
	bool xtop_known;        /* verify_xtop found the X window on top at the point: */
	char xtop[256];         /* its title */
	unsigned long xtop_id;  /* and its id */
};

/* Under the display lease (d): the topmost visible X window at the point
 * (X stacking order), whose title verify_covered compares with the
 * element's window. */
void verify_xtop(struct click_check *k, Display *d);
/* The element is not in the X window on top at the point: a click there
 * would go to that window. By X window id when detm-a11y tied the
 * element's window to one ("xid"), else by title. */
bool verify_covered(const struct click_check *k, json_object *el);

#endif
