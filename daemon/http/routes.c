/*
 * routes.c - the HTTP route table: data, not code. http_check.c matches a request
 * against it (404 for no pattern, 405 for a pattern without the method),
 * enforces max_body (413) and parses JSON before calling fn; fn applies the
 * row's body policy (api_body_check: the fields it accepts, strict unless
 * ROUTE_LENIENT) before anything else.
 */
#include <string.h>

#include "api.h"
#include "desktop/desktop.h"
#include "lim.h"

#define B LIM_BODY_DEFAULT
/* POST /<tool>: a Python DETM tool route, run by the tool router. */
#define PY(tool) { "POST", "/" tool, api_tool_call, LIM_BODY_PLAN, "Python DETM: the " tool " tool", \
	ROUTE_TOOL | ROUTE_LENIENT, NULL }
/* A route's body fields, in the order docs/api.md lists them. */
#define F(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NONE ((const char *const[]){ NULL })

/* A row without a body leaves flags and fields out (zero: no body). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const struct route api_routes[] = {
	/* method   pattern                                     handler             body cap, summary,
	 *   then for a route with a body: flags (ROUTE_*), the fields it takes */
	{ "GET",    "/api/health",                              api_health,         0, "daemon health" },
	{ "GET",    "/livez",                                   api_livez,          0, "the process answers (no token; touches nothing)",
	    ROUTE_OPEN },
	{ "GET",    "/readyz",                                  api_readyz,         0, "ready for new tasks: database writable, a display slot free, not draining (no token; 503 names what failed)",
	    ROUTE_OPEN },
	{ "GET",    "/api/drain",                               api_drain_get,      0, "drain state: draining, unfinished tasks, drained" },
	{ "POST",   "/api/drain",                               api_drain_post,     B, "drain: refuse new tasks, running ones go on (?wait=SECONDS until drained)",
	    0, NONE },
	{ "GET",    "/api/version",                             api_version,        0, "daemon and API version" },
	{ "GET",    "/api/capabilities",                        api_capabilities,   0, "what this daemon can do" },
	{ "GET",    "/api/routes",                              api_routes_list,    0, "this table" },
	{ "POST",   "/api/tasks",                               api_task_create,    LIM_BODY_PLAN, "register a task",
	    0, F("name", "plan", "metadata", "agent_id", "display", "display_width", "display_height", "display_resolution", "budget", "done_when") },
	{ "GET",    "/api/tasks",                               api_task_list,      0, "list tasks" },
	{ "GET",    "/api/tasks/{id}",                          api_task_get,       0, "task summary" },
	{ "PATCH",  "/api/tasks/{id}",                          api_task_patch,     B, "update a task",
	    0, F("name", "status", "metadata", "message", "query", "budget") },
	{ "DELETE", "/api/tasks/{id}",                          api_task_delete,    0, "delete a task and its tree" },
	{ "POST",   "/api/tasks/{id}/pause",                    api_task_pause,     B, "operator: pause",
	    0, F("reason") },
	{ "POST",   "/api/tasks/{id}/resume",                   api_task_resume,    B, "operator: resume",
	    0, F("reason") },
	{ "POST",   "/api/tasks/{id}/cancel",                   api_task_cancel,    B, "operator: cancel",
	    0, F("reason") },
	{ "POST",   "/api/tasks/{id}/takeover",                 api_takeover_start, B, "operator: a human drives the task's display (returns a lease)",
	    0, F("reason", "allow_screenshots") },
	{ "GET",    "/api/tasks/{id}/takeover",                 api_takeover_get,   0, "who drives the task's display" },
	{ "POST",   "/api/tasks/{id}/release",                  api_takeover_release, B, "the human hands the display back (with the lease; force: the operator's audited override)",
	    0, F("lease", "force", "note", "reason") },
	{ "POST",   "/api/tasks/{id}/input",                    api_takeover_input, B, "the human driver's input events (with the lease)",
	    0, F("lease", "events", "iw", "ih") },
	{ "POST",   "/api/tasks/{id}/help",                     api_takeover_help,  B, "the agent asks for a human",
	    0, F("reason", "instructions", "task_id") },
	{ "POST",   "/api/tasks/{id}/replay",                   api_task_replay,    B, "replay the task's recorded input on a new task's display, re-grounded without the model (202: the replay task's first progress)",
	    0, F("params", "from_step", "replay_task_id", "block_s", "ask_model", "settle_ms", "timeout_ms", "display_width", "display_height", "display_resolution") },
	{ "GET",    "/api/tasks/{id}/replay",                   api_task_replay_get, 0, "a replay task's progress, or a task's latest replay (?block_s)" },
	{ "POST",   "/api/tasks/{id}/items",                    api_items_append,   LIM_BODY_PLAN, "append plan items",
	    0, F("items", "note") },
	{ "GET",    "/api/tasks/{id}/items/{ordinal}",          api_item_get,       0, "drill down into an item" },
	{ "PATCH",  "/api/tasks/{id}/items/{ordinal}",          api_item_patch,     B, "update an item",
	    0, F("status", "title", "note") },
	{ "POST",   "/api/tasks/{id}/actions",                  api_action_create,  LIM_BODY_ACTION, "log an action",
	    ROUTE_TRY, F("action_type", "summary", "status", "duration_ms", "ordinal", "logs", "input_data", "output_data") },
	{ "GET",    "/api/tasks/{id}/actions/{aid}",            api_action_get,     0, "one action with its logs" },
	{ "PATCH",  "/api/tasks/{id}/actions/{aid}",            api_action_patch,   LIM_BODY_ACTION, "update an action",
	    0, F("status", "duration_ms", "output_data") },
	{ "POST",   "/api/tasks/{id}/actions/{aid}/logs",       api_log_create,     LIM_BODY_ACTION, "append a log line",
	    ROUTE_TRY, F("log_type", "content") },
	{ "GET",    "/api/tasks/{id}/messages",                 api_messages_get,   0, "the task thread" },
	{ "POST",   "/api/tasks/{id}/messages",                 api_message_create, B, "post to the thread",
	    ROUTE_TRY, F("content", "role", "msg_type") },
	{ "POST",   "/api/tasks/{id}/display",                  api_task_display_post, B, "start the task's own display",
	    0, F("width", "height", "resolution") },
	{ "GET",    "/api/tasks/{id}/display",                  api_task_display_get, 0, "the task's display" },
	{ "DELETE", "/api/tasks/{id}/display",                  api_task_display_delete, 0, "stop the task's display" },
	{ "GET",    "/api/tasks/{id}/clipboard",                api_clip_task_get,  0, "the clipboard of the task's display (?selection&format)" },
	{ "PUT",    "/api/tasks/{id}/clipboard",                api_clip_task_put,  LIM_BODY_CLIP, "set the clipboard of the task's display (text or a PNG)",
	    0, F("selection", "text", "image_base64") },
	{ "GET",    "/api/tasks/{id}/files",                    api_files_list,     0, "the task's own folder of files" },
	{ "GET",    "/api/tasks/{id}/files/{path*}",            api_file_get,       0, "download a file of the task's folder (?format=json)" },
	{ "PUT",    "/api/tasks/{id}/files/{path*}",            api_file_put,       LIM_BODY_FILE, "upload a file into the task's folder (raw bytes or JSON)",
	    ROUTE_RAW, F("content", "content_base64") },
	{ "DELETE", "/api/tasks/{id}/files/{path*}",            api_file_delete,    0, "delete a file (or an empty folder) of the task's folder" },
	{ "POST",   "/api/tasks/{id}/launch",                   api_task_launch,    B, "desktop_launch: start a program on the task's display",
	    0, F("command", "args", "open", "wait_window") },
	{ "GET",    "/api/tasks/{id}/launch",                   api_task_launched,  0, "the programs the task launched" },
	{ "GET",    "/api/tasks/{id}/recording",                api_rec_status,     0, "the task's recording: state, frames, bytes" },
	{ "GET",    "/api/tasks/{id}/recording.mp4",            api_rec_video,      0, "the task's video (byte ranges)" },
	{ "GET",    "/api/tasks/{id}/recording/index",          api_rec_index,      0, "frame times and the moment of each action" },
	{ "POST",   "/api/tasks/{id}/recording/start",          api_rec_start,      B, "operator: start recording",
	    0, NONE },
	{ "POST",   "/api/tasks/{id}/recording/stop",           api_rec_stop,       B, "operator: stop recording",
	    0, NONE },
	{ "GET",    "/api/tasks/{id}/live.mjpeg",               api_live_task,      0, "live view of the task's display (MJPEG)",
	    ROUTE_STREAM },
	{ "GET",    "/api/tasks/{id}/frame.jpg",                api_frame_task,     0, "the task's screen now (JPEG)" },
	{ "GET",    "/api/live.mjpeg",                          api_live_shared,    0, "live view of the shared display (MJPEG)",
	    ROUTE_STREAM },
	{ "GET",    "/api/frame.jpg",                           api_frame_shared,   0, "the shared screen now (JPEG)" },
	{ "GET",    "/api/live",                                api_live_list,      0, "live views and their viewers" },
	{ "POST",   "/api/record",                              api_record,         B, "record a clip (video_record)",
	    0, F("task_id", "duration", "duration_s", "fps", "target", "wait") },
	{ "GET",    "/api/record/{id}",                         api_record_get,     0, "a clip's status (?block_s)" },
	{ "POST",   "/api/record/{id}/stop",                    api_record_stop,    B, "end a clip early", 0, NONE },
	{ "GET",    "/api/record/{id}/clip.mp4",                api_record_video,   0, "a clip's video (byte ranges)" },
	{ "GET",    "/api/doctor",                              api_doctor,         0, "the doctor: every check with ok/warn/fail/skip and hints" },
	{ "GET",    "/api/tasks/{id}/export",                   api_task_export,    0, "the task's export bundle (ZIP, streamed; ?info=1: where)" },
	{ "GET",    "/api/dump",                                api_dump,           0, "every task of a window as one ZIP (?since&until), redacted" },
	{ "GET",    "/api/device",                              api_device,         0, "self-check: CPU, memory, disk, X" },
	{ "GET",    "/api/displays",                            api_displays,       0, "managed displays" },
	{ "POST",   "/api/desktop/action",                      api_desktop_action, LIM_BODY_ACTION, "one desktop action",
	    ROUTE_TRY, desktop_params },
	{ "GET",    "/api/desktop/screenshot",                  api_desktop_screenshot, 0, "screenshot (jpeg|png|json)" },
	{ "GET",    "/api/clipboard",                           api_clip_get,       0, "the clipboard (?task_id: its display; else the shared one)" },
	{ "PUT",    "/api/clipboard",                           api_clip_put,       LIM_BODY_CLIP, "set the clipboard (text or a PNG; task_id: its display)",
	    0, F("task_id", "selection", "text", "image_base64") },
	{ "GET",    "/api/desktop/elements",                    api_desktop_elements, 0, "a task display's accessibility tree (AT-SPI)" },
	{ "POST",   "/api/computer/{dialect}",                  api_computer_post,  LIM_BODY_COMPUTER, "a provider's computer calls (anthropic, openai, gemini), answered in its form",
	    ROUTE_FOREIGN, NULL },
	{ "GET",    "/api/computer/{dialect}",                  api_computer_get,   0, "a first look in a provider's image form, with its tool declaration" },
	/* The OSWorld in-VM server (desktop_env/server/main.py), one per task. */
	{ "GET",    "/osworld/{id}/screenshot",                 api_osw_screenshot, 0, "OSWorld: the task's screen with the cursor (PNG)" },
	{ "GET",    "/osworld/{id}/accessibility",              api_osw_accessibility, 0, "OSWorld: the accessibility tree as its AT-SPI XML ({\"AT\"})" },
	{ "POST",   "/osworld/{id}/execute",                    api_osw_execute,    LIM_BODY_PLAN, "OSWorld: run a command to its end (only with --osworld-exec)",
	    0, F("command", "shell", "timeout") },
	{ "POST",   "/osworld/{id}/setup/execute",              api_osw_execute,    LIM_BODY_PLAN, "OSWorld: run a command to its end (only with --osworld-exec)",
	    0, F("command", "shell", "timeout") },
	{ "POST",   "/osworld/{id}/setup/launch",               api_osw_launch,     B, "OSWorld: start a program (desktop_launch's allow-list)",
	    0, F("command", "shell") },
	{ "POST",   "/osworld/{id}/file",                       api_osw_file,       B, "OSWorld: a file of the task's folder (form file_path)",
	    ROUTE_RAW | ROUTE_LENIENT, NONE },
	{ "POST",   "/osworld/{id}/setup/upload",               api_osw_upload,     LIM_BODY_FILE, "OSWorld: upload into the task's folder (multipart file_path, file_data)",
	    ROUTE_RAW | ROUTE_LENIENT, NONE },
	{ "POST",   "/osworld/{id}/setup/open_file",            api_osw_open_file,  B, "OSWorld: open a file of the task's folder, or a program, and focus its window",
	    0, F("path") },
	{ "POST",   "/osworld/{id}/setup/activate_window",      api_osw_activate_window, B, "OSWorld: focus a window by title (or class)",
	    0, F("window_name", "strict", "by_class") },
	{ "POST",   "/osworld/{id}/setup/close_window",         api_osw_close_window, B, "OSWorld: close a window by title (or class)",
	    0, F("window_name", "strict", "by_class") },
	{ "POST",   "/osworld/{id}/screen_size",                api_osw_screen_size, B, "OSWorld: the screen's size",
	    ROUTE_RAW | ROUTE_LENIENT, NONE },
	{ "POST",   "/osworld/{id}/window_size",                api_osw_window_size, B, "OSWorld: a window's size by WM_CLASS (form app_class_name)",
	    ROUTE_RAW | ROUTE_LENIENT, NONE },
	{ "GET",    "/osworld/{id}/cursor_position",            api_osw_cursor_position, 0, "OSWorld: the pointer ([x, y])" },
	{ "GET",    "/osworld/{id}/platform",                   api_osw_platform,   0, "OSWorld: the platform (Linux)" },
	{ "POST",   "/osworld/{id}/list_directory",             api_osw_list_directory, B, "OSWorld: a folder of the task's as a tree",
	    0, F("path") },
	{ "POST",   "/osworld/{id}/start_recording",            api_osw_start_recording, B, "OSWorld: start recording the task's display (detm's MP4)",
	    ROUTE_RAW | ROUTE_LENIENT, NONE },
	{ "POST",   "/osworld/{id}/end_recording",              api_osw_end_recording, B, "OSWorld: stop recording; the MP4 as the reply",
	    ROUTE_RAW | ROUTE_LENIENT, NONE },
	{ "GET",    "/api/humanize",                            api_humanize_get,   0, "is input humanised" },
	{ "POST",   "/api/humanize",                            api_humanize_set,   B, "turn humanised input on/off",
	    0, F("enabled", "reason") },
	{ "POST",   "/api/waits",                               api_wait_create,    B, "start a smart wait",
	    0, F("task_id", "target", "wake_when", "criteria", "timeout", "poll_interval", "judge") },
	{ "GET",    "/api/waits",                               api_wait_list,      0, "list waits (?task_id&status)" },
	{ "GET",    "/api/waits/{id}",                          api_wait_get,       0, "one wait (?block_s long-polls)" },
	{ "PATCH",  "/api/waits/{id}",                          api_wait_patch,     B, "change a wait's condition/timeout",
	    0, F("wake_when", "timeout", "message") },
	{ "DELETE", "/api/waits/{id}",                          api_wait_delete,    B, "cancel a wait",
	    0, F("reason") },
	{ "POST",   "/api/gui/find",                            api_gui_find,       B, "find a described element (no action)",
	    0, F("task_id", "description") },
	{ "POST",   "/api/gui/do",                              api_gui_do,         B, "one GUI instruction, grounded and done",
	    0, F("task_id", "instruction", "after_screenshot", "settle_ms", "expect", "observe") },
	{ "POST",   "/api/gui/agent",                           api_gui_agent,      B, "gui_agent: a multi-step GUI task",
	    0, F("task_id", "instruction", "timeout", "context", "background") },
	{ "GET",    "/api/gui/agent/{id}",                      api_gui_agent_get,  0, "a background gui_agent run (?block_s)" },
	{ "POST",   "/api/gui/agent/{id}/cancel",               api_gui_agent_cancel, B, "stop a background gui_agent run",
	    0, NONE },
	{ "POST",   "/api/commands",                            api_commands,       LIM_BODY_ACTION, "run desktop commands in order",
	    0, F("task_id", "commands", "timeout_ms", "stop_on_error", "coords") },
	{ "GET",    "/api/screenshots/{file}",                  api_screenshot,     0, "an action's screenshot (JPEG)" },
	{ "GET",    "/api/events",                              api_events,         0, "changes as Server-Sent Events",
	    ROUTE_STREAM },
	{ "GET",    "/dashboard",                               api_dashboard,      0, "the web dashboard" },
	{ "GET",    "/dashboard/{file}",                        api_dashboard_file, 0, "the dashboard's files" },
	{ "POST",   "/api/memory/search",                       api_memory_search,  B, "search MEMORY.md and memory/*.md",
	    0, F("query", "max_results") },
	{ "POST",   "/api/memory/read",                         api_memory_read,    B, "read lines of a workspace file",
	    0, F("path", "offset", "limit") },
	{ "POST",   "/api/memory/append",                       api_memory_append,  B, "append a note to the workspace memory",
	    0, F("note", "path") },
	{ "GET",    "/api/tools",                               api_tools_list,     0, "the MCP tools, callable over HTTP" },
	{ "POST",   "/api/tools/{name}",                        api_tool_call,      LIM_BODY_PLAN, "call a tool with its MCP arguments",
	    ROUTE_TOOL, NULL },
	{ "POST",   "/mcp",                                     api_mcp_post,       LIM_BODY_PLAN, "MCP over Streamable HTTP (JSON or SSE replies)",
	    ROUTE_RPC, NULL },
	{ "DELETE", "/mcp",                                     api_mcp_delete,     0, "end an MCP session (2025 era)" },
	{ "GET",    "/api/usage/stats",                         api_usage_stats,    0, "model usage and cost (?since=days&task_id)" },
	{ "GET",    "/api/usage/prices",                        api_usage_prices,   0, "the price table in effect" },
	{ "GET",    "/metrics",                                 api_metrics,        0, "Prometheus metrics (text format)" },
	/* The Python DETM's routes, kept so its scripts and plugins work. */
	{ "GET",    "/health",                                  api_health,         0, "Python DETM: daemon health" },
	{ "GET",    "/doctor",                                  api_doctor,         0, "Python DETM: the doctor" },
	{ "GET",    "/humanize",                                api_humanize_get,   0, "Python DETM: is input humanised" },
	{ "POST",   "/humanize",                                api_humanize_set,   B, "Python DETM: humanised input on/off",
	    ROUTE_LENIENT, F("enabled", "reason") },
	PY("task_register"), PY("task_update"), PY("task_item_update"), PY("task_plan_append"),
	PY("task_log_action"), PY("task_summary"), PY("task_drill_down"), PY("task_thread"),
	PY("task_list"), PY("smart_wait"), PY("wait_status"), PY("wait_update"), PY("wait_cancel"),
	PY("desktop_look"), PY("desktop_action"), PY("video_record"),
	PY("memory_search"), PY("memory_read"), PY("memory_append"), PY("gui_agent"), PY("live_ui"),
	{ "GET",    "/api/fleet/tasks",                         api_fleet_tasks,    0, "every pod's tasks (--peers), each with its pod; ?local=1 this detmd's only" },
};
#pragma GCC diagnostic pop

const size_t api_nroutes = sizeof api_routes / sizeof api_routes[0];

/* path is pattern (which has no placeholders), or pattern and a '/'. */
static bool
same_path(const char *pattern, const char *path)
{
	size_t n = strlen(pattern);

	return path != NULL && strncmp(pattern, path, n) == 0 &&
	    (path[n] == '\0' || (path[n] == '/' && path[n + 1] == '\0'));
}

const struct route *
api_route_of(const struct req *r, route_fn self)
{
	const struct route *found = NULL;

	for (size_t i = 0; i < api_nroutes; i++) {
		const struct route *rt = &api_routes[i];

		if (rt->fn != self || strcmp(rt->method, r->method) != 0)
			continue;
		/* Rows without placeholders that share a handler (/api/humanize
		 * and /humanize) are told apart by the path itself. */
		if (strchr(rt->pattern, '{') == NULL && same_path(rt->pattern, r->path))
			return rt;
		if (found == NULL)
			found = rt;
	}
	return found;
}

int
api_body_check(struct req *r, route_fn self, struct derr *e)
{
	const struct route *rt = api_route_of(r, self);
	char list[512];
	size_t o = 0;

	if (rt == NULL)
		return derr_set(e, DERR_INTERNAL, NULL, "no route for %s %s", r->method, r->path);
	if ((rt->flags & (ROUTE_LENIENT | ROUTE_TOOL | ROUTE_FOREIGN)) || r->body == NULL)
		return 0;
	json_object_object_foreach(r->body, k, v) {
		size_t i = 0;

		(void)v;
		while (rt->fields != NULL && rt->fields[i] != NULL && strcmp(rt->fields[i], k) != 0)
			i++;
		if (rt->fields != NULL && rt->fields[i] != NULL)
			continue;
		list[0] = '\0';
		for (i = 0; rt->fields != NULL && rt->fields[i] != NULL && o < sizeof list; i++)
			o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", rt->fields[i]);
		if (o == 0)
			return derr_set(e, DERR_INVALID, k, "unknown field '%.*s': %s %s takes no fields",
			    utf8_prec(k, 64), k, rt->method, rt->pattern);
		return derr_set(e, DERR_INVALID, k, "unknown field '%.*s' (%s %s takes: %s)",
		    utf8_prec(k, 64), k, rt->method, rt->pattern, list);
	}
	return 0;
}
