/*
 * mcp_fixtures.h - the conformance fixture tools that detmd's /mcp serves
 * when --mcp-conformance-tools (ACU_MCP_CONFORMANCE_TOOLS=1) is on: the
 * tools the official MCP conformance suite calls on the reference server
 * (test_simple_text, test_error_handling, test_tool_with_progress, ...).
 * Never part of the tool table, tools/list of detm-mcp, or /api/tools.
 */
#ifndef DETM_MCP_FIXTURES_H
#define DETM_MCP_FIXTURES_H
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include "tools.h"

/* Progress sink of a running fixture: progress out of total, a message. */
typedef void (*mcp_fixture_progress_fn)(void *cls, double progress, double total,
                                        const char *message);

/* The fixture tools (static; input_schema parsed on first use) and their
 * count in *n. Thread-safe. */
const struct tool *mcp_fixtures(size_t *n);

/* The client capability fixture t needs (a key of clientCapabilities,
 * static), or NULL. */
const char *mcp_fixtures_needs(const struct tool *t);

/* Whether t is one of mcp_fixtures(). */
bool mcp_fixtures_has(const struct tool *t);

/* Run fixture t with args (borrowed; unchecked): its CallToolResult (new
 * object; an isError result from result_error for test_error_handling and
 * failing_job; {"error": {code, message}} for protocol_error_job, which
 * mcp_task_done files as a failed task), calling progress along the way
 * for the tools that report progress. slow_compute returns early when
 * the call is cancelled (core/cancel.h). */
struct json_object *mcp_fixtures_run(const struct tool *t, struct json_object *args,
                                      mcp_fixture_progress_fn progress,
                                      void *cls);
#endif
