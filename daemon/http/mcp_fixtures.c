/*
 * mcp_fixtures.c - the conformance fixture tools of /mcp (see
 * mcp_fixtures.h), from one table: name, description, and the content the
 * conformance suite (@modelcontextprotocol/conformance, `server` scenarios
 * tools-call-*) expects of the reference server's tool of that name.
 *
 * They run through api_mcp.c's call path like real tools (own thread, SSE
 * stream, notifications/progress, mcp_call_reply shaping per version);
 * errors are result_error results like every tool error. Not here: tools
 * that need server-to-client requests (sampling, elicitation) or
 * notifications/message logging, which detm does not do.
 * State: the parsed input schemas, set once (pthread_once), read-only after.
 */
#include "mcp_fixtures.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"
#include "result.h"

/* 1x1 red PNG; 8 samples of silence as an 8 kHz mono 8-bit WAV. */
#define FX_PNG "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
#define FX_WAV "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="
#define FX_STEPS 3
#define FX_STEP_NS 50000000L

enum fx_kind {
	FX_TEXT, FX_IMAGE, FX_AUDIO, FX_RESOURCE, FX_MIXED, FX_ERROR, FX_PROGRESS, FX_NEEDS,
	FX_GREET, FX_SLOW, FX_PROTOCOL_ERROR,
};
#define FX_SCHEMA_NAME "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}"
#define FX_SCHEMA_SLOW "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":\"number\"}," \
	"\"label\":{\"type\":\"string\"}}}"
#define FX_SLOW_MAX_S 60

/* json-schema-2020-12's tool: its inputSchema must come back from
 * tools/list keyword for keyword (SEP-1613, SEP-2106). */
#define FX_SCHEMA_2020 "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":" \
	"\"object\",\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\"," \
	"\"properties\":{\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}}," \
	"\"properties\":{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"}," \
	"\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},\"phone\":" \
	"{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},\"allOf\":[{\"anyOf\":[{\"required\":" \
	"[\"phone\"]},{\"required\":[\"email\"]}]}],\"if\":{\"properties\":{\"contactMethod\":" \
	"{\"const\":\"phone\"}},\"required\":[\"contactMethod\"]},\"then\":{\"required\":[\"phone\"]}," \
	"\"else\":{\"required\":[\"email\"]},\"additionalProperties\":false}"

static const struct {
	const char *name, *description;
	enum fx_kind kind;
	const char *schema;         /* inputSchema, or NULL: an empty object */
	unsigned flags;             /* beside TOOL_READ_ONLY: TOOL_TASK... */
} fx_table[] = {
	{ "test_simple_text", "Conformance fixture: returns one text block.", FX_TEXT, NULL, 0 },
	{ "test_image_content", "Conformance fixture: returns a 1x1 red PNG image block.", FX_IMAGE, NULL, 0 },
	{ "test_audio_content", "Conformance fixture: returns a short audio/wav block.", FX_AUDIO, NULL, 0 },
	{ "test_embedded_resource", "Conformance fixture: returns an embedded text resource.", FX_RESOURCE, NULL, 0 },
	{ "test_multiple_content_types", "Conformance fixture: returns text, image and resource blocks.",
	  FX_MIXED, NULL, 0 },
	{ "test_error_handling", "Conformance fixture: always fails with a tool error (isError).", FX_ERROR, NULL, 0 },
	{ "test_tool_with_progress", "Conformance fixture: reports progress 0, 50, 100 of 100, then "
	  "returns text.", FX_PROGRESS, NULL, 0 },
	/* server-stateless: a request without notifications/message (detm
	 * sends none at all) */
	{ "test_logging_tool", "Conformance fixture: returns text and logs nothing to the client.",
	  FX_TEXT, NULL, 0 },
	/* server-stateless: a tool that needs the client's sampling
	 * capability; /mcp refuses it with -32021 when the request's
	 * clientCapabilities lack it (mcp_fixtures_needs). */
	{ "test_missing_capability", "Conformance fixture: needs the client's sampling capability.",
	  FX_NEEDS, NULL, 0 },
	{ "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", FX_TEXT, FX_SCHEMA_2020, 0 },
	/* the tasks-* scenarios (Tasks extension, common/mcp_tasks.h) */
	{ "greet", "Conformance fixture: returns Hello, {name}! (never a task).", FX_GREET, FX_SCHEMA_NAME, 0 },
	{ "slow_compute", "Conformance fixture: sleeps `seconds` (a task when the client has the "
	  "extension; ends early when cancelled).", FX_SLOW, FX_SCHEMA_SLOW, TOOL_TASK },
	{ "failing_job", "Conformance fixture: a task only; always a tool error.", FX_ERROR, NULL,
	  TOOL_TASK | TOOL_TASK_REQUIRED },
	{ "protocol_error_job", "Conformance fixture: a task that fails with a protocol error.",
	  FX_PROTOCOL_ERROR, NULL, TOOL_TASK },
};
#define FX_N (sizeof fx_table / sizeof fx_table[0])

static struct tool fx_tools[FX_N];
static pthread_once_t fx_once = PTHREAD_ONCE_INIT;

static void
fx_init(void)
{
	for (size_t i = 0; i < FX_N; i++) {
		fx_tools[i].name = fx_table[i].name;
		fx_tools[i].title = fx_table[i].name;
		fx_tools[i].description = fx_table[i].description;
		fx_tools[i].flags = TOOL_READ_ONLY | fx_table[i].flags;
		fx_tools[i].input_schema = json_tokener_parse(fx_table[i].schema != NULL ? fx_table[i].schema
		                                              : "{\"type\":\"object\",\"properties\":{}}");
	}
}

const struct tool *
mcp_fixtures(size_t *n)
{
	pthread_once(&fx_once, fx_init);
	*n = FX_N;
	return fx_tools;
}

bool
mcp_fixtures_has(const struct tool *t)
{
	for (size_t i = 0; i < FX_N; i++)
		if (t == &fx_tools[i])
			return true;
	return false;
}

const char *
mcp_fixtures_needs(const struct tool *t)
{
	for (size_t i = 0; i < FX_N; i++)
		if (t == &fx_tools[i])
			return fx_table[i].kind == FX_NEEDS ? "sampling" : NULL;
	return NULL;
}

static json_object *
fx_block(const char *type, const char *key, const char *val, const char *mime)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "type", json_object_new_string(type));
	json_object_object_add(o, key, json_object_new_string(val));
	if (mime != NULL)
		json_object_object_add(o, "mimeType", json_object_new_string(mime));
	return o;
}

static json_object *
fx_resource(void)
{
	json_object *o = json_object_new_object(), *r = json_object_new_object();

	json_object_object_add(r, "uri", json_object_new_string("test://embedded-resource"));
	json_object_object_add(r, "mimeType", json_object_new_string("text/plain"));
	json_object_object_add(r, "text", json_object_new_string("This is an embedded resource content."));
	json_object_object_add(o, "type", json_object_new_string("resource"));
	json_object_object_add(o, "resource", r);
	return o;
}

static void
fx_progress(mcp_fixture_progress_fn progress, void *cls)
{
	struct timespec ts = { 0, FX_STEP_NS };
	char msg[64];

	for (int i = 0; i < FX_STEPS; i++) {
		snprintf(msg, sizeof msg, "test_tool_with_progress: step %d of %d", i + 1, FX_STEPS);
		progress(cls, 50.0 * i, 100.0, msg);
		nanosleep(&ts, NULL);
	}
}

/* slow_compute: sleep seconds (at most FX_SLOW_MAX_S) in 50 ms steps;
 * false when the call was cancelled first. */
static bool
fx_slow(json_object *args)
{
	struct timespec ts = { 0, FX_STEP_NS };
	json_object *v;
	double s = 0;

	if (json_object_object_get_ex(args, "seconds", &v))
		s = json_object_get_double(v);
	if (s > FX_SLOW_MAX_S)
		s = FX_SLOW_MAX_S;
	for (double t = 0; t < s; t += FX_STEP_NS / 1e9) {
		if (cancel_requested())
			return false;
		nanosleep(&ts, NULL);
	}
	return !cancel_requested();
}

json_object *
mcp_fixtures_run(const struct tool *t, json_object *args, mcp_fixture_progress_fn progress, void *cls)
{
	char buf[300];
	const char *label;
	json_object *v, *err;

	json_object *res, *content = json_object_new_array();
	size_t i;

	for (i = 0; i < FX_N && t != &fx_tools[i]; i++)
		;
	if (i == FX_N || fx_table[i].kind == FX_ERROR) {
		json_object_put(content);
		return result_error(NULL, "This tool intentionally returns an error for testing.");
	}
	switch (fx_table[i].kind) {
	case FX_GREET:
		snprintf(buf, sizeof buf, "Hello, %.200s!", json_object_object_get_ex(args, "name", &v) ?
		         json_object_get_string(v) : "World");
		json_object_array_add(content, fx_block("text", "text", buf, NULL));
		break;
	case FX_SLOW:
		if (!fx_slow(args)) {
			json_object_put(content);
			return result_error(NULL, "slow_compute was cancelled.");
		}
		label = json_object_object_get_ex(args, "label", &v) ? json_object_get_string(v) : NULL;
		snprintf(buf, sizeof buf, "slow_compute done%s%.100s", label ? ": " : "", label ? label : "");
		json_object_array_add(content, fx_block("text", "text", buf, NULL));
		break;
	case FX_PROTOCOL_ERROR:
		json_object_put(content);
		res = json_object_new_object();     /* mcp_task_done: the task failed */
		err = json_object_new_object();
		json_object_object_add(err, "code", json_object_new_int(-32603));
		json_object_object_add(err, "message", json_object_new_string("protocol_error_job: an "
		                       "internal error, as the fixture is meant to fail"));
		json_object_object_add(res, "error", err);
		return res;
	case FX_NEEDS:
		json_object_put(content);
		return result_error(NULL, "The client declared sampling, but detm never sends "
		                    "sampling requests.");
	case FX_PROGRESS:
		fx_progress(progress, cls);
		json_object_array_add(content, fx_block("text", "text", "Progress test completed.", NULL));
		break;
	case FX_IMAGE:
		json_object_array_add(content, fx_block("image", "data", FX_PNG, "image/png"));
		break;
	case FX_AUDIO:
		json_object_array_add(content, fx_block("audio", "data", FX_WAV, "audio/wav"));
		break;
	case FX_RESOURCE:
		json_object_array_add(content, fx_resource());
		break;
	case FX_MIXED:
		json_object_array_add(content, fx_block("text", "text", "Multiple content types test:", NULL));
		json_object_array_add(content, fx_block("image", "data", FX_PNG, "image/png"));
		json_object_array_add(content, fx_resource());
		break;
	default:
		json_object_array_add(content, fx_block("text", "text", "This is a simple text response "
		                                        "for testing.", NULL));
		break;
	}
	res = json_object_new_object();
	json_object_object_add(res, "content", content);
	return res;
}
