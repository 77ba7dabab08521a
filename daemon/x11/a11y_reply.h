/*
 * a11y_reply.h - reading detm-a11y's elements answers (a11y_reply.c):
 * pure functions on the JSON, no process, no lock.
 *
 * The helper names each window and application once, in a "windows"
 * table, and every element points at its window by "window_index" (a
 * window title is the application's to choose and may be a megabyte: it is
 * capped there, and copied per element only here, shorter).
 */
#ifndef DETM_A11Y_REPLY_H
#define DETM_A11Y_REPLY_H

#include <stddef.h>

#include <json-c/json.h>

/* Adds to each element its window's "window" and "application" names, at
 * most LIM_A11Y_EL_WINDOW bytes each (cut between characters, ending with
 * an ellipsis; "" for an element whose index names no window), and its X
 * window's "xid" when the helper found it. Returns how many elements had
 * no window. */
int a11y_reply_expand(json_object *reply);

/* Why an answer holds no element that was asked for: three answers a
 * client acts on differently. */
enum a11y_why {
	A11Y_WHY_CUT,           /* the walk was cut short (truncated): it may be beyond */
	A11Y_WHY_NOTHING,       /* nothing accessible shows: no window, or no element in any */
	A11Y_WHY_NO_MATCH,      /* windows and elements show; the filter matched none */
};

enum a11y_why a11y_reply_why(json_object *reply);
/* One sentence for that in out (always written): what names what was
 * looked for, after "no" ("element matching the filter", "button named
 * \"ok\""). */
enum a11y_why a11y_reply_hint(json_object *reply, const char *what, char *out, size_t len);

#endif
