/*
 * api_memory.c - POST /api/memory/search, /read and /append: the body's
 * shape (the names and defaults of the Python DETM's memory tools), then
 * memory.c does the work. Does not: touch files.
 */
#include "api.h"
#include "core/jx.h"
#include "task/memory.h"

int
api_memory_search(struct req *r, struct derr *e)
{
	const char *query;
	int64_t maxr = 10;
	json_object *o;

	if (api_body_check(r, api_memory_search, e) != 0 ||
	    jx_str(r->body, "query", true, 1, MEMORY_QUERY_MAX, &query, e) != 0 ||
	    jx_int(r->body, "max_results", false, 1, MEMORY_RESULTS_MAX, &maxr, NULL, e) != 0 ||
	    memory_search(r->app->cfg, query, (int)maxr, &o, e) != 0)
		return -1;
	return req_reply(r, 200, o);
}

int
api_memory_read(struct req *r, struct derr *e)
{
	const char *path = "MEMORY.md";
	int64_t offset = 1, limit = 100;
	json_object *o;

	if (api_body_check(r, api_memory_read, e) != 0 ||
	    jx_str(r->body, "path", false, 1, MEMORY_PATH_MAX, &path, e) != 0 ||
	    jx_int(r->body, "offset", false, 1, INT32_MAX, &offset, NULL, e) != 0 ||
	    jx_int(r->body, "limit", false, 1, MEMORY_LINES_MAX, &limit, NULL, e) != 0 ||
	    memory_read(r->app->cfg, path, offset, limit, &o, e) != 0)
		return -1;
	return req_reply(r, 200, o);
}

int
api_memory_append(struct req *r, struct derr *e)
{
	const char *note, *path = NULL;
	json_object *o;

	if (api_body_check(r, api_memory_append, e) != 0 ||
	    jx_str(r->body, "note", true, 1, MEMORY_NOTE_MAX, &note, e) != 0 ||
	    jx_str(r->body, "path", false, 1, MEMORY_PATH_MAX, &path, e) != 0 ||
	    memory_append(r->app->cfg, note, path, &o, e) != 0)
		return -1;
	return req_reply(r, 200, o);
}
