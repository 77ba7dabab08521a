/*
 * desktop.h - desktop actions as a table: one entry per action name
 * (click, type, list_windows, screenshot, ...), each validating its own
 * parameters and running on a display lease. Shared by
 * POST /api/desktop/action and POST /api/commands.
 *
 * Coordinates: screen pixels, or with image_coords the pixels of the last
 * image looked at on that display (struct display_look), mapped back to the
 * screen before use. Off-screen points are DERR_INVALID on "x"/"y".
 *
 * Held keys: a pointer action (the click family, mouse_move, drag, scroll,
 * mouse_down/up) takes "hold" ("shift", "ctrl+alt": one chord), held down
 * around it and always released; press_key takes "hold_ms" (one chord
 * held that long). click takes "count" (1..3) and buttons 1-3, 8 (back) and
 * 9 (forward).
 *
 * Does not: parse HTTP, pick routes, or format errors.
 */
#ifndef DETM_DESKTOP_H
#define DETM_DESKTOP_H

#include <stdbool.h>

#include <json-c/json.h>

#include "core/app.h"
#include "core/util.h"
#include "derr.h"
#include "x11/display.h"
#include "x11/xcap.h"

/* What a run produced. */
struct desk_out {
	json_object *data;      /* the action's result (caller owns) */
	char observation[256];  /* one line: what happened, for logs and the LLM */
	double duration_ms;
	char display[16];       /* where it ran */
};

/* Runs one action for task_id (NULL: the shared desktop). params holds the
 * action's parameters (borrowed). With a task, the action is logged as a
 * `gui` action (failed ones too) with its input, result and duration.
 * Returns 0, or -1 with e. */
int desktop_run(struct app *app, const char *task_id, const char *action,
    json_object *params, bool image_coords, struct desk_out *out, struct derr *e) DETM_NODISCARD;

/* The action names, in table order (for capabilities and error hints). */
const char *desktop_action_name(size_t i);   /* NULL past the end */
/* Logs one `gui` action on task_id (what names it in the warning logged
 * when that fails; a failure never reaches the caller): summary, status
 * completed or (!ok) failed, in and out as JSON text (borrowed), ms. The
 * one writer of gui action rows for desktop.c, gui.c and gui_agent. */
void desktop_log(struct app *app, const char *task_id, const char *what, const char *summary,
    bool ok, json_object *in, json_object *out, double ms);
/* Copies an input's "observed" (effect.h) into a logged row without its
 * image (the row keeps what was shown, not the picture). NULL: nothing. */
void desktop_log_observed(json_object *row, json_object *observed);
/* Every parameter any action takes (NULL-terminated): the fields of
 * POST /api/desktop/action and of a command's "parameters". */
extern const char *const desktop_params[];

/* A screenshot request, as the query string or the screenshot action
 * gives it. */
struct desk_shot {
	const char *task_id;
	unsigned long window;   /* 0: none */
	const char *window_name;/* or NULL */
	int x, y, w, h;         /* region (w or h 0: all) */
	int max_width;          /* 0: the default (the long side DESKTOP_LOOK_SIDE) */
	int quality;            /* 0: default, adapted to stay under 1 MB */
	enum xcap_format format;
	bool remember;          /* a "look": later image coordinates refer to it */
};
/* The default look: at most 1200 px on the long side, the size OpenClaw
 * (agents.defaults.imageMaxDimensionPx) and Anthropic's API resize images
 * to anyway, so the scale detm reports is the scale the model sees. */
#define DESKTOP_LOOK_SIDE 1200
#define DESKTOP_LOOK_QUALITY 72
#define DESKTOP_LOOK_MAX_BYTES (1024 * 1024)

/* Resolves the display, captures and encodes. *img is the caller's
 * (xcap_image_free); *meta (caller owns) has image_size, screen_size,
 * scale, region and display. */
int desktop_shot(struct app *app, const struct desk_shot *q, struct xcap_image *img,
    json_object **meta, struct derr *e) DETM_NODISCARD;

/* Resolves which display a task uses and leases it: the task's own
 * display; if it has none, the shared desktop. A task whose own display
 * was released or is gone is DERR_CONFLICT with a hint. */
int desktop_lease(struct app *app, const char *task_id, struct display_lease *l,
    struct derr *e) DETM_NODISCARD;

/* desktop_lease for the agent: its input (input true) or a screenshot for
 * it. Under the lease, takeover_gate (or takeover_gate_look) must pass,
 * else the lease is given back and the call is DERR_HUMAN_CONTROL. As
 * takeover_start waits for the display's lease after the human takes over,
 * nothing leased this way acts on a display a human took over: a step
 * that passed the gate finishes before the takeover does. */
int desktop_lease_agent(struct app *app, const char *task_id, bool input,
    struct display_lease *l, struct derr *e) DETM_NODISCARD;

/* Before keys are sent on d: which window gets them (xwin_key_target).
 * Adds "focus_window" to data ({id, title, class}, or null when none had
 * the keyboard focus) and writes the observation's phrase into out:
 * ` <prep> "Title" (0x...)`, or "; no window had the keyboard focus: the
 * keys went nowhere"; "" (and no key) when X could not tell. */
void desktop_key_focus(Display *d, json_object *data, const char *prep, char *out, size_t cap);
/* Window id from "0x1a00003", "27262979" or a JSON integer. */
int desktop_window_id(json_object *v, unsigned long *out, struct derr *e) DETM_NODISCARD;

#endif
