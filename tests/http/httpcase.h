/*
 * httpcase.h - the black-box HTTP case runner: data model and module contract.
 *
 * A case file (tests/http/cases/NAME.case) is a sequence of named steps; each
 * step is one HTTP request against a live detmd plus expectations on the
 * response. The grammar is documented in tests/http/README.md.
 *
 *   case.c    parse a file into struct hc_file (no I/O beyond reading it)
 *   expand.c  $VAR / ${VAR} / $(repeat N S) / \xNN expansion, variables
 *   request.c one request with libcurl -> struct hc_response
 *   jmatch.c  JSON paths, subset match, comparisons
 *   check.c   evaluate a step's expectations, captures
 *   main.c    command line, loop over files, counting, closing line
 *
 * Ownership: a struct hc_file owns every string in its steps; hc_file_free
 * releases all of it. Strings in steps are the raw (unexpanded) text.
 */
#ifndef DETM_HTTPCASE_H
#define DETM_HTTPCASE_H

#include <stddef.h>

#include <json-c/json.h>

/* ---- case files (case.c) ---- */

enum hc_kind {
	HC_STATUS,        /* => 201   or alternatives  => 400|404 */
	HC_ERROR,         /* => error CODE FIELD  (CODE a|b; FIELD name, null, a|b) */
	HC_JSON,          /* => json {subset} */
	HC_PATH,          /* => path .a.b OP VALUE    (==, !=, ~, !~, <, <=, >, >=) */
	HC_LEN,           /* => len .a OP N */
	HC_ABSENT,        /* => absent .a.b */
	HC_PRESENT,       /* => present .a.b */
	HC_TYPE,          /* => type .a.b string|number|int|null|object|array|bool */
	HC_HEADER,        /* => header Name: value    or   => header Name ~ value */
	HC_NOHEADER,      /* => noheader Name */
	HC_BODY,          /* => body ~ text   /  => body empty */
	HC_CAPTURE,       /* $T = .task_id */
};

struct hc_expect {
	enum hc_kind kind;
	int lineno;
	int status;       /* HC_STATUS */
	int status2;      /* HC_STATUS alternative, or 0 */
	char *a;          /* path, code, header name ... */
	char *op;         /* operator, or NULL */
	char *b;          /* value / field / json text */
};

struct hc_step {
	char *name;
	int lineno;
	char *method;
	char *path;
	char **headers;   /* raw "Name: value" lines */
	size_t nheaders;
	char *body;       /* NULL: no body at all */
	int sleep_ms;     /* @sleep MS before the request */
	struct hc_expect *ex;
	size_t nex;
};

struct hc_file {
	char *path;
	struct hc_step *steps;
	size_t nsteps;
};

/* Parse path. Returns 0 and fills *f (free with hc_file_free), or -1 with a
 * malloc'd message in *err (caller frees); *f is then empty. */
int hc_file_load(const char *path, struct hc_file *f, char **err);
void hc_file_free(struct hc_file *f);

/* ---- variables and expansion (expand.c) ---- */

struct hc_vars {
	char **names;
	char **values;
	size_t n;
};

void hc_vars_set(struct hc_vars *v, const char *name, const char *value);
const char *hc_vars_get(const struct hc_vars *v, const char *name);
void hc_vars_free(struct hc_vars *v);

/* Expand $NAME, ${NAME}, $$ and $(repeat N TEXT) in in; with bytes also the
 * \xNN escapes. Returns a malloc'd buffer (NUL-terminated; *len excludes the
 * NUL and may count embedded NULs), or NULL with a malloc'd *err. */
char *hc_expand(const char *in, const struct hc_vars *v, int bytes, size_t *len,
    char **err);

/* ---- HTTP (request.c) ---- */

struct hc_response {
	long status;
	char *body;       /* NUL-terminated; may be "" */
	size_t body_len;
	char *headers;    /* raw header block of the final response */
	char *error;      /* transport error, or NULL */
};

struct hc_request {
	const char *method;
	const char *url;
	const char *const *headers;
	size_t nheaders;
	const char *body; /* NULL: none */
	size_t body_len;
};

void hc_http_init(void);
void hc_http_cleanup(void);
/* Perform req; always fills *resp (free with hc_response_free). */
void hc_http_do(const struct hc_request *req, struct hc_response *resp);
void hc_response_free(struct hc_response *resp);
/* Value of header name (case-insensitive) in resp, malloc'd, or NULL. */
char *hc_response_header(const struct hc_response *resp, const char *name);

/* ---- JSON (jmatch.c) ---- */

/* Look up a path such as ".items[1].ordinal", ".messages[-1]" or "." in
 * root. Returns 0 and a borrowed *out (may be NULL for JSON null), or -1 if
 * the path does not exist. */
int hc_jpath(struct json_object *root, const char *path, struct json_object **out);

/* Subset match: every key of want is in got and matches recursively; arrays
 * have the same length and match element-wise. Strings "<any>", "<id>",
 * "<ts>", "<string>", "<nonempty>", "<number>", "<int>" are wildcards.
 * Returns 1 on match; else 0 and a description in why (size whysz). */
int hc_jmatch(struct json_object *want, struct json_object *got, const char *at,
    char *why, size_t whysz);

/* Exact deep equality (numbers compared by value). */
int hc_jequal(struct json_object *a, struct json_object *b);

/* Compact text of v ("null" for NULL); valid until v is freed. */
const char *hc_jtext(struct json_object *v);

/* ---- evaluation (check.c) ---- */

/* Check every expectation of step against resp; performs captures into vars.
 * Prints nothing. Returns 1 if all hold, else 0 with a description in why. */
int hc_check_step(const struct hc_step *step, const struct hc_response *resp,
    struct hc_vars *vars, char *why, size_t whysz);

/* Helpers shared by the modules. */
void *hc_xmalloc(size_t n);
void *hc_xrealloc(void *p, size_t n);
char *hc_xstrdup(const char *s);
char *hc_xstrndup(const char *s, size_t n);
char *hc_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
