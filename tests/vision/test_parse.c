/* test_parse.c - vision_parse_verdict on real-looking model output, and base64. */
#include <stdlib.h>
#include <string.h>

#include "vt.h"

static const struct {
	const char *text;
	enum vision_verdict want;
	int rc;                 /* 0 parsed, -1 unparseable */
	const char *reason;     /* substring expected in the reason, or NULL */
} cases[] = {
	{ "YES\nThe dialog is gone.", VISION_YES, 0, "The dialog is gone." },
	{ "NO\nThe spinner is still visible.", VISION_NO, 0, "spinner is still visible" },
	{ "PARTIAL\nThe progress bar is at 60%.", VISION_PARTIAL, 0, "60%" },
	{ "yes", VISION_YES, 0, NULL },
	{ "  **YES**\nThe file was saved.", VISION_YES, 0, "The file was saved." },
	{ "Answer: yes", VISION_YES, 0, NULL },
	{ "**Answer:** NO \xe2\x80\x94 the window is still open", VISION_NO, 0, "the window is still open" },
	{ "{\"answer\":\"yes\",\"reason\":\"The build finished.\"}", VISION_YES, 0, "The build finished." },
	{ "{\"verdict\": \"PARTIAL\", \"reason\": \"Download at 40%\"}", VISION_PARTIAL, 0, "Download at 40%" },
	{ "```json\n{\"answer\": \"no\", \"reason\": \"login form still shown\"}\n```", VISION_NO, 0,
	  "login form still shown" },
	{ "Yes, the dialog is gone.", VISION_YES, 0, "the dialog is gone." },
	{ "YES: Terminal shows 'Build succeeded'.", VISION_YES, 0, "Build succeeded" },
	{ "NO: the page is still loading", VISION_NO, 0, "the page is still loading" },
	{ "Not yet - the installer is at step 2.", VISION_NO, 0, NULL },
	{ "not yet", VISION_NO, 0, NULL },
	{ "Yesterday's report is open in the editor.", VISION_NO, -1, "unparseable model output: Yesterday" },
	{ "I don't know.", VISION_NO, -1, "unparseable" },
	{ "Knowing the state, nothing changed.", VISION_NO, -1, "unparseable" },
	{ "", VISION_NO, -1, "unparseable model output: (empty)" },
	{ "The screenshot shows a login form.", VISION_NO, -1, "unparseable" },
	{ "<think>The user wants to know if the dialog closed. No error is shown, yes.</think>\nYES\nThe dialog closed.",
	  VISION_YES, 0, "The dialog closed." },
	{ "<think>still thinking whether yes", VISION_NO, -1, "unparseable" },
	{ "Looking at the screenshot, the download has finished and the file is listed.\n\nYES", VISION_YES, 0, NULL },
	{ "Based on the image, the answer is YES because the page loaded.", VISION_YES, 0, NULL },
	{ "Partially. The first two of three files are uploaded.", VISION_PARTIAL, 0, "first two of three" },
	{ "partial - upload at 2/3", VISION_PARTIAL, 0, "upload at 2/3" },
	{ "```\nNO\n```\nThe error dialog is still there.", VISION_NO, 0, "The error dialog is still there." },
	{ "> YES\n> The tab title changed.", VISION_YES, 0, "The tab title changed." },
	{ "{\"met\": true, \"evidence\": \"green check mark\"}", VISION_YES, 0, "green check mark" },
	{ "Verdict: PARTIAL\nReason: spinner gone but the table is empty", VISION_PARTIAL, 0,
	  "spinner gone but the table is empty" },
	{ "NOPE", VISION_NO, 0, NULL },
	{ "Final answer: **NO**", VISION_NO, 0, NULL },
	{ "- YES, the build is green", VISION_YES, 0, "the build is green" },
	{ "Condition met: YES", VISION_YES, 0, NULL },
	{ "Yes\xe2\x80\x94the modal closed.", VISION_YES, 0, "the modal closed." },
	{ "NO.", VISION_NO, 0, NULL },
	{ "**PARTIAL**: loading bar visible", VISION_PARTIAL, 0, "loading bar visible" },
	{ "Here is my assessment:\n{\"decision\": \"resolved\", \"summary\": \"Saved\"}", VISION_YES, 0, "Saved" },
	{ "\n\n   YES   \n", VISION_YES, 0, NULL },
	{ "Y E S", VISION_NO, -1, NULL },
	{ "YESS the dialog", VISION_NO, -1, NULL },
	{ "N/A", VISION_NO, -1, NULL },
};

static void
test_parse_table(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		enum vision_verdict v = VISION_YES;
		char reason[256];
		int rc = vision_parse_verdict(cases[i].text, &v, reason, sizeof reason);
		bool good = rc == cases[i].rc && v == cases[i].want &&
		    (cases[i].reason == NULL || strstr(reason, cases[i].reason) != NULL);

		CHECK(good);
		if (!good)
			fprintf(stderr, "    case %zu %.40s: got rc %d %s \"%s\", want rc %d %s \"%s\"\n", i,
			    cases[i].text, rc, vision_verdict_name(v), reason, cases[i].rc,
			    vision_verdict_name(cases[i].want), cases[i].reason ? cases[i].reason : "");
	}
	CHECK(sizeof cases / sizeof cases[0] >= 25);
}

static void
test_parse_edges(void)
{
	enum vision_verdict v = VISION_YES;
	char tiny[12], big[4096];

	/* NULL text, NULL reason buffer. */
	CHECK(vision_parse_verdict(NULL, &v, tiny, sizeof tiny) == -1 && v == VISION_NO);
	CHECK(vision_parse_verdict("YES\nok", &v, NULL, 0) == 0 && v == VISION_YES);
	/* A long reason is cut to the buffer without a split UTF-8 sequence. */
	CHECK(vision_parse_verdict("YES: \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", &v, tiny,
	    sizeof tiny) == 0);
	CHECK(strlen(tiny) == 10 && utf8_valid(tiny, strlen(tiny)));
	/* A long unparseable output is excerpted. */
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	CHECK(vision_parse_verdict(big, &v, tiny, sizeof tiny) == -1 && strlen(tiny) < sizeof tiny);
	/* Control bytes never reach the reason. */
	{
		char r[64];

		CHECK(vision_parse_verdict("NO\x01\x02: a\tb\x1b[31m", &v, r, sizeof r) == 0 && v == VISION_NO);
		for (const char *p = r; *p; p++)
			CHECK((unsigned char)*p >= 0x20);
	}
}

static void
test_base64(void)
{
	static const struct {
		const char *in, *out;
	} vec[] = { { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" } };
	unsigned char all[256];
	size_t len;
	char *s;

	for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
		s = b64_encode((const unsigned char *)vec[i].in, strlen(vec[i].in), &len);
		CHECK(strcmp(s, vec[i].out) == 0 && len == strlen(vec[i].out));
		free(s);
	}
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	s = b64_encode(all, sizeof all, &len);
	CHECK(len == 344 && strncmp(s, "AAECAwQFBgcICQoL", 16) == 0 && strcmp(s + 336, "/P3+/w==") == 0);
	free(s);
}

/* FINAL_JSON lines as the Python DETM asked for them. */
static void
test_parse_final(void)
{
	struct vision_final f;

	CHECK(vision_parse_final("YES\nThe build is done.\nFINAL_JSON: {\"decision\":\"resolved\","
	    "\"confidence\":0.92,\"evidence\":[\"Build succeeded line\",\"prompt is back\"],"
	    "\"summary\":\"The build finished.\"}", &f) == 0);
	CHECK(f.verdict == VISION_YES && f.confidence > 0.91 && f.confidence < 0.93);
	CHECK(strcmp(f.summary, "The build finished.") == 0);
	CHECK(strcmp(f.evidence, "[\"Build succeeded line\",\"prompt is back\"]") == 0);
	CHECK(vision_parse_final("FINAL_JSON: {\"decision\":\"watching\",\"summary\":\"spinner\"}", &f) == 0 &&
	    f.verdict == VISION_NO && f.confidence < 0 && f.evidence[0] == '\0');
	CHECK(vision_parse_final("**FINAL_JSON:** `{\"decision\":\"partial\",\"confidence\":40,"
	    "\"evidence\":\"bar at 40%\"}`", &f) == 0 &&
	    f.verdict == VISION_PARTIAL && f.confidence > 0.39 && f.confidence < 0.41 &&
	    strcmp(f.evidence, "[\"bar at 40%\"]") == 0);
	/* the last one counts; a <think> block is skipped */
	CHECK(vision_parse_final("<think>FINAL_JSON: {\"decision\":\"resolved\"}</think>\n"
	    "FINAL_JSON: {\"decision\":\"watching\"}", &f) == 0 && f.verdict == VISION_NO);
	CHECK(vision_parse_final("YES\nall good", &f) == -1);
	CHECK(vision_parse_final("FINAL_JSON: {\"decision\":\"maybe\"}", &f) == -1);
	CHECK(vision_parse_final("FINAL_JSON: not json", &f) == -1);
	CHECK(vision_parse_final(NULL, &f) == -1);
}

const struct harness_test parse_tests[] = {
	{ "parse_final", test_parse_final },
	{ "parse_table", test_parse_table },
	{ "parse_edges", test_parse_edges },
	{ "base64", test_base64 },
	{ NULL, NULL },
};
