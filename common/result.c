/*
 * result.c - see result.h. Owns the wording of tool results: the one-line
 * summaries of daemon replies (content[0] is always one sentence with the
 * ids the model needs next), images as image blocks (never base64 text),
 * and the error text format. Pure JSON, in common/ so that an MCP endpoint
 * in detmd can shape results the same way. Not here: deciding
 * what is an error (forward.c), JSON-RPC envelopes (rpc.c).
 */
#include "result.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsjson.h"
#include "lim.h"
#include "utf8.h"

#define SUMMARY_MAX 1024

/* The version index from which structuredContent exists (2025-06-18). */
#define VERSION_STRUCTURED 2

static const char *
res_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

/* Copy at most max bytes of s into buf (size > max) without splitting a
 * UTF-8 sequence, so summaries stay valid UTF-8. NULL becomes "". */
static const char *
res_clip(const char *s, char *buf, size_t max)
{
	size_t n;

	if (s == NULL)
		return "";
	n = strlen(s);
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;        /* s[n] starts the first sequence left out */
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

static bool
res_int(struct json_object *o, const char *key, long long *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

static struct json_object *
res_array(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array))
		return v;
	return NULL;
}

/* A completion's verdict first (completion.h): "Item 2 completed:
 * contradicted: 1 failed action ... . " or "Task completed: ...". How many
 * bytes written (0 when b has no verdict). */
static size_t
res_completion_line(struct json_object *b, char *out, size_t len)
{
	struct json_object *why = NULL, *s = NULL;
	const char *v = res_str(b, "completion");
	char c[404];
	long long ord;
	size_t o;

	if (v == NULL || len == 0)
		return 0;
	if (json_object_object_get_ex(b, "completion_why", &why) && why != NULL)
		json_object_object_get_ex(why, "sentence", &s);
	if (res_int(b, "completion_item", &ord))
		o = (size_t)snprintf(out, len, "Item %lld completed: %s", ord, v);
	else
		o = (size_t)snprintf(out, len, "Task completed: %s", v);
	if (o < len && s != NULL && json_object_is_type(s, json_type_string))
		o += (size_t)snprintf(out + o, len - o, ": %s",
		    res_clip(json_object_get_string(s), c, 400));
	if (o < len)
		o += (size_t)snprintf(out + o, len - o, ". ");
	return o < len ? o : len - 1;
}

/* "Task 3f2a9c1b "Export": active, 33% (1 of 3 items completed); current item 1 "Export" (active)." */
static void
res_task_line(struct json_object *b, char *out, size_t len)
{
	struct json_object *items = res_array(b, "items");
	const char *cur_title = NULL, *cur_status = NULL;
	char c1[84], c2[84], c3[404];
	long long pct = 0, cur = -1;
	size_t i, n = items ? json_object_array_length(items) : 0, done = 0, o;

	res_int(b, "progress_pct", &pct);
	o = res_completion_line(b, out, len);
	/* The current item, as the daemon defines it: the first active item by
	 * ordinal, else the first pending one. */
	for (i = 0; i < n; i++) {
		struct json_object *it = json_object_array_get_idx(items, i);
		const char *st = res_str(it, "status");
		if (st == NULL)
			continue;
		if (strcmp(st, "completed") == 0)
			done++;
		if ((strcmp(st, "active") == 0 && (cur_status == NULL || strcmp(cur_status, "active") != 0)) ||
		    (strcmp(st, "pending") == 0 && cur_status == NULL)) {
			cur_status = st;
			cur_title = res_str(it, "title");
			res_int(it, "ordinal", &cur);
		}
	}
	if (o < len)
		o += (size_t)snprintf(out + o, len - o, "Task %s \"%s\": %s, %lld%% (%zu of %zu items completed)",
	                     res_str(b, "task_id"), res_clip(res_str(b, "name"), c1, 80),
	                     res_str(b, "status") ? res_str(b, "status") : "?", pct, done, n);
	if (o < len && cur_status != NULL)
		o += (size_t)snprintf(out + o, len - o, "; current item %lld \"%s\" (%s)",
		                      cur, res_clip(cur_title, c2, 80), cur_status);
	if (o < len && res_str(b, "summary") != NULL)
		o += (size_t)snprintf(out + o, len - o, ". %s", res_clip(res_str(b, "summary"), c3, 400));
	if (o < len)
		snprintf(out + o, len - o, ".");
}

/* task_register: " It has its own display :101 (1280x720): ..." after the
 * task line, when the task got one. */
static void
res_display_note(struct json_object *b, char *out, size_t len)
{
	struct json_object *meta;
	const char *disp, *res;
	size_t o = strlen(out);

	if (!json_object_object_get_ex(b, "metadata", &meta) || (disp = res_str(meta, "display")) == NULL ||
	    o >= len)
		return;
	res = res_str(meta, "display_resolution");
	snprintf(out + o, len - o, " It has its own display %s%s%s%s: start programs there with "
	         "desktop_launch (metadata.display_env is the env for a program of your own).",
	         disp, res ? " (" : "", res ? res : "", res ? ")" : "");
}

/* "Wait 1a2b3c4d is watching (screen: "the dialog says Done"), 12 s, 3 evaluations, last verdict NO." */
static void
res_wait_line(const char *verb, struct json_object *b, char *out, size_t len)
{
	char c1[84], c2[164];
	long long el = 0, ev = 0;
	size_t o;

	res_int(b, "elapsed_seconds", &el);
	res_int(b, "evaluations", &ev);
	o = (size_t)snprintf(out, len, "%sait %s is %s", verb, res_str(b, "wait_id"),
	                     res_str(b, "status") ? res_str(b, "status") : "?");
	if (o < len && res_str(b, "wake_when") != NULL)
		o += (size_t)snprintf(out + o, len - o, " (%s: \"%s\")",
		                      res_str(b, "target") ? res_clip(res_str(b, "target"), c1, 80) : "screen",
		                      res_clip(res_str(b, "wake_when"), c2, 160));
	if (o < len)
		o += (size_t)snprintf(out + o, len - o, ", %lld s, %lld evaluation(s)", el, ev);
	if (o < len && res_str(b, "verdict") != NULL)
		o += (size_t)snprintf(out + o, len - o, ", last verdict %s",
		                      res_clip(res_str(b, "verdict"), c1, 40));
	if (o < len)
		snprintf(out + o, len - o, "; check it with wait_status %s.", res_str(b, "wait_id"));
}

/* ", at (x, y) in screen pixels (scale 2)" when b has a position. */
static void
res_position(struct json_object *b, char *out, size_t len)
{
	struct json_object *v;
	long long x, y;
	const char *space = res_str(b, "coords");

	out[0] = '\0';
	if (!res_int(b, "x", &x) || !res_int(b, "y", &y))
		return;
	snprintf(out, len, " at (%lld, %lld) in %s pixels (scale %.4g)", x, y,
	         space != NULL && strcmp(space, "image") == 0 ? "image" : "screen",
	         json_object_object_get_ex(b, "scale", &v) ? json_object_get_double(v) : 1.0);
}

/* desktop_elements: "N elements on display :X (...)" and one line per
 * element (role "name" at x,y wxh), as many as fit. */
static void
res_elements_line(struct json_object *b, char *out, size_t len)
{
	struct json_object *arr = res_array(b, "elements"), *v;
	size_t i, o, ne = arr ? json_object_array_length(arr) : 0;
	char c1[84], c2[404], c3[160];
	const char *by, *state;

	by = res_str(b, "truncated_by");
	if (!json_object_object_get_ex(b, "truncated", &v) || !json_object_get_boolean(v))
		state = "complete";
	else if (ne == 0 && res_str(b, "hint") != NULL)
		state = "truncated";    /* the hint says how */
	else if (by == NULL || strcmp(by, "max") == 0)
		state = "truncated: ask with a filter or a larger max";
	else {
		snprintf(c3, sizeof c3, "truncated (budget: %s): narrow it with window, role or name",
		         res_clip(by, c1, 40));
		state = c3;
	}
	o = (size_t)snprintf(out, len, "%zu element%s on display %s (%s%s%s; screen pixels)",
	                     ne, ne == 1 ? "" : "s", res_str(b, "display") ? res_str(b, "display") : "?", state,
	                     ne == 0 ? "; " : "", ne == 0 ? (res_str(b, "hint") != NULL ?
	                     res_clip(res_str(b, "hint"), c2, 400) :
	                     "none: is the program accessible and started with the display env?") : "");
	for (i = 0; i < ne && o + 100 < len; i++) {
		struct json_object *el = json_object_array_get_idx(arr, i), *bd = NULL;
		long long x = 0, y = 0, w = 0, h = 0;

		if (json_object_object_get_ex(el, "bounds", &bd)) {
			res_int(bd, "x", &x);
			res_int(bd, "y", &y);
			res_int(bd, "width", &w);
			res_int(bd, "height", &h);
		}
		o += (size_t)snprintf(out + o, len - o, "\n%s \"%s\" at %lld,%lld %lldx%lld",
		                      res_str(el, "role") ? res_str(el, "role") : "?",
		                      res_clip(res_str(el, "name"), c1, 80), x, y, w, h);
	}
	if (i < ne && o + 40 < len)
		snprintf(out + o, len - o, "\n... %zu more in structuredContent", ne - i);
}

/* " Grounded by accessibility; verified: true (reason)." for gui_do,
 * gui_find and desktop_action replies that carry them; "" otherwise. */
static void
res_grounding(struct json_object *b, char *out, size_t len)
{
	struct json_object *v, *ver;
	const char *by = res_str(b, "grounded_by"), *why = NULL;
	char c1[164];
	size_t o = 0;

	out[0] = '\0';
	if (by != NULL)
		o = (size_t)snprintf(out, len, " Grounded by %s.", by);
	if (o >= len || !json_object_object_get_ex(b, "verification", &ver))
		return;
	why = res_str(ver, "reason");
	snprintf(out + o, len - o, " Verified: %s (%s).",
	         !json_object_object_get_ex(b, "verified", &v) || v == NULL ? "unknown" :
	         json_object_get_boolean(v) ? "true" : "false", res_clip(why, c1, 160));
}

/* A background gui_agent run: started (gui_agent) or followed
 * (gui_agent_status). */
static void
res_agent_run_line(bool started, struct json_object *b, char *out, size_t len)
{
	const char *id = res_str(b, "run_id"), *st = res_str(b, "status") ? res_str(b, "status") : "?";
	struct json_object *v, *er;
	double el = json_object_object_get_ex(b, "elapsed_s", &v) ? json_object_get_double(v) : 0.0;
	char c1[260];

	if (started)
		snprintf(out, len, "GUI agent run %s started in the background; follow it with "
		         "gui_agent_status %s (it answers when the run ends, or after block_s seconds).", id, id);
	else if (strcmp(st, "running") == 0)
		snprintf(out, len, "GUI agent run %s is still running (%.0f s); call gui_agent_status %s again.",
		         id, el, id);
	else if (strcmp(st, "failed") == 0 && json_object_object_get_ex(b, "error", &er))
		snprintf(out, len, "GUI agent run %s failed after %.0f s: %s", id, el,
		         res_clip(res_str(er, "message"), c1, 256));
	else
		snprintf(out, len, "GUI agent run %s is %s after %.0f s: %s: %s", id, st, el,
		         json_object_object_get_ex(b, "success", &v) && json_object_get_boolean(v) ?
		         "succeeded" : "did not succeed", res_clip(res_str(b, "summary"), c1, 256));
}

/* clipboard_* and file_*: what is where now. */
static void
res_transfer_line(const char *n, struct json_object *b, char *out, size_t len)
{
	struct json_object *v;
	char c1[260], c2[260];
	long long bytes = 0, chars = 0, count = 0;
	const char *sel = res_str(b, "selection") ? res_str(b, "selection") : "clipboard";
	const char *disp = res_str(b, "display") ? res_str(b, "display") : "?";
	bool img = res_str(b, "format") != NULL && strcmp(res_str(b, "format"), "image") == 0;

	res_int(b, "bytes", &bytes);
	res_int(b, "chars", &chars);
	if (strcmp(n, "clipboard_get") == 0 && json_object_object_get_ex(b, "empty", &v) &&
	    json_object_get_boolean(v))
		snprintf(out, len, "The %s of display %s is empty: no program owns it.", sel, disp);
	else if (strcmp(n, "clipboard_get") == 0)
		snprintf(out, len, "The %s of display %s holds %lld character(s) of text (%lld bytes, "
		         "as %s); the text is in structuredContent.text.", sel, disp, chars, bytes,
		         res_str(b, "target") ? res_str(b, "target") : "?");
	else if (strcmp(n, "clipboard_set") == 0)
		snprintf(out, len, "The %s of display %s now holds %s (%lld bytes); detmd serves it to "
		         "any program that pastes, until another program copies something.", sel, disp,
		         img ? "a PNG image" : "your text", bytes);
	else if (strcmp(n, "file_upload") == 0)
		snprintf(out, len, "Stored %s (%lld bytes, %s) in the task's folder: %s.",
		         res_clip(res_str(b, "path"), c1, 256), bytes,
		         json_object_object_get_ex(b, "created", &v) && json_object_get_boolean(v) ?
		         "new" : "replaced", res_clip(res_str(b, "absolute_path"), c2, 256));
	else if (strcmp(n, "file_download") == 0)
		snprintf(out, len, "Read %s (%lld bytes) from the task's folder: %s.",
		         res_clip(res_str(b, "path"), c1, 256), bytes,
		         res_str(b, "encoding") && strcmp(res_str(b, "encoding"), "utf-8") == 0 ?
		         "UTF-8 text in structuredContent.content" : "bytes as base64 in structuredContent.content_base64");
	else {
		res_int(b, "count", &count);
		res_int(b, "total_bytes", &bytes);
		snprintf(out, len, "%lld file(s) and folder(s), %lld bytes, in the task's folder %s "
		         "(type that path into a file dialog).", count, bytes,
		         res_clip(res_str(b, "folder"), c1, 256));
	}
}

/* One sentence for the tools whose reply is not a task, keyed by tool. */
static bool
res_tool_line(const struct tool *t, struct json_object *b, char *out, size_t len)
{
	const char *n = t->name;
	char c1[260], c2[164], pos[120], gr[260];
	long long a = 0, m = 0;
	struct json_object *v;

	res_position(b, pos, sizeof pos);
	res_grounding(b, gr, sizeof gr);
	if ((strcmp(n, "desktop_action") == 0 || strcmp(n, "gui_do") == 0) && res_str(b, "summary") != NULL &&
	    res_str(b, "effect") != NULL) {
		/* An input's verdict first (desktop/effect.h): "Clicked (412, 230): confirmed in 38 ms: ..." */
		char c3[704];

		snprintf(out, len, "%s. On display %s%s%s%s; only a confirmed effect is proof.",
		         res_clip(res_str(b, "summary"), c3, 700),
		         res_str(b, "display") ? res_str(b, "display") : "?", pos,
		         res_str(b, "grounded_by") ? ", grounded by " : "",
		         res_str(b, "grounded_by") ? res_str(b, "grounded_by") : "");
	} else if (strcmp(n, "desktop_action") == 0) {
		snprintf(out, len, "desktop_action %s on display %s%s: %s.%s",
		         res_str(b, "action") ? res_str(b, "action") : "?",
		         res_str(b, "display") ? res_str(b, "display") : "?", pos,
		         res_clip(res_str(b, "observation"), c1, 256), gr);
	} else if (strcmp(n, "gui_do") == 0) {
		snprintf(out, len, "gui_do did %s%s for \"%s\": %s.%s",
		         res_str(b, "action") ? res_str(b, "action") : "its step", pos,
		         res_clip(res_str(b, "instruction"), c2, 160),
		         res_clip(res_str(b, "observation"), c1, 256), gr);
	} else if (strcmp(n, "gui_find") == 0) {
		snprintf(out, len, "Found \"%s\"%s.%s Pass x and y unchanged to desktop_action or gui_do.",
		         res_clip(res_str(b, "target"), c2, 160), pos, gr);
	} else if ((strcmp(n, "gui_agent") == 0 || strcmp(n, "gui_agent_status") == 0) &&
	    res_str(b, "run_id") != NULL) {
		res_agent_run_line(strcmp(n, "gui_agent") == 0, b, out, len);
	} else if (strcmp(n, "gui_agent") == 0) {
		res_int(b, "actions_taken", &a);
		res_int(b, "turns", &m);
		snprintf(out, len, "GUI agent %s after %lld action(s) in %lld turn(s): %s.",
		         json_object_object_get_ex(b, "success", &v) && json_object_get_boolean(v) ?
		         "succeeded" : json_object_object_get_ex(b, "escalated", &v) &&
		         json_object_get_boolean(v) ? "escalated to a human" : "did not succeed",
		         a, m, res_clip(res_str(b, "summary"), c1, 256));
	} else if (strcmp(n, "desktop_elements") == 0) {
		res_elements_line(b, out, len);
	} else if (strcmp(n, "desktop_launch") == 0) {
		char obs[704];

		snprintf(out, len, "desktop_launch %s.", res_clip(res_str(b, "observation"), obs, 700));
	} else if ((strcmp(n, "video_record") == 0 || strcmp(n, "video_status") == 0) &&
	    strcmp(res_str(b, "status") ? res_str(b, "status") : "", "recording") == 0) {
		snprintf(out, len, "Clip %s is recording (%.1f s so far); follow it with video_status %s "
		         "(it answers when the clip is saved, or after block_s seconds).",
		         res_str(b, "clip_id") ? res_str(b, "clip_id") : "?",
		         json_object_object_get_ex(b, "duration_s", &v) ? json_object_get_double(v) : 0.0,
		         res_str(b, "clip_id") ? res_str(b, "clip_id") : "?");
	} else if (strcmp(n, "video_record") == 0 || strcmp(n, "video_status") == 0) {
		res_int(b, "frames", &a);
		snprintf(out, len, "Clip %s is %s: %.1f s, %lld frame(s), saved to %s (URL %s).",
		         res_str(b, "clip_id") ? res_str(b, "clip_id") : "?",
		         res_str(b, "status") ? res_str(b, "status") : "?",
		         json_object_object_get_ex(b, "duration_s", &v) ? json_object_get_double(v) : 0.0,
		         a, res_clip(res_str(b, "path"), c1, 256),
		         res_str(b, "url") ? res_str(b, "url") : "none yet");
	} else if (strncmp(n, "humanize_", 9) == 0) {
		snprintf(out, len, "Humanised input is %s (since %s).",
		         json_object_object_get_ex(b, "enabled", &v) && json_object_get_boolean(v) ?
		         "on" : "off", res_str(b, "since") ? res_str(b, "since") : "start");
	} else if (strcmp(n, "request_human") == 0) {
		snprintf(out, len, "Asked for a human on task %s (request %s); the operator was notified. "
		         "You will be woken when they hand the desktop back; until then your desktop "
		         "input is refused while they drive.",
		         res_str(b, "task_id") ? res_str(b, "task_id") : "?",
		         res_str(b, "request_id") ? res_str(b, "request_id") : "?");
	} else if (strncmp(n, "clipboard_", 10) == 0 || strncmp(n, "file_", 5) == 0) {
		res_transfer_line(n, b, out, len);
	} else if (strcmp(n, "memory_search") == 0) {
		snprintf(out, len, "Memory search found %zu match(es), best first.",
		         res_array(b, "results") ? json_object_array_length(res_array(b, "results")) : 0);
	} else if (strcmp(n, "memory_read") == 0) {
		res_int(b, "offset", &a);
		res_int(b, "total_lines", &m);
		snprintf(out, len, "Read %s from line %lld (the file has %lld line(s)).",
		         res_clip(res_str(b, "path") ? res_str(b, "path") : "MEMORY.md", c1, 256), a, m);
	} else if (strcmp(n, "memory_append") == 0) {
		snprintf(out, len, "Appended the note to %s.",
		         res_clip(res_str(b, "path") ? res_str(b, "path") : "the memory", c1, 256));
	} else {
		return false;
	}
	return true;
}

static void
res_summary(const struct tool *t, struct json_object *b, char *out, size_t len)
{
	struct json_object *arr;
	long long n, m;
	char c1[84];

	if (res_tool_line(t, b, out, len))
		return;
	if (res_str(b, "wait_id") != NULL) {
		res_wait_line(strcmp(t->name, "smart_wait") == 0 ? "Started w" : "W", b, out, len);
	} else if ((arr = res_array(b, "waits")) != NULL) {
		size_t i, o, nw = json_object_array_length(arr);
		o = (size_t)snprintf(out, len, "%zu active wait(s)%s", nw, nw ? ":" : ".");
		for (i = 0; i < nw && i < 20 && o < len; i++) {
			struct json_object *w = json_object_array_get_idx(arr, i);
			o += (size_t)snprintf(out + o, len - o, "%s %s %s", i ? ";" : "",
			                      res_str(w, "wait_id") ? res_str(w, "wait_id") : "?",
			                      res_str(w, "status") ? res_str(w, "status") : "?");
		}
		if (nw > 0 && o < len)
			snprintf(out + o, len - o, ".");
	} else if (res_str(b, "task_id") && res_str(b, "status") && res_array(b, "items") &&
	    !res_array(b, "messages")) {
		res_task_line(b, out, len);
		if (strcmp(t->name, "task_register") == 0)
			res_display_note(b, out, len);
	} else if ((arr = res_array(b, "tasks")) != NULL) {
		size_t i, o, nt = json_object_array_length(arr);
		o = (size_t)snprintf(out, len, "%zu task(s)%s", nt, nt ? ":" : ".");
		for (i = 0; i < nt && i < 20 && o < len; i++) {
			struct json_object *tk = json_object_array_get_idx(arr, i);
			n = 0;
			res_int(tk, "progress_pct", &n);
			o += (size_t)snprintf(out + o, len - o, "%s %s \"%s\" %s %lld%%",
			                      i ? ";" : "", res_str(tk, "task_id") ? res_str(tk, "task_id") : "?",
			                      res_clip(res_str(tk, "name"), c1, 40),
			                      res_str(tk, "status") ? res_str(tk, "status") : "?", n);
		}
	} else if ((arr = res_array(b, "messages")) != NULL) {
		if (!res_int(b, "message_count", &n))
			n = (long long)json_object_array_length(arr);
		snprintf(out, len, "Thread of task %s: showing %zu of %lld message(s), oldest first.",
		         res_str(b, "task_id") ? res_str(b, "task_id") : "?",
		         json_object_array_length(arr), n);
	} else if (res_str(b, "task_id") && res_int(b, "ordinal", &n) && res_array(b, "actions")) {
		if (!res_int(b, "action_count", &m))
			m = (long long)json_object_array_length(res_array(b, "actions"));
		snprintf(out, len, "Item %lld \"%s\" of task %s: %s, %lld action(s).", n,
		         res_clip(res_str(b, "title"), c1, 80), res_str(b, "task_id"),
		         res_str(b, "status") ? res_str(b, "status") : "?", m);
	} else if ((arr = res_array(b, "added")) != NULL) {
		snprintf(out, len, "Appended %zu plan item(s) to task %s.", json_object_array_length(arr),
		         res_str(b, "task_id") ? res_str(b, "task_id") : "?");
	} else if (res_str(b, "action_id")) {
		if (res_int(b, "plan_item_ordinal", &n))
			snprintf(out, len, "Logged action %s under item %lld of task %s.",
			         res_str(b, "action_id"), n, res_str(b, "task_id") ? res_str(b, "task_id") : "?");
		else
			snprintf(out, len, "Logged action %s at task level of task %s.",
			         res_str(b, "action_id"), res_str(b, "task_id") ? res_str(b, "task_id") : "?");
	} else if (strcmp(t->name, "health_check") == 0) {
		n = m = 0;
		res_int(b, "uptime_s", &n);
		res_int(b, "api_version", &m);
		snprintf(out, len, "detmd %s is %s (api_version %lld, uptime %lld s, database %s).",
		         res_str(b, "version") ? res_str(b, "version") : "?",
		         res_str(b, "status") && strcmp(res_str(b, "status"), "ok") == 0 ? "healthy" : "unhealthy",
		         m, n, res_str(b, "db") ? res_str(b, "db") : "?");
	} else {
		snprintf(out, len, "%s succeeded; its reply is in structuredContent.", t->name);
	}
}

static void
res_add_text(struct json_object *content, const char *text)
{
	struct json_object *blk = json_object_new_object();

	json_object_object_add(blk, "type", json_object_new_string("text"));
	json_object_object_add(blk, "text", json_object_new_string(text));
	json_object_array_add(content, blk);
}

static struct json_object *
res_new(struct json_object *content, struct json_object *structured, bool is_error)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "content", content);
	if (structured != NULL)
		json_object_object_add(r, "structuredContent", structured);
	if (is_error)
		json_object_object_add(r, "isError", json_object_new_boolean(1));
	return r;
}

/* An image block from o.image_b64 (o.mime_type or o.media_type), which
 * is removed from o; NULL when o has none. */
static struct json_object *
res_take_image(struct json_object *o)
{
	struct json_object *img;
	const char *mime = res_str(o, "mime_type");

	if (o == NULL || res_str(o, "image_b64") == NULL)
		return NULL;
	if (mime == NULL)
		mime = res_str(o, "media_type");
	img = json_object_new_object();
	json_object_object_add(img, "type", json_object_new_string("image"));
	json_object_object_add(img, "data", json_object_new_string(res_str(o, "image_b64")));
	json_object_object_add(img, "mimeType", json_object_new_string(mime ? mime : "image/jpeg"));
	json_object_object_del(o, "image_b64");
	return img;
}

struct json_object *
result_ok(const struct tool *t, struct json_object *body)
{
	struct json_object *content = json_object_new_array(), *shot = NULL, *img;
	char *js, line[SUMMARY_MAX];
	size_t jl;

	res_summary(t, body, line, sizeof line);
	utf8_fix_in_place(line, sizeof line);
	res_add_text(content, line);
	/* gui_do's after-screenshot is an image block, never base64 text */
	if (!json_object_object_get_ex(body, "after", &shot) ||
	    !json_object_object_get_ex(shot, "image_b64", NULL))
		json_object_object_get_ex(body, "screenshot", &shot);
	if ((img = res_take_image(shot)) != NULL)
		json_object_array_add(content, img);
	/* an input's picture after (observe: region|screen) */
	if (json_object_object_get_ex(body, "observed", &shot) && (img = res_take_image(shot)) != NULL)
		json_object_array_add(content, img);
	/* Clients before 2025-06-18 see no structuredContent: the JSON goes in
	 * a second text block (the spec's backwards-compatibility advice),
	 * written exactly as JSON.stringify(structuredContent, null, 2), which
	 * is what a gateway that shows both compares it with to drop the copy
	 * (OpenClaw). */
	if ((js = jsjson_pretty(body, LIM_TEXT_JSON, &jl)) != NULL) {
		res_add_text(content, js);
		free(js);
	} else {
		char note[160];

		jl = strlen(json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
		snprintf(note, sizeof note, "(reply is %zu bytes of JSON; it is in structuredContent, "
		         "ask for less detail to see it as text)", jl);
		res_add_text(content, note);
	}
	return res_new(content, body, false);
}

struct json_object *
result_image(const struct tool *t, struct json_object *body)
{
	struct json_object *content = json_object_new_array(), *sz;
	long long iw = 0, ih = 0, sw = 0, sh = 0;
	double scale = 1.0;
	char text[SUMMARY_MAX];

	if (json_object_object_get_ex(body, "image_size", &sz)) {
		res_int(sz, "width", &iw);
		res_int(sz, "height", &ih);
	}
	if (json_object_object_get_ex(body, "screen_size", &sz)) {
		res_int(sz, "width", &sw);
		res_int(sz, "height", &sh);
	}
	if (json_object_object_get_ex(body, "scale", &sz))
		scale = json_object_get_double(sz);
	else if (iw > 0 && sw > 0)
		scale = (double)sw / (double)iw;
	if (strcmp(t->name, "clipboard_get") == 0)
		snprintf(text, sizeof text, "The %s of display %s holds a %lldx%lld PNG image; here it is.",
		         res_str(body, "selection") ? res_str(body, "selection") : "clipboard",
		         res_str(body, "display") ? res_str(body, "display") : "?", iw, ih);
	else
		snprintf(text, sizeof text, "%s: a %lldx%lld image of the %lldx%lld screen, scale %.4g "
		         "(screen pixel = image pixel x %.4g, origin top-left). Tools take screen pixels; "
		         "pass coords: image to desktop_action to use this image's pixels.",
		         strcmp(t->name, "desktop_look") == 0 ? "Screenshot" : t->name,
		         iw, ih, sw, sh, scale, scale);
	res_add_text(content, text);
	json_object_array_add(content, res_take_image(body));
	return res_new(content, body, false);
}

struct json_object *
result_error(struct json_object *structured, const char *fmt, ...)
{
	struct json_object *content = json_object_new_array();
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	utf8_fix_in_place(text, sizeof text);
	res_add_text(content, text);
	return res_new(content, structured, true);
}

void
result_for_version(struct json_object *result, int version)
{
	if (version < VERSION_STRUCTURED)
		json_object_object_del(result, "structuredContent");
}

struct json_object *
result_clip(const struct tool *t, struct json_object *status)
{
	struct json_object *v, *err = NULL, *msg = NULL, *res;

	if (!json_object_object_get_ex(status, "status", &v) || json_object_get_string(v) == NULL ||
	    strcmp(json_object_get_string(v), "failed") != 0)
		return result_shape(t, status);
	if (json_object_object_get_ex(status, "error", &err))
		json_object_object_get_ex(err, "message", &msg);
	json_object_object_get_ex(status, "clip_id", &v);
	res = result_error(NULL, "the clip %s failed: %s", v ? json_object_get_string(v) : "?",
	    msg ? json_object_get_string(msg) : "no reason given");
	json_object_put(status);
	return res;
}

/* file_download of bytes that are not text: an image block for an image,
 * else an embedded resource (blob), never base64 in a text block; the
 * JSON text block has the rest of the reply. structuredContent = body. */
static struct json_object *
result_file(const struct tool *t, struct json_object *body)
{
	struct json_object *content = json_object_new_array(), *blk, *res, *meta;
	const char *mime = res_str(body, "mime_type") ? res_str(body, "mime_type") : "application/octet-stream";
	char line[SUMMARY_MAX], uri[1200];

	res_summary(t, body, line, sizeof line);
	utf8_fix_in_place(line, sizeof line);
	res_add_text(content, line);
	blk = json_object_new_object();
	if (strncmp(mime, "image/", 6) == 0 && strcmp(mime, "image/svg+xml") != 0) {
		json_object_object_add(blk, "type", json_object_new_string("image"));
		json_object_object_add(blk, "data", json_object_new_string(res_str(body, "content_base64")));
		json_object_object_add(blk, "mimeType", json_object_new_string(mime));
	} else {
		res = json_object_new_object();
		snprintf(uri, sizeof uri, "file://%s", res_str(body, "absolute_path") ?
		         res_str(body, "absolute_path") : "/unknown");
		json_object_object_add(res, "uri", json_object_new_string(uri));
		json_object_object_add(res, "mimeType", json_object_new_string(mime));
		json_object_object_add(res, "blob", json_object_new_string(res_str(body, "content_base64")));
		json_object_object_add(blk, "type", json_object_new_string("resource"));
		json_object_object_add(blk, "resource", res);
	}
	json_object_array_add(content, blk);
	if (json_object_deep_copy(body, &meta, NULL) == 0) {
		json_object_object_del(meta, "content_base64");
		res_add_text(content, json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN |
		                                                     JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(meta);
	}
	return res_new(content, body, false);
}

struct json_object *
result_shape(const struct tool *t, struct json_object *body)
{
	struct json_object *v;

	if (strcmp(t->name, "file_download") == 0 && res_str(body, "content_base64") != NULL)
		return result_file(t, body);

	/* gui_find and gui_do positions are screen pixels: say so */
	if (strncmp(t->name, "gui_", 4) == 0 && json_object_object_get_ex(body, "x", &v) &&
	    !json_object_object_get_ex(body, "coords", &v))
		json_object_object_add(body, "coords", json_object_new_string("screen"));
	if (res_str(body, "image_b64") != NULL)
		return result_image(t, body);
	return result_ok(t, body);
}
