/* test_oswform.c - the OSWorld server's form bodies (daemon/http/osw_form.c):
 * urlencoded as requests' data={...} sends it, multipart as its files={...}
 * does (binary bytes, CRLF inside a part, quoted parameters), and what is
 * refused (no boundary, no closing boundary, too many fields, other types). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "http/osw_form.h"
#include "unit.h"

static int
parse(const char *ct, const char *p, size_t n, struct osw_form *f)
{
	struct derr e;

	derr_clear(&e);
	memset(f, 0, sizeof *f);
	return osw_form_bytes(ct, p, n, f, &e);
}

static void
test_urlencoded_fields_are_decoded(void)
{
	static const char body[] = "file_path=%2Ftmp%2Fa+b%7E.txt&empty=&flag&bad=%zz%4";
	struct osw_form f;
	char out[64];

	CHECK(parse("application/x-www-form-urlencoded", body, strlen(body), &f) == 0);
	CHECK(f.n == 4);
	CHECK(strcmp(osw_form_text(&f, "file_path", out, sizeof out), "/tmp/a b~.txt") == 0);
	CHECK(osw_form_get(&f, "empty") != NULL && osw_form_get(&f, "empty")->len == 0);
	CHECK(osw_form_get(&f, "flag") != NULL);
	CHECK(strcmp(osw_form_text(&f, "bad", out, sizeof out), "%zz%4") == 0);
	CHECK(osw_form_get(&f, "missing") == NULL);
	CHECK(osw_form_text(&f, "missing", out, sizeof out)[0] == '\0');
	osw_form_free(&f);
}

static void
test_multipart_parts_keep_their_bytes(void)
{
	static const char body[] =
	    "--XyZ\r\nContent-Disposition: form-data; name=\"file_path\"\r\n\r\n~/d/x.bin\r\n"
	    "--XyZ\r\nContent-Disposition: form-data; name=\"file_data\"; filename=\"x.bin\"\r\n"
	    "Content-Type: application/octet-stream\r\n\r\nA\0B\r\n--Xy\r\nC\r\n--XyZ--\r\n";
	const struct osw_field *d;
	struct osw_form f;
	char out[64];

	CHECK(parse("multipart/form-data; boundary=XyZ", body, sizeof body - 1, &f) == 0);
	CHECK(f.n == 2);
	CHECK(strcmp(osw_form_text(&f, "file_path", out, sizeof out), "~/d/x.bin") == 0);
	d = osw_form_get(&f, "file_data");
	CHECK(d != NULL && strcmp(d->filename, "x.bin") == 0);
	CHECK(d != NULL && d->len == 12 && memcmp(d->val, "A\0B\r\n--Xy\r\nC", 12) == 0);
	osw_form_free(&f);
	/* A quoted boundary, and an empty part. */
	static const char b2[] = "--a b\r\nContent-Disposition: form-data; name=\"e\"\r\n\r\n\r\n--a b--";
	CHECK(parse("multipart/form-data; boundary=\"a b\"", b2, sizeof b2 - 1, &f) == 0);
	CHECK(f.n == 1 && osw_form_get(&f, "e")->len == 0);
	osw_form_free(&f);
}

static void
test_broken_bodies_are_refused(void)
{
	static const char open_end[] = "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx";
	static const char no_hdr_end[] = "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n--B--";
	static const char other_start[] = "junk--B\r\n\r\n\r\n--B--";
	struct osw_form f;
	char many[2048];
	size_t n = 0;

	CHECK(parse("multipart/form-data", "--B--", 5, &f) == -1);
	CHECK(parse("multipart/form-data; boundary=B", open_end, sizeof open_end - 1, &f) == -1);
	osw_form_free(&f);
	CHECK(parse("multipart/form-data; boundary=B", no_hdr_end, sizeof no_hdr_end - 1, &f) == -1);
	osw_form_free(&f);
	CHECK(parse("multipart/form-data; boundary=B", other_start, sizeof other_start - 1, &f) == -1);
	CHECK(parse("multipart/form-data; boundary=B", "", 0, &f) == -1);
	CHECK(parse("text/plain", "x", 1, &f) == -1);
	CHECK(parse(NULL, "", 0, &f) == 0 && f.n == 0);
	for (int i = 0; i < OSW_FORM_FIELDS + 1; i++)
		n += (size_t)snprintf(many + n, sizeof many - n, "%sk%d=v", i ? "&" : "", i);
	CHECK(parse("application/x-www-form-urlencoded", many, n, &f) == -1);
	CHECK(f.n == OSW_FORM_FIELDS);
	osw_form_free(&f);
}

/* A urlencoded body is not NUL-terminated (a request's raw bytes; the fuzzer's
 * input): here it ends right before a page no one may read, so any strlen
 * past its end (sscanf's on "%4e...") faults. The fuzzer's one rawmemchr
 * SEGV (parse-crash-1c20846c...) was that read running off its buffer. */
static void
test_urlencoded_stays_inside_the_body(void)
{
	static const char body[] = "a=%41%4e&b=x%4";
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p, out[64];
	struct osw_form f;

	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	CHECK(mprotect(m + pg, (size_t)pg, PROT_NONE) == 0);
	p = m + pg - (sizeof body - 1);
	memcpy(p, body, sizeof body - 1);
	CHECK(parse("application/x-www-form-urlencoded", p, sizeof body - 1, &f) == 0);
	CHECK(f.n == 2);
	CHECK(strcmp(osw_form_text(&f, "a", out, sizeof out), "AN") == 0);
	CHECK(strcmp(osw_form_text(&f, "b", out, sizeof out), "x%4") == 0);
	osw_form_free(&f);
	/* The last escape right at the end. */
	p = m + pg - 5;
	memcpy(p, "c=%7e", 5);
	CHECK(parse("application/x-www-form-urlencoded", p, 5, &f) == 0);
	CHECK(strcmp(osw_form_text(&f, "c", out, sizeof out), "~") == 0);
	osw_form_free(&f);
	munmap(m, (size_t)pg * 2);
}

const struct harness_test oswform_tests[] = {
	{ "oswform_urlencoded_stays_inside_the_body", test_urlencoded_stays_inside_the_body },
	{ "oswform_urlencoded_fields_are_decoded", test_urlencoded_fields_are_decoded },
	{ "oswform_multipart_parts_keep_their_bytes", test_multipart_parts_keep_their_bytes },
	{ "oswform_broken_bodies_are_refused", test_broken_bodies_are_refused },
	{ NULL, NULL },
};
