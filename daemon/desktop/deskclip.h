/*
 * deskclip.h - the clipboard of the display a task uses, for the agent:
 * which display (desktop_lease_agent: the task's own, else the shared
 * desktop; a human driving it refuses with human_control), the X side
 * (x11/clip.h), the reply's shape, and one `gui` action logged on the task
 * per call (its size and format, never its content).
 *
 * Does not: parse HTTP (api_clip.c) or speak X (clip.c, clip_read.c).
 */
#ifndef DETM_DESKCLIP_H
#define DETM_DESKCLIP_H

#include <stddef.h>

#include <json-c/json.h>

#include "core/app.h"
#include "core/util.h"
#include "derr.h"
#include "x11/clip.h"

/* Reads sel on task_id's display (NULL: the shared desktop). *out (caller
 * owns): {selection, display, empty, format: "text"|"image"|null, then for
 * text: text, chars, bytes; for an image: image_b64, mime_type, bytes,
 * image_size; and target, incr, owner, owner_is_detmd, targets, message}.
 * An empty selection is a 200 with empty true and the message "the
 * clipboard is empty" (or "the primary selection is empty"). */
int deskclip_get(struct app *app, const char *task_id, enum clip_sel sel, enum clip_want want,
    json_object **out, struct derr *e) DETM_NODISCARD;

/* Makes detmd the owner of sel on task_id's display, holding text (UTF-8)
 * or a PNG (its bytes; the signature and header are checked:
 * DERR_INVALID on field "image_base64" otherwise). *out (caller owns):
 * {ok, selection, display, format, bytes, chars | image_size, owner_is_detmd}. */
int deskclip_set(struct app *app, const char *task_id, enum clip_sel sel, enum clip_kind kind,
    const unsigned char *data, size_t len, json_object **out, struct derr *e) DETM_NODISCARD;

/* A PNG's size from its header: true when p starts like a PNG (signature
 * and IHDR). */
bool deskclip_png_size(const unsigned char *p, size_t n, int *w, int *h);

#endif
