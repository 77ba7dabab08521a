/*
 * proc.c - proc_spawn: the one place detmd starts a helper process.
 *
 * Owns: nothing; each call builds and frees its own posix_spawn file
 * actions and attributes. Invariant: every child starts in its own process
 * group with an empty signal mask and every signal at its default, fd 2
 * appended to a log file, fd 0 never inherited by accident (a given fd or
 * /dev/null).
 *
 * proc_find: a program looked up in PATH as execvp would (for checks and
 * for the doctor, before anything is started).
 *
 * Does not: wait for, reap or stop children (the callers do: a11y.c,
 * display_proc.c, wake.c, launch.c), or close the caller's fds.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"

pid_t
proc_spawn(char *const argv[], char *const envp[], const struct proc_io *io)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	pid_t pid = -1;
	int err;

	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	if (io->err_fd > 0)
		posix_spawn_file_actions_adddup2(&fa, io->err_fd, 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, io->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (io->in_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, io->in_fd, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (io->out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, io->out_fd, 1);
	else
		posix_spawn_file_actions_adddup2(&fa, 2, 1);
	if (io->extra_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, io->extra_fd, 3);
	if (io->cwd != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, io->cwd);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setpgroup(&at, 0);
	/* A new session makes a new process group as well (pgid = sid = pid). */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
	    (io->new_session ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP));
	if (io->search_path)
		err = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp);
	else
		err = posix_spawn(&pid, argv[0], &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (err != 0) {
		if (err != ENOENT || !io->quiet_missing)
			log_warn("cannot start %s: %s", argv[0], strerror(err));
		errno = err;
		return -1;
	}
	return pid;
}

bool
proc_find(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;

	if (prog == NULL || prog[0] == '\0') {
		if (len > 0)
			out[0] = '\0';
		return false;
	}
	if (strchr(prog, '/') != NULL) {
		snprintf(out, len, "%s", prog);
		return access(prog, X_OK) == 0;
	}
	for (p = path ? path : "/usr/bin:/bin"; *p != '\0'; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		snprintf(out, len, "%.*s/%s", (int)(end - p), p, prog);
		if (end > p && access(out, X_OK) == 0)
			return true;
	}
	snprintf(out, len, "%s", prog);
	return false;
}
