/*
 * lim.h - every size limit on client input, in one place (curl's DYN_*).
 * Lengths of strings count characters (code points); sizes count bytes.
 */
#ifndef DETM_LIMITS_H
#define DETM_LIMITS_H

#define LIM_BODY_DEFAULT   (64 * 1024)     /* request body, most routes */
#define LIM_BODY_ACTION    (1024 * 1024)   /* POST .../actions (data + logs) */
#define LIM_BODY_PLAN      (1024 * 1024)   /* a plan of 500 titles of 500 chars */
#define LIM_BODY_CLIP      (22L * 1024 * 1024) /* PUT .../clipboard: 16 MiB (the clipboard's cap) as base64 */
#define LIM_BODY_FILE      (44L * 1024 * 1024) /* PUT .../files/{path}: 32 MiB (a file's cap) as base64 */
#define LIM_BODY_COMPUTER  (512 * 1024)    /* POST /api/computer/{dialect}: a provider's calls */
#define LIM_URL_BYTES      2048
#define LIM_DRAIN_BYTES    (16 * 1024 * 1024) /* body read and dropped before an early error reply */
#define LIM_TASK_NAME      200
#define LIM_AGENT_ID       128
#define LIM_PLAN_ITEMS     500             /* per request, and per task */
#define LIM_ITEM_TITLE     500
#define LIM_METADATA_BYTES (16 * 1024)
#define LIM_SUMMARY        2000
#define LIM_DATA_BYTES     (64 * 1024)     /* input_data / output_data as JSON */
#define LIM_LOGS_PER_CALL  100
#define LIM_LOG_TYPE       32
#define LIM_LOG_CONTENT    (64 * 1024)
#define LIM_MESSAGE        (16 * 1024)
#define LIM_MSG_TYPE       32
#define LIM_NOTE           LIM_MESSAGE
#define LIM_REASON         1000
#define LIM_LIST_MAX       500             /* GET /api/tasks?limit */
#define LIM_LIST_DEFAULT   20
#define LIM_DRILL_MAX      1000
#define LIM_DRILL_DEFAULT  200
#define LIM_THREAD_MAX     1000
#define LIM_THREAD_DEFAULT 50
#define LIM_DETAIL_ACTIONS 200             /* actions per item in detail views */
/* Replies written by a thread of their own into a pipe (http_pipe.c), at
 * once: big task views (detail=actions/full/focused), and archives (the
 * export bundle, the dump). Past a cap: 503 with Retry-After. */
#define LIM_BIG_VIEWS      32
#define LIM_ARCHIVES       8
/* A big view asked in process (an MCP tool call on /mcp) is built in
 * memory: at most this much JSON (over HTTP it is streamed, uncapped). */
#define LIM_VIEW_INPROC_BYTES (8L * 1024 * 1024)
/* GET /api/desktop/elements: elements per reply (?max, default below), tree
 * depth walked, nodes visited, the helper's reply line and its deadline. */
#define LIM_A11Y_ELEMENTS  1000
#define LIM_A11Y_DEFAULT   200
#define LIM_A11Y_DEPTH     40
#define LIM_A11Y_VISIT     20000
#define LIM_A11Y_REPLY_BYTES (8 * 1024 * 1024)
#define LIM_A11Y_TIMEOUT_MS 20000
/* Every string of the tree (names, descriptions, labels, titles, text) is
 * cut to LIM_A11Y_STR bytes, between characters, ending with an ellipsis;
 * the helper stops adding elements before its reply passes the byte cap it
 * is given (LIM_A11Y_REPLY_BYTES less LIM_A11Y_REPLY_SLACK for the rest of
 * the reply) and says truncated; elements name their window through the
 * reply's windows table, and detmd copies at most LIM_A11Y_EL_WINDOW bytes
 * of that name into each element; the walk stops after LIM_A11Y_WALK_MS. */
#define LIM_A11Y_STR        4096
#define LIM_A11Y_EL_WINDOW  256
#define LIM_A11Y_REPLY_SLACK (1024 * 1024)
#define LIM_A11Y_WALK_MS    8000
#define LIM_TEXT_JSON      (256L * 1024)   /* a reply echoed as JSON text in a tool result */

#endif
