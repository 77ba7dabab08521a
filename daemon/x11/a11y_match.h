/*
 * a11y_match.h - matching words to accessibility elements (a11y_match.c).
 *
 * The rule (gui_find / gui_do targets and element waits):
 *   1. Normalise: lower case, runs of white space as one space, mnemonic
 *      underscores and quotes dropped, a trailing ":", "." or ellipsis
 *      dropped ("Name:" is "name").
 *   2. Role words map to AT-SPI roles: button -> push/toggle/radio button;
 *      field, entry, input, text field/box -> text, entry, password text,
 *      spin button (field also combo box); checkbox / check box -> check
 *      box, check menu item; radio; toggle/switch; menu; menu item; tab ->
 *      page tab; link; combo/dropdown -> combo box; slider; item / list
 *      item; label; icon; heading; dialog/alert/window -> dialog, alert,
 *      frame, window, file chooser. The first role word found is the role;
 *      "the", "a", "an", "called", "named", "labelled", "titled" before
 *      the name are dropped; the other words are the name. A quoted part
 *      is the name as written (element:button "OK").
 *   3. Grounding (a11y_pick): an element matches when its role is one of
 *      the role's (any role without a role word) and its normalised name
 *      (or, for an element with no name, its label: the name of what it
 *      is labelled by) EQUALS the name. Among matches, elements with
 *      actions win over inert ones, and one nested inside another match
 *      is dropped (a button's own label). Exactly one left is a confident
 *      match; none or several is not (vision grounds it instead).
 *   4. Conditions (a11y_condition + a11y_el_matches with contains): the
 *      name need only be CONTAINED in the element's ("Saving" matches the
 *      dialog "Saving report...").
 */
#ifndef DETM_A11Y_MATCH_H
#define DETM_A11Y_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#define A11Y_NAME_MAX 200

struct a11y_words {
	char name[A11Y_NAME_MAX];       /* normalised; "" when only a role was given */
	char role_word[24];             /* "" none */
	const char *const *roles;       /* NULL-ended AT-SPI role names; NULL: any role */
	bool quoted;
};

/* Parses a target in words. 0, or -1 when it names neither a role nor a name. */
int a11y_words_parse(const char *text, struct a11y_words *w);
/* Normalises a name (rule 1) into out (cap bytes). */
void a11y_norm(const char *in, char *out, size_t cap);
/* The element's role is one the words allow. */
bool a11y_role_ok(const struct a11y_words *w, const char *role);
/* el ({role,name,label?...}) matches w: name equal, or contained. */
bool a11y_el_matches(const struct a11y_words *w, json_object *el, bool contains);
/* The one confident match in elements (rule 3): its index; -1 none, -2
 * several (*count: how many were left). */
int a11y_pick(const struct a11y_words *w, json_object *elements, int *count);
/* "element:<words>" or "element-gone:<words>" (any case): w and *gone;
 * false for any other condition. */
bool a11y_condition(const char *criteria, struct a11y_words *w, bool *gone);

#endif
