/*
 * launch_int.h - what the files of desktop_launch share (launch.h is the
 * contract): one launched process (struct lproc, in launch.c's registry),
 * its watcher thread (launch_watch.c), its argv and env (launch_argv.c),
 * resolving `open` into a command (launch_open.c) and finding its window
 * (launch_win.c).
 *
 * Locking: every field of a registered lproc that changes after the start
 * (state, exit_code, sig, counters, window) is read and written under
 * launch_lock(); the rest is written before the watcher starts.
 */
#ifndef DETM_LAUNCH_INT_H
#define DETM_LAUNCH_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "core/app.h"
#include "core/util.h"
#include "derr.h"

#define LAUNCH_ARGS 64          /* arguments after the program */
#define LAUNCH_ARG_BYTES 4096
#define LAUNCH_LINE_BYTES 2000  /* one logged line (longer ones are cut) */
#define LAUNCH_LINES 1000       /* lines logged per process */
#define LAUNCH_LOG_BYTES (256 * 1024)   /* bytes logged per process */
#define LAUNCH_STOP_GRACE_MS 2000

enum lstate { L_FREE, L_RUNNING, L_EXITED, L_STOPPED };

struct lproc {
	enum lstate state;
	bool watching;          /* the watcher thread runs (slot not reusable) */
	bool stop;              /* detm asked it to stop */
	char task_id[ID_LEN];
	char action_id[ID_LEN]; /* "" when the audit row could not be written */
	char program[64];       /* basename of argv[0] */
	char command[512];      /* argv joined with blanks, cut */
	char display[16];
	pid_t pid;              /* = its session id and process group id */
	int64_t started_ms, started_mono_us, ended_ms;
	int exit_code;          /* L_EXITED after a normal exit, else -1 */
	int sig;                /* the signal that ended it, else 0 */
	int fd_out, fd_err;     /* read ends of its stdout and stderr (the watcher's) */
	unsigned lines_logged, lines_dropped;
	size_t bytes_logged;
	unsigned long window;   /* its window, once found */
	char window_title[256];
};

void launch_lock(void);
void launch_unlock(void);
/* Wakes whoever waits for a process to end (launch_stop_task). */
void launch_signal(void);

/* Starts p's watcher (detached): logs its output lines under its action,
 * reaps it, records how it ended and finishes the action row. 0, or -1
 * (then nothing watches it: the caller stops it). */
int launch_watch_start(struct app *app, struct lproc *p);

/* `open` as a command: an http(s) URL opens in the first browser that is
 * allowed and installed (else xdg-open when allowed), a file path or
 * file:// URL with xdg-open, a desktop id (org.xfce.mousepad.desktop,
 * or mousepad) runs its Exec line with args in place of its %f %F %u %U.
 * *argv (NULL-terminated; launch_argv_free) is to be checked against the
 * allow-list like any command; *kind is "url", "file" or "desktop".
 * DERR_INVALID, DERR_NOT_FOUND (no such desktop file), DERR_LAUNCH_DENIED
 * (nothing allowed opens it). */
int launch_open_resolve(const struct config *cfg, const char *open, json_object *args,
    char ***argv, const char **kind, struct derr *e);
void launch_argv_free(char **argv);

/* ---- launch_argv.c ---- */
/* argv (NULL-terminated, with room for 2 added flags) from command and
 * args (already checked by launch_args_valid). 0, or -1 (too many). */
int launch_argv_command(const char *command, json_object *args, char ***out, struct derr *e);
/* args: NULL, or an array of at most LAUNCH_ARGS strings without NUL, each
 * at most LAUNCH_ARG_BYTES. 0, or -1 with DERR_INVALID on "args". */
int launch_args_valid(json_object *args, struct derr *e);
/* Chromium and Electron: --force-renderer-accessibility, and --no-sandbox
 * as root, unless given; each added one is appended to `added`. argv must
 * have room for two more. */
void launch_argv_flags(char **argv, json_object *added);
/* argv joined with blanks into out[cap], cut, valid UTF-8. */
void launch_argv_join(char *const *argv, char *out, size_t cap);
/* The child's environment (see launch.c's top comment), a new
 * NULL-terminated "K=V" array (launch_argv_free). */
char **launch_env(json_object *denv);
/* The task's own running display (display.h's description; caller owns),
 * or NULL with DERR_CONFLICT. */
json_object *launch_task_display(const char *task_id, struct derr *e);

/* Top-level window ids of the task's display now (*ids malloc'd). 0 or -1. */
int launch_win_snapshot(struct app *app, const char *task_id, unsigned long **ids, size_t *n,
    struct derr *e);
/* Waits up to wait_ms for a top-level that is not in before[0..nb): one
 * whose _NET_WM_PID is in p's session first, else any new visible one
 * (after a short grace for p's own). *win (caller owns) is its
 * description {id, title, class, pid, x, y, width, height, focused,
 * ours}, or NULL when none appeared; *waited_ms how long it looked. */
void launch_win_wait(struct app *app, struct lproc *p, const unsigned long *before, size_t nb,
    int wait_ms, json_object **win, int *waited_ms);
/* True when pid is in session sid (/proc/pid/stat). */
bool launch_in_session(pid_t pid, pid_t sid);
/* Signals every process of session sid, and its process group. */
void launch_kill_session(pid_t sid, int sig);

#endif
