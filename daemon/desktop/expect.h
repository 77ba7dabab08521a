/*
 * expect.h - what an agent expects an input to do (`expect` of
 * desktop_action, /api/commands and gui_do), and the `settled` condition
 * smart waits share with it (expect.c).
 *
 * The language is the smart waits' (waits.h), read by the same parsers
 * (ocr_condition, a11y_condition), plus two forms of its own:
 *   text:"Saved"  text-gone:"Saving..."  a "quoted phrase"   -> text (OCR)
 *   element:button "OK"  element-gone:dialog "Saving"        -> the tree
 *   window:"Save As"  window-gone:"Saving"                   -> X windows
 *   gone:<any of the above, or words>  -> that thing must go; words whose
 *       role is a window's (dialog, alert, window, frame) name a window
 *       title: gone:dialog "Saving" is window-gone:"Saving"
 *   settled  settled:800  settled 800 ms                      -> no drawing
 *       for that many ms (default EXPECT_SETTLED_MS)
 *
 * When each is met is effect.c's (it has the frames and windows): see
 * effect.h.
 *
 * Pure; any thread. Does not: look at a display.
 */
#ifndef DETM_EXPECT_H
#define DETM_EXPECT_H

#include <stdbool.h>

#include "derr.h"
#include "x11/a11y_match.h"

#define EXPECT_MAX 512                  /* bytes of an expect string */
#define EXPECT_SETTLED_MS 500
#define EXPECT_SETTLED_MAX_MS 60000

enum expect_kind { EXPECT_NONE, EXPECT_TEXT, EXPECT_ELEMENT, EXPECT_WINDOW, EXPECT_SETTLED };

struct expect {
	enum expect_kind kind;
	bool gone;                      /* the thing must go away */
	char phrase[256];               /* text, or a window title (as written) */
	struct a11y_words words;        /* element */
	int settled_ms;
	char text[EXPECT_MAX + 1];      /* the condition as given */
};

/* Parses s into x. 0, or -1 with DERR_INVALID field "expect" naming the
 * forms. */
int expect_parse(const char *s, struct expect *x, struct derr *e);
/* s is a settled condition ("settled", "settled:800", "settled 800 ms",
 * any case): true and *ms. For the wait engine. */
bool expect_settled(const char *s, int *ms);
/* "element:button \"OK\""-style text for messages: what x expects, in
 * words ("a window \"Save As\" to appear"). */
void expect_describe(const struct expect *x, char *out, size_t len);

#endif
