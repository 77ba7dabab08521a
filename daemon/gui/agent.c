/*
 * agent.c - gui_agent: a multi-step GUI agent (POST /api/gui/agent), the
 * Python DETM's live supervisor loop rebuilt on gui.c.
 *
 * Each turn: check the task (paused, cancelled or finished stops the loop),
 * take a screenshot of the display (<= 1280 px wide, JPEG), send the
 * instruction, a short history and the screenshot to a supervisor model
 * (OpenRouter chat/completions with OpenAI-style tools; model
 * ACU_OPENROUTER_LIVE_MODEL) and carry out the one tool it calls:
 * move_to / click / double_click (a target in words is grounded by the
 * configured backend through gui_find; x, y are pixels of the screenshot),
 * type_text, key_press, scroll, drag, wait, and done / escalate to finish.
 * Every step goes through gui_do, so it is logged as a `gui` action like
 * any other; the whole run is one more `gui` action with the reply.
 *
 * Limits: ACU_GUI_AGENT_MAX_TURNS turns, `timeout` seconds (180, at most
 * 300), 3 answers in a row without a usable tool call. One agent per
 * display at a time (a second is 409 naming the first), which the Python
 * DETM did not enforce. The display is leased only for each screenshot and
 * each step, never across a model call. Tokens are summed over all calls.
 *
 * Does not: stream, keep sessions across calls, or retry a failed model
 * call (the run fails with the model's error).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "backends/httpc.h"
#include "core/cancel.h"
#include "core/jx.h"
#include "desktop/desktop.h"
#include "desktop/takeover.h"
#include "gui.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "task/usage.h"
#include "x11/display.h"
#include "x11/xcap.h"

#define AGENT_SHOT_WIDTH     1280
#define AGENT_SHOT_QUALITY   70
#define AGENT_KEEP_TURNS     4       /* turns of history sent besides the instruction */
#define AGENT_FORMAT_TRIES   3
#define AGENT_LOG_KEEP       10
#define AGENT_MAX_RUNNING    16
#define AGENT_CALL_MAX_MS    120000

struct run {
	char key[ID_LEN + 8];   /* display key: a task id, or "shared" */
	char session[ID_LEN];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct run running[AGENT_MAX_RUNNING];

static const char system_prompt[] =
	"You operate a computer through its screen to carry out the user's instruction. Each turn you "
	"get the current screenshot. Call exactly one tool per turn. Coordinates are pixels of the "
	"screenshot. Prefer naming what to act on with `target` (a short description such as \"the "
	"Export button\"); a grounding model finds it. Give x and y only when the target cannot be "
	"described. Each action's result says whether detm saw it change something: confirmed is proof, "
	"suspected_noop means nothing changed, unverifiable means detm cannot tell (never count it as "
	"success). After each action look at the new screenshot before the next one. Call done when "
	"the instruction is carried out (success true) or cannot be (success false); call escalate "
	"when a human must step in (a login, a CAPTCHA, a choice you must not make).";

/* The first element of a JSON array, or NULL for anything else (json-c
 * asserts on a non-array). */
static json_object *
first_of(json_object *a)
{
	return json_object_is_type(a, json_type_array) && json_object_array_length(a) > 0 ?
	    json_object_array_get_idx(a, 0) : NULL;
}

/* ---- the one-per-display registry ---- */

static int
claim(const char *key, const char *session, struct derr *e)
{
	int free_slot = -1, rc = 0;

	pthread_mutex_lock(&mu);
	for (int i = 0; i < AGENT_MAX_RUNNING; i++) {
		if (running[i].key[0] == '\0') {
			if (free_slot < 0)
				free_slot = i;
		} else if (strcmp(running[i].key, key) == 0) {
			rc = derr_set(e, DERR_CONFLICT, NULL, "gui_agent session %s is already driving %s%s; "
			    "wait for it to finish", running[i].session, strcmp(key, "shared") ? "the display of task " :
			    "the shared display", strcmp(key, "shared") ? key : "");
			goto out;
		}
	}
	if (free_slot < 0) {
		rc = derr_set(e, DERR_UNAVAILABLE, NULL, "%d gui_agent sessions run already", AGENT_MAX_RUNNING);
		goto out;
	}
	snprintf(running[free_slot].key, sizeof running[free_slot].key, "%s", key);
	snprintf(running[free_slot].session, sizeof running[free_slot].session, "%s", session);
out:
	pthread_mutex_unlock(&mu);
	return rc;
}

static void
release(const char *session)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < AGENT_MAX_RUNNING; i++)
		if (strcmp(running[i].session, session) == 0)
			running[i].key[0] = running[i].session[0] = '\0';
	pthread_mutex_unlock(&mu);
}

/* ---- one turn's pieces ---- */

struct state {
	struct app *app;
	const char *task_id;
	double scale;           /* screenshot px * scale = screen px */
	int px, py;             /* where the pointer was last sent (screen) */
	json_object *log;       /* actions_log */
	int actions;
	long tin, tout;
	char human[512];        /* set when a step met a human driving (DERR_HUMAN_CONTROL) */
};

/* A step's error: a human took the display over (the run stops). */
static void
human_seen(struct state *s, const struct derr *e)
{
	if (e->code == DERR_HUMAN_CONTROL && s->human[0] == '\0')
		snprintf(s->human, sizeof s->human, "%s", e->message);
}

/* A data: URL of the display now, with its scale. */
static char *
screenshot(struct state *s, struct derr *e)
{
	struct display_lease l;
	struct xcap_req q = { .max_width = AGENT_SHOT_WIDTH, .quality = AGENT_SHOT_QUALITY,
		.format = XCAP_JPEG };
	struct xcap_frame f = { 0 };
	struct xcap_image img = { 0 };
	char *b64, *url = NULL;

	if (desktop_lease_agent(s->app, s->task_id, true, &l, e) != 0)   /* no look while a human drives */
		return NULL;
	if (xcap_shot(l.cap, &q, &f, &img, e) == 0) {
		s->scale = f.scale;
		b64 = b64_encode(img.data, img.len, NULL);
		url = xasprintf("data:image/jpeg;base64,%s", b64);
		free(b64);
	}
	display_unlease(&l);
	xcap_image_free(&img);
	xcap_frame_free(&f);
	return url;
}

/* A point from args (x, y in screenshot pixels) or a target in words. */
static int
point(struct state *s, json_object *args, const char *tkey, const char *xk, const char *yk,
    int *x, int *y, char *why, size_t whylen)
{
	json_object *vx, *vy, *out = NULL;
	const char *target = json_object_get_string(json_object_object_get(args, tkey));
	struct derr e;

	if (json_object_object_get_ex(args, xk, &vx) && json_object_object_get_ex(args, yk, &vy)) {
		*x = (int)lround(json_object_get_double(vx) * s->scale);
		*y = (int)lround(json_object_get_double(vy) * s->scale);
		return 0;
	}
	if (target == NULL || target[0] == '\0') {
		snprintf(why, whylen, "give a %s or %s and %s", tkey, xk, yk);
		return -1;
	}
	derr_clear(&e);
	if (gui_find(s->app, s->task_id, target, &out, &e) != 0) {
		human_seen(s, &e);
		snprintf(why, whylen, "could not find '%.*s': %.*s", utf8_prec(target, 100),
		    target, utf8_prec(e.message, 300), e.message);
		return -1;
	}
	*x = json_object_get_int(json_object_object_get(out, "x"));
	*y = json_object_get_int(json_object_object_get(out, "y"));
	json_object_put(out);
	return 0;
}

/* "text" with " and \ escaped for gui_do's explicit forms. */
static char *
quoted(const char *t)
{
	size_t n = strlen(t), o = 0;
	char *q = xmalloc(2 * n + 3);

	q[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		if (t[i] == '"' || t[i] == '\\')
			q[o++] = '\\';
		q[o++] = t[i] == '\n' ? '\n' : t[i];
	}
	q[o++] = '"';
	q[o] = '\0';
	return q;
}

/* ---- the tools: one row each (name, description, parameters, handler) ---- */

/* What a handler makes of one call. */
enum step_kind {
	STEP_DO,        /* carry out instr through gui_do */
	STEP_SAID,      /* nothing to carry out: out is the result */
	STEP_OVER,      /* the run is over (done, escalate): out is the result */
	STEP_REFUSED,   /* why says what is wrong with the call */
};

struct step {
	char instr[GUI_MAX_TEXT * 2 + 64];   /* STEP_DO: a gui_do explicit form */
	char why[512];                       /* STEP_REFUSED */
	char *out;                           /* the result for the model */
	size_t outlen;
};

typedef enum step_kind tool_fn(struct state *s, const char *name, json_object *args,
    json_object *reply, struct step *st);

static const char *
arg_str(json_object *args, const char *key)
{
	return json_object_get_string(json_object_object_get(args, key));
}

/* done and escalate: the run's reply. */
static enum step_kind
tool_finish(struct state *s, const char *name, json_object *args, json_object *reply, struct step *st)
{
	bool esc = name[0] == 'e';
	const char *str = arg_str(args, esc ? "reason" : "summary");

	json_object_object_add(reply, "success", json_object_new_boolean(!esc &&
	    json_object_get_boolean(json_object_object_get(args, "success"))));
	jx_add_str(reply, "summary", str ? str : (esc ? "escalated" : "done"));
	json_object_object_add(reply, "escalated", json_object_new_boolean(esc));
	json_object_object_add(reply, "escalation_reason", esc && str ? json_object_new_string(str) : NULL);
	snprintf(st->out, st->outlen, "finished");
	return STEP_OVER;
}

static enum step_kind
tool_wait(struct state *s, const char *name, json_object *args, json_object *reply, struct step *st)
{
	double sec = json_object_get_double(json_object_object_get(args, "seconds"));

	sec = sec > 0 ? fmin(sec, 10) : 1;
	sleep_ms(lround(sec * 1000));
	snprintf(st->out, st->outlen, "waited %.1f s", sec);
	return STEP_SAID;
}

/* move_to, click, double_click: a target, x and y, or (clicks) where the
 * pointer is. */
static enum step_kind
tool_pointer(struct state *s, const char *name, json_object *args, json_object *reply, struct step *st)
{
	const char *button = arg_str(args, "button");
	bool has = json_object_object_get_ex(args, "target", NULL) || json_object_object_get_ex(args, "x", NULL);
	int x, y;

	if (has && point(s, args, "target", "x", "y", &x, &y, st->why, sizeof st->why) != 0)
		return STEP_REFUSED;
	if (!has) {
		if (strcmp(name, "move_to") == 0 || s->px < 0) {
			snprintf(st->why, sizeof st->why, "%s needs a target or x and y", name);
			return STEP_REFUSED;
		}
		x = s->px;
		y = s->py;
	}
	snprintf(st->instr, sizeof st->instr, "%s(%d, %d)", strcmp(name, "move_to") == 0 ? "move" :
	    strcmp(name, "double_click") == 0 ? "double_click" :
	    button && strcmp(button, "right") == 0 ? "right_click" :
	    button && strcmp(button, "middle") == 0 ? "middle_click" : "click", x, y);
	s->px = x;
	s->py = y;
	return STEP_DO;
}

/* type_text and key_press. */
static enum step_kind
tool_keys(struct state *s, const char *name, json_object *args, json_object *reply, struct step *st)
{
	bool typing = name[0] == 't';
	const char *str = arg_str(args, typing ? "text" : "key");
	char *q;

	if (str == NULL || str[0] == '\0' || strlen(str) > GUI_MAX_TEXT) {
		snprintf(st->why, sizeof st->why, "%s needs a non-empty %s", name, typing ? "text" : "key");
		return STEP_REFUSED;
	}
	q = quoted(str);
	snprintf(st->instr, sizeof st->instr, "%s(%s)", typing ? "type" : "press", q);
	free(q);
	return STEP_DO;
}

static enum step_kind
tool_scroll(struct state *s, const char *name, json_object *args, json_object *reply, struct step *st)
{
	const char *dir = arg_str(args, "direction");
	int n = json_object_get_int(json_object_object_get(args, "amount"));

	snprintf(st->instr, sizeof st->instr, "scroll(%d, %d, \"%s\", %d)", s->px < 0 ? 10 : s->px,
	    s->py < 0 ? 10 : s->py, dir ? dir : "down", n > 0 && n <= 100 ? n : 3);
	return STEP_DO;
}

static enum step_kind
tool_drag(struct state *s, const char *name, json_object *args, json_object *reply, struct step *st)
{
	int x, y, x2, y2;

	if (point(s, args, "from_target", "x1", "y1", &x, &y, st->why, sizeof st->why) != 0 ||
	    point(s, args, "to_target", "x2", "y2", &x2, &y2, st->why, sizeof st->why) != 0)
		return STEP_REFUSED;
	snprintf(st->instr, sizeof st->instr, "drag(%d, %d, %d, %d)", x, y, x2, y2);
	s->px = x2;
	s->py = y2;
	return STEP_DO;
}

#define XY "'x':{'type':'integer'},'y':{'type':'integer'}"

/* The tools offered to the supervisor, in the order it is shown them.
 * params: the OpenAI function parameters as JSON with ' for ". */
static const struct agent_tool {
	const char *name;
	const char *description;
	const char *params;
	tool_fn *run;
} tools[] = {
	{ "move_to", "Move the pointer onto a target.",
	  "{'type':'object','properties':{'target':{'type':'string'}," XY "}}", tool_pointer },
	{ "click", "Click a target (or where the pointer is).",
	  "{'type':'object','properties':{'target':{'type':'string'}," XY ","
	  "'button':{'type':'string','enum':['left','right','middle']}}}", tool_pointer },
	{ "double_click", "Double-click a target.",
	  "{'type':'object','properties':{'target':{'type':'string'}," XY "}}", tool_pointer },
	{ "type_text", "Type text into the focused field (\\n is Enter).",
	  "{'type':'object','required':['text'],'properties':{'text':{'type':'string'}}}", tool_keys },
	{ "key_press", "Press a key or chord, e.g. Return, ctrl+s.",
	  "{'type':'object','required':['key'],'properties':{'key':{'type':'string'}}}", tool_keys },
	{ "scroll", "Scroll where the pointer is.",
	  "{'type':'object','required':['direction'],'properties':{'direction':{'type':'string',"
	  "'enum':['up','down','left','right']},'amount':{'type':'integer'}}}", tool_scroll },
	{ "drag", "Drag from one target to another.",
	  "{'type':'object','properties':{'from_target':{'type':'string'},'to_target':{'type':'string'},"
	  "'x1':{'type':'integer'},'y1':{'type':'integer'},'x2':{'type':'integer'},'y2':{'type':'integer'}}}",
	  tool_drag },
	{ "wait", "Wait for the screen to change (seconds, at most 10).",
	  "{'type':'object','properties':{'seconds':{'type':'number'}}}", tool_wait },
	{ "done", "Finish: the instruction is done (or cannot be).",
	  "{'type':'object','required':['summary','success'],'properties':{'summary':{'type':'string'},"
	  "'success':{'type':'boolean'}}}", tool_finish },
	{ "escalate", "Stop and ask a human.",
	  "{'type':'object','required':['reason'],'properties':{'reason':{'type':'string'}}}", tool_finish },
};

/* The table as OpenAI tool declarations (a new array). */
static json_object *
tools_declare(void)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < ARRAY_LEN(tools); i++) {
		json_object *t = json_object_new_object(), *f = json_object_new_object();
		char *params = xstrdup(tools[i].params);

		for (char *p = params; *p != '\0'; p++)
			if (*p == '\'')
				*p = '"';
		jx_add_str(f, "name", tools[i].name);
		jx_add_str(f, "description", tools[i].description);
		json_object_object_add(f, "parameters", json_tokener_parse(params));
		free(params);
		jx_add_str(t, "type", "function");
		json_object_object_add(t, "function", f);
		json_object_array_add(arr, t);
	}
	return arr;
}

/* Carries out one tool call through its row; the result text for the model
 * in out. Returns 1 when the run is over (done/escalate), 0 to go on. */
static int
act(struct state *s, const char *name, json_object *args, json_object *reply, char *out, size_t outlen)
{
	struct step st = { .out = out, .outlen = outlen };
	const struct agent_tool *t = NULL;
	json_object *res = NULL;
	enum step_kind k;
	struct derr e;

	for (size_t i = 0; i < ARRAY_LEN(tools) && t == NULL; i++)
		if (strcmp(tools[i].name, name) == 0)
			t = &tools[i];
	if (t == NULL) {
		snprintf(st.why, sizeof st.why, "there is no tool '%.*s'", utf8_prec(name, 60), name);
		k = STEP_REFUSED;
	} else {
		k = t->run(s, name, args, reply, &st);
	}
	if (k == STEP_OVER || k == STEP_SAID)
		return k == STEP_OVER;
	derr_clear(&e);
	if (k == STEP_DO && gui_do(s->app, s->task_id, st.instr, false, NULL, &res, &e) != 0) {
		human_seen(s, &e);
		snprintf(st.why, sizeof st.why, "%.*s failed: %.*s", utf8_prec(st.instr, 150), st.instr,
		    utf8_prec(e.message, 300), e.message);
		k = STEP_REFUSED;
	}
	if (k == STEP_REFUSED) {
		snprintf(out, outlen, "error: %s", st.why);
		return 0;
	}
	s->actions++;
	/* the step's verdict (desktop/effect.h): only "confirmed" says it did something */
	snprintf(out, outlen, "ok: %s", json_object_get_string(json_object_object_get(res,
	    json_object_object_get(res, "summary") != NULL ? "summary" : "observation")));
	json_object_put(res);
	return 0;
}

static void
log_step(struct state *s, const char *name, json_object *args, const char *result)
{
	json_object *o = json_object_new_object();

	jx_add_str(o, "tool", name);
	json_object_object_add(o, "args", json_object_get(args));
	jx_add_str(o, "result", result);
	json_object_array_add(s->log, o);
}

/* ---- the model ---- */

/* Asks the supervisor for the next step. On success *msg is the
 * assistant message (caller owns). */
static int
ask(struct state *s, json_object *messages, long timeout_ms, json_object **msg, struct derr *e)
{
	const struct config *cfg = s->app->cfg;
	char *url = xasprintf("%s/chat/completions", cfg->openrouter_url);
	char *auth = xasprintf("Authorization: Bearer %s", cfg->openrouter_api_key);
	const char *headers[] = { auth, "X-Title: detm gui_agent", NULL };
	json_object *body = json_object_new_object(), *m, *reply = NULL;
	char err[256] = "";
	long status = 0;
	int rc = -1;

	if (usage_scope(s->task_id, "agent", e) != 0)     /* usage.h: the task's budget */
		goto out;
	jx_add_str(body, "model", cfg->openrouter_live_model);
	json_object_object_add(body, "messages", json_object_get(messages));
	json_object_object_add(body, "tools", tools_declare());
	jx_add_str(body, "tool_choice", "auto");
	json_object_object_add(body, "max_tokens", json_object_new_int(600));
	json_object_object_add(body, "temperature", json_object_new_double(0.2));
	if (httpc_post_json(url, headers, body, timeout_ms, &status, &reply, err, sizeof err) != HTTPC_OK) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "the supervisor model at %s did not answer: %s", url, err);
		goto out;
	}
	if (status < 200 || status >= 300 || reply == NULL) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "the supervisor model answered HTTP %ld: %s", status, err);
		goto out;
	}
	s->tin += json_object_get_int64(json_object_object_get(json_object_object_get(reply, "usage"), "prompt_tokens"));
	s->tout += json_object_get_int64(json_object_object_get(json_object_object_get(reply, "usage"), "completion_tokens"));
	m = json_object_object_get(first_of(json_object_object_get(reply, "choices")), "message");
	if (m == NULL || !json_object_is_type(m, json_type_object)) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "the supervisor's answer has no message: %.*s",
		    utf8_prec(json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN), 200),
		    json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN));
		goto out;
	}
	*msg = json_object_get(m);
	rc = 0;
out:
	json_object_put(reply);
	json_object_put(body);
	free(url);
	free(auth);
	return rc;
}

/* The messages sent this turn: system, the instruction, the last turns
 * (text only) and the new screenshot. */
static json_object *
compose(json_object *first, json_object *history, const char *shot, int turn)
{
	json_object *msgs = json_object_new_array(), *sys = json_object_new_object();
	json_object *u = json_object_new_object(), *content = json_object_new_array();
	json_object *img = json_object_new_object(), *iu = json_object_new_object(), *txt = json_object_new_object();
	size_t n = json_object_array_length(history), from = 0;
	char note[96];

	jx_add_str(sys, "role", "system");
	jx_add_str(sys, "content", system_prompt);
	json_object_array_add(msgs, sys);
	json_object_array_add(msgs, json_object_get(first));
	/* whole turns only: an assistant message and its tool answer */
	if (n > 2 * AGENT_KEEP_TURNS)
		from = n - 2 * AGENT_KEEP_TURNS;
	for (size_t i = from; i < n; i++)
		json_object_array_add(msgs, json_object_get(json_object_array_get_idx(history, i)));
	jx_add_str(iu, "url", shot);
	jx_add_str(img, "type", "image_url");
	json_object_object_add(img, "image_url", iu);
	snprintf(note, sizeof note, "Turn %d: the screen now.", turn);
	jx_add_str(txt, "type", "text");
	jx_add_str(txt, "text", note);
	json_object_array_add(content, txt);
	json_object_array_add(content, img);
	jx_add_str(u, "role", "user");
	json_object_object_add(u, "content", content);
	json_object_array_add(msgs, u);
	return msgs;
}

static bool
task_stopped(struct state *s, char *why, size_t len)
{
	json_object *meta = NULL;
	struct derr e;
	int st;

	if (s->task_id == NULL)
		return false;
	if (task_meta(s->app->store, s->task_id, &st, &meta, &e) != 0) {
		snprintf(why, len, "the task is gone");
		return true;
	}
	json_object_put(meta);
	if (st == TASK_ACTIVE)
		return false;
	snprintf(why, len, "stopped: the task is %s", task_status_name(st));
	return true;
}

/* ---- the run ---- */

/* One run's loop state besides struct state. */
struct loop {
	json_object *first;     /* the instruction message */
	json_object *history;   /* assistant messages and their answers */
	json_object *reply;     /* what agent_run returns */
	int64_t deadline;       /* mono_us */
	int timeout_s;
	int turn, bad;
	bool human;             /* stopped because a human took the display over */
	char why[1024];         /* why the loop stopped, when it was not done */
};

enum turn_end {
	TURN_GO_ON,
	TURN_DONE,      /* a tool ended the run (done, escalate): the reply is set */
	TURN_STOP,      /* stopped: l->why says why */
	TURN_FAILED,    /* e says why */
};

/* A human took the display over (seen by a step, a screenshot or the check
 * before a turn): the run ends here; nothing is done after the takeover. */
static enum turn_end
human_stop(struct state *s, struct loop *l)
{
	snprintf(l->why, sizeof l->why, "stopped at turn %d: a human took over the desktop, so the "
	    "run ended without acting further (%d step%s done before). %s", l->turn, s->actions,
	    s->actions == 1 ? "" : "s", s->human);
	l->human = true;
	return TURN_STOP;
}

/* The limits checked before each turn; true (with l->why) when one is hit. */
static bool
limit_hit(struct state *s, struct loop *l)
{
	struct derr e;

	if (takeover_gate(s->task_id, &e) != 0) {      /* a human took the display over */
		human_seen(s, &e);
		return human_stop(s, l) == TURN_STOP;
	}
	if (task_stopped(s, l->why, sizeof l->why))
		return true;
	if (cancel_requested()) {       /* the MCP client cancelled, or hung up */
		snprintf(l->why, sizeof l->why, "cancelled by the client");
		return true;
	}
	if (mono_us() >= l->deadline) {
		snprintf(l->why, sizeof l->why, "timed out after %d s", l->timeout_s);
		return true;
	}
	if (l->turn >= s->app->cfg->gui_agent_max_turns) {
		snprintf(l->why, sizeof l->why, "stopped after %d turns (ACU_GUI_AGENT_MAX_TURNS)", l->turn);
		return true;
	}
	return false;
}

/* An answer without a usable tool call: its words stay in the history (as
 * plain text), then a nudge, a pair like a tool call and its answer; after
 * AGENT_FORMAT_TRIES in a row the loop stops. Takes msg. */
static enum turn_end
nudge(struct loop *l, json_object *msg)
{
	json_object *n;

	if (++l->bad >= AGENT_FORMAT_TRIES) {
		json_object_put(msg);
		snprintf(l->why, sizeof l->why, "the supervisor model did not call a tool (%d answers in a row)",
		    l->bad);
		return TURN_STOP;
	}
	json_object_object_del(msg, "tool_calls");
	if (json_object_get_string(json_object_object_get(msg, "content")) == NULL)
		jx_add_str(msg, "content", "(no tool call)");
	json_object_array_add(l->history, msg);
	n = json_object_new_object();
	jx_add_str(n, "role", "user");
	jx_add_str(n, "content", "Answer by calling exactly one of the tools, with JSON arguments.");
	json_object_array_add(l->history, n);
	return TURN_GO_ON;
}

/* Carries out the tool call of msg (taken) and keeps the pair in the
 * history. */
static enum turn_end
carry_out(struct state *s, struct loop *l, json_object *msg)
{
	json_object *calls = json_object_object_get(msg, "tool_calls");
	json_object *call = json_object_object_get(first_of(calls), "function"), *args, *tmsg;
	const char *name = json_object_get_string(json_object_object_get(call, "name"));
	const char *argtext = json_object_get_string(json_object_object_get(call, "arguments"));
	const char *cid = json_object_get_string(json_object_object_get(first_of(calls), "id"));
	char result[1024];
	int over;

	args = argtext ? json_tokener_parse(argtext) : NULL;
	if (name == NULL || args == NULL || !json_object_is_type(args, json_type_object)) {
		json_object_put(args);
		return nudge(l, msg);
	}
	l->bad = 0;
	over = act(s, name, args, l->reply, result, sizeof result);
	log_step(s, name, args, result);
	json_object_object_del(msg, "reasoning");
	tmsg = json_object_new_object();
	jx_add_str(tmsg, "role", "tool");
	jx_add_str(tmsg, "tool_call_id", cid ? cid : "call");   /* cid lives in msg */
	jx_add_str(tmsg, "content", result);
	json_object_array_add(l->history, msg);
	json_object_array_add(l->history, tmsg);
	json_object_put(args);
	if (over)
		return TURN_DONE;
	return s->human[0] != '\0' ? human_stop(s, l) : TURN_GO_ON;
}

/* One turn: a screenshot, the model's answer, its tool call. */
static enum turn_end
turn_once(struct state *s, struct loop *l, struct derr *e)
{
	json_object *msgs, *msg = NULL;
	char *shot;
	int rc;

	l->turn++;
	if ((shot = screenshot(s, e)) == NULL) {
		if (e->code != DERR_HUMAN_CONTROL)
			return TURN_FAILED;
		human_seen(s, e);
		return human_stop(s, l);
	}
	msgs = compose(l->first, l->history, shot, l->turn);
	free(shot);
	rc = ask(s, msgs, (long)fmin(AGENT_CALL_MAX_MS, (double)(l->deadline - mono_us()) / 1000.0 + 1000),
	    &msg, e);
	json_object_put(msgs);
	if (rc != 0)
		return TURN_FAILED;
	return carry_out(s, l, msg);
}

/* The reply's counters and the last AGENT_LOG_KEEP steps. */
static void
reply_finish(struct state *s, struct loop *l, const char *session, int64_t t0)
{
	size_t n = json_object_array_length(s->log);
	json_object *last = json_object_new_array(), *reply = l->reply;

	for (size_t i = n > AGENT_LOG_KEEP ? n - AGENT_LOG_KEEP : 0; i < n; i++)
		json_object_array_add(last, json_object_get(json_object_array_get_idx(s->log, i)));
	json_object_object_add(reply, "actions_taken", json_object_new_int(s->actions));
	json_object_object_add(reply, "actions_log", last);
	jx_add_str(reply, "session_id", session);
	json_object_object_add(reply, "elapsed_s", json_object_new_double((double)(mono_us() - t0) / 1e6));
	json_object_object_add(reply, "turns", json_object_new_int(l->turn));
	json_object_object_add(reply, "tokens_in", json_object_new_int64(s->tin));
	json_object_object_add(reply, "tokens_out", json_object_new_int64(s->tout));
	jx_add_str(reply, "model", s->app->cfg->openrouter_live_model);
}

/* The loop until a tool ends the run or a limit stops it (then the reply
 * says why, unsuccessful). 0, or -1 with e when a turn failed. */
static int
run_loop(struct state *s, struct loop *l, struct derr *e)
{
	enum turn_end t = TURN_GO_ON;

	while (t == TURN_GO_ON)
		t = limit_hit(s, l) ? TURN_STOP : turn_once(s, l, e);
	if (t == TURN_FAILED)
		return -1;
	if (t == TURN_STOP) {
		json_object_object_add(l->reply, "success", json_object_new_boolean(0));
		jx_add_str(l->reply, "summary", l->why);
		json_object_object_add(l->reply, "escalated", json_object_new_boolean(0));
		json_object_object_add(l->reply, "escalation_reason", NULL);
		if (l->human)
			jx_add_str(l->reply, "stopped_by", "human_takeover");
	}
	return 0;
}

int
agent_run(struct app *app, const char *task_id, const char *instruction, int timeout_s,
    const char *context, json_object **out, struct derr *e)
{
	struct state s = { .app = app, .task_id = task_id, .scale = 1, .px = -1, .py = -1,
		.log = json_object_new_array() };
	int64_t t0 = mono_us();
	struct loop l = { .history = json_object_new_array(), .reply = json_object_new_object(),
		.deadline = t0 + (int64_t)timeout_s * 1000000, .timeout_s = timeout_s };
	char session[ID_LEN], key[ID_LEN + 8], *intro;
	int rc = -1;

	if (app->cfg->openrouter_api_key[0] == '\0') {
		derr_set(e, DERR_UNAVAILABLE, NULL, "gui_agent needs a supervisor model: set OPENROUTER_API_KEY "
		    "(and optionally ACU_OPENROUTER_LIVE_MODEL); for single steps use gui_do");
		goto fail;
	}
	id_new(session);
	snprintf(key, sizeof key, "%s", task_id != NULL && display_has(task_id) ? task_id : "shared");
	if (claim(key, session, e) != 0)
		goto fail;
	l.first = json_object_new_object();
	jx_add_str(l.first, "role", "user");
	intro = xasprintf("Instruction: %s%s%s", instruction, context ? "\nContext: " : "", context ? context : "");
	jx_add_str(l.first, "content", intro);
	free(intro);
	rc = run_loop(&s, &l, e);
	release(session);
	json_object_put(l.first);
	if (rc == 0)
		reply_finish(&s, &l, session, t0);
fail:
	json_object_put(l.history);
	json_object_put(s.log);
	if (rc != 0) {
		json_object_put(l.reply);
		return -1;
	}
	*out = l.reply;
	return 0;
}
