/*
 * test_mcp.c - bin/test-mcp: drives bin/detm-mcp over pipes against the
 * real detmd at $DETM_URL (started by tests/mcp/run.sh), plus a fake
 * detmd for replies a real one cannot give. Each test is named after the
 * behaviour it proves; the last line is "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "mcp_harness.h"

HARNESS_DEFINE;
static const char *url;


#define DROP(o) do { json_object_put(o); (o) = NULL; } while (0)
#define JS(o) ((o) ? json_object_to_json_string_ext((o), JSON_C_TO_STRING_PLAIN) : "(none)")

static int
open_proxy(struct mproc *p, const char *u)
{
	const char *args[] = { "--url", u, NULL };

	return mproc_open(p, args);
}

static int
err_code(struct json_object *resp)
{
	return (int)jget_int(resp, "error.code", 0);
}

static bool
is_error(struct json_object *result)
{
	struct json_object *e = jget(result, "isError");

	return e != NULL && json_object_get_boolean(e);
}

/* ---- lifecycle ---- */

static int
test_initialize_negotiates_each_version(void)
{
	static const struct { const char *ask, *get; } cases[] = {
		{ "2024-11-05", "2024-11-05" }, { "2025-03-26", "2025-03-26" },
		{ "2025-06-18", "2025-06-18" }, { "2025-11-25", "2025-11-25" },
		{ "1999-01-01", "2025-11-25" }, { "2026-07-28", "2025-11-25" },
	};
	struct json_object *r = NULL;
	struct mproc p;
	size_t i;
	int ok = 1;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		REQUIRE(open_proxy(&p, url) == 0, "spawn");
		r = mproc_init(&p, cases[i].ask);
		REQUIRE(r != NULL, "no answer to initialize %s", cases[i].ask);
		REQUIRE(strcmp(jget_str(r, "result.protocolVersion") ?: "", cases[i].get) == 0,
		      "asked %s, got %s", cases[i].ask, JS(r));
		REQUIRE(strcmp(jget_str(r, "result.serverInfo.name") ?: "", "detm-mcp") == 0, "%s", JS(r));
		REQUIRE(jget_str(r, "result.serverInfo.version") != NULL, "%s", JS(r));
		REQUIRE(jget(r, "result.capabilities.tools.listChanged") != NULL &&
		      !json_object_get_boolean(jget(r, "result.capabilities.tools.listChanged")), "%s", JS(r));
		REQUIRE(strlen(jget_str(r, "result.instructions") ?: "") > 100, "instructions");
		DROP(r);

		REQUIRE(mproc_close(&p, 3000, NULL) == 0, "exit status");
	}
out:
	DROP(r);
	return ok;
}

static int
test_ping_before_and_after_initialize(void)
{
	struct json_object *r = NULL;
	struct mproc p;
	int ok = 1;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	r = mproc_call(&p, 1, "ping", NULL);
	REQUIRE(r && jget(r, "result") && json_object_object_length(jget(r, "result")) == 0, "%s", JS(r));
	DROP(r);
	r = mproc_call(&p, 2, "tools/list", NULL);
	REQUIRE(err_code(r) == -32600 && strstr(jget_str(r, "error.message") ?: "", "initialize"),
	      "tools/list before initialize: %s", JS(r));
	DROP(r);
	r = mproc_init(&p, "2025-11-25");
	DROP(r);
	r = mproc_call(&p, 3, "ping", "{}");
	REQUIRE(r && jget(r, "result"), "%s", JS(r));
	DROP(r);
	r = mproc_call(&p, 4, "initialize", "{\"protocolVersion\":\"2025-11-25\"}");
	REQUIRE(err_code(r) == -32600, "second initialize: %s", JS(r));
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

static int
test_tools_list_has_every_tool_with_strict_schemas(void)
{
	static const char *const names[] = {
		"task_register", "task_update", "task_item_update", "task_plan_append",
		"task_log_action", "task_summary", "task_drill_down", "task_thread", "task_list",
		"smart_wait", "wait_status", "wait_update", "wait_cancel", "gui_agent", "gui_do", "gui_find",
		"desktop_action", "desktop_look", "humanize_status", "humanize_set",
		"video_record", "memory_search", "memory_read", "memory_append", "health_check",
		"request_human",
		"desktop_elements", "desktop_launch",
		"clipboard_get", "clipboard_set", "file_upload", "file_download", "file_list",
		"gui_agent_status", "video_status", "task_replay", "task_replay_status",
	};
	struct json_object *r = NULL, *tools, *t;
	struct mproc p;
	size_t i, j;
	int ok = 1;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	r = mproc_call(&p, 2, "tools/list", "{}");
	tools = jget(r, "result.tools");
	REQUIRE(tools && json_object_array_length(tools) == sizeof names / sizeof names[0], "%s", JS(r));
	REQUIRE(jget(r, "result.nextCursor") == NULL, "no cursor");
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		for (j = 0; j < json_object_array_length(tools); j++)
			if (strcmp(jget_str(json_object_array_get_idx(tools, j), "name"), names[i]) == 0)
				break;
		REQUIRE(j < json_object_array_length(tools), "tool %s missing", names[i]);
		t = json_object_array_get_idx(tools, j);
		REQUIRE(strcmp(jget_str(t, "inputSchema.type") ?: "", "object") == 0, "%s", names[i]);
		REQUIRE(jget(t, "inputSchema.additionalProperties") &&
		      !json_object_get_boolean(jget(t, "inputSchema.additionalProperties")), "%s", names[i]);
		REQUIRE(strlen(jget_str(t, "description") ?: "") > 40, "%s description", names[i]);
		REQUIRE(jget_str(t, "title") != NULL, "%s title", names[i]);
		REQUIRE(jget(t, "annotations.readOnlyHint") && jget(t, "annotations.openWorldHint"), "%s", names[i]);
		/* structuredContent is declared (issue 19.3) */
		REQUIRE(strcmp(jget_str(t, "outputSchema.type") ?: "", "object") == 0,
		      "%s has no outputSchema", names[i]);
	}
	/* truthful hints on two samples */
	for (j = 0; j < json_object_array_length(tools); j++) {
		t = json_object_array_get_idx(tools, j);
		if (strcmp(jget_str(t, "name"), "task_summary") == 0)
			REQUIRE(json_object_get_boolean(jget(t, "annotations.readOnlyHint")), "task_summary ro");
		if (strcmp(jget_str(t, "name"), "desktop_action") == 0)
			REQUIRE(json_object_get_boolean(jget(t, "annotations.destructiveHint")) &&
			      json_object_get_boolean(jget(t, "annotations.openWorldHint")), "desktop_action");
	}
	DROP(r);
	r = mproc_call(&p, 3, "tools/list", "{\"cursor\":\"abc\"}");
	REQUIRE(err_code(r) == -32602, "bad cursor: %s", JS(r));
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

static int
test_old_versions_get_no_newer_fields(void)
{
	struct json_object *r = NULL, *res;
	struct mproc p;
	int ok = 1;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2024-11-05"));
	r = mproc_call(&p, 2, "tools/list", NULL);
	REQUIRE(jget(r, "result.tools.0.annotations") == NULL && jget(r, "result.tools.0.title") == NULL,
	      "2024-11-05 listing has annotations/title");
	DROP(r);
	res = mproc_tool(&p, 3, "health_check", NULL, &r);
	REQUIRE(res && !is_error(res) && jget(res, "structuredContent") == NULL, "%s", JS(r));
	REQUIRE(strstr(jget_str(res, "content.1.text") ?: "", "\"api_version\": 1"), "JSON text block");
	DROP(r);
	mproc_close(&p, 3000, NULL);

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-03-26"));
	r = mproc_call(&p, 2, "tools/list", NULL);
	REQUIRE(jget(r, "result.tools.0.annotations.title") != NULL && jget(r, "result.tools.0.title") == NULL,
	      "2025-03-26 listing");
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

/* ---- task tools against the real daemon ---- */

static int
test_task_tools_happy_path(void)
{
	struct json_object *r = NULL, *res;
	struct mproc p;
	char tid[64], args[1024];
	int ok = 1, id = 10;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));

	res = mproc_tool(&p, id++, "task_register",
	                 "{\"name\":\"Export report\",\"plan\":[\"Open app\",\"Export\"],\"metadata\":{\"k\":1}}", &r);
	REQUIRE(res && !is_error(res), "%s", JS(r));
	REQUIRE(jget_str(res, "structuredContent.task_id") != NULL, "%s", JS(r));
	snprintf(tid, sizeof tid, "%s", jget_str(res, "structuredContent.task_id"));
	REQUIRE(strstr(result_text(res), tid) && strstr(result_text(res), "Export report"), "%s", result_text(res));
	DROP(r);

#define TOOL_OK(name, fmt, ...) do { \
		snprintf(args, sizeof args, fmt, __VA_ARGS__); \
		res = mproc_tool(&p, id++, name, args, &r); \
		REQUIRE(res && !is_error(res) && jget(res, "structuredContent"), "%s %s: %s", name, args, JS(r)); \
	} while (0)

	TOOL_OK("task_item_update", "{\"task_id\":\"%s\",\"ordinal\":0,\"status\":\"active\"}", tid);
	REQUIRE(strcmp(jget_str(res, "structuredContent.items.0.status") ?: "", "active") == 0, "%s", JS(r));
	DROP(r);
	TOOL_OK("task_log_action", "{\"task_id\":\"%s\",\"action_type\":\"cli\",\"summary\":\"ran export.sh\","
	        "\"input_data\":{\"cmd\":\"export.sh\"},\"output_data\":{\"text\":\"ok\"},\"duration_ms\":12}", tid);
	REQUIRE(jget_str(res, "structuredContent.action_id") != NULL, "%s", JS(r));
	REQUIRE(jget_int(res, "structuredContent.plan_item_ordinal", -1) == 0, "%s", JS(r));
	DROP(r);
	TOOL_OK("task_item_update", "{\"task_id\":\"%s\",\"ordinal\":0,\"status\":\"completed\",\"note\":\"done\"}", tid);
	REQUIRE(jget_int(res, "structuredContent.progress_pct", -1) == 50, "%s", JS(r));
	DROP(r);
	TOOL_OK("task_update", "{\"task_id\":\"%s\",\"message\":\"halfway\",\"query\":\"where are we?\"}", tid);
	DROP(r);
	TOOL_OK("task_plan_append", "{\"task_id\":\"%s\",\"items\":[\"Email it\"],\"note\":\"asked\"}", tid);
	REQUIRE(jget_int(res, "structuredContent.added.0.ordinal", -1) == 2, "%s", JS(r));
	DROP(r);
	TOOL_OK("task_summary", "{\"task_id\":\"%s\",\"detail_level\":\"full\"}", tid);
	REQUIRE(json_object_array_length(jget(res, "structuredContent.items")) == 3, "%s", JS(r));
	REQUIRE(jget(res, "structuredContent.items.0.action_details") != NULL, "detail=full: %s", JS(r));
	REQUIRE(strstr(result_text(res), "1 of 3 items completed") != NULL, "%s", result_text(res));
	DROP(r);
	TOOL_OK("task_drill_down", "{\"task_id\":\"%s\",\"ordinal\":0}", tid);
	REQUIRE(jget_int(res, "structuredContent.ordinal", -1) == 0, "%s", JS(r));
	REQUIRE(strcmp(jget_str(res, "structuredContent.actions.0.summary") ?: "", "ran export.sh") == 0, "%s", JS(r));
	REQUIRE(strcmp(jget_str(res, "structuredContent.actions.0.input_data.cmd") ?: "", "export.sh") == 0, "%s", JS(r));
	DROP(r);
	TOOL_OK("task_thread", "{\"task_id\":\"%s\",\"limit\":100,\"message\":\"hello from the agent\"}", tid);
	REQUIRE(strstr(json_object_to_json_string(jget(res, "structuredContent.messages")), "hello from the agent"),
	      "%s", JS(r));
	DROP(r);
	TOOL_OK("task_thread", "{\"task_id\":\"%s\",\"limit\":1}", tid);
	REQUIRE(json_object_array_length(jget(res, "structuredContent.messages")) == 1, "limit: %s", JS(r));
	DROP(r);
	TOOL_OK("task_list", "{\"status\":\"all\",\"limit\":50%s}", "");
	REQUIRE(strstr(json_object_to_json_string(res), tid) != NULL, "%s", JS(r));
	DROP(r);
	TOOL_OK("task_update", "{\"task_id\":\"%s\",\"status\":\"completed\",\"name\":\"Exported\"}", tid);
	REQUIRE(strcmp(jget_str(res, "structuredContent.status") ?: "", "completed") == 0, "%s", JS(r));
	DROP(r);
	TOOL_OK("health_check", "%s", "{}");
	REQUIRE(strstr(result_text(res), "healthy") != NULL, "%s", result_text(res));
#undef TOOL_OK
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

/* The Python DETM's leniency through the real proxy: status aliases and any
 * case (normalised to the schema's spelling), an item completed straight
 * from pending. */
static int
test_task_status_aliases_and_lenient_items(void)
{
	struct json_object *r = NULL, *res;
	struct mproc p;
	char tid[64], args[1024];
	int ok = 1, id = 400;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	res = mproc_tool(&p, id++, "task_register", "{\"name\":\"lenient\",\"plan\":[\"a\",\"b\"]}", &r);
	REQUIRE(res && !is_error(res) && jget_str(res, "structuredContent.task_id"), "%s", JS(r));
	snprintf(tid, sizeof tid, "%s", jget_str(res, "structuredContent.task_id"));
	DROP(r);

#define TOOL_OK(name, fmt, ...) do { \
		snprintf(args, sizeof args, fmt, __VA_ARGS__); \
		res = mproc_tool(&p, id++, name, args, &r); \
		REQUIRE(res && !is_error(res) && jget(res, "structuredContent"), "%s %s: %s", name, args, JS(r)); \
	} while (0)
#define SC_IS(path, want) REQUIRE(strcmp(jget_str(res, "structuredContent." path) ?: "", want) == 0, \
		"%s: %s", path, JS(r))

	TOOL_OK("task_item_update", "{\"task_id\":\"%s\",\"ordinal\":0,\"status\":\"completed\"}", tid);
	SC_IS("items.0.status", "completed");
	REQUIRE(jget(res, "structuredContent.items.0.duration_s") != NULL &&
	      json_object_get_double(jget(res, "structuredContent.items.0.duration_s")) == 0.0, "%s", JS(r));
	DROP(r);
	TOOL_OK("task_item_update", "{\"task_id\":\"%s\",\"ordinal\":1,\"status\":\"FAILED\"}", tid);
	SC_IS("items.1.status", "failed");
	DROP(r);
	TOOL_OK("task_log_action", "{\"task_id\":\"%s\",\"ordinal\":0,\"action_type\":\"CLI\",\"summary\":\"s\",\"status\":\"Failed\"}", tid);
	DROP(r);
	TOOL_OK("task_summary", "{\"task_id\":\"%s\",\"detail_level\":\"Full\"}", tid);
	SC_IS("items.0.action_details.0.status", "failed");
	SC_IS("items.0.action_details.0.action_type", "cli");
	DROP(r);
	TOOL_OK("task_update", "{\"task_id\":\"%s\",\"status\":\"CANCELED\"}", tid);
	SC_IS("status", "cancelled");
	DROP(r);
	TOOL_OK("task_list", "{\"status\":\"Canceled\",\"limit\":500%s}", "");
	REQUIRE(strstr(json_object_to_json_string(res), tid) != NULL, "%s", JS(r));
	DROP(r);
	res = mproc_tool(&p, id++, "task_register", "{\"name\":\"us spelling\"}", &r);
	REQUIRE(res && !is_error(res), "%s", JS(r));
	snprintf(tid, sizeof tid, "%s", jget_str(res, "structuredContent.task_id") ?: "");
	DROP(r);
	TOOL_OK("task_update", "{\"task_id\":\"%s\",\"status\":\"canceled\"}", tid);
	SC_IS("status", "cancelled");
	DROP(r);
	/* Leaving a final state is still refused, as the route's 409. */
	snprintf(args, sizeof args, "{\"task_id\":\"%s\",\"status\":\"Active\"}", tid);
	res = mproc_tool(&p, id++, "task_update", args, &r);
	REQUIRE(res && is_error(res) && strstr(jget_str(res, "content.1.text") ?: "", "\"code\":\"conflict\""),
	      "%s", JS(r));
#undef SC_IS
#undef TOOL_OK
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

/* Numbers past 64 bits keep their text through detm-mcp both ways (its
 * parse of the line, its parse of detmd's reply); a key holding NUL or
 * given twice cannot be kept, so the line is a parse error naming it. */
static int
test_json_is_kept_as_sent(void)
{
	static const char big[] = "{\"name\":\"big\",\"metadata\":{\"big\":123456789012345678901234567890,"
		"\"neg\":-123456789012345678901234567890,\"z\":-0,\"d\":1e400}}";
	struct json_object *r = NULL, *res;
	struct mproc p;
	const char *text;
	int ok = 1;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	res = mproc_tool(&p, 10, "task_register", big, &r);
	REQUIRE(res && !is_error(res), "%s", JS(r));
	text = jget_str(res, "content.1.text");   /* the reply as JSON text */
	/* the text block is JSON.stringify(structuredContent, null, 2), but
	 * numbers no double holds keep the text they were sent as */
	REQUIRE(text && strstr(text, "\"big\": 123456789012345678901234567890,") &&
	      strstr(text, "\"neg\": -123456789012345678901234567890,") &&
	      strstr(text, "\"z\": -0,") && strstr(text, "\"d\": 1e400\n"), "%s", text ? text : JS(r));
	DROP(r);
	mproc_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":"
	           "\"task_register\",\"arguments\":{\"name\":\"x\",\"metadata\":{\"a\\u0000b\":1}}}}");
	r = mproc_recv(&p, 5000);
	REQUIRE(r && err_code(r) == -32700 && strstr(jget_str(r, "error.message") ?: "", "NUL") &&
	      strstr(jget_str(r, "error.message") ?: "", "params.arguments.metadata.a\\u0000b"), "%s", JS(r));
	DROP(r);
	mproc_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":"
	           "\"task_list\",\"arguments\":{\"limit\":1,\"limit\":2}}}");
	r = mproc_recv(&p, 5000);
	REQUIRE(r && err_code(r) == -32700 && strstr(jget_str(r, "error.message") ?: "", "limit"), "%s", JS(r));
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

static int
test_task_tool_errors_are_tool_results(void)
{
	static const struct { const char *tool, *args, *needle; } cases[] = {
		{ "task_summary", "{\"task_id\":\"deadbeef\"}", "no task with id 'deadbeef'" },
		{ "task_update", "{\"task_id\":\"deadbeef\",\"status\":\"paused\"}", "deadbeef" },
		{ "task_drill_down", "{\"task_id\":\"deadbeef\",\"ordinal\":0}", "deadbeef" },
		{ "task_register", "{}", "missing required argument 'name'" },
		{ "task_register", "{\"name\":\"\"}", "'name' must not be empty" },
		{ "task_register", "{\"name\":\"x\",\"bogus\":1}", "unknown argument 'bogus'" },
		{ "task_register", "{\"name\":\"x\",\"plan\":\"one\"}", "'plan' must be an array" },
		{ "task_item_update", "{\"task_id\":\"deadbeef\",\"ordinal\":-1}", "'ordinal' must be >= 0" },
		{ "task_item_update", "{\"task_id\":\"deadbeef\",\"ordinal\":\"0\"}", "'ordinal' must be an integer" },
		{ "task_update", "{\"task_id\":\"deadbeef\",\"status\":\"done\"}", "must be one of active" },
		{ "task_log_action", "{\"task_id\":\"deadbeef\",\"summary\":\"x\"}", "missing required argument 'action_type'" },
		{ "task_list", "{\"limit\":0}", "'limit' must be >= 1" },
		{ "health_check", "{\"x\":1}", "takes no arguments" },
	};
	struct json_object *r = NULL, *res;
	struct mproc p;
	size_t i;
	int ok = 1;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		res = mproc_tool(&p, 100 + (int)i, cases[i].tool, cases[i].args, &r);
		REQUIRE(res && is_error(res), "%s %s: %s", cases[i].tool, cases[i].args, JS(r));
		REQUIRE(strstr(result_text(res), cases[i].needle) != NULL, "%s %s: want '%s' in %s",
		      cases[i].tool, cases[i].args, cases[i].needle, result_text(res));
		DROP(r);

	}
	/* a daemon-side conflict keeps the daemon's message and error object */
	res = mproc_tool(&p, 200, "task_register", "{\"name\":\"conflict\",\"plan\":[\"a\"]}", &r);
	{
		char args[256], tid[64];
		snprintf(tid, sizeof tid, "%s", jget_str(res, "structuredContent.task_id") ?: "");
		DROP(r);
		snprintf(args, sizeof args, "{\"task_id\":\"%s\",\"ordinal\":0,\"status\":\"skipped\"}", tid);
		res = mproc_tool(&p, 201, "task_item_update", args, &r);
		REQUIRE(res && !is_error(res), "%s", JS(r));
		DROP(r);
		snprintf(args, sizeof args, "{\"task_id\":\"%s\",\"ordinal\":0,\"status\":\"active\"}", tid);
		res = mproc_tool(&p, 202, "task_item_update", args, &r);
	}
	REQUIRE(res && is_error(res) && strstr(result_text(res), "cannot go from skipped to active"),
	      "%s", JS(r));
	/* the daemon's error object as text, not as structuredContent (the tool
	 * declares an outputSchema that clients check even on errors) */
	REQUIRE(jget(res, "structuredContent") == NULL &&
	      strstr(jget_str(res, "content.1.text") ?: "", "\"code\":\"conflict\""), "%s", JS(r));
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

static int
test_unavailable_tools_name_the_capability(void)
{
	static const struct { const char *tool, *args, *what; } cases[] = {
		{ "video_record", "{\"duration\":5}", "screen recording" },
		{ "video_record", "{\"duration\":1,\"fps\":2}", "screen recording" },
	};
	struct json_object *r = NULL, *res;
	struct mproc p;
	struct fake f;
	char u[64];
	size_t i;
	int ok = 1;

	/* Every tool has its route in this detmd: an older daemon (a fake
	 * that answers every request with detmd's 404 for a missing route)
	 * stands in for one without recording. */
	REQUIRE(fake_start(&f, FAKE_CANNED) == 0, "fake");
	f.status = 404;
	snprintf(f.body, sizeof f.body, "{\"error\":{\"code\":\"not_found\",\"message\":"
	         "\"no route POST /api/record (GET /api/routes lists them)\",\"field\":null}}");
	snprintf(u, sizeof u, "http://127.0.0.1:%d", f.port);
	REQUIRE(open_proxy(&p, u) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		res = mproc_tool(&p, 100 + (int)i, cases[i].tool, cases[i].args, &r);
		REQUIRE(res && is_error(res), "%s: %s", cases[i].tool, JS(r));
		REQUIRE(strstr(result_text(res), "does not support") && strstr(result_text(res), cases[i].what) &&
		      strstr(result_text(res), u) && strstr(result_text(res), "capabilities"),
		      "%s: %s", cases[i].tool, result_text(res));
		DROP(r);

	}
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	fake_stop(&f);
	return ok;
}

/* ---- framing and protocol errors ---- */

static int
test_protocol_errors(void)
{
	static const struct { const char *line; int code; bool null_id; } cases[] = {
		{ "{bad", -32700, true },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing", -32700, true },
		{ "[1,", -32700, true },
		{ "42", -32600, true },
		{ "{\"id\":7,\"method\":\"ping\"}", -32600, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600, true },
		{ "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", -32600, true },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":3}", -32600, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"prompts/list\"}", -32601, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"server/discover\",\"params\":{}}", -32601, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}", -32602, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"task_list\",\"arguments\":[]}}", -32602, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":[]}", -32602, false },
		{ "[]", -32600, true },
		/* json-c's own UTF-8 check lets an overlong '/' (and surrogates)
		 * through; echoed back as the id they made invalid output. */
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"method\":\"ping\"}", -32700, true },
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"ping\"}", -32700, true },
	};
	struct json_object *r = NULL;
	struct mproc p;
	size_t i;
	int ok = 1;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		mproc_send(&p, cases[i].line);
		r = mproc_recv(&p, 5000);
		REQUIRE(r != NULL, "no answer to %s", cases[i].line);
		REQUIRE(err_code(r) == cases[i].code, "%s -> %s", cases[i].line, JS(r));
		if (cases[i].null_id)
			REQUIRE(json_object_object_get_ex(r, "id", NULL) && jget(r, "id") == NULL, "id null: %s", JS(r));
		else
			REQUIRE(jget_int(r, "id", 0) == 7, "id 7: %s", JS(r));
		DROP(r);

	}
	/* notifications (known or not) and blank lines are never answered */
	mproc_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
	mproc_send(&p, "");
	mproc_send(&p, "   \r");
	r = mproc_call(&p, 8, "ping", NULL);
	REQUIRE(r && jget_int(r, "id", 0) == 8, "the next message is the ping answer: %s", JS(r));
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

static int
test_oversize_line_is_rejected_and_reading_goes_on(void)
{
	size_t n = 5u * 1024 * 1024, i;
	struct json_object *r = NULL;
	char *big = malloc(n + 64);
	struct mproc p;
	int ok = 1;

	REQUIRE(big != NULL && open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	strcpy(big, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{\"x\":\"");
	for (i = strlen(big); i < n; i++)
		big[i] = 'a';
	strcpy(big + n, "\"}}");
	mproc_send(&p, big);
	r = mproc_recv(&p, 10000);
	REQUIRE(r && err_code(r) == -32600 && jget(r, "id") == NULL &&
	      strstr(jget_str(r, "error.message") ?: "", "exceeds"), "%s", JS(r));
	DROP(r);
	r = mproc_call(&p, 6, "ping", NULL);
	REQUIRE(r && jget(r, "result"), "ping after oversize: %s", JS(r));
	DROP(r);
	/* just under the cap is fine */
	n = 4u * 1024 * 1024 - 100;
	for (i = strlen("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{\"x\":\""); i < n; i++)
		big[i] = 'b';
	strcpy(big + n, "\"}}");
	mproc_send(&p, big);
	r = mproc_wait_id(&p, 5, 10000);
	REQUIRE(r && jget(r, "result"), "4 MiB - 100 line: %s", JS(r));
out:
	free(big);
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

static int
test_batches_only_in_2025_03_26(void)
{
	struct json_object *r = NULL;
	struct mproc p;
	int ok = 1;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-03-26"));
	mproc_send(&p, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
	           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"},"
	           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"health_check\"}},"
	           "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}]");
	r = mproc_recv(&p, 10000);
	REQUIRE(r && json_object_is_type(r, json_type_array) && json_object_array_length(r) == 3, "%s", JS(r));
	REQUIRE(jget(r, "0.result") && jget(r, "1.result.content") && err_code(jget(r, "2")) == -32601, "%s", JS(r));
	DROP(r);
	mproc_close(&p, 3000, NULL);

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	mproc_send(&p, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
	r = mproc_recv(&p, 5000);
	REQUIRE(r && err_code(r) == -32600 && strstr(jget_str(r, "error.message") ?: "", "batch"), "%s", JS(r));
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

static int
test_eof_exits_promptly(void)
{
	struct json_object *r = NULL;
	struct mproc p;
	long ms = 0;
	int ok = 1, st;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	st = mproc_close(&p, 3000, &ms);
	REQUIRE(st == 0 && ms < 1500, "status %d after %ld ms", st, ms);
	/* EOF before anything at all */
	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	st = mproc_close(&p, 3000, &ms);
	REQUIRE(st == 0 && ms < 1500, "status %d after %ld ms", st, ms);
out:
	DROP(r);
	return ok;
}

/* ---- daemon down, fake daemon ---- */

/* Whether the process maps a file whose path contains name. */
static bool
maps_have(pid_t pid, const char *name)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		found = found || strstr(line, name) != NULL;
	if (f != NULL)
		fclose(f);
	return found;
}

static int
test_daemon_down_says_where_and_how_to_start(void)
{
	struct json_object *r = NULL, *res;
	struct fake f;
	struct mproc p;
	char down[64];
	int ok = 1;

	/* a port that was just free: bind, note it, close */
	REQUIRE(fake_start(&f, FAKE_CANNED) == 0, "fake");
	fake_stop(&f);
	snprintf(down, sizeof down, "http://127.0.0.1:%d", f.port);
	REQUIRE(open_proxy(&p, down) == 0, "spawn");
	r = mproc_init(&p, "2025-11-25");
	REQUIRE(r && jget(r, "result"), "initialize must not need the daemon: %s", JS(r));
	DROP(r);
	r = mproc_call(&p, 2, "tools/list", NULL);
	REQUIRE(r && json_object_array_length(jget(r, "result.tools")) > 10, "tools/list without daemon");
	DROP(r);
	REQUIRE(!maps_have(p.pid, "libcurl"), "libcurl was loaded before the first tools/call");
	res = mproc_tool(&p, 3, "task_list", NULL, &r);
	REQUIRE(res && is_error(res), "%s", JS(r));
	REQUIRE(strstr(result_text(res), down) && strstr(result_text(res), "make run") &&
	      strstr(result_text(res), "detmd"), "%s", result_text(res));
	DROP(r);
	REQUIRE(mproc_stderr_has(&p, "not reachable"), "startup check logs the unreachable daemon");
	REQUIRE(maps_have(p.pid, "libcurl"), "the call loaded libcurl (the check above can fail)");
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

static int
test_cancel_aborts_the_call_in_flight(void)
{
	struct json_object *r = NULL;
	struct fake f;
	struct mproc p;
	char u[64];
	int ok = 1, i;

	REQUIRE(fake_start(&f, FAKE_SILENT) == 0, "fake");
	snprintf(f.body, sizeof f.body, "{\"name\":\"detmd\",\"api_version\":1}");
	snprintf(u, sizeof u, "http://127.0.0.1:%d", f.port);
	REQUIRE(open_proxy(&p, u) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	mproc_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":\"call-1\",\"method\":\"tools/call\","
	           "\"params\":{\"name\":\"task_list\",\"arguments\":{}}}");
	for (i = 0; i < 250 && f.silent_seen < 1; i++)
		usleep(20000);
	REQUIRE(f.silent_seen == 1, "the call did not reach the fake daemon");
	/* ping is answered while the call hangs */
	r = mproc_call(&p, 2, "ping", NULL);
	REQUIRE(r && jget(r, "result"), "ping during a call: %s", JS(r));
	DROP(r);
	mproc_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	           "\"params\":{\"requestId\":\"call-1\",\"reason\":\"user\"}}");
	for (i = 0; i < 100 && f.closed_early < 1; i++)
		usleep(20000);
	REQUIRE(f.closed_early >= 1, "the HTTP request was not aborted");
	/* no response for call-1: the next message is the answer to ping 3 */
	r = mproc_call(&p, 3, "ping", NULL);
	REQUIRE(r && jget_int(r, "id", 0) == 3, "%s", JS(r));
	DROP(r);
	r = mproc_recv(&p, 300);
	REQUIRE(r == NULL, "unexpected message after cancel: %s", JS(r));
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	fake_stop(&f);
	return ok;
}

static int
test_screenshot_becomes_image_content(void)
{
	struct json_object *r = NULL, *res;
	const char *args[] = { "--url", NULL, "--token", "sekrit", NULL };
	struct fake f;
	struct mproc p;
	char u[64];
	int ok = 1;

	REQUIRE(fake_start(&f, FAKE_CANNED) == 0, "fake");
	snprintf(f.body, sizeof f.body, "{\"image_b64\":\"/9j/AAAA\",\"mime_type\":\"image/jpeg\","
	         "\"image_size\":{\"width\":1200,\"height\":675},\"screen_size\":{\"width\":1920,"
	         "\"height\":1080},\"scale\":1.6,\"api_version\":2}");
	snprintf(u, sizeof u, "http://127.0.0.1:%d", f.port);
	args[1] = u;
	REQUIRE(mproc_open(&p, args) == 0, "spawn");
	json_object_put(mproc_init(&p, "2025-11-25"));
	/* initialize asked nothing of the daemon */
	REQUIRE(f.requests == 0, "initialize reached the daemon (%d requests)", f.requests);
	res = mproc_tool(&p, 2, "desktop_look", "{\"max_width\":1200,\"window_name\":\"Fire fox\"}", &r);
	/* the version check ran before the first call (so the fake's last
	 * request is the tool's), saw api_version 2 and logged both versions */
	REQUIRE(mproc_stderr_has(&p, "mismatch") && mproc_stderr_has(&p, "api_version 2") &&
	      mproc_stderr_has(&p, "api_version 1"), "version mismatch not logged");
	REQUIRE(res && !is_error(res), "%s", JS(r));
	/* the sentence first, then the image (issue 19.3) */
	REQUIRE(strcmp(jget_str(res, "content.1.type") ?: "", "image") == 0 &&
	      strcmp(jget_str(res, "content.1.data") ?: "", "/9j/AAAA") == 0 &&
	      strcmp(jget_str(res, "content.1.mimeType") ?: "", "image/jpeg") == 0, "%s", JS(r));
	REQUIRE(strstr(jget_str(res, "content.0.text") ?: "", "1200x675") &&
	      strstr(jget_str(res, "content.0.text") ?: "", "1920x1080") &&
	      strstr(jget_str(res, "content.0.text") ?: "", "1.6"), "%s", JS(r));
	REQUIRE(jget(res, "structuredContent.image_b64") == NULL &&
	      jget(res, "structuredContent.screen_size") != NULL, "%s", JS(r));
	REQUIRE(strstr(f.last_head, "GET /api/desktop/screenshot?format=json&window_name=Fire%20fox&max_width=1200 "),
	      "request line: %s", f.last_head);
	REQUIRE(strstr(f.last_head, "Authorization: Bearer sekrit") != NULL, "token header: %s", f.last_head);
	DROP(r);
	/* a non-JSON 500 is a tool error, not a crash */
	f.status = 500;
	snprintf(f.body, sizeof f.body, "oops");
	res = mproc_tool(&p, 3, "desktop_action", "{\"action\":\"screenshot\"}", &r);
	REQUIRE(res && is_error(res) && strstr(result_text(res), "HTTP 500"), "%s", JS(r));
	/* screen pixels unless the model opts in to image pixels (issue 19.2) */
	REQUIRE(strstr(f.last_head, "POST /api/desktop/action ") != NULL, "%s", f.last_head);
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	fake_stop(&f);
	return ok;
}

/* The 2026-07-28 envelope of a request, as params JSON text with extra
 * fields in front (may be ""). */
#define ENV26 "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
	"\"io.modelcontextprotocol/clientCapabilities\":{}}"

static struct json_object *
server_info_meta(struct json_object *resp)
{
	struct json_object *meta = jget(resp, "result._meta"), *si = NULL;

	if (meta != NULL)
		json_object_object_get_ex(meta, "io.modelcontextprotocol/serverInfo", &si);
	return si;
}

static int
test_stateless_era_on_stdio(void)
{
	struct json_object *r = NULL, *si;
	struct mproc p;
	int ok = 1;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	/* the first message decides: a stateless server/discover */
	r = mproc_call(&p, 1, "server/discover", "{" ENV26 "}");
	si = server_info_meta(r);
	REQUIRE(r && strstr(JS(jget(r, "result.supportedVersions")), "\"2026-07-28\"") &&
	      strcmp(jget_str(r, "result.resultType") ?: "", "complete") == 0 &&
	      jget_int(r, "result.ttlMs", -1) >= 0 && jget_str(r, "result.cacheScope") &&
	      jget(r, "result.capabilities.tools") && si &&
	      strcmp(jget_str(si, "name") ?: "", "detm-mcp") == 0, "discover: %s", JS(r));
	DROP(r);
	r = mproc_call(&p, 2, "tools/list", "{" ENV26 "}");
	REQUIRE(r && json_object_array_length(jget(r, "result.tools")) > 10 &&
	      strcmp(jget_str(r, "result.resultType") ?: "", "complete") == 0 &&
	      jget_int(r, "result.ttlMs", -1) >= 0 &&
	      strcmp(jget_str(r, "result.cacheScope") ?: "", "public") == 0 && server_info_meta(r),
	      "tools/list: %s", JS(r));
	DROP(r);
	r = mproc_call(&p, 3, "tools/call", "{\"name\":\"health_check\"," ENV26 "}");
	REQUIRE(r && jget(r, "result.content") && !jget(r, "result.isError") &&
	      strcmp(jget_str(r, "result.resultType") ?: "", "complete") == 0 && server_info_meta(r) &&
	      jget(r, "result.structuredContent"), "tools/call: %s", JS(r));
	DROP(r);
	r = mproc_call(&p, 4, "tools/list", "{}");
	REQUIRE(err_code(r) == -32602 && strstr(jget_str(r, "error.message") ?: "", "_meta"),
	      "no envelope: %s", JS(r));
	DROP(r);
	r = mproc_call(&p, 5, "ping", "{" ENV26 "}");
	REQUIRE(err_code(r) == -32601, "ping is gone in 2026-07-28: %s", JS(r));
	DROP(r);
	r = mproc_call(&p, 6, "initialize", "{\"protocolVersion\":\"2025-11-25\"}");
	REQUIRE(err_code(r) == -32600, "initialize after a stateless request: %s", JS(r));
	DROP(r);
	r = mproc_call(&p, 7, "tools/list", "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	               "\"2027-01-01\",\"io.modelcontextprotocol/clientCapabilities\":{}}}");
	REQUIRE(err_code(r) == -32022 && strstr(JS(jget(r, "error.data.supported")), "2026-07-28") &&
	      strcmp(jget_str(r, "error.data.requested") ?: "", "2027-01-01") == 0,
	      "unsupported version: %s", JS(r));
	DROP(r);
	r = mproc_call(&p, 8, "tools/list", "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	               "\"2026-07-28\"}}");
	REQUIRE(err_code(r) == -32602 && strstr(jget_str(r, "error.message") ?: "", "clientCapabilities"),
	      "no clientCapabilities: %s", JS(r));
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

static int
test_handshake_session_ignores_the_envelope(void)
{
	struct json_object *r = NULL;
	struct mproc p;
	int ok = 1;

	REQUIRE(open_proxy(&p, url) == 0, "spawn");
	r = mproc_init(&p, "2025-11-25");
	REQUIRE(r && strcmp(jget_str(r, "result.protocolVersion") ?: "", "2025-11-25") == 0 &&
	      jget(r, "result.capabilities.logging"), "%s", JS(r));
	DROP(r);
	r = mproc_call(&p, 2, "server/discover", "{" ENV26 "}");
	REQUIRE(err_code(r) == -32601, "discover in a handshake session: %s", JS(r));
	DROP(r);
	r = mproc_call(&p, 3, "tools/list", "{" ENV26 "}");
	REQUIRE(r && jget(r, "result.tools") && !jget(r, "result.resultType"), "%s", JS(r));
	DROP(r);
	r = mproc_call(&p, 4, "logging/setLevel", "{\"level\":\"info\"}");
	REQUIRE(r && jget(r, "result"), "setLevel: %s", JS(r));
	DROP(r);
	r = mproc_call(&p, 5, "logging/setLevel", "{\"level\":\"loud\"}");
	REQUIRE(err_code(r) == -32602, "bad level: %s", JS(r));
out:
	DROP(r);
	mproc_close(&p, 3000, NULL);
	return ok;
}

static const struct {
	const char *name;
	int (*fn)(void);
} tests[] = {
	{ "initialize negotiates 2024-11-05..2025-11-25, unknown -> 2025-11-25", test_initialize_negotiates_each_version },
	{ "ping before and after initialize; other requests need initialize", test_ping_before_and_after_initialize },
	{ "tools/list has every tool with strict schemas and annotations", test_tools_list_has_every_tool_with_strict_schemas },
	{ "older versions get no structuredContent/annotations/title", test_old_versions_get_no_newer_fields },
	{ "task tools happy path against detmd", test_task_tools_happy_path },
	{ "numbers past 64 bits keep their text; NUL and duplicate keys are -32700", test_json_is_kept_as_sent },
	{ "task tool errors are isError results with the message", test_task_tool_errors_are_tool_results },
	{ "status aliases in any case and pending -> completed through detm-mcp", test_task_status_aliases_and_lenient_items },
	{ "tools without a daemon route name the missing capability", test_unavailable_tools_name_the_capability },
	{ "protocol errors: -32700/-32600/-32601/-32602", test_protocol_errors },
	{ "oversize line is rejected and reading goes on", test_oversize_line_is_rejected_and_reading_goes_on },
	{ "batches only in 2025-03-26", test_batches_only_in_2025_03_26 },
	{ "EOF on stdin exits promptly", test_eof_exits_promptly },
	{ "daemon down: address and how to start it", test_daemon_down_says_where_and_how_to_start },
	{ "notifications/cancelled aborts the call in flight", test_cancel_aborts_the_call_in_flight },
	{ "screenshot reply becomes image content; token; version mismatch", test_screenshot_becomes_image_content },
	{ "2026-07-28 on stdio: discover, envelope, resultType, ttlMs, -32022/-32602/-32601", test_stateless_era_on_stdio },
	{ "a handshake session: no discover, the envelope ignored, logging/setLevel", test_handshake_session_ignores_the_envelope },
};

int
main(void)
{
	size_t i;

	url = getenv("DETM_URL");
	if (url == NULL || url[0] == '\0') {
		fprintf(stderr, "test-mcp: DETM_URL is not set (run tests/mcp/run.sh)\n");
		harness_count(false);
		return harness_finish();
	}
	for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		int before = harness_checks_failed;
		int ok = tests[i].fn();

		harness_result(tests[i].name, ok && harness_checks_failed == before);
	}
	return harness_finish();
}
