/*
 * launch_argv.c - what desktop_launch starts, before anything starts: the
 * argv from command + args (checked: strings, no NUL, capped), the flags
 * detm adds for Chromium and Electron, the child's environment (detmd's
 * own without other sessions' addresses and without detmd's secrets, then
 * the display's env), and the task's own running display.
 *
 * Does not: check the allow-list (launchpol.c), resolve `open`
 * (launch_open.c) or start anything (launch.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/launchpol.h"
#include "launch_int.h"
#include "x11/display.h"

#define ENV_MAX 512

extern char **environ;

void
launch_argv_free(char **argv)
{
	if (argv == NULL)
		return;
	for (size_t i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

/* argv from command + args (each copied). */
int
launch_argv_command(const char *command, json_object *args, char ***out, struct derr *e)
{
	size_t n = args != NULL ? json_object_array_length(args) : 0, i;
	char **argv;

	if (n > LAUNCH_ARGS)
		return derr_set(e, DERR_INVALID, "args", "at most %d arguments", LAUNCH_ARGS);
	argv = xcalloc(n + 4, sizeof *argv);    /* + program, 2 added flags, NULL */
	argv[0] = xstrdup(command);
	for (i = 0; i < n; i++)
		argv[i + 1] = xstrdup(json_object_get_string(json_object_array_get_idx(args, i)));
	*out = argv;
	return 0;
}

/* args: an array of strings without NUL, each at most LAUNCH_ARG_BYTES. */
int
launch_args_valid(json_object *args, struct derr *e)
{
	size_t i;

	if (args == NULL)
		return 0;
	if (!json_object_is_type(args, json_type_array))
		return derr_set(e, DERR_INVALID, "args", "args must be an array of strings");
	if (json_object_array_length(args) > LAUNCH_ARGS)
		return derr_set(e, DERR_INVALID, "args", "at most %d arguments", LAUNCH_ARGS);
	for (i = 0; i < json_object_array_length(args); i++) {
		json_object *a = json_object_array_get_idx(args, i);

		if (a == NULL || !json_object_is_type(a, json_type_string))
			return derr_set(e, DERR_INVALID, "args", "args[%zu] must be a string", i);
		if ((size_t)json_object_get_string_len(a) != strlen(json_object_get_string(a)) ||
		    json_object_get_string_len(a) > LAUNCH_ARG_BYTES)
			return derr_set(e, DERR_INVALID, "args", "args[%zu] holds a NUL or is longer "
			    "than %d bytes", i, LAUNCH_ARG_BYTES);
	}
	return 0;
}

/* Chromium and Electron show a tree only with --force-renderer-
 * accessibility; as root they start only with --no-sandbox. Added (in
 * *added) unless given. argv has room for two more. */
void
launch_argv_flags(char **argv, json_object *added)
{
	static const char *const flags[] = { "--force-renderer-accessibility", "--no-sandbox" };
	size_t n = 0, i, f;

	if (strcmp(launchpol_family(argv[0]), "chromium") != 0)
		return;
	while (argv[n] != NULL)
		n++;
	for (f = 0; f < ARRAY_LEN(flags); f++) {
		bool has = false;

		if (f == 1 && geteuid() != 0)
			continue;
		for (i = 1; i < n && !has; i++)
			has = strcmp(argv[i], flags[f]) == 0;
		if (has)
			continue;
		memmove(argv + 2, argv + 1, n * sizeof *argv);  /* the NULL too */
		argv[1] = xstrdup(flags[f]);
		n++;
		json_object_array_add(added, json_object_new_string(flags[f]));
	}
}

void
launch_argv_join(char *const *argv, char *out, size_t cap)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; argv[i] != NULL && o < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? " " : "", argv[i]);
	utf8_fix_in_place(out, cap);
}

/* ---- environment ---- */

static bool
env_dropped(const char *kv, json_object *denv)
{
	static const char *const names[] = { "DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
		"AT_SPI_BUS_ADDRESS", "WAYLAND_DISPLAY", "SESSION_MANAGER", "DESKTOP_STARTUP_ID",
		"XDG_ACTIVATION_TOKEN", "GTK3_MODULES" };
	static const char *const prefixes[] = { "ACU_", "DETM_", "ANTHROPIC_", "OPENROUTER_",
		"OPENAI_", "OLLAMA_" };
	static const char *const parts[] = { "API_KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD" };
	size_t n = strcspn(kv, "="), i;
	char name[256];

	if (kv[n] != '=' || n == 0 || n >= sizeof name)
		return true;
	memcpy(name, kv, n);
	name[n] = '\0';
	if (json_object_object_get_ex(denv, name, NULL))
		return true;    /* the display's value replaces it */
	for (i = 0; i < ARRAY_LEN(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	for (i = 0; i < ARRAY_LEN(prefixes); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	for (i = 0; i < ARRAY_LEN(parts); i++)
		if (strstr(name, parts[i]) != NULL)
			return true;
	return false;
}

/* A new NULL-terminated "K=V" array (launch_argv_free). */
char **
launch_env(json_object *denv)
{
	char **env = xcalloc(ENV_MAX + 1, sizeof *env);
	size_t n = 0;

	for (size_t i = 0; environ[i] != NULL && n < ENV_MAX - 64; i++)
		if (!env_dropped(environ[i], denv))
			env[n++] = xstrdup(environ[i]);
	json_object_object_foreach(denv, k, v) {
		if (n < ENV_MAX && json_object_is_type(v, json_type_string))
			env[n++] = xasprintf("%s=%s", k, json_object_get_string(v));
	}
	env[n] = NULL;
	return env;
}

/* The task's own running display: its description (display.h; caller
 * owns), or NULL with DERR_CONFLICT. */
json_object *
launch_task_display(const char *task_id, struct derr *e)
{
	json_object *all = display_list(), *arr = json_object_object_get(all, "displays"), *d = NULL;

	for (size_t i = 0; i < json_object_array_length(arr) && d == NULL; i++) {
		json_object *x = json_object_array_get_idx(arr, i);

		if (strcmp(json_object_get_string(json_object_object_get(x, "task_id")), task_id) == 0 &&
		    strcmp(json_object_get_string(json_object_object_get(x, "state")), "running") == 0)
			d = json_object_get(x);
	}
	json_object_put(all);
	if (d == NULL)
		derr_set(e, DERR_CONFLICT, "task_id", "task %s has no display of its own running: "
		    "desktop_launch starts programs on the task's display (register the task with "
		    "display: true, or POST /api/tasks/%s/display)", task_id, task_id);
	return d;
}
