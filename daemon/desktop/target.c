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
#include "effect.h"
#include "task/replay_rows.h"
#include "task/task.h"
#include "x11/a11y.h"
#include "x11/a11y_match.h"
#include "x11/xcap.h"
#include "x11/xwin.h"

struct tjob {
	char task_id[ID_LEN], action_id[ID_LEN];
	int x, y;
	bool look;                      /* keys or text: only the snapshot is read, no row */
	bool changed;                   /* the input closed or retitled a window, or opened a popup */
	char appeared[4][24];           /* ids of windows the input opened */
	struct xwin before;             /* evidence.window: under the point before the input */
	bool has_before;
	int64_t logged_us, input_us;    /* when it was logged; when its input began */
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

static const char *const key_actions[] = { "type", "press_key", NULL };

static bool
in_list(const char *a, const char *const *l)
{
	for (size_t i = 0; a != NULL && l[i] != NULL; i++)
		if (strcmp(a, l[i]) == 0)
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

	for (size_t i = 0; i < jx_alen(w); i++) {
		json_object *o = json_object_array_get_idx(w, i);
		const char *c = json_object_get_string(json_object_object_get(o, "change"));

		/* a window went, was retitled or a popup opened: the tree read
		 * after may show another state than the input was aimed at (a
		 * window that appeared is not the one under the point) */
		if (c != NULL && (strcmp(c, "went") == 0 || strcmp(c, "title") == 0 || strcmp(c, "popup") == 0))
			j->changed = true;
		if (c != NULL && strcmp(c, "appeared") == 0 && n < 4)
			snprintf(j->appeared[n++], sizeof j->appeared[0], "%s",
			    json_object_get_string(json_object_object_get(o, "id")));
	}
}

/* evidence.window (effect.c): the window under the point before the input. */
static void
before_of(json_object *out, struct tjob *j)
{
	json_object *w = json_object_object_get(json_object_object_get(out, "evidence"), "window");
	const char *id = json_object_get_string(json_object_object_get(w, "id"));
	const char *t = json_object_get_string(json_object_object_get(w, "title"));
	const char *c = json_object_get_string(json_object_object_get(w, "class"));

	if (w == NULL || id == NULL)
		return;
	j->has_before = true;
	j->before.id = strtoul(id, NULL, 16);
	snprintf(j->before.title, sizeof j->before.title, "%s", t != NULL ? t : "");
	snprintf(j->before.wm_class, sizeof j->before.wm_class, "%s", c != NULL ? c : "");
	j->before.x = json_object_get_int(json_object_object_get(w, "x"));
	j->before.y = json_object_get_int(json_object_object_get(w, "y"));
	j->before.width = json_object_get_int(json_object_object_get(w, "width"));
	j->before.height = json_object_get_int(json_object_object_get(w, "height"));
	j->before.visible = true;
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
	j.look = in_list(json_object_get_string(json_object_object_get(in, "action")), key_actions);
	if (!j.look && !in_list(json_object_get_string(json_object_object_get(in, "action")), point_actions))
		goto out;
	out = jx_parse_stored(n->a->output_json);
	if (!j.look && !point_of(out, &j.x, &j.y))
		goto out;
	snprintf(j.task_id, sizeof j.task_id, "%s", n->task_id);
	snprintf(j.action_id, sizeof j.action_id, "%s", n->action_id);
	appeared_of(out, &j);
	before_of(out, &j);
	j.logged_us = mono_us();
	j.input_us = j.logged_us - (n->a->duration_ms > 0 ? (int64_t)(n->a->duration_ms * 1000) : 0);
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
	json_object *o = effect_win_json(w);     /* evidence.window's shape, and where in it */

	json_object_object_add(o, "rel_x", json_object_new_int(x - w->x));
	json_object_object_add(o, "rel_y", json_object_new_int(y - w->y));
	return o;
}

/* What the display looked like after a task's last input: its windows
 * and its whole tree, the "before" of its next input (worker only). */
struct snap {
	char task_id[ID_LEN];
	struct xwin *w;
	size_t n;
	json_object *all;       /* a11y_elements' answer, or NULL */
	int64_t read_us;        /* when the read ended (mono) */
};
static struct snap snaps[TARGET_SNAPS];
static unsigned snap_next;

static struct snap *
snap_of(const char *task_id)
{
	for (int i = 0; i < TARGET_SNAPS; i++)
		if (snaps[i].w != NULL && strcmp(snaps[i].task_id, task_id) == 0)
			return &snaps[i];
	return NULL;
}

static void
snap_free(struct snap *s)
{
	free(s->w);
	json_object_put(s->all);
	memset(s, 0, sizeof *s);
}

/* Keeps (takes) w and all as task_id's snapshot. */
static void
snap_keep(const char *task_id, struct xwin *w, size_t n, json_object *all, int64_t read_us)
{
	struct snap *s = snap_of(task_id);

	if (s == NULL)
		s = &snaps[snap_next++ % TARGET_SNAPS];
	snap_free(s);
	snprintf(s->task_id, sizeof s->task_id, "%s", task_id);
	s->w = w;
	s->n = n;
	s->all = all;
	s->read_us = read_us;
}

/* The topmost visible window of w[0..n) at the point that the input did
 * not open. */
static bool
pick_window(const struct tjob *j, const struct xwin *w, size_t n, struct xwin *out)
{
	for (size_t i = n; i-- > 0;) {  /* topmost first */
		if (!w[i].visible || appeared(j, w[i].id) || j->x < w[i].x || j->y < w[i].y ||
		    j->x >= w[i].x + w[i].width || j->y >= w[i].y + w[i].height)
			continue;
		*out = w[i];
		return true;
	}
	return false;
}

/* Under a lease: the windows now and the pixels around the point. */
static int
read_x(const struct tjob *j, struct xcap_frame *fr, struct xwin **w, size_t *n)
{
	struct xcap_req q = { .x = j->x - TARGET_CAP_W / 2, .y = j->y - TARGET_CAP_H / 2,
		.w = TARGET_CAP_W, .h = TARGET_CAP_H };
	struct display_lease l;
	struct derr e;
	int rc;

	*w = NULL;
	*n = 0;
	if (desktop_lease(tg.app, j->task_id, &l, &e) != 0)
		return -1;
	q.x = q.x < 0 ? 0 : q.x;
	q.y = q.y < 0 ? 0 : q.y;
	rc = xwin_list(l.d, w, n, &e);
	if (rc == 0 && (j->look || xcap_grab(l.cap, &q, fr, &e) != 0))
		fr->width = fr->height = 0;
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
	const char *sa = json_object_get_string(json_object_object_get(a, "name"));
	const char *sb = json_object_get_string(json_object_object_get(b, "name"));
	char na[A11Y_NAME_MAX], nb[A11Y_NAME_MAX];

	a11y_norm(sa != NULL ? sa : "", na, sizeof na);     /* an element may have no name */
	a11y_norm(sb != NULL ? sb : "", nb, sizeof nb);
	return ra != NULL && rb != NULL && strcmp(ra, rb) == 0 && strcmp(na, nb) == 0;
}

static bool
in_window(json_object *all, json_object *el, const char *title)
{
	json_object *ws = json_object_object_get(all, "windows");
	int i = json_object_get_int(json_object_object_get(el, "window_index"));
	json_object *w = i >= 0 && (size_t)i < jx_alen(ws) ? json_object_array_get_idx(ws, (size_t)i) : NULL;
	const char *xt = json_object_get_string(json_object_object_get(w, "x_title"));
	const char *nm = json_object_get_string(json_object_object_get(w, "name"));

	if (title[0] == '\0' || w == NULL)
		return true;
	return (xt != NULL && strcmp(xt, title) == 0) || (nm != NULL && strcmp(nm, title) == 0) ||
	    (xt == NULL && nm == NULL);
}

/* The deepest element at the point in the window (all: a11y_elements'
 * answer for the display) with its index among the same role and name
 * there; NULL when none holds the point. */
static json_object *
element_at(json_object *all, const struct tjob *j, const struct xwin *win)
{
	json_object *els = json_object_object_get(all, "elements"), *best = NULL, *el, *o;
	int bestd = -1, idx = 0, of = 0;

	for (size_t i = 0; i < jx_alen(els); i++) {
		int d;

		el = json_object_array_get_idx(els, i);
		d = json_object_get_int(json_object_object_get(el, "depth"));
		if (in_window(all, el, win->title) && holds(el, j->x, j->y) && d >= bestd) {
			best = el;
			bestd = d;
		}
	}
	if (best == NULL)
		return NULL;
	for (size_t i = 0; i < jx_alen(els); i++) {
		el = json_object_array_get_idx(els, i);
		if (!in_window(all, el, win->title) || !same_el(el, best))
			continue;
		if (el == best)
			idx = of;
		of++;
	}
	o = json_object_new_object();
	json_object_object_add(o, "role", json_object_get(json_object_object_get(best, "role")));
	json_object_object_add(o, "name", json_object_get(json_object_object_get(best, "name")));
	json_object_object_add(o, "bounds", json_object_get(json_object_object_get(best, "bounds")));
	json_object_object_add(o, "index", json_object_new_int(idx));
	json_object_object_add(o, "of", json_object_new_int(of));
	return o;
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

/* A key input's job: the display after it, kept as the task's snapshot
 * (what its next click will find, when read before that click); no row. */
static void
look_job(const struct tjob *j, int number)
{
	struct a11y_query q = { .max = TARGET_ELEMENTS };
	struct xcap_frame fr = { 0 };
	struct xwin *w = NULL;
	json_object *all = NULL;
	struct derr e;
	size_t n = 0;

	if (number >= 0 && read_x(j, &fr, &w, &n) == 0) {
		if (a11y_active(number) && a11y_elements(number, &q, &all, &e) != 0)
			all = NULL;
		snap_keep(j->task_id, w, n, all, mono_us());
		w = NULL;
	}
	free(w);
	xcap_frame_free(&fr);
}

/* The element the input was aimed at, from the tree now (now_el) and the
 * snapshot's (snap_el; prior: read before the input began). Either is
 * taken (the other freed); "seen" says which tree: "before" (the one the
 * input found), or "after_change" (read after an input that opened,
 * closed or retitled a window: it may show another state than the one
 * the input was aimed at). */
static json_object *
pick_element(const struct tjob *j, json_object *now_el, json_object *snap_el, bool prior)
{
	json_object *el;

	if (snap_el != NULL && prior) {
		if (now_el != NULL && same_el(now_el, snap_el)) {
			json_object_put(snap_el);
			return now_el;
		}
		if (now_el != NULL)     /* what the tree showed there after the input */
			json_object_object_add(snap_el, "after", now_el);
		jx_add_str(snap_el, "seen", "before");
		return snap_el;
	}
	el = now_el != NULL ? now_el : snap_el;
	json_object_put(now_el != NULL ? snap_el : NULL);
	if (el != NULL && j->changed)
		jx_add_str(el, "seen", "after_change");
	else if (el != NULL && el == snap_el)
		jx_add_str(el, "seen", "before");
	return el;
}

static void
run_job(const struct tjob *j)
{
	json_object *t = json_object_new_object(), *p = json_object_new_object(), *all = NULL, *el = NULL;
	struct a11y_query q = { .max = TARGET_ELEMENTS };
	struct xcap_frame fr = { 0 };
	struct xwin win, *w = NULL;
	struct snap *before = snap_of(j->task_id);
	struct derr e;
	size_t n = 0;
	int number = display_task_number(j->task_id);
	bool now = false, was = false, prior = before != NULL && before->read_us <= j->input_us;
	int64_t read_us;

	json_object_object_add(p, "x", json_object_new_int(j->x));
	json_object_object_add(p, "y", json_object_new_int(j->y));
	json_object_object_add(t, "point", p);
	if (number < 0 || read_x(j, &fr, &w, &n) != 0)
		goto store;
	if (a11y_active(number) && a11y_elements(number, &q, &all, &e) != 0)
		all = NULL;
	read_us = mono_us();
	/* The window under the point before the input (the effect watch's
	 * own list), as it is now, or as it was if the input closed it; else
	 * the one at the point now; else the one in the snapshot. */
	if (j->has_before) {
		win = j->before;
		was = true;
		for (size_t i = 0; i < n; i++)
			if (w[i].id == j->before.id && w[i].visible)
				win = w[i], now = true, was = false;
	} else if (!(now = pick_window(j, w, n, &win)) && before != NULL) {
		was = pick_window(j, before->w, before->n, &win);
	}
	if (now || was) {
		json_object_object_add(t, "window", window_json(&win, j->x, j->y));
		if (was)
			jx_add_str(t, "seen", "before");
		el = pick_element(j, now && all != NULL ? element_at(all, j, &win) : NULL,
		    before != NULL && before->all != NULL ? element_at(before->all, j, &win) : NULL, prior);
	}
	if (el != NULL) {
		json_object *pt = NULL;

		if (now && a11y_at_point(number, j->x, j->y, &pt, &e) == 0 &&
		    same_el(json_object_object_get(pt, "element"), el))
			json_object_object_add(el, "path", json_object_get(json_object_object_get(pt, "path")));
		json_object_put(pt);
		json_object_object_add(t, "element", el);
	}
	if (now && fr.width > 0)
		read_text(j, &fr, &win, t);
	snap_keep(j->task_id, w, n, all, read_us);
	w = NULL;
	all = NULL;
store:
	json_object_object_add(t, "read_after_ms", json_object_new_int64((mono_us() - j->logged_us) / 1000));
	if (replay_target_set(tg.app->store, j->action_id, t, &e) != 0)
		log_warn("target: could not store action %s's target: %s", j->action_id, e.message);
	free(w);
	json_object_put(all);
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
		if (j.look)
			look_job(&j, display_task_number(j.task_id));
		else
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
	if (!app->cfg->replay_targets)
		return 0;
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
	for (int i = 0; i < TARGET_SNAPS; i++)
		snap_free(&snaps[i]);
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
