/*
 * launch.h - programs started on a task's own display (desktop_launch):
 * governed by launchpol.h, given the display's whole environment (the
 * accessibility bus and every toolkit's switches), tied to the task (its
 * own session and process group, stopped when the task ends, is
 * cancelled or its display stops), its output lines logged under the
 * launch's action, and the window it opened named in the result.
 *
 * Thread-safe. Processes live in a fixed registry (LAUNCH_MAX slots; a
 * finished one keeps its slot, for listing, until a new launch needs it).
 */
#ifndef DETM_LAUNCH_H
#define DETM_LAUNCH_H

#include <stdbool.h>

#include <json-c/json.h>

#include "core/app.h"
#include "derr.h"

#define LAUNCH_MAX 64           /* processes listed at once, all tasks */
#define LAUNCH_TASK_RUNNING 16  /* running at once per task */
#define LAUNCH_WAIT_DEFAULT_MS 5000
#define LAUNCH_WAIT_MAX_MS 20000

struct launch_req {
	const char *task_id;
	const char *command;    /* a program on the allow-list, or NULL */
	json_object *args;      /* array of strings, or NULL (borrowed) */
	const char *open;       /* or: an http(s) URL, a file path or file:// URL, a desktop id */
	int wait_ms;            /* how long to wait for its window (0: do not wait) */
};

/* Stops every launched process (daemon shutdown). */
void launch_shutdown(void);

/* Starts the program for q->task_id on the task's own running display.
 * The launch is logged as a `cli` action on the task (refused ones too,
 * as failed) whose logs get the program's output lines. *out (caller
 * owns): {ok, task_id, pid, program, command, argv, display, action_id,
 * status ("running" | "exited"), exit_code?, window ({id, title, class,
 * pid, x, y, width, height, focused} or null), waited_ms, added
 * (arguments detm added), observation}. Errors: DERR_LAUNCH_DENIED
 * (launching is off, or the allow-list refuses; field "command" or
 * "args"), DERR_INVALID (the request), DERR_NOT_FOUND (the task, a desktop
 * id, a program not installed), DERR_CONFLICT (a final task, no display
 * of its own), DERR_HUMAN_CONTROL, DERR_UNAVAILABLE (too many running,
 * the display is gone, the process could not start). */
int launch_start(struct app *app, const struct launch_req *q, json_object **out, struct derr *e)
    DETM_NODISCARD;
/* Stops every running process task_id launched (SIGTERM to its session
 * and process group, SIGKILL after 2 s) and waits for them (at most ~3 s).
 * Safe from any thread; a task with none returns at once. */
void launch_stop_task(const char *task_id);
/* task_id's launched processes, oldest first: a new array of {pid,
 * program, command, display, started_at, status ("running", "exited",
 * "stopped": ended by detm with its task or display), exit_code?,
 * signal?, window_id?, window_title?, action_id, lines_logged,
 * lines_dropped}; NULL when it has none. */
json_object *launch_list(const char *task_id);

/* ---- launch_exec.c: a command run to its end (the OSWorld server) ---- */
#define LAUNCH_EXEC_OUT (1024 * 1024)   /* bytes of stdout, and of stderr, kept */
#define LAUNCH_EXEC_TIMEOUT_MS 120000   /* OSWorld's own */
struct launch_exec_req {
	const char *task_id;
	char *const *argv;      /* NULL-terminated; argv[0] looked up in PATH; a
	                         * shell command is {"/bin/sh", "-c", text, NULL} */
	bool shell;             /* argv is the shell's (for the audit summary) */
	int timeout_ms;         /* 1..: then its session is killed */
};
/* Runs q->argv on the task's own running display (desktop_launch's
 * environment), in its own session and process group, with the task's
 * folder (files_folder) as its working folder, until it exits or its
 * deadline. Logged as a `cli` action. *out (caller owns): {output, error
 * (stderr), returncode (-N: killed by signal N; -9 on the deadline),
 * timed_out, cwd}; output and error valid UTF-8, each cut at
 * LAUNCH_EXEC_OUT. What it leaves running is killed with the task's
 * launches. Errors: DERR_NOT_FOUND (the task; a program that is not
 * installed, field "command"), DERR_CONFLICT (a final task, no display of
 * its own), DERR_UNAVAILABLE (it could not start). Whether commands may
 * run at all is the caller's decision. */
int launch_exec(struct app *app, const struct launch_exec_req *q, json_object **out,
    struct derr *e) DETM_NODISCARD;
/* Kills what task_id's commands left running (launch_stop_task calls it). */
void launch_exec_stop_task(const char *task_id);

#endif
