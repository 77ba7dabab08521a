/* test_expect.c - what an input is expected to do (daemon/desktop/expect.c):
 * which form each condition is, and the settled condition smart waits share. */
#include <string.h>

#include "desktop/expect.h"
#include "unit.h"

static struct expect x;
static struct derr e;

static bool
parses(const char *s, enum expect_kind kind, bool gone)
{
	return expect_parse(s, &x, &e) == 0 && x.kind == kind && x.gone == gone;
}

static void
test_forms(void)
{
	CHECK(parses("window:\"Save As\"", EXPECT_WINDOW, false) && strcmp(x.phrase, "Save As") == 0);
	CHECK(parses("window: Save As ", EXPECT_WINDOW, false) && strcmp(x.phrase, "Save As") == 0);
	CHECK(parses("window-gone:\"Saving\"", EXPECT_WINDOW, true) && strcmp(x.phrase, "Saving") == 0);
	CHECK(parses("text:\"Saved\"", EXPECT_TEXT, false) && strcmp(x.phrase, "Saved") == 0);
	CHECK(parses("text-gone:\"Saving...\"", EXPECT_TEXT, true));
	CHECK(parses("\"Build succeeded\" appears", EXPECT_TEXT, false));   /* the waits' quoted phrase */
	CHECK(parses("element:button \"OK\"", EXPECT_ELEMENT, false) && strcmp(x.words.name, "ok") == 0);
	CHECK(parses("element-gone:dialog \"Saving\"", EXPECT_ELEMENT, true));
	CHECK(strcmp(x.text, "element-gone:dialog \"Saving\"") == 0);
}

static void
test_gone(void)
{
	/* a window's role names its title; other roles an element */
	CHECK(parses("gone:dialog \"Saving\"", EXPECT_WINDOW, true) && strcmp(x.phrase, "Saving") == 0);
	CHECK(parses("gone:\"Saving\"", EXPECT_WINDOW, true) && strcmp(x.phrase, "Saving") == 0);
	CHECK(parses("gone:button \"Stop\"", EXPECT_ELEMENT, true) && strcmp(x.words.name, "stop") == 0);
	CHECK(parses("gone:text:\"Saving\"", EXPECT_TEXT, true));
	CHECK(parses("gone:window:\"Saving\"", EXPECT_WINDOW, true));
	CHECK(expect_parse("gone:", &x, &e) == -1 && strcmp(e.field, "expect") == 0);
}

static void
test_settled(void)
{
	int ms = 0;

	CHECK(parses("settled", EXPECT_SETTLED, false) && x.settled_ms == EXPECT_SETTLED_MS);
	CHECK(parses("Settled:800", EXPECT_SETTLED, false) && x.settled_ms == 800);
	CHECK(expect_settled("settled 250 ms", &ms) && ms == 250);
	CHECK(expect_settled("  settled = 40ms", &ms) && ms == 40);
	CHECK(!expect_settled("settled:0", &ms));
	CHECK(!expect_settled("settled:999999", &ms));
	CHECK(!expect_settled("settled down", &ms));
	CHECK(!expect_settled("unsettled", &ms));
	CHECK(!expect_settled(NULL, &ms));
}

static void
test_refused(void)
{
	char big[EXPECT_MAX + 10];

	CHECK(expect_parse("what is this", &x, &e) == -1 && e.code == DERR_INVALID &&
	    strstr(e.message, "window:") != NULL);
	CHECK(expect_parse("\"A\" becomes \"B\"", &x, &e) == -1);      /* two phrases: no form */
	CHECK(expect_parse("window:", &x, &e) == -1);
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	CHECK(expect_parse(big, &x, &e) == -1);
}

const struct harness_test expect_tests[] = {
	{ "expect: window, text and element forms", test_forms },
	{ "expect: gone: names a window by its role, else an element", test_gone },
	{ "expect: settled and its milliseconds", test_settled },
	{ "expect: what is no condition is refused naming the forms", test_refused },
	{ NULL, NULL },
};
