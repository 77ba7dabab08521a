/*
 * check.c - evaluate one step's expectations against its response.
 *
 * Every expectation is checked (not just the first failing one) and each
 * failure is appended to the "why" text as "expected ..., got ...". The
 * response body is parsed as JSON only when an expectation needs it; a body
 * that is not JSON fails those expectations. Captures run in file order and
 * only store a variable when the path exists.
 *
 * Every step also checks that a JSON or text reply is valid UTF-8.
 *
 * "=> error CODE FIELD" asserts the one error shape of docs/api.md:
 *   {"error":{"code":CODE,"message":<non-empty string>,"field":FIELD}}
 * where FIELD is a name, "null", or alternatives "a|b" (each a name or null)
 * and CODE may be alternatives too; it also asserts that the status is the
 * one docs/api.md gives for the code the daemon sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httpcase.h"
#include "../oracle/utf8.h"

struct ctx {
	const struct hc_response *resp;
	struct hc_vars *vars;
	struct json_object *json;
	int parsed;
	char *why;
	size_t whysz;
	int ok;
};

static void
fail(struct ctx *c, int lineno, const char *msg)
{
	size_t n = strlen(c->why);

	c->ok = 0;
	if (n + 8 < c->whysz)
		snprintf(c->why + n, c->whysz - n, "%sline %d: %s", n ? "; " : "", lineno, msg);
}

static struct json_object *
body_json(struct ctx *c, int *okp)
{
	enum json_tokener_error jerr;
	struct json_tokener *tok;

	if (!c->parsed) {
		c->parsed = 1;
		tok = json_tokener_new();
		c->json = json_tokener_parse_ex(tok, c->resp->body, (int)c->resp->body_len);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_success || json_tokener_get_parse_end(tok) != c->resp->body_len) {
			json_object_put(c->json);
			c->json = NULL;
			c->parsed = -1;
		}
		json_tokener_free(tok);
	}
	*okp = c->parsed == 1;
	return c->json;
}

static const struct {
	const char *code;
	long status;
} codes[] = {
	{ "invalid_argument", 400 }, { "unauthorized", 401 }, { "forbidden", 403 },
	{ "not_found", 404 }, { "method_not_allowed", 405 }, { "conflict", 409 },
	{ "payload_too_large", 413 }, { "unsupported_media_type", 415 }, { "internal", 500 },
	{ "not_implemented", 501 }, { "unavailable", 503 },
};

static int
field_ok(const char *alts, struct json_object *field)
{
	const char *s = alts, *e;
	const char *got = json_object_is_type(field, json_type_string) ?
	    json_object_get_string(field) : NULL;
	size_t n;

	for (;;) {
		e = strchr(s, '|');
		n = e != NULL ? (size_t)(e - s) : strlen(s);
		if (n == 4 && strncmp(s, "null", 4) == 0) {
			if (field == NULL)
				return 1;
		} else if (got != NULL && strlen(got) == n && strncmp(got, s, n) == 0) {
			return 1;
		}
		if (e == NULL)
			return 0;
		s = e + 1;
	}
}

static void
check_error(struct ctx *c, const struct hc_expect *x)
{
	struct json_object *root, *err, *code, *msg, *field;
	char buf[512];
	size_t i;
	int okj;

	root = body_json(c, &okj);
	if (!okj || !json_object_object_get_ex(root, "error", &err) ||
	    !json_object_is_type(err, json_type_object)) {
		snprintf(buf, sizeof buf, "expected error %s %s, got a body that is not "
		    "{\"error\":{...}}", x->a, x->b);
		fail(c, x->lineno, buf);
		return;
	}
	if (!json_object_object_get_ex(err, "code", &code) ||
	    !json_object_is_type(code, json_type_string) ||
	    !field_ok(x->a, code)) {
		snprintf(buf, sizeof buf, "expected error code %s, got %.100s", x->a, hc_jtext(code));
		fail(c, x->lineno, buf);
	}
	if (!json_object_object_get_ex(err, "message", &msg) ||
	    !json_object_is_type(msg, json_type_string) || json_object_get_string_len(msg) == 0) {
		snprintf(buf, sizeof buf, "expected a non-empty error message, got %.100s",
		    hc_jtext(msg));
		fail(c, x->lineno, buf);
	}
	if (!json_object_object_get_ex(err, "field", &field)) {
		snprintf(buf, sizeof buf, "expected error field %s, key \"field\" missing", x->b);
		fail(c, x->lineno, buf);
	} else if (!field_ok(x->b, field)) {
		snprintf(buf, sizeof buf, "expected error field %s, got %.100s", x->b, hc_jtext(field));
		fail(c, x->lineno, buf);
	}
	for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
		if (json_object_is_type(code, json_type_string) &&
		    strcmp(codes[i].code, json_object_get_string(code)) == 0 &&
		    codes[i].status != c->resp->status) {
			snprintf(buf, sizeof buf, "expected status %ld for code %s, got %ld",
			    codes[i].status, codes[i].code, c->resp->status);
			fail(c, x->lineno, buf);
		}
	}
}

/* Compare got against the expanded value text with op. */
static int
compare(const char *op, struct json_object *got, const char *val)
{
	struct json_object *want;
	const char *g;
	double a, b;
	int r;

	if (strcmp(op, "~") == 0 || strcmp(op, "!~") == 0) {
		g = json_object_is_type(got, json_type_string) ? json_object_get_string(got) :
		    hc_jtext(got);
		r = strstr(g, val) != NULL;
		return op[0] == '~' ? r : !r;
	}
	want = json_tokener_parse(val);
	if (want == NULL && strcmp(val, "null") != 0)
		return -1;
	if (strcmp(op, "==") == 0 || strcmp(op, "!=") == 0) {
		r = hc_jequal(want, got);
		json_object_put(want);
		return op[0] == '=' ? r : !r;
	}
	if (!json_object_is_type(want, json_type_int) && !json_object_is_type(want, json_type_double)) {
		json_object_put(want);
		return -1;
	}
	b = json_object_get_double(want);
	json_object_put(want);
	if (!json_object_is_type(got, json_type_int) && !json_object_is_type(got, json_type_double))
		return 0;
	a = json_object_get_double(got);
	if (strcmp(op, "<") == 0)
		return a < b;
	if (strcmp(op, "<=") == 0)
		return a <= b;
	if (strcmp(op, ">") == 0)
		return a > b;
	return a >= b;
}

static int
type_ok(const char *t, struct json_object *v)
{
	if (strcmp(t, "null") == 0)
		return v == NULL;
	if (strcmp(t, "string") == 0)
		return json_object_is_type(v, json_type_string);
	if (strcmp(t, "int") == 0)
		return json_object_is_type(v, json_type_int);
	if (strcmp(t, "number") == 0)
		return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
	if (strcmp(t, "object") == 0)
		return json_object_is_type(v, json_type_object);
	if (strcmp(t, "array") == 0)
		return json_object_is_type(v, json_type_array);
	if (strcmp(t, "bool") == 0)
		return json_object_is_type(v, json_type_boolean);
	return 0;
}

static void
check_one(struct ctx *c, const struct hc_expect *x)
{
	struct json_object *root, *v = NULL, *want;
	char buf[1024], *val = NULL, *err = NULL, *h;
	int okj, r;

	if (x->b != NULL && (val = hc_expand(x->b, c->vars, 0, NULL, &err)) == NULL) {
		fail(c, x->lineno, err);
		free(err);
		return;
	}
	switch (x->kind) {
	case HC_STATUS:
		if (c->resp->status != x->status && c->resp->status != x->status2) {
			if (x->status2 != 0)
				snprintf(buf, sizeof buf, "expected status %d or %d, got %ld", x->status,
				    x->status2, c->resp->status);
			else
				snprintf(buf, sizeof buf, "expected status %d, got %ld", x->status,
				    c->resp->status);
			fail(c, x->lineno, buf);
		}
		break;
	case HC_ERROR:
		check_error(c, x);
		break;
	case HC_JSON:
		root = body_json(c, &okj);
		want = json_tokener_parse(val);
		if (want == NULL) {
			fail(c, x->lineno, "bad JSON in '=> json' line");
		} else if (!okj) {
			fail(c, x->lineno, "expected a JSON body, got something else");
		} else if (!hc_jmatch(want, root, ".", buf, sizeof buf)) {
			fail(c, x->lineno, buf);
		}
		json_object_put(want);
		break;
	case HC_PATH:
	case HC_LEN:
	case HC_ABSENT:
	case HC_PRESENT:
	case HC_TYPE:
	case HC_CAPTURE:
		root = body_json(c, &okj);
		if (!okj) {
			fail(c, x->lineno, "expected a JSON body, got something else");
			break;
		}
		r = hc_jpath(root, x->kind == HC_CAPTURE ? val : x->a, &v);
		if (x->kind == HC_ABSENT) {
			if (r == 0) {
				snprintf(buf, sizeof buf, "expected %s absent, got %.200s", x->a, hc_jtext(v));
				fail(c, x->lineno, buf);
			}
			break;
		}
		if (r != 0) {
			snprintf(buf, sizeof buf, "expected %s to exist, it does not",
			    x->kind == HC_CAPTURE ? val : x->a);
			fail(c, x->lineno, buf);
			break;
		}
		if (x->kind == HC_CAPTURE) {
			hc_vars_set(c->vars, x->a, json_object_is_type(v, json_type_string) ?
			    json_object_get_string(v) : hc_jtext(v));
		} else if (x->kind == HC_TYPE) {
			if (!type_ok(val, v)) {
				snprintf(buf, sizeof buf, "expected %s of type %s, got %.200s", x->a, val,
				    hc_jtext(v));
				fail(c, x->lineno, buf);
			}
		} else if (x->kind == HC_LEN) {
			struct json_object *n;
			size_t len = json_object_is_type(v, json_type_array) ? json_object_array_length(v) :
			    json_object_is_type(v, json_type_object) ? (size_t)json_object_object_length(v) :
			    json_object_is_type(v, json_type_string) ? (size_t)json_object_get_string_len(v) : 0;

			n = json_object_new_int64((int64_t)len);
			r = compare(x->op, n, val);
			json_object_put(n);
			if (r != 1) {
				snprintf(buf, sizeof buf, "expected len %s %s %s, got %zu", x->a, x->op, val, len);
				fail(c, x->lineno, buf);
			}
		} else if (x->kind == HC_PATH) {
			r = compare(x->op, v, val);
			if (r < 0) {
				snprintf(buf, sizeof buf, "bad value '%s' for %s", val, x->op);
				fail(c, x->lineno, buf);
			} else if (r == 0) {
				snprintf(buf, sizeof buf, "expected %s %s %s, got %.300s", x->a, x->op, val,
				    hc_jtext(v));
				fail(c, x->lineno, buf);
			}
		}
		break;
	case HC_HEADER:
		h = hc_response_header(c->resp, x->a);
		if (h == NULL || (strcmp(x->op, "~") == 0 ? strstr(h, val) == NULL : strcmp(h, val) != 0)) {
			snprintf(buf, sizeof buf, "expected header %s %s '%s', got %s%s%s", x->a,
			    x->op, val, h ? "'" : "", h ? h : "none", h ? "'" : "");
			fail(c, x->lineno, buf);
		}
		free(h);
		break;
	case HC_NOHEADER:
		h = hc_response_header(c->resp, x->a);
		if (h != NULL) {
			snprintf(buf, sizeof buf, "expected no header %s, got '%s'", x->a, h);
			fail(c, x->lineno, buf);
		}
		free(h);
		break;
	case HC_BODY:
		if (strcmp(x->op, "empty") == 0)
			r = c->resp->body_len == 0;
		else
			r = (strstr(c->resp->body, val) != NULL) == (x->op[0] == '~');
		if (!r) {
			snprintf(buf, sizeof buf, "expected body %s '%s', got '%.200s'", x->op, val,
			    c->resp->body);
			fail(c, x->lineno, buf);
		}
		break;
	}
	free(val);
}


int
hc_check_step(const struct hc_step *step, const struct hc_response *resp,
    struct hc_vars *vars, char *why, size_t whysz)
{
	struct ctx c;
	size_t i;

	memset(&c, 0, sizeof c);
	c.resp = resp;
	c.vars = vars;
	c.why = why;
	c.whysz = whysz;
	c.ok = 1;
	why[0] = '\0';
	if (resp->error != NULL) {
		fail(&c, step->lineno, resp->error);
		return 0;
	}
	/* Every reply that is text must be valid UTF-8, in every case. */
	if (resp->headers != NULL && (strcasestr(resp->headers, "content-type: application/json") ||
	    strcasestr(resp->headers, "content-type: text/")) &&
	    !utf8_strict(resp->body, resp->body_len))
		fail(&c, step->lineno, "the reply is not valid UTF-8");
	/* Status first, so it leads the failure text. */
	for (i = 0; i < step->nex; i++)
		if (step->ex[i].kind == HC_STATUS)
			check_one(&c, &step->ex[i]);
	for (i = 0; i < step->nex; i++)
		if (step->ex[i].kind != HC_STATUS)
			check_one(&c, &step->ex[i]);
	json_object_put(c.json);
	return c.ok;
}
