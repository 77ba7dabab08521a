/*
 * takeover_input.c - a human's input from the dashboard's live view,
 * injected with XTest (xinput.h) at the mapped screen point, and audited.
 *
 * A batch is an array of events, in the coordinates of the iw x ih image
 * the browser shows (mapped to screen pixels here):
 *   {"t":"move","x","y"}                     pointer motion (not audited)
 *   {"t":"down","b","x","y"}                 button 1..3 pressed
 *   {"t":"up","b","x","y","x0"?,"y0"?}       released; (x0, y0): where it
 *                                            was pressed (click vs drag)
 *   {"t":"wheel","x","y","dy","dx"?}         wheel clicks, + is down/right
 *   {"t":"text","s"}                         UTF-8 text, any script
 *   {"t":"key","k"}                          a key or chord: "ctrl+l", "Return"
 * Every event is checked before the first is injected: one bad event
 * refuses the whole batch (400 naming it, "events[3].k"), so a batch is
 * never half applied because of its own content (an X error midway can
 * still stop it). The batch then runs under one display lease, in order.
 * Audit: each click, drag, chord or key becomes a `human` action in the
 * task tree ("human: click at (x, y)", "human: pressed ctrl+l");
 * text only as a count of characters (never the text: it may be a
 * password), one action per run of text even when it spans batches (the
 * open run's count waits in takeover.c); motion and wheel as counts.
 *
 * Not here: who may send input (takeover.c checks the lease), HTTP.
 */
#include "takeover.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "takeover_int.h"
#include "task/task.h"
#include "x11/display.h"
#include "x11/xinput.h"

#define INPUT_MAX_EVENTS 500
#define INPUT_TEXT_MAX   4096
#define DRAG_MIN_PX      6
#define AUDIT_MAX        64

struct audit {
	char summary[160];
	int x, y;
};

struct batch {
	struct display_lease l;
	int iw, ih;
	struct takeover_counts n;
	struct audit a[AUDIT_MAX];
	int na;
	long typed;             /* characters in the current run of text */
	int injected;
};

static int
num(json_object *ev, const char *k, int def)
{
	json_object *v;

	if (!json_object_object_get_ex(ev, k, &v) || v == NULL)
		return def;
	return json_object_get_int(v);
}

static void
map(const struct batch *b, json_object *ev, const char *kx, const char *ky, int *x, int *y)
{
	long ix = num(ev, kx, 0), iy = num(ev, ky, 0);

	*x = (int)(ix * b->l.width / b->iw);
	*y = (int)(iy * b->l.height / b->ih);
	*x = *x < 0 ? 0 : *x >= b->l.width ? b->l.width - 1 : *x;
	*y = *y < 0 ? 0 : *y >= b->l.height ? b->l.height - 1 : *y;
}

static void
audit(struct batch *b, int x, int y, const char *fmt, ...) DETM_PRINTF(4, 5);

static void
audit(struct batch *b, int x, int y, const char *fmt, ...)
{
	va_list ap;

	if (b->na >= AUDIT_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(b->a[b->na].summary, sizeof b->a[b->na].summary, fmt, ap);
	va_end(ap);
	b->a[b->na].x = x;
	b->a[b->na].y = y;
	b->na++;
}

/* A run of text ends (another kind of event, or the batch's end). */
static void
end_text(struct batch *b)
{
	if (b->typed > 0)
		audit(b, -1, -1, "human: typed %ld character%s", b->typed, b->typed == 1 ? "" : "s");
	b->typed = 0;
}

static int
button_up(struct batch *b, json_object *ev, int btn, int x, int y, struct derr *e)
{
	static const char *const names[] = { "", "click", "middle-click", "right-click" };
	int x0, y0;

	if (xinput_button(b->l.d, btn, 0, e) != 0)
		return -1;
	if (json_object_object_get_ex(ev, "x0", NULL)) {
		map(b, ev, "x0", "y0", &x0, &y0);
	} else {
		x0 = x;
		y0 = y;
	}
	if (abs(x - x0) + abs(y - y0) >= DRAG_MIN_PX) {
		b->n.drags++;
		audit(b, x, y, "human: drag from (%d, %d) to (%d, %d)", x0, y0, x, y);
	} else {
		b->n.clicks++;
		audit(b, x, y, "human: %s at (%d, %d)", names[btn], x, y);
	}
	return 0;
}

static int
text(struct batch *b, json_object *ev, struct derr *e)
{
	json_object *v;
	size_t len, sent = 0;
	const char *s;

	if (!json_object_object_get_ex(ev, "s", &v) || !json_object_is_type(v, json_type_string))
		return derr_set(e, DERR_INVALID, "events", "a text event needs a string s");
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (len > INPUT_TEXT_MAX)
		return derr_set(e, DERR_INVALID, "events", "text events carry at most %d bytes",
		    INPUT_TEXT_MAX);
	if (xinput_type(b->l.d, s, len, &sent, e) != 0)
		return -1;
	b->typed += (long)sent;
	b->n.keystrokes += (long)sent;
	return 0;
}

static int
key(struct batch *b, json_object *ev, struct derr *e)
{
	json_object *v;
	const char *k;

	if (!json_object_object_get_ex(ev, "k", &v) || !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0 || json_object_get_string_len(v) > 64)
		return derr_set(e, DERR_INVALID, "events", "a key event needs k (1..64 bytes)");
	k = json_object_get_string(v);
	if (xinput_keys(b->l.d, k, e) != 0)
		return -1;
	b->n.keystrokes++;
	if (strchr(k, '+') != NULL && k[1] != '\0')
		b->n.chords++;
	audit(b, -1, -1, "human: pressed %s", k);
	return 0;
}

static int
wheel(struct batch *b, json_object *ev, int x, int y, struct derr *e)
{
	int dy = num(ev, "dy", 0), dx = num(ev, "dx", 0);

	if (xinput_move_now(b->l.d, x, y, e) != 0)
		return -1;
	if (dy != 0 && xinput_scroll(b->l.d, dy > 0 ? "down" : "up", abs(dy) > 100 ? 100 : abs(dy), e) != 0)
		return -1;
	if (dx != 0 && xinput_scroll(b->l.d, dx > 0 ? "right" : "left", abs(dx) > 100 ? 100 : abs(dx), e) != 0)
		return -1;
	b->n.scrolls += abs(dy) + abs(dx);
	return 0;
}

static int
one(struct batch *b, json_object *ev, struct derr *e)
{
	json_object *tv;
	const char *t;
	int x = 0, y = 0, btn;

	if (!json_object_is_type(ev, json_type_object) || !json_object_object_get_ex(ev, "t", &tv) ||
	    !json_object_is_type(tv, json_type_string))
		return derr_set(e, DERR_INVALID, "events", "each event is an object with a string t");
	t = json_object_get_string(tv);
	if (strcmp(t, "text") != 0)
		end_text(b);
	map(b, ev, "x", "y", &x, &y);
	btn = num(ev, "b", 1);
	if ((strcmp(t, "down") == 0 || strcmp(t, "up") == 0) && (btn < 1 || btn > 3))
		return derr_set(e, DERR_INVALID, "events", "b (the button) must be 1, 2 or 3");
	if (strcmp(t, "move") == 0)
		return xinput_move_now(b->l.d, x, y, e);
	if (strcmp(t, "down") == 0)
		return xinput_move_now(b->l.d, x, y, e) != 0 ? -1 : xinput_button(b->l.d, btn, 1, e);
	if (strcmp(t, "up") == 0)
		return xinput_move_now(b->l.d, x, y, e) != 0 ? -1 : button_up(b, ev, btn, x, y, e);
	if (strcmp(t, "wheel") == 0)
		return wheel(b, ev, x, y, e);
	if (strcmp(t, "text") == 0)
		return text(b, ev, e);
	if (strcmp(t, "key") == 0)
		return key(b, ev, e);
	return derr_set(e, DERR_INVALID, "events", "unknown event t '%.*s' (move, down, up, wheel, "
	    "text, key)", utf8_prec(t, 16), t);
}

/* ---- validation: the whole batch, before anything is injected ---- */

static const char *const event_types[] = { "move", "down", "up", "wheel", "text", "key" };

/* Member k of event i, an integer within +-65535 if present (required:
 * present too). */
static int
check_int(json_object *ev, size_t i, const char *k, bool required, struct derr *e)
{
	json_object *v;
	char f[40];

	snprintf(f, sizeof f, "events[%zu].%s", i, k);
	if (!json_object_object_get_ex(ev, k, &v) || v == NULL)
		return required ? derr_set(e, DERR_INVALID, f, "%s is required (an integer): nothing in "
		    "this batch was injected", f) : 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < -65535 ||
	    json_object_get_int64(v) > 65535)
		return derr_set(e, DERR_INVALID, f, "%s must be an integer (-65535..65535): nothing in "
		    "this batch was injected", f);
	return 0;
}

/* Event i's string member k (1..max bytes), checked by check(). */
static int
check_str(json_object *ev, size_t i, const char *k, size_t max,
    int (*check)(const char *, size_t, struct derr *), struct derr *e)
{
	json_object *v;
	size_t len;
	char f[40];

	snprintf(f, sizeof f, "events[%zu].%s", i, k);
	if (!json_object_object_get_ex(ev, k, &v) || !json_object_is_type(v, json_type_string) ||
	    (len = (size_t)json_object_get_string_len(v)) == 0 || len > max)
		return derr_set(e, DERR_INVALID, f, "%s must be a string of 1..%zu bytes: nothing in this "
		    "batch was injected", f, max);
	if (check(json_object_get_string(v), len, e) != 0) {
		char why[sizeof e->message];

		snprintf(why, sizeof why, "%s", e->message);
		return derr_set(e, DERR_INVALID, f, "%s: %s; nothing in this batch was injected", f, why);
	}
	return 0;
}

static int
key_check(const char *k, size_t len, struct derr *e)
{
	(void)len;
	return xinput_keys_check(k, e);
}

static int
check_event(json_object *ev, size_t i, struct derr *e)
{
	json_object *tv;
	const char *t;
	bool ptr;
	size_t k;
	char f[40];

	snprintf(f, sizeof f, "events[%zu].t", i);
	if (!json_object_is_type(ev, json_type_object) || !json_object_object_get_ex(ev, "t", &tv) ||
	    !json_object_is_type(tv, json_type_string))
		return derr_set(e, DERR_INVALID, f, "events[%zu] must be an object with a string t: "
		    "nothing in this batch was injected", i);
	t = json_object_get_string(tv);
	for (k = 0; k < ARRAY_LEN(event_types) && strcmp(t, event_types[k]) != 0; k++)
		;
	if (k == ARRAY_LEN(event_types))
		return derr_set(e, DERR_INVALID, f, "%s '%.*s' is not an event (move, down, up, wheel, "
		    "text, key): nothing in this batch was injected", f, utf8_prec(t, 16), t);
	if (strcmp(t, "text") == 0)
		return check_str(ev, i, "s", INPUT_TEXT_MAX, xinput_type_check, e);
	if (strcmp(t, "key") == 0)
		return check_str(ev, i, "k", 64, key_check, e);
	ptr = strcmp(t, "down") == 0 || strcmp(t, "up") == 0;
	if (check_int(ev, i, "x", true, e) != 0 || check_int(ev, i, "y", true, e) != 0 ||
	    check_int(ev, i, "b", false, e) != 0 || check_int(ev, i, "x0", false, e) != 0 ||
	    check_int(ev, i, "y0", false, e) != 0 || check_int(ev, i, "dy", false, e) != 0 ||
	    check_int(ev, i, "dx", false, e) != 0)
		return -1;
	if (ptr && (num(ev, "b", 1) < 1 || num(ev, "b", 1) > 3)) {
		snprintf(f, sizeof f, "events[%zu].b", i);
		return derr_set(e, DERR_INVALID, f, "%s (the button) must be 1, 2 or 3: nothing in this "
		    "batch was injected", f);
	}
	if (json_object_object_get_ex(ev, "x0", NULL) != json_object_object_get_ex(ev, "y0", NULL)) {
		snprintf(f, sizeof f, "events[%zu].%s", i, json_object_object_get_ex(ev, "x0", NULL) ?
		    "y0" : "x0");
		return derr_set(e, DERR_INVALID, f, "x0 and y0 come together: nothing in this batch was "
		    "injected");
	}
	return 0;
}

/* Every event of the batch, checked before the first is injected: a bad
 * one refuses the whole batch (400, its field named: events[3].k). */
static int
check_batch(json_object *events, size_t n, struct derr *e)
{
	for (size_t i = 0; i < n; i++)
		if (check_event(json_object_array_get_idx(events, i), i, e) != 0)
			return -1;
	return 0;
}

/* The batch's audit entries, as `human` actions. */
static void
write_audit(struct store *st, const char *task_id, const struct batch *b)
{
	for (int i = 0; i < b->na; i++) {
		struct action_new a = { .type = "human", .summary = b->a[i].summary,
		    .status = "completed", .duration_ms = -1 };
		char id[ID_LEN], *in;
		int64_t ord;
		struct derr e;

		in = b->a[i].x >= 0 ? xasprintf("{\"actor\":\"human\",\"x\":%d,\"y\":%d}", b->a[i].x,
		    b->a[i].y) : xstrdup("{\"actor\":\"human\"}");
		a.input_json = in;
		if (task_action_add(st, task_id, &a, id, &ord, &e) != 0)
			log_warn("task %s: human action not audited: %s", task_id, e.message);
		free(in);
	}
}

json_object *
takeover_input(const char *task_id, const char *lease, json_object *events, int iw, int ih,
    struct derr *e)
{
	struct batch *b;
	struct store *st;
	size_t n, i;
	json_object *o = NULL;

	if (!json_object_is_type(events, json_type_array) ||
	    (n = json_object_array_length(events)) > INPUT_MAX_EVENTS) {
		derr_set(e, DERR_INVALID, "events", "events must be an array of at most %d events",
		    INPUT_MAX_EVENTS);
		return NULL;
	}
	if (check_batch(events, n, e) != 0)
		return NULL;
	b = xcalloc(1, sizeof *b);
	if (takeover_input_begin(task_id, lease, &st, &b->typed, e) != 0) {
		free(b);
		return NULL;
	}
	if (display_lease(task_id, DISPLAY_TASK_OR_SHARED, &b->l, e) != 0)
		goto out;
	b->iw = iw > 0 ? iw : b->l.width;
	b->ih = ih > 0 ? ih : b->l.height;
	for (i = 0; i < n; i++, b->injected++)
		if (one(b, json_object_array_get_idx(events, i), e) != 0)
			break;
	display_unlease(&b->l);
	write_audit(st, task_id, b);
	if (i == n) {
		o = json_object_new_object();
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		json_object_object_add(o, "injected", json_object_new_int(b->injected));
		json_object_object_add(o, "clicks", json_object_new_int64(b->n.clicks));
		json_object_object_add(o, "keystrokes", json_object_new_int64(b->n.keystrokes));
	} else {
		snprintf(e->field, sizeof e->field, "events");
	}
out:
	takeover_input_end(task_id, &b->n, b->typed);
	free(b);
	return o;
}
