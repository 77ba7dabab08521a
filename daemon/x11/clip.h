/*
 * clip.h - the X selections (CLIPBOARD, PRIMARY) of a display, read and
 * held inside detmd: no xclip, no helper process.
 *
 * Reading (clip_read, clip_read.c) converts the selection into a property
 * of a window of the call's own, on a connection of its own
 * (display_open_extra), and waits for the owner's answer with a deadline,
 * following INCR transfers up to CLIP_MAX_BYTES. Holding (clip_write,
 * clip.c) makes detmd the selection's owner on that display: one owner per
 * display, with its own connection and thread, answers every
 * SelectionRequest (TARGETS, TIMESTAMP, UTF8_STRING, STRING, TEXT,
 * text/plain;charset=utf-8, image/png; INCR for what does not fit one
 * request) until another client takes the selection (SelectionClear).
 *
 * Both are called under a lease of the display (display.h) and return
 * when done; neither holds the lease's own connection. Thread-safe.
 *
 * Does not: pick the display, check who drives it, or log (desktop/).
 */
#ifndef DETM_CLIP_H
#define DETM_CLIP_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "core/util.h"
#include "derr.h"
#include "display.h"

#define CLIP_MAX_BYTES   (16 * 1024 * 1024)  /* what a read takes in, what a write holds */
#define CLIP_ANSWER_MS   5000                /* the owner's answer, and each INCR chunk */
#define CLIP_READ_MS     30000               /* a whole read */
#define CLIP_XFERS       16                  /* INCR transfers an owner serves at once */

enum clip_sel { CLIP_CLIPBOARD, CLIP_PRIMARY };
enum clip_kind { CLIP_NONE, CLIP_TEXT, CLIP_PNG };
enum clip_want { CLIP_WANT_AUTO, CLIP_WANT_TEXT, CLIP_WANT_IMAGE };

struct clip_data {
	enum clip_kind kind;    /* CLIP_NONE: the selection has no owner (empty) */
	unsigned char *data;    /* malloc'd; text is UTF-8 (repaired) and NUL-terminated */
	size_t len;
	char target[64];        /* the target it came as: UTF8_STRING, STRING, image/png... */
	bool incr;              /* it came in INCR chunks */
	bool ours;              /* detmd's own owner answered */
	unsigned long owner;    /* the owner's window */
	json_object *targets;   /* the targets the owner offered (array of names), or NULL */
};

/* "clipboard" / "primary" (any case) to sel. 0, or -1. */
int clip_sel_parse(const char *s, enum clip_sel *sel);
/* "CLIPBOARD" / "PRIMARY". */
const char *clip_sel_name(enum clip_sel sel);

/* Reads sel of l's display as want says: text (UTF8_STRING, else
 * text/plain;charset=utf-8, else STRING as Latin-1, else TEXT), a PNG
 * image (image/png), or with CLIP_WANT_AUTO text when the owner offers
 * any, else its PNG. No owner is not an error: out->kind CLIP_NONE.
 * Errors: DERR_NOT_FOUND (the owner offers nothing of the kind wanted; the
 * message lists what it offers), DERR_TOO_LARGE (over CLIP_MAX_BYTES),
 * DERR_UNAVAILABLE (no answer within CLIP_ANSWER_MS, the owner refused,
 * or the display cannot be reached). out is the caller's (clip_data_free),
 * also on failure. */
int clip_read(const struct display_lease *l, enum clip_sel sel, enum clip_want want,
    struct clip_data *out, struct derr *e) DETM_NODISCARD;
void clip_data_free(struct clip_data *c);

/* Makes detmd the owner of sel on l's display, holding len bytes of data
 * (copied) as kind: UTF-8 text, or a PNG (its bytes are served as they
 * are). Replaces what detmd held there. Errors: DERR_TOO_LARGE (len over
 * CLIP_MAX_BYTES), DERR_UNAVAILABLE (no connection, the X server did not
 * answer, or did not give detmd the selection). */
int clip_write(const struct display_lease *l, enum clip_sel sel, enum clip_kind kind,
    const unsigned char *data, size_t len, struct derr *e) DETM_NODISCARD;

/* Stops every owner (their selections end) and joins their threads.
 * Daemon shutdown, before the displays stop. */
void clip_shutdown(void);

#endif
