/*
 * http_check.c - what a request must pass before its handler runs, in the
 * order of http.h: framing (RFC 9112: one Content-Length, no
 * Content-Length beside Transfer-Encoding, chunked only, Host), URL length
 * and UTF-8, Host and Origin (403), the bearer token (401), the route
 * (404/405, matched on the raw path so "%2F" stays inside a parameter),
 * the body's declared size against the route's cap (413) and its
 * Content-Type (415; a ROUTE_RAW route takes any). Also whether an early error is answered at once or
 * after the body is drained.
 *
 * Invariant: every check reads only the headers and the request target;
 * a failure fills hr->err (one derr, so one reply shape) and leaves
 * hr->route NULL or set as far as it got. Nothing here sends a reply,
 * reads the body or runs a handler (http.c, http_req.c).
 */
#include "http_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lim.h"

int
http_route_match(const char *pattern, const char *path,
    const char *params[ROUTE_MAX_PARAMS], size_t lens[ROUTE_MAX_PARAMS], int *nparams)
{
	const char *p = pattern, *u = path;

	*nparams = 0;
	while (*p != '\0' && *u != '\0') {
		if (*p == '{') {
			const char *close = strchr(p, '}');
			/* "{name*}" (last in a pattern) takes the rest of the path,
			 * slashes and all: a file's path below a folder. */
			bool rest = close != NULL && close > p && close[-1] == '*';
			size_t n = rest ? strlen(u) : strcspn(u, "/");

			if (close == NULL || n == 0 || *nparams >= ROUTE_MAX_PARAMS)
				return 0;
			params[*nparams] = u;
			lens[*nparams] = n;
			(*nparams)++;
			p = close + 1;
			u += n;
			continue;
		}
		if (*p != *u)
			return 0;
		p++;
		u++;
	}
	/* Tolerate one trailing slash on the request. */
	if (*p == '\0' && u[0] == '/' && u[1] == '\0')
		return 1;
	return *p == '\0' && *u == '\0';
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Copies a host (without :port or [brackets]) into out. */
static void
host_name(const char *host, char *out, size_t cap)
{
	size_t n;

	if (host[0] == '[') {
		const char *close = strchr(host, ']');

		n = close ? (size_t)(close - host - 1) : strlen(host + 1);
		host++;
	} else {
		n = strcspn(host, ":");
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(out, host, n);
	out[n] = '\0';
}

int
http_host_ok(const char *host, const char *listen, int port)
{
	static const char *const loopback[] = { "localhost", "127.0.0.1", "::1" };
	char name[256];
	const char *colon;
	size_t i;

	if (host == NULL)
		return 1;               /* HTTP/1.0 without Host: nothing to check */
	host_name(host, name, sizeof name);
	colon = host[0] == '[' ? strstr(host, "]:") : strchr(host, ':');
	if (colon != NULL && atoi(colon + (host[0] == '[' ? 2 : 1)) != port)
		return 0;
	for (i = 0; i < ARRAY_LEN(loopback); i++) {
		if (strcasecmp(name, loopback[i]) == 0)
			return 1;
	}
	return strcasecmp(name, listen) == 0;
}

int
http_origin_ok(const char *origin, const char *host)
{
	if (origin == NULL)
		return 1;
	if (host == NULL || strncmp(origin, "http://", 7) != 0)
		return 0;
	return strcasecmp(origin + 7, host) == 0;
}

static int
is_loopback(const char *addr)
{
	return strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0 ||
	    strcmp(addr, "localhost") == 0;
}

/* Decodes %XX escapes in a path parameter in place. -1 (s unchanged in
 * meaning) when an escape is malformed or decodes to NUL: a parameter is
 * text, and a NUL would cut it short further on. */
static int
param_decode(char *s)
{
	char *o = s;

	for (; *s != '\0'; s++) {
		int hi, lo;

		if (*s != '%') {
			*o++ = *s;
			continue;
		}
		hi = hexval(s[1]);
		lo = hi < 0 ? -1 : hexval(s[2]);
		if (lo < 0 || (hi == 0 && lo == 0))
			return -1;
		*o++ = (char)(hi * 16 + lo);
		s += 2;
	}
	*o = '\0';
	return 0;
}

/* Finds the route for a path as sent (percent-escapes undecoded, so an
 * escaped '/' stays inside one parameter); parameters come out decoded.
 * Fills hr->err with 400/404/405 when there is none. */
void
http_route_find(struct hreq *hr, const char *method, const char *url)
{
	const char *params[ROUTE_MAX_PARAMS];
	size_t lens[ROUTE_MAX_PARAMS], i;
	const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;
	int np, k, path_known = 0;

	for (i = 0; i < api_nroutes; i++) {
		const struct route *rt = &api_routes[i];

		if (!http_route_match(rt->pattern, url, params, lens, &np))
			continue;
		if (strcmp(rt->method, m) != 0) {
			size_t o = strlen(hr->allow);

			if (o + strlen(rt->method) + 3 < sizeof hr->allow)
				snprintf(hr->allow + o, sizeof hr->allow - o, "%s%s",
				    o ? ", " : "", rt->method);
			path_known = 1;
			continue;
		}
		hr->route = rt;
		for (k = 0; k < np; k++) {
			hr->param_copies[k] = xstrndup(params[k], lens[k]);
			hr->params[k] = hr->param_copies[k];
		}
		hr->nparams = np;
		for (k = 0; k < np; k++)
			if (param_decode(hr->param_copies[k]) != 0) {
				derr_set(&hr->err, DERR_INVALID, NULL,
				    "a path segment holds a NUL byte or a bad %%-escape");
				hr->route = NULL;
				return;
			}
		return;
	}
	if (path_known)
		derr_set(&hr->err, DERR_METHOD, NULL, "%s is not allowed on %s (allowed: %s)",
		    method, url, hr->allow);
	else
		derr_set(&hr->err, DERR_NOT_FOUND, NULL, "no route %s %s (GET /api/routes lists them)",
		    method, url);
}

/* Adds the length of one query argument (key=value&) to *cls. */
static enum MHD_Result
query_len(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	size_t *total = cls;

	(void)kind;
	*total += strlen(key) + (value != NULL ? strlen(value) : 0) + 2;
	return MHD_YES;
}

struct hdr_count {
	int clen, te, host;
};

static enum MHD_Result
count_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct hdr_count *c = cls;

	(void)kind;
	(void)value;
	if (strcasecmp(key, "Content-Length") == 0)
		c->clen++;
	else if (strcasecmp(key, "Transfer-Encoding") == 0)
		c->te++;
	else if (strcasecmp(key, "Host") == 0)
		c->host++;
	return MHD_YES;
}

/* Request framing that libmicrohttpd 0.9.75 lets through (RFC 9112 6.3,
 * 3.2): several Content-Length or Host headers, Content-Length together
 * with Transfer-Encoding, a coding other than chunked, HTTP/1.1 without
 * Host. Checked before any body byte is read, so nothing ambiguous is ever
 * parsed. (A Content-Length MHD cannot parse at all it answers itself,
 * before this runs; see docs/security.md.) Fills *e; -1 on a bad frame. */
static int
check_framing(struct MHD_Connection *conn, const char *version, struct derr *e)
{
	struct hdr_count c = { 0, 0, 0 };
	const char *te;

	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_framing, &c);
	if (c.clen > 1)
		return derr_set(e, DERR_INVALID, NULL, "several Content-Length headers");
	if (c.te > 1 || (c.te == 1 && c.clen == 1))
		return derr_set(e, DERR_INVALID, NULL,
		    "Transfer-Encoding must come alone and once (no Content-Length beside it)");
	if (c.host > 1)
		return derr_set(e, DERR_INVALID, NULL, "several Host headers");
	if (c.host == 0 && version != NULL && strcmp(version, "HTTP/1.0") != 0)
		return derr_set(e, DERR_INVALID, NULL, "an HTTP/1.1 request needs a Host header");
	te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
	if (te != NULL && strcasecmp(te, "chunked") != 0)
		return derr_set(e, DERR_NOT_IMPLEMENTED, NULL,
		    "Transfer-Encoding '%.32s' is not supported (only chunked)", te);
	return 0;
}

/* A route the table marks ROUTE_OPEN (the probes): exact path, GET/HEAD. */
static bool
open_route(const char *method, const char *path)
{
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return false;
	for (size_t i = 0; i < api_nroutes; i++)
		if ((api_routes[i].flags & ROUTE_OPEN) && strcmp(api_routes[i].pattern, path) == 0)
			return true;
	return false;
}

/* The checks that need only the headers. Fills hr->err on failure. */
void
http_check_headers(struct http *h, struct hreq *hr, struct MHD_Connection *conn,
    const char *method, const char *url, const char *version)
{
	const struct config *cfg = h->app->cfg;
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	const char *auth, *clen, *ctype, *te;
	size_t qlen = 0;

	if (check_framing(conn, version, &hr->err) != 0)
		return;
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, query_len, &qlen);
	if (hr->raw_too_long || hr->raw_path == NULL || strlen(url) + qlen > LIM_URL_BYTES) {
		derr_set(&hr->err, DERR_INVALID, NULL, "URL too long (at most %d bytes)", LIM_URL_BYTES);
		return;
	}
	if (!utf8_valid(url, strlen(url)) || !utf8_valid(hr->raw_path, strlen(hr->raw_path))) {
		derr_set(&hr->err, DERR_INVALID, NULL, "URL is not valid UTF-8");
		return;
	}
	/* With a token and a public address the token is the defence; on
	 * loopback, Host pinning stops DNS rebinding. */
	if ((cfg->token[0] == '\0' || is_loopback(cfg->listen)) &&
	    !http_host_ok(host, cfg->listen, h->app->port)) {
		derr_set(&hr->err, DERR_FORBIDDEN, NULL,
		    "Host '%s' is not this daemon (use 127.0.0.1 or localhost)", host);
		return;
	}
	if (!http_origin_ok(origin, host)) {
		derr_set(&hr->err, DERR_FORBIDDEN, NULL,
		    "cross-origin requests are refused (Origin '%s')", origin);
		return;
	}
	if (cfg->token[0] != '\0' && !open_route(method, hr->raw_path)) {
		/* The header; for browsers, the dashboard's cookie; for GET
		 * links (<img>, <video>, the first visit of /dashboard), ?token=. */
		const char *cookie = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, "detm_token");
		const char *qtok = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ?
		    MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token") : NULL;
		bool good;

		auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
		if (auth != NULL)
			good = strncasecmp(auth, "Bearer ", 7) == 0 && secure_streq(auth + 7, cfg->token);
		else if (qtok != NULL)
			good = secure_streq(qtok, cfg->token);
		else
			good = cookie != NULL && secure_streq(cookie, cfg->token);
		if (!good) {
			derr_set(&hr->err, DERR_UNAUTHORIZED, NULL, "%s",
			    auth || qtok || cookie ? "wrong token" :
			    "this daemon needs 'Authorization: Bearer <token>'");
			return;
		}
	}
	http_route_find(hr, method, hr->raw_path);
	if (hr->route == NULL)
		return;
	clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
	if ((clen == NULL || strcmp(clen, "0") == 0) && te == NULL)
		return;                 /* no body */
	if (clen != NULL && strtoull(clen, NULL, 10) > (hr->route->max_body ? hr->route->max_body : 0)) {
		if (hr->route->max_body == 0)
			derr_set(&hr->err, DERR_TOO_LARGE, NULL, "%s %s takes no body", method,
			    hr->route->pattern);
		else
			derr_set(&hr->err, DERR_TOO_LARGE, NULL, "body too large (at most %zu bytes)",
			    hr->route->max_body);
		return;
	}
	if (hr->route->flags & ROUTE_RAW)
		return;                 /* any bytes; JSON when sent as JSON (http_req.c) */
	ctype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0 ||
	    (ctype[16] != '\0' && ctype[16] != ';' && ctype[16] != ' ')) {
		derr_set(&hr->err, DERR_MEDIA, NULL,
		    "the body must be JSON sent with Content-Type: application/json (got %s)",
		    ctype ? ctype : "none");
		return;
	}
}

/* After an error found in the headers: answer at once, or first read and
 * drop the body? A reply sent while the client is still sending is often
 * lost: closing a socket with unread bytes makes the kernel reset the
 * connection, and the client sees "connection reset" instead of our 413 or
 * 404. So a body of up to LIM_DRAIN_BYTES (declared, or chunked: counted as
 * it comes) is read and dropped first. A client that sent "Expect:
 * 100-continue" waits for us and gets the answer at once; so does a body
 * declared larger than LIM_DRAIN_BYTES, and a request without a body. */
bool
http_answer_before_body(struct MHD_Connection *conn)
{
	const char *clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
	const char *expect = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Expect");

	if (expect != NULL && strcasecmp(expect, "100-continue") == 0)
		return true;
	if (te != NULL)         /* chunked is drained; any other coding cannot be */
		return strcasecmp(te, "chunked") != 0;
	if (clen == NULL)
		return true;
	return strtoull(clen, NULL, 10) == 0 || strtoull(clen, NULL, 10) > LIM_DRAIN_BYTES;
}
