/*
 * fuzz_parse.c - libFuzzer target: every parser of untrusted text in detm
 * that is not HTTP framing. Byte 0 picks one: the vision verdict parser
 * (model answers), the UI-TARS answer parser (pixel and 0-1000 forms), the
 * GUI instruction parser (gui_do's words and explicit forms), the tool
 * router's schema check + request building (a tool from byte 1, arguments
 * from the rest), the JSON validators, the time and size parsers, and
 * the OSWorld server's form bodies (byte 0 = 6 with byte 1 odd: multipart
 * with a fixed boundary, or urlencoded, or a Content-Type read from the
 * first line; every field's bytes are read back).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ground.h"
#include "backends/vision.h"
#include "core/config.h"
#include "core/jx.h"
#include "core/util.h"
#include "gui/gui.h"
#include "http/osw_form.h"
#include "schema.h"
#include "toolreq.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	if (tools_init(err, sizeof err) != 0)
		abort();
	return 0;
}

static void
tool(uint8_t which, const char *text, size_t len)
{
	const struct tool *t = tools_at(which % tools_count());
	json_object *args, *q = json_object_new_object(), *body = json_object_new_object();
	struct derr e;
	char err[256], path[512];

	args = jx_parse(text, len, &e);
	if (args != NULL && json_object_is_type(args, json_type_object) &&
	    schema_check(tools_check_schema(t), args, err, sizeof err) == 0) {
		(void)toolreq_build(t, args, true, path, sizeof path, q, body);
		path[0] = '\0';
		(void)toolreq_query_string(q, path, sizeof path);
	}
	json_object_put(args);
	json_object_put(q);
	json_object_put(body);
}

/* What a route stores is jx_string's text of what jx_parse accepted; read
 * back through jx_parse it must be accepted and print the same (numbers keep
 * their text, keys stay distinct). */
static void
stored_reads_back(json_object *o)
{
	struct derr e;
	size_t len;
	char *text = xstrdup(jx_string(o, &len));
	json_object *again = jx_parse(text, len, &e);

	if (again == NULL || strcmp(jx_string(again, NULL), text) != 0)
		abort();
	json_object_put(again);
	free(text);
}

static void
validators(const char *text, size_t len)
{
	struct derr e;
	json_object *o = jx_parse(text, len, &e), *sub;
	const char *s;
	char *txt = NULL;
	int64_t i;
	double x;
	bool b, present;

	if (o == NULL)
		return;
	stored_reads_back(o);
	if (json_object_is_type(o, json_type_object)) {
		(void)jx_str(o, "name", false, 1, 200, &s, &e);
		(void)jx_int(o, "ordinal", false, 0, 1000, &i, &present, &e);
		(void)jx_num(o, "timeout", 0, 3600, &x, &present, &e);
		(void)jx_bool(o, "enabled", &b, &present, &e);
		(void)jx_obj(o, "metadata", &sub, &e);
		if (jx_any_text(o, "input_data", 65536, &txt, &e) == 0)
			free(txt);
	}
	json_object_put(o);
}

/* The form parser on raw bytes; which Content-Type by sel. */
static void
form(const uint8_t *p, size_t n, uint8_t sel)
{
	static const char *const types[] = { "multipart/form-data; boundary=B",
		"application/x-www-form-urlencoded", NULL };
	const char *ct = types[(sel >> 1) % 3];
	char line[128], out[64];
	struct osw_form f;
	struct derr e;
	size_t off = 0, sum = 0;

	if (ct == NULL) {       /* the first line is the Content-Type */
		const uint8_t *nl = memchr(p, '\n', n < sizeof line - 1 ? n : sizeof line - 1);

		off = nl ? (size_t)(nl - p) + 1 : 0;
		snprintf(line, sizeof line, "%.*s", (int)(nl ? nl - p : 0), (const char *)p);
		ct = line;
	}
	memset(&f, 0, sizeof f);
	derr_clear(&e);
	if (osw_form_bytes(ct, (const char *)p + off, n - off, &f, &e) == 0 && f.n > OSW_FORM_FIELDS)
		abort();
	for (int i = 0; i < f.n; i++) {
		for (size_t k = 0; k < f.f[i].len; k++)
			sum += (unsigned char)f.f[i].val[k];    /* every byte readable */
		(void)osw_form_text(&f, f.f[i].name, out, sizeof out);
	}
	(void)sum;
	osw_form_free(&f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char *text, reason[256], err[256];
	enum vision_verdict v;
	struct gui_cmd c;
	struct derr e;
	double x, y, box[4];
	bool has_box;
	int64_t ms;
	int w, h;

	if (n < 3)
		return 0;
	text = strndup((const char *)d + 2, n - 2);
	switch (d[0] % 7) {
	case 0:
		(void)vision_parse_verdict(text, &v, reason, sizeof reason);
		break;
	case 1:
		(void)ground_parse_uitars(text, 1 + d[1] * 8, 1 + d[1] * 4, d[1] & 1, &x, &y, &has_box,
		    box, err, sizeof err);
		break;
	case 2:
		(void)gui_parse(text, &c, &e);
		break;
	case 3:
		tool(d[1], text, strlen(text));
		break;
	case 4:
		validators(text, strlen(text));
		break;
	case 5:
		(void)time_parse(text, &ms);
		break;
	default:
		if (d[1] & 1)
			form(d + 2, n - 2, d[1]);
		else
			(void)config_parse_size(text, &w, &h);
		break;
	}
	free(text);
	return 0;
}
