/*
 * api.h - what route handlers see: the request, the reply, the route table
 * (the app they serve is app.h's).
 *
 * http_check.c and http_req.c check and parse a request (auth,
 * Host/Origin, route, body cap, content type, JSON) before a handler
 * runs; a handler reads r->body and
 * the path/query parameters, does its work through the model modules, and
 * either sets the reply (req_reply) and returns 0 or fills e and returns
 * -1. Handlers never format errors themselves.
 */
#ifndef DETM_API_H
#define DETM_API_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/app.h"
#include "core/pipejob.h"
#include "core/util.h"
#include "derr.h"

struct MHD_Connection;

#define ROUTE_MAX_PARAMS 4
#define REQ_MAX_HEADERS 8

/* A streamed reply's reader: called on an HTTP worker for the bytes from
 * pos on; must not block; returns how many it put in buf (1..max),
 * REQ_STREAM_WAIT when it has nothing yet (the connection is suspended
 * until req_streams_wake names the stream's key, or a second passes: then
 * it is asked again), REQ_STREAM_END, or REQ_STREAM_ABORT (the reply is
 * incomplete: the connection is closed without the chunked end, so the
 * client sees a broken reply rather than a short one). */
typedef long (*req_stream_fn)(void *cls, uint64_t pos, char *buf, size_t max);
#define REQ_STREAM_END (-1L)
#define REQ_STREAM_ABORT (-2L)
#define REQ_STREAM_WAIT 0L

struct req {
	struct app *app;
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	const char *params[ROUTE_MAX_PARAMS];   /* {placeholders}, in order */
	int nparams;
	json_object *body;      /* the parsed body object; {} when empty */
	const char *in_raw;     /* a ROUTE_RAW route's body sent as bytes (not JSON):
	                         * borrowed, in_raw_len bytes (may be 0); NULL otherwise */
	size_t in_raw_len;
	json_object *query;     /* set by http_dispatch: the query (strings) */

	int status;             /* reply */
	json_object *reply;     /* owned */
	unsigned char *raw;     /* or a non-JSON reply (owned, malloc'd) */
	size_t raw_len;
	const char *raw_type;   /* its Content-Type (static), also for fd and stream */
	int fd;                 /* or a file reply (req_reply_fd): -1 none */
	uint64_t fd_off, fd_len;
	req_stream_fn stream;   /* or a streamed reply (req_reply_stream) */
	void (*stream_done)(void *cls);
	void *stream_cls;
	const void *stream_key; /* req_streams_wake(key) wakes it (req_stream_key) */
	int nhdr;               /* extra reply headers */
	const char *hdr_name[REQ_MAX_HEADERS];
	char hdr_val[REQ_MAX_HEADERS][320];
};

typedef int (*route_fn)(struct req *r, struct derr *e);

/* A route's body policy (docs/api.md "Bodies"). By default a route is
 * strict: a body field not in its list is 400 invalid_argument naming the
 * field, so a misspelt argument is reported, never silently dropped. */
#define ROUTE_LENIENT 0x1u      /* unknown body fields are ignored (the Python DETM's routes did) */
#define ROUTE_TOOL    0x2u      /* the body is a tool's arguments, checked against its inputSchema */
#define ROUTE_RPC     0x4u      /* the body is a JSON-RPC message, checked by the MCP layer (common/mcp.c) */
#define ROUTE_TRY     0x8u      /* tried first on the HTTP worker in nowait mode (nowait.h); a
                                 * refusal runs it again on a side worker (http_side.c) */
#define ROUTE_STREAM  0x10u     /* a long-lived stream (SSE, MJPEG): counts against the
                                 * stream cap (--max-streams, http_conns.c) */
#define ROUTE_RAW     0x20u     /* the body may be bytes of any Content-Type (a file):
                                 * sent as application/json it is parsed as usual,
                                 * otherwise it is left in req.in_raw and body is {} */
#define ROUTE_FOREIGN 0x40u     /* the body is a provider's own JSON (an object or an array:
                                 * a computer dialect, api_computer.c), checked by its dialect */
#define ROUTE_OPEN    0x80u     /* answered without the token (GET only, no placeholders):
                                 * the orchestrator's probes, which hold no secret */

struct route {
	const char *method;     /* GET (also answers HEAD), POST, PUT, PATCH, DELETE */
	const char *pattern;    /* "/api/tasks/{id}/items/{ordinal}"; a last "{name*}"
	                         * takes the rest of the path, slashes included */
	route_fn fn;
	size_t max_body;        /* 0: the route takes no body */
	const char *summary;    /* one line, for docs and 404 hints */
	unsigned flags;         /* ROUTE_* */
	const char *const *fields;  /* the body's fields, NULL-terminated; NULL: no
	                         * body (max_body 0), a tool's (ROUTE_TOOL),
	                         * a JSON-RPC message (ROUTE_RPC) or a
	                         * provider's (ROUTE_FOREIGN) */
};

/* The route table (routes.c). */
extern const struct route api_routes[];
extern const size_t api_nroutes;

/* The row of the route table that r came through, known by its handler
 * (self) and method, and by its path where several rows share them (the
 * Python DETM's aliases). NULL if self serves no such route. */
const struct route *api_route_of(const struct req *r, route_fn self) DETM_NODISCARD;
/* The route's body policy, applied to r->body: every handler of a route
 * that takes a body calls it first. A strict route's unknown field is
 * DERR_INVALID on that field, the message listing the accepted ones; a
 * lenient or tool route passes (api_tool_call applies the policy to the
 * tool's arguments). 0 or -1. */
int api_body_check(struct req *r, route_fn self, struct derr *e) DETM_NODISCARD;

/* Sets the reply; takes ownership of obj. Returns 0. */
int req_reply(struct req *r, int status, json_object *obj);
/* A non-JSON reply: takes ownership of data (malloc'd); type is static. */
int req_reply_raw(struct req *r, int status, const char *type, unsigned char *data,
    size_t len);
/* A file reply: len bytes of fd from off (the reply owns fd and closes it,
 * whatever happens next). Returns 0. */
int req_reply_fd(struct req *r, int status, const char *type, int fd, uint64_t off,
    uint64_t len);
/* A streamed reply of unknown length (MJPEG): read gives the bytes as
 * they come; done(cls) is called exactly once, when the reply ended, the
 * client left, or the handler failed after setting it. Returns 0. */
int req_reply_stream(struct req *r, int status, const char *type, req_stream_fn read,
    void (*done)(void *cls), void *cls);
/* Replies a producer thread writes into a pipe (http_pipe.c), by kind;
 * each kind has a cap on how many run at once (lim.h). */
enum req_bulk { REQ_BULK_VIEW, REQ_BULK_ARCHIVE, REQ_BULK__COUNT };
/* Takes a slot of kind k: 0, or -1 with e (DERR_BUSY: 503, Retry-After)
 * when the cap is reached. Hand it to req_reply_pipe, or give it back. */
int req_bulk_take(enum req_bulk k, struct derr *e) DETM_NODISCARD;
void req_bulk_give(enum req_bulk k);
/* Streams what job (pipejob.h; notify: req_streams_wake) writes into the
 * pipe whose read end is fd as r's reply of type (chunked), and takes fd,
 * job and the slot of kind k: the fd is closed, the job released and the
 * slot given back when the reply ends (read whole, or the client left). A
 * job that did not end ok closes the connection without the chunked end.
 * job NULL (its spawn failed, err says why): the slot is given back and e
 * set (503). Returns 0 or -1. */
int req_reply_pipe(struct req *r, enum req_bulk k, struct pipejob *job, int fd, const char *type,
    const char *err, struct derr *e);
/* Names the key a waiting stream of r is woken by (default NULL: only by
 * req_streams_wake(NULL) and the one-second tick). */
void req_stream_key(struct req *r, const void *key);
/* Wakes every waiting stream whose key is key (NULL: all of them). Any
 * thread, any time (also before the server starts: then a no-op). */
void req_streams_wake(const void *key);
/* Adds a reply header (name static; value copied, truncated to 319 bytes).
 * At most REQ_MAX_HEADERS; extra ones are dropped. */
void req_header(struct req *r, const char *name, const char *fmt, ...) DETM_PRINTF(3, 4);
/* A request header's value (borrowed), or NULL. */
const char *req_in_header(struct req *r, const char *name);
/* The client's socket, for a streamed reply that wants to notice a hang-up
 * (fd_peer_closed); -1 when there is none (a dispatched or fuzzed request).
 * Valid while the request's connection lives; never close it. */
int req_conn_fd(struct req *r);
/* A query-string value (borrowed), or NULL. */
const char *req_query(struct req *r, const char *key);
/* Runs the route for method + path (unescaped) inside request r, as if it
 * had come over HTTP, with `query` (an object of strings, may be NULL) and
 * `body` (an object; both borrowed). The route's body cap applies. Its
 * reply (JSON or raw, with headers) becomes r's; returns 0, or -1 with e
 * set (404/405 when no route takes it). Used by the tool router. */
int req_dispatch(struct req *r, const char *method, const char *path,
    json_object *query, json_object *body, struct derr *e) DETM_NODISCARD;

/* Validate-or-fail helpers for path and query parameters. */
int req_task_id(struct req *r, int i, const char **out, struct derr *e) DETM_NODISCARD;
int req_query_int(struct req *r, const char *key, int64_t min, int64_t max,
    int64_t def, int64_t *out, struct derr *e) DETM_NODISCARD;

/* Handlers (api_task.c, api_sys.c). */
int api_health(struct req *r, struct derr *e);
/* Probes and drain (api_probe.c). */
int api_livez(struct req *r, struct derr *e);
int api_readyz(struct req *r, struct derr *e);
int api_drain_get(struct req *r, struct derr *e);
int api_drain_post(struct req *r, struct derr *e);
int api_version(struct req *r, struct derr *e);
int api_capabilities(struct req *r, struct derr *e);
int api_routes_list(struct req *r, struct derr *e);
int api_task_create(struct req *r, struct derr *e);
int api_task_list(struct req *r, struct derr *e);
/* The fleet (api_fleet.c): --peers' merged task list, and a request for an
 * id this detmd does not have sent to the peer that has it (0: r's reply
 * is the peer's answer, e cleared; -1: e kept or set). */
int api_fleet_tasks(struct req *r, struct derr *e);
/* Whether r (answered 404 here) could be a peer's: --peers set, an id-
 * bearing path, not itself forwarded. Cheap: asks no peer. */
bool api_fleet_wants(struct req *r);
/* raw, len: the request body as received (JSON), forwarded as it came. */
int api_fleet_forward(struct req *r, const char *raw, size_t len, struct derr *e);
int api_task_get(struct req *r, struct derr *e);
int api_task_patch(struct req *r, struct derr *e);
int api_task_delete(struct req *r, struct derr *e);
int api_task_pause(struct req *r, struct derr *e);
int api_task_resume(struct req *r, struct derr *e);
int api_task_cancel(struct req *r, struct derr *e);
int api_items_append(struct req *r, struct derr *e);
int api_item_get(struct req *r, struct derr *e);
int api_item_patch(struct req *r, struct derr *e);
int api_action_create(struct req *r, struct derr *e);
int api_action_get(struct req *r, struct derr *e);
int api_action_patch(struct req *r, struct derr *e);
int api_log_create(struct req *r, struct derr *e);
int api_messages_get(struct req *r, struct derr *e);
int api_message_create(struct req *r, struct derr *e);
int api_device(struct req *r, struct derr *e);
/* api_usage.c */
int api_usage_stats(struct req *r, struct derr *e);
int api_usage_prices(struct req *r, struct derr *e);
int api_metrics(struct req *r, struct derr *e);
/* api_clip.c */
int api_clip_task_get(struct req *r, struct derr *e);
int api_clip_task_put(struct req *r, struct derr *e);
int api_clip_get(struct req *r, struct derr *e);
int api_clip_put(struct req *r, struct derr *e);
/* api_files.c */
int api_files_list(struct req *r, struct derr *e);
int api_file_get(struct req *r, struct derr *e);
int api_file_put(struct req *r, struct derr *e);
int api_file_delete(struct req *r, struct derr *e);
/* api_a11y.c */
int api_desktop_elements(struct req *r, struct derr *e);
/* api_launch.c */
int api_task_launch(struct req *r, struct derr *e);
int api_task_launched(struct req *r, struct derr *e);
/* api_gui.c */
int api_gui_find(struct req *r, struct derr *e);
int api_gui_do(struct req *r, struct derr *e);
int api_gui_agent(struct req *r, struct derr *e);
int api_gui_agent_get(struct req *r, struct derr *e);
int api_task_replay(struct req *r, struct derr *e);        /* api_replay.c */
int api_task_replay_get(struct req *r, struct derr *e);
int api_gui_agent_cancel(struct req *r, struct derr *e);
/* api_rec.c */
int api_rec_status(struct req *r, struct derr *e);
int api_rec_video(struct req *r, struct derr *e);
int api_rec_index(struct req *r, struct derr *e);
int api_rec_start(struct req *r, struct derr *e);
int api_rec_stop(struct req *r, struct derr *e);
int api_record(struct req *r, struct derr *e);
int api_record_get(struct req *r, struct derr *e);
int api_record_stop(struct req *r, struct derr *e);
int api_record_video(struct req *r, struct derr *e);
/* api_live.c */
int api_live_task(struct req *r, struct derr *e);
int api_live_shared(struct req *r, struct derr *e);
int api_frame_task(struct req *r, struct derr *e);
int api_frame_shared(struct req *r, struct derr *e);
int api_live_list(struct req *r, struct derr *e);
/* api_takeover.c */
int api_takeover_start(struct req *r, struct derr *e);
int api_takeover_get(struct req *r, struct derr *e);
int api_takeover_release(struct req *r, struct derr *e);
int api_takeover_input(struct req *r, struct derr *e);
int api_takeover_help(struct req *r, struct derr *e);
/* api_dashboard.c */
int api_dashboard(struct req *r, struct derr *e);
int api_dashboard_file(struct req *r, struct derr *e);
/* api_memory.c */
int api_memory_search(struct req *r, struct derr *e);
int api_memory_read(struct req *r, struct derr *e);
int api_memory_append(struct req *r, struct derr *e);
/* api_shots.c */
int api_screenshot(struct req *r, struct derr *e);
/* api_events.c */
int api_events(struct req *r, struct derr *e);
/* api_tools.c */
int api_tools_list(struct req *r, struct derr *e);
int api_tool_call(struct req *r, struct derr *e);
/* api_mcp.c */
int api_mcp_post(struct req *r, struct derr *e);
int api_mcp_delete(struct req *r, struct derr *e);
/* api_waits.c */
int api_wait_create(struct req *r, struct derr *e);
int api_wait_list(struct req *r, struct derr *e);
int api_wait_get(struct req *r, struct derr *e);
int api_wait_patch(struct req *r, struct derr *e);
int api_wait_delete(struct req *r, struct derr *e);
/* api_desktop.c */
int api_desktop_action(struct req *r, struct derr *e);
/* api_computer.c: the provider computer dialects. */
int api_computer_post(struct req *r, struct derr *e);
int api_computer_get(struct req *r, struct derr *e);
int api_desktop_screenshot(struct req *r, struct derr *e);
int api_commands(struct req *r, struct derr *e);
int api_displays(struct req *r, struct derr *e);
int api_task_display_post(struct req *r, struct derr *e);
int api_task_display_get(struct req *r, struct derr *e);
int api_task_display_delete(struct req *r, struct derr *e);
int api_humanize_get(struct req *r, struct derr *e);
int api_humanize_set(struct req *r, struct derr *e);
/* api_osworld.c, api_osworld_io.c, api_osworld_at.c: the OSWorld in-VM
 * server, per task (/osworld/{task_id}/...). */
int api_osw_screenshot(struct req *r, struct derr *e);
int api_osw_screen_size(struct req *r, struct derr *e);
int api_osw_cursor_position(struct req *r, struct derr *e);
int api_osw_platform(struct req *r, struct derr *e);
int api_osw_window_size(struct req *r, struct derr *e);
int api_osw_activate_window(struct req *r, struct derr *e);
int api_osw_close_window(struct req *r, struct derr *e);
int api_osw_start_recording(struct req *r, struct derr *e);
int api_osw_end_recording(struct req *r, struct derr *e);
int api_osw_file(struct req *r, struct derr *e);
int api_osw_upload(struct req *r, struct derr *e);
int api_osw_list_directory(struct req *r, struct derr *e);
int api_osw_execute(struct req *r, struct derr *e);
int api_osw_launch(struct req *r, struct derr *e);
int api_osw_open_file(struct req *r, struct derr *e);
int api_osw_accessibility(struct req *r, struct derr *e);
/* api_ops.c */
int api_doctor(struct req *r, struct derr *e);
int api_task_export(struct req *r, struct derr *e);
int api_dump(struct req *r, struct derr *e);


/* Request helpers shared by the handler files (api_common.c): an api_*.c
 * calls these, never a function of another api_*.c. */
/* The optional task_id of a request: the body's, else (from_query) the
 * query's; "" counts as absent (*out NULL). An id that cannot exist is
 * DERR_NOT_FOUND. *out is borrowed from the request. */
int api_opt_task_id(struct req *r, bool from_query, const char **out, struct derr *e) DETM_NODISCARD;
/* The {id} (first path parameter) of a task route, which must name an
 * existing task. 0, or -1 with e set (400 bad id, 404). */
int api_known_task(struct req *r, const char **id, struct derr *e) DETM_NODISCARD;
/* Display size from {"<p>width","<p>height"} or {"<p>resolution":"WxH"}
 * (p is a key prefix such as "display_"); 0x0 when absent. */
int api_display_size(json_object *body, const char *p, int *w, int *h, struct derr *e) DETM_NODISCARD;
/* Starts task_id's display and records it in the task's metadata; on
 * failure nothing is left running. *info: the display (caller owns). */
int api_task_display_start(struct req *r, const char *task_id, int w, int h,
    json_object **info, struct derr *e) DETM_NODISCARD;
/* The health reply (GET /api/health) set on r: 200, or 503 when the
 * store is not usable. Returns 0. */
int api_health_reply(struct req *r);
/* The keys GET /api/tasks/{id} adds after the task summary's own:
 * recording, driver, usage (and budget). */
void api_task_view_tail(struct req *r, const char *id, json_object *sum);
/* Task id's view of detail (enum task_detail; task.h task_view_*, with
 * api_task_view_tail's keys) on a read connection of its own (*rd: the
 * caller closes it after the view). NULL with e (404 for an unknown task). */
struct task_view;
struct store;
struct task_view *api_task_view_open(struct req *r, const char *id, int detail,
    struct store **rd, struct derr *e);
/* Calls tool `name` (or its Python alias) with r->body as its MCP
 * arguments: checked against its inputSchema (an argument it does not
 * name is an error, or dropped when lenient), then run in process through
 * req_dispatch as the daemon request it stands for; that reply becomes
 * r's. 0, or -1 with e set. */
int api_tool_run(struct req *r, const char *name, bool lenient, struct derr *e) DETM_NODISCARD;

#endif
