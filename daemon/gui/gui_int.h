/*
 * gui_int.h - what the GUI agent's files share (not for other modules;
 * gui.h is the contract).
 *
 *   gui_parse.c  instruction parsing: gui_parse, gui_verb_name
 *   gui.c        the capture -> ground -> act -> log pipeline (gui_find, gui_do)
 *
 * Does not: declare functions; both files reach each other only through
 * gui.h.
 */
#ifndef DETM_GUI_INT_H
#define DETM_GUI_INT_H

/* The explicit call forms, quoted in errors by both the parser and the
 * grounding step. */
#define GUI_FORMS "click(x, y), double_click(x, y), right_click(x, y), middle_click(x, y), " \
	"move(x, y), drag(x1, y1, x2, y2), scroll(x, y, \"down\", 3), type(\"text\"), press(\"ctrl+s\")"

#endif
