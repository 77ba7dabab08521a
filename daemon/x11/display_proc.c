/*
 * display_proc.c - the X server processes behind task displays: Xvfb
 * launched with -displayfd and waited for, its cookie file, stopping a
 * process group, and reading /proc to tell our own leftover servers from
 * others' (the window manager is display_wm.c's).
 *
 * Owns: nothing across calls; every child is spawned with signals unblocked
 * and default, in its own process group (so a stop kills its children
 * too), stdin from /dev/null and output to a log file under DATA_DIR/logs.
 * Invariant: Xvfb is ready only once it wrote its display number on the
 * displayfd pipe within READY_TIMEOUT_MS; a stop is SIGTERM, then SIGKILL
 * after STOP_GRACE_MS, then a reap.
 *
 * Does not: keep the registry, connect to a display, or pick numbers
 * (display.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/proc.h"
#include "core/util.h"
#include "display_int.h"

extern char **environ;

/* An Xauthority file with one FamilyWild entry for display n. */
int
dproc_write_auth(const char *path, int n, const unsigned char *cookie)
{
	static const char proto[] = "MIT-MAGIC-COOKIE-1";
	unsigned char buf[128];
	char num[16];
	size_t o = 0, nl;
	int fd, rc = -1;

	nl = (size_t)snprintf(num, sizeof num, "%d", n);
#define PUT16(v) do { buf[o++] = (unsigned char)((v) >> 8); buf[o++] = (unsigned char)(v); } while (0)
	PUT16(0xffff);                  /* FamilyWild: any address */
	PUT16(0);
	PUT16(nl);
	memcpy(buf + o, num, nl);
	o += nl;
	PUT16(sizeof proto - 1);
	memcpy(buf + o, proto, sizeof proto - 1);
	o += sizeof proto - 1;
	PUT16(COOKIE_LEN);
	memcpy(buf + o, cookie, COOKIE_LEN);
	o += COOKIE_LEN;
#undef PUT16
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, buf, o) == (ssize_t)o)
		rc = 0;
	close(fd);
	return rc;
}

void
dproc_random_bytes(unsigned char *p, size_t n)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	while (fd >= 0 && got < n) {
		ssize_t r = read(fd, p + got, n - got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	if (got < n)
		log_error("cannot read /dev/urandom; display cookies are weak");
	for (; got < n; got++)
		p[got] = (unsigned char)(rand() ^ (int)mono_us());
}

/* stdin /dev/null, stdout and stderr appended to logpath, pass_fd (if >= 0)
 * as fd 3; argv[0] looked up in PATH. */
static pid_t
spawn(char *const argv[], const char *logpath, int pass_fd, char *const envp[])
{
	struct proc_io io = { .log = logpath, .in_fd = -1, .out_fd = -1, .extra_fd = pass_fd,
		.search_path = true };

	return proc_spawn(argv, envp, &io);
}

/* SIGTERM to the process group, up to STOP_GRACE_MS, then SIGKILL; reaps. */
void
dproc_kill_wait(pid_t pid)
{
	int waited;

	if (pid <= 0)
		return;
	kill(-pid, SIGTERM);
	kill(pid, SIGTERM);
	for (waited = 0; waited < STOP_GRACE_MS; waited += 5) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			return;
		sleep_ms(5);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Spawns Xvfb for de->number and waits for it to report ready on the
 * displayfd pipe. 0 ready; 1 the number was taken (try another); -1 error. */
int
dproc_xvfb_launch(struct dentry *de, const struct config *cfg, const char *log_dir,
    struct derr *e)
{
	char num[16], geom[32], logpath[PATH_MAX];
	char *argv[20];
	struct pollfd pfd;
	char buf[32];
	size_t got = 0;
	int p[2], argc = 0, rc = -1, status;
	int64_t t0 = mono_us(), left;

	snprintf(num, sizeof num, ":%d", de->number);
	snprintf(geom, sizeof geom, "%dx%dx24", de->width, de->height);
	snprintf(logpath, sizeof logpath, "%s/xvfb-%d.log", log_dir, de->number);
	argv[argc++] = cfg->xvfb;
	argv[argc++] = num;
	argv[argc++] = (char *)(uintptr_t)"-displayfd";
	argv[argc++] = (char *)(uintptr_t)"3";
	argv[argc++] = (char *)(uintptr_t)"-screen";
	argv[argc++] = (char *)(uintptr_t)"0";
	argv[argc++] = geom;
	argv[argc++] = (char *)(uintptr_t)"-nolisten";
	argv[argc++] = (char *)(uintptr_t)"tcp";
	if (de->auth_path[0] != '\0') {      /* the shared one has none */
		argv[argc++] = (char *)(uintptr_t)"-auth";
		argv[argc++] = de->auth_path;
	}
	argv[argc++] = (char *)(uintptr_t)"-noreset";
	/* No blanking: Xvfb's default screen saver blanks an idle screen after
	 * 10 min, which a long smart wait or a recording would then watch. */
	argv[argc++] = (char *)(uintptr_t)"-s";
	argv[argc++] = (char *)(uintptr_t)"0";
	argv[argc++] = (char *)(uintptr_t)"-dpms";
	if (!cfg->display_glx) {
		argv[argc++] = (char *)(uintptr_t)"-extension";
		argv[argc++] = (char *)(uintptr_t)"GLX";
	}
	argv[argc] = NULL;

	if (pipe2(p, O_CLOEXEC) != 0)
		return derr_set(e, DERR_INTERNAL, NULL, "pipe: %s", strerror(errno));
	de->pid = spawn(argv, logpath, p[1], environ);
	close(p[1]);
	if (de->pid < 0) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "cannot start %s (is the xvfb package installed?)",
		    cfg->xvfb);
		goto out;
	}
	pfd.fd = p[0];
	pfd.events = POLLIN;
	for (;;) {
		ssize_t n;

		left = READY_TIMEOUT_MS - (mono_us() - t0) / 1000;
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
			if (left > 0 && errno == EINTR)
				continue;
			derr_set(e, DERR_UNAVAILABLE, NULL, "Xvfb %s did not become ready in %d ms",
			    num, READY_TIMEOUT_MS);
			dproc_kill_wait(de->pid);
			goto out;
		}
		n = read(p[0], buf + got, sizeof buf - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(buf, '\n', got) != NULL || got == sizeof buf - 1)
			break;
	}
	buf[got] = '\0';
	if (got == 0 || atoi(buf) != de->number) {
		/* EOF without a number: Xvfb exited (most likely the number was
		 * taken by a server we could not see). */
		waitpid(de->pid, &status, 0);
		log_info("Xvfb %s exited before it was ready (status %d); see %s", num, status, logpath);
		rc = 1;
		goto out;
	}
	de->start_us = mono_us() - t0;
	rc = 0;
out:
	close(p[0]);
	return rc;
}

/* Reads /proc/PID/WHAT into buf (NUL-terminated); bytes read, or -1. */
static ssize_t
proc_read(pid_t pid, const char *what, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* True if pid is an X server started with -auth auth_path. */
bool
dproc_is_our_server(pid_t pid, const char *auth_path)
{
	char buf[4096];
	ssize_t n = proc_read(pid, "cmdline", buf, sizeof buf);
	bool after_auth = false;

	if (n <= 0)
		return false;
	for (char *a = buf; a < buf + n; a += strlen(a) + 1) {
		if (after_auth)
			return strcmp(a, auth_path) == 0;
		after_auth = strcmp(a, "-auth") == 0;
	}
	return false;
}

/* Alive and not a zombie (an orphan whose new parent does not reap). */
bool
dproc_alive(pid_t pid)
{
	char buf[256], *p;

	if (proc_read(pid, "stat", buf, sizeof buf) <= 0)
		return false;
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}
