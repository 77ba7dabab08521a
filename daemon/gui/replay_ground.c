/*
 * replay_ground.c - a recorded target found again on a replay's display
 * (replay.h has the order: accessibility, OCR, window position, model),
 * and the waits a step needs (a window, the keyboard focus).
 *
 * Invariants: a display lease is held only for X reads and one capture,
 * never across an accessibility, OCR or model call; every wait ends at
 * its timeout or when *stop is set; nothing here presses anything (a
 * focus by title is the only change it makes).
 *
 * Does not: run the step (replay.c) or write rows.
 */
#include "replay_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/ground.h"
#include "backends/ocr.h"
#include "core/jx.h"
#include "core/util.h"
#include "desktop/desktop.h"
#include "gui.h"
#include "x11/a11y.h"
#include "x11/a11y_match.h"
#include "x11/display.h"
#include "x11/xcap.h"

#define POLL_MS 150
#define OCR_STRIPS 60
#define OCR_COLUMNS 48

static const char *
sget(json_object *o, const char *k)
{
	const char *s = json_object_get_string(json_object_object_get(o, k));

	return s != NULL ? s : "";
}

static int
iget(json_object *o, const char *k)
{
	return json_object_get_int(json_object_object_get(o, k));
}

static bool
stopped(atomic_int *stop)
{
	return stop != NULL && atomic_load(stop) != 0;
}

/* One look for the window (topmost first): by title, else by class. */
static int
find_window(struct app *app, const char *task_id, const char *title, const char *cls, struct xwin *out)
{
	struct display_lease l;
	struct xwin *w = NULL;
	size_t n = 0;
	struct derr e;
	int found = 0;

	if (desktop_lease(app, task_id, &l, &e) != 0)
		return 0;
	if (xwin_list(l.d, &w, &n, &e) == 0) {
		for (size_t i = n; i-- > 0 && !found;)
			if (w[i].visible && title[0] != '\0' && strcmp(w[i].title, title) == 0)
				*out = w[i], found = 1;
		for (size_t i = n; i-- > 0 && !found;)
			if (w[i].visible && cls != NULL && cls[0] != '\0' && strcmp(w[i].wm_class, cls) == 0)
				*out = w[i], found = 1;
	}
	free(w);
	display_unlease(&l);
	return found;
}

int
rp_wait_window(struct app *app, const char *task_id, const char *title, const char *cls,
    int timeout_ms, atomic_int *stop, struct xwin *w)
{
	int64_t end = mono_us() + (int64_t)timeout_ms * 1000;

	for (;;) {
		if (find_window(app, task_id, title, cls, w))
			return 1;
		if (mono_us() >= end || stopped(stop))
			return 0;
		sleep_ms(POLL_MS);
	}
}

/* ---- 1. the accessibility tree ---- */

static bool
same_name(json_object *el, const char *role, const char *norm)
{
	char n[A11Y_NAME_MAX];

	a11y_norm(sget(el, "name"), n, sizeof n);
	return strcasecmp(sget(el, "role"), role) == 0 && strcmp(n, norm) == 0;
}

/* The step's precondition on its element: it takes input now. An element
 * whose states are listed without "sensitive" or "enabled" (a Save button
 * still greyed: GTK draws typed keys late under load) does not yet. */
static bool
ready(json_object *hit)
{
	json_object *st = json_object_object_get(hit, "states");

	if (st == NULL)
		return true;    /* the tree does not say: not waited for */
	for (size_t i = 0; i < jx_alen(st); i++) {
		const char *n = json_object_get_string(json_object_array_get_idx(st, i));

		if (n != NULL && (strcmp(n, "sensitive") == 0 || strcmp(n, "enabled") == 0))
			return true;
	}
	return false;
}

/* 1 found and ready, 2 found but not ready (g set all the same), 0 not
 * found. */
static int
by_tree(int number, const struct xwin *w, json_object *el, struct rp_ground *g)
{
	const char *role = sget(el, "role"), *name = sget(el, "name");
	struct a11y_query q = { .window = w->title[0] != '\0' ? w->title : NULL, .role = role,
		.name = name[0] != '\0' ? name : NULL, .max = 100 };
	json_object *all = NULL, *els, *hit = NULL, *b;
	char norm[A11Y_NAME_MAX];
	int idx = iget(el, "index"), k = 0, found = 0;
	struct derr e;

	if (role[0] == '\0' || name[0] == '\0' || !a11y_active(number) ||
	    a11y_elements(number, &q, &all, &e) != 0)
		return 0;
	a11y_norm(name, norm, sizeof norm);
	els = json_object_object_get(all, "elements");
	for (size_t i = 0; i < jx_alen(els); i++) {
		json_object *x = json_object_array_get_idx(els, i);

		if (!same_name(x, role, norm))
			continue;
		if (hit == NULL || k == idx)
			hit = x;
		k++;
	}
	if (hit != NULL && (b = json_object_object_get(hit, "bounds")) != NULL) {
		g->x = iget(b, "x") + iget(b, "width") / 2;
		g->y = iget(b, "y") + iget(b, "height") / 2;
		g->by = "accessibility";
		found = ready(hit) ? 1 : 2;
	}
	json_object_put(all);
	return found;
}

/* What the tree holds at (x, y) in the window now, against the recorded
 * element: 1 the same role and name (or the same name), -1 another element
 * (*seen names both),
 * 0 the tree cannot tell (not active, nothing there). */
static int
tree_at(int number, const struct xwin *w, int x, int y, json_object *el, char *seen, size_t cap)
{
	struct a11y_query q = { .window = w->title[0] != '\0' ? w->title : NULL, .max = 400 };
	json_object *all = NULL, *els, *best = NULL;
	char norm[A11Y_NAME_MAX];
	int bestd = -1, rc = 0;
	struct derr e;

	/* an element read after its input closed or retitled a window (or
	 * opened a popup) may be of another state of the window: it cannot
	 * say another is there */
	if (strcmp(sget(el, "seen"), "after_change") == 0 || !a11y_active(number) ||
	    a11y_elements(number, &q, &all, &e) != 0)
		return 0;
	els = json_object_object_get(all, "elements");
	for (size_t i = 0; i < jx_alen(els); i++) {
		json_object *x1 = json_object_array_get_idx(els, i), *b = json_object_object_get(x1, "bounds");
		int d = iget(x1, "depth");

		if (b != NULL && x >= iget(b, "x") && y >= iget(b, "y") && x < iget(b, "x") + iget(b, "width") &&
		    y < iget(b, "y") + iget(b, "height") && d >= bestd) {
			best = x1;
			bestd = d;
		}
	}
	if (best != NULL) {
		char now[A11Y_NAME_MAX];

		/* The same name in another role is the same control seen at
		 * another depth (a button and its label): not another element. */
		a11y_norm(sget(el, "name"), norm, sizeof norm);
		a11y_norm(sget(best, "name"), now, sizeof now);
		rc = same_name(best, sget(el, "role"), norm) || (norm[0] != '\0' && strcmp(norm, now) == 0) ? 1 : -1;
		snprintf(seen, cap, "%.40s \"%.80s\" (recorded: %.40s \"%.80s\")", sget(best, "role"),
		    sget(best, "name"), sget(el, "role"), sget(el, "name"));
	}
	json_object_put(all);
	return rc;
}

/* ---- 2. OCR ---- */

/* The recorded text's words, with the words cut by the box's edges
 * dropped when there are three or more (a box cuts the line it lies on). */
static void
inner_words(const char *text, char *out, size_t cap)
{
	const char *a = text, *z = text + strlen(text);

	while (*a == ' ')
		a++;
	while (z > a && z[-1] == ' ')
		z--;
	snprintf(out, cap, "%.*s", (int)(z - a), a);
	if (strchr(out, ' ') != NULL && strchr(strchr(out, ' ') + 1, ' ') != NULL) {
		char *f = strchr(out, ' ') + 1, *l = strrchr(out, ' ');

		memmove(out, f, (size_t)(l - f));
		out[l - f] = '\0';
	}
}

static bool
has_word(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		n = isalnum((unsigned char)*s) ? n + 1 : n;
	return n >= 2;
}

static int
read_box(struct ocr *o, const struct xcap_frame *f, int x, int y, int w, int h, const char *phrase)
{
	char *t = NULL;
	struct derr e;
	int hit;

	if (x + w > f->width)
		w = f->width - x;
	if (y + h > f->height)
		h = f->height - y;
	if (w < 8 || h < 8 || ocr_text(o, f->rgb, f->width, f->height, x, y, w, h, 2, &t, NULL, &e) != 0)
		return 0;
	hit = ocr_match(t, phrase);
	free(t);
	return hit;
}

static int
ocr_search(struct ocr *o, const struct xcap_frame *f, const char *phrase, int bw, int bh, int *cx, int *cy)
{
	int sy, sx, n = 0, m = 0;

	for (sy = 0; sy + 8 <= f->height && n < OCR_STRIPS; sy += bh / 2 > 4 ? bh / 2 : 4, n++) {
		if (!read_box(o, f, 0, sy, f->width, bh, phrase))
			continue;
		for (sx = 0; sx + 8 <= f->width && m < OCR_COLUMNS; sx += bw / 4 > 4 ? bw / 4 : 4, m++) {
			if (read_box(o, f, sx, sy, bw, bh, phrase)) {
				*cx = sx + bw / 2;
				*cy = sy + bh / 2;
				return 1;
			}
		}
	}
	return 0;
}

static int
by_ocr(struct app *app, const char *task_id, const struct xwin *w, json_object *t, struct rp_ground *g)
{
	json_object *tb = json_object_object_get(t, "text_box"), *p = json_object_object_get(t, "point");
	struct xcap_req q = { .x = w->x, .y = w->y, .w = w->width, .h = w->height };
	struct xcap_frame f = { 0 };
	struct display_lease l;
	char phrase[OCR_MAX_PHRASE];
	struct ocr *o = NULL;
	struct derr e;
	int bw = iget(tb, "w"), bh = iget(tb, "h"), cx, cy, rc = 0;

	inner_words(sget(t, "text"), phrase, sizeof phrase);
	if (tb == NULL || p == NULL || !has_word(phrase) || bw < 8 || bh < 8)
		return 0;
	if (desktop_lease(app, task_id, &l, &e) != 0)
		return 0;
	rc = xcap_grab(l.cap, &q, &f, &e);
	display_unlease(&l);
	if (rc != 0 || (o = ocr_new("eng", &e)) == NULL) {
		rc = 0;
		goto out;
	}
	rc = ocr_search(o, &f, phrase, bw, bh, &cx, &cy);
	if (rc == 1) {
		g->x = f.src_x + cx + iget(p, "x") - (iget(tb, "x") + bw / 2);
		g->y = f.src_y + cy + iget(p, "y") - (iget(tb, "y") + bh / 2);
		g->by = "ocr";
	}
out:
	ocr_free(o);
	xcap_frame_free(&f);
	return rc;
}

/* ---- 4. the model ---- */

static int
by_model(struct app *app, const char *task_id, json_object *t, struct rp_ground *g)
{
	json_object *el = json_object_object_get(t, "element"), *r = NULL;
	char desc[400];
	const char *by;
	struct derr e;

	if (!ground_has_model(app->cfg))
		return 0;
	if (el != NULL && sget(el, "name")[0] != '\0')
		snprintf(desc, sizeof desc, "%s \"%s\"", sget(el, "role"), sget(el, "name"));
	else if (has_word(sget(t, "text")))
		snprintf(desc, sizeof desc, "the text \"%s\"", sget(t, "text"));
	else
		return 0;
	if (gui_find(app, task_id, desc, &r, &e) != 0) {
		snprintf(g->why + strlen(g->why), sizeof g->why - strlen(g->why), "; the model: %s", e.message);
		g->model_call = e.code != DERR_INVALID;
		return 0;
	}
	by = sget(r, "grounded_by");
	g->model_call = strcmp(by, "accessibility") != 0;
	g->x = iget(r, "x");
	g->y = iget(r, "y");
	g->by = g->model_call ? "model" : "accessibility";
	json_object_put(r);
	return 1;
}

static void
describe(json_object *t, struct rp_ground *g)
{
	json_object *el = json_object_object_get(t, "element"), *w = json_object_object_get(t, "window");
	size_t o = 0;

	o += (size_t)snprintf(g->looked_for + o, sizeof g->looked_for - o, "in window \"%.80s\"",
	    w != NULL ? sget(w, "title") : "(none recorded)");
	if (el != NULL && o < sizeof g->looked_for)
		o += (size_t)snprintf(g->looked_for + o, sizeof g->looked_for - o, ": %.40s \"%.80s\"",
		    sget(el, "role"), sget(el, "name"));
	if (has_word(sget(t, "text")) && o < sizeof g->looked_for)
		snprintf(g->looked_for + o, sizeof g->looked_for - o, ", text \"%.80s\"", sget(t, "text"));
}

int
rp_ground(struct app *app, const char *task_id, json_object *t, int timeout_ms, bool ask_model,
    atomic_int *stop, struct rp_ground *g)
{
	json_object *w = json_object_object_get(t, "window"), *el = json_object_object_get(t, "element");
	int number = display_task_number(task_id);
	int64_t end = mono_us() + (int64_t)timeout_ms * 1000;
	struct xwin win;

	memset(g, 0, sizeof *g);
	g->by = "none";
	if (t == NULL) {
		snprintf(g->looked_for, sizeof g->looked_for, "(nothing: no target was recorded)");
		snprintf(g->why, sizeof g->why, "no target descriptor was recorded for this step");
		return 0;
	}
	describe(t, g);
	if (w == NULL) {
		snprintf(g->why, sizeof g->why, "no window was under the point at record time");
		return ask_model && by_model(app, task_id, t, g);
	}
	if (!rp_wait_window(app, task_id, sget(w, "title"), sget(w, "class"), timeout_ms, stop, &win)) {
		snprintf(g->why, sizeof g->why, "no window titled \"%.100s\" (class %.60s) came within %d ms",
		    sget(w, "title"), sget(w, "class"), timeout_ms);
		return !stopped(stop) && ask_model && by_model(app, task_id, t, g);
	}
	/* The tree may lag the window: tried until the timeout's half (an
	 * element recorded without a name cannot be found by it); an element
	 * found but not ready (insensitive) is waited for as long, then
	 * taken all the same (g->not_ready: the effect says what it did). */
	while (el != NULL && sget(el, "name")[0] != '\0' && !stopped(stop)) {
		int tr = by_tree(number, &win, el, g);

		if (tr == 1)
			return 1;
		g->not_ready = tr == 2;
		if (mono_us() >= end - (int64_t)timeout_ms * 500)
			break;
		sleep_ms(POLL_MS * 2);
		(void)find_window(app, task_id, sget(w, "title"), sget(w, "class"), &win);
	}
	if (g->not_ready && !stopped(stop))
		return 1;
	if (stopped(stop)) {
		snprintf(g->why, sizeof g->why, "the replay was stopped");
		return 0;
	}
	if (by_ocr(app, task_id, &win, t, g))
		return 1;
	if (win.width == iget(w, "width") && win.height == iget(w, "height")) {
		char seen[320] = "";
		int x = win.x + iget(w, "rel_x"), y = win.y + iget(w, "rel_y");

		/* The position only when the tree does not say another
		 * element is there now. */
		if (el == NULL || tree_at(number, &win, x, y, el, seen, sizeof seen) >= 0) {
			g->x = x;
			g->y = y;
			g->by = "window";
			return 1;
		}
		snprintf(g->why, sizeof g->why, "no element with that role and name; %s; at the recorded "
		    "position is %s now",
		    has_word(sget(t, "text")) ? "the text was not found by OCR" : "no text was recorded", seen);
		return ask_model && by_model(app, task_id, t, g);
	}
	snprintf(g->why, sizeof g->why, "%s; %s; the window is %dx%d, not the recorded %dx%d",
	    el != NULL ? "no element with that role and name" : "no element was recorded",
	    has_word(sget(t, "text")) ? "the text was not found by OCR" : "no text was recorded",
	    win.width, win.height, iget(w, "width"), iget(w, "height"));
	return ask_model && by_model(app, task_id, t, g);
}

/* ---- the keyboard focus ---- */

static int
focus_is(struct app *app, const char *task_id, const char *title, bool focus)
{
	struct display_lease l;
	struct xwin w, f;
	struct derr e;
	int ok = 0;

	if (desktop_lease(app, task_id, &l, &e) != 0)
		return 0;
	if (xwin_key_target(l.d, &w, &e) == 1 && strcmp(w.title, title) == 0)
		ok = 1;
	else if (focus && xwin_find(l.d, title, &f, &e) == 0 && strcmp(f.title, title) == 0)
		(void)xwin_focus(l.d, f.id, &e);
	display_unlease(&l);
	return ok;
}

int
rp_wait_focus(struct app *app, const char *task_id, const char *title, int timeout_ms,
    atomic_int *stop, char *why, size_t cap)
{
	int64_t t0 = mono_us(), end = t0 + (int64_t)timeout_ms * 1000;

	if (title == NULL || title[0] == '\0')
		return 1;       /* nothing recorded to wait for */
	for (;;) {
		bool late = mono_us() - t0 > 1000 * 1000;

		if (focus_is(app, task_id, title, late))
			return 1;
		if (mono_us() >= end || stopped(stop)) {
			snprintf(why, cap, "the window \"%.100s\" did not get the keyboard focus within %d ms",
			    title, timeout_ms);
			return 0;
		}
		sleep_ms(POLL_MS);
	}
}
