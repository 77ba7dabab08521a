/*
 * derr.h - errors as values: one enum, one table, one JSON shape.
 *
 * Lower layers fill a struct derr (code, optional field, message) and return
 * -1; only this file turns one into JSON: http_req.c through derr_to_json
 * for a reply, and a module that stores or lists an error (an action's
 * output, a command's result) through derr_add_json, so every error a
 * client sees, replied or stored, is
 *     {"error":{"code":"invalid_argument","message":"...","field":"name"}}
 * with the status from the table. Codes are never renumbered. Nothing else
 * writes an "error" key or fills a struct derr's fields by hand.
 * Messages are for clients: no SQL errors or paths (those go to the log).
 */
#ifndef DETM_DERR_H
#define DETM_DERR_H

#include <json-c/json.h>

#include "cdefs.h"

enum derr_code {
	DERR_OK = 0,
	DERR_INVALID,           /* 400 invalid_argument */
	DERR_UNAUTHORIZED,      /* 401 unauthorized */
	DERR_FORBIDDEN,         /* 403 forbidden */
	DERR_NOT_FOUND,         /* 404 not_found */
	DERR_METHOD,            /* 405 method_not_allowed */
	DERR_CONFLICT,          /* 409 conflict */
	DERR_TOO_LARGE,         /* 413 payload_too_large */
	DERR_MEDIA,             /* 415 unsupported_media_type */
	DERR_RANGE,             /* 416 range_not_satisfiable */
	DERR_INTERNAL,          /* 500 internal */
	DERR_NOT_IMPLEMENTED,   /* 501 not_implemented */
	DERR_UNAVAILABLE,       /* 503 unavailable */
	DERR_HUMAN_CONTROL,     /* 409 human_control: a human drives the display */
	DERR_NO_SPACE,          /* 507 no_space: the disk is full, nothing was stored */
	DERR_IO_ERROR,          /* 500 io_error: the disk failed, nothing was stored */
	DERR_NOT_DURABLE,       /* 500 not_durable: stored and visible, its fsync failed */
	DERR_LAUNCH_DENIED,     /* 403 launch_denied: desktop_launch refused the program (allow-list, off) */
	DERR_BUSY,              /* 503 unavailable, with Retry-After: a cap is full for now */
	DERR_DRAINING,          /* 503 draining: this detmd takes no new task (POST /api/drain) */
	DERR_DISPLAY_UNRESPONSIVE, /* 503 display_unresponsive: another reader holds a display whose X server does not answer */
	DERR__COUNT
};

struct derr {
	enum derr_code code;
	char field[64];         /* "" when the error is not about one field */
	char message[512];
};

/* Fills e and returns -1, so callers can write `return derr_set(...)`.
 * field may be NULL. The message and field are made valid UTF-8 (invalid
 * bytes become U+FFFD) and cut between characters to fit, so callers may
 * quote raw client bytes. */
int derr_set(struct derr *e, enum derr_code code, const char *field,
    const char *fmt, ...) DETM_PRINTF(4, 5);
void derr_clear(struct derr *e);
/* Names field as the one the error in e is about (NULL or "": none) and
 * returns -1: for a caller that knows better than the layer that failed
 * (a query parameter checked by a body helper, say). */
int derr_refield(struct derr *e, const char *field);

int derr_status(enum derr_code code);
/* Seconds a client should wait before asking again (the reply's
 * Retry-After), 0 when the error says nothing about it. */
int derr_retry_after(enum derr_code code);
const char *derr_name(enum derr_code code);
/* A new {"error":{...}} object (caller owns it). */
json_object *derr_to_json(const struct derr *e) DETM_NODISCARD;
/* Adds "error": {"code","message","field"} to the object obj (replacing an
 * "error" key it had): the same shape inside a stored or listed result. */
void derr_add_json(json_object *obj, const struct derr *e);

#endif
