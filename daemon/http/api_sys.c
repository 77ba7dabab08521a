/*
 * api_sys.c - /api/health, /api/version, /api/capabilities, /api/routes.
 * Capabilities are data: a feature is true only when its module is built
 * in and its routes exist, so clients (detm-mcp) can tell "not yet" from
 * "broken".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "api.h"
#include "backends/ground.h"
#include "core/launchpol.h"
#include "desktop/desktop.h"
#include "desktop/dialect.h"
#include "waits/waits.h"
#include "x11/display.h"

static const struct { const char *name; int on; } capabilities[] = {
	{ "tasks", 1 }, { "waits", 1 }, { "desktop", 1 }, { "commands", 1 }, { "gui", 1 },
	{ "recording", 1 }, { "dashboard", 1 }, { "events", 1 }, { "ocr", 1 }, { "memory", 1 },
	{ "clipboard", 1 }, { "files", 1 },
};

int
api_health(struct req *r, struct derr *e)
{
	(void)e;
	return api_health_reply(r);
}

int
api_version(struct req *r, struct derr *e)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string("detmd"));
	json_object_object_add(o, "version", json_object_new_string(DETM_VERSION));
	json_object_object_add(o, "api_version", json_object_new_int(DETM_API_VERSION));
	return req_reply(r, 200, o);
}

static json_object *desktop_manifest(const struct config *cfg);

/* The GUI agent's configuration (no calls are made). */
static json_object *
gui_manifest(const struct config *cfg)
{
	json_object *g = json_object_new_object();
	const char *b = cfg->gui_backend, *prov = "";

	if (strcmp(b, "uitars") == 0)
		prov = cfg->openrouter_api_key[0] ? "openrouter" : "ollama";
	else if (strcmp(b, "claude_cu") == 0)
		prov = "anthropic";
	else if (strcmp(b, "omniparser") == 0)
		prov = cfg->anthropic_api_key[0] ? "omniparser+claude" : "omniparser+words";
	json_object_object_add(g, "backend", json_object_new_string(b));
	json_object_object_add(g, "provider", json_object_new_string(prov));
	json_object_object_add(g, "model", json_object_new_string(ground_model(cfg)));
	json_object_object_add(g, "grounding_max_dim", json_object_new_int64(cfg->grounding_max_dim));
	json_object_object_add(g, "explicit_forms", json_object_new_string(
	    "click(x, y), double_click(x, y), right_click(x, y), middle_click(x, y), move(x, y), "
	    "drag(x1, y1, x2, y2), scroll(x, y, \"down\", 3), type(\"text\"), press(\"ctrl+s\")"));
	return g;
}

int
api_capabilities(struct req *r, struct derr *e)
{
	json_object *o = json_object_new_object(), *caps = json_object_new_object();
	size_t i;

	for (i = 0; i < ARRAY_LEN(capabilities); i++)
		json_object_object_add(caps, capabilities[i].name,
		    json_object_new_boolean(capabilities[i].on));
	json_object_object_add(o, "api_version", json_object_new_int(DETM_API_VERSION));
	json_object_object_add(o, "version", json_object_new_string(DETM_VERSION));
	json_object_object_add(o, "capabilities", caps);
	json_object_object_add(o, "desktop", desktop_manifest(r->app->cfg));
	json_object_object_add(o, "vision", waits_health());
	json_object_object_add(o, "gui", gui_manifest(r->app->cfg));
	return req_reply(r, 200, o);
}

/* What the desktop layer offers right now. */
static json_object *
desktop_manifest(const struct config *cfg)
{
	json_object *d = json_object_new_object(), *acts = json_object_new_array(), *dl, *l;
	const char *name;
	char why[300];
	size_t i;

	for (i = 0; (name = desktop_action_name(i)) != NULL; i++)
		json_object_array_add(acts, json_object_new_string(name));
	json_object_object_add(d, "actions", acts);
	dl = display_list();
	json_object_object_add(d, "xvfb", json_object_get(json_object_object_get(dl, "xvfb")));
	json_object_object_add(d, "shared_display", json_object_new_string(display_shared_name()));
	json_object_object_add(d, "task_displays_running", json_object_new_int(
	    (int)json_object_array_length(json_object_object_get(dl, "displays"))));
	json_object_object_add(d, "task_displays_max", json_object_get(json_object_object_get(dl, "max")));
	json_object_object_add(d, "screenshot_formats", json_tokener_parse("[\"jpeg\",\"png\",\"json\"]"));
	acts = json_object_new_array();
	for (i = 0; (name = dialect_name(i)) != NULL; i++)
		json_object_array_add(acts, json_object_new_string(name));
	json_object_object_add(d, "computer_dialects", acts);
	json_object_object_add(d, "window_manager", json_object_get(json_object_object_get(dl, "window_manager")));
	json_object_put(dl);
	l = json_object_new_object();   /* desktop_launch: on or off, why, what it may start */
	json_object_object_add(l, "enabled", json_object_new_boolean(launchpol_enabled(cfg, why, sizeof why)));
	json_object_object_add(l, "why", json_object_new_string(why));
	json_object_object_add(l, "allow", launchpol_list(cfg));
	json_object_object_add(d, "launch", l);
	l = json_object_new_object();   /* the OSWorld server (api_osworld*.c) */
	json_object_object_add(l, "base", json_object_new_string("/osworld/{task_id}"));
	json_object_object_add(l, "execute", json_object_new_boolean(cfg->osworld_exec));
	json_object_object_add(d, "osworld", l);
	return d;
}

/* ---- /api/device: a self-check profile ---- */

static long
meminfo_kb(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static void
check_add(json_object *checks, const char *name, bool ok, const char *detail, bool *all)
{
	json_object *c = json_object_new_object();

	json_object_object_add(c, "name", json_object_new_string(name));
	json_object_object_add(c, "ok", json_object_new_boolean(ok));
	json_object_object_add(c, "detail", json_object_new_string(detail));
	json_object_array_add(checks, c);
	if (!ok)
		*all = false;
}

/* X extensions of the shared desktop, or NULL (unreachable: *why). */
static json_object *
x_extensions(char *why, size_t why_len)
{
	struct display_lease l;
	struct derr e;
	json_object *arr;
	char **names;
	int n, i;

	if (display_lease(NULL, DISPLAY_SHARED, &l, &e) != 0) {
		snprintf(why, why_len, "%s", e.message);
		return NULL;
	}
	arr = json_object_new_array();
	names = XListExtensions(l.d, &n);
	for (i = 0; names != NULL && i < n; i++)
		json_object_array_add(arr, json_object_new_string(names[i]));
	if (names != NULL)
		XFreeExtensionList(names);
	display_unlease(&l);
	return arr;
}

int
api_device(struct req *r, struct derr *e)
{
	json_object *o = json_object_new_object(), *cpu, *mem, *disk, *x, *checks, *ext;
	char buf[512], model[256] = "", why[512] = "";
	struct statvfs vfs;
	struct utsname un;
	double load[3] = { 0, 0, 0 };
	long total = meminfo_kb("MemTotal"), avail = meminfo_kb("MemAvailable");
	bool all = true, xvfb = display_xvfb_found();
	FILE *f;

	checks = json_object_new_array();
	cpu = json_object_new_object();
	json_object_object_add(cpu, "count", json_object_new_int((int)sysconf(_SC_NPROCESSORS_ONLN)));
	if ((f = fopen("/proc/cpuinfo", "re")) != NULL) {
		while (fgets(buf, sizeof buf, f) != NULL)
			if (strncmp(buf, "model name", 10) == 0 && strchr(buf, ':') != NULL) {
				snprintf(model, sizeof model, "%s", strchr(buf, ':') + 2);
				model[strcspn(model, "\n")] = '\0';
				break;
			}
		fclose(f);
	}
	json_object_object_add(cpu, "model", json_object_new_string(model));
	if (getloadavg(load, 3) == 3) {
		json_object *la = json_object_new_array();

		for (int i = 0; i < 3; i++)
			json_object_array_add(la, json_object_new_double(load[i]));
		json_object_object_add(cpu, "load", la);
	}
	json_object_object_add(o, "cpu", cpu);

	mem = json_object_new_object();
	json_object_object_add(mem, "total_mb", json_object_new_int64(total / 1024));
	json_object_object_add(mem, "available_mb", json_object_new_int64(avail / 1024));
	json_object_object_add(o, "memory", mem);
	snprintf(buf, sizeof buf, "%ld MB available", avail / 1024);
	check_add(checks, "memory", avail < 0 || avail > 256 * 1024, buf, &all);

	disk = json_object_new_object();
	json_object_object_add(disk, "path", json_object_new_string(r->app->cfg->data_dir));
	if (statvfs(r->app->cfg->data_dir, &vfs) == 0) {
		int64_t freemb = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize / (1024 * 1024);

		json_object_object_add(disk, "free_mb", json_object_new_int64(freemb));
		json_object_object_add(disk, "total_mb", json_object_new_int64(
		    (int64_t)vfs.f_blocks * (int64_t)vfs.f_frsize / (1024 * 1024)));
		snprintf(buf, sizeof buf, "%lld MB free in the data dir", (long long)freemb);
		check_add(checks, "disk", freemb >= 100, buf, &all);
	}
	json_object_object_add(o, "disk", disk);

	x = json_object_new_object();
	json_object_object_add(x, "xvfb", json_object_new_boolean(xvfb));
	check_add(checks, "xvfb", xvfb, xvfb ? "Xvfb found: tasks can get their own displays" :
	    "Xvfb not found (install the xvfb package): no per-task displays", &all);
	json_object_object_add(x, "shared_display", json_object_new_string(display_shared_name()));
	ext = x_extensions(why, sizeof why);
	json_object_object_add(x, "shared_reachable", json_object_new_boolean(ext != NULL));
	if (ext != NULL) {
		bool shm = false, xtest = false;

		for (size_t i = 0; i < json_object_array_length(ext); i++) {
			const char *n = json_object_get_string(json_object_array_get_idx(ext, i));

			shm |= strcmp(n, "MIT-SHM") == 0;
			xtest |= strcmp(n, "XTEST") == 0;
		}
		json_object_object_add(x, "extensions", ext);
		check_add(checks, "xtest", xtest, xtest ? "XTEST present on the shared display" :
		    "XTEST missing on the shared display: no input there", &all);
		check_add(checks, "mit-shm", shm, shm ? "MIT-SHM present: fast capture" :
		    "MIT-SHM missing: capture falls back to XGetImage", &all);
	} else {
		/* Not a failure by itself: tasks can use their own displays. */
		json_object_object_add(x, "shared_error", json_object_new_string(why));
	}
	json_object_object_add(o, "x11", x);

	if (uname(&un) == 0) {
		snprintf(buf, sizeof buf, "%s %s %s", un.sysname, un.release, un.machine);
		json_object_object_add(o, "os", json_object_new_string(buf));
	}
	json_object_object_add(o, "version", json_object_new_string(DETM_VERSION));
	json_object_object_add(o, "api_version", json_object_new_int(DETM_API_VERSION));
	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(o, "uptime_s", json_object_new_int64(
	    (mono_us() - r->app->started_mono_us) / 1000000));
	json_object_object_add(o, "checks", checks);
	json_object_object_add(o, "ok", json_object_new_boolean(all));
	return req_reply(r, 200, o);
}

/* A route's body policy: "fields" (the body fields it takes; null when it
 * takes no body or a tool's arguments) and "unknown_fields" ("reject",
 * "ignore", or "tool": checked against the tool's inputSchema). */
static void
route_fields(json_object *o, const struct route *rt)
{
	json_object *f = NULL;

	if (rt->fields != NULL) {
		f = json_object_new_array();
		for (size_t i = 0; rt->fields[i] != NULL; i++)
			json_object_array_add(f, json_object_new_string(rt->fields[i]));
	}
	json_object_object_add(o, "fields", f);
	if (rt->max_body > 0)
		json_object_object_add(o, "unknown_fields", json_object_new_string(
		    (rt->flags & ROUTE_LENIENT) ? "ignore" : (rt->flags & ROUTE_TOOL) ? "tool" :
		    (rt->flags & ROUTE_RPC) ? "json-rpc" : (rt->flags & ROUTE_FOREIGN) ? "dialect" :
		    "reject"));
}

int
api_routes_list(struct req *r, struct derr *e)
{
	json_object *arr = json_object_new_array(), *o = json_object_new_object();
	size_t i;

	for (i = 0; i < api_nroutes; i++) {
		json_object *rt = json_object_new_object();

		json_object_object_add(rt, "method", json_object_new_string(api_routes[i].method));
		json_object_object_add(rt, "path", json_object_new_string(api_routes[i].pattern));
		json_object_object_add(rt, "summary", json_object_new_string(api_routes[i].summary));
		json_object_object_add(rt, "max_body", json_object_new_int64((int64_t)api_routes[i].max_body));
		route_fields(rt, &api_routes[i]);
		json_object_object_add(rt, "auth", json_object_new_string(
		    (api_routes[i].flags & ROUTE_OPEN) ? "none" : "token"));
		json_object_array_add(arr, rt);
	}
	json_object_object_add(o, "routes", arr);
	return req_reply(r, 200, o);
}
