/*
 * target.c - an input's target descriptor, read after the input by one
 * background worker (target.h has the shape and the rules).
 *
 * Invariants: the action hook only copies what it needs and queues (it
 * never blocks: a full queue drops the job); the worker holds a display
 * lease only for an xwin_list and one small capture, never across an
 * accessibility or OCR call; a job of a display that is gone is dropped.
 *
 * Does not: replay (gui/replay.c) or write anything but actions.target.
 */
#include "target.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ocr.h"
#include "core/jx.h"
#include "core/log.h"
#include "core/util.h"
#include "desktop.h"
#include "task/replay_rows.h"
#include "task/task.h"
#include "x11/a11y.h"
#include "x11/a11y_match.h"
#include "x11/xcap.h"
#include "x11/xwin.h"

struct tjob {
	char task_id[ID_LEN], action_id[ID_LEN];
	int x, y;
	char appeared[4][24];           /* ids of windows the input opened */
	int64_t logged_us;
};

static struct {
	struct app *app;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct tjob q[TARGET_QUEUE];
	int head, len, busy;
	bool stop, started;
	pthread_t th;
	struct ocr *ocr;
} tg = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static const char *const point_actions[] = { "click", "double_click", "right_click", "middle_click",
	"drag", "scroll", "mouse_move", NULL };

static bool
is_point_action(const char *a)
{
	for (size_t i = 0; a != NULL && point_actions[i] != NULL; i++)
		if (strcmp(a, point_actions[i]) == 0)
			return true;
	return false;
}

/* The input's screen point from its logged output (screen_x when it was
 * given in image coordinates). */
static bool
point_of(json_object *out, int *x, int *y)
{
	json_object *vx, *vy;

	if ((json_object_object_get_ex(out, "screen_x", &vx) && json_object_object_get_ex(out, "screen_y", &vy)) ||
	    (json_object_object_get_ex(out, "x", &vx) && json_object_object_get_ex(out, "y", &vy))) {
		*x = json_object_get_int(vx);
		*y = json_object_get_int(vy);
		return true;
	}
	return false;
}

static void
appeared_of(json_object *out, struct tjob *j)
{
	json_object *ev = json_object_object_get(out, "evidence");
	json_object *w = json_object_object_get(ev, "windows");
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(w) && n < 4; i++) {
		json_object *o = json_object_array_get_idx(w, i);
		const char *c = json_object_get_string(json_object_object_get(o, "change"));

		if (c != NULL && strcmp(c, "appeared") == 0)
			snprintf(j->appeared[n++], sizeof j->appeared[0], "%s",
			    json_object_get_string(json_object_object_get(o, "id")));
	}
}

static void
on_action(const struct task_action_note *n, void *arg)
{
	json_object *in = NULL, *out = NULL;
	struct tjob j = { 0 };

	(void)arg;
	if (n->a->type == NULL || strcmp(n->a->type, "gui") != 0 || n->a->status == NULL ||
	    strcmp(n->a->status, "completed") != 0 || n->a->input_json == NULL || n->a->output_json == NULL)
		return;
	in = jx_parse_stored(n->a->input_json);
	if (!is_point_action(json_object_get_string(json_object_object_get(in, "action"))))
		goto out;
	out = jx_parse_stored(n->a->output_json);
	if (!point_of(out, &j.x, &j.y))
		goto out;
	snprintf(j.task_id, sizeof j.task_id, "%s", n->task_id);
	snprintf(j.action_id, sizeof j.action_id, "%s", n->action_id);
	appeared_of(out, &j);
	j.logged_us = mono_us();
	pthread_mutex_lock(&tg.mu);
	if (tg.started && !tg.stop && tg.len < TARGET_QUEUE) {
		tg.q[(tg.head + tg.len) % TARGET_QUEUE] = j;
		tg.len++;
		pthread_cond_signal(&tg.cv);
	} else if (tg.started) {
		log_warn("target: queue full, action %s of task %s gets no target", j.action_id, j.task_id);
	}
	pthread_mutex_unlock(&tg.mu);
out:
	json_object_put(in);
	json_object_put(out);
}

static bool
appeared(const struct tjob *j, unsigned long id)
{
	char sid[24];

	snprintf(sid, sizeof sid, "0x%lx", id);
	for (int i = 0; i < 4 && j->appeared[i][0] != '\0'; i++)
		if (strcmp(j->appeared[i], sid) == 0)
			return true;
	return false;
}

static json_object *
window_json(const struct xwin *w, int x, int y)
{
	json_object *o = json_object_new_object();

	jx_add_str(o, "title", w->title);
	jx_add_str(o, "class", w->wm_class);
	json_object_object_add(o, "x", json_object_new_int(w->x));
	json_object_object_add(o, "y", json_object_new_int(w->y));
	json_object_object_add(o, "width", json_object_new_int(w->width));
	json_object_object_add(o, "height", json_object_new_int(w->height));
	json_object_object_add(o, "rel_x", json_object_new_int(x - w->x));
	json_object_object_add(o, "rel_y", json_object_new_int(y - w->y));
	return o;
}

/* Under a lease: the topmost visible window at the point that the input
 * did not open, and the pixels of the OCR box around the point. */
static int
read_x(const struct tjob *j, json_object *t, struct xcap_frame *fr, struct xwin *win)
{
	struct display_lease l;
	struct xwin *w = NULL;
	size_t n = 0;
	struct derr e;
	int rc = -1;

	memset(win, 0, sizeof *win);
	if (desktop_lease(tg.app, j->task_id, &l, &e) != 0)
		return -1;
	if (xwin_list(l.d, &w, &n, &e) == 0) {
		for (size_t i = n; i-- > 0;) {  /* topmost first */
			if (!w[i].visible || appeared(j, w[i].id) || j->x < w[i].x || j->y < w[i].y ||
			    j->x >= w[i].x + w[i].width || j->y >= w[i].y + w[i].height)
				continue;
			*win = w[i];
			json_object_object_add(t, "window", window_json(&w[i], j->x, j->y));
			break;
		}
	}
	free(w);
	{
		struct xcap_req q = { .x = j->x - TARGET_CAP_W / 2, .y = j->y - TARGET_CAP_H / 2,
			.w = TARGET_CAP_W, .h = TARGET_CAP_H };

		if (q.x < 0)
			q.x = 0;
		if (q.y < 0)
			q.y = 0;
		rc = xcap_grab(l.cap, &q, fr, &e);
	}
	display_unlease(&l);
	return rc;
}

static bool
holds(json_object *el, int x, int y)
{
	json_object *b = json_object_object_get(el, "bounds");
	int bx = json_object_get_int(json_object_object_get(b, "x"));
	int by = json_object_get_int(json_object_object_get(b, "y"));
	int bw = json_object_get_int(json_object_object_get(b, "width"));
	int bh = json_object_get_int(json_object_object_get(b, "height"));

	return b != NULL && x >= bx && y >= by && x < bx + bw && y < by + bh;
}

static bool
same_el(json_object *a, json_object *b)
{
	const char *ra = json_object_get_string(json_object_object_get(a, "role"));
	const char *rb = json_object_get_string(json_object_object_get(b, "role"));
	char na[A11Y_NAME_MAX], nb[A11Y_NAME_MAX];

	a11y_norm(json_object_get_string(json_object_object_get(a, "name")), na, sizeof na);
	a11y_norm(json_object_get_string(json_object_object_get(b, "name")), nb, sizeof nb);
	return ra != NULL && rb != NULL && strcmp(ra, rb) == 0 && strcmp(na, nb) == 0;
}

/* The deepest element at the point in the window's tree (by bounds), its
 * index among the same role and name there, and its path from
 * a11y_at_point when that answers the same element. */
static void
read_tree(int number, const struct tjob *j, const struct xwin *win, json_object *t)
{
	struct a11y_query q = { .window = win->title[0] != '\0' ? win->title : NULL, .max = 400 };
	json_object *all = NULL, *els, *best = NULL, *el, *pt = NULL;
	struct derr e;
	int bestd = -1, idx = 0, of = 0;

	if (!a11y_active(number) || a11y_elements(number, &q, &all, &e) != 0)
		return;
	els = json_object_object_get(all, "elements");
	for (size_t i = 0; i < json_object_array_length(els); i++) {
		int d;

		el = json_object_array_get_idx(els, i);
		d = json_object_get_int(json_object_object_get(el, "depth"));
		if (holds(el, j->x, j->y) && d >= bestd) {
			best = el;
			bestd = d;
		}
	}
	if (best == NULL)
		goto out;
	for (size_t i = 0; i < json_object_array_length(els); i++) {
		el = json_object_array_get_idx(els, i);
		if (!same_el(el, best))
			continue;
		if (el == best)
			idx = of;
		of++;
	}
	el = json_object_new_object();
	json_object_object_add(el, "role", json_object_get(json_object_object_get(best, "role")));
	json_object_object_add(el, "name", json_object_get(json_object_object_get(best, "name")));
	json_object_object_add(el, "bounds", json_object_get(json_object_object_get(best, "bounds")));
	json_object_object_add(el, "index", json_object_new_int(idx));
	json_object_object_add(el, "of", json_object_new_int(of));
	if (a11y_at_point(number, j->x, j->y, &pt, &e) == 0 &&
	    same_el(json_object_object_get(pt, "element"), best))
		json_object_object_add(el, "path", json_object_get(json_object_object_get(pt, "path")));
	json_object_object_add(t, "element", el);
out:
	json_object_put(pt);
	json_object_put(all);
}

/* The OCR box: the element's bounds when it has small ones holding the
 * point, else TARGET_TEXT_W x TARGET_TEXT_H around the point; inside the
 * window and the capture. */
static void
text_box(const struct tjob *j, const struct xcap_frame *fr, const struct xwin *win, json_object *t,
    int *x, int *y, int *x1, int *y1)
{
	json_object *b = json_object_object_get(json_object_object_get(t, "element"), "bounds");
	int bw = json_object_get_int(json_object_object_get(b, "width"));
	int bh = json_object_get_int(json_object_object_get(b, "height"));

	if (b != NULL && bw >= 8 && bh >= 8 && bw <= TARGET_CAP_W && bh <= TARGET_CAP_H / 2) {
		*x = json_object_get_int(json_object_object_get(b, "x"));
		*y = json_object_get_int(json_object_object_get(b, "y"));
		*x1 = *x + bw;
		*y1 = *y + bh;
	} else {
		*x = j->x - TARGET_TEXT_W / 2;
		*y = j->y - TARGET_TEXT_H / 2;
		*x1 = *x + TARGET_TEXT_W;
		*y1 = *y + TARGET_TEXT_H;
	}
	*x = *x < fr->src_x ? fr->src_x : *x;
	*y = *y < fr->src_y ? fr->src_y : *y;
	*x1 = *x1 > fr->src_x + fr->width ? fr->src_x + fr->width : *x1;
	*y1 = *y1 > fr->src_y + fr->height ? fr->src_y + fr->height : *y1;
	if (win->width > 0) {   /* only the window's own pixels */
		*x = *x < win->x ? win->x : *x;
		*y = *y < win->y ? win->y : *y;
		*x1 = *x1 > win->x + win->width ? win->x + win->width : *x1;
		*y1 = *y1 > win->y + win->height ? win->y + win->height : *y1;
	}
}

static void
read_text(const struct tjob *j, struct xcap_frame *fr, const struct xwin *win, json_object *t)
{
	int x, y, x1, y1;
	char *text = NULL;
	struct derr e;
	json_object *b;

	text_box(j, fr, win, t, &x, &y, &x1, &y1);
	if (x1 - x < 8 || y1 - y < 8)
		return;
	if (tg.ocr == NULL && (tg.ocr = ocr_new("eng", &e)) == NULL)
		return;
	if (ocr_text(tg.ocr, fr->rgb, fr->width, fr->height, x - fr->src_x, y - fr->src_y, x1 - x, y1 - y,
	    3, &text, NULL, &e) != 0)
		return;
	for (char *p = text; *p != '\0'; p++)
		if (*p == '\n')
			*p = ' ';
	jx_add_str(t, "text", text);
	b = json_object_new_object();
	json_object_object_add(b, "x", json_object_new_int(x));
	json_object_object_add(b, "y", json_object_new_int(y));
	json_object_object_add(b, "w", json_object_new_int(x1 - x));
	json_object_object_add(b, "h", json_object_new_int(y1 - y));
	json_object_object_add(t, "text_box", b);
	free(text);
}

static void
run_job(const struct tjob *j)
{
	json_object *t = json_object_new_object(), *p = json_object_new_object();
	struct xcap_frame fr = { 0 };
	struct xwin win;
	struct derr e;
	int number = display_task_number(j->task_id);

	json_object_object_add(p, "x", json_object_new_int(j->x));
	json_object_object_add(p, "y", json_object_new_int(j->y));
	json_object_object_add(t, "point", p);
	if (number >= 0 && read_x(j, t, &fr, &win) == 0) {
		read_tree(number, j, &win, t);
		read_text(j, &fr, &win, t);
	}
	json_object_object_add(t, "read_after_ms", json_object_new_int64((mono_us() - j->logged_us) / 1000));
	if (replay_target_set(tg.app->store, j->action_id, t, &e) != 0)
		log_warn("target: could not store action %s's target: %s", j->action_id, e.message);
	xcap_frame_free(&fr);
	json_object_put(t);
}

static void *
worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&tg.mu);
	for (;;) {
		struct tjob j;

		while (!tg.stop && tg.len == 0)
			pthread_cond_wait(&tg.cv, &tg.mu);
		if (tg.stop)
			break;
		j = tg.q[tg.head];
		tg.head = (tg.head + 1) % TARGET_QUEUE;
		tg.len--;
		tg.busy = 1;
		pthread_mutex_unlock(&tg.mu);
		run_job(&j);
		pthread_mutex_lock(&tg.mu);
		tg.busy = 0;
	}
	pthread_mutex_unlock(&tg.mu);
	return NULL;
}

int
target_init(struct app *app, struct derr *e)
{
	int err;

	tg.app = app;
	tg.stop = false;
	if ((err = pthread_create(&tg.th, NULL, worker, NULL)) != 0)
		return derr_set(e, DERR_INTERNAL, NULL, "target worker: %s", strerror(err));
	tg.started = true;
	task_action_hook_set(on_action, NULL);
	return 0;
}

void
target_shutdown(void)
{
	if (!tg.started)
		return;
	pthread_mutex_lock(&tg.mu);
	tg.stop = true;
	tg.len = 0;
	pthread_cond_broadcast(&tg.cv);
	pthread_mutex_unlock(&tg.mu);
	pthread_join(tg.th, NULL);
	tg.started = false;
	ocr_free(tg.ocr);
	tg.ocr = NULL;
}

int
target_flush(int timeout_ms)
{
	int64_t end = mono_us() + (int64_t)timeout_ms * 1000;
	int rc = 0;

	pthread_mutex_lock(&tg.mu);
	while (tg.started && !tg.stop && (tg.len > 0 || tg.busy)) {
		if (mono_us() >= end) {
			rc = -1;
			break;
		}
		pthread_mutex_unlock(&tg.mu);
		sleep_ms(20);
		pthread_mutex_lock(&tg.mu);
	}
	pthread_mutex_unlock(&tg.mu);
	return rc;
}
