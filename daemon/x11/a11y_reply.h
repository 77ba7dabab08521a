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
 * an ellipsis); "" for an element whose index names no window. Returns
 * how many elements had no window. */
int a11y_reply_expand(json_object *reply);

#endif
