/* xh.c - see xh.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <X11/Xutil.h>

#include "x11/xerr.h"
#include "x11/xinput.h"
#include "xh.h"

#define MAX_PIDS 64
static pid_t pids[MAX_PIDS];

static void
remember(pid_t p)
{
	for (int i = 0; i < MAX_PIDS; i++)
		if (pids[i] == 0) {
			pids[i] = p;
			return;
		}
}

static void
kill_all(void)
{
	for (int i = 0; i < MAX_PIDS; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
			pids[i] = 0;
		}
}

void
xh_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int
xh_server_start(struct xh_server *s, int width, int height)
{
	static bool atexit_done;
	char geom[32], fdarg[16], buf[16];
	int pfd[2];
	ssize_t n;
	size_t got = 0;

	if (!atexit_done) {
		atexit(kill_all);
		atexit_done = true;
	}
	memset(s, 0, sizeof *s);
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return -1;
	snprintf(geom, sizeof geom, "%dx%dx24", width, height);
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(pfd[1], 3);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		snprintf(fdarg, sizeof fdarg, "3");
		execlp("Xvfb", "Xvfb", "-displayfd", fdarg, "-screen", "0", geom,
		    "-nolisten", "tcp", "-noreset", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	remember(s->pid);
	while (got < sizeof buf - 1) {
		n = read(pfd[0], buf + got, sizeof buf - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(buf, '\n', got))
			break;
	}
	close(pfd[0]);
	buf[got] = '\0';
	if (got == 0 || buf[0] < '0' || buf[0] > '9') {
		fprintf(stderr, "    Xvfb did not report a display number\n");
		return -1;
	}
	snprintf(s->name, sizeof s->name, ":%d", atoi(buf));
	s->d = XOpenDisplay(s->name);
	if (s->d == NULL) {
		fprintf(stderr, "    cannot open %s\n", s->name);
		return -1;
	}
	xerr_watch(s->d);
	s->width = width;
	s->height = height;
	return 0;
}

void
xh_server_stop(struct xh_server *s)
{
	if (s->d) {
		xinput_forget(s->d);
		xerr_forget(s->d);
		XCloseDisplay(s->d);
		s->d = NULL;
	}
	xh_kill(s->pid);
	s->pid = 0;
}

pid_t
xh_spawn(const struct xh_server *s, char *const argv[])
{
	pid_t p = fork();

	if (p < 0)
		return -1;
	if (p == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		setenv("DISPLAY", s->name, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	remember(p);
	return p;
}

void
xh_kill(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (int i = 0; i < MAX_PIDS; i++)
		if (pids[i] == pid)
			pids[i] = 0;
}

static bool
matches(Display *d, Window w, const char *needle)
{
	char *name = NULL;
	XClassHint ch = { 0 };
	bool r = false;

	if (XFetchName(d, w, &name) && name) {
		r = strstr(name, needle) != NULL;
		XFree(name);
	}
	if (!r && XGetClassHint(d, w, &ch)) {
		r = (ch.res_name && strstr(ch.res_name, needle)) ||
		    (ch.res_class && strstr(ch.res_class, needle));
	}
	if (ch.res_name)
		XFree(ch.res_name);
	if (ch.res_class)
		XFree(ch.res_class);
	return r;
}

Window
xh_wait_window(Display *d, const char *needle, int timeout_ms)
{
	for (int waited = 0; waited <= timeout_ms; waited += 20) {
		Window root, parent, *kids = NULL, found = 0;
		unsigned int n = 0;

		xerr_begin();
		if (XQueryTree(d, DefaultRootWindow(d), &root, &parent, &kids, &n)) {
			for (unsigned int i = 0; i < n && !found; i++) {
				XWindowAttributes wa;

				if (XGetWindowAttributes(d, kids[i], &wa) &&
				    wa.map_state == IsViewable && matches(d, kids[i], needle))
					found = kids[i];
			}
			if (kids)
				XFree(kids);
		}
		XSync(d, False);
		if (found)
			return found;
		xh_sleep_ms(20);
	}
	return 0;
}

bool
xh_wait_until(bool (*pred)(void *), void *arg, int timeout_ms)
{
	for (int waited = 0; waited <= timeout_ms; waited += 20) {
		if (pred(arg))
			return true;
		xh_sleep_ms(20);
	}
	return false;
}
