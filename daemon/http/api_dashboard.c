/*
 * api_dashboard.c - GET /dashboard and /dashboard/{file}: the web dashboard's
 * files, compiled into detmd (embedded.h), so it needs nothing else at run
 * time. Only names in the embedded table are served: no path reaches the
 * file system. Each file has a strong ETag (If-None-Match -> 304).
 *
 * With a token (ACU_TOKEN), a browser opens /dashboard?token=T once: the
 * dispatcher accepts the query token on GET, and this handler turns it into
 * an HttpOnly SameSite=Strict cookie and redirects to /dashboard, so the
 * page's own requests (fetch, EventSource, <img>, <video>) carry it. The
 * cookie is set only when the query token is the daemon's token (a request
 * let in by its Bearer header may carry any ?token=).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "core/embedded.h"
#include "core/util.h"

static const struct {
	const char *ext, *type;
} types[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
};

static const char csp[] = "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; "
    "style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

static const struct embedded_file *
lookup(const char *name)
{
	for (const struct embedded_file *f = dashboard_files; f->name != NULL; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

static const char *
type_of(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < ARRAY_LEN(types); i++) {
		size_t k = strlen(types[i].ext);

		if (n > k && strcmp(name + n - k, types[i].ext) == 0)
			return types[i].type;
	}
	return "application/octet-stream";
}

static int
serve(struct req *r, const char *name, struct derr *e)
{
	const struct embedded_file *f = lookup(name);
	const char *inm = req_in_header(r, "If-None-Match");
	uint64_t h = 1469598103934665603ULL;    /* FNV-1a */
	char etag[24];
	unsigned char *copy;

	if (f == NULL)
		return derr_set(e, DERR_NOT_FOUND, NULL, "no dashboard file '%.*s'",
		    utf8_prec(name, 64), name);
	for (unsigned long i = 0; i < f->len; i++)
		h = (h ^ f->data[i]) * 1099511628211ULL;
	snprintf(etag, sizeof etag, "\"%016llx\"", (unsigned long long)h);
	req_header(r, "ETag", "%s", etag);
	req_header(r, "Content-Security-Policy", "%s", csp);
	req_header(r, "X-Frame-Options", "DENY");
	req_header(r, "Referrer-Policy", "no-referrer");
	if (inm != NULL && strcmp(inm, etag) == 0)
		return req_reply_raw(r, 304, type_of(name), xmalloc(1), 0);
	copy = xmalloc(f->len + 1);
	memcpy(copy, f->data, f->len);
	return req_reply_raw(r, 200, type_of(name), copy, f->len);
}

int
api_dashboard(struct req *r, struct derr *e)
{
	const char *token = req_query(r, "token");

	/* The dispatcher let the request in on its Authorization header when
	 * it had one, without looking at ?token=: the cookie is only ever the
	 * daemon's own token, never whatever the query held. */
	if (token != NULL && r->app->cfg->token[0] != '\0' && secure_streq(token, r->app->cfg->token)) {
		req_header(r, "Set-Cookie", "detm_token=%s; Path=/; HttpOnly; SameSite=Strict", token);
		req_header(r, "Location", "/dashboard");
		return req_reply_raw(r, 303, "text/plain; charset=utf-8", (unsigned char *)xstrdup("see /dashboard"), 14);
	}
	return serve(r, "index.html", e);
}

int
api_dashboard_file(struct req *r, struct derr *e)
{
	return serve(r, r->nparams > 0 ? r->params[0] : "", e);
}
