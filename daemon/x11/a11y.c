/*
 * a11y.c - per-display accessibility buses and their tree helpers (see
 * a11y.h for the cost model).
 *
 * Owns: a list of struct abus (one per task display with a bus, guarded by
 * list_lock), each bus's dbus-daemon (own process group: the bus launcher,
 * the accessibility bus and the registry it activates stay in that group,
 * so one kill of the group stops them all), each display's detm-a11y
 * helper (guarded by the bus's own mutex: one request at a time), and the
 * files under DATA_DIR/displays/N.a11y (session.conf, services/, run/ as
 * the launcher's XDG_RUNTIME_DIR, bus.pid).
 *
 * Life: a11y_start adds a bus (its dbus-daemon has printed its address);
 * a11y_stop unlinks it, kills the helper (a blocked reader sees EOF), takes
 * the bus mutex (after any request in flight), kills the process group and
 * drops the list's reference; the last reference frees. A request that
 * took its reference before the unlink finds `stopped` set under the
 * mutex and starts no new helper. The helper is
 * started on first use and restarted after it died or missed a deadline.
 *
 * Lock order: list_lock, then nothing; a bus mutex, then nothing.
 *
 * Does not: talk AT-SPI itself (the helper does; detmd never links
 * libatspi), know tasks, or start buses for the shared desktop.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "a11y.h"
#include "a11y_reply.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/util.h"
#include "lim.h"

#define ADDR_TIMEOUT_MS 5000
#define STOP_GRACE_MS 2000
#define SOCK_DIR_MAX 80         /* a unix socket path has 108 bytes */

extern char **environ;

struct abus {
	int refs;               /* under list_lock */
	int number;
	char name[16];
	char dir[PATH_MAX];     /* DATA_DIR/displays/N.a11y */
	char logs[PATH_MAX];    /* DATA_DIR/logs */
	char xauth[PATH_MAX];
	char run[PATH_MAX];     /* the launcher's XDG_RUNTIME_DIR, "" if the path is too long */
	char addr[512];         /* the session bus */
	pid_t bus_pid;
	pthread_mutex_t mu;     /* the helper: */
	_Atomic int helper_pid; /* 0 when not running; written under mu, read by a11y_stop */
	int to_helper, from_helper;
	bool stopped;           /* under mu: a11y_stop ran; no new helper */
	struct abus *next;
};

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct abus *buses;

static const char *const launcher_paths[] = {
	"/usr/libexec/at-spi-bus-launcher",
	"/usr/lib/at-spi2-core/at-spi-bus-launcher",
	"/usr/lib/x86_64-linux-gnu/at-spi-bus-launcher",
};

/* ---- processes and files ---- */

/* SIGTERM to pid's process group, up to STOP_GRACE_MS for pid to exit,
 * then SIGKILL to the group; reaps pid. The group's other members (the
 * activated services, children of init once the bus is gone) get the same
 * signals. */
static void
group_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(-pid, SIGTERM);
	for (int waited = 0; waited < STOP_GRACE_MS; waited += 5) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			break;
		sleep_ms(5);
	}
	kill(-pid, SIGKILL);            /* stragglers of the group; ESRCH when none */
	waitpid(pid, NULL, WNOHANG);
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	(void)remove(path);     /* best effort: what is left is logged by nobody */
	return 0;
}

static void
rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static int
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (f == NULL)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* A bus a crashed detmd left for this number: its pid file names a
 * dbus-daemon whose command line has our config path; kill its group. */
static void
stale_remove(const char *dir)
{
	char path[PATH_MAX + 16], cmd[PATH_MAX + 64], conf[PATH_MAX + 16];
	long pid = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "%s/bus.pid", dir);
	f = fopen(path, "re");
	if (f != NULL) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	if (pid > 1) {
		snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
		snprintf(conf, sizeof conf, "%s/session.conf", dir);
		f = fopen(path, "re");
		n = f != NULL ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
		if (f != NULL)
			fclose(f);
		for (size_t i = 0; i < n; i++)
			if (cmd[i] == '\0')
				cmd[i] = ' ';
		cmd[n] = '\0';
		if (strstr(cmd, "dbus-daemon") != NULL && strstr(cmd, conf) != NULL) {
			log_info("removing the accessibility bus (pid %ld) a previous detmd left in %s", pid, dir);
			kill(-(pid_t)pid, SIGKILL);
			kill((pid_t)pid, SIGKILL);
		}
	}
	rm_tree(dir);
}

void
a11y_cleanup(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *ent;

	if (dh == NULL)
		return;
	while ((ent = readdir(dh)) != NULL) {
		char path[PATH_MAX + 300];
		int n, end = 0;

		if (sscanf(ent->d_name, "%d.a11y%n", &n, &end) != 1 || ent->d_name[end] != '\0' || end == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
		stale_remove(path);
	}
	closedir(dh);
}

static const char *
launcher_path(void)
{
	for (size_t i = 0; i < sizeof launcher_paths / sizeof launcher_paths[0]; i++)
		if (access(launcher_paths[i], X_OK) == 0)
			return launcher_paths[i];
	return NULL;
}

/* session.conf and services/org.a11y.Bus.service under b->dir. */
static int
write_config(const struct abus *b, const char *launcher)
{
	char path[PATH_MAX + 64], *text;
	int rc;

	snprintf(path, sizeof path, "%s/services", b->dir);
	if (dir_create_all(path, 0700) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/services/org.a11y.Bus.service", b->dir);
	text = xasprintf("[D-BUS Service]\nName=org.a11y.Bus\nExec=%s\n", launcher);
	rc = write_file(path, text);
	free(text);
	if (rc != 0)
		return -1;
	snprintf(path, sizeof path, "%s/session.conf", b->dir);
	text = xasprintf("<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
	    " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
	    "<!-- detm: the private session bus of display %s (only org.a11y.Bus is activatable) -->\n"
	    "<busconfig>\n  <type>session</type>\n  <listen>unix:dir=%s</listen>\n"
	    "  <auth>EXTERNAL</auth>\n  <servicedir>%s/services</servicedir>\n"
	    "  <policy context=\"default\">\n    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
	    "    <allow eavesdrop=\"true\"/>\n    <allow own=\"*\"/>\n  </policy>\n</busconfig>\n",
	    b->name, strlen(b->dir) <= SOCK_DIR_MAX ? b->dir : "/tmp", b->dir);
	rc = write_file(path, text);
	free(text);
	return rc;
}

/* environ without the variables a display sets, plus extra (NULL-ended).
 * The array is malloc'd; its strings are borrowed or come from extra. */
static char **
env_for(char *const extra[])
{
	static const char *const drop[] = { "DISPLAY=", "XAUTHORITY=", "DBUS_SESSION_BUS_ADDRESS=",
		"AT_SPI_BUS_ADDRESS=", "XDG_RUNTIME_DIR=", "DBUS_STARTER_ADDRESS=", "DBUS_STARTER_BUS_TYPE=" };
	size_t n = 0, k = 0, i, j;
	char **env;

	while (environ[n] != NULL)
		n++;
	while (extra[k] != NULL)
		k++;
	env = xcalloc(n + k + 1, sizeof *env);
	for (n = 0, i = 0; environ[i] != NULL; i++) {
		bool keep = true;

		for (j = 0; j < sizeof drop / sizeof drop[0]; j++)
			keep = keep && strncmp(environ[i], drop[j], strlen(drop[j])) != 0;
		if (keep)
			env[n++] = environ[i];
	}
	for (j = 0; j < k; j++)
		env[n++] = extra[j];
	return env;
}

/* Reads one line from fd into buf (cap bytes, NUL-ended, newline dropped)
 * before deadline_ms (monotonic ms). Returns its length, -1 on EOF/error,
 * -2 on timeout, -3 when the line is longer than cap. */
static long
read_line(int fd, char **buf, size_t *cap, size_t limit, int64_t deadline_ms)
{
	size_t len = 0;

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int64_t left = deadline_ms - mono_us() / 1000;
		ssize_t got;
		char *nl;
		int r;

		if (left <= 0)
			return -2;
		r = poll(&p, 1, (int)left);
		if (r == 0 || (r < 0 && errno == EINTR))
			continue;       /* the deadline is checked above */
		if (r < 0)
			return -1;
		if (len + 1 >= *cap) {  /* full: grow, up to limit */
			if (*cap >= limit)
				return -3;
			*cap = *cap * 2 > limit ? limit : *cap * 2;
			*buf = xrealloc(*buf, *cap);
		}
		got = read(fd, *buf + len, *cap - len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		(*buf)[len + (size_t)got] = '\0';
		nl = memchr(*buf + len, '\n', (size_t)got);
		len += (size_t)got;
		if (nl != NULL) {
			*nl = '\0';
			return nl - *buf;
		}
	}
}

/* ---- the list ---- */

static void
unref(struct abus *b)
{
	bool last;

	pthread_mutex_lock(&list_lock);
	last = --b->refs == 0;
	pthread_mutex_unlock(&list_lock);
	if (!last)
		return;
	pthread_mutex_destroy(&b->mu);
	free(b);
}

/* The bus of display n with a reference taken, or NULL. */
static struct abus *
find_ref(int n)
{
	struct abus *b;

	pthread_mutex_lock(&list_lock);
	for (b = buses; b != NULL && b->number != n; b = b->next)
		;
	if (b != NULL)
		b->refs++;
	pthread_mutex_unlock(&list_lock);
	return b;
}

/* ---- start and stop ---- */

/* Starts b's dbus-daemon and reads the address it prints. 0 or -1. */
static int
bus_launch(struct abus *b)
{
	char conf[PATH_MAX + 32], log[PATH_MAX + 32], e_disp[64], *e_auth, *e_run = NULL;
	char *argv[] = { (char *)(uintptr_t)"/usr/bin/dbus-daemon", NULL, (char *)(uintptr_t)"--nofork",
		(char *)(uintptr_t)"--print-address=3", NULL };
	char *extra[4] = { e_disp, NULL, NULL, NULL }, **env, *line = NULL;
	size_t cap = 1024;
	int p[2], rc = -1;
	long len;

	snprintf(conf, sizeof conf, "--config-file=%s/session.conf", b->dir);
	snprintf(log, sizeof log, "%s/a11y-%d.log", b->logs, b->number);
	snprintf(e_disp, sizeof e_disp, "DISPLAY=%s", b->name);
	e_auth = xasprintf("XAUTHORITY=%s", b->xauth);
	extra[1] = e_auth;
	if (b->run[0] != '\0')
		extra[2] = e_run = xasprintf("XDG_RUNTIME_DIR=%s", b->run);
	argv[1] = conf;
	if (access(argv[0], X_OK) != 0)
		argv[0] = (char *)(uintptr_t)"/bin/dbus-daemon";
	if (pipe2(p, O_CLOEXEC) != 0)
		goto out;
	env = env_for(extra);
	b->bus_pid = proc_spawn(argv, env, &(struct proc_io){ .log = log, .in_fd = -1, .out_fd = -1,
	    .extra_fd = p[1] });
	free(env);
	close(p[1]);
	line = xmalloc(cap);
	len = b->bus_pid > 0 ? read_line(p[0], &line, &cap, 4096, mono_us() / 1000 + ADDR_TIMEOUT_MS) : -1;
	close(p[0]);
	if (len <= 0 || (size_t)len >= sizeof b->addr) {
		log_warn("display %s: the accessibility session bus did not print its address; see %s",
		    b->name, log);
		group_stop(b->bus_pid);
		b->bus_pid = 0;
		goto out;
	}
	memcpy(b->addr, line, (size_t)len + 1);
	rc = 0;
out:
	free(line);
	free(e_auth);
	free(e_run);
	return rc;
}

int
a11y_start(int n, const char *name, const char *xauth, const char *dir)
{
	struct abus *b = xcalloc(1, sizeof *b);
	const char *launcher = launcher_path();
	char path[PATH_MAX + 32];
	int64_t t0 = mono_us();
	FILE *f;

	a11y_stop(n);           /* a bus of an earlier display with this number */
	b->refs = 1;
	b->number = n;
	pthread_mutex_init(&b->mu, NULL);
	b->to_helper = b->from_helper = -1;
	snprintf(b->name, sizeof b->name, "%s", name);
	snprintf(b->xauth, sizeof b->xauth, "%s", xauth);
	snprintf(b->dir, sizeof b->dir, "%s/%d.a11y", dir, n);
	snprintf(b->logs, sizeof b->logs, "%s/../logs", dir);
	if (strlen(b->dir) + 4 <= SOCK_DIR_MAX) {
		int k = snprintf(b->run, sizeof b->run, "%s/run", b->dir);

		if (k < 0 || (size_t)k >= sizeof b->run)
			b->run[0] = '\0';
	}
	stale_remove(b->dir);
	if (launcher == NULL || dir_create_all(b->dir, 0700) != 0 ||
	    (b->run[0] != '\0' && dir_create_all(b->run, 0700) != 0) || write_config(b, launcher) != 0 ||
	    bus_launch(b) != 0) {
		log_warn("display %s: no accessibility bus (%s)", name,
		    launcher == NULL ? "at-spi-bus-launcher not found; install at-spi2-core" : "see above");
		rm_tree(b->dir);
		unref(b);
		return -1;
	}
	snprintf(path, sizeof path, "%s/bus.pid", b->dir);
	if ((f = fopen(path, "we")) != NULL) {
		fprintf(f, "%ld\n", (long)b->bus_pid);
		fclose(f);
	}
	pthread_mutex_lock(&list_lock);
	b->next = buses;
	buses = b;
	pthread_mutex_unlock(&list_lock);
	log_info("display %s: accessibility session bus %s (pid %ld) in %.1f ms", name, b->addr,
	    (long)b->bus_pid, (double)(mono_us() - t0) / 1000.0);
	return 0;
}

/* The bus mutex held: ends the helper (if any) and reaps it. */
static void
helper_end(struct abus *b)
{
	pid_t pid;

	if (b->to_helper >= 0)
		close(b->to_helper);
	if (b->from_helper >= 0)
		close(b->from_helper);
	b->to_helper = b->from_helper = -1;
	pid = b->helper_pid;
	b->helper_pid = 0;      /* before the reap: a11y_stop never signals a reaped pid */
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

void
a11y_stop(int n)
{
	struct abus *b, **pp;
	pid_t helper;

	pthread_mutex_lock(&list_lock);
	for (pp = &buses; *pp != NULL && (*pp)->number != n; pp = &(*pp)->next)
		;
	b = *pp;
	if (b != NULL)
		*pp = b->next;
	helper = b != NULL ? b->helper_pid : 0;
	pthread_mutex_unlock(&list_lock);
	if (b == NULL)
		return;
	if (helper > 0)
		kill(helper, SIGKILL);  /* a request in flight sees EOF at once */
	pthread_mutex_lock(&b->mu);
	helper_end(b);
	b->stopped = true;
	pthread_mutex_unlock(&b->mu);
	group_stop(b->bus_pid);
	rm_tree(b->dir);
	log_info("display %s: accessibility bus stopped", b->name);
	unref(b);
}

/* ---- describe ---- */

static void
add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

void
a11y_describe(int n, json_object *o)
{
	struct abus *b = find_ref(n);
	json_object *env, *a, *flags;
	char path[PATH_MAX + 64];
	bool bus_up = false;

	if (b == NULL)
		return;
	env = json_object_new_object();
	add_str(env, "DISPLAY", b->name);
	add_str(env, "XAUTHORITY", b->xauth);
	add_str(env, "DBUS_SESSION_BUS_ADDRESS", b->addr);
	if (b->run[0] != '\0') {
		snprintf(path, sizeof path, "%s/at-spi/bus_%d", b->run, n);
		bus_up = access(path, F_OK) == 0;
		if (bus_up) {
			snprintf(path, sizeof path, "unix:path=%s/at-spi/bus_%d", b->run, n);
			add_str(env, "AT_SPI_BUS_ADDRESS", path);
		}
	}
	add_str(env, "GTK_MODULES", "gail:atk-bridge");
	add_str(env, "NO_AT_BRIDGE", "0");
	add_str(env, "ACCESSIBILITY_ENABLED", "1");
	add_str(env, "QT_ACCESSIBILITY", "1");
	add_str(env, "QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1");
	json_object_object_add(o, "env", env);
	a = json_object_new_object();
	add_str(a, "session_bus", b->addr);
	json_object_object_add(a, "bus_pid", json_object_new_int(b->bus_pid));
	/* Whether the accessibility bus (launcher + registry) runs yet: it
	 * starts when an accessible application or an elements call asks. */
	json_object_object_add(a, "accessibility_bus", json_object_new_boolean(bus_up));
	json_object_object_add(a, "helper_pid", json_object_new_int(b->helper_pid));
	flags = json_object_new_array();
	json_object_array_add(flags, json_object_new_string("--force-renderer-accessibility"));
	json_object_object_add(a, "chromium_flags", flags);
	json_object_object_add(o, "a11y", a);
	unref(b);
}

/* ---- elements ---- */

static char helper_file[PATH_MAX + 16];

static void
helper_find(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	char *slash;

	if (n <= 0)
		return;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash != NULL) {
		*slash = '\0';
		snprintf(helper_file, sizeof helper_file, "%s/detm-a11y", self);
	}
}

/* The detm-a11y next to detmd's own executable ("" when unknown). */
static const char *
helper_path(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, helper_find);
	return helper_file;
}

/* The bus mutex held: starts b's helper. 0, or -1 with e set. */
static int
helper_start(struct abus *b, struct derr *e)
{
	char log[PATH_MAX + 32], e_disp[64], *e_auth, *e_bus, **env;
	char *extra[4] = { e_disp, NULL, NULL, NULL };
	char *argv[] = { (char *)(uintptr_t)helper_path(), NULL };
	int in[2], out[2];
	pid_t pid;

	if (argv[0][0] == '\0' || access(argv[0], X_OK) != 0)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "detm-a11y is not next to detmd (%s); "
		    "build it with make", argv[0]);
	if (pipe2(in, O_CLOEXEC) != 0)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "pipe: %s", strerror(errno));
	if (pipe2(out, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		return derr_set(e, DERR_UNAVAILABLE, NULL, "pipe: %s", strerror(errno));
	}
	snprintf(log, sizeof log, "%s/a11y-%d.log", b->logs, b->number);
	snprintf(e_disp, sizeof e_disp, "DISPLAY=%s", b->name);
	extra[1] = e_auth = xasprintf("XAUTHORITY=%s", b->xauth);
	extra[2] = e_bus = xasprintf("DBUS_SESSION_BUS_ADDRESS=%s", b->addr);
	env = env_for(extra);
	pid = proc_spawn(argv, env, &(struct proc_io){ .log = log, .in_fd = in[0], .out_fd = out[1],
	    .extra_fd = -1 });
	free(env);
	free(e_auth);
	free(e_bus);
	close(in[0]);
	close(out[1]);
	if (pid <= 0) {
		close(in[1]);
		close(out[0]);
		return derr_set(e, DERR_UNAVAILABLE, NULL, "cannot start %s", argv[0]);
	}
	b->to_helper = in[1];
	b->from_helper = out[0];
	b->helper_pid = pid;
	log_info("display %s: accessibility helper pid %ld", b->name, (long)pid);
	return 0;
}

static json_object *
request_json(const struct a11y_query *q)
{
	json_object *o = json_object_new_object();

	add_str(o, "op", "elements");
	if (q->window != NULL)
		add_str(o, "window", q->window);
	if (q->role != NULL)
		add_str(o, "role", q->role);
	if (q->name != NULL)
		add_str(o, "name", q->name);
	if (q->states != NULL)
		json_object_object_add(o, "states", json_object_get(q->states));
	json_object_object_add(o, "max", json_object_new_int(q->max));
	json_object_object_add(o, "depth", json_object_new_int(LIM_A11Y_DEPTH));
	json_object_object_add(o, "visit", json_object_new_int(LIM_A11Y_VISIT));
	json_object_object_add(o, "bytes", json_object_new_int(LIM_A11Y_REPLY_BYTES - LIM_A11Y_REPLY_SLACK));
	json_object_object_add(o, "time_ms", json_object_new_int(LIM_A11Y_WALK_MS));
	return o;
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The bus mutex held: one request to the running helper and its parsed
 * answer. Any failure ends the helper (the next call starts a new one). */
static int
helper_ask(struct abus *b, json_object *req, json_object **out, struct derr *e)
{
	const char *text = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	size_t cap = 16384;
	char *line = xmalloc(cap);
	long len = -1;
	json_object *err;
	int rc = -1;

	*out = NULL;
	if (write_all(b->to_helper, text, strlen(text)) == 0 && write_all(b->to_helper, "\n", 1) == 0)
		len = read_line(b->from_helper, &line, &cap, LIM_A11Y_REPLY_BYTES,
		    mono_us() / 1000 + LIM_A11Y_TIMEOUT_MS);
	if (len < 0) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "the accessibility helper of display %s %s", b->name,
		    len == -2 ? "did not answer in time" : len == -3 ? "answered more than the reply cap" :
		    "exited; see its log in DATA_DIR/logs");
		helper_end(b);
		goto out;
	}
	*out = json_tokener_parse(line);
	if (*out == NULL || !json_object_is_type(*out, json_type_object)) {
		derr_set(e, DERR_INTERNAL, NULL, "the accessibility helper of display %s answered no JSON object",
		    b->name);
		helper_end(b);
		goto out;
	}
	if (json_object_object_get_ex(*out, "error", &err)) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "accessibility tree of display %s: %s", b->name,
		    json_object_get_string(err));
		goto out;
	}
	rc = 0;
out:
	if (rc != 0) {
		json_object_put(*out);
		*out = NULL;
	}
	free(line);
	return rc;
}

/* One request to display n's helper (started if need be). */
static int
ask(int n, json_object *req, json_object **out, struct derr *e)
{
	struct abus *b = find_ref(n);
	int rc;

	*out = NULL;
	if (b == NULL)
		return derr_set(e, DERR_CONFLICT, "display", "display :%d has no accessibility bus "
		    "(at-spi2-core missing when it started?)", n);
	pthread_mutex_lock(&b->mu);
	if (b->stopped)
		rc = derr_set(e, DERR_CONFLICT, "display", "display %s stopped", b->name);
	else
		rc = b->helper_pid > 0 ? 0 : helper_start(b, e);
	if (rc == 0)
		rc = helper_ask(b, req, out, e);
	pthread_mutex_unlock(&b->mu);
	unref(b);
	return rc;
}

int
a11y_elements(int n, const struct a11y_query *q, json_object **out, struct derr *e)
{
	json_object *req = request_json(q);
	int rc = ask(n, req, out, e);

	json_object_put(req);
	if (rc == 0)
		a11y_reply_expand(*out);
	return rc;
}

bool
a11y_active(int n)
{
	struct abus *b = find_ref(n);
	char path[PATH_MAX + 64];
	bool up = false;

	if (b == NULL)
		return false;
	if (b->run[0] != '\0') {
		snprintf(path, sizeof path, "%s/at-spi/bus_%d", b->run, n);
		up = access(path, F_OK) == 0;
	}
	unref(b);
	return up;
}

int
a11y_at_point(int n, int x, int y, json_object **out, struct derr *e)
{
	json_object *req = json_object_new_object();
	int rc;

	add_str(req, "op", "at_point");
	json_object_object_add(req, "x", json_object_new_int(x));
	json_object_object_add(req, "y", json_object_new_int(y));
	rc = ask(n, req, out, e);
	json_object_put(req);
	return rc;
}

int
a11y_action(int n, json_object *el, json_object **out, struct derr *e)
{
	json_object *req = json_object_new_object(), *b = json_object_object_get(el, "bounds");
	static const char *const keys[] = { "x", "y", "width", "height" };
	int rc;

	add_str(req, "op", "action");
	add_str(req, "role", json_object_get_string(json_object_object_get(el, "role")));
	add_str(req, "name", json_object_get_string(json_object_object_get(el, "name")));
	for (size_t i = 0; i < 4; i++)
		json_object_object_add(req, keys[i], json_object_new_int(json_object_get_int(
		    json_object_object_get(b, keys[i]))));
	rc = ask(n, req, out, e);
	json_object_put(req);
	return rc;
}
