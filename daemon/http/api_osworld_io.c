/*
 * api_osworld_io.c - the OSWorld server's files, commands and launches,
 * per task (api_osworld.c has the rest): POST /file, /setup/upload,
 * /list_directory, /execute and /setup/execute, /setup/launch,
 * /setup/open_file.
 *
 * Paths: OSWorld's clients send absolute paths and "~/..."; here "~" is
 * the task's own folder (files.h), an absolute path must lie inside that
 * folder, a relative one is taken from it. Anything else ("..", a link, an
 * absolute path elsewhere) is refused (403, detm's error shape): a task
 * reads and writes only its own folder, through files.c's confined walks.
 *
 * Commands (/execute) run only when detmd was started with
 * --osworld-exec, through launch_exec (the task's display environment, its
 * folder as working folder, its own session, a deadline); programs
 * (/setup/launch, /setup/open_file) go through desktop_launch and its
 * allow-list like any launch.
 *
 * Does not: expand $VARIABLES, or follow a path out of the task's folder.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api.h"
#include "core/jx.h"
#include "core/proc.h"
#include "desktop/desktop.h"
#include "desktop/launch.h"
#include "desktop/takeover.h"
#include "osw_form.h"
#include "task/files.h"
#include "utf8.h"

#define OSW_ARGS 256
#define OSW_ARG_BYTES (256 * 1024)

static int
text(struct req *r, int status, const char *msg)
{
	char buf[1024];

	utf8_fix(buf, sizeof buf, msg, strlen(msg));
	return req_reply_raw(r, status, "text/html; charset=utf-8", (unsigned char *)strdup(buf),
	    strlen(buf));
}

static int
error_json(struct req *r, int status, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "error", json_object_new_string(msg));
	return req_reply(r, status, o);
}

static int
status_error(struct req *r, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string("error"));
	json_object_object_add(o, "message", json_object_new_string(msg));
	return req_reply(r, 500, o);
}

/* An OSWorld path as a path relative to the task's folder (out[cap];
 * "" is the folder itself). 0, or -1 with DERR_FORBIDDEN on field. */
static int
osw_path(const char *id, const char *in, const char *field, char *out, size_t cap, struct derr *e)
{
	char dir[PATH_MAX];
	size_t dl;

	files_dir(id, dir);
	dl = strlen(dir);
	if (strcmp(in, "~") == 0)
		in = "";
	else if (strncmp(in, "~/", 2) == 0)
		in += 2;
	else if (in[0] == '/') {
		if (strncmp(in, dir, dl) != 0 || (in[dl] != '\0' && in[dl] != '/'))
			return derr_set(e, DERR_FORBIDDEN, field, "'%.*s' is outside task %s's folder %s "
			    "(~ is that folder)", utf8_prec(in, 200), in, id, dir);
		in += dl;
		while (*in == '/')
			in++;
	}
	snprintf(out, cap, "%s", in);
	for (size_t n = strlen(out); n > 0 && out[n - 1] == '/'; n--)
		out[n - 1] = '\0';
	return 0;
}

/* ---- files ---- */

int
api_osw_file(struct req *r, struct derr *e)
{
	char in[FILES_PATH_MAX * 2], rel[FILES_PATH_MAX * 2];
	struct osw_form f;
	const char *id, *mime, *base;
	uint64_t size;
	int fd;

	if (api_known_task(r, &id, e) != 0 || osw_form_parse(r, &f, e) != 0)
		return -1;
	osw_form_text(&f, "file_path", in, sizeof in);
	osw_form_free(&f);
	if (in[0] == '\0')
		return error_json(r, 400, "file_path is required");
	if (osw_path(id, in, "file_path", rel, sizeof rel, e) != 0)
		return -1;
	if (files_open(r->app->store, id, rel, &fd, &size, &mime, e) != 0)
		return e->code == DERR_NOT_FOUND ? error_json(r, 404, "File not found") : -1;
	base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	req_header(r, "Content-Disposition", "attachment; filename=\"%s\"", base);
	return req_reply_fd(r, 200, mime, fd, 0, size);
}

int
api_osw_upload(struct req *r, struct derr *e)
{
	char in[FILES_PATH_MAX * 2], rel[FILES_PATH_MAX * 2], msg[64];
	const struct osw_field *data;
	struct osw_form f;
	json_object *out = NULL;
	const char *id;
	int rc = -1;

	if (api_known_task(r, &id, e) != 0 || osw_form_parse(r, &f, e) != 0)
		return -1;
	osw_form_text(&f, "file_path", in, sizeof in);
	data = osw_form_get(&f, "file_data");
	if (in[0] == '\0' || data == NULL)
		rc = error_json(r, 400, "file_path and file_data are required");
	else if (osw_path(id, in, "file_path", rel, sizeof rel, e) == 0 &&
	    files_put(r->app->store, id, rel, (const unsigned char *)data->val, data->len, &out, e) == 0) {
		snprintf(msg, sizeof msg, "File Uploaded: %zu bytes", data->len);
		rc = text(r, 200, msg);
	}
	json_object_put(out);
	osw_form_free(&f);
	return rc;
}

/* The node for folder prefix (rel, "" the root) from files_list's flat,
 * sorted entries: {type: directory, name, children: [...]}. */
static json_object *
tree(json_object *files, const char *prefix, const char *name)
{
	json_object *node = json_object_new_object(), *kids = json_object_new_array();
	size_t pl = strlen(prefix);

	json_object_object_add(node, "type", json_object_new_string("directory"));
	json_object_object_add(node, "name", json_object_new_string(name));
	for (size_t i = 0; i < json_object_array_length(files); i++) {
		json_object *f = json_object_array_get_idx(files, i);
		const char *p = json_object_get_string(json_object_object_get(f, "path"));
		const char *type = json_object_get_string(json_object_object_get(f, "type"));
		const char *rest = p;

		if (pl > 0 && (strncmp(p, prefix, pl) != 0 || p[pl] != '/'))
			continue;
		if (pl > 0)
			rest = p + pl + 1;
		if (strchr(rest, '/') != NULL)
			continue;       /* deeper: its folder's node has it */
		if (strcmp(type, "folder") == 0) {
			json_object_array_add(kids, tree(files, p, rest));
		} else {
			json_object *leaf = json_object_new_object();

			json_object_object_add(leaf, "type", json_object_new_string("file"));
			json_object_object_add(leaf, "name", json_object_new_string(rest));
			json_object_array_add(kids, leaf);
		}
	}
	json_object_object_add(node, "children", kids);
	return node;
}

int
api_osw_list_directory(struct req *r, struct derr *e)
{
	char rel[FILES_PATH_MAX * 2];
	const char *id, *path = NULL, *base;
	json_object *all = NULL, *files, *o;
	bool found = false;

	if (api_body_check(r, api_osw_list_directory, e) != 0 || api_known_task(r, &id, e) != 0 ||
	    jx_str(r->body, "path", false, 1, FILES_PATH_MAX * 2, &path, e) != 0)
		return -1;
	if (path == NULL)
		return error_json(r, 400, "Missing 'path' parameter");
	if (osw_path(id, path, "path", rel, sizeof rel, e) != 0 || files_list(id, &all, e) != 0)
		return -1;
	files = json_object_object_get(all, "files");
	for (size_t i = 0; i < json_object_array_length(files) && !found && rel[0] != '\0'; i++) {
		json_object *f = json_object_array_get_idx(files, i);

		found = strcmp(json_object_get_string(json_object_object_get(f, "path")), rel) == 0 &&
		    strcmp(json_object_get_string(json_object_object_get(f, "type")), "folder") == 0;
	}
	if (rel[0] != '\0' && !found) {
		json_object_put(all);
		return error_json(r, 400, "The provided path is not a directory");
	}
	base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	o = json_object_new_object();
	json_object_object_add(o, "directory_tree", tree(files, rel, rel[0] ? base : id));
	json_object_put(all);
	return req_reply(r, 200, o);
}

/* ---- commands ---- */

/* A command line split as Python's shlex.split does for the usual cases:
 * blanks separate, '...' and "..." quote, a backslash escapes. */
static int
split(const char *s, json_object *argv, struct derr *e)
{
	size_t cap = strlen(s) + 1, n = 0;
	char *w = malloc(cap), q = 0;
	bool in_word = false;

	for (;; s++) {
		if (*s == '\0' || (!q && (*s == ' ' || *s == '\t' || *s == '\n'))) {
			if (in_word)
				json_object_array_add(argv, json_object_new_string_len(w, (int)n));
			n = 0;
			in_word = false;
			if (*s == '\0')
				break;
			continue;
		}
		in_word = true;
		if (q ? *s == q : (*s == '\'' || *s == '"')) {
			q = q ? 0 : *s;
		} else if (*s == '\\' && q != '\'' && s[1] != '\0') {
			w[n++] = *++s;
		} else {
			w[n++] = *s;
		}
	}
	free(w);
	if (q)
		return derr_set(e, DERR_INVALID, "command", "the command has an unclosed quote");
	return 0;
}

/* {command, shell} as OSWorld takes it: argv as a new array of strings,
 * "~/" at an argument's start meaning the task's folder. */
static int
osw_argv(struct req *r, const char *id, json_object **out, bool *shell, struct derr *e)
{
	json_object *c = json_object_object_get(r->body, "command"), *a = json_object_new_array();
	char dir[PATH_MAX], buf[PATH_MAX * 2];

	*out = NULL;
	if (jx_bool(r->body, "shell", shell, NULL, e) != 0)
		goto bad;
	if (*shell && json_object_is_type(c, json_type_string)) {
		json_object_array_add(a, json_object_new_string("/bin/sh"));
		json_object_array_add(a, json_object_new_string("-c"));
		json_object_array_add(a, json_object_get(c));
	} else if (json_object_is_type(c, json_type_string)) {
		if (split(json_object_get_string(c), a, e) != 0)
			goto bad;
	} else if (json_object_is_type(c, json_type_array) && !*shell) {
		for (size_t i = 0; i < json_object_array_length(c); i++) {
			json_object *v = json_object_array_get_idx(c, i);

			if (!json_object_is_type(v, json_type_string)) {
				derr_set(e, DERR_INVALID, "command", "command's items must be strings");
				goto bad;
			}
			json_object_array_add(a, json_object_get(v));
		}
	}
	if (json_object_array_length(a) == 0 || json_object_array_length(a) > OSW_ARGS) {
		derr_set(e, DERR_INVALID, "command", "command must be a non-empty string (shell true) or "
		    "list of at most %d strings", OSW_ARGS);
		goto bad;
	}
	files_dir(id, dir);
	for (size_t i = *shell ? 3 : 0; i < json_object_array_length(a); i++) {
		const char *v = json_object_get_string(json_object_array_get_idx(a, i));

		if (strncmp(v, "~/", 2) == 0 || strcmp(v, "~") == 0) {
			snprintf(buf, sizeof buf, "%s%s", dir, v + 1);
			json_object_array_put_idx(a, i, json_object_new_string(buf));
		}
	}
	*out = a;
	return 0;
bad:
	json_object_put(a);
	return -1;
}

int
api_osw_execute(struct req *r, struct derr *e)
{
	struct launch_exec_req q = { .timeout_ms = LAUNCH_EXEC_TIMEOUT_MS };
	json_object *a = NULL, *out = NULL;
	const char *argv[OSW_ARGS + 1];
	int64_t tmo = 0;
	bool has_tmo = false;
	char msg[600];
	int rc = -1;

	if (api_body_check(r, api_osw_execute, e) != 0 || api_known_task(r, &q.task_id, e) != 0 ||
	    jx_int(r->body, "timeout", false, 1, 3600, &tmo, &has_tmo, e) != 0)
		return -1;
	if (!r->app->cfg->osworld_exec)
		return derr_set(e, DERR_FORBIDDEN, "command", "running commands is off on this detmd "
		    "(it runs arbitrary code); start it with --osworld-exec or ACU_OSWORLD_EXEC=1");
	if (takeover_gate(q.task_id, e) != 0 || osw_argv(r, q.task_id, &a, &q.shell, e) != 0)
		return -1;
	for (size_t i = 0; i < json_object_array_length(a); i++)
		argv[i] = json_object_get_string(json_object_array_get_idx(a, i));
	argv[json_object_array_length(a)] = NULL;
	q.argv = (char *const *)(uintptr_t)argv;
	if (has_tmo)
		q.timeout_ms = (int)tmo * 1000;
	if (launch_exec(r->app, &q, &out, e) != 0) {
		if (e->code == DERR_NOT_FOUND && e->field[0] != '\0' && strcmp(e->field, "command") == 0) {
			snprintf(msg, sizeof msg, "[Errno 2] No such file or directory: '%s'", argv[0]);
			rc = status_error(r, msg);
		}
		goto out;
	}
	if (json_object_get_boolean(json_object_object_get(out, "timed_out"))) {
		snprintf(msg, sizeof msg, "Command '%.200s' timed out after %d seconds", argv[q.shell ? 2 : 0],
		    q.timeout_ms / 1000);
		rc = status_error(r, msg);
		goto out;
	}
	json_object_object_add(out, "status", json_object_new_string("success"));
	rc = req_reply(r, 200, out);
	out = NULL;
out:
	json_object_put(out);
	json_object_put(a);
	return rc;
}

/* ---- programs ---- */

int
api_osw_launch(struct req *r, struct derr *e)
{
	struct launch_req q = { .wait_ms = 0 };
	json_object *a = NULL, *args = NULL, *out = NULL;
	char msg[600];
	bool shell = false;
	int rc = -1;

	if (api_body_check(r, api_osw_launch, e) != 0 || api_known_task(r, &q.task_id, e) != 0 ||
	    osw_argv(r, q.task_id, &a, &shell, e) != 0)
		return -1;
	args = json_object_new_array();
	for (size_t i = shell ? 0 : 1; i < json_object_array_length(a); i++)
		json_object_array_add(args, json_object_get(json_object_array_get_idx(a, i)));
	if (shell)     /* the allow-list decides whether a shell may run: "sh" must be on it */
		json_object_array_del_idx(args, 0, 1);
	q.command = shell ? "sh" : json_object_get_string(json_object_array_get_idx(a, 0));
	q.args = args;
	if (launch_start(r->app, &q, &out, e) != 0)
		goto out;
	if (shell)
		snprintf(msg, sizeof msg, "%s launched successfully",
		    json_object_get_string(json_object_array_get_idx(a, 2)));
	else {
		size_t o = 0;

		for (size_t i = 0; i < json_object_array_length(a) && o < sizeof msg - 1; i++)
			o += (size_t)snprintf(msg + o, sizeof msg - o, "%s%s", i ? " " : "",
			    json_object_get_string(json_object_array_get_idx(a, i)));
		snprintf(msg + (o < sizeof msg - 30 ? o : sizeof msg - 30), 30, " launched successfully");
	}
	rc = text(r, 200, msg);
out:
	json_object_put(out);
	json_object_put(args);
	json_object_put(a);
	return rc;
}

/* Whether title names the file (its name, or its name without extension). */
static bool
title_names(const char *title, const char *name)
{
	char stem[FILES_NAME_MAX + 1];
	const char *dot = strrchr(name, '.');

	snprintf(stem, sizeof stem, "%.*s", dot && dot != name ? (int)(dot - name) : (int)strlen(name), name);
	return title != NULL && (strstr(title, name) != NULL || strstr(title, stem) != NULL);
}

int
api_osw_open_file(struct req *r, struct derr *e)
{
	struct launch_req q = { .wait_ms = LAUNCH_WAIT_MAX_MS };
	char rel[FILES_PATH_MAX * 2], abs[PATH_MAX * 2], dir[PATH_MAX], found[PATH_MAX], msg[700];
	const char *path = NULL, *name;
	json_object *out = NULL, *win, *p;
	struct desk_out dout = { 0 };
	struct stat sb;
	int rc = -1;

	if (api_body_check(r, api_osw_open_file, e) != 0 || api_known_task(r, &q.task_id, e) != 0 ||
	    jx_str(r->body, "path", false, 0, FILES_PATH_MAX * 2, &path, e) != 0)
		return -1;
	if (path == NULL || path[0] == '\0')
		return text(r, 400, "Path not supplied!");
	files_dir(q.task_id, dir);
	bool app = strchr(path, '/') == NULL && path[0] != '~' && proc_find(path, found, sizeof found);
	if (!app) {
		if (osw_path(q.task_id, path, "path", rel, sizeof rel, e) != 0)
			return -1;
		snprintf(abs, sizeof abs, "%s/%s", dir, rel);
		if (rel[0] == '\0' || lstat(abs, &sb) != 0 || !S_ISREG(sb.st_mode)) {
			snprintf(msg, sizeof msg, "Application/file not found: %s", path);
			return text(r, 404, msg);
		}
		q.open = abs;
		name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	} else {
		q.command = path;
		name = path;
	}
	if (launch_start(r->app, &q, &out, e) != 0)
		return -1;
	win = json_object_object_get(out, "window");
	if (win == NULL || (!app && !title_names(json_object_get_string(
	    json_object_object_get(win, "title")), name))) {
		snprintf(msg, sizeof msg, "Failed to find window for %.600s within %d seconds.", name,
		    LAUNCH_WAIT_MAX_MS / 1000);
		rc = text(r, 500, msg);
		goto out;
	}
	p = json_object_new_object();
	json_object_object_add(p, "window_id", json_object_get(json_object_object_get(win, "id")));
	rc = desktop_run(r->app, q.task_id, "focus_window", p, false, &dout, e);
	json_object_put(p);
	json_object_put(dout.data);
	if (rc == 0)
		rc = text(r, 200, "File opened and window activated successfully");
out:
	json_object_put(out);
	return rc;
}
