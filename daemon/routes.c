/*
 * routes.c - the HTTP route table: data, not code. http.c matches a request
 * against it (404 for no pattern, 405 for a pattern without the method),
 * enforces max_body (413) and parses JSON before calling fn.
 */
#include "api.h"
#include "limits.h"

#define B LIM_BODY_DEFAULT
/* POST /<tool>: a Python DETM tool route, run by the tool router. */
#define PY(tool) { "POST", "/" tool, api_tool_call, LIM_BODY_PLAN, "Python DETM: the " tool " tool" }

const struct route api_routes[] = {
	/* method   pattern                                     handler             body  */
	{ "GET",    "/api/health",                              api_health,         0, "daemon health" },
	{ "GET",    "/api/version",                             api_version,        0, "daemon and API version" },
	{ "GET",    "/api/capabilities",                        api_capabilities,   0, "what this daemon can do" },
	{ "GET",    "/api/routes",                              api_routes_list,    0, "this table" },
	{ "POST",   "/api/tasks",                               api_task_create,    LIM_BODY_PLAN, "register a task" },
	{ "GET",    "/api/tasks",                               api_task_list,      0, "list tasks" },
	{ "GET",    "/api/tasks/{id}",                          api_task_get,       0, "task summary" },
	{ "PATCH",  "/api/tasks/{id}",                          api_task_patch,     B, "update a task" },
	{ "DELETE", "/api/tasks/{id}",                          api_task_delete,    0, "delete a task and its tree" },
	{ "POST",   "/api/tasks/{id}/pause",                    api_task_pause,     B, "operator: pause" },
	{ "POST",   "/api/tasks/{id}/resume",                   api_task_resume,    B, "operator: resume" },
	{ "POST",   "/api/tasks/{id}/cancel",                   api_task_cancel,    B, "operator: cancel" },
	{ "POST",   "/api/tasks/{id}/items",                    api_items_append,   LIM_BODY_PLAN, "append plan items" },
	{ "GET",    "/api/tasks/{id}/items/{ordinal}",          api_item_get,       0, "drill down into an item" },
	{ "PATCH",  "/api/tasks/{id}/items/{ordinal}",          api_item_patch,     B, "update an item" },
	{ "POST",   "/api/tasks/{id}/actions",                  api_action_create,  LIM_BODY_ACTION, "log an action" },
	{ "GET",    "/api/tasks/{id}/actions/{aid}",            api_action_get,     0, "one action with its logs" },
	{ "PATCH",  "/api/tasks/{id}/actions/{aid}",            api_action_patch,   LIM_BODY_ACTION, "update an action" },
	{ "POST",   "/api/tasks/{id}/actions/{aid}/logs",       api_log_create,     LIM_BODY_ACTION, "append a log line" },
	{ "GET",    "/api/tasks/{id}/messages",                 api_messages_get,   0, "the task thread" },
	{ "POST",   "/api/tasks/{id}/messages",                 api_message_create, B, "post to the thread" },
	{ "POST",   "/api/tasks/{id}/display",                  api_task_display_post, B, "start the task's own display" },
	{ "GET",    "/api/tasks/{id}/display",                  api_task_display_get, 0, "the task's display" },
	{ "DELETE", "/api/tasks/{id}/display",                  api_task_display_delete, 0, "stop the task's display" },
	{ "GET",    "/api/tasks/{id}/recording",                api_rec_status,     0, "the task's recording: state, frames, bytes" },
	{ "GET",    "/api/tasks/{id}/recording.mp4",            api_rec_video,      0, "the task's video (byte ranges)" },
	{ "GET",    "/api/tasks/{id}/recording/index",          api_rec_index,      0, "frame times and the moment of each action" },
	{ "POST",   "/api/tasks/{id}/recording/start",          api_rec_start,      B, "operator: start recording" },
	{ "POST",   "/api/tasks/{id}/recording/stop",           api_rec_stop,       B, "operator: stop recording" },
	{ "GET",    "/api/tasks/{id}/live.mjpeg",               api_live_task,      0, "live view of the task's display (MJPEG)" },
	{ "GET",    "/api/tasks/{id}/frame.jpg",                api_frame_task,     0, "the task's screen now (JPEG)" },
	{ "GET",    "/api/live.mjpeg",                          api_live_shared,    0, "live view of the shared display (MJPEG)" },
	{ "GET",    "/api/frame.jpg",                           api_frame_shared,   0, "the shared screen now (JPEG)" },
	{ "GET",    "/api/live",                                api_live_list,      0, "live views and their viewers" },
	{ "POST",   "/api/record",                              api_record,         B, "record a clip (video_record)" },
	{ "GET",    "/api/record/{id}",                         api_record_get,     0, "a clip's status (?block_s)" },
	{ "POST",   "/api/record/{id}/stop",                    api_record_stop,    B, "end a clip early" },
	{ "GET",    "/api/record/{id}/clip.mp4",                api_record_video,   0, "a clip's video (byte ranges)" },
	{ "GET",    "/api/device",                              api_device,         0, "self-check: CPU, memory, disk, X" },
	{ "GET",    "/api/displays",                            api_displays,       0, "managed displays" },
	{ "POST",   "/api/desktop/action",                      api_desktop_action, LIM_BODY_ACTION, "one desktop action" },
	{ "GET",    "/api/desktop/screenshot",                  api_desktop_screenshot, 0, "screenshot (jpeg|png|json)" },
	{ "GET",    "/api/humanize",                            api_humanize_get,   0, "is input humanised" },
	{ "POST",   "/api/humanize",                            api_humanize_set,   B, "turn humanised input on/off" },
	{ "POST",   "/api/waits",                               api_wait_create,    B, "start a smart wait" },
	{ "GET",    "/api/waits",                               api_wait_list,      0, "list waits (?task_id&status)" },
	{ "GET",    "/api/waits/{id}",                          api_wait_get,       0, "one wait (?block_s long-polls)" },
	{ "PATCH",  "/api/waits/{id}",                          api_wait_patch,     B, "change a wait's condition/timeout" },
	{ "DELETE", "/api/waits/{id}",                          api_wait_delete,    B, "cancel a wait" },
	{ "POST",   "/api/gui/find",                            api_gui_find,       B, "find a described element (no action)" },
	{ "POST",   "/api/gui/do",                              api_gui_do,         B, "one GUI instruction, grounded and done" },
	{ "POST",   "/api/gui/agent",                           api_gui_agent,      B, "gui_agent: a multi-step GUI task" },
	{ "POST",   "/api/commands",                            api_commands,       LIM_BODY_ACTION, "run desktop commands in order" },
	{ "GET",    "/api/screenshots/{file}",                  api_screenshot,     0, "an action's screenshot (JPEG)" },
	{ "GET",    "/api/events",                              api_events,         0, "changes as Server-Sent Events" },
	{ "GET",    "/dashboard",                               api_dashboard,      0, "the web dashboard" },
	{ "GET",    "/dashboard/{file}",                        api_dashboard_file, 0, "the dashboard's files" },
	{ "POST",   "/api/memory/search",                       api_memory_search,  B, "search MEMORY.md and memory/*.md" },
	{ "POST",   "/api/memory/read",                         api_memory_read,    B, "read lines of a workspace file" },
	{ "POST",   "/api/memory/append",                       api_memory_append,  B, "append a note to the workspace memory" },
	{ "GET",    "/api/tools",                               api_tools_list,     0, "the MCP tools, callable over HTTP" },
	{ "POST",   "/api/tools/{name}",                        api_tool_call,      LIM_BODY_PLAN, "call a tool with its MCP arguments" },
	/* The Python DETM's routes, kept so its scripts and plugins work. */
	{ "GET",    "/health",                                  api_health,         0, "Python DETM: daemon health" },
	{ "GET",    "/humanize",                                api_humanize_get,   0, "Python DETM: is input humanised" },
	{ "POST",   "/humanize",                                api_humanize_set,   B, "Python DETM: humanised input on/off" },
	PY("task_register"), PY("task_update"), PY("task_item_update"), PY("task_plan_append"),
	PY("task_log_action"), PY("task_summary"), PY("task_drill_down"), PY("task_thread"),
	PY("task_list"), PY("smart_wait"), PY("wait_status"), PY("wait_update"), PY("wait_cancel"),
	PY("desktop_look"), PY("desktop_action"), PY("video_record"),
	PY("memory_search"), PY("memory_read"), PY("memory_append"), PY("gui_agent"), PY("live_ui"),
};

const size_t api_nroutes = sizeof api_routes / sizeof api_routes[0];
