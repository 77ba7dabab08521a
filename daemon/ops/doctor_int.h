/*
 * doctor_int.h - between the doctor's runner (doctor.c) and its checks
 * (doctor_checks.c, doctor_wake.c). A check is a function in the table;
 * it adds one or
 * more results to its own context (each check runs on its own thread with
 * its own ctx, so nothing here is shared between threads but cfg and rd,
 * which are read-only).
 */
#ifndef DETM_DOCTOR_INT_H
#define DETM_DOCTOR_INT_H

#include <stdbool.h>

#include <json-c/json.h>

#include "cdefs.h"
#include "core/config.h"
#include "core/redact.h"

#define DOC_HTTP_MS 4000        /* one HTTP probe */

struct dctx {
	const struct config *cfg;
	bool in_daemon;
	const struct redact *rd;
	json_object *out;           /* array of results (owned by the run) */
};

/* Adds a result; hint may be NULL ("" in the JSON); detail is formatted.
 * Both are redacted. */
void dres(struct dctx *c, const char *section, const char *name, const char *status,
    const char *hint, const char *fmt, ...) DETM_PRINTF(6, 7);

typedef void (*dcheck_fn)(struct dctx *c);
struct dcheck {
	const char *section, *name;     /* of its first result; names a check that hangs */
	dcheck_fn fn;
};
extern const struct dcheck doctor_checks[];

/* doctor_wake.c: the wake sinks for real (the OpenClaw CLI's Node, a
 * Gateway that answers, a hook's token) and the OpenClaw config's MCP
 * entry. */
void doctor_check_wake(struct dctx *c);
void doctor_check_openclaw(struct dctx *c);
extern const size_t doctor_nchecks;

#endif
