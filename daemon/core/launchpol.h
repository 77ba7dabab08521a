/*
 * launchpol.h - who may start which program through desktop_launch: the
 * switch (--launch auto|on|off, weighed against the listen address) and
 * the allow-list (--launch-allow). Pure: the configuration in, verdicts
 * out; nothing is started here (desktop/launch.c starts what passes).
 *
 * The allow-list: names and absolute paths, separated by commas or blanks.
 * A bare name allows that program as found in detmd's PATH (a command
 * given with a slash must be listed with that exact path). No shell runs
 * unless one is listed by name ("sh", "bash", ...): arguments are passed
 * as they are, never through a shell. Unless a shell is listed, the
 * arguments that make an allowed program run another command are refused
 * too: a terminal's -e / -x / --command / -xrm, Chromium's and Electron's
 * *-cmd-prefix / *-launcher / --browser-subprocess-path, LibreOffice's
 * macro: and vnd.sun.star.script: URLs.
 */
#ifndef DETM_LAUNCHPOL_H
#define DETM_LAUNCHPOL_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "config.h"
#include "derr.h"

/* Whether desktop_launch is on; why[cap] says why, either way ("on:
 * detmd listens on loopback only (--launch auto)"). */
bool launchpol_enabled(const struct config *cfg, char *why, size_t cap);
/* Whether the program argv[0] with its arguments may start. 0 with the
 * program's full path in path[cap]; -1 with DERR_LAUNCH_DENIED (field
 * "command", or "args" for a refused argument) or DERR_NOT_FOUND (field
 * "command": listed but not installed). */
int launchpol_check(const struct config *cfg, char *const argv[], char *path, size_t cap,
    struct derr *e);
/* Whether name (a bare program name) is on the allow-list. */
bool launchpol_listed(const struct config *cfg, const char *name);
/* The allow-list as a new JSON array of strings. */
json_object *launchpol_list(const struct config *cfg);
/* The program family of a path or name: "chromium" (Chromium, Chrome,
 * Electron: they need --force-renderer-accessibility), "terminal",
 * "office", "shell" or "" (none of these). */
const char *launchpol_family(const char *prog);

#endif
