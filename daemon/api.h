/*
 * api.h - what route handlers see: the request, the reply, the app.
 *
 * http.c parses and checks a request (auth, Host/Origin, route, body cap,
 * content type, JSON) before a handler runs; a handler reads r->body and
 * the path/query parameters, does its work through the model modules, and
 * either sets the reply (req_reply) and returns 0 or fills e and returns
 * -1. Handlers never format errors themselves.
 */
#ifndef DETM_API_H
#define DETM_API_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "config.h"
#include "derr.h"
#include "store.h"

struct MHD_Connection;

/* Everything the daemon shares between requests. Set up by main.c before
 * the server starts; read-only afterwards except where a module says so. */
struct app {
	const struct config *cfg;
	struct store *store;
	int64_t started_ms;
	int64_t started_mono_us;
	int port;               /* the bound port */
};

#define ROUTE_MAX_PARAMS 4

struct req {
	struct app *app;
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	const char *params[ROUTE_MAX_PARAMS];   /* {placeholders}, in order */
	int nparams;
	json_object *body;      /* the parsed body object; {} when empty */

	int status;             /* reply */
	json_object *reply;     /* owned */
};

typedef int (*route_fn)(struct req *r, struct derr *e);

struct route {
	const char *method;     /* GET (also answers HEAD), POST, PATCH, DELETE */
	const char *pattern;    /* "/api/tasks/{id}/items/{ordinal}" */
	route_fn fn;
	size_t max_body;        /* 0: the route takes no body */
	const char *summary;    /* one line, for docs and 404 hints */
};

/* The route table (routes.c). */
extern const struct route api_routes[];
extern const size_t api_nroutes;

/* Sets the reply; takes ownership of obj. Returns 0. */
int req_reply(struct req *r, int status, json_object *obj);
/* A query-string value (borrowed), or NULL. */
const char *req_query(struct req *r, const char *key);

/* Validate-or-fail helpers for path and query parameters. */
int req_task_id(struct req *r, int i, const char **out, struct derr *e);
int req_query_int(struct req *r, const char *key, int64_t min, int64_t max,
    int64_t def, int64_t *out, struct derr *e);

/* Handlers (api_task.c, api_sys.c). */
int api_health(struct req *r, struct derr *e);
int api_version(struct req *r, struct derr *e);
int api_capabilities(struct req *r, struct derr *e);
int api_routes_list(struct req *r, struct derr *e);
int api_task_create(struct req *r, struct derr *e);
int api_task_list(struct req *r, struct derr *e);
int api_task_get(struct req *r, struct derr *e);
int api_task_patch(struct req *r, struct derr *e);
int api_task_delete(struct req *r, struct derr *e);
int api_task_pause(struct req *r, struct derr *e);
int api_task_resume(struct req *r, struct derr *e);
int api_task_cancel(struct req *r, struct derr *e);
int api_items_append(struct req *r, struct derr *e);
int api_item_get(struct req *r, struct derr *e);
int api_item_patch(struct req *r, struct derr *e);
int api_action_create(struct req *r, struct derr *e);
int api_action_get(struct req *r, struct derr *e);
int api_action_patch(struct req *r, struct derr *e);
int api_log_create(struct req *r, struct derr *e);
int api_messages_get(struct req *r, struct derr *e);
int api_message_create(struct req *r, struct derr *e);

#endif
