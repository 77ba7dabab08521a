/*
 * launch_open.c - desktop_launch's `open`: a URL, a file or a desktop id
 * turned into the command that opens it (launch_int.h), the way xdg-open
 * and gtk-launch would, but into an argv detm checks against the
 * allow-list before anything runs.
 *
 * Desktop files are read minimally (the Desktop Entry Specification 1.5):
 * the [Desktop Entry] group's Type (Application), Exec, Terminal and
 * Hidden; Exec is split by the spec's quoting rules and its field codes
 * replaced (%f %u: the first of args, %F %U: all of them, %%: %; the
 * others dropped). Found in $XDG_DATA_HOME/applications, then each
 * $XDG_DATA_DIRS/applications (defaults ~/.local/share and
 * /usr/local/share:/usr/share). An id may be the file name
 * (org.xfce.mousepad.desktop), without ".desktop", or the last part of one
 * name (mousepad, calculator: one file ending in ".mousepad.desktop", any
 * case). GLib's GDesktopAppInfo would spawn the program itself, outside
 * detm's session, pipes and allow-list; this is ~150 lines instead.
 *
 * An Exec program given by path (/usr/bin/chromium) is named by its
 * basename when that basename resolves in PATH to the same file, so the
 * allow-list's names apply to it.
 *
 * Does not: check the allow-list (launchpol.c) or start anything.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/launchpol.h"
#include "core/proc.h"
#include "launch_int.h"

#define OPEN_MAX 4096
#define EXEC_MAX 4096
#define ID_MAX 200
#define ARGV_CAP (LAUNCH_ARGS + 8)

/* Browsers an http(s) URL opens in, in this order, if allowed and installed. */
static const char *const browsers[] = {
	"chromium", "firefox-esr", "firefox", "google-chrome", "chromium-browser",
};

static char **
argv_new(void)
{
	return xcalloc(ARGV_CAP + 3, sizeof(char *));   /* + 2 flags launch.c may add, NULL */
}

static bool
argv_push(char **argv, size_t *n, const char *s, size_t len)
{
	if (*n >= ARGV_CAP)
		return false;
	argv[(*n)++] = xstrndup(s, len);
	return true;
}

/* ---- URLs and files ---- */

static bool
has_ctl(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* The first allowed and installed program of names, or NULL. */
static const char *
first_allowed(const struct config *cfg, const char *const *names, size_t n)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < n; i++)
		if (launchpol_listed(cfg, names[i]) && proc_find(names[i], path, sizeof path))
			return names[i];
	return NULL;
}

static int
open_url(const struct config *cfg, const char *url, bool web, char **argv, size_t *n,
    struct derr *e)
{
	static const char *const opener[] = { "xdg-open" };
	const char *prog = web ? first_allowed(cfg, browsers, ARRAY_LEN(browsers)) : NULL;

	if (prog == NULL)
		prog = first_allowed(cfg, opener, 1);
	if (prog == NULL)
		return derr_set(e, DERR_LAUNCH_DENIED, "open", "nothing on the launch allow-list opens "
		    "this %s (%s, installed and listed in ACU_LAUNCH_ALLOW)", web ? "URL" : "file",
		    web ? "a browser such as chromium or firefox-esr, or xdg-open" : "xdg-open");
	argv_push(argv, n, prog, strlen(prog));
	argv_push(argv, n, url, strlen(url));
	return 0;
}

/* ---- desktop files ---- */

/* Un-escapes a desktop-file value in place (\s \n \t \r \\). */
static void
unescape_value(char *s)
{
	char *o = s;

	for (; *s != '\0'; s++) {
		if (*s == '\\' && s[1] != '\0') {
			s++;
			*o++ = *s == 's' ? ' ' : *s == 'n' ? '\n' : *s == 't' ? '\t' : *s == 'r' ? '\r' : *s;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* The [Desktop Entry] keys detm needs from path. 0, or -1 (unreadable). */
static int
entry_read(const char *path, char *exec, size_t cap, bool *terminal, bool *app, bool *hidden)
{
	FILE *f = fopen(path, "re");
	char line[EXEC_MAX + 64];
	bool in_entry = false;

	*terminal = *hidden = *app = false;
	exec[0] = '\0';
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '[') {
			in_entry = strcmp(line, "[Desktop Entry]") == 0;
			continue;
		}
		if (!in_entry)
			continue;
		if (strncmp(line, "Exec=", 5) == 0) {
			size_t n = strnlen(line + 5, cap - 1);

			memcpy(exec, line + 5, n);
			exec[n] = '\0';
		}
		else if (strncmp(line, "Terminal=", 9) == 0)
			*terminal = strcmp(line + 9, "true") == 0;
		else if (strncmp(line, "Type=", 5) == 0)
			*app = strcmp(line + 5, "Application") == 0;
		else if (strncmp(line, "Hidden=", 7) == 0)
			*hidden = strcmp(line + 7, "true") == 0;
	}
	fclose(f);
	unescape_value(exec);
	return 0;
}

/* Field code c with args: pushes what it stands for. */
static void
field_code(char c, json_object *args, char **argv, size_t *n, bool *used)
{
	size_t na = args != NULL ? json_object_array_length(args) : 0;

	if (c == 'f' || c == 'u') {
		if (na > 0) {
			const char *a = json_object_get_string(json_object_array_get_idx(args, 0));

			argv_push(argv, n, a, strlen(a));
		}
		*used = true;
	} else if (c == 'F' || c == 'U') {
		for (size_t i = 0; i < na; i++) {
			const char *a = json_object_get_string(json_object_array_get_idx(args, i));

			argv_push(argv, n, a, strlen(a));
		}
		*used = true;
	}
	/* %i %c %k and the deprecated codes: dropped */
}

/* Splits Exec by the spec's rules into argv, replacing field codes. */
static int
exec_split(const char *exec, json_object *args, char **argv, size_t *n, struct derr *e)
{
	char word[EXEC_MAX];
	size_t w = 0;
	bool in_word = false, quoted = false, used = false;

	for (const char *s = exec;; s++) {
		if (*s == '\0' || (!quoted && (*s == ' ' || *s == '\t'))) {
			if (quoted)
				return derr_set(e, DERR_INVALID, "open", "the desktop file's Exec line has "
				    "an unclosed quote");
			if (in_word && !argv_push(argv, n, word, w))
				return derr_set(e, DERR_INVALID, "open", "the Exec line has too many words");
			in_word = false;
			w = 0;
			if (*s == '\0')
				break;
			continue;
		}
		in_word = true;
		if (*s == '"') {
			quoted = !quoted;
		} else if (quoted && *s == '\\' && s[1] != '\0') {
			word[w++] = *++s;
		} else if (!quoted && *s == '%' && s[1] != '\0') {
			s++;
			if (*s == '%') {
				word[w++] = '%';
			} else {
				if (w > 0 && !argv_push(argv, n, word, w))
					return derr_set(e, DERR_INVALID, "open", "the Exec line has too many words");
				w = 0;
				in_word = false;
				field_code(*s, args, argv, n, &used);
			}
		} else {
			word[w++] = *s;
		}
		if (w >= sizeof word - 2)
			return derr_set(e, DERR_INVALID, "open", "the Exec line is too long");
	}
	for (size_t i = 0; !used && args != NULL && i < json_object_array_length(args); i++) {
		const char *a = json_object_get_string(json_object_array_get_idx(args, i));

		argv_push(argv, n, a, strlen(a));       /* no field code: appended */
	}
	return *n > 0 ? 0 : derr_set(e, DERR_INVALID, "open", "the desktop file's Exec line is empty");
}

/* Whether file name `ent` is desktop id `id` (see the top comment). */
static bool
id_matches(const char *ent, const char *id)
{
	size_t le = strlen(ent), li = strlen(id);
	char want[ID_MAX + 16];

	if (strcmp(ent, id) == 0)
		return true;
	snprintf(want, sizeof want, "%s.desktop", id);
	if (strcmp(ent, want) == 0)
		return true;
	snprintf(want, sizeof want, ".%s.desktop", id);
	return le > li + 9 && strcasecmp(ent + le - strlen(want), want) == 0;
}

/* Searches dir for id; the path into out. */
static bool
find_in(const char *dir, const char *id, char *out, size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	if (d == NULL)
		return false;
	while (!found && (de = readdir(d)) != NULL)
		if (strlen(de->d_name) > 8 && strcmp(de->d_name + strlen(de->d_name) - 8, ".desktop") == 0 &&
		    id_matches(de->d_name, id)) {
			snprintf(out, cap, "%s/%s", dir, de->d_name);
			found = true;
		}
	closedir(d);
	return found;
}

static bool
find_desktop(const char *id, char *out, size_t cap)
{
	const char *home = getenv("XDG_DATA_HOME"), *dirs = getenv("XDG_DATA_DIRS");
	char dir[PATH_MAX], *copy, *tok, *save = NULL;
	bool found = false;

	if (home != NULL && home[0] != '\0')
		snprintf(dir, sizeof dir, "%s/applications", home);
	else
		snprintf(dir, sizeof dir, "%s/.local/share/applications", getenv("HOME") ? getenv("HOME") : "/");
	if (find_in(dir, id, out, cap))
		return true;
	copy = xstrdup(dirs != NULL && dirs[0] != '\0' ? dirs : "/usr/local/share:/usr/share");
	for (tok = strtok_r(copy, ":", &save); tok != NULL && !found; tok = strtok_r(NULL, ":", &save)) {
		snprintf(dir, sizeof dir, "%s/applications", tok);
		found = find_in(dir, id, out, cap);
	}
	free(copy);
	return found;
}

/* argv[0] given by path: its basename when that resolves to the same file. */
static void
program_by_name(char **argv)
{
	const char *base = strrchr(argv[0], '/');
	char found[PATH_MAX], a[PATH_MAX], b[PATH_MAX];

	if (base == NULL || !proc_find(base + 1, found, sizeof found))
		return;
	if (realpath(found, a) != NULL && realpath(argv[0], b) != NULL && strcmp(a, b) == 0) {
		char *n = xstrdup(base + 1);

		free(argv[0]);
		argv[0] = n;
	}
}

static int
open_desktop(const char *id, json_object *args, char **argv, size_t *n, struct derr *e)
{
	char path[PATH_MAX], exec[EXEC_MAX];
	bool terminal, app, hidden;

	for (const char *s = id; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '-' && *s != '_')
			return derr_set(e, DERR_INVALID, "open", "open must be an http(s) URL, a file path, "
			    "a file:// URL or a desktop id (letters, digits, . - _)");
	if (strlen(id) > ID_MAX || !find_desktop(id, path, sizeof path))
		return derr_set(e, DERR_NOT_FOUND, "open", "no desktop file for '%.*s' in the "
		    "applications folders (XDG_DATA_HOME, XDG_DATA_DIRS)", utf8_prec(id, 100), id);
	if (entry_read(path, exec, sizeof exec, &terminal, &app, &hidden) != 0 || !app || hidden ||
	    exec[0] == '\0')
		return derr_set(e, DERR_INVALID, "open", "%s is not an application that can be started "
		    "(Type, Hidden or Exec)", path);
	if (terminal)
		return derr_set(e, DERR_INVALID, "open", "%s runs in a terminal (Terminal=true): start "
		    "it with command and args instead", path);
	if (exec_split(exec, args, argv, n, e) != 0)
		return -1;
	program_by_name(argv);
	return 0;
}

int
launch_open_resolve(const struct config *cfg, const char *open, json_object *args,
    char ***argv_out, const char **kind, struct derr *e)
{
	char **argv = argv_new();
	size_t n = 0, na = args != NULL ? json_object_array_length(args) : 0;
	bool web = strncasecmp(open, "http://", 7) == 0 || strncasecmp(open, "https://", 8) == 0;
	bool file = strncasecmp(open, "file://", 7) == 0 || open[0] == '/';
	int rc;

	*argv_out = NULL;
	if (open[0] == '\0' || strlen(open) > OPEN_MAX || has_ctl(open) || open[0] == '-')
		rc = derr_set(e, DERR_INVALID, "open", "open must be 1 to %d bytes, without control "
		    "characters, and not start with -", OPEN_MAX);
	else if ((web || file) && na > 0)
		rc = derr_set(e, DERR_INVALID, "args", "args go with command or a desktop id, not with "
		    "a URL or a file");
	else if (web || file) {
		*kind = web ? "url" : "file";
		rc = open_url(cfg, open, web, argv, &n, e);
	} else if (strchr(open, ':') != NULL) {
		rc = derr_set(e, DERR_INVALID, "open", "only http, https and file URLs can be opened");
	} else {
		*kind = "desktop";
		rc = open_desktop(open, args, argv, &n, e);
	}
	if (rc != 0) {
		launch_argv_free(argv);
		return -1;
	}
	*argv_out = argv;
	return 0;
}
