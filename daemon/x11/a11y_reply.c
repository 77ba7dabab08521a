/*
 * a11y_reply.c - detm-a11y's elements answers as detmd's callers use them
 * (see a11y_reply.h).
 *
 * Owns nothing; every function works on the JSON it is given.
 *
 * Does not: talk to the helper (a11y.c) or match words (a11y_match.c).
 */
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
	}
	return orphans;
}
