/* test_a11yreply.c - detm-a11y's elements answers as detmd reads them
 * (daemon/x11/a11y_reply.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "lim.h"
#include "utf8.h"
#include "x11/a11y_reply.h"

static const char *
el_str(json_object *reply, size_t i, const char *key)
{
	json_object *els = json_object_object_get(reply, "elements");

	return json_object_get_string(json_object_object_get(json_object_array_get_idx(els, i), key));
}

/* Each element gets its window's names from the table, cut short; a bad
 * index gets "" and is counted. */
static void
test_expand_names_windows_once_and_cuts_the_copies(void)
{
	size_t big = 5000;
	char *title = malloc(big + 1);
	json_object *r = json_object_new_object(), *wins = json_object_new_array(), *els = json_object_new_array();
	json_object *w = json_object_new_object();
	const char *s;

	memset(title, 'T', big);
	memcpy(title + LIM_A11Y_EL_WINDOW - 5, "\xc3\xa9\xc3\xa9", 4);     /* a cut falls in or after these */
	title[big] = '\0';
	json_object_object_add(w, "name", json_object_new_string(title));
	json_object_object_add(w, "application", json_object_new_string("zenity"));
	json_object_array_add(wins, w);
	for (int i = 0; i < 4; i++) {
		json_object *el = json_object_new_object();

		json_object_object_add(el, "role", json_object_new_string("label"));
		if (i < 2)
			json_object_object_add(el, "window_index", json_object_new_int(0));
		else if (i == 2)
			json_object_object_add(el, "window_index", json_object_new_int(7));
		json_object_array_add(els, el);
	}
	json_object_object_add(r, "windows", wins);
	json_object_object_add(r, "elements", els);
	CHECK(a11y_reply_expand(r) == 2);
	s = el_str(r, 0, "window");
	CHECK(s != NULL && strlen(s) < LIM_A11Y_EL_WINDOW && utf8_valid(s, strlen(s)) &&
	    strcmp(s + strlen(s) - 3, UTF8_ELLIPSIS) == 0 && strncmp(s, "TTTT", 4) == 0);
	CHECK(strcmp(el_str(r, 1, "application"), "zenity") == 0);
	CHECK(strcmp(el_str(r, 2, "window"), "") == 0 && strcmp(el_str(r, 3, "application"), "") == 0);
	/* no table at all: nothing breaks */
	json_object_object_del(r, "windows");
	CHECK(a11y_reply_expand(r) == 4);
	json_object_put(r);
	free(title);
}

static json_object *
reply_of(const char *json)
{
	char *t = strdup(json);
	json_object *o;

	for (char *p = t; *p; p++)
		if (*p == '\'')
			*p = '"';
	o = json_tokener_parse(t);
	free(t);
	return o;
}

/* Three distinct hints: cut short, nothing accessible, the filter matched
 * nothing (by window, or among the visible elements). */
static void
test_hint_tells_cut_short_from_nothing_from_no_match(void)
{
	static const struct {
		const char *reply;
		enum a11y_why why;
		const char *says;
	} cases[] = {
		{ "{'count':0,'truncated':true,'truncated_by':'nodes','visited':20000,'visible':900,"
		  "'windows_seen':2,'windows_walked':2,'applications':['a','b']}", A11Y_WHY_CUT, "cut short (budget: nodes)" },
		{ "{'count':0,'truncated':false,'visited':0,'visible':0,'windows_seen':0,'windows_walked':0,"
		  "'applications':[]}", A11Y_WHY_NOTHING, "nothing accessible runs on the display" },
		{ "{'count':0,'truncated':false,'visited':3,'visible':0,'windows_seen':1,'windows_walked':1,"
		  "'applications':['x']}", A11Y_WHY_NOTHING, "nothing accessible shows" },
		{ "{'count':0,'truncated':false,'visited':30,'visible':12,'windows_seen':3,'windows_walked':0,"
		  "'applications':['x']}", A11Y_WHY_NO_MATCH, "window filter matched none of the 3" },
		{ "{'count':0,'truncated':false,'visited':30,'visible':12,'windows_seen':1,'windows_walked':1,"
		  "'applications':['x']}", A11Y_WHY_NO_MATCH, "no button named \"ok\" among the 12 visible" },
		{ "{'count':0}", A11Y_WHY_NOTHING, "nothing accessible runs" },
	};
	char out[480];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_object *r = reply_of(cases[i].reply);

		CHECK(r != NULL);
		CHECK(a11y_reply_hint(r, "button named \"ok\"", out, sizeof out) == cases[i].why);
		CHECK(a11y_reply_why(r) == cases[i].why);
		CHECK(strstr(out, cases[i].says) != NULL);
		if (strstr(out, cases[i].says) == NULL)
			fprintf(stderr, "case %zu: %s\n", i, out);
		json_object_put(r);
	}
}

const struct harness_test a11yreply_tests[] = {
	{ "a11y reply: three hints for no element", test_hint_tells_cut_short_from_nothing_from_no_match },
	{ "a11y reply: windows named once, copies cut", test_expand_names_windows_once_and_cuts_the_copies },
	{ NULL, NULL },
};
