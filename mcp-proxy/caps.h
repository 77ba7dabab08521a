/*
 * caps.h - every size and time limit of detm-mcp, in one place.
 *
 * The proxy reads untrusted bytes from two sides (the MCP client on stdin,
 * detmd over HTTP); each buffer that grows from either side stops at one of
 * these ceilings and turns the overflow into an error reply, never a crash.
 */
#ifndef DETM_MCP_CAPS_H
#define DETM_MCP_CAPS_H

#include "cdefs.h"
#include "mcp.h"
#include "tools.h"

#define CAP_LINE_BYTES     (4L * 1024 * 1024)  /* one JSON-RPC message on stdin */
#define CAP_HTTP_BODY      (32L * 1024 * 1024) /* one detmd response (screenshots) */
#define CAP_URL_BYTES      8192                /* daemon URL + route + query */
#define CAP_QUEUE          64                  /* tools/call jobs waiting for a worker */
#define CAP_WORKERS        6                   /* tools/call jobs running at once */

#define TIME_CONNECT_S     2L                  /* TCP connect to detmd */
#define TIME_CALL_S        TOOL_CALL_S         /* ordinary calls (common/tools.h) */
#define TIME_VERSION_S     3L                  /* startup GET /api/version */
#define TIME_PROGRESS_MS   2000                /* notifications/progress interval */
#define TIME_CLIP_POLL_S   2L                  /* GET /api/record/{id}?block_s= */
#define TIME_CLIP_STOP_S   15L                 /* POST /api/record/{id}/stop */
#define TIME_WAIT_POLL_S   5L                  /* smart_wait as a task: GET /api/waits/{id}?block_s= */
#define TIME_CLIP_MARGIN_S 30L                 /* video_record: its duration + this, then a
                                                * tool error (as detmd's CLIP_MARGIN_S) */
#define TIME_EOF_GRACE_MS  1000                /* finish queued calls after stdin EOF */

#define DEFAULT_DAEMON_URL "http://127.0.0.1:18790"
#define DETM_MCP_VERSION   MCP_SERVER_VERSION

#endif
