/*
 * deskclip.c - the agent's clipboard (deskclip.h): the display chosen and
 * gated as for any desktop step, the X work under its lease (the lease is
 * held for the read or write, so a takeover waits for it, as for an
 * action), then the reply and the `gui` action on the task, written after
 * the lease is given back.
 *
 * Invariant: a log row carries the format and size, never the text or the
 * image (a clipboard often holds a password the agent pasted).
 */
#include "deskclip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "desktop.h"
#include "utf8.h"

static const unsigned char png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool
deskclip_png_size(const unsigned char *p, size_t n, int *w, int *h)
{
	if (n < 24 || memcmp(p, png_sig, 8) != 0 || memcmp(p + 12, "IHDR", 4) != 0 ||
	    be32(p + 16) == 0 || be32(p + 20) == 0 || be32(p + 16) > 1u << 30 || be32(p + 20) > 1u << 30)
		return false;
	*w = (int)be32(p + 16);
	*h = (int)be32(p + 20);
	return true;
}

static const char *
sel_key(enum clip_sel sel)
{
	return sel == CLIP_PRIMARY ? "primary" : "clipboard";
}

static json_object *
size_obj(int w, int h)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "width", json_object_new_int(w));
	json_object_object_add(o, "height", json_object_new_int(h));
	return o;
}

/* The reply of a read; the log's copy leaves the content out. */
static json_object *
get_reply(const struct clip_data *c, enum clip_sel sel, const char *display)
{
	json_object *o = json_object_new_object();
	char owner[32];
	int w, h;

	json_object_object_add(o, "selection", json_object_new_string(sel_key(sel)));
	json_object_object_add(o, "display", json_object_new_string(display));
	json_object_object_add(o, "empty", json_object_new_boolean(c->kind == CLIP_NONE));
	if (c->kind == CLIP_NONE) {
		json_object_object_add(o, "format", NULL);
		json_object_object_add(o, "message", json_object_new_string(sel == CLIP_PRIMARY ?
		    "the primary selection is empty: no program owns it" :
		    "the clipboard is empty: no program owns it"));
		return o;
	}
	json_object_object_add(o, "format", json_object_new_string(c->kind == CLIP_PNG ? "image" : "text"));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)c->len));
	if (c->kind == CLIP_TEXT) {
		json_object_object_add(o, "text", json_object_new_string_len((const char *)c->data, (int)c->len));
		json_object_object_add(o, "chars", json_object_new_int64((int64_t)utf8_chars((const char *)c->data)));
	} else {
		char *b64 = b64_encode(c->data, c->len, NULL);

		json_object_object_add(o, "image_b64", json_object_new_string(b64));
		json_object_object_add(o, "mime_type", json_object_new_string("image/png"));
		if (deskclip_png_size(c->data, c->len, &w, &h))
			json_object_object_add(o, "image_size", size_obj(w, h));
		free(b64);
	}
	snprintf(owner, sizeof owner, "0x%lx", c->owner);
	json_object_object_add(o, "target", json_object_new_string(c->target));
	json_object_object_add(o, "incr", json_object_new_boolean(c->incr));
	json_object_object_add(o, "owner", json_object_new_string(owner));
	json_object_object_add(o, "owner_is_detmd", json_object_new_boolean(c->ours));
	if (c->targets != NULL)
		json_object_object_add(o, "targets", json_object_get(c->targets));
	return o;
}

/* Logs one call on the task: what was asked (in), the reply without its
 * content (or the error), and a summary line. */
static void
log_call(struct app *app, const char *task_id, const char *what, json_object *in,
    json_object *reply, const struct derr *err, double ms)
{
	json_object *res = json_object_new_object();
	char summary[320];

	if (task_id == NULL) {
		json_object_put(res);
		return;
	}
	if (err == NULL) {
		json_object_object_foreach(reply, k, v) {
			if (strcmp(k, "text") != 0 && strcmp(k, "image_b64") != 0)
				json_object_object_add(res, k, json_object_get(v));
		}
		snprintf(summary, sizeof summary, "%s %s: %s", what,
		    json_object_get_string(json_object_object_get(reply, "selection")),
		    json_object_get_boolean(json_object_object_get(reply, "empty")) ? "empty" :
		    json_object_get_string(json_object_object_get(reply, "format")));
		if (!json_object_get_boolean(json_object_object_get(reply, "empty")))
			snprintf(summary + strlen(summary), sizeof summary - strlen(summary), ", %lld bytes",
			    (long long)json_object_get_int64(json_object_object_get(reply, "bytes")));
	} else {
		derr_add_json(res, err);
		snprintf(summary, sizeof summary, "%s failed: %.*s", what, utf8_prec(err->message, 200),
		    err->message);
	}
	desktop_log(app, task_id, what, summary, err == NULL, in, res, ms);
	json_object_put(res);
}

int
deskclip_get(struct app *app, const char *task_id, enum clip_sel sel, enum clip_want want,
    json_object **out, struct derr *e)
{
	static const char *const wants[] = { "auto", "text", "image" };
	struct display_lease l;
	struct clip_data c;
	json_object *in = json_object_new_object();
	char display[16] = "";
	int64_t t0 = mono_us();
	int rc;

	*out = NULL;
	memset(&c, 0, sizeof c);
	json_object_object_add(in, "selection", json_object_new_string(sel_key(sel)));
	json_object_object_add(in, "format", json_object_new_string(wants[want]));
	rc = desktop_lease_agent(app, task_id, false, &l, e);
	if (rc == 0) {
		snprintf(display, sizeof display, "%s", l.name);
		rc = clip_read(&l, sel, want, &c, e);
		display_unlease(&l);
	}
	if (rc == 0)
		*out = get_reply(&c, sel, display);
	log_call(app, task_id, "clipboard_get", in, *out, rc == 0 ? NULL : e,
	    (double)(mono_us() - t0) / 1000.0);
	clip_data_free(&c);
	json_object_put(in);
	return rc;
}

int
deskclip_set(struct app *app, const char *task_id, enum clip_sel sel, enum clip_kind kind,
    const unsigned char *data, size_t len, json_object **out, struct derr *e)
{
	struct display_lease l;
	json_object *in = json_object_new_object(), *o = NULL;
	char display[16] = "";
	int64_t t0 = mono_us();
	int rc = -1, w = 0, h = 0;

	*out = NULL;
	json_object_object_add(in, "selection", json_object_new_string(sel_key(sel)));
	json_object_object_add(in, "format", json_object_new_string(kind == CLIP_PNG ? "image" : "text"));
	json_object_object_add(in, "bytes", json_object_new_int64((int64_t)len));
	if (kind == CLIP_PNG && !deskclip_png_size(data, len, &w, &h))
		derr_set(e, DERR_INVALID, "image_base64", "image_base64 is not a PNG (no PNG "
		    "signature and header)");
	else if ((rc = desktop_lease_agent(app, task_id, true, &l, e)) == 0) {
		snprintf(display, sizeof display, "%s", l.name);
		rc = clip_write(&l, sel, kind, data, len, e);
		display_unlease(&l);
	}
	if (rc == 0) {
		o = json_object_new_object();
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		json_object_object_add(o, "selection", json_object_new_string(sel_key(sel)));
		json_object_object_add(o, "display", json_object_new_string(display));
		json_object_object_add(o, "empty", json_object_new_boolean(0));
		json_object_object_add(o, "format", json_object_new_string(kind == CLIP_PNG ? "image" : "text"));
		json_object_object_add(o, "bytes", json_object_new_int64((int64_t)len));
		if (kind == CLIP_PNG)
			json_object_object_add(o, "image_size", size_obj(w, h));
		else
			json_object_object_add(o, "chars", json_object_new_int64(
			    (int64_t)utf8_chars((const char *)data)));
		json_object_object_add(o, "owner_is_detmd", json_object_new_boolean(1));
	}
	log_call(app, task_id, "clipboard_set", in, o, rc == 0 ? NULL : e,
	    (double)(mono_us() - t0) / 1000.0);
	json_object_put(in);
	*out = o;
	return rc;
}
