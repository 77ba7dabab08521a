/*
 * tools.c - the tool table (see tools.h). This file is data: the names and
 * argument names are those of the Python DETM server (ids are strings,
 * plan-item ordinals are 0-based); routes are those of docs/api.md.
 *
 * Enum values match in any case and are normalised to the spelling listed
 * (schema.c); aliases detmd accepts are listed as values of their own
 * (canceled), so a strict validator of these schemas accepts them too.
 *
 * Schemas are written with ' instead of " so they stay readable; tools_init
 * swaps the quotes and parses them once. Therefore no schema text may
 * contain an apostrophe (tools_init fails loudly if one breaks the JSON).
 *
 * Not here: argument checking (schema.c), HTTP (forward.c), MCP framing
 * (rpc.c).
 */
#include "tools.h"
#include "schema.h"


#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RO   TOOL_READ_ONLY
#define DES  TOOL_DESTRUCTIVE
#define IDEM TOOL_IDEMPOTENT
#define OPEN TOOL_OPEN_WORLD

#define ID_PATTERN "'pattern':'^[0-9a-f]{8}$'"
#define TASK_ID "'task_id':{'type':'string'," ID_PATTERN ",'description':'Task id (8 hex digits) from task_register or task_list.'}"
#define OPT_TASK_ID "'task_id':{'type':'string'," ID_PATTERN ",'description':'Optional task id: the step is logged under this task and uses its display.'}"
#define ORDINAL(what) "'ordinal':{'type':'integer','minimum':0,'description':'" what "'}"
/* canceled: the US spelling, an alias detmd accepts for cancelled. */
#define TASK_STATUS "'enum':['active','paused','completed','failed','cancelled','canceled']"
#define WAIT_ID "'wait_id':{'type':'string'," ID_PATTERN ",'description':'Wait id (8 hex digits) returned by smart_wait.'}"
/* A task's spending limits (task_register, task_update). */
#define BUDGET "'budget':{'type':'object','additionalProperties':false,'properties':{" \
	"'usd':{'type':'number','minimum':0},'model_calls':{'type':'integer','minimum':0}," \
	"'tokens':{'type':'integer','minimum':0},'minutes':{'type':'number','minimum':0}}," \
	"'description':'Spending limits (any of usd, model_calls, tokens, minutes). When one is reached detmd " \
	"pauses the task, refuses its model calls and wakes you; an operator raises it and resumes. usd counts " \
	"priced model calls; minutes run from registration; keys not given keep their limit.'}"

/* The effect verdict of input tools (desktop_action, gui_do): desktop/effect.h. */
#define VERDICT_TEXT \
	"Every input returns effect: confirmed (detm saw the input change something: a window appeared " \
	"or went, a menu opened, the focus moved, or pixels of the application it went to changed for good; " \
	"with expect, only that expectation met), suspected_noop (nothing at all changed within settle_ms) " \
	"or unverifiable (detm cannot tell: no drawing seen, a flash that left the screen as it was, an " \
	"animation in the way, an expectation it could not check or that was not met). Only confirmed is " \
	"proof: never count unverifiable as success. evidence says what changed and effect_ms when; the " \
	"first line of the result says it in words. "
#define EFFECT_PROPS_LAST \
	"'settle_ms':{'type':'integer','minimum':0,'maximum':10000,'description':'How long to watch for the effect of an input, in ms (default 300; 2000 with expect); the call returns as soon as the effect is seen; 0: not watched (effect unverifiable).'}," \
	"'expect':{'type':'string','minLength':1,'maxLength':512,'description':'What the input should do, in the smart-wait condition language: element:button \\\"OK\\\", text:\\\"Saved\\\", window:\\\"Save As\\\", gone:dialog \\\"Saving\\\", settled or settled:800. Only that, met, confirms.'}," \
	"'observe':{'type':'string','enum':['none','region','screen'],'description':'Also return the picture after the input: the region that changed, or the whole screen, as an image.'}"
#define EFFECT_PROPS EFFECT_PROPS_LAST ","

static struct tool tools[] = {
{
	"task_register", "Register a task",
	"Start tracking a new multi-step task and get its task_id. Call this first for any job "
	"that takes more than a couple of steps, with a short name and the plan as a list of step "
	"titles (you can append steps later with task_plan_append). Returns the task summary: "
	"task_id, status and the plan items with their 0-based ordinals. Use the task_id in every "
	"other task_* call and pass it to smart_wait, gui_do and desktop_* so their work is logged "
	"under the task.",
	"{'type':'object','additionalProperties':false,'required':['name'],'properties':{"
	"'name':{'type':'string','minLength':1,'maxLength':200,'description':'Short task name, e.g. Export quarterly report.'},"
	"'plan':{'type':'array','maxItems':500,'items':{'type':'string','minLength':1,'maxLength':500},'description':'Step titles in order; ordinals start at 0.'},"
	"'metadata':{'type':'object','description':'Free-form key/value context stored with the task.'},"
	"'display':{'type':'boolean','description':'Give the task its own virtual display (Xvfb), isolated from other tasks; desktop tools with this task_id act there.'},"
	"'display_resolution':{'type':'string','pattern':'^[0-9]+x[0-9]+$','description':'Size of its own display, e.g. 1920x1080; default 1280x720.'},"
	"'done_when':{'type':'array','maxItems':16,'items':{'type':'string','minLength':1,'maxLength':1024},'description':'Conditions checked when the task is set to completed: file:/path/that/exists (absolute, or relative to the workspace), text:Exported, element:button OK (text and element are reported unchecked for now).'}," BUDGET "}}",
	0, "POST", "/api/tasks", NULL, "tasks", 0, NULL
},
{
	"task_update", "Update a task",
	"Change a task's status, name or metadata, record a reasoning note, or ask where the task "
	"stands. `message` is logged as a reasoning step under the current plan item and added to "
	"the task thread; `query` adds a one-sentence summary of done, current and remaining items. "
	"Status moves: active -> paused|completed|failed|cancelled, paused -> active|cancelled; "
	"completed, failed and cancelled are final. Give at least one field besides task_id. "
	"Completing is checked against the evidence: the reply says completion evidenced, unchecked "
	"or contradicted (failed actions not followed by a success, a smart wait still watching, a "
	"no-op effect, a done_when condition false) and why; a contradicted completion is kept and "
	"shown to the operator.",
	"{'type':'object','additionalProperties':false,'required':['task_id'],'properties':{" TASK_ID ","
	"'status':{'type':'string'," TASK_STATUS ",'description':'New task status, in any case; canceled is cancelled.'},"
	"'message':{'type':'string','minLength':1,'description':'Reasoning note or progress message to record.'},"
	"'query':{'type':'string','minLength':1,'description':'A question about progress; the reply then includes a summary sentence.'},"
	"'name':{'type':'string','minLength':1,'maxLength':200,'description':'New task name.'},"
	"'metadata':{'type':'object','description':'Keys to merge into the metadata; a null value removes a key.'}," BUDGET "}}",
	DES, "PATCH", "/api/tasks/{task_id}", NULL, "tasks", 0, NULL
},
{
	"task_item_update", "Update a plan item",
	"Move one plan item (by 0-based ordinal) through its states, rename it or attach a note. "
	"Mark an item active when you start it and completed, failed, skipped or scrapped when you "
	"are done. Allowed moves: pending -> active|completed|failed|skipped|scrapped (completed "
	"or failed straight from pending takes 0 s), active -> completed|failed|skipped|scrapped, "
	"failed -> active (retry). A `note` is logged as a "
	"reasoning step under this item. Returns the task summary; completing an item also returns "
	"completion (evidenced, unchecked or contradicted) and completion_why, judged from the "
	"actions logged since it started.",
	"{'type':'object','additionalProperties':false,'required':['task_id','ordinal'],'properties':{" TASK_ID ","
	ORDINAL("0-based position of the plan item.") ","
	"'status':{'type':'string','enum':['pending','active','completed','failed','skipped','scrapped'],'description':'New item status, in any case.'},"
	"'note':{'type':'string','minLength':1,'description':'Why, or what happened; logged under this item.'},"
	"'title':{'type':'string','minLength':1,'maxLength':500,'description':'New item title.'}}}",
	DES, "PATCH", "/api/tasks/{task_id}/items/{ordinal}", NULL, "tasks", 0, NULL
},
{
	"task_plan_append", "Append plan items",
	"Add steps to the end of a task's plan when you discover more work. New items start "
	"pending and get the next ordinals; the reply lists them. `note` explains the change in the "
	"task thread.",
	"{'type':'object','additionalProperties':false,'required':['task_id','items'],'properties':{" TASK_ID ","
	"'items':{'type':'array','minItems':1,'maxItems':500,'items':{'type':'string','minLength':1,'maxLength':500},'description':'Titles of the new steps, in order.'},"
	"'note':{'type':'string','minLength':1,'description':'Why the plan grew.'}}}",
	0, "POST", "/api/tasks/{task_id}/items", NULL, "tasks", 0, NULL
},
{
	"task_log_action", "Log an action",
	"Record one thing you did for a task: a shell command (cli), a GUI step (gui), a wait, a "
	"look at the screen (vision), a decision (reasoning) or anything else. It goes under the "
	"given plan item, or under the current item (first active, else first pending) when "
	"ordinal is omitted. Log actions as you go so the user and later drill-downs can see what "
	"happened.",
	"{'type':'object','additionalProperties':false,'required':['task_id','action_type','summary'],'properties':{" TASK_ID ","
	"'action_type':{'type':'string','enum':['cli','gui','wait','vision','reasoning','other'],'description':'Kind of action.'},"
	"'summary':{'type':'string','minLength':1,'maxLength':2000,'description':'One line saying what was done.'},"
	"'input_data':{'type':'string','$comment':'" SCHEMA_ANY_JSON "','description':'What went in (command, coordinates...): text, or any JSON value (an object is kept as sent), up to 64 KiB.'},"
	"'output_data':{'type':'string','$comment':'" SCHEMA_ANY_JSON "','description':'What came out (output, result...): text, or any JSON value (an object is kept as sent), up to 64 KiB.'},"
	"'status':{'type':'string','enum':['started','completed','failed'],'description':'Outcome; default completed.'},"
	ORDINAL("0-based plan item the action belongs to; default: the current item.") ","
	"'duration_ms':{'type':'number','minimum':0,'description':'How long it took, in milliseconds.'}}}",
	0, "POST", "/api/tasks/{task_id}/actions", NULL, "tasks", 0, NULL
},
{
	"task_summary", "Task summary",
	"Read a task's status, progress percentage and plan items. detail_level: items (default, "
	"one line per item), actions or full (every item with its actions and logs), focused "
	"(actions of the current item only). Use it to re-orient after a long wait or a context "
	"reset. loops (when present) is what detm's loop detection noticed: you repeated yourself "
	"without progress (loops.last.sentence says what and since when); do something different.",
	"{'type':'object','additionalProperties':false,'required':['task_id'],'properties':{" TASK_ID ","
	"'detail_level':{'type':'string','enum':['items','actions','full','focused'],'description':'How much detail; default items.'}}}",
	RO | IDEM, "GET", "/api/tasks/{task_id}", "detail_level:detail", "tasks", 0, NULL
},
{
	"task_drill_down", "Drill into a plan item",
	"Read one plan item (by 0-based ordinal) with every action logged under it, oldest first, "
	"including inputs, outputs and logs. Use it to see exactly what was tried for a step.",
	"{'type':'object','additionalProperties':false,'required':['task_id','ordinal'],'properties':{" TASK_ID ","
	ORDINAL("0-based position of the plan item.") "}}",
	RO | IDEM, "GET", "/api/tasks/{task_id}/items/{ordinal}", NULL, "tasks", 0, NULL
},
{
	"task_thread", "Task thread",
	"Read the task's message thread: lifecycle and progress events, your notes and messages "
	"from the user, oldest first (the last `limit`, default 50). Check it for user instructions "
	"while you work. If `message` is given it is first posted to the thread as an agent "
	"message, then the thread is returned.",
	"{'type':'object','additionalProperties':false,'required':['task_id'],'properties':{" TASK_ID ","
	"'limit':{'type':'integer','minimum':1,'maximum':1000,'description':'How many recent messages; default 50.'},"
	"'message':{'type':'string','minLength':1,'maxLength':16384,'description':'Optional message to post to the thread first (role agent).'}}}",
	TOOL_POST_MESSAGE_FIRST, "GET", "/api/tasks/{task_id}/messages", "limit", "tasks", 0, NULL
},
{
	"task_list", "List tasks",
	"List tasks, most recently updated first, with status and progress. status filters "
	"(default active; all for every task). Use it to find a task_id you lost.",
	"{'type':'object','additionalProperties':false,'properties':{"
	"'status':{'type':'string','enum':['active','paused','completed','failed','cancelled','canceled','all'],'description':'Filter, in any case; default active.'},"
	"'limit':{'type':'integer','minimum':1,'maximum':500,'description':'Maximum tasks; default 20.'}}}",
	RO | IDEM, "GET", "/api/tasks", "status,limit", "tasks", 0, NULL
},
{
	"smart_wait", "Wait for a screen condition",
	"Start watching the screen or one window until a condition described in plain words is "
	"visibly true (for example: the download dialog says Complete), instead of polling with "
	"screenshots. Returns a wait_id at once; the wait runs in the background and you are woken "
	"when it resolves or times out. Check it with wait_status, change it with wait_update, stop "
	"it with wait_cancel.",
	"{'type':'object','additionalProperties':false,'required':['target','wake_when'],'properties':{"
	"'target':{'type':'string','minLength':1,'description':'screen, or window:<title or id>.'},"
	"'wake_when':{'type':'string','minLength':1,'description':'The condition to wait for, as visible on screen. "
	"On a task display with an accessibility tree, element:button \\\"OK\\\" waits until such an element is "
	"there and element-gone:dialog \\\"Saving\\\" until none is, read from the tree with no model call.'},"
	"'timeout':{'type':'integer','minimum':1,'maximum':3600,'default':300,'description':'Give up after this many seconds; default 300.'},"
	OPT_TASK_ID ","
	"'poll_interval':{'type':'number','minimum':0.5,'maximum':60,'description':'Seconds between checks; default 2.'},"
	"'judge':{'type':'string','enum':['auto','ocr','model'],'default':'auto','description':'Who decides: auto reads "
	"text conditions (text:Done, text-gone:Saving, or a quoted phrase) with OCR inside detmd at no model cost and "
	"sends any other condition to the vision model; ocr or model forces one. The reply says judged_by and why.'}}}",
	OPEN | TOOL_TASK | TOOL_WAIT, "POST", "/api/waits", NULL, "waits", 0, NULL
},
{
	"wait_status", "Wait status",
	"Report one smart wait (status, condition, elapsed time, last verdict) by wait_id, or "
	"every active wait when wait_id is omitted.",
	"{'type':'object','additionalProperties':false,'properties':{" WAIT_ID "}}",
	RO | IDEM, "GET", "/api/waits/{wait_id?}", NULL, "waits", 0, NULL
},
{
	"wait_update", "Update a wait",
	"Change a running smart wait: a new condition (wake_when), a new timeout in seconds "
	"(restarts the clock) or a note (message) for the record.",
	"{'type':'object','additionalProperties':false,'required':['wait_id'],'properties':{" WAIT_ID ","
	"'wake_when':{'type':'string','minLength':1,'description':'New condition.'},"
	"'timeout':{'type':'integer','minimum':1,'maximum':3600,'description':'New timeout in seconds, counted from now.'},"
	"'message':{'type':'string','minLength':1,'description':'Note recorded with the wait.'}}}",
	DES, "PATCH", "/api/waits/{wait_id}", NULL, "waits", 0, NULL
},
{
	"wait_cancel", "Cancel a wait",
	"Stop a smart wait you no longer need. Cancelling a finished wait changes nothing.",
	"{'type':'object','additionalProperties':false,'required':['wait_id'],'properties':{" WAIT_ID ","
	"'reason':{'type':'string','minLength':1,'maxLength':1000,'description':'Why it was cancelled.'}}}",
	DES | IDEM, "DELETE", "/api/waits/{wait_id}", "reason", "waits", 0, NULL
},
{
	"gui_do", "Do a GUI step",
	"Carry out one GUI step given in words: click, double-click or right-click an element "
	"(\"click the Export button\"), type text (\"type \\\"hello\\\" into the search box\"), press keys "
	"(\"press ctrl+s\"), scroll or drag. On a task display whose programs expose an accessibility "
	"tree (GTK, Qt, Firefox, LibreOffice...), detm first matches the words against the elements\' "
	"names and roles (\"the OK button\", \"the Name field\", \"OK\") and acts at the one element "
	"that matches, with no model call; otherwise its grounding backend finds the element on a "
	"screenshot. It acts once through XTest and returns what it did, grounded_by (accessibility or "
	"the backend), the screen coordinates, the image-to-screen scale and timing. " VERDICT_TEXT
	"Explicit forms need no model; their numbers are "
	"screen pixels, like every coordinate detm takes and returns unless a tool says "
	"otherwise: click(847, 523), move(847, 523), "
	"type(\"hello\"), press(\"enter\"), scroll(\"down\"), drag(10, 20, 300, 400). It does one "
	"step, not a multi-step plan: read its effect (or pass observe) before the next one.",
	"{'type':'object','additionalProperties':false,'required':['instruction'],'properties':{"
	"'instruction':{'type':'string','minLength':1,'description':'One step, e.g. click the Save button, or click(847, 523).'},"
	"'after_screenshot':{'type':'boolean','description':'Also return a small screenshot reference taken after acting.'},"
	EFFECT_PROPS OPT_TASK_ID "}}",
	DES | OPEN, "POST", "/api/gui/do", NULL, "gui", TOOL_LONG_CALL_S, NULL
},
{
	"gui_agent", "GUI agent (many steps)",
	"Carry out a whole GUI task described in words (\"open Settings and turn on dark mode\"): a "
	"supervisor model looks at the screen each turn and clicks, types, scrolls and drags until it "
	"is done, gives up, or asks for a human (escalated). Returns success, a summary, the actions "
	"taken and the last steps. Needs OPENROUTER_API_KEY on the daemon. For one known step, "
	"gui_do is faster and cheaper. A run may take minutes: with background: true it returns "
	"a run_id at once (use this when your client cuts tool calls at 60 s) and "
	"gui_agent_status follows it.",
	"{'type':'object','additionalProperties':false,'required':['instruction'],'properties':{"
	"'instruction':{'type':'string','minLength':1,'description':'What to get done on the screen.'},"
	OPT_TASK_ID ","
	"'timeout':{'type':'integer','minimum':1,'maximum':300,'description':'Seconds; default 180.'},"
	"'context':{'type':'string','maxLength':8000,'description':'Anything the agent should know (what is on screen, what was tried).'},"
	"'background':{'type':'boolean','description':'Return a run_id at once and run in the background; follow it with gui_agent_status.'}}}",
	DES | OPEN | TOOL_TASK, "POST", "/api/gui/agent", NULL, "gui", TOOL_LONG_CALL_S, NULL
},
{
	"gui_agent_status", "GUI agent run status",
	"Follow a gui_agent run started with background: true: waits up to block_s seconds "
	"(default 20) for it to end, then reports running, done (with success and the summary), "
	"failed (with the error) or cancelled. Call it again while it says running.",
	"{'type':'object','additionalProperties':false,'required':['run_id'],'properties':{"
	"'run_id':{'type':'string'," ID_PATTERN ",'description':'The run_id gui_agent returned.'},"
	"'block_s':{'type':'integer','minimum':0,'maximum':25,'default':20,'description':'Seconds to wait for the run to end; 0 answers at once.'}}}",
	RO | IDEM, "GET", "/api/gui/agent/{run_id}", "block_s", "gui", 0, NULL
},
{
	"task_replay", "Replay a recorded task",
	"Redo a finished task's input (clicks, drags, scrolls, typing, keys, launches) on a new task "
	"with its own display and recording, without a model: each click is found again by what was "
	"recorded about its target (the accessibility element's role and name, else the text under it "
	"by OCR, else its place in the same-size window), never by raw coordinates; each step waits for "
	"its window and the window the original step opened. Returns the replay task_id and its result: "
	"status (running, done with completion evidenced or unchecked, needs_agent, failed, interrupted), steps_total, replayed, regrounded, asked, "
	"model_calls and per step how it was grounded. needs_agent names the step detm could not find "
	"(needs.step, needs.looked_for): do that step yourself on the replay task (its task_id), then "
	"call task_replay again with replay_task_id and from_step = needs.step + 1. params replaces "
	"typed text: a type step recorded with param N types params[N]; a step that typed exactly T "
	"types params[T].",
	"{'type':'object','additionalProperties':false,'required':['task_id'],'properties':{"
	"'task_id':{'type':'string'," ID_PATTERN ",'description':'The recorded (source) task.'},"
	"'params':{'type':'object','description':'Text to type instead of the recorded: {name or recorded text: new text (a string)}.'},"
	"'from_step':{'type':'integer','minimum':0,'maximum':499,'description':'First step to replay (0-based); default 0.'},"
	"'replay_task_id':{'type':'string'," ID_PATTERN ",'description':'Go on in this earlier replay of the same task (one that stopped with needs_agent) instead of a new one.'},"
	"'block_s':{'type':'integer','minimum':0,'maximum':25,'description':'Seconds to wait for the replay to end (20 is a good value); 0 or absent answers at once with its first progress (follow it with task_replay_status).'},"
	"'ask_model':{'type':'boolean','description':'A step found no other way goes to the grounding model, if detmd has one (default true); false: stop with needs_agent instead.'},"
	"'settle_ms':{'type':'integer','minimum':0,'maximum':60000,'description':'How long each input watches for its effect; default 5000 (returns at the first evidence).'},"
	"'timeout_ms':{'type':'integer','minimum':100,'maximum':120000,'description':'How long a step waits for its window, focus or target; default 15000.'}}}",
	DES | OPEN, "POST", "/api/tasks/{task_id}/replay", NULL, "tasks", TOOL_LONG_CALL_S, NULL
},
{
	"task_replay_status", "Replay status",
	"Follow a replay: waits up to block_s seconds while it runs, then reports its progress and "
	"result (as task_replay does). task_id is the replay task, or the source task (its latest "
	"replay, with the list of its replays).",
	"{'type':'object','additionalProperties':false,'required':['task_id'],'properties':{" TASK_ID ","
	"'block_s':{'type':'integer','minimum':0,'maximum':25,'description':'Seconds to wait for the replay to end (20 is a good value); 0 or absent answers at once.'}}}",
	RO | IDEM, "GET", "/api/tasks/{task_id}/replay", "block_s", "tasks", 0, NULL
},
{
	"gui_find", "Find a GUI element",
	"Locate a visible element described in plain words (for example: the blue Save button in "
	"the dialog) and return its centre as x, y in screen pixels (coords: screen), without "
	"clicking. On a task display with an accessibility tree a unique match by name and role "
	"answers with no model call (grounded_by accessibility, with the element); otherwise the "
	"grounding backend finds it on a screenshot. Pass x and y unchanged to desktop_action or gui_do: they take screen pixels too.",
	"{'type':'object','additionalProperties':false,'required':['description'],'properties':{"
	"'description':{'type':'string','minLength':1,'description':'The element to find.'},"
	OPT_TASK_ID "}}",
	RO | IDEM | OPEN, "POST", "/api/gui/find", NULL, "gui", TOOL_LONG_CALL_S, NULL
},
{
	"desktop_action", "Desktop action",
	"Drive the desktop directly: mouse (click, double_click, right_click, middle_click, "
	"mouse_move, drag from x,y to x2,y2, scroll in a direction by amount, mouse_down, mouse_up), "
	"keyboard (type text, press_key with keys such as ctrl+s or Return), windows (list_windows, "
	"find_window, focus_window, move_window, resize_window, minimize_window, close_window, "
	"active_window) and get_mouse_position or screenshot. x, y, x2, y2 are screen pixels, origin "
	"top-left, the same space gui_find returns and gui_do takes; results report positions in "
	"screen pixels too. To use pixels read off the last desktop_look image instead, pass "
	"coords: image (they are multiplied by that look's scale for you, and positions in the "
	"result come back in image pixels). " VERDICT_TEXT,
	"{'type':'object','additionalProperties':false,'required':['action'],'properties':{"
	"'action':{'type':'string','enum':['click','double_click','right_click','middle_click','mouse_move','drag','scroll',"
	"'mouse_down','mouse_up','type','press_key','list_windows','find_window','focus_window','move_window','resize_window',"
	"'minimize_window','close_window','active_window','get_mouse_position','screenshot'],'description':'What to do.'},"
	OPT_TASK_ID ","
	"'coords':{'type':'string','enum':['screen','image'],'description':'Space of x, y, x2, y2 and of positions in the result: screen pixels (default) or pixels of the last desktop_look image.'},"
	"'x':{'type':'integer','minimum':0,'description':'X in screen pixels (image pixels with coords image; window x for move_window).'},"
	"'y':{'type':'integer','minimum':0,'description':'Y in screen pixels (image pixels with coords image; window y for move_window).'},"
	"'x2':{'type':'integer','minimum':0,'description':'Drag end X.'},"
	"'y2':{'type':'integer','minimum':0,'description':'Drag end Y.'},"
	"'button':{'type':'integer','minimum':1,'maximum':3,'description':'1 left (default), 2 middle, 3 right.'},"
	"'text':{'type':'string','description':'Text to type.'},"
	"'keys':{'type':'string','minLength':1,'description':'Key or chord for press_key, e.g. Return, ctrl+s, alt+F4.'},"
	"'direction':{'type':'string','enum':['up','down','left','right'],'description':'Scroll direction.'},"
	"'amount':{'type':'integer','minimum':1,'maximum':100,'description':'Scroll clicks; default 3.'},"
	"'window_id':{'type':'string','pattern':'^(0x[0-9a-fA-F]{1,8}|[0-9]{1,10})$','description':'Window id from list_windows, e.g. 0x1a00003 (decimal digits work too).'},"
	"'window_name':{'type':'string','minLength':1,'description':'Window title (substring) for window actions.'},"
	"'width':{'type':'integer','minimum':1,'description':'New window width.'},"
	"'height':{'type':'integer','minimum':1,'description':'New window height.'},"
	EFFECT_PROPS_LAST "}}",
	DES | OPEN | TOOL_IMAGE, "POST", "/api/desktop/action", NULL, "desktop", 0, NULL
},
{
	"desktop_look", "Look at the screen",
	"Take a screenshot of the whole screen (or of one window, found by name, focused and "
	"captured alone) and return it as a JPEG image with its size and the scale factor to the "
	"real screen. Positions you read off this image are image pixels: multiply them by the "
	"scale for screen pixels (what every other tool takes), or pass them to desktop_action "
	"with coords: image.",
	"{'type':'object','additionalProperties':false,'properties':{" OPT_TASK_ID ","
	"'window_name':{'type':'string','minLength':1,'description':'Focus this window before the screenshot.'},"
	"'max_width':{'type':'integer','minimum':64,'maximum':4096,'description':'Scale the image down to at most this width. Default: the longer side at most 1200 px (what gateways resize to anyway).'},"
	"'quality':{'type':'integer','minimum':1,'maximum':100,'description':'JPEG quality; default 72.'}}}",
	RO | IDEM | OPEN | TOOL_IMAGE, "GET", "/api/desktop/screenshot?format=json",
	"task_id,window_name,max_width,quality", "desktop", 0, NULL
},
{
	"desktop_elements", "List accessible elements",
	"List the visible elements of a task display from the accessibility tree (AT-SPI), "
	"without a screenshot or a model: role (push button, text, menu item, check box...), name, "
	"description, states (focused, checked, enabled...), actions (click, press...), text (what a "
	"text field or cell holds; never a password) or value (sliders, spin buttons), the window "
	"and screen bounds x, y, width, height in screen pixels (the centre is x + width/2, "
	"y + height/2; pass it to desktop_action or gui_do). Works for programs that expose a tree "
	"(GTK 3 and 4, Qt, Firefox, LibreOffice; Chromium and Electron when started with "
	"--force-renderer-accessibility) and were started with the env of the task display (see "
	"the task display description). Tables and long lists (a spreadsheet) list only the cells "
	"on screen. Filter by window, role, name or states; at most max elements. When nothing is "
	"listed, the reply says why: the walk was cut short, nothing accessible runs, or the filter "
	"matched nothing. Strings are cut at 4 KB (ending with an ellipsis).",
	"{'type':'object','additionalProperties':false,'required':['task_id'],'properties':{"
	"'task_id':{'type':'string'," ID_PATTERN ",'description':'The task whose own display to read (task_register with display: true).'},"
	"'window':{'type':'string','minLength':1,'maxLength':200,'description':'Only windows whose title (the accessible name or the X title list_windows shows) contains this (any case).'},"
	"'role':{'type':'string','minLength':1,'maxLength':200,'description':'Only this role, e.g. push button, text, check box, menu item.'},"
	"'name':{'type':'string','minLength':1,'maxLength':200,'description':'Only elements whose name contains this (any case).'},"
	"'states':{'type':'string','minLength':1,'maxLength':200,'description':'Comma-separated states that must all be set, e.g. focused or enabled,checked.'},"
	"'max':{'type':'integer','minimum':1,'maximum':1000,'description':'At most this many elements; default 200.'}}}",
	RO | IDEM, "GET", "/api/desktop/elements", "task_id,window,role,name,states,max", "desktop", 0, NULL
},
{
	"clipboard_get", "Read the clipboard",
	"Read the clipboard of the desktop: the text, or the PNG image (returned as an image), that "
	"a program there copied. With task_id it is the display the task uses (its own, else the "
	"shared desktop). selection: clipboard (what ctrl+c copies, the default) or primary (the "
	"text last selected with the mouse). format: auto (text when the owner offers any, else a "
	"PNG), text or image. An empty clipboard is not an error: the reply says empty: true. "
	"Each read is logged on the task with its size and format, never its content.",
	"{'type':'object','additionalProperties':false,'properties':{" OPT_TASK_ID ","
	"'selection':{'type':'string','enum':['clipboard','primary'],'description':'Which selection; default clipboard.'},"
	"'format':{'type':'string','enum':['auto','text','image'],'description':'What to read; default auto.'}}}",
	RO | IDEM | TOOL_IMAGE, "GET", "/api/clipboard", "task_id,selection,format", "clipboard", 0, NULL
},
{
	"clipboard_set", "Set the clipboard",
	"Put text, or a PNG image given as base64, on the clipboard of the desktop so that a "
	"program there can paste it (ctrl+v; with selection primary, the middle button). detmd "
	"holds it itself and answers every paste until another program copies something. Give "
	"exactly one of text and image_base64; at most 16 MiB. With task_id it is the display the "
	"task uses. Logged on the task with its size and format, never its content.",
	"{'type':'object','additionalProperties':false,'properties':{" OPT_TASK_ID ","
	"'selection':{'type':'string','enum':['clipboard','primary'],'description':'Which selection; default clipboard.'},"
	"'text':{'type':'string','description':'The text to put there (UTF-8).'},"
	"'image_base64':{'type':'string','minLength':1,'description':'A PNG image, base64-encoded.'}}}",
	IDEM, "PUT", "/api/clipboard", NULL, "clipboard", 0, NULL
},
{
	"file_upload", "Upload a file to the task",
	"Put a file into the task's own folder, for a program on the task's display to open (a "
	"document to attach, an image to upload in a browser). path is relative to that folder: "
	"subfolders are made, .. and absolute paths are refused, symbolic links are never followed. "
	"Give content for text or content_base64 for any bytes; a file already there is replaced. "
	"At most 32 MiB a file and 256 MiB a task (one MCP message carries less: use "
	"PUT /api/tasks/{task_id}/files/{path} over HTTP for big files). The file is on disk for "
	"good when this answers; the reply gives its absolute_path to type into a file dialog.",
	"{'type':'object','additionalProperties':false,'required':['task_id','path'],'properties':{" TASK_ID ","
	"'path':{'type':'string','minLength':1,'maxLength':512,'description':'File path inside the task folder, e.g. report.txt or in/photo.png.'},"
	"'content':{'type':'string','description':'The file as text (UTF-8).'},"
	"'content_base64':{'type':'string','description':'The file as base64, for any bytes.'}}}",
	DES | IDEM, "PUT", "/api/tasks/{task_id}/files/{path}", NULL, "files", 0, NULL
},
{
	"file_download", "Download a file of the task",
	"Read a file from the task's own folder, for example one a program on the task's display "
	"saved there (a downloaded report, an exported image). Returns its text (encoding utf-8, "
	"content) when the file is valid UTF-8, else its bytes as base64 (content_base64); at most "
	"8 MiB (bigger files: GET /api/tasks/{task_id}/files/{path} over HTTP).",
	"{'type':'object','additionalProperties':false,'required':['task_id','path'],'properties':{" TASK_ID ","
	"'path':{'type':'string','minLength':1,'maxLength':512,'description':'File path inside the task folder, as file_list shows it.'}}}",
	RO | IDEM, "GET", "/api/tasks/{task_id}/files/{path}?format=json", NULL, "files", 0, NULL
},
{
	"file_list", "List the files of the task",
	"List the task's own folder: every file and subfolder with its path, type, size in bytes "
	"and modification time, and the folder's absolute path, which you can type into an open "
	"or save dialog of a program on the task's display. The folder is made if it is not there "
	"yet.",
	"{'type':'object','additionalProperties':false,'required':['task_id'],'properties':{" TASK_ID "}}",
	RO | IDEM, "GET", "/api/tasks/{task_id}/files", NULL, "files", 0, NULL
},
{
	"desktop_launch", "Start a program",
	"Start a program on the task's own display with everything it needs to be seen and driven: "
	"DISPLAY, XAUTHORITY, the accessibility bus and the switches GTK, Qt, Firefox, LibreOffice and "
	"Chromium/Electron need (desktop_elements then lists its buttons and fields). Give command (a "
	"program the daemon allows, e.g. mousepad, chromium, soffice, xterm, zenity) with args (each one "
	"argument exactly as given: no shell, so ; | $ and quotes are not interpreted), or open: an http(s) "
	"URL (opens in an allowed browser), a file path or file:// URL, or a desktop id such as "
	"org.xfce.mousepad.desktop. It runs until the task ends or is cancelled (then it and its child "
	"processes are stopped); its output lines go to the task log (task_drill_down). Returns the pid and "
	"the window that appeared (waits up to wait_window seconds, default 5) or says that none did yet. "
	"A program not on the allow-list is refused (launch_denied).",
	"{'type':'object','additionalProperties':false,'required':['task_id'],'properties':{"
	"'task_id':{'type':'string'," ID_PATTERN ",'description':'The task whose own display runs the program (task_register with display: true).'},"
	"'command':{'type':'string','minLength':1,'maxLength':256,'description':'The program: a name on the allow-list, e.g. mousepad.'},"
	"'args':{'type':'array','maxItems':64,'items':{'type':'string','maxLength':4096},'description':'Its arguments, each passed as one argument, never through a shell.'},"
	"'open':{'type':'string','minLength':1,'maxLength':4096,'description':'Instead of command: an http(s) URL, a file path, a file:// URL or a desktop id (args then fill its file arguments).'},"
	"'wait_window':{'type':'number','minimum':0,'maximum':20,'description':'Seconds to wait for its window; default 5, 0 to return at once.'}}}",
	DES | OPEN, "POST", "/api/tasks/{task_id}/launch", NULL, "desktop", TOOL_LONG_CALL_S, NULL
},
{
	"humanize_status", "Is input humanised",
	"Tell whether detm moves the pointer and types like a person (curved, timed pointer paths, "
	"held clicks, uneven typing gaps) or instantly, since when, why, and the timing used.",
	"{'type':'object','additionalProperties':false}",
	RO | IDEM, "GET", "/api/humanize", NULL, "desktop", 0, NULL
},
{
	"humanize_set", "Humanise input on/off",
	"Turn human-like input on (for sites that watch how the pointer moves and how fast you "
	"type) or off (instant input, much faster). Applies to every later click, drag, move and "
	"type on all displays until changed; not kept across daemon restarts.",
	"{'type':'object','additionalProperties':false,'required':['enabled'],'properties':{"
	"'enabled':{'type':'boolean','description':'true: humanised input; false: instant.'},"
	"'reason':{'type':'string','maxLength':200,'description':'Why, for the log and humanize_status.'}}}",
	IDEM, "POST", "/api/humanize", NULL, "desktop", 0, NULL
},
{
	"video_record", "Record the screen",
	"Record a short MP4 of the screen (or window:<title>) for `duration` seconds and return "
	"where it was saved. Useful as evidence of a finished step or to capture an animation. "
	"A clip of up to 55 s returns when it is saved; a longer one (or wait: false) returns "
	"its clip_id at once, and video_status follows it.",
	"{'type':'object','additionalProperties':false,'properties':{" OPT_TASK_ID ","
	"'duration':{'type':'integer','minimum':1,'maximum':120,'default':10,'description':'Seconds to record; default 10.'},"
	"'fps':{'type':'integer','minimum':1,'maximum':30,'default':5,'description':'Frames per second; default 5.'},"
	"'target':{'type':'string','minLength':1,'description':'screen (default) or window:<part of the title or class>.'},"
	"'wait':{'type':'boolean','description':'Return when the clip is saved (default for clips up to 55 s) or at once with its clip_id (default for longer ones).'}}}",
	TOOL_CLIP | TOOL_TASK, "POST", "/api/record", NULL, "recording", TOOL_LONG_CALL_S, NULL
},
{
	"video_status", "Clip status",
	"Follow a video_record clip that returned while recording: waits up to block_s seconds "
	"(default 20) for it to be saved, then reports its status, duration, frames and path.",
	"{'type':'object','additionalProperties':false,'required':['clip_id'],'properties':{"
	"'clip_id':{'type':'string'," ID_PATTERN ",'description':'The clip_id video_record returned.'},"
	"'block_s':{'type':'integer','minimum':0,'maximum':25,'default':20,'description':'Seconds to wait for the clip to be saved; 0 answers at once.'}}}",
	RO | IDEM, "GET", "/api/record/{clip_id}", "block_s", "recording", 0, NULL
},
{
	"memory_search", "Search memory",
	"Search the workspace memory (MEMORY.md and memory/*.md) for lines containing every word "
	"of the query (case-insensitive). Returns the best matches with file, 1-based line, a few "
	"lines of context and a score. Use it before asking the user something you may have noted.",
	"{'type':'object','additionalProperties':false,'required':['query'],'properties':{"
	"'query':{'type':'string','minLength':1,'maxLength':500,'description':'Space-separated words; all must appear in a line.'},"
	"'max_results':{'type':'integer','minimum':1,'maximum':100,'description':'How many matches; default 10.'}}}",
	RO | IDEM, "POST", "/api/memory/search", NULL, "memory", 0, NULL
},
{
	"memory_read", "Read memory",
	"Read lines of a workspace file (default MEMORY.md), starting at a 1-based line. Paths are "
	"relative to the workspace; nothing outside it can be read.",
	"{'type':'object','additionalProperties':false,'properties':{"
	"'path':{'type':'string','minLength':1,'maxLength':512,'description':'File relative to the workspace; default MEMORY.md.'},"
	"'offset':{'type':'integer','minimum':1,'description':'First line, 1-based; default 1.'},"
	"'limit':{'type':'integer','minimum':1,'maximum':2000,'description':'How many lines; default 100.'}}}",
	RO | IDEM, "POST", "/api/memory/read", NULL, "memory", 0, NULL
},
{
	"memory_append", "Append to memory",
	"Write a note to the workspace memory: appended under a '## [HH:MM UTC] Note' heading to "
	"memory/<today>.md, or to the given workspace file. Use it for facts worth keeping across "
	"sessions (logins that worked, where files are, user preferences).",
	"{'type':'object','additionalProperties':false,'required':['note'],'properties':{"
	"'note':{'type':'string','minLength':1,'maxLength':65536,'description':'The note, Markdown.'},"
	"'path':{'type':'string','minLength':1,'maxLength':512,'description':'File relative to the workspace; default memory/<UTC date>.md.'}}}",
	0, "POST", "/api/memory/append", NULL, "memory", 0, NULL
},
{
	"request_human", "Ask for a human",
	"Ask the operator to take over the task's desktop when you cannot go on alone: a login, a "
	"CAPTCHA, a two-factor prompt, a judgement call. Returns at once with a request_id; the "
	"dashboard shows the task as needing a human and the operator is woken. While the human "
	"drives, your desktop input (and screenshots, unless the operator allows them) is refused "
	"with human_control. When they hand back you are woken with a summary (how long, clicks, "
	"keystrokes, windows opened/closed, their note; never what they typed). Meanwhile wait "
	"(smart_wait) or poll task_summary until driver.driver is agent again.",
	"{'type':'object','additionalProperties':false,'required':['task_id','reason'],'properties':{" TASK_ID ","
	"'reason':{'type':'string','minLength':1,'maxLength':1000,'description':'What you need a human for, in one sentence.'},"
	"'instructions':{'type':'string','minLength':1,'maxLength':16384,'description':'What the human should do, step by step (never ask for a password in here).'}}}",
	0, "POST", "/api/tasks/{task_id}/help", NULL, "tasks", 0, NULL
},
{
	"health_check", "Health check",
	"Check that detmd is running and its database answers; reports version, API version and "
	"uptime, and under `doctor` every check of the install (database, disk, X displays and "
	"extensions, model backends, wake-ups, MCP config, recent log errors) with ok, warn, fail "
	"or skip and a hint for each problem. Call it when other tools report connection problems.",
	"{'type':'object','additionalProperties':false}",
	RO | IDEM, "GET", "/api/doctor?health=1", NULL, NULL, 0, NULL
},
};

#define NTOOLS (sizeof tools / sizeof tools[0])

/* outputSchemas: what structuredContent of a successful result holds (the
 * daemon's reply; properties listed are the ones a model needs, others may
 * appear). Same quoting as the input schemas. */
#define OUT(props, req) "{'type':'object','properties':{" props "},'required':[" req "]}"
#define P_STR(k)  "'" k "':{'type':'string'}"
#define P_INT(k)  "'" k "':{'type':'integer'}"
#define P_NUM(k)  "'" k "':{'type':'number'}"
#define P_BOOL(k) "'" k "':{'type':'boolean'}"
#define P_ARR(k)  "'" k "':{'type':'array'}"
#define P_OBJ(k)  "'" k "':{'type':'object'}"
#define OUT_TASK OUT(P_STR("task_id") "," P_STR("status") "," P_ARR("items") "," P_INT("progress_pct"), "'task_id','status'")
/* A replay's progress and result (daemon/gui/replay.h). */
#define OUT_REPLAY OUT(P_STR("task_id") "," P_STR("source") ",'status':{'type':'string','enum':['running','done'," \
	"'needs_agent','failed','interrupted','cancelled']}," P_INT("steps_total") "," P_INT("replayed") "," P_INT("regrounded") "," \
	P_INT("asked") "," P_INT("failed") "," P_INT("model_calls") "," P_ARR("steps") "," P_OBJ("needs") "," P_OBJ("interrupted") "," P_STR("completion") "," P_ARR("unverified"), \
	"'task_id','status'")
#define OUT_WAIT OUT(P_STR("wait_id") "," P_STR("status") "," P_INT("evaluations"), "'wait_id','status'")
#define OUT_XY   P_INT("x") "," P_INT("y") "," "'coords':{'type':'string','enum':['screen','image']}," P_NUM("scale")
/* The effect verdict (desktop/effect.h); effect_ms is null without evidence. */
#define OUT_EFFECT "'effect':{'type':'string','enum':['confirmed','suspected_noop','unverifiable']}," \
	P_OBJ("evidence") ",'effect_ms':{'type':['number','null']}," P_STR("summary") "," P_OBJ("expect") "," \
	P_OBJ("observed")

static const struct {
	const char *tool, *schema;
} outputs[] = {
	{ "task_register", OUT_TASK },
	{ "task_update", OUT_TASK },
	{ "task_item_update", OUT_TASK },
	{ "task_summary", OUT_TASK },
	{ "task_plan_append", OUT(P_ARR("added"), "'added'") },
	{ "task_log_action", OUT(P_STR("action_id") "," P_STR("task_id"), "'action_id'") },
	{ "task_drill_down", OUT(P_STR("task_id") "," P_INT("ordinal") "," P_ARR("actions"), "'task_id','actions'") },
	{ "task_thread", OUT(P_STR("task_id") "," P_ARR("messages"), "'messages'") },
	{ "task_list", OUT(P_ARR("tasks"), "'tasks'") },
	{ "task_replay", OUT_REPLAY },
	{ "task_replay_status", OUT_REPLAY },
	{ "smart_wait", OUT_WAIT },
	{ "wait_update", OUT_WAIT },
	{ "wait_cancel", OUT_WAIT },
	{ "wait_status", OUT(P_STR("wait_id") "," P_STR("status") "," P_ARR("waits"), "") },
	{ "gui_do", OUT(P_STR("action") "," P_STR("observation") "," OUT_XY "," P_STR("grounded_by") ","
	    P_OBJ("element") "," OUT_EFFECT "," P_OBJ("verification"), "") },
	{ "gui_find", OUT(OUT_XY "," P_STR("grounded_by"), "'x','y','coords'") },
	{ "gui_agent", OUT(P_BOOL("success") "," P_STR("summary") "," P_STR("run_id") "," P_STR("status"), "") },
	{ "gui_agent_status", OUT(P_STR("run_id") "," P_STR("status") "," P_BOOL("success") "," P_STR("summary"), "'run_id','status'") },
	{ "desktop_action", OUT(P_STR("action") "," P_STR("observation") "," OUT_XY "," OUT_EFFECT, "'action','observation'") },
	{ "desktop_look", OUT(P_OBJ("image_size") "," P_OBJ("screen_size") "," P_NUM("scale"), "'screen_size','scale'") },
	{ "desktop_elements", OUT(P_ARR("elements") "," P_INT("count") "," P_STR("display") "," P_BOOL("truncated") ","
	  P_ARR("windows") "," P_STR("hint"), "'elements','count','display'") },
	{ "clipboard_get", OUT(P_STR("selection") "," P_BOOL("empty") "," P_STR("display") "," P_STR("text") ","
	    P_INT("bytes"), "'selection','empty'") },
	{ "clipboard_set", OUT(P_BOOL("ok") "," P_STR("selection") "," P_STR("display") "," P_INT("bytes"), "'ok','selection'") },
	{ "file_upload", OUT(P_STR("path") "," P_INT("bytes") "," P_STR("absolute_path") "," P_BOOL("created"), "'path','bytes'") },
	{ "file_download", OUT(P_STR("path") "," P_INT("bytes") "," P_STR("encoding") "," P_STR("content") ","
	    P_STR("content_base64"), "'path','encoding'") },
	{ "file_list", OUT(P_STR("folder") "," P_ARR("files") "," P_INT("count"), "'folder','files'") },
	{ "desktop_launch", OUT(P_INT("pid") "," P_STR("program") "," P_STR("command") "," P_STR("display") ","
	    P_STR("status") "," P_STR("observation"), "'pid','display','status'") },
	{ "humanize_status", OUT(P_BOOL("enabled"), "'enabled'") },
	{ "humanize_set", OUT(P_BOOL("enabled"), "'enabled'") },
	{ "video_record", OUT(P_STR("clip_id") "," P_STR("status") "," P_NUM("duration_s") "," P_STR("path"), "'clip_id','status'") },
	{ "video_status", OUT(P_STR("clip_id") "," P_STR("status") "," P_NUM("duration_s") "," P_STR("path"), "'clip_id','status'") },
	{ "memory_search", OUT(P_ARR("results"), "'results'") },
	{ "memory_read", OUT(P_STR("content") "," P_INT("total_lines"), "") },
	{ "memory_append", OUT(P_STR("path"), "") },
	{ "request_human", OUT(P_STR("request_id") "," P_STR("task_id") "," P_STR("driver"), "'request_id','task_id'") },
	{ "health_check", OUT(P_STR("status") "," P_INT("api_version"), "'status','api_version'") },
};
static struct json_object *output_schemas[NTOOLS];
static struct json_object *check_schemas[NTOOLS];

static struct json_object *
tools_parse(const char *schema)
{
	char *text = strdup(schema);
	struct json_object *o;
	size_t j;

	if (text == NULL)
		abort();
	for (j = 0; text[j] != '\0'; j++)
		if (text[j] == '\'')
			text[j] = '"';
	o = json_tokener_parse(text);
	free(text);
	if (o != NULL && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

struct json_object *
tools_output_schema(const struct tool *t)
{
	return output_schemas[t - tools];
}

struct json_object *
tools_check_schema(const struct tool *t)
{
	return check_schemas[t - tools];
}

static const struct {
	const char *key, *name;
} capability_names[] = {
	{ "tasks", "task tracking" },
	{ "waits", "smart waits" },
	{ "desktop", "desktop control" },
	{ "gui", "GUI automation" },
	{ "recording", "screen recording" },
	{ "memory", "workspace memory" },
	{ "clipboard", "the clipboard" },
	{ "files", "task files" },
};

static const char instructions[] =
	"detm tracks your work on this computer and watches the desktop for you. "
	"For any job of more than a few steps: task_register with a plan, then mark each item "
	"active and completed (task_item_update, ordinals are 0-based) and log what you did "
	"(task_log_action). Ids are strings. When you must wait for something on screen "
	"(a download, a build, a dialog), call smart_wait with the condition and the task_id "
	"instead of polling; it returns at once and wakes you later. To act on the desktop, "
	"desktop_look shows the screen, gui_do performs a step described in words, and "
	"desktop_action clicks and types at coordinates. Every coordinate in and out of detm is a "
	"screen pixel (gui_find returns what desktop_action and gui_do take) unless you pass "
	"coords: image to desktop_action to use pixels of the last desktop_look image. "
	"clipboard_get and clipboard_set read and fill the clipboard of the desktop; file_upload, "
	"file_download and file_list move files into and out of the task's own folder. "
	"After a pause or a context reset, task_summary and task_thread tell you where you were "
	"and whether the user left instructions. Tool errors say what to fix; a tool that the "
	"daemon does not support yet says so.";

/* Is arg a path placeholder of route? Sets *optional. */
static bool
tools_route_has(const char *route, const char *arg, bool *optional)
{
	size_t n = strlen(arg);
	const char *p = route;

	while ((p = strchr(p, '{')) != NULL) {
		p++;
		if (strncmp(p, arg, n) == 0 && (p[n] == '}' || (p[n] == '?' && p[n + 1] == '}'))) {
			*optional = p[n] == '?';
			return true;
		}
	}
	return false;
}

static bool
tools_query_has(const char *query, const char *arg)
{
	size_t n = strlen(arg);
	const char *p = query;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, arg, n) == 0 && (p[n] == ',' || p[n] == ':' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return false;
}

static bool
tools_required_has(struct json_object *schema, const char *arg)
{
	struct json_object *req;
	size_t i;

	if (!json_object_object_get_ex(schema, "required", &req))
		return false;
	for (i = 0; i < json_object_array_length(req); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(req, i)), arg) == 0)
			return true;
	return false;
}

static int
tools_check(struct tool *t, char *err, size_t errlen)
{
	struct json_object *props;
	bool body_ok = strcmp(t->method, "POST") == 0 || strcmp(t->method, "PATCH") == 0 ||
	    strcmp(t->method, "PUT") == 0;
	bool opt;

	if (!json_object_object_get_ex(t->input_schema, "properties", &props))
		return 0;
	json_object_object_foreach(props, key, val) {
		(void)val;
		if (tools_route_has(t->route, key, &opt)) {
			if (!opt && !tools_required_has(t->input_schema, key)) {
				snprintf(err, errlen, "%s: path argument %s is not required", t->name, key);
				return -1;
			}
			continue;
		}
		if (t->query != NULL && tools_query_has(t->query, key))
			continue;
		if (!body_ok && !((t->flags & TOOL_POST_MESSAGE_FIRST) && strcmp(key, "message") == 0)) {
			snprintf(err, errlen, "%s: %s %s cannot carry body argument %s",
			         t->name, t->method, t->route, key);
			return -1;
		}
	}
	return 0;
}

/* Removes the validator-only "$comment" marks from an advertised schema. */
static void
tools_strip_marks(struct json_object *schema)
{
	struct json_object *props, *c;

	if (!json_object_object_get_ex(schema, "properties", &props))
		return;
	json_object_object_foreach(props, key, p) {
		(void)key;
		if (json_object_object_get_ex(p, "$comment", &c) &&
		    strcmp(json_object_get_string(c), SCHEMA_ANY_JSON) == 0)
			json_object_object_del(p, "$comment");
	}
}

static atomic_bool inited;              /* tools_init succeeded (and no tools_free since) */
static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;

/* The table parsed, by whoever asks first (again after tools_free). */
static void
tools_ensure(void)
{
	char err[256];

	if (atomic_load_explicit(&inited, memory_order_acquire))
		return;
	pthread_mutex_lock(&init_mu);
	if (tools_init(err, sizeof err) != 0) {
		fprintf(stderr, "tool table: %s\n", err);
		abort();
	}
	pthread_mutex_unlock(&init_mu);
}

int
tools_init(char *err, size_t errlen)
{
	size_t i, j;

	if (atomic_load_explicit(&inited, memory_order_acquire))
		return 0;
	for (i = 0; i < NTOOLS; i++) {
		struct tool *t = &tools[i];
		char *text = strdup(t->schema);
		enum json_tokener_error jerr = json_tokener_success;

		if (text == NULL)
			abort();
		for (j = 0; text[j] != '\0'; j++)
			if (text[j] == '\'')
				text[j] = '"';
		t->input_schema = json_tokener_parse_verbose(text, &jerr);
		free(text);
		if (t->input_schema == NULL || !json_object_is_type(t->input_schema, json_type_object)) {
			snprintf(err, errlen, "tool %s: schema does not parse: %s", t->name,
			         json_tokener_error_desc(jerr));
			return -1;
		}
		if (tools_check(t, err, errlen) != 0)
			return -1;
		if (json_object_deep_copy(t->input_schema, &check_schemas[i], NULL) != 0)
			abort();
		tools_strip_marks(t->input_schema);
		for (j = 0; j < sizeof outputs / sizeof outputs[0]; j++)
			if (strcmp(outputs[j].tool, t->name) == 0 &&
			    (output_schemas[i] = tools_parse(outputs[j].schema)) == NULL) {
				snprintf(err, errlen, "tool %s: outputSchema does not parse", t->name);
				return -1;
			}
		if (t->timeout_s == 0)
			t->timeout_s = TOOL_CALL_S;
	}
	atomic_store_explicit(&inited, true, memory_order_release);
	return 0;
}

void
tools_free(void)
{
	size_t i;

	for (i = 0; i < NTOOLS; i++) {
		json_object_put(tools[i].input_schema);
		tools[i].input_schema = NULL;
		json_object_put(check_schemas[i]);
		check_schemas[i] = NULL;
		json_object_put(output_schemas[i]);
		output_schemas[i] = NULL;
	}
	atomic_store_explicit(&inited, false, memory_order_release);
}

const struct tool *
tools_find(const char *name)
{
	size_t i;

	tools_ensure();
	for (i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i].name, name) == 0)
			return &tools[i];
	return NULL;
}

const struct tool *
tools_at(size_t i)
{
	tools_ensure();
	return i < NTOOLS ? &tools[i] : NULL;
}

size_t
tools_count(void)
{
	return NTOOLS;
}

const char *
tools_instructions(void)
{
	return instructions;
}

const char *
tools_capability_name(const char *capability)
{
	size_t i;

	for (i = 0; i < sizeof capability_names / sizeof capability_names[0]; i++)
		if (strcmp(capability_names[i].key, capability) == 0)
			return capability_names[i].name;
	return capability;
}

bool
tools_clip_follows(struct json_object *body)
{
	struct json_object *v;
	bool follow;

	if (json_object_object_get_ex(body, "wait", &v) && json_object_is_type(v, json_type_boolean))
		follow = json_object_get_boolean(v);
	else
		follow = !json_object_object_get_ex(body, "duration", &v) ||
		    json_object_get_int64(v) <= TOOL_CLIP_WAIT_MAX_S;
	json_object_object_add(body, "wait", json_object_new_boolean(0));
	return follow;
}
