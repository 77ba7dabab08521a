/*
 * http.h - the HTTP server (libmicrohttpd) in front of the route table.
 *
 * Threading: MHD's internal pool of epoll workers (--http-threads, one per
 * CPU by default) serves every connection; an idle or waiting connection
 * holds no thread. Handlers that never block run on a worker; the others
 * (X work, model calls, long polls, tool calls) run on side workers with
 * their connection suspended; streams and replies waiting for a commit
 * are suspended until woken (http_stream.c, http_side.c). Connection count and idle time are
 * capped by the config. Everything a handler touches must be thread-safe
 * (the store has its own lock).
 *
 * Every request passes, in order: URL length, Host and Origin (403),
 * bearer token (401), route match (404/405), Content-Length against the
 * route's cap (413), Content-Type (415), body accumulation with the cap,
 * JSON parse (400). Only then does the handler run. Every error leaves
 * through derr_to_json, so clients see one shape.
 */
#ifndef DETM_HTTP_H
#define DETM_HTTP_H

#include "api.h"

struct http;

/* Serves on an already bound and listening socket (ownership passes to the
 * server). Returns NULL with e filled on failure. */
struct http *http_start(struct app *app, int listen_fd, struct derr *e);
/* Stops accepting, closes connections, joins threads. NULL-safe. */
void http_stop(struct http *h);

/* Exposed for unit tests: does pattern match path? Fills params. */
int http_route_match(const char *pattern, const char *path,
    const char *params[ROUTE_MAX_PARAMS], size_t lens[ROUTE_MAX_PARAMS], int *nparams);
/* Is this Host header acceptable for a daemon listening on listen/port? */
int http_host_ok(const char *host, const char *listen, int port);
/* Is this Origin the same origin as host? */
int http_origin_ok(const char *origin, const char *host);

#endif
