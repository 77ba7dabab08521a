/*
 * dialect.h - provider computer tools spoken on a detm display: the
 * Anthropic computer toolset (computer_toolset_20260801) and its older
 * single `computer` tool (computer_20251124, computer_20250124), OpenAI's
 * `computer` tool (computer_call with batched actions) and Gemini's
 * computer use (function calls on a 0-1000 grid).
 *
 * Each dialect is a table (dialect_anthropic.c, dialect_openai.c,
 * dialect_gemini.c) mapping the provider's actions onto detm's desktop
 * actions: every input goes through desktop_run (desktop.h), the one input
 * path, so each action is checked, verified and logged on the task like
 * any desktop_action. Screenshots are desktop_run's "screenshot" (a look:
 * later image coordinates refer to it); a zoom is desktop_shot of a region
 * (not a look), logged the same way.
 *
 * Coordinates: Anthropic and OpenAI send pixels of the last screenshot the
 * model saw, mapped to the screen once, by desktop_run's image coordinates
 * (the display's look). Gemini sends a 0-1000 grid over the screen, mapped
 * here to screen pixels.
 *
 * Errors: what the model asked that cannot be done (an unknown action, a
 * bad argument, a failed input, a human driving the display) is answered
 * in the dialect's own form (Anthropic: a tool_result with is_error; OpenAI:
 * the output item with status "incomplete"; Gemini: response.error), and
 * the actions after it in the same request are not run. Only a body that
 * is not the dialect's shape, an unacknowledged safety check or a failed
 * closing screenshot is an error of the call (-1 with e).
 *
 * Does not: talk HTTP (api_computer.c), or know how input works
 * (desktop.c).
 */
#ifndef DETM_DIALECT_H
#define DETM_DIALECT_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "core/app.h"
#include "core/util.h"
#include "derr.h"

/* When a screenshot is added to action results (Anthropic, Gemini; the
 * OpenAI output always is one). */
enum dialect_shots {
	DIALECT_SHOTS_AUTO,     /* the dialect's habit (dialect_*.c says which) */
	DIALECT_SHOTS_EACH,     /* after every input action */
	DIALECT_SHOTS_LAST,     /* after the request's last action */
	DIALECT_SHOTS_NONE,     /* only when the model asks for one */
};

struct dialect_opts {
	const char *task_id;    /* NULL: the shared desktop */
	int max_side;           /* a screenshot's long side at most; 0: the dialect's default */
	enum dialect_shots shots;
};

struct dialect_out {
	json_object *answer;    /* ready to send back to the provider (caller owns) */
	json_object *detm;      /* detm's record: one entry per desktop action run
	                         * ({action, ok, observation, verdict, error}; caller owns) */
	int calls;              /* the provider's calls answered */
	int failed;             /* of them, answered with an error */
	char verdicts[256];     /* each action's verdict, comma-separated (cut to fit) */
	char error[300];        /* the first failure's message, or "" */
};

/* Whether name is a dialect ("anthropic", "openai", "gemini"). */
bool dialect_known(const char *name);
/* The dialects' names in table order (NULL past the end). */
const char *dialect_name(size_t i);

/* Runs the provider's calls in body (each dialect's forms: dialect_*.c) in
 * order on the task's display and fills *out. 0, or -1 with e:
 * DERR_INVALID (the body is not the dialect's shape), DERR_CONFLICT (a
 * safety check the caller did not acknowledge; nothing was run),
 * DERR_NOT_FOUND (no such dialect), or the closing screenshot's error. */
int dialect_run(struct app *app, const char *dialect, json_object *body,
    const struct dialect_opts *o, struct dialect_out *out, struct derr *e) DETM_NODISCARD;

/* A first look for a harness starting out: a screenshot (remembered as the
 * display's look) in the dialect's image form, with the image and screen
 * sizes, the scale and the tool declaration that fits them. *out (caller
 * owns). 0 or -1 with e. */
int dialect_look(struct app *app, const char *dialect, const struct dialect_opts *o,
    json_object **out, struct derr *e) DETM_NODISCARD;

void dialect_out_free(struct dialect_out *out);   /* NULL ok */

#endif
