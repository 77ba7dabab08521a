/*
 * api_clip.c - the clipboard routes: GET/PUT /api/tasks/{id}/clipboard (the
 * task's display: its own, else the shared desktop) and GET/PUT
 * /api/clipboard (task_id in the query or body, else the shared desktop),
 * which the clipboard_get / clipboard_set tools use.
 *
 * Handlers check the request's shape (selection, format, exactly one of
 * text and image_base64, sizes) and call deskclip_get / deskclip_set.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "core/jx.h"
#include "desktop/deskclip.h"

/* selection from the body or (from_query) the query: clipboard by default. */
static int
selection(struct req *r, bool from_query, enum clip_sel *sel, struct derr *e)
{
	const char *s = NULL;

	if (jx_str(r->body, "selection", false, 1, 16, &s, e) != 0)
		return -1;
	if (s == NULL && from_query)
		s = req_query(r, "selection");
	if (s != NULL && s[0] == '\0')
		s = NULL;
	if (clip_sel_parse(s, sel) != 0)
		return derr_set(e, DERR_INVALID, "selection", "selection must be clipboard or primary");
	return 0;
}

static int
clip_get(struct req *r, const char *task_id, struct derr *e)
{
	const char *f = req_query(r, "format");
	enum clip_want want = CLIP_WANT_AUTO;
	enum clip_sel sel;
	json_object *out;

	if (selection(r, true, &sel, e) != 0)
		return -1;
	if (f != NULL && strcasecmp(f, "text") == 0)
		want = CLIP_WANT_TEXT;
	else if (f != NULL && (strcasecmp(f, "image") == 0 || strcasecmp(f, "png") == 0))
		want = CLIP_WANT_IMAGE;
	else if (f != NULL && f[0] != '\0' && strcasecmp(f, "auto") != 0)
		return derr_set(e, DERR_INVALID, "format", "format must be auto, text or image");
	if (deskclip_get(r->app, task_id, sel, want, &out, e) != 0)
		return -1;
	return req_reply(r, 200, out);
}

static int
clip_set(struct req *r, const char *task_id, struct derr *e)
{
	json_object *v, *out;
	const char *text = NULL, *b64;
	unsigned char *png = NULL;
	size_t len = 0;
	enum clip_sel sel;
	int rc = -1, d;

	if (selection(r, false, &sel, e) != 0 ||
	    jx_str(r->body, "text", false, 0, (size_t)-1, &text, e) != 0)
		return -1;
	v = NULL;
	if (json_object_object_get_ex(r->body, "image_base64", &v) && v != NULL &&
	    !json_object_is_type(v, json_type_string))
		return derr_set(e, DERR_INVALID, "image_base64", "image_base64 must be a string");
	b64 = v != NULL ? json_object_get_string(v) : NULL;
	if ((text == NULL) == (b64 == NULL))
		return derr_set(e, DERR_INVALID, text ? "image_base64" : "text",
		    "give exactly one of text (UTF-8 text) and image_base64 (a base64 PNG)");
	if (text != NULL)
		return deskclip_set(r->app, task_id, sel, CLIP_TEXT, (const unsigned char *)text,
		    strlen(text), &out, e) != 0 ? -1 : req_reply(r, 200, out);
	d = b64_decode(b64, (size_t)json_object_get_string_len(v), CLIP_MAX_BYTES, &png, &len);
	if (d == -1)
		return derr_set(e, DERR_INVALID, "image_base64", "image_base64 is not base64");
	if (d == -2)
		return derr_set(e, DERR_TOO_LARGE, "image_base64", "the clipboard holds at most %d "
		    "bytes", CLIP_MAX_BYTES);
	if (deskclip_set(r->app, task_id, sel, CLIP_PNG, png, len, &out, e) == 0)
		rc = req_reply(r, 200, out);
	free(png);
	return rc;
}

int
api_clip_task_get(struct req *r, struct derr *e)
{
	const char *id;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	return clip_get(r, id, e);
}

int
api_clip_task_put(struct req *r, struct derr *e)
{
	const char *id;

	if (api_body_check(r, api_clip_task_put, e) != 0 || api_known_task(r, &id, e) != 0)
		return -1;
	return clip_set(r, id, e);
}

int
api_clip_get(struct req *r, struct derr *e)
{
	const char *id;

	if (api_opt_task_id(r, true, &id, e) != 0)
		return -1;
	return clip_get(r, id, e);
}

int
api_clip_put(struct req *r, struct derr *e)
{
	const char *id;

	if (api_body_check(r, api_clip_put, e) != 0 || api_opt_task_id(r, false, &id, e) != 0)
		return -1;
	return clip_set(r, id, e);
}
