/*
 * launchpol.c - desktop_launch's governance (see launchpol.h): the switch
 * and the allow-list, read from the configuration at each call (a few
 * dozen bytes to split; nothing cached, nothing to lock).
 *
 * Invariants: a program is allowed only when the list names it (a bare
 * name, matched against a bare command that resolves in PATH; or the
 * exact absolute path); a program that does not resolve to an executable
 * file is refused before anything starts; the argument rules of the
 * families below apply unless a shell is listed.
 *
 * Does not: start, find windows or log (desktop/launch.c), or resolve URLs
 * and desktop files (desktop/launch_open.c).
 */
#include "launchpol.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proc.h"
#include "util.h"

#define LIST_SEP ", \t\n"

static const char *const shells[] = {
	"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "csh", "tcsh", "fish", "rbash", "busybox",
};

/* Families: a name is in one when it equals an entry or starts with an
 * entry ending in '*'. */
static const struct {
	const char *family;
	const char *const names[16];
	const char *const denied[12];   /* argument prefixes refused unless a shell is listed */
} families[] = {
	{ "chromium", { "chromium", "chromium-browser", "chrome", "google-chrome*", "electron*", "code",
	  "brave-browser", NULL },
	  { "--renderer-cmd-prefix", "--utility-cmd-prefix", "--gpu-launcher", "--browser-subprocess-path",
	    "--plugin-launcher", "--ppapi-plugin-launcher", "--gpu-cmd-prefix", "--nacl-loader-cmd-prefix",
	    "--zygote-cmd-prefix", NULL } },
	{ "terminal", { "xterm", "uxterm", "x-terminal-emulator", "gnome-terminal*", "xfce4-terminal",
	  "konsole", "lxterminal", "mate-terminal", "terminator", "tilix", "kitty", "alacritty",
	  "urxvt", "rxvt*", "st", NULL },
	  { "-e", "-x", "--command", "--execute", "-xrm", "--", NULL } },
	{ "office", { "soffice", "libreoffice", "localc", "lowriter", "loimpress", "lodraw", NULL },
	  { "macro:", "vnd.sun.star.script:", NULL } },
};

static const char *
base_of(const char *p)
{
	const char *s = strrchr(p, '/');

	return s != NULL ? s + 1 : p;
}

static bool
is_shell(const char *name)
{
	for (size_t i = 0; i < ARRAY_LEN(shells); i++)
		if (strcmp(name, shells[i]) == 0)
			return true;
	return false;
}

static bool
name_in(const char *name, const char *const *names)
{
	for (size_t i = 0; names[i] != NULL; i++) {
		size_t n = strlen(names[i]);

		if (n > 0 && names[i][n - 1] == '*' ? strncmp(name, names[i], n - 1) == 0
		    : strcmp(name, names[i]) == 0)
			return true;
	}
	return false;
}

const char *
launchpol_family(const char *prog)
{
	const char *b = base_of(prog);

	if (is_shell(b))
		return "shell";
	for (size_t i = 0; i < ARRAY_LEN(families); i++)
		if (name_in(b, families[i].names))
			return families[i].family;
	return "";
}

/* Calls fn on each entry of the list until it returns true. */
static bool
list_any(const struct config *cfg, bool (*fn)(const char *entry, const void *arg), const void *arg)
{
	char *copy = xstrdup(cfg->launch_allow), *tok, *save = NULL;
	bool hit = false;

	for (tok = strtok_r(copy, LIST_SEP, &save); tok != NULL && !hit;
	    tok = strtok_r(NULL, LIST_SEP, &save))
		hit = fn(tok, arg);
	free(copy);
	return hit;
}

static bool
entry_is(const char *entry, const void *arg)
{
	return strcmp(entry, (const char *)arg) == 0;
}

static bool
entry_shell(const char *entry, const void *arg)
{
	(void)arg;
	return is_shell(base_of(entry));
}

bool
launchpol_listed(const struct config *cfg, const char *name)
{
	return list_any(cfg, entry_is, name);
}

json_object *
launchpol_list(const struct config *cfg)
{
	json_object *a = json_object_new_array();
	char *copy = xstrdup(cfg->launch_allow), *tok, *save = NULL;

	for (tok = strtok_r(copy, LIST_SEP, &save); tok != NULL; tok = strtok_r(NULL, LIST_SEP, &save))
		json_object_array_add(a, json_object_new_string(tok));
	free(copy);
	return a;
}

/* 127.0.0.0/8, ::1 or localhost. */
static bool
loopback(const char *addr)
{
	unsigned char b[16];

	if (strcasecmp(addr, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, addr, b) == 1)
		return b[0] == 127;
	if (inet_pton(AF_INET6, addr, b) == 1) {
		static const unsigned char one[16] = { [15] = 1 };

		return memcmp(b, one, sizeof one) == 0;
	}
	return false;
}

bool
launchpol_enabled(const struct config *cfg, char *why, size_t cap)
{
	if (strcmp(cfg->launch, "on") == 0) {
		snprintf(why, cap, "on (--launch on)");
		return true;
	}
	if (strcmp(cfg->launch, "off") == 0) {
		snprintf(why, cap, "off (--launch off)");
		return false;
	}
	if (loopback(cfg->listen)) {
		snprintf(why, cap, "on: detmd listens on loopback only (--launch auto)");
		return true;
	}
	snprintf(why, cap, "off: detmd listens on %s, beyond loopback, and launching runs programs "
	    "as detmd's user (start detmd with --launch on to allow it)", cfg->listen);
	return false;
}

/* The arguments rules of argv[0]'s family (none when a shell is listed). */
static int
args_check(const struct config *cfg, char *const argv[], struct derr *e)
{
	const char *b = base_of(argv[0]);

	if (list_any(cfg, entry_shell, NULL))
		return 0;
	for (size_t f = 0; f < ARRAY_LEN(families); f++) {
		if (!name_in(b, families[f].names))
			continue;
		for (size_t i = 1; argv[i] != NULL; i++)
			for (size_t k = 0; families[f].denied[k] != NULL; k++) {
				const char *d = families[f].denied[k];
				size_t n = strlen(d);
				bool hit = d[0] == '-' && d[1] != '-' ? strcmp(argv[i], d) == 0 :
				    strncmp(argv[i], d, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '=' ||
				    d[n - 1] == ':');

				if (hit)
					return derr_set(e, DERR_LAUNCH_DENIED, "args",
					    "argument %zu '%.*s' would make %s run another command: refused "
					    "because no shell is on the allow-list (ACU_LAUNCH_ALLOW)", i - 1,
					    utf8_prec(argv[i], 64), argv[i], b);
			}
	}
	return 0;
}

int
launchpol_check(const struct config *cfg, char *const argv[], char *path, size_t cap,
    struct derr *e)
{
	const char *cmd = argv[0];

	path[0] = '\0';
	if (cmd == NULL || cmd[0] == '\0')
		return derr_set(e, DERR_INVALID, "command", "command must not be empty");
	/* A bare name matches a bare entry; a path only the same path. */
	if (!launchpol_listed(cfg, cmd)) {
		return derr_set(e, DERR_LAUNCH_DENIED, "command",
		    "'%.*s' is not on the launch allow-list (ACU_LAUNCH_ALLOW / --launch-allow): %.*s%s",
		    utf8_prec(cmd, 128), cmd, utf8_prec(cfg->launch_allow, 300), cfg->launch_allow,
		    is_shell(base_of(cmd)) ? " (a shell runs only when the list names it)" : "");
	}
	if (!proc_find(cmd, path, cap))
		return derr_set(e, DERR_NOT_FOUND, "command",
		    "'%.*s' is on the allow-list but not installed (not an executable in detmd's PATH)",
		    utf8_prec(cmd, 128), cmd);
	return args_check(cfg, argv, e);
}
