/*
 * launch_watch.c - the watcher of one launched process (one detached
 * thread each): its stdout and stderr, line by line, into the logs of its
 * launch action (log_type "stdout" / "stderr"), its exit reaped and
 * recorded, the action finished (completed on exit status 0, else failed).
 *
 * Caps: a line is cut at LAUNCH_LINE_BYTES; past LAUNCH_LINES lines or
 * LAUNCH_LOG_BYTES bytes per process lines are counted, not logged (one
 * last log line says how many). Lines are made valid UTF-8.
 *
 * Life: the thread reads until both pipes close and the process is
 * reaped (descendants that keep a pipe open are still read after it
 * exited); when detm asked it to stop (its task ended) it stops reading
 * 2 s after the reap even if a stray descendant keeps a pipe open. Its last act is clearing `watching`
 * under the registry lock (the slot may then be reused) and waking
 * launch_stop_task.
 *
 * Also here: the session helpers (/proc scan) launch.c and launch_win.c use.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "launch_int.h"
#include "task/task.h"

#define POLL_MS 200

struct watch {
	struct app *app;
	struct lproc *p;
	char buf[2][LAUNCH_LINE_BYTES + 1];     /* a partial line per stream */
	size_t len[2];
	bool cut[2];            /* the current line was cut: drop the rest of it */
};

/* ---- sessions ---- */

/* The session id of pid from /proc/pid/stat, or -1. */
static pid_t
session_of(pid_t pid)
{
	char path[64], buf[512], *p;
	long sid = -1;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* pid (comm) state ppid pgrp session ...; comm may hold blanks */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 1, " %*c %*d %*d %ld", &sid) != 1)
		return -1;
	return (pid_t)sid;
}

bool
launch_in_session(pid_t pid, pid_t sid)
{
	return pid > 0 && sid > 0 && session_of(pid) == sid;
}

void
launch_kill_session(pid_t sid, int sig)
{
	DIR *d;
	struct dirent *de;

	if (sid <= 1)
		return;
	kill(sid, sig);         /* the leader, even if it left its group */
	kill(-sid, sig);
	if ((d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end == '\0' && pid > 1 && (pid_t)pid != getpid() && session_of((pid_t)pid) == sid)
			kill((pid_t)pid, sig);
	}
	closedir(d);
}

/* ---- lines ---- */

static void
log_line(struct watch *w, int which, const char *line, size_t len)
{
	static const char *const types[2] = { "stdout", "stderr" };
	struct lproc *p = w->p;
	char text[LAUNCH_LINE_BYTES + 8], id[ID_LEN];
	struct derr e;
	bool take;

	launch_lock();
	take = p->lines_logged < LAUNCH_LINES && p->bytes_logged + len <= LAUNCH_LOG_BYTES &&
	    p->action_id[0] != '\0';
	if (take) {
		p->lines_logged++;
		p->bytes_logged += len;
	} else {
		p->lines_dropped++;
	}
	launch_unlock();
	if (!take)
		return;
	memcpy(text, line, len);
	text[len] = '\0';
	utf8_fix_in_place(text, sizeof text);
	derr_clear(&e);
	if (task_log_add(w->app->store, p->task_id, p->action_id, types[which], text, id, &e) != 0)
		log_debug("task %s: a line of pid %ld was not logged: %s", p->task_id, (long)p->pid,
		    e.message);
}

/* Appends n bytes of stream `which` and logs every complete line. */
static void
take_bytes(struct watch *w, int which, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n') {
			if (w->len[which] > 0 && w->buf[which][w->len[which] - 1] == '\r')
				w->len[which]--;
			if (w->len[which] > 0)  /* blank lines are not worth a row */
				log_line(w, which, w->buf[which], w->len[which]);
			w->len[which] = 0;
			w->cut[which] = false;
		} else if (w->len[which] < LAUNCH_LINE_BYTES) {
			w->buf[which][w->len[which]++] = s[i];
		} else if (!w->cut[which]) {
			w->cut[which] = true;       /* the rest of this line is dropped */
		}
	}
}

/* ---- the thread ---- */

/* The action row's last word: status, exit, counts. */
static void
finish_action(struct watch *w, int status)
{
	struct lproc *p = w->p;
	json_object *o = json_object_new_object();
	struct action_patch ap = { .status = "completed" };
	struct derr e;
	char id[ID_LEN], note[128];

	launch_lock();
	json_object_object_add(o, "pid", json_object_new_int(p->pid));
	if (WIFEXITED(status))
		json_object_object_add(o, "exit_code", json_object_new_int(WEXITSTATUS(status)));
	if (WIFSIGNALED(status))
		json_object_object_add(o, "signal", json_object_new_int(WTERMSIG(status)));
	json_object_object_add(o, "stopped_by_detm", json_object_new_boolean(p->stop));
	json_object_object_add(o, "lines_logged", json_object_new_int((int)p->lines_logged));
	json_object_object_add(o, "lines_dropped", json_object_new_int((int)p->lines_dropped));
	ap.duration_ms = (double)(mono_us() - p->started_mono_us) / 1000.0;
	if (!p->stop && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		ap.status = "failed";
	snprintf(note, sizeof note, "(%u more output line(s) not logged: the cap is %d lines, "
	    "%d bytes)", p->lines_dropped, LAUNCH_LINES, LAUNCH_LOG_BYTES);
	launch_unlock();
	ap.output_json = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	derr_clear(&e);
	if (p->action_id[0] != '\0') {
		if (p->lines_dropped > 0 &&
		    task_log_add(w->app->store, p->task_id, p->action_id, "stderr", note, id, &e) != 0)
			log_debug("task %s: %s", p->task_id, e.message);
		if (task_action_update(w->app->store, p->task_id, p->action_id, &ap, &e) != 0)
			log_debug("task %s: the launch action of pid %ld: %s", p->task_id, (long)p->pid,
			    e.message);
	}
	json_object_put(o);
}

/* Records how the process ended (reaped with status). */
static void
record_end(struct watch *w, int status)
{
	struct lproc *p = w->p;

	launch_lock();
	p->ended_ms = now_ms();
	p->state = p->stop ? L_STOPPED : L_EXITED;
	p->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	p->sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	launch_unlock();
	log_info("task %s: launched pid %ld (%s) ended: %s %d", p->task_id, (long)p->pid, p->program,
	    WIFSIGNALED(status) ? "signal" : "exit status",
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	finish_action(w, status);
}

/* Reads what is there on fd (stream which); false at EOF or error. */
static bool
read_some(struct watch *w, int which, int fd)
{
	char chunk[4096];
	ssize_t n = read(fd, chunk, sizeof chunk);

	if (n > 0) {
		take_bytes(w, which, chunk, (size_t)n);
		return true;
	}
	return n < 0 && (errno == EINTR || errno == EAGAIN);
}

static void *
watch_main(void *arg)
{
	struct watch *w = arg;
	struct lproc *p = w->p;
	int fds[2] = { p->fd_out, p->fd_err }, status = 0;
	bool reaped = false, stop;
	int64_t reaped_at = 0;

	for (;;) {
		struct pollfd pf[2];
		int n = 0, map[2];

		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0) {
				pf[n].fd = fds[i];
				pf[n].events = POLLIN;
				map[n++] = i;
			}
		if (n > 0 && poll(pf, (nfds_t)n, POLL_MS) > 0) {
			for (int k = 0; k < n; k++)
				if ((pf[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
				    !read_some(w, map[k], fds[map[k]])) {
					close(fds[map[k]]);
					fds[map[k]] = -1;
				}
		} else if (n == 0) {
			sleep_ms(POLL_MS);      /* nothing left to read: wait for its exit */
		}
		if (!reaped && waitpid(p->pid, &status, WNOHANG) == p->pid) {
			reaped = true;
			reaped_at = mono_us();
			record_end(w, status);
		}
		launch_lock();
		stop = p->stop;
		launch_unlock();
		if (reaped && (n == 0 || (stop && mono_us() - reaped_at > 2000000)))
			break;
	}
	for (int i = 0; i < 2; i++) {
		if (w->len[i] > 0)
			log_line(w, i, w->buf[i], w->len[i]);
		if (fds[i] >= 0)
			close(fds[i]);
	}
	launch_lock();
	p->watching = false;
	launch_signal();
	launch_unlock();
	free(w);
	return NULL;
}

int
launch_watch_start(struct app *app, struct lproc *p)
{
	struct watch *w = xcalloc(1, sizeof *w);
	pthread_attr_t at;
	pthread_t t;
	int r;

	w->app = app;
	w->p = p;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &at, watch_main, w);
	pthread_attr_destroy(&at);
	if (r != 0) {
		log_warn("cannot start a watcher thread: %s", strerror(r));
		free(w);
		return -1;
	}
	return 0;
}
