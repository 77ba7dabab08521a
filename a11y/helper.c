/*
 * helper.c - detm-a11y: reads one display's accessibility tree (AT-SPI2)
 * for detmd, which never links libatspi itself.
 *
 * Why a process of its own: libatspi keeps one bus connection per process
 * (it finds the bus through AT_SPI_BUS_ADDRESS, the X root window or the
 * session bus, once). detmd starts one helper per task display
 * (daemon/x11/a11y.c), with that display's DISPLAY, XAUTHORITY and private
 * DBUS_SESSION_BUS_ADDRESS in its environment, so two displays' trees can
 * never mix.
 *
 * Protocol: one JSON object per line on stdin, one JSON object per line on
 * stdout, strictly in turn. A request is
 *   {"op":"elements","window":s?,"role":s?,"name":s?,"states":[s]?,
 *    "max":n,"depth":n,"visit":n,"bytes":n,"time_ms":n}
 * (answer: walk.c), {"op":"at_point","x","y"} or {"op":"action","role",
 * "name","x","y","width","height"} (point.c), {"op":"ping"} ({"ok":true};
 * the first call also connects to the accessibility bus), or an answer
 * {"error":"..."}. EOF on stdin ends the helper.
 *
 * Every call into an application has a timeout (atspi_set_timeout), so a
 * hung application costs a bounded wait; the walk has a time budget of its
 * own, and detmd applies its deadline to the whole answer on top and kills
 * a helper that misses it. A request line is at most LINE_MAX_BYTES.
 *
 * Does not: watch events, move the pointer, or see more than one display.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper.h"

/* LeakSanitizer's hook (asan builds only; unused otherwise): libatspi 2.46
 * leaks a g_strdup'd string (12 bytes) in its handler of a bus signal (an
 * application coming or going) that it dispatches while a walk waits for
 * a reply (seen with fast_unwind_on_malloc=0: g_strdup <- libatspi <-
 * dbus_connection_dispatch <- dbind_send_and_allow_reentry <-
 * atspi_accessible_get_name <- app_info). With the default fast unwinder
 * glib's frames end the stack at g_malloc, so the rule is on glib:
 * a leak of what glib allocated in this helper is not reported (ours in
 * json-c or malloc still are). */
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);
const char *
__lsan_default_suppressions(void)
{
	return "leak:libglib-2.0.so\n";
}

/* A leak left out is not a report: no "Suppressions used" table (a
 * report file is a failed suite: tests/run.sh). */
const char *
__asan_default_options(void)
{
	return "print_suppressions=0";
}

#define LINE_MAX_BYTES (64 * 1024)
#define CALL_TIMEOUT_MS 1500
#define STARTUP_TIMEOUT_MS 5000
#define COORD_MAX 100000

static int
get_int(json_object *req, const char *key, int def, int lo, int hi)
{
	json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(req, key, &v) || !json_object_is_type(v, json_type_int))
		return def;
	n = json_object_get_int64(v);
	return n < lo ? lo : n > hi ? hi : (int)n;
}

static const char *
get_str(json_object *req, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(req, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static json_object *
error_json(const char *msg)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "error", json_object_new_string(msg));
	return r;
}

static json_object *
elements_op(json_object *req)
{
	struct query q;

	q.window = get_str(req, "window");
	q.role = get_str(req, "role");
	q.name = get_str(req, "name");
	if (!json_object_object_get_ex(req, "states", &q.states) ||
	    !json_object_is_type(q.states, json_type_array))
		q.states = NULL;
	q.max = get_int(req, "max", 200, 1, 100000);
	q.depth = get_int(req, "depth", 40, 1, 1000);
	q.visit = get_int(req, "visit", 20000, 1, 1000000);
	q.bytes = (size_t)get_int(req, "bytes", LIM_A11Y_REPLY_BYTES - LIM_A11Y_REPLY_SLACK, 4096, 1 << 30);
	q.time_ms = get_int(req, "time_ms", LIM_A11Y_WALK_MS, 1, 600000);
	return walk_elements(&q);
}

static json_object *
answer(json_object *req)
{
	const char *op = get_str(req, "op");

	if (op == NULL)
		return error_json("unknown op");
	if (strcmp(op, "ping") == 0) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "ok", json_object_new_boolean(1));
		return r;
	}
	if (strcmp(op, "at_point") == 0)
		return point_at(get_int(req, "x", 0, -COORD_MAX, COORD_MAX), get_int(req, "y", 0, -COORD_MAX, COORD_MAX));
	if (strcmp(op, "action") == 0) {
		struct target t = { get_str(req, "role"), get_str(req, "name"),
			{ get_int(req, "x", 0, -COORD_MAX, COORD_MAX), get_int(req, "y", 0, -COORD_MAX, COORD_MAX),
			  get_int(req, "width", 0, 0, COORD_MAX), get_int(req, "height", 0, 0, COORD_MAX) } };

		if (t.role == NULL || t.name == NULL)
			return error_json("action needs role and name");
		return point_action(&t);
	}
	if (strcmp(op, "elements") == 0)
		return elements_op(req);
	return error_json("unknown op");
}

int
main(void)
{
	static char line[LINE_MAX_BYTES];

	if (atspi_init() < 0) {
		fprintf(stderr, "detm-a11y: atspi_init failed\n");
		return 1;
	}
	atspi_set_timeout(CALL_TIMEOUT_MS, STARTUP_TIMEOUT_MS);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof line, stdin) != NULL) {
		json_object *req = json_tokener_parse(line), *r;

		r = req != NULL ? answer(req) : error_json("request is not JSON");
		fputs(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN), stdout);
		fputc('\n', stdout);
		fflush(stdout);
		json_object_put(r);
		json_object_put(req);
	}
	return atspi_exit() < 0 ? 1 : 0;
}
