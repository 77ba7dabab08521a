/*
 * proc.h - starting a child process the way every detmd helper is started
 * (Xvfb, the window manager, dbus-daemon, detm-a11y): proc_spawn.
 */
#ifndef DETM_PROC_H
#define DETM_PROC_H

#include <stdbool.h>
#include <sys/types.h>

#include "cdefs.h"

/* What the child's fds 0..3 are. An fd given here is the caller's; it is
 * duplicated into the child and stays open (and the caller's) afterwards. */
struct proc_io {
	const char *log;        /* required: stderr, opened O_APPEND|O_CREAT, 0600 */
	int in_fd;              /* becomes fd 0; < 0: /dev/null */
	int out_fd;             /* becomes fd 1; < 0: the log (same open file as fd 2) */
	int err_fd;             /* > 0: becomes fd 2 instead of the log; 0 (unset): the log */
	int extra_fd;           /* becomes fd 3; < 0: none */
	bool search_path;       /* argv[0] looked up in PATH (posix_spawnp) */
	bool quiet_missing;     /* a program that does not exist is not logged */
	const char *cwd;        /* the child's working folder; NULL: detmd's */
	bool new_session;       /* setsid(): its own session too (no controlling
	                         * terminal; the session id is its pid) */
};

/* Starts argv (argv[0] the program) with envp, in its own process group
 * (so kill(-pid, ...) reaches its children too), with no signals blocked
 * and every signal at its default (main blocks them before starting
 * threads). Returns the child's pid (the caller reaps it), or -1 with
 * errno set when it could not start (logged as a warning naming argv[0],
 * unless errno is ENOENT and io->quiet_missing). */
pid_t proc_spawn(char *const argv[], char *const envp[], const struct proc_io *io)
    DETM_NODISCARD;

/* Whether prog (a name looked up in PATH, or a path with a slash) is an
 * executable file; its full path into out[len] either way. */
bool proc_find(const char *prog, char *out, size_t len);

#endif
