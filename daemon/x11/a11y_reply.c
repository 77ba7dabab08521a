/*
 * a11y_reply.c - detm-a11y's elements answers as detmd's callers use them
 * (see a11y_reply.h).
 *
 * Owns nothing; every function works on the JSON it is given.
 *
 * Does not: talk to the helper (a11y.c) or match words (a11y_match.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "a11y_reply.h"
#include "lim.h"
#include "utf8.h"

/* s cut to LIM_A11Y_EL_WINDOW bytes, as a new JSON string. */
static json_object *
short_str(const char *s)
{
	char buf[LIM_A11Y_EL_WINDOW];

	s = s != NULL ? s : "";
	utf8_clip(buf, sizeof buf, s, strlen(s), NULL);
	return json_object_new_string(buf);
}

int
a11y_reply_expand(json_object *reply)
{
	json_object *wins = json_object_object_get(reply, "windows");
	json_object *els = json_object_object_get(reply, "elements");
	size_t nw = json_object_is_type(wins, json_type_array) ? json_object_array_length(wins) : 0;
	int orphans = 0;

	for (size_t i = 0; json_object_is_type(els, json_type_array) && i < json_object_array_length(els); i++) {
		json_object *el = json_object_array_get_idx(els, i), *wi, *w = NULL;

		if (json_object_object_get_ex(el, "window_index", &wi) && json_object_is_type(wi, json_type_int) &&
		    json_object_get_int(wi) >= 0 && (size_t)json_object_get_int(wi) < nw)
			w = json_object_array_get_idx(wins, (size_t)json_object_get_int(wi));
		orphans += w == NULL;
		json_object_object_add(el, "window", short_str(json_object_get_string(json_object_object_get(w, "name"))));
		json_object_object_add(el, "application",
		    short_str(json_object_get_string(json_object_object_get(w, "application"))));
		if (json_object_object_get_ex(w, "xid", &wi) && json_object_is_type(wi, json_type_int))
			json_object_object_add(el, "xid", json_object_new_int64(json_object_get_int64(wi)));
	}
	return orphans;
}

static int
int_of(json_object *o, const char *k)
{
	return json_object_get_int(json_object_object_get(o, k));
}

enum a11y_why
a11y_reply_why(json_object *reply)
{
	if (json_object_get_boolean(json_object_object_get(reply, "truncated")))
		return A11Y_WHY_CUT;
	if (int_of(reply, "windows_seen") == 0 ||
	    (int_of(reply, "windows_walked") > 0 && int_of(reply, "visible") == 0))
		return A11Y_WHY_NOTHING;
	return A11Y_WHY_NO_MATCH;
}

enum a11y_why
a11y_reply_hint(json_object *reply, const char *what, char *out, size_t len)
{
	enum a11y_why why = a11y_reply_why(reply);
	json_object *apps = json_object_object_get(reply, "applications");
	const char *by = json_object_get_string(json_object_object_get(reply, "truncated_by"));
	int napps = json_object_is_type(apps, json_type_array) ? (int)json_object_array_length(apps) : 0;
	int seen = int_of(reply, "windows_seen"), walked = int_of(reply, "windows_walked");

	switch (why) {
	case A11Y_WHY_CUT:
		snprintf(out, len, "the walk of the tree was cut short (budget: %s) after %d nodes: what it did "
		    "not find may lie beyond where it stopped; narrow the walk with window, role or name",
		    by != NULL ? by : "?", int_of(reply, "visited"));
		break;
	case A11Y_WHY_NOTHING:
		if (seen == 0)
			snprintf(out, len, "nothing accessible runs on the display: no accessible application "
			    "shows a window (%d application%s on its accessibility bus); start the program with "
			    "the task display's env (GET /api/tasks/{id}/display; Chromium also needs "
			    "--force-renderer-accessibility)", napps, napps == 1 ? "" : "s");
		else
			snprintf(out, len, "nothing accessible shows: %d window%s, but no element with a screen "
			    "area in %s", walked, walked == 1 ? "" : "s", walked == 1 ? "it" : "them");
		break;
	default:
		if (walked == 0)
			snprintf(out, len, "the window filter matched none of the %d accessible window%s (by "
			    "accessible name or X title)", seen, seen == 1 ? "" : "s");
		else
			snprintf(out, len, "no %s among the %d visible element%s of %d window%s (the walk was "
			    "complete)", what, int_of(reply, "visible"), int_of(reply, "visible") == 1 ? "" : "s",
			    walked, walked == 1 ? "" : "s");
		break;
	}
	return why;
}
