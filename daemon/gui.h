/*
 * gui.h - the GUI agent: "click the Export button" -> a screenshot, a
 * grounding backend's coordinates, mapped back to the screen, XTest.
 *
 * Backends (ACU_GUI_AGENT_BACKEND): direct (no model: the instruction
 * carries coordinates, click(847, 523)), uitars (UI-TARS 1.5 through
 * OpenRouter when OPENROUTER_API_KEY is set, else Ollama), claude_cu
 * (Anthropic's computer-use tool). The image sent and its scale to the
 * screen are explicit in every result; an unparseable or off-image answer
 * is an error naming what came back, never a click somewhere else.
 */
#ifndef DETM_GUI_H
#define DETM_GUI_H

#include <stdbool.h>

#include <json-c/json.h>

#include "api.h"
#include "derr.h"

#define GUI_TEXT_MAX 2000

enum gui_verb { GUI_CLICK, GUI_DOUBLE, GUI_RIGHT, GUI_MIDDLE, GUI_MOVE, GUI_DRAG,
	GUI_TYPE, GUI_KEY, GUI_SCROLL };

/* An instruction, parsed. */
struct gui_cmd {
	enum gui_verb verb;
	bool has_xy, has_xy2;
	int x, y, x2, y2;       /* explicit coordinates (screen pixels) */
	char target[GUI_TEXT_MAX + 1];  /* what to ground ("" when none needed) */
	char text[GUI_TEXT_MAX + 1];    /* type: the text; key: the chord; scroll: direction */
	int amount;             /* scroll */
};

/* Parses explicit forms (click(847, 523), double_click(1,2),
 * right_click(..), move(..), drag(x1,y1,x2,y2), type("hello"),
 * press("ctrl+s"), scroll(down[, 3])) and plain words ("click the Export
 * button", "double click README.md", "type \"hi\" into the search box",
 * "press ctrl+s", "scroll down 5"). DERR_INVALID field "instruction". */
int gui_parse(const char *instr, struct gui_cmd *out, struct derr *e);

/* Checks the configured backend at start-up. */
int gui_init(const struct config *cfg, struct derr *e);

/* POST /api/gui/find and /api/gui/do bodies. Results are new objects. */
json_object *gui_find(struct app *app, const char *task_id, const char *description,
    struct derr *e);
json_object *gui_do(struct app *app, const char *task_id, const char *instruction,
    struct derr *e);

/* Backend name and model, for capabilities. */
json_object *gui_manifest(const struct config *cfg);

#endif
