/* test_a11ymatch.c - words against accessibility elements (daemon/x11/a11y_match.c). */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "x11/a11y_match.h"

/* The zenity --entry dialog and a --question dialog as detm-a11y lists them. */
static const char *const scene =
	"[{'role':'dialog','name':'Saving report','actions':[],'bounds':{'x':500,'y':300,'width':200,'height':120}},"
	"{'role':'label','name':'Name:','actions':[],'bounds':{'x':556,'y':313,'width':168,'height':17}},"
	"{'role':'text','name':'','label':'Name:','actions':['activate'],'bounds':{'x':556,'y':336,'width':168,'height':34}},"
	"{'role':'push button','name':'_Cancel','actions':['click'],'bounds':{'x':554,'y':378,'width':86,'height':34}},"
	"{'role':'push button','name':'OK','actions':['click'],'bounds':{'x':644,'y':378,'width':86,'height':34}},"
	"{'role':'label','name':'OK','actions':[],'bounds':{'x':650,'y':385,'width':30,'height':20}},"
	"{'role':'check box','name':'Remember me','actions':['click'],'bounds':{'x':556,'y':360,'width':100,'height':16}},"
	"{'role':'push button','name':'Save','actions':['click'],'bounds':{'x':10,'y':10,'width':60,'height':30}},"
	"{'role':'push button','name':'Save','actions':['click'],'bounds':{'x':90,'y':10,'width':60,'height':30}},"
	"{'role':'menu','name':'File','actions':['click'],'bounds':{'x':0,'y':0,'width':40,'height':20}},"
	"{'role':'menu item','name':'Save As…','actions':['click'],'bounds':{'x':0,'y':20,'width':90,'height':20}}]";

static json_object *
elements(void)
{
	char *t = strdup(scene);

	for (char *p = t; *p; p++)
		if (*p == '\'')
			*p = '"';
	json_object *o = json_tokener_parse(t);
	free(t);
	return o;
}

/* The index words pick in the scene (-1 none, -2 several). */
static int
pick(json_object *els, const char *words)
{
	struct a11y_words w;
	int n = 0;

	if (a11y_words_parse(words, &w) != 0)
		return -3;
	return a11y_pick(&w, els, &n);
}

static void
test_words_pick_one_element_or_none(void)
{
	json_object *els = elements();

	CHECK(els != NULL);
	CHECK(pick(els, "the OK button") == 4);
	CHECK(pick(els, "OK") == 4);                      /* the button, not its own label */
	CHECK(pick(els, "  ok   BUTTON ") == 4);
	CHECK(pick(els, "the Cancel button") == 3);       /* mnemonic underscore ignored */
	CHECK(pick(els, "the Name field") == 2);          /* by its label */
	CHECK(pick(els, "the name: text field") == 2);
	CHECK(pick(els, "Remember me checkbox") == 6);
	CHECK(pick(els, "the remember me check box") == 6);
	CHECK(pick(els, "the File menu") == 9);
	CHECK(pick(els, "the Save As... menu item") == 10);  /* ellipsis either way */
	CHECK(pick(els, "the Save button") == -2);        /* two: not confident */
	CHECK(pick(els, "the Delete button") == -1);
	CHECK(pick(els, "the OK checkbox") == -1);        /* right name, wrong role */
	CHECK(pick(els, "the O button") == -1);           /* names are equal, not contained */
	CHECK(pick(els, "the") == -3);                    /* names nothing */
	json_object_put(els);
}

static void
test_conditions_parse_and_contain(void)
{
	struct a11y_words w;
	json_object *els = elements();
	bool gone = true;

	CHECK(a11y_condition("element:button \"OK\"", &w, &gone) && !gone);
	CHECK(strcmp(w.name, "ok") == 0 && strcmp(w.role_word, "button") == 0 && w.quoted);
	CHECK(a11y_el_matches(&w, json_object_array_get_idx(els, 4), true));
	CHECK(!a11y_el_matches(&w, json_object_array_get_idx(els, 5), true));   /* a label */
	CHECK(a11y_condition("  Element-Gone:dialog \"Saving\"", &w, &gone) && gone);
	CHECK(a11y_el_matches(&w, json_object_array_get_idx(els, 0), true));     /* contained */
	CHECK(!a11y_el_matches(&w, json_object_array_get_idx(els, 0), false));
	CHECK(a11y_condition("element:\"Remember me\"", &w, &gone) && w.roles == NULL);
	CHECK(!a11y_condition("text:\"OK\"", &w, &gone));
	CHECK(!a11y_condition("element:", &w, &gone));
	json_object_put(els);
}

const struct harness_test a11ymatch_tests[] = {
	{ "a11y words pick one element or none", test_words_pick_one_element_or_none },
	{ "a11y conditions parse and contain", test_conditions_parse_and_contain },
	{ NULL, NULL },
};
