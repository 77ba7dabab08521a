/* test_util.c - util.c, buf.c, jx.c, derr.c, nowait.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/jx.h"
#include "core/nowait.h"
#include "core/util.h"
#include "derr.h"
#include "task/events.h"
#include "unit.h"

static void
test_iso_time_round_trips_through_time_parse(void)
{
	char ts[ISO_TIME_LEN];
	int64_t ms = 0;

	iso_time(1763840000123LL, ts);
	CHECK(strcmp(ts, "2025-11-22T19:33:20.123Z") == 0);
	CHECK(time_parse(ts, &ms) == 0 && ms == 1763840000123LL);
	CHECK(time_parse("2025-11-22T19:33:20+00:00", &ms) == 0 && ms == 1763840000000LL);
	CHECK(time_parse("2025-11-22T20:33:20.5+01:00", &ms) == 0 && ms == 1763840000500LL);
	CHECK(time_parse("1763840000", &ms) == 0 && ms == 1763840000000LL);
	CHECK(time_parse("1763840000.25", &ms) == 0 && ms == 1763840000250LL);
	CHECK(time_parse("yesterday", &ms) != 0);
	CHECK(time_parse("2025-13-40", &ms) != 0);
	CHECK(time_parse("", &ms) != 0);
	/* not numbers a time can be (NaN once reached an integer conversion) */
	CHECK(time_parse("nan", &ms) != 0 && time_parse("NaN", &ms) != 0);
	CHECK(time_parse("-nan", &ms) != 0 && time_parse("inf", &ms) != 0);
	CHECK(time_parse("1e400", &ms) != 0 && time_parse("-1", &ms) != 0);
}

static void
test_utf8_valid_rejects_overlongs_surrogates_and_truncation(void)
{
	CHECK(utf8_valid("plain", 5));
	CHECK(utf8_valid("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", 14));
	CHECK(!utf8_valid("\xc3", 1));                  /* truncated */
	CHECK(!utf8_valid("\xc0\xaf", 2));              /* overlong '/' */
	CHECK(!utf8_valid("\xed\xa0\x80", 3));          /* surrogate */
	CHECK(!utf8_valid("\xf4\x90\x80\x80", 4));      /* > U+10FFFF */
	CHECK(!utf8_valid("\xff", 1));
	CHECK(utf8_chars("caf\xc3\xa9") == 4);
}

/* utf8_valid skips ASCII eight bytes at a time: a bad or good sequence at
 * every offset of a longer ASCII run is still found or passed. */
static void
test_utf8_valid_finds_a_bad_byte_at_any_offset(void)
{
	static const char *const bad[] = { "\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\x80" };
	char buf[64];
	size_t at, b;

	for (at = 0; at < 40; at++) {
		memset(buf, 'a', sizeof buf);
		CHECK(utf8_valid(buf, sizeof buf));
		memcpy(buf + at, "\xe6\x97\xa5", 3);
		CHECK(utf8_valid(buf, sizeof buf));
		for (b = 0; b < sizeof bad / sizeof bad[0]; b++) {
			memset(buf, 'a', sizeof buf);
			memcpy(buf + at, bad[b], strlen(bad[b]));
			CHECK(!utf8_valid(buf, sizeof buf));
			CHECK(utf8_valid(buf, at));     /* the ASCII before it */
		}
	}
}

/* utf8_clip: whole text as utf8_fix; a cut one ends with the ellipsis, cut
 * between characters, and still fits with its NUL. */
static void
test_utf8_clip_marks_a_cut_with_an_ellipsis(void)
{
	char out[16], big[3000];
	bool cut = true;
	size_t n;

	n = utf8_clip(out, sizeof out, "short", 5, &cut);
	CHECK(n == 5 && !cut && strcmp(out, "short") == 0);
	n = utf8_clip(out, 16, "0123456789abcde", 15, &cut);        /* 15 + NUL: fits exactly */
	CHECK(n == 15 && !cut);
	n = utf8_clip(out, 16, "0123456789abcdef", 16, &cut);
	CHECK(cut && n == 15 && strcmp(out, "0123456789ab" UTF8_ELLIPSIS) == 0);
	/* never inside a character: 4-byte emoji that do not fit are dropped whole */
	n = utf8_clip(out, 10, "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 12, &cut);
	CHECK(cut && n == 7 && strcmp(out, "\xf0\x9f\x98\x80" UTF8_ELLIPSIS) == 0 && utf8_valid(out, n));
	n = utf8_clip(out, 4, "abcdef", 6, &cut);
	CHECK(cut && n == 3 && strcmp(out, UTF8_ELLIPSIS) == 0);
	n = utf8_clip(out, sizeof out, "a\xff", 2, NULL);              /* repaired as utf8_fix */
	CHECK(n == 4 && strcmp(out, "a\xef\xbf\xbd") == 0);
	memset(big, 'x', sizeof big);
	big[100] = '\xc3';
	big[101] = '\xa9';
	for (size_t cap = 4; cap < 200; cap++) {
		char dst[200];

		n = utf8_clip(dst, cap, big, sizeof big, &cut);
		CHECK(cut && n < cap && utf8_valid(dst, n) && strlen(dst) == n &&
		    strcmp(dst + n - 3, UTF8_ELLIPSIS) == 0);
	}
}

static void
test_utf8_fix_replaces_invalid_bytes_and_cuts_between_characters(void)
{
	char out[16], big[600], *d;
	size_t n;

	/* Latin-1, a stray continuation, an overlong, a surrogate: U+FFFD each. */
	n = utf8_fix(out, sizeof out, "caf\xe9!", 5);
	CHECK(n == 7 && strcmp(out, "caf\xef\xbf\xbd!") == 0);
	n = utf8_fix(out, sizeof out, "\x80\xc0\xaf", 3);
	CHECK(n == 9 && utf8_valid(out, n));
	n = utf8_fix(out, sizeof out, "\xed\xa0\x80", 3);
	CHECK(n == 9 && utf8_valid(out, n));
	/* Valid text is copied; a character that does not fit is left out whole. */
	n = utf8_fix(out, 6, "ab\xe6\x97\xa5\xe6\x97\xa5", 8);
	CHECK(n == 5 && strcmp(out, "ab\xe6\x97\xa5") == 0);
	n = utf8_fix(out, 5, "ab\xe6\x97\xa5", 5);
	CHECK(n == 2 && strcmp(out, "ab") == 0);
	/* utf8_cut never ends inside a character. */
	CHECK(utf8_cut("a\xc3\xa9" "b", 4, 2) == 1);
	CHECK(utf8_cut("a\xc3\xa9" "b", 4, 3) == 3);
	CHECK(utf8_cut("a\xc3\xa9" "b", 4, 10) == 4);
	CHECK(utf8_cut("\xf0\x9f\x98\x80", 4, 3) == 0);
	CHECK(utf8_prec("a\xc3\xa9" "b", 2) == 1 && utf8_prec("ab", 40) == 2 && utf8_prec(NULL,
	    4) == 0);
	d = utf8_dup("x\xff", 2, &n);
	CHECK(n == 4 && strcmp(d, "x\xef\xbf\xbd") == 0);
	free(d);
	snprintf(out, sizeof out, "%s", "abc\xc3");     /* a byte-wise cut */
	utf8_fix_in_place(out, sizeof out);
	CHECK(strcmp(out, "abc\xef\xbf\xbd") == 0);
	/* derr_set: client bytes and %.Ns cuts still give a valid message,
	 * and a long message is cut between characters. */
	{
		struct derr e;

		derr_set(&e, DERR_FORBIDDEN, NULL, "Host '%s' (%.4s)", "\xff\xfe", "ab\xc3\xa9");
		CHECK(utf8_valid(e.message, strlen(e.message)));
		memset(big, 0, sizeof big);
		for (size_t i = 0; i + 2 < sizeof big; i += 2)
			memcpy(big + i, "\xc3\xa9", 2);
		derr_set(&e, DERR_INVALID, NULL, "x%s", big);
		CHECK(utf8_valid(e.message, strlen(e.message)) && strlen(e.message) == 511);
	}
}

/* Row ids: the same form, consecutive within a run (so a batch's inserts
 * share index pages), and a jump (after a collision) starts elsewhere. */
static void
test_row_ids_are_consecutive_until_a_jump(void)
{
	char a[ID_LEN], b[ID_LEN], c[ID_LEN];
	int i, steps = 0;

	for (i = 0; i < 100; i++) {
		id_row(a, false);
		id_row(b, false);
		CHECK(id_valid(a) && id_valid(b));
		steps += (uint32_t)strtoul(b, NULL, 16) == (uint32_t)strtoul(a, NULL, 16) + 1u;
	}
	CHECK(steps == 100);
	id_row(a, false);
	id_row(c, true);
	id_row(b, false);
	CHECK(id_valid(c) && (uint32_t)strtoul(b, NULL, 16) == (uint32_t)strtoul(c, NULL, 16) + 1u);
	CHECK(strcmp(a, c) != 0);
}

static void
test_ids_are_8_hex_digits_and_distinct(void)
{
	char a[ID_LEN], b[ID_LEN];
	int i, same = 0;

	for (i = 0; i < 1000; i++) {
		id_new(a);
		id_new(b);
		CHECK(strlen(a) == 8 && strspn(a, "0123456789abcdef") == 8);
		same += strcmp(a, b) == 0;
	}
	CHECK(same == 0);
	CHECK(id_valid("3f2a9c1b"));
	CHECK(!id_valid(""));
	CHECK(!id_valid("../etc"));
	CHECK(!id_valid("a b"));
	CHECK(!id_valid("3F2A9C1B"));           /* ids are lowercase */
	CHECK(!id_valid("3f2a9c1"));
	CHECK(!id_valid("3f2a9c1b0"));
	CHECK(!id_valid("3f2a9c1b/items/1"));
	CHECK(!id_valid("3f2a9c1g"));
}

static void
test_secure_streq(void)
{
	CHECK(secure_streq("secret", "secret"));
	CHECK(!secure_streq("secreT", "secret"));
	CHECK(!secure_streq("secret2", "secret"));
	CHECK(!secure_streq("", "secret"));
	CHECK(secure_streq("", ""));
}

static void
test_buf_refuses_to_grow_past_its_cap(void)
{
	struct buf b;

	buf_init(&b, 10);
	CHECK(buf_append(&b, "12345", 5) == 0);
	CHECK(buf_append(&b, "67890", 5) == 0);
	CHECK(buf_append(&b, "x", 1) != 0);
	CHECK(b.len == 10 && strcmp(b.data, "1234567890") == 0);
	buf_free(&b);
	buf_free(NULL);
}

static void
test_jx_parse_is_strict(void)
{
	struct derr e;
	json_object *o;

	derr_clear(&e);
	o = jx_parse("{\"a\":1}", 7, &e);
	CHECK(o != NULL);
	json_object_put(o);
	CHECK(jx_parse("{\"a\":1} x", 9, &e) == NULL && e.code == DERR_INVALID);
	CHECK(jx_parse("{\"a\":", 5, &e) == NULL && e.code == DERR_INVALID);
	CHECK(jx_parse("{'a':1}", 7, &e) == NULL);
	CHECK(jx_parse("{\"a\":\"\xff\"}", 9, &e) == NULL);
	CHECK(jx_parse("[1,]", 4, &e) == NULL);
	o = jx_parse("{\"a\":1}  \n", 10, &e);
	CHECK(o != NULL);
	json_object_put(o);
}

/* jx_parse then jx_string: want is the text expected back (NULL: text). */
static int
jx_round_trip(const char *text, const char *want)
{
	struct derr e;
	json_object *o;
	int same;

	derr_clear(&e);
	o = jx_parse(text, strlen(text), &e);
	same = o != NULL && strcmp(jx_string(o, NULL), want ? want : text) == 0;
	if (!same)
		fprintf(stderr, "    %s -> %s (%s)\n", text, o ? jx_string(o, NULL) : "NULL", e.message);
	json_object_put(o);
	return same;
}

/* jx_parse refuses text with DERR_INVALID on field (NULL: no field). */
static int
jx_refuses(const char *text, const char *field)
{
	struct derr e;
	json_object *o;

	derr_clear(&e);
	o = jx_parse(text, strlen(text), &e);
	json_object_put(o);
	return o == NULL && e.code == DERR_INVALID && e.message[0] != '\0' &&
	    strcmp(e.field, field ? field : "") == 0;
}

static void
test_jx_parse_keeps_client_json_as_sent(void)
{
	struct derr e;
	json_object *o;
	int64_t n = 0;
	char text[256];

	CHECK(jx_round_trip("123456789012345678901234567890", NULL));
	CHECK(jx_round_trip("-123456789012345678901234567890", NULL));
	CHECK(jx_round_trip("-0", NULL));
	CHECK(jx_round_trip("[-0,0,-1,18446744073709551615,18446744073709551616,"
	    "-9223372036854775808,-9223372036854775809,9223372036854775807]", NULL));
	CHECK(jx_round_trip("[1e400,-1e400,-0.0,0.1,1.5e-320,1E5,2.50,1e-0]", NULL));
	CHECK(jx_round_trip("{ \"a\" : [ 1 , { \"b\" : 99999999999999999999 } ] }",
	    "{\"a\":[1,{\"b\":99999999999999999999}]}"));
	CHECK(jx_round_trip("{\"s\":\"a\\u0000b\",\"\\\\u0000\":true,\"n\":null}",
	    "{\"s\":\"a\\u0000b\",\"\\\\u0000\":true,\"n\":null}"));
	CHECK(jx_round_trip("{\"\\u00e9\":1,\"\\u00e8\":2,\"\\\"\":3}",
	    "{\"\xc3\xa9\":1,\"\xc3\xa8\":2,\"\\\"\":3}"));
	CHECK(jx_refuses("{\"a\\u0000b\":1,\"a\\u0000c\":2}", "a\\u0000b"));
	CHECK(jx_refuses("[0,{\"x\":[{\"k\\u0000\":1}]}]", "[1].x[0].k\\u0000"));
	CHECK(jx_refuses("{\"a\":1,\"b\":2,\"a\":3}", "a"));
	CHECK(jx_refuses("{\"o\":{\"ab\":1,\"\\u0061b\":2}}", "o.\\u0061b"));
	CHECK(jx_refuses("{\"a\\\"b\":1,\"a\\\"b\":2}", "a\\\"b"));
	CHECK(jx_refuses("[NaN]", NULL));
	CHECK(jx_refuses("{\"v\":-Infinity}", NULL));
	CHECK(jx_refuses("[Infinity]", NULL));
	CHECK(jx_refuses("[1.]", NULL));
	CHECK(jx_refuses("[1.e5]", NULL));
	/* A long path is cut on a UTF-8 boundary, inside the field's 63 bytes. */
	snprintf(text, sizeof text, "{\"%s\":{\"x\\u0000\":1}}",
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	derr_clear(&e);
	o = jx_parse(text, strlen(text), &e);
	CHECK(o == NULL && strlen(e.field) >= 60 && strlen(e.field) <= 63 &&
	    utf8_valid(e.field, strlen(e.field)));
	/* A number beyond int64 is out of range for jx_int, not saturated. */
	o = jx_parse("{\"n\":123456789012345678901234567890,\"m\":-0,\"p\":9.223372036854775808e18}",
	    71, &e);
	CHECK(o != NULL);
	CHECK(jx_int(o, "n", true, 0, INT64_MAX, &n, NULL, &e) == -1 && strcmp(e.field, "n") == 0);
	CHECK(jx_int(o, "m", true, 0, 5, &n, NULL, &e) == 0 && n == 0);
	CHECK(jx_int(o, "p", true, INT64_MIN, INT64_MAX, &n, NULL, &e) == -1);
	json_object_put(o);
	/* Stored text comes back the same; text jx_parse refuses still reads. */
	o = jx_parse_stored("{\"n\":123456789012345678901234567890}");
	CHECK(o != NULL && strcmp(jx_string(o, NULL), "{\"n\":123456789012345678901234567890}") == 0);
	json_object_put(o);
	o = jx_parse_stored("{\"n\":NaN}");
	CHECK(o != NULL);
	json_object_put(o);
	CHECK(jx_parse_stored(NULL) == NULL);
}

static void
test_jx_getters_name_the_field(void)
{
	struct derr e;
	json_object *o = json_tokener_parse(
	    "{\"s\":\"  \",\"n\":5,\"f\":1.5,\"t\":\"abc\",\"arr\":[\"x\",3],\"long\":\"abcdef\"}");
	const char *s = NULL;
	int64_t n = 0;
	json_object *arr;

	derr_clear(&e);
	CHECK(jx_str(o, "s", true, 1, 10, &s, &e) == -1 && strcmp(e.field, "s") == 0);
	CHECK(jx_str(o, "missing", true, 1, 10, &s, &e) == -1 && strstr(e.message, "required"));
	CHECK(jx_str(o, "n", true, 1, 10, &s, &e) == -1 && strstr(e.message, "string"));
	CHECK(jx_str(o, "long", true, 1, 3, &s, &e) == -1 && strstr(e.message, "too long"));
	CHECK(jx_str(o, "t", true, 1, 3, &s, &e) == 0 && strcmp(s, "abc") == 0);
	CHECK(jx_int(o, "n", true, 0, 4, &n, NULL, &e) == -1 && strcmp(e.field, "n") == 0);
	CHECK(jx_int(o, "n", true, 0, 5, &n, NULL, &e) == 0 && n == 5);
	CHECK(jx_int(o, "f", true, 0, 5, &n, NULL, &e) == -1);
	CHECK(jx_strarray(o, "arr", true, 0, 10, 1, 10, &arr, &e) == -1 &&
	    strcmp(e.field, "arr[1]") == 0);
	CHECK(jx_parse_int("12", "o", 0, 100, &n, &e) == 0 && n == 12);
	CHECK(jx_parse_int("12x", "o", 0, 100, &n, &e) == -1);
	CHECK(jx_parse_int("-1", "o", 0, 100, &n, &e) == -1);
	json_object_put(o);
}

static void
test_derr_json_has_one_shape(void)
{
	struct derr e;
	json_object *o, *inner, *v;

	derr_set(&e, DERR_CONFLICT, "status", "from %s to %s", "a", "b");
	CHECK(derr_status(e.code) == 409);
	o = derr_to_json(&e);
	CHECK(json_object_object_get_ex(o, "error", &inner));
	CHECK(json_object_object_get_ex(inner, "code", &v) &&
	    strcmp(json_object_get_string(v), "conflict") == 0);
	CHECK(json_object_object_get_ex(inner, "field", &v) &&
	    strcmp(json_object_get_string(v), "status") == 0);
	CHECK(json_object_object_get_ex(inner, "message", &v) &&
	    strcmp(json_object_get_string(v), "from a to b") == 0);
	json_object_put(o);
	derr_set(&e, DERR_NOT_FOUND, NULL, "x");
	o = derr_to_json(&e);
	json_object_object_get_ex(o, "error", &inner);
	CHECK(json_object_object_get_ex(inner, "field", &v) && v == NULL);
	json_object_put(o);
}

static void
test_derr_cuts_on_utf8_boundaries(void)
{
	struct derr e;
	char field[128] = "", msg[1200] = "";
	size_t i;

	for (i = 0; i < 40; i++)
		strcat(field, "\xc3\xa9");              /* é: 80 bytes */
	for (i = 0; i < 200; i++)
		strcat(msg, i % 2 ? "\xe2\x82\xac" : "\xf0\x9f\x98\x80");   /* €, 😀 */
	derr_set(&e, DERR_INVALID, field, "unknown field '%s'", msg);
	CHECK(strlen(e.field) == 62 && utf8_valid(e.field, strlen(e.field)));
	CHECK(strlen(e.message) > 500 && utf8_valid(e.message, strlen(e.message)));
	derr_set(&e, DERR_INVALID, "\xc3\xa9", "%s", "x\xe2\x82\xac");
	CHECK(strcmp(e.field, "\xc3\xa9") == 0 && strcmp(e.message, "x\xe2\x82\xac") == 0);
}

/* The mode is per thread and a refusal is remembered only until its end. */
static void *
nowait_other_thread(void *arg)
{
	(void)arg;
	return nowait_active() ? (void *)1 : NULL;
}

static void
test_nowait_refusals_last_one_round(void)
{
	struct derr e = { 0 };
	pthread_t t;
	void *seen = (void *)1;

	CHECK(!nowait_active());
	nowait_begin();
	CHECK(nowait_active());
	CHECK(pthread_create(&t, NULL, nowait_other_thread, NULL) == 0 && pthread_join(t, &seen) == 0);
	CHECK(seen == NULL);
	CHECK(!nowait_end());
	CHECK(!nowait_active());
	nowait_begin();
	CHECK(!nowait_refused());
	CHECK(nowait_refuse(&e, "busy") == -1);
	CHECK(nowait_refused());
	CHECK(e.code == DERR_UNAVAILABLE && strstr(e.message, "busy") != NULL);
	CHECK(nowait_end());
	CHECK(!nowait_refused());
	nowait_begin();
	CHECK(!nowait_end());
}

/* Each published event reaches a subscriber as one SSE record whose data is
 * a JSON object with the fields given, plain words (printed directly) and
 * strings that need escaping (through json-c) alike. */
static void
test_events_records_are_json_with_every_field(void)
{
	static const char *const cases[][4] = {
		{ "action", "created", "0a1b2c3d", "9f8e7d6c" },
		{ "task", "updated", "0a1b2c3d", NULL },
		{ "recording", "updated", NULL, NULL },
		{ "wait", "up\"dated", "a\\b\nc", "caf\xc3\xa9 <x>" },
	};
	struct derr e = { 0 };
	struct events_sub *sub = events_sub_open(-1, -1, &e);
	char buf[4096], *p, *data;
	long n;
	size_t i;

	CHECK(sub != NULL);
	if (sub == NULL)
		return;
	n = events_sub_read(sub, buf, sizeof buf - 1);  /* the hello */
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		events_publish(cases[i][0], cases[i][1], cases[i][2], cases[i][3]);
	n = events_sub_read(sub, buf, sizeof buf - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	for (i = 0, p = buf; i < sizeof cases / sizeof cases[0]; i++) {
		json_object *o, *v;
		const char *keys[4] = { "type", "op", "task_id", "ref" };
		int k;

		data = strstr(p, "\ndata: ");
		CHECK(data != NULL);
		if (data == NULL)
			break;
		data += 7;
		p = strchr(data, '\n');
		CHECK(p != NULL);
		if (p == NULL)
			break;
		*p++ = '\0';
		o = jx_parse(data, strlen(data), &e);
		CHECK(o != NULL && json_object_is_type(o, json_type_object));
		for (k = 0; o != NULL && k < 4; k++) {
			bool has = json_object_object_get_ex(o, keys[k], &v);

			CHECK(has == (cases[i][k] != NULL));
			if (has && cases[i][k] != NULL)
				CHECK(strcmp(json_object_get_string(v), cases[i][k]) == 0);
		}
		CHECK(o != NULL && json_object_object_get_ex(o, "id", &v) &&
		    json_object_is_type(v, json_type_int));
		json_object_put(o);
	}
	events_sub_close(sub);
}

static void
test_b64_decode_round_trips_and_refuses_what_is_not_base64(void)
{
	unsigned char in[256], *out = NULL;
	size_t n = 0;
	char *enc;

	for (int i = 0; i < 256; i++)
		in[i] = (unsigned char)(255 - i);
	for (size_t len = 0; len < 8; len++) {      /* every padding case */
		enc = b64_encode(in, len, NULL);
		CHECK(b64_decode(enc, strlen(enc), 256, &out, &n) == 0 && n == len &&
		    memcmp(out, in, len) == 0);
		free(out);
		free(enc);
	}
	enc = b64_encode(in, sizeof in, NULL);
	CHECK(b64_decode(enc, strlen(enc), 256, &out, &n) == 0 && n == 256 && memcmp(out, in, 256) == 0);
	free(out);
	CHECK(b64_decode(enc, strlen(enc), 255, &out, &n) == -2 && out == NULL);
	free(enc);
	CHECK(b64_decode("aGk", 3, 16, &out, &n) == 0 && n == 2 && memcmp(out, "hi", 2) == 0);
	free(out);
	CHECK(b64_decode("aG\nk=", 5, 16, &out, &n) == 0 && n == 2);      /* whitespace, padding */
	free(out);
	CHECK(b64_decode("-_8=", 4, 16, &out, &n) == 0 && n == 2 && out[0] == 0xfb && out[1] == 0xff);
	free(out);
	CHECK(b64_decode("aGk=a", 5, 16, &out, &n) == -1 && out == NULL);  /* a digit after padding */
	CHECK(b64_decode("a", 1, 16, &out, &n) == -1);                     /* 6 bits are no byte */
	CHECK(b64_decode("aGk%", 4, 16, &out, &n) == -1);
	CHECK(b64_decode("aG===", 5, 16, &out, &n) == -1);
}

const struct harness_test util_tests[] = {
	{ "b64_decode_round_trips_and_refuses_what_is_not_base64",
	  test_b64_decode_round_trips_and_refuses_what_is_not_base64 },
	{ "iso_time_round_trips_through_time_parse", test_iso_time_round_trips_through_time_parse },
	{ "utf8_valid_rejects_overlongs_surrogates_and_truncation",
	  test_utf8_valid_rejects_overlongs_surrogates_and_truncation },
	{ "utf8_fix_replaces_invalid_bytes_and_cuts_between_characters",
	  test_utf8_fix_replaces_invalid_bytes_and_cuts_between_characters },
	{ "utf8_clip_marks_a_cut_with_an_ellipsis", test_utf8_clip_marks_a_cut_with_an_ellipsis },
	{ "utf8_valid_finds_a_bad_byte_at_any_offset", test_utf8_valid_finds_a_bad_byte_at_any_offset },
	{ "ids_are_8_hex_digits_and_distinct", test_ids_are_8_hex_digits_and_distinct },
	{ "row_ids_are_consecutive_until_a_jump", test_row_ids_are_consecutive_until_a_jump },
	{ "secure_streq", test_secure_streq },
	{ "buf_refuses_to_grow_past_its_cap", test_buf_refuses_to_grow_past_its_cap },
	{ "jx_parse_is_strict", test_jx_parse_is_strict },
	{ "jx_parse_keeps_client_json_as_sent", test_jx_parse_keeps_client_json_as_sent },
	{ "jx_getters_name_the_field", test_jx_getters_name_the_field },
	{ "derr_json_has_one_shape", test_derr_json_has_one_shape },
	{ "derr_cuts_on_utf8_boundaries", test_derr_cuts_on_utf8_boundaries },
	{ "nowait_refusals_last_one_round", test_nowait_refusals_last_one_round },
	{ "events_records_are_json_with_every_field", test_events_records_are_json_with_every_field },
	{ NULL, NULL },
};
