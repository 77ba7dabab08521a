/*
 * doctor_checks.c - the doctor's checks, one function per row of the
 * table at the end (doctor_int.h). Every check bounds its own time: SQLite
 * work has a progress deadline, HTTP probes DOC_HTTP_MS, X connects go to
 * local servers (the runner's cap covers a server that hangs).
 */
#include "doctor_int.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <X11/Xlib.h>
#include <sqlite3.h>

#include "backends/ground.h"
#include "backends/httpc.h"
#include "backends/ocr.h"
#include "core/launchpol.h"
#include "core/proc.h"
#include "core/util.h"
#include "x11/display.h"

extern const unsigned char schema_sql[];

/* ---- helpers ---- */

/* Bytes under dir (recursively, regular files). */
static long long
du(const char *dir, int depth)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	struct stat sb;
	char path[PATH_MAX];
	long long n = 0;

	if (dh == NULL)
		return 0;
	while ((de = readdir(dh)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (lstat(path, &sb) != 0)
			continue;
		if (S_ISREG(sb.st_mode))
			n += (long long)sb.st_size;
		else if (S_ISDIR(sb.st_mode) && depth < 4)
			n += du(path, depth + 1);
	}
	closedir(dh);
	return n;
}

/* ---- database ---- */

static int
on_progress(void *arg)
{
	return mono_us() > *(int64_t *)arg;     /* non-zero interrupts */
}

static int
schema_expected(void)
{
	char marker[48];
	int n = 0;

	for (;;) {
		snprintf(marker, sizeof marker, "\n-- migration %d\n", n + 1);
		if (strstr((const char *)schema_sql, marker) == NULL)
			return n;
		n++;
	}
}

static void
check_db(struct dctx *c)
{
	char *path = xasprintf("%s/data.db", c->cfg->data_dir);
	int64_t deadline = mono_us() + 8000000;
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	const char *res = NULL;
	int ver = -1, want = schema_expected();

	if (access(path, F_OK) != 0) {
		dres(c, "database", "integrity", "fail", "start detmd once: it creates the database",
		    "no database at %s", path);
		goto out;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		dres(c, "database", "integrity", "fail", "check the data dir's owner and permissions",
		    "cannot open %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(db, 3000);
	sqlite3_progress_handler(db, 1000, on_progress, &deadline);
	if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		res = (const char *)sqlite3_column_text(s, 0);
	if (res != NULL && strcmp(res, "ok") == 0)
		dres(c, "database", "integrity", "ok", NULL, "PRAGMA quick_check: ok (%s)", path);
	else if (res != NULL)
		dres(c, "database", "integrity", "fail",
		    "stop detmd, copy data.db aside, then try: sqlite3 data.db '.recover' | sqlite3 new.db",
		    "PRAGMA quick_check: %.300s", res);
	else
		dres(c, "database", "integrity", "warn", "run it again when the daemon is less busy",
		    "PRAGMA quick_check did not finish: %s", sqlite3_errmsg(db));
	sqlite3_finalize(s);
	s = NULL;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		ver = sqlite3_column_int(s, 0);
	if (ver == want)
		dres(c, "database", "schema", "ok", NULL, "schema version %d (current)", ver);
	else if (ver > want)
		dres(c, "database", "schema", "fail", "run the detmd that wrote this database (or a newer one)",
		    "schema version %d is newer than this detmd knows (%d)", ver, want);
	else
		dres(c, "database", "schema", c->in_daemon ? "fail" : "warn",
		    "start this detmd once: it migrates the database",
		    "schema version %d, this detmd's is %d", ver, want);
out:
	sqlite3_finalize(s);
	sqlite3_close(db);
	free(path);
}

/* ---- storage ---- */

static void
check_storage(struct dctx *c)
{
	char why[512], *rec = xasprintf("%s/recordings", c->cfg->data_dir);
	struct statvfs vfs;
	long long used = du(rec, 0), all = du(c->cfg->data_dir, 0);
	long long cap = (long long)c->cfg->record_max_mb * 1024 * 1024;

	if (access(c->cfg->data_dir, F_OK) != 0)
		dres(c, "storage", "data_dir", "fail", "start detmd once (it creates it) or fix --data-dir",
		    "the data dir %s does not exist", c->cfg->data_dir);
	else if (config_data_dir_exposed(c->cfg->data_dir, why, sizeof why))
		dres(c, "storage", "data_dir", "warn", "chmod 700 the data dir", "%s", why);
	else
		dres(c, "storage", "data_dir", "ok", NULL, "%s: %s, %.1f MB in use", c->cfg->data_dir, why,
		    (double)all / 1048576.0);
	if (statvfs(c->cfg->data_dir, &vfs) == 0) {
		long long freemb = (long long)vfs.f_bavail * (long long)vfs.f_frsize / 1048576;

		dres(c, "storage", "free_disk", freemb < 100 ? "fail" : freemb < 1024 ? "warn" : "ok",
		    freemb < 1024 ? "free disk space, or move the data dir (--data-dir)" : NULL,
		    "%lld MB free on the data dir's file system", freemb);
	} else
		dres(c, "storage", "free_disk", "warn", NULL, "statvfs %s: %s", c->cfg->data_dir, strerror(errno));
	if (used >= cap)
		dres(c, "storage", "recordings", "warn",
		    "delete old tasks (their recordings go with them) or raise --record-max-mb",
		    "recordings use %.1f MB of the %ld MB cap (full: new recordings stop at once)",
		    (double)used / 1048576.0, c->cfg->record_max_mb);
	else if (used >= cap / 10 * 9)
		dres(c, "storage", "recordings", "warn",
		    "delete old tasks or raise --record-max-mb", "recordings use %.1f MB of the %ld MB cap",
		    (double)used / 1048576.0, c->cfg->record_max_mb);
	else
		dres(c, "storage", "recordings", "ok", NULL, "recordings use %.1f MB of the %ld MB cap%s",
		    (double)used / 1048576.0, c->cfg->record_max_mb, c->cfg->record ? "" : " (recording is off)");
	free(rec);
}

/* ---- X ---- */

static void
check_xvfb(struct dctx *c)
{
	char path[PATH_MAX];

	if (proc_find(c->cfg->xvfb, path, sizeof path))
		dres(c, "x11", "xvfb", "ok", NULL, "%s", path);
	else
		dres(c, "x11", "xvfb", "fail", "apt-get install xvfb (or point --xvfb at the binary)",
		    "%s not found in PATH: tasks cannot get their own displays%s", c->cfg->xvfb,
		    c->cfg->shared_xvfb[0] ? " and the shared display cannot be started" : "");
}

/* The window manager started on detmd's displays (display_wm.c). */
static void
check_wm(struct dctx *c)
{
	const char *cmd = c->cfg->window_manager + strspn(c->cfg->window_manager, " \t");
	char prog[256], path[PATH_MAX];
	size_t n = strcspn(cmd, " \t");

	if (n == 0) {
		dres(c, "x11", "window_manager", "skip", "drop --window-manager none to get openbox back",
		    "none (--window-manager none): new windows open where programs put them (GTK "
		    "dialogs partly off screen) and do not get the keyboard focus");
		return;
	}
	snprintf(prog, sizeof prog, "%.*s", (int)(n < sizeof prog ? n : sizeof prog - 1), cmd);
	if (proc_find(prog, path, sizeof path))
		dres(c, "x11", "window_manager", "ok", NULL, "%s (%s) runs on every task display", prog, path);
	else
		dres(c, "x11", "window_manager", "warn", "apt-get install openbox (or --window-manager none)",
		    "%s is not installed: task displays run without a window manager, so new windows "
		    "may open off screen and keys typed for a new dialog go nowhere", prog);
}

/* desktop_launch's switch and allow-list (launchpol.h). */
static void
check_launch(struct dctx *c)
{
	char why[300];
	bool on = launchpol_enabled(c->cfg, why, sizeof why);

	dres(c, "desktop", "launch", on ? "ok" : "skip", on ? NULL :
	    "--launch on allows it (the allow-list still applies)", "desktop_launch is %s; allowed: %s",
	    why, c->cfg->launch_allow);
}

static void
check_x_shared(struct dctx *c)
{
	static const struct { const char *ext, *fail_status, *without; } exts[] = {
		{ "XTEST", "fail", "no mouse or keyboard input on this display" },
		{ "MIT-SHM", "warn", "screenshots fall back to XGetImage (slower)" },
		{ "DAMAGE", "warn", "waits and recordings poll the screen instead of being told what changed" },
	};
	Display *d = XOpenDisplay(c->cfg->display);
	int op, ev, er;
	size_t i;

	if (d == NULL) {
		dres(c, "x11", "shared_display", c->cfg->shared_xvfb[0] ? "fail" : "warn",
		    c->cfg->shared_xvfb[0] ? "see the log for why Xvfb did not start"
		    : "start one (Xvfb :99 &, or detmd --shared-xvfb 1920x1080); tasks with display:true do not need it",
		    "nothing answers on the shared display %s", c->cfg->display);
		for (i = 0; i < ARRAY_LEN(exts); i++)
			dres(c, "x11", exts[i].ext, "skip", NULL, "the shared display is not reachable");
		return;
	}
	dres(c, "x11", "shared_display", "ok", NULL, "%s answers: %dx%d, %s", c->cfg->display,
	    DisplayWidth(d, DefaultScreen(d)), DisplayHeight(d, DefaultScreen(d)), ServerVendor(d));
	for (i = 0; i < ARRAY_LEN(exts); i++) {
		if (XQueryExtension(d, exts[i].ext, &op, &ev, &er))
			dres(c, "x11", exts[i].ext, "ok", NULL, "present on %s", c->cfg->display);
		else
			dres(c, "x11", exts[i].ext, exts[i].fail_status,
			    "use an X server with this extension (Xvfb has it by default)",
			    "missing on %s: %s", c->cfg->display, exts[i].without);
	}
	XCloseDisplay(d);
}

/* Whether the daemon's registry has display ":N". */
static bool
managed(json_object *list, int number)
{
	json_object *arr = json_object_object_get(list, "displays");
	char name[16];

	snprintf(name, sizeof name, ":%d", number);
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *d = json_object_array_get_idx(arr, i);

		if (strcmp(json_object_get_string(json_object_object_get(d, "display")) ?: "", name) == 0)
			return true;
	}
	return false;
}

static void
check_stale(struct dctx *c)
{
	char *dir = xasprintf("%s/displays", c->cfg->data_dir);
	json_object *list = c->in_daemon ? display_list() : NULL;
	DIR *dh = opendir(dir);
	struct dirent *de;
	int stale = 0, orphan = 0, total = 0;
	char names[256] = "";

	while (dh != NULL && (de = readdir(dh)) != NULL) {
		char path[PATH_MAX];
		long pid = 0;
		int number;
		FILE *f;

		if (sscanf(de->d_name, "%d.pid", &number) != 1 || strstr(de->d_name, ".pid") == NULL)
			continue;
		total++;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if ((f = fopen(path, "re")) != NULL) {
			if (fscanf(f, "%ld", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		if (pid <= 1 || kill((pid_t)pid, 0) != 0)
			stale++;
		else if (list == NULL || !managed(list, number)) {
			size_t l = strlen(names);

			orphan++;
			snprintf(names + l, sizeof names - l, "%s:%d (pid %ld)", l ? ", " : "", number, pid);
		}
	}
	if (dh != NULL)
		closedir(dh);
	if (orphan > 0)
		dres(c, "x11", "stale_displays", "warn", c->in_daemon
		    ? "kill them, or restart detmd: it removes displays an earlier detmd left"
		    : "start detmd: it removes displays an earlier detmd left behind",
		    "%d Xvfb server(s) no running detmd owns: %s", orphan, names);
	else if (stale > 0)
		dres(c, "x11", "stale_displays", "warn", "restart detmd: it removes the files",
		    "%d display file(s) of dead servers in %s", stale, dir);
	else
		dres(c, "x11", "stale_displays", "ok", NULL, "%d task display(s), none left behind", total);
	json_object_put(list);
	free(dir);
}

/* ---- model backends ---- */

/* Whether a model list (ollama "models":[{name}], OpenAI "data":[{id}]) has model. */
static bool
lists(json_object *reply, const char *model, size_t *count)
{
	json_object *arr;
	size_t mlen = strlen(model);

	*count = 0;
	if (!json_object_object_get_ex(reply, "models", &arr) && !json_object_object_get_ex(reply, "data", &arr))
		return false;
	*count = json_object_array_length(arr);
	for (size_t i = 0; i < *count; i++) {
		json_object *m = json_object_array_get_idx(arr, i);
		static const char *const keys[] = { "name", "model", "id" };

		for (size_t k = 0; k < ARRAY_LEN(keys); k++) {
			const char *s = json_object_get_string(json_object_object_get(m, keys[k]));

			if (s != NULL && (strcmp(s, model) == 0 ||
			    (strncmp(s, model, mlen) == 0 && strcmp(s + mlen, ":latest") == 0)))
				return true;
		}
	}
	return false;
}

struct probe {
	const char *section, *name;
	const char *what;               /* "ollama", "openrouter", ... */
	const char *models_url;         /* GET: a model list */
	const char *key, *key_env;      /* key NULL: none needed; "" missing */
	bool anthropic;                 /* x-api-key rather than Bearer */
	const char *model;              /* NULL: only reachability */
	const char *url_flag;           /* the option that sets the URL */
	const char *key_url;            /* or NULL: GET it to verify the key (OpenRouter's
	                                 * model list is public, its /key is not) */
};

/* After a good model list: does key_url refuse the key? Only 401/403
 * count; anything else (404 from an older server) leaves the result. */
static void
verify_key(struct dctx *c, const struct probe *p, const char *const *hdr)
{
	struct httpc_req rq = { "GET", p->key_url, hdr, NULL, DOC_HTTP_MS, 64 * 1024 };
	struct httpc_resp rs;
	json_object *last = json_object_array_get_idx(c->out, json_object_array_length(c->out) - 1);
	char *hint;

	if (httpc_do(&rq, &rs) == HTTPC_OK && (rs.status == 401 || rs.status == 403)) {
		json_object_array_del_idx(c->out, json_object_array_length(c->out) - 1, 1);
		hint = xasprintf("set a valid key in %s", p->key_env);
		dres(c, p->section, p->name, "fail", hint, "%s lists model %s but refused the key in %s (HTTP %ld)",
		    p->what, p->model, p->key_env, rs.status);
		free(hint);
	} else if (last != NULL && rs.status >= 200 && rs.status <= 299) {
		char *d = xasprintf("%s, key accepted", json_object_get_string(json_object_object_get(last, "detail")));

		json_object_object_add(last, "detail", json_object_new_string(d));
		free(d);
	}
	httpc_resp_free(&rs);
}

static void
probe(struct dctx *c, const struct probe *p)
{
	const char *hdr[3] = { NULL, NULL, NULL };
	char *auth = NULL;
	struct httpc_req rq = { "GET", p->models_url, hdr, NULL, DOC_HTTP_MS, 4 * 1024 * 1024 };
	struct httpc_resp rs;
	size_t count = 0;
	int rc;

	if (p->key != NULL && p->key[0] == '\0') {
		char *hint = xasprintf("set %s (in the environment detmd starts with)", p->key_env);

		dres(c, p->section, p->name, "fail", hint, "%s needs an API key: %s is not set", p->what, p->key_env);
		free(hint);
		return;
	}
	if (p->key != NULL) {
		auth = p->anthropic ? xasprintf("x-api-key: %s", p->key) : xasprintf("Authorization: Bearer %s", p->key);
		hdr[0] = auth;
		hdr[1] = p->anthropic ? "anthropic-version: 2023-06-01" : NULL;
	}
	rc = httpc_do(&rq, &rs);
	if (rc != HTTPC_OK)
		dres(c, p->section, p->name, "fail", NULL, "%s at %s is not reachable: %s", p->what,
		    p->models_url, rs.error);
	else if (rs.status == 401 || rs.status == 403)
		dres(c, p->section, p->name, "fail", NULL, "%s refused the key in %s (HTTP %ld)", p->what,
		    p->key_env ? p->key_env : "the configuration", rs.status);
	else if (rs.status < 200 || rs.status > 299)
		dres(c, p->section, p->name, p->model ? "fail" : "ok", NULL, "%s at %s answers HTTP %ld: %.160s",
		    p->what, p->models_url, rs.status, rs.excerpt);
	else if (p->model == NULL)
		dres(c, p->section, p->name, "ok", NULL, "%s answers at %s (%lld ms)", p->what, p->models_url,
		    (long long)(rs.latency_us / 1000));
	else if (rs.json != NULL && lists(rs.json, p->model, &count)) {
		dres(c, p->section, p->name, "ok", NULL, "%s: model %s is available (%zu listed, %lld ms)%s",
		    p->what, p->model, count, (long long)(rs.latency_us / 1000), p->key ? "; key set" : "");
		if (p->key_url != NULL && p->key != NULL)
			verify_key(c, p, hdr);
	}
	else
		dres(c, p->section, p->name, "fail", NULL, "%s answers but does not list model %s (%zu models listed)",
		    p->what, p->model, count);
	/* The hint, from what failed. */
	{
		json_object *last = json_object_array_get_idx(c->out, json_object_array_length(c->out) - 1);
		const char *st = json_object_get_string(json_object_object_get(last, "status"));
		char *hint = NULL;

		if (strcmp(st, "ok") != 0) {
			if (rc != HTTPC_OK)
				hint = xasprintf("start the %s server, or fix %s (now %s)", p->what, p->url_flag, p->models_url);
			else if (rs.status == 401 || rs.status == 403)
				hint = xasprintf("set a valid key in %s", p->key_env ? p->key_env : "the configuration");
			else if (strcmp(p->what, "ollama") == 0)
				hint = xasprintf("ollama pull %s", p->model);
			else
				hint = xasprintf("check the model name and %s", p->url_flag);
			json_object_object_add(last, "hint", json_object_new_string(hint));
			free(hint);
		}
	}
	httpc_resp_free(&rs);
	free(auth);
}

static char *
base(const char *url)
{
	char *b = xstrdup(url);
	size_t n = strlen(b);

	while (n > 0 && b[n - 1] == '/')
		b[--n] = '\0';
	return b;
}

/* A backend by its kind, probed for model. */
static void
probe_kind(struct dctx *c, const char *section, const char *name, const char *kind, const char *model)
{
	const struct config *k = c->cfg;
	struct probe p = { section, name, kind, NULL, NULL, NULL, false, model, NULL, NULL };
	char *b = NULL, *url = NULL, *key_url = NULL;

	if (strcmp(kind, "ollama") == 0) {
		b = base(k->ollama_url);
		url = xasprintf("%s/api/tags", b);
		p.url_flag = "--ollama-url";
	} else if (strcmp(kind, "vllm") == 0) {
		b = base(k->vllm_url);
		url = xasprintf("%s%s/models", b, strlen(b) > 3 && strcmp(b + strlen(b) - 3, "/v1") == 0 ? "" : "/v1");
		p.url_flag = "--vllm-url";
		p.key = k->vllm_api_key[0] ? k->vllm_api_key : NULL;
		p.key_env = "ACU_VLLM_API_KEY";
	} else if (strcmp(kind, "claude") == 0 || strcmp(kind, "anthropic") == 0) {
		b = base(k->claude_url);
		url = xasprintf("%s%s/models", b, strlen(b) > 3 && strcmp(b + strlen(b) - 3, "/v1") == 0 ? "" : "/v1");
		p.what = "anthropic";
		p.url_flag = "--claude-url";
		p.key = k->anthropic_api_key;
		p.key_env = "ANTHROPIC_API_KEY";
		p.anthropic = true;
	} else {        /* openrouter */
		b = base(k->openrouter_url);
		url = xasprintf("%s/models", b);
		key_url = xasprintf("%s/key", b);
		p.key_url = key_url;
		p.url_flag = "--openrouter-url";
		p.key = k->openrouter_api_key;
		p.key_env = "OPENROUTER_API_KEY";
	}
	p.models_url = url;
	probe(c, &p);
	free(key_url);
	free(url);
	free(b);
}

static void
check_vision(struct dctx *c)
{
	const struct config *k = c->cfg;
	const char *b = k->vision_backend;

	if (strcmp(b, "passthrough") == 0 || strcmp(b, "ocr") == 0)
		dres(c, "vision", "backend", "skip", NULL, "vision backend %s: no model server to check", b);
	else if (strcmp(b, "ollama") == 0)
		probe_kind(c, "vision", "backend", "ollama", k->vision_model);
	else if (strcmp(b, "vllm") == 0)
		probe_kind(c, "vision", "backend", "vllm", k->vllm_model);
	else if (strcmp(b, "claude") == 0)
		probe_kind(c, "vision", "backend", "claude", k->claude_model);
	else if (strcmp(b, "openrouter") == 0)
		probe_kind(c, "vision", "backend", "openrouter", k->openrouter_model);
	else
		dres(c, "vision", "backend", "fail", "use ollama, vllm, claude, openrouter, passthrough or ocr",
		    "unknown vision backend '%s'", b);
}

static void
check_grounding(struct dctx *c)
{
	const struct config *k = c->cfg;
	const char *b = k->gui_backend;

	if (strcmp(b, "direct") == 0)
		dres(c, "grounding", "backend", "skip", NULL, "grounding backend direct: explicit coordinates, no model");
	else if (strcmp(b, "uitars") == 0)
		probe_kind(c, "grounding", "backend", k->openrouter_api_key[0] ? "openrouter" : "ollama", ground_model(k));
	else if (strcmp(b, "claude_cu") == 0)
		probe_kind(c, "grounding", "backend", "claude", ground_model(k));
	else if (strcmp(b, "omniparser") == 0) {
		char *bu = base(k->omniparser_url), *url = xasprintf("%s/probe/", bu);
		struct probe p = { "grounding", "backend", "omniparser", url, NULL, NULL, false, NULL,
			"--omniparser-url", NULL };

		if (k->omniparser_url[0] == '\0')
			dres(c, "grounding", "backend", "fail", "set ACU_OMNIPARSER_URL to an OmniParser server",
			    "the omniparser backend has no server URL");
		else
			probe(c, &p);
		if (k->anthropic_api_key[0])
			probe_kind(c, "grounding", "omniparser_picker", "claude", k->omniparser_picker_model);
		else
			dres(c, "grounding", "omniparser_picker", "skip", NULL,
			    "no ANTHROPIC_API_KEY: elements are picked by word match");
		free(url);
		free(bu);
	} else
		dres(c, "grounding", "backend", "fail", "use direct, uitars, claude_cu or omniparser",
		    "unknown grounding backend '%s'", b);
}

static void
check_agent(struct dctx *c)
{
	if (c->cfg->openrouter_api_key[0] == '\0')
		dres(c, "gui_agent", "supervisor", "skip", NULL,
		    "OPENROUTER_API_KEY is not set: gui_agent is unavailable (other tools do not need it)");
	else
		probe_kind(c, "gui_agent", "supervisor", "openrouter", c->cfg->openrouter_live_model);
}

/* libavformat, loaded once and kept: unloading it leaves what its
 * dependencies' constructors allocated behind (LeakSanitizer sees it), and
 * the recorder loads the same library when it records. */
static void *lav_handle;
static pthread_once_t lav_once = PTHREAD_ONCE_INIT;

static void
lav_load(void)
{
	lav_handle = dlopen("libavformat.so.59", RTLD_LAZY | RTLD_LOCAL);
}

static void
check_libs(struct dctx *c)
{
	struct derr e;
	struct ocr *o = ocr_new("eng", &e);
	void *lib;

	pthread_once(&lav_once, lav_load);
	lib = lav_handle;

	if (o != NULL)
		dres(c, "libraries", "ocr", "ok", NULL, "tesseract with English data: text conditions are read in process");
	else
		dres(c, "libraries", "ocr", "warn", "apt-get install libtesseract5 tesseract-ocr-eng",
		    "%s: text conditions go to the vision model", e.message);
	ocr_free(o);
	if (lib != NULL) {
		dres(c, "libraries", "video", "ok", NULL, "libavformat/libavcodec: recordings can be encoded");
	} else
		dres(c, "libraries", "video", c->cfg->record ? "warn" : "skip",
		    "apt-get install libavformat59 libavcodec59", "libavformat.so.59 is missing: no recordings");
}

/* ---- the log ---- */

static void
check_log(struct dctx *c)
{
	char *path = xasprintf("%s/logs/debug.log", c->cfg->data_dir), line[4352], last[4352] = "";
	char since[ISO_TIME_LEN];
	FILE *f = fopen(path, "re");
	long errors = 0, warns = 0;
	struct stat sb;

	iso_time(now_ms() - 24LL * 3600 * 1000, since);
	if (f == NULL) {
		dres(c, "log", "recent_errors", "skip", NULL, "no log at %s yet", path);
		free(path);
		return;
	}
	if (fstat(fileno(f), &sb) == 0 && sb.st_size > 1024 * 1024) {
		fseeko(f, sb.st_size - 1024 * 1024, SEEK_SET);
		if (fgets(line, sizeof line, f) == NULL)       /* skip a partial line */
			line[0] = '\0';
	}
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, since, ISO_TIME_LEN - 1) < 0)
			continue;
		if (strstr(line, " ERROR ") != NULL) {
			errors++;
			snprintf(last, sizeof last, "%s", line);
		} else if (strstr(line, " WARN ") != NULL)
			warns++;
	}
	fclose(f);
	last[strcspn(last, "\n")] = '\0';
	if (errors > 0)
		dres(c, "log", "recent_errors", "warn", "read logs/debug.log around that time (or GET /api/dump)",
		    "%ld ERROR line(s) in the last 24 h (%ld WARN); the last: %.300s", errors, warns, last);
	else
		dres(c, "log", "recent_errors", "ok", NULL, "no ERROR lines in the last 24 h (%ld WARN)", warns);
	free(path);
}

const struct dcheck doctor_checks[] = {
	{ "database", "integrity", check_db },
	{ "storage", "data_dir", check_storage },
	{ "x11", "xvfb", check_xvfb },
	{ "x11", "window_manager", check_wm },
	{ "x11", "shared_display", check_x_shared },
	{ "x11", "stale_displays", check_stale },
	{ "vision", "backend", check_vision },
	{ "grounding", "backend", check_grounding },
	{ "gui_agent", "supervisor", check_agent },
	{ "libraries", "ocr", check_libs },
	{ "wake", "openclaw", doctor_check_wake },
	{ "mcp", "openclaw_config", doctor_check_openclaw },
	{ "desktop", "launch", check_launch },
	{ "log", "recent_errors", check_log },
};
const size_t doctor_nchecks = ARRAY_LEN(doctor_checks);
