/*
 * waits_judge.c - who judges a wait's condition and what a judgement
 * records: OCR in process (tesseract, one engine per worker thread, over
 * the regions that changed widened to their text lines, or the whole
 * target) for text conditions, else the model backend;
 * a model YES under ACU_WAIT_MIN_CONFIDENCE becomes PARTIAL.
 *
 * Owns: the per-worker OCR engine (thread-local; wjudge_thread_end frees
 * it), the choice of judge (wjudge_pick: the same rules at create, update
 * and resume) and the verdict fields of a job (under mu).
 * Invariant: a wait whose condition needs a model that the last health
 * check could not reach, or that has no key, is refused when it is made
 * (ready = true), never left to fail later.
 *
 * Does not: grab frames or schedule (waits_sched.c), write rows
 * (waits_store.c), or know the backends' wire formats (vision.c).
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/ocr.h"
#include "backends/vision.h"
#include "desktop/expect.h"
#include "lim.h"
#include "waits_int.h"
#include "x11/a11y.h"
#include "x11/a11y_match.h"
#include "x11/a11y_reply.h"
#include "x11/display.h"
#include "x11/xcap.h"

static _Thread_local struct ocr *tls_ocr;   /* one engine per worker */

#define OCR_STRIP_OVERLAP 24
#define OCR_LINE_PAD      3    /* rows above and below a changed line */

#define TEXT_HOWTO "write text:\"Download complete\", text-gone:\"Saving...\", or quote the phrase " \
    "(wait until \"Build succeeded\" appears)"

/* No model judges j: the passthrough backend decides alone. */
bool
wjudge_passthrough(bool use_ocr)
{
	return !use_ocr && waits_engine.vision != NULL && vision_is_passthrough(waits_engine.vision);
}

/* Whether the text read holds phrase (*found), and an excerpt of it in seen. */
static void
seen_of(const char *text, const char *phrase, bool *found, char *seen, size_t seen_len)
{
	if (ocr_match(text, phrase))
		*found = true;
	if (seen[0] == '\0' || *found) {
		snprintf(seen, seen_len, "%s", text);
		for (size_t i = 0; seen[i] != '\0'; i++)
			if (seen[i] == '\n')
				seen[i] = ' ';
	}
}

/* OCRs rectangle b of f line by line (ocr_read_lines: lines read before,
 * by any wait on any display, come from its cache), or, when b is not
 * lines of text, in strips that fit OCR_MAX_PIXELS at `scale`; says
 * whether phrase is in it; `seen` gets an excerpt of the text. */
static int
ocr_rect(const struct xcap_frame *f, struct ocr_box b, int scale, const char *phrase,
    bool *found, char *seen, size_t seen_len, struct derr *e)
{
	char *text = NULL;
	int rows, y, r;

	if (b.w <= 0 || b.h <= 0)
		return 0;
	if ((r = ocr_read_lines(tls_ocr, f->rgb, f->width, f->height, b, scale, &text, e)) < 0)
		return -1;
	if (r == 0) {
		seen_of(text, phrase, found, seen, seen_len);
		free(text);
		return 0;
	}
	rows = OCR_MAX_PIXELS / (b.w * scale * scale);
	if (rows < 64) {
		scale = 1;
		rows = OCR_MAX_PIXELS / b.w;
	}
	for (y = b.y; y < b.y + b.h; y += rows - OCR_STRIP_OVERLAP) {
		int h = b.y + b.h - y < rows ? b.y + b.h - y : rows;

		if (ocr_text(tls_ocr, f->rgb, f->width, f->height, b.x, y, b.w, h, scale, &text, NULL, e) != 0)
			return -1;
		seen_of(text, phrase, found, seen, seen_len);
		free(text);
		text = NULL;
		if (*found || y + h >= b.y + b.h)
			break;
	}
	return 0;
}

/* Where anything but the background is: the thumbnail against a flat one
 * of its most common grey. OCRing these boxes one by one (not the whole
 * screen) keeps each one's polarity (dark text on a light window, on a
 * dark desktop) for the OCR's binarisation. */
static int
content_boxes(struct job *j, struct ocr_box *boxes, int n)
{
	size_t hist[256] = { 0 }, i, np = j->npix;
	uint8_t *flat;
	int mode = 0, nb;

	for (i = 0; i < np; i++)
		hist[j->cur[i]]++;
	for (i = 1; i < 256; i++)
		if (hist[i] > hist[mode])
			mode = (int)i;
	flat = xmalloc(np);
	memset(flat, mode, np);
	nb = ocr_changed_boxes(flat, j->cur, j->thumb.width, j->thumb.height,
	    j->full.width, j->full.height, 8, boxes, n);
	free(flat);
	return nb;
}

/* The ocr backend's verdict on j's full-resolution frame: the regions that
 * changed since the last judged thumbnail, each widened to the text line(s)
 * it touches (text replaced in place changes only the glyphs that differ);
 * or the whole target (its content boxes) on the first look, for "is gone"
 * conditions (which need the whole screen) and when `whole` asks for it.
 * *partial says whether only changed regions were read (a NO from them is
 * no proof: the caller reads the whole target again once the screen is
 * still). */
int
wjudge_ocr(struct job *j, const char *criteria, bool whole, bool *partial, struct vision_result *vr,
    struct derr *e)
{
	char phrase[OCR_MAX_PHRASE], seen[160] = "";
	struct ocr_box boxes[8];
	bool negate = false, found = false;
	int nb = 0, i;

	memset(vr, 0, sizeof *vr);
	*partial = false;
	if (!ocr_condition(criteria, phrase, sizeof phrase, &negate))
		return derr_set(e, DERR_INVALID, "wake_when", "not a text condition");
	if (tls_ocr == NULL && (tls_ocr = ocr_new("eng", e)) == NULL)
		return -1;
	if (j->ref != NULL && !negate && !whole)
		nb = ocr_changed_boxes(j->ref, j->cur, j->thumb.width, j->thumb.height,
		    j->full.width, j->full.height, 8, boxes, (int)ARRAY_LEN(boxes));
	if (nb > 0 && !(nb == 1 && boxes[0].w * boxes[0].h > j->full.width * j->full.height / 2)) {
		nb = ocr_line_boxes(j->full.rgb, j->full.width, j->full.height, boxes, nb, OCR_LINE_PAD);
		*partial = nb > 0;
	} else
		nb = content_boxes(j, boxes, (int)ARRAY_LEN(boxes));
	if (nb <= 0) {
		boxes[0] = (struct ocr_box){ 0, 0, j->full.width, j->full.height };
		nb = 1;
		*partial = false;
	}
	for (i = 0; i < nb && !found; i++)
		if (ocr_rect(&j->full, boxes[i], 2, phrase, &found, seen, sizeof seen, e) != 0)
			return -1;
	vr->parsed = true;
	vr->verdict = found != negate ? VISION_YES : VISION_NO;
	if (negate)
		snprintf(vr->reason, sizeof vr->reason, found ? "\"%s\" is still on the screen (OCR)" :
		    "\"%s\" is no longer on the screen (OCR)", phrase);
	else if (found)
		snprintf(vr->reason, sizeof vr->reason, "\"%s\" is on the screen (OCR read: %.120s)",
		    phrase, seen);
	else
		snprintf(vr->reason, sizeof vr->reason, "\"%s\" is not on the screen yet (OCR read: %.120s)",
		    phrase, seen[0] ? seen : "nothing");
	return 0;
}

/* The model backend can take a wait now: it has a key, and the last
 * health check (cached, never waited for) reached it. 0, or -1 with e
 * (DERR_UNAVAILABLE) naming the backend, its URL and the fix. */
static int
model_ready(struct derr *e)
{
	json_object *h, *v;
	bool unreachable = false;
	char url[200] = "", detail[300] = "";

	if (waits_engine.vision == NULL)
		return derr_set(e, DERR_UNAVAILABLE, "wake_when", "%s; or %s", waits_engine.model_err, TEXT_HOWTO);
	pthread_mutex_lock(&waits_engine.mu);
	h = waits_engine.health;
	if (h != NULL && json_object_object_get_ex(h, "reachable", &v) && !json_object_get_boolean(v)) {
		unreachable = true;
		snprintf(url, sizeof url, "%s", json_object_get_string(json_object_object_get(h, "url")));
		snprintf(detail, sizeof detail, "%s", json_object_get_string(json_object_object_get(h, "detail")));
	}
	pthread_mutex_unlock(&waits_engine.mu);
	if (!unreachable)
		return 0;
	return derr_set(e, DERR_UNAVAILABLE, "wake_when",
	    "this condition needs the vision model, and the %s backend at %s is not reachable (%.160s): "
	    "%s, or point detmd at one that runs (ACU_VISION_BACKEND, OLLAMA_URL, ACU_VLLM_URL...), "
	    "or %s", waits_engine.backend, url, detail,
	    strcmp(waits_engine.backend, "ollama") == 0 ? "start Ollama (ollama serve; ollama pull a vision model)" :
	    "start the server", TEXT_HOWTO);
}

bool
wjudge_is_a11y(const char *criteria)
{
	struct a11y_words w;
	bool gone;

	return criteria != NULL && a11y_condition(criteria, &w, &gone);
}

/* How many elements of the tree match w (names contained); -1 with e.
 * With none, *why and hint say why (a11y_reply_hint). */
static int
a11y_count(int number, const char *target, const struct a11y_words *w, char *seen, size_t len,
    enum a11y_why *why, char *hint, size_t hlen, struct derr *e)
{
	struct a11y_query q = { .max = LIM_A11Y_ELEMENTS };
	json_object *all = NULL, *arr;
	int n = 0;

	if (strncmp(target, "window:", 7) == 0)
		q.window = target + 7;
	if (a11y_elements(number, &q, &all, e) != 0)
		return -1;
	arr = json_object_object_get(all, "elements");
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *el = json_object_array_get_idx(arr, i);

		if (!a11y_el_matches(w, el, true))
			continue;
		if (n++ == 0)
			snprintf(seen, len, "%s \"%.80s\" in window \"%.80s\"",
			    json_object_get_string(json_object_object_get(el, "role")),
			    json_object_get_string(json_object_object_get(el, "name")),
			    json_object_get_string(json_object_object_get(el, "window")));
	}
	if (n == 0) {
		char what[A11Y_NAME_MAX + 40];

		snprintf(what, sizeof what, "%s%s\"%s\"", w->role_word[0] ? w->role_word : "element",
		    w->name[0] ? " " : "", w->name);
		*why = a11y_reply_hint(all, what, hint, hlen);
	}
	json_object_put(all);
	return n;
}

/* An element condition, decided from the task display's accessibility
 * tree (no frame, no model, no OCR). A display whose accessibility bus is
 * not up has no accessible element: nothing is started to find that out. */
int
wjudge_a11y(struct job *j, const char *criteria, struct vision_result *vr, struct derr *e)
{
	struct a11y_words w;
	bool gone = false;
	int number = j->task_id[0] ? display_task_number(j->task_id) : -1, n = 0;
	char seen[260] = "", what[A11Y_NAME_MAX + 40], hint[480] = "";
	enum a11y_why why = A11Y_WHY_NOTHING;

	memset(vr, 0, sizeof *vr);
	if (!a11y_condition(criteria, &w, &gone))
		return derr_set(e, DERR_INVALID, "wake_when", "not an element condition");
	if (number < 0)
		return derr_set(e, DERR_CONFLICT, "task_id", "the task's own display is not running");
	if (a11y_active(number) && (n = a11y_count(number, j->target, &w, seen, sizeof seen, &why, hint,
	    sizeof hint, e)) < 0)
		return -1;
	snprintf(what, sizeof what, "%s%s\"%s\"", w.role_word[0] ? w.role_word : "element",
	    w.name[0] ? " " : "", w.name);
	vr->parsed = true;
	vr->verdict = (n > 0) != gone ? VISION_YES : VISION_NO;
	if (n > 0)
		snprintf(vr->reason, sizeof vr->reason, "%s is in the accessibility tree (%s%s)%s", what,
		    seen, n > 1 ? " and more" : "", gone ? "; waiting for it to go" : "");
	else if (gone && why == A11Y_WHY_CUT) {
		vr->verdict = VISION_NO;        /* not seen is not gone when the walk stopped short */
		snprintf(vr->reason, sizeof vr->reason, "cannot tell %s is gone: %s", what, hint);
	} else
		snprintf(vr->reason, sizeof vr->reason, "no %s in the accessibility tree: %s", what,
		    !a11y_active(number) ? "nothing accessible runs on the display (its accessibility bus is "
		    "not up)" : hint);
	return 0;
}

/* Which judge takes criteria for a wait that asked `want` (auto | ocr |
 * model): *ocr, and why in why. 0, or -1 with e: DERR_INVALID for a
 * judge that cannot take the condition, DERR_UNAVAILABLE (ready = true
 * only) for a model that is not there. */
int
wjudge_pick(const char *want, const char *criteria, bool ready, bool *ocr, char *why, size_t len,
    struct derr *e)
{
	char phrase[OCR_MAX_PHRASE];
	bool negate, text = ocr_condition(criteria, phrase, sizeof phrase, &negate);

	*ocr = false;
	if (expect_settled(criteria, NULL)) {
		if (strcmp(want, "auto") != 0)
			return derr_set(e, DERR_INVALID, "judge", "settled is read from the display's drawing "
			    "(XDamage); leave judge auto (got %s)", want);
		snprintf(why, len, "settled: no drawing on the display for a while, from its XDamage "
		    "reports; no model call, no OCR");
		return 0;
	}
	if (wjudge_is_a11y(criteria)) {
		if (strcmp(want, "auto") != 0)
			return derr_set(e, DERR_INVALID, "judge", "element conditions are read from the "
			    "accessibility tree; leave judge auto (got %s)", want);
		snprintf(why, len, "an element condition: read from the task display's accessibility tree, "
		    "no model call, no OCR");
		return 0;
	}
	if (strcmp(want, "ocr") == 0 || (strcmp(want, "auto") == 0 && waits_engine.ocr_mode)) {
		if (!text)
			return derr_set(e, DERR_INVALID, "wake_when", "%s judges visible text only: " TEXT_HOWTO,
			    waits_engine.ocr_mode ? "the ocr backend" : "judge \"ocr\"");
		if (!waits_engine.ocr_ok)
			return derr_set(e, DERR_UNAVAILABLE, "judge", "OCR is not available: %s", waits_engine.ocr_err);
		*ocr = true;
		snprintf(why, len, "%s: OCR reads %s\"%.120s\" in process, no model call",
		    waits_engine.ocr_mode ? "backend ocr" : strcmp(want, "ocr") == 0 ? "judge ocr asked" :
		    "a text condition", negate ? "that the screen no longer shows " : "", phrase);
		return 0;
	}
	if (strcmp(want, "auto") == 0 && text && waits_engine.ocr_ok) {
		*ocr = true;
		snprintf(why, len, "a text condition: OCR reads %s\"%.120s\" in process, no model call",
		    negate ? "that the screen no longer shows " : "", phrase);
		return 0;
	}
	if (ready && model_ready(e) != 0)
		return -1;
	if (strcmp(want, "model") == 0)
		snprintf(why, len, "judge model asked: the %s backend judges it", waits_engine.backend);
	else if (text)
		snprintf(why, len, "a text condition, but OCR is not available (%.100s): the %s backend "
		    "judges it", waits_engine.ocr_err, waits_engine.backend);
	else
		snprintf(why, len, "not a text condition: the %s backend judges the picture", waits_engine.backend);
	return 0;
}

/* mu held: records a judgement in j: counters, verdict, what woke it, the
 * model's summary and evidence. A YES whose confidence is under
 * ACU_WAIT_MIN_CONFIDENCE becomes PARTIAL. The caller finishes a YES in the
 * same hold of mu (wstore_judged), so no reader sees a verdict its status
 * does not show yet. */
void
wjudge_record_locked(struct job *j, struct vision_result *vr, bool use_ocr, const char *cause)
{
	if (!use_ocr && vr->structured && vr->verdict == VISION_YES && vr->confidence >= 0 &&
	    vr->confidence < waits_engine.min_conf) {
		size_t n = strlen(vr->reason);

		vr->verdict = VISION_PARTIAL;
		snprintf(vr->reason + n, sizeof vr->reason - n, " (resolved, but confidence %.2f is under "
		    "ACU_WAIT_MIN_CONFIDENCE %.2f)", vr->confidence, waits_engine.min_conf);
	}
	j->evaluations++;
	j->last_frame_ms = now_ms();
	j->tokens_in += vr->tokens_in;
	j->tokens_out += vr->tokens_out;
	snprintf(j->verdict, sizeof j->verdict, "%s", vision_verdict_name(vr->verdict));
	snprintf(j->reason, sizeof j->reason, "%.500s", vr->reason);
	j->woken_by = cause;
	j->confidence = use_ocr ? -1 : vr->confidence;
	memcpy(j->summary, use_ocr ? "" : vr->summary, use_ocr ? 1 : sizeof j->summary);
	memcpy(j->evidence, use_ocr ? "" : vr->evidence, use_ocr ? 1 : sizeof j->evidence);
}

void
wjudge_thread_end(void)
{
	ocr_free(tls_ocr);
	tls_ocr = NULL;
}
