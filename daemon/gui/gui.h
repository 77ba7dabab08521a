/*
 * gui.h - the GUI agent: gui_find (a description in words -> screen
 * coordinates, no action) and gui_do (an instruction -> one action through
 * XTest), each as capture -> ground -> act -> log.
 *
 * Instructions (gui_parse):
 *   explicit   click(847, 523)  double_click(1, 2)  right_click(x, y)
 *              middle_click(x, y)  move(x, y)  drag(x1, y1, x2, y2)
 *              scroll(x, y, "down", 3)  scroll("up")  type("hello")
 *              press("ctrl+s")        -- no model needed
 *   words      click the Export button / double click X / right click X /
 *              hover over X / type "hello" [into X] / press ctrl+s /
 *              scroll down [3] [on X] / drag X to Y
 *              (X, Y may also be "847, 523" or "(847, 523)")
 * A target in words is grounded by the configured backend (ground.h); the
 * direct backend refuses it with DERR_INVALID naming the explicit forms.
 *
 * Coordinates: screen pixels in every result. The image sent to a model
 * is downscaled to grounding_max_dim; image px * scale = screen px, and
 * both spaces, the scale and the model's raw answer are in the result.
 * Explicit coordinates off the screen are DERR_INVALID naming the screen
 * size; a model answer off the image or the screen is DERR_UNAVAILABLE
 * quoting the answer, and nothing is done.
 *
 * A display lease is held only to capture and to act, never across a
 * model call. With a task, every call (failed ones too) is one `gui`
 * action on the task with backend, model, coordinates, scale and timing.
 *
 * Does not: speak HTTP (api_gui.c) or know wire formats (ground.c).
 */
#ifndef DETM_GUI_H
#define DETM_GUI_H

#include <stdbool.h>

#include <json-c/json.h>

#include "backends/ground.h"
#include "core/app.h"
#include "core/util.h"
#include "derr.h"

#define GUI_MAX_INSTRUCTION 4000     /* bytes */
#define GUI_MAX_TEXT        4000     /* bytes typed by one gui_do */
#define GUI_THUMB_WIDTH     320      /* the after-screenshot */

enum gui_verb {
	GUI_CLICK, GUI_DOUBLE_CLICK, GUI_RIGHT_CLICK, GUI_MIDDLE_CLICK, GUI_MOVE,
	GUI_TYPE, GUI_PRESS, GUI_SCROLL, GUI_DRAG,
};

struct gui_cmd {
	enum gui_verb verb;
	bool at, at2;                 /* explicit x,y / x2,y2 */
	int x, y, x2, y2;
	char target[GROUND_MAX_DESCRIPTION + 1];   /* in words; "" none */
	char target2[GROUND_MAX_DESCRIPTION + 1];  /* drag destination in words */
	char text[GUI_MAX_TEXT + 1];  /* type: the text; press: the keys */
	char dir[8];                  /* scroll */
	int amount;
};

/* Parses an instruction. 0, or -1 with DERR_INVALID (field "instruction")
 * naming the accepted forms. Coordinates are not range-checked here. */
int gui_parse(const char *s, struct gui_cmd *c, struct derr *e) DETM_NODISCARD;
const char *gui_verb_name(enum gui_verb v);

/* POST /api/gui/find and /api/gui/do. *out: the reply (caller owns). */
int gui_find(struct app *app, const char *task_id, const char *description,
    json_object **out, struct derr *e) DETM_NODISCARD;
/* opts (borrowed, may be NULL): settle_ms, expect and observe of the
 * effect verdict (effect.h), which every step gets. */
int gui_do(struct app *app, const char *task_id, const char *instruction, bool after_shot,
    json_object *opts, json_object **out, struct derr *e) DETM_NODISCARD;

#endif
