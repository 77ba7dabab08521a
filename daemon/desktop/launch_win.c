/*
 * launch_win.c - the window a launch opened: the top-levels of the task's
 * display before the start, then a look every POLL_MS for a new one, each
 * look under its own short agent lease (desktop_lease_agent: refused while
 * a human drives the display).
 *
 * Which window: a new visible top-level whose _NET_WM_PID is in the
 * launch's session (the program or a child of it) as soon as there is
 * one; a new visible top-level of another process, or of an unknown one
 * that names its class (a browser that handed the URL to its running
 * instance, an Xt program that sets no _NET_WM_PID) only after
 * OTHER_GRACE_MS without one of ours; one naming neither (a splash
 * screen) only when nothing else appeared by the end. Once
 * found, it waits up to FOCUS_MS for the window manager to give it the
 * keyboard focus and reports what it saw ("focused" is evidence: false
 * when it had not got it by then). Nothing found: NULL, said so by the
 * caller ("no window yet").
 *
 * Does not: wait beyond wait_ms, or hold a lease between looks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "desktop.h"
#include "launch_int.h"
#include "x11/xwin.h"

#define POLL_MS 100
#define OTHER_GRACE_MS 1500
#define FOCUS_MS 1000

int
launch_win_snapshot(struct app *app, const char *task_id, unsigned long **ids, size_t *n,
    struct derr *e)
{
	struct display_lease l;
	struct xwin *v = NULL;
	size_t nv = 0;
	int rc;

	*ids = NULL;
	*n = 0;
	if (desktop_lease_agent(app, task_id, true, &l, e) != 0)
		return -1;
	rc = xwin_list(l.d, &v, &nv, e);
	display_unlease(&l);
	if (rc != 0)
		return -1;
	*ids = xcalloc(nv ? nv : 1, sizeof **ids);
	for (size_t i = 0; i < nv; i++)
		(*ids)[i] = v[i].id;
	*n = nv;
	free(v);
	return 0;
}

static bool
known(const unsigned long *ids, size_t n, unsigned long id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static json_object *
win_json(const struct xwin *w, bool ours)
{
	json_object *o = json_object_new_object();
	char id[24], title[sizeof w->title];

	snprintf(id, sizeof id, "0x%lx", w->id);
	snprintf(title, sizeof title, "%s", w->title);
	utf8_fix_in_place(title, sizeof title);
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "title", json_object_new_string(title));
	json_object_object_add(o, "class", json_object_new_string(w->wm_class));
	json_object_object_add(o, "pid", json_object_new_int(w->pid));
	json_object_object_add(o, "x", json_object_new_int(w->x));
	json_object_object_add(o, "y", json_object_new_int(w->y));
	json_object_object_add(o, "width", json_object_new_int(w->width));
	json_object_object_add(o, "height", json_object_new_int(w->height));
	json_object_object_add(o, "focused", json_object_new_boolean(w->focused));
	json_object_object_add(o, "ours", json_object_new_boolean(ours));
	return o;
}

/* What a look found among the new visible top-levels, topmost first:
 * one of p's session, one of another process (or of no known process)
 * that names its class, and one that names neither (a splash screen). */
struct found {
	struct xwin mine, other, weak;
	bool has_mine, has_other, has_weak;
};

/* One look. -1 when the display cannot be leased or listed. */
static int
look(struct app *app, const struct lproc *p, const unsigned long *before, size_t nb,
    struct found *f)
{
	struct display_lease l;
	struct xwin *v = NULL;
	struct derr e;
	size_t n = 0;
	int rc;

	memset(f, 0, sizeof *f);
	derr_clear(&e);
	if (desktop_lease_agent(app, p->task_id, true, &l, &e) != 0)
		return -1;
	rc = xwin_list(l.d, &v, &n, &e);
	display_unlease(&l);
	if (rc != 0)
		return -1;
	for (size_t i = n; i-- > 0;) {          /* topmost first */
		if (!v[i].visible || known(before, nb, v[i].id))
			continue;
		if (v[i].pid > 0 && launch_in_session(v[i].pid, p->pid)) {
			if (!f->has_mine)
				f->mine = v[i];
			f->has_mine = true;
		} else if (v[i].pid > 0 || v[i].wm_class[0] != '\0') {
			if (!f->has_other)
				f->other = v[i];
			f->has_other = true;
		} else if (!f->has_weak) {
			f->weak = v[i];
			f->has_weak = true;
		}
	}
	free(v);
	return 0;
}

/* The window's state after up to FOCUS_MS for the focus to arrive. */
static void
await_focus(struct app *app, const struct lproc *p, struct xwin *w, int64_t deadline_us)
{
	int64_t until = mono_us() + FOCUS_MS * 1000L;

	if (until > deadline_us + FOCUS_MS * 1000L)
		until = deadline_us + FOCUS_MS * 1000L;
	while (!w->focused && mono_us() < until) {
		struct display_lease l;
		struct derr e;
		struct xwin now;
		int rc;

		sleep_ms(POLL_MS / 2);
		derr_clear(&e);
		if (desktop_lease_agent(app, p->task_id, true, &l, &e) != 0)
			return;
		rc = xwin_get(l.d, w->id, &now, &e);
		display_unlease(&l);
		if (rc != 0)
			return;
		*w = now;
	}
}

void
launch_win_wait(struct app *app, struct lproc *p, const unsigned long *before, size_t nb,
    int wait_ms, json_object **win, int *waited_ms)
{
	int64_t t0 = mono_us(), deadline = t0 + (int64_t)wait_ms * 1000, other_since = 0;
	struct found f = { .has_mine = false };
	struct xwin w;
	bool ours = false, got = false;

	*win = NULL;
	while (wait_ms > 0 && mono_us() < deadline) {
		bool gone, failed;

		sleep_ms(POLL_MS);
		launch_lock();
		gone = !p->watching;    /* it and everything holding its output ended */
		failed = p->state != L_RUNNING && (p->exit_code != 0 || p->sig != 0);
		launch_unlock();
		if ((gone && failed) || look(app, p, before, nb, &f) != 0 || f.has_mine)
			break;
		/* Ended well: it may have handed its work to a running instance
		 * (a browser, mousepad), whose new window is not of its session. */
		if (gone && (f.has_other || f.has_weak))
			break;
		if (f.has_other && other_since == 0)
			other_since = mono_us();
		if (f.has_other && mono_us() - other_since >= OTHER_GRACE_MS * 1000L)
			break;
	}
	*waited_ms = (int)((mono_us() - t0) / 1000);
	if (f.has_mine || f.has_other || f.has_weak) {
		ours = f.has_mine;
		w = f.has_mine ? f.mine : f.has_other ? f.other : f.weak;
		got = true;
	}
	if (!got)
		return;
	await_focus(app, p, &w, deadline);
	launch_lock();
	p->window = w.id;
	snprintf(p->window_title, sizeof p->window_title, "%s", w.title);
	utf8_fix_in_place(p->window_title, sizeof p->window_title);
	launch_unlock();
	*win = win_json(&w, ours);
}
