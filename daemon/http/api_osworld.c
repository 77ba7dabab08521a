/*
 * api_osworld.c - the OSWorld in-VM server (xlang-ai/OSWorld's
 * desktop_env/server/main.py), one per task: /osworld/{task_id}/<route>,
 * so N harness workers drive N task displays through one detmd. This file:
 * the screen and its pointer (/screenshot with the cursor drawn,
 * /screen_size, /cursor_position, /platform), windows (/window_size,
 * /setup/activate_window, /setup/close_window) and recording
 * (/start_recording, /end_recording: a clip of detm's own recorder, its
 * MP4 sent whole at the end). Files, commands and launches are
 * api_osworld_io.c's; /accessibility is api_osworld_at.c's.
 *
 * Replies are OSWorld's own shapes (JSON, or its plain-text strings);
 * failures OSWorld has a shape for are answered in it ({"error": ...},
 * {"status":"error","message"}, plain text), what only detm refuses (a
 * human driving the display, no display of its own) in detm's error
 * shape. Every input and look goes through desktop.h (desktop_run,
 * desktop_lease_agent): logged on the task and gated by takeovers.
 *
 * Invariants: at most one OSWorld recording per task (clips[], under mu).
 * Does not: draw anything but the pointer, or record without a display.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "core/jx.h"
#include "desktop/desktop.h"
#include "osw_form.h"
#include "recorder/recorder.h"
#include "utf8.h"
#include "x11/display.h"
#include "x11/xcap.h"

#define OSW_CLIPS 64
#define OSW_CLIP_MAX_S 1800     /* OSWorld's own TIMEOUT */
#define OSW_CLIP_FPS 10

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct { char task_id[ID_LEN]; char clip_id[ID_LEN]; } clips[OSW_CLIPS];

/* A plain-text reply (OSWorld answers many routes with a bare string). */
static int
text(struct req *r, int status, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	utf8_fix_in_place(buf, sizeof buf);
	return req_reply_raw(r, status, "text/html; charset=utf-8", (unsigned char *)strdup(buf),
	    strlen(buf));
}

/* {"k": v} as OSWorld's jsonify gives it. */
static int
json1(struct req *r, int status, const char *k, const char *v)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, k, json_object_new_string(v));
	return req_reply(r, status, o);
}

/* ---- the screen ---- */

int
api_osw_screenshot(struct req *r, struct derr *e)
{
	struct display_lease l;
	struct xcap_req q = { .format = XCAP_PNG };
	struct xcap_frame f = { 0 };
	struct xcap_image img = { 0 };
	const char *id;
	int rc = -1;

	if (api_known_task(r, &id, e) != 0 || desktop_lease_agent(r->app, id, false, &l, e) != 0)
		return -1;
	if (xcap_grab(l.cap, &q, &f, e) == 0)
		(void)xcap_cursor_draw(l.d, &f);   /* no XFixes: the picture without it */
	display_unlease(&l);
	if (f.rgb != NULL && e->code == DERR_OK && xcap_encode(&f, XCAP_PNG, 0, &img, e) == 0) {
		rc = req_reply_raw(r, 200, "image/png", img.data, img.len);
		img.data = NULL;
	}
	xcap_frame_free(&f);
	xcap_image_free(&img);
	return rc;
}

int
api_osw_screen_size(struct req *r, struct derr *e)
{
	struct display_lease l;
	json_object *o;
	const char *id;

	if (api_known_task(r, &id, e) != 0 || desktop_lease_agent(r->app, id, false, &l, e) != 0)
		return -1;
	o = json_object_new_object();
	json_object_object_add(o, "width", json_object_new_int(l.width));
	json_object_object_add(o, "height", json_object_new_int(l.height));
	display_unlease(&l);
	return req_reply(r, 200, o);
}

int
api_osw_cursor_position(struct req *r, struct derr *e)
{
	struct desk_out out = { 0 };
	json_object *p = json_object_new_object(), *a;
	const char *id;
	int rc = -1;

	if (api_known_task(r, &id, e) == 0 &&
	    desktop_run(r->app, id, "get_mouse_position", p, false, &out, e) == 0) {
		a = json_object_new_array();   /* jsonify(x, y): a list */
		json_object_array_add(a, json_object_get(json_object_object_get(out.data, "x")));
		json_object_array_add(a, json_object_get(json_object_object_get(out.data, "y")));
		rc = req_reply(r, 200, a);
	}
	json_object_put(out.data);
	json_object_put(p);
	return rc;
}

int
api_osw_platform(struct req *r, struct derr *e)
{
	const char *id;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	return text(r, 200, "Linux");
}

/* ---- windows ---- */

/* The task display's windows, topmost first (caller owns), or NULL. */
static json_object *
windows(struct req *r, const char *id, struct derr *e)
{
	struct desk_out out = { 0 };
	json_object *p = json_object_new_object(), *w = NULL;

	if (desktop_run(r->app, id, "list_windows", p, false, &out, e) == 0)
		w = json_object_get(json_object_object_get(out.data, "windows"));
	json_object_put(out.data);
	json_object_put(p);
	return w;
}

/* Does window w match name (wmctrl's rules: a title containing it, any
 * case; strict: equal; by_class: WM_CLASS class or instance instead)? */
static bool
win_match(json_object *w, const char *name, bool strict, bool by_class)
{
	const char *keys[2] = { by_class ? "class" : "title", by_class ? "instance" : NULL };

	for (int k = 0; k < 2 && keys[k] != NULL; k++) {
		const char *v = json_object_get_string(json_object_object_get(w, keys[k]));

		if (v == NULL || v[0] == '\0')
			continue;
		if (strict ? strcmp(v, name) == 0 : strcasestr(v, name) != NULL)
			return true;
	}
	return false;
}

int
api_osw_window_size(struct req *r, struct derr *e)
{
	char cls[256];
	json_object *ws, *o = NULL;
	struct osw_form f;
	const char *id;

	if (api_known_task(r, &id, e) != 0 || osw_form_parse(r, &f, e) != 0)
		return -1;
	osw_form_text(&f, "app_class_name", cls, sizeof cls);
	osw_form_free(&f);
	if (cls[0] == '\0')
		return json1(r, 400, "error", "app_class_name is required");
	if ((ws = windows(r, id, e)) == NULL)
		return -1;
	for (size_t i = 0; i < json_object_array_length(ws) && o == NULL; i++) {
		json_object *w = json_object_array_get_idx(ws, i);

		const char *c = json_object_get_string(json_object_object_get(w, "class"));
		const char *in = json_object_get_string(json_object_object_get(w, "instance"));

		/* OSWorld: app_class_name equals one of WM_CLASS's two names, any case */
		if ((c == NULL || strcasecmp(c, cls) != 0) && (in == NULL || strcasecmp(in, cls) != 0))
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "width", json_object_get(json_object_object_get(w, "width")));
		json_object_object_add(o, "height", json_object_get(json_object_object_get(w, "height")));
	}
	json_object_put(ws);
	if (o == NULL)
		return json1(r, 404, "error", "no window of that class");
	return req_reply(r, 200, o);
}

/* activate_window and close_window: {window_name, strict, by_class}. */
static int
window_act(struct req *r, route_fn self, const char *action, const char *done, struct derr *e)
{
	const char *id, *name = NULL;
	bool strict = false, by_class = false;
	json_object *ws, *hit = NULL, *p;
	struct desk_out out = { 0 };
	int rc;

	if (api_body_check(r, self, e) != 0 || api_known_task(r, &id, e) != 0)
		return -1;
	if (jx_str(r->body, "window_name", false, 1, 256, &name, e) != 0 ||
	    jx_bool(r->body, "strict", &strict, NULL, e) != 0 ||
	    jx_bool(r->body, "by_class", &by_class, NULL, e) != 0)
		return -1;
	if (name == NULL)
		return text(r, 400, "window_name required");
	if ((ws = windows(r, id, e)) == NULL)
		return -1;
	for (size_t i = 0; i < json_object_array_length(ws) && hit == NULL; i++)
		if (win_match(json_object_array_get_idx(ws, i), name, strict, by_class))
			hit = json_object_array_get_idx(ws, i);
	if (hit == NULL) {
		json_object_put(ws);
		return text(r, 404, "Window %s not found (empty results)", name);
	}
	p = json_object_new_object();
	json_object_object_add(p, "window_id", json_object_get(json_object_object_get(hit, "id")));
	json_object_put(ws);
	rc = desktop_run(r->app, id, action, p, false, &out, e);
	json_object_put(p);
	json_object_put(out.data);
	return rc != 0 ? -1 : text(r, 200, "%s", done);
}

int
api_osw_activate_window(struct req *r, struct derr *e)
{
	return window_act(r, api_osw_activate_window, "focus_window", "Window activated successfully", e);
}

int
api_osw_close_window(struct req *r, struct derr *e)
{
	return window_act(r, api_osw_close_window, "close_window", "Window closed successfully.", e);
}

/* ---- recording ---- */

/* The task's OSWorld clip: its slot index, or -1. Lock held. */
static int
clip_slot(const char *task_id)
{
	for (int i = 0; i < OSW_CLIPS; i++)
		if (clips[i].task_id[0] != '\0' && strcmp(clips[i].task_id, task_id) == 0)
			return i;
	return -1;
}

static int
status_msg(struct req *r, int status, const char *st, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string(st));
	json_object_object_add(o, "message", json_object_new_string(msg));
	return req_reply(r, status, o);
}

int
api_osw_start_recording(struct req *r, struct derr *e)
{
	json_object *out = NULL;
	const char *id;
	int i, rc;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	pthread_mutex_lock(&mu);
	i = clip_slot(id);
	if (i >= 0) {
		json_object *st = rec_clip_status(clips[i].clip_id, 0, e);
		const char *s = json_object_get_string(json_object_object_get(st, "status"));
		bool running = s != NULL && (strcmp(s, "recording") == 0 || strcmp(s, "starting") == 0);

		json_object_put(st);
		derr_clear(e);
		if (running) {
			pthread_mutex_unlock(&mu);
			return status_msg(r, 400, "error", "Recording is already in progress.");
		}
		clips[i].task_id[0] = '\0';
	}
	for (i = 0; i < OSW_CLIPS && clips[i].task_id[0] != '\0'; i++)
		;
	if (i == OSW_CLIPS) {
		pthread_mutex_unlock(&mu);
		return derr_set(e, DERR_BUSY, NULL, "%d OSWorld recordings run already", OSW_CLIPS);
	}
	rc = rec_clip(id, OSW_CLIP_MAX_S, OSW_CLIP_FPS, NULL, false, &out, e);
	if (rc == 0) {
		snprintf(clips[i].task_id, ID_LEN, "%s", id);
		snprintf(clips[i].clip_id, ID_LEN, "%s",
		    json_object_get_string(json_object_object_get(out, "clip_id")));
	}
	pthread_mutex_unlock(&mu);
	json_object_put(out);
	if (rc != 0)
		return -1;
	return status_msg(r, 200, "success", "Started recording successfully.");
}

/* Whether a clip's status says it failed through a fault of detm's own
 * (an internal or disk error: 500); a clip that ended for an outside
 * reason (its display or window went, stopped before its first frame)
 * is the client's 409. */
static bool
clip_failed_inside(json_object *st)
{
	json_object *er = NULL, *code = NULL;
	const char *c;

	if (!json_object_object_get_ex(st, "error", &er) || !json_object_object_get_ex(er, "code", &code))
		return false;
	c = json_object_get_string(code);
	return c != NULL && (strcmp(c, "internal") == 0 || strcmp(c, "io_error") == 0 ||
	    strcmp(c, "no_space") == 0);
}

int
api_osw_end_recording(struct req *r, struct derr *e)
{
	char clip[ID_LEN], path[4096];
	json_object *out = NULL;
	struct stat sb;
	const char *id;
	bool failed;
	int i, fd;

	if (api_known_task(r, &id, e) != 0)
		return -1;
	pthread_mutex_lock(&mu);
	i = clip_slot(id);
	if (i >= 0) {
		snprintf(clip, sizeof clip, "%s", clips[i].clip_id);
		clips[i].task_id[0] = '\0';
	}
	pthread_mutex_unlock(&mu);
	if (i < 0)
		return status_msg(r, 400, "error", "No recording in progress to stop.");
	if (rec_clip_stop(clip, &out, e) != 0)
		return -1;
	/* A clip stopped before its first frame is no fault of detm's: 409
	 * (OSWorld's client takes any non-200 as "failed"); a clip that
	 * failed is 500 with OSWorld's text. */
	failed = clip_failed_inside(out);
	json_object_put(out);
	if (rec_clip_file(clip, path, sizeof path) != 0 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return text(r, failed ? 500 : 409, failed ? "Recording failed. The output file is missing or empty." :
		    "Recording failed: nothing was recorded (it was stopped before its first frame, or its display went).");
	if (fstat(fd, &sb) != 0 || sb.st_size == 0) {
		close(fd);
		return text(r, failed ? 500 : 409, failed ? "Recording failed. The output file is missing or empty." :
		    "Recording failed: nothing was recorded (it was stopped before its first frame, or its display went).");
	}
	req_header(r, "Content-Disposition", "attachment; filename=recording.mp4");
	return req_reply_fd(r, 200, "video/mp4", fd, 0, (uint64_t)sb.st_size);
}
