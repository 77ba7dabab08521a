/*
 * api_files.c - a task's own folder of files: GET /api/tasks/{id}/files
 * (list), PUT / GET / DELETE /api/tasks/{id}/files/{path*} (upload,
 * download, delete; path may hold '/', sent as is or as %2F).
 *
 * An upload's body is the file's bytes (any Content-Type but JSON), or
 * JSON {"content": text} / {"content_base64": ...}, which the file_upload
 * tool sends. A download is the raw bytes with a type from the name, or
 * with ?format=json the bytes as JSON (text when valid UTF-8, else base64),
 * which the file_download tool asks for. Handlers check the shape and call
 * task/files.c, which confines paths, caps sizes and logs on the task.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "core/jx.h"
#include "task/files.h"

int
api_files_list(struct req *r, struct derr *e)
{
	const char *id;
	json_object *out;

	if (api_known_task(r, &id, e) != 0 || files_list(id, &out, e) != 0)
		return -1;
	return req_reply(r, 200, out);
}

/* The upload's bytes: the raw body, or the JSON body's content (text) or
 * content_base64 (*owned then: the caller frees it). */
static int
upload_bytes(struct req *r, const unsigned char **data, size_t *len, unsigned char **owned,
    struct derr *e)
{
	const char *text = NULL;
	json_object *v = NULL;
	int d;

	*owned = NULL;
	if (r->in_raw != NULL) {
		*data = (const unsigned char *)r->in_raw;
		*len = r->in_raw_len;
		return 0;
	}
	if (jx_str(r->body, "content", false, 0, (size_t)-1, &text, e) != 0)
		return -1;
	if (json_object_object_get_ex(r->body, "content_base64", &v) && v != NULL &&
	    !json_object_is_type(v, json_type_string))
		return derr_set(e, DERR_INVALID, "content_base64", "content_base64 must be a string");
	if ((text == NULL) == (v == NULL))
		return derr_set(e, DERR_INVALID, text ? "content_base64" : "content",
		    "give exactly one of content (text) and content_base64, or send the file's bytes "
		    "as the body (any Content-Type but application/json)");
	if (text != NULL) {
		*data = (const unsigned char *)text;
		*len = strlen(text);
		return 0;
	}
	d = b64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v),
	    (size_t)FILES_MAX_BYTES, owned, len);
	if (d == -1)
		return derr_set(e, DERR_INVALID, "content_base64", "content_base64 is not base64");
	if (d == -2)
		return derr_set(e, DERR_TOO_LARGE, "content_base64", "a file holds at most %ld bytes",
		    FILES_MAX_BYTES);
	*data = *owned;
	return 0;
}

int
api_file_put(struct req *r, struct derr *e)
{
	const unsigned char *data = NULL;
	unsigned char *owned = NULL;
	const char *id;
	json_object *out, *v;
	size_t len = 0;
	int rc = -1;

	if (api_body_check(r, api_file_put, e) != 0 || api_known_task(r, &id, e) != 0 ||
	    upload_bytes(r, &data, &len, &owned, e) != 0)
		return -1;
	if (files_put(r->app->store, id, r->params[1], data, len, &out, e) == 0)
		rc = req_reply(r, json_object_object_get_ex(out, "created", &v) &&
		    json_object_get_boolean(v) ? 201 : 200, out);
	free(owned);
	return rc;
}

int
api_file_get(struct req *r, struct derr *e)
{
	const char *id, *fmt = req_query(r, "format"), *mime;
	json_object *out;
	uint64_t size;
	int fd;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	if (fmt != NULL && strcasecmp(fmt, "json") == 0) {
		if (files_get_json(r->app->store, id, r->params[1], &out, e) != 0)
			return -1;
		return req_reply(r, 200, out);
	}
	if (fmt != NULL && fmt[0] != '\0' && strcasecmp(fmt, "raw") != 0)
		return derr_set(e, DERR_INVALID, "format", "format must be raw (the bytes) or json");
	if (files_open(r->app->store, id, r->params[1], &fd, &size, &mime, e) != 0)
		return -1;
	return req_reply_fd(r, 200, mime, fd, 0, size);
}

int
api_file_delete(struct req *r, struct derr *e)
{
	const char *id;
	json_object *out;

	if (api_known_task(r, &id, e) != 0 ||
	    files_delete(r->app->store, id, r->params[1], &out, e) != 0)
		return -1;
	return req_reply(r, 200, out);
}
