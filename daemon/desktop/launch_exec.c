/*
 * launch_exec.c - launch_exec (see launch.h): a command run to its end on
 * a task's own display, its output captured (the OSWorld server's
 * /execute). The same environment as desktop_launch's programs
 * (launch_env over the display's "env"), its own session and process group,
 * the task's folder (files.h) as its working folder, a deadline; logged
 * as a `cli` action.
 *
 * Invariants: at most LAUNCH_EXEC_OUT bytes of stdout and of stderr are
 * kept (the rest is read and dropped, so a chatty command never blocks);
 * a command past its deadline is killed with its whole session; sessions
 * whose leader exited but left processes behind (a program put in the
 * background) are remembered and killed with the task's launches
 * (launch_exec_stop_task, from launch_stop_task).
 *
 * Does not: decide whether running commands is allowed (the caller checks
 * --osworld-exec), or apply the launch allow-list (a shell command is
 * arbitrary code by nature: the switch is the policy).
 */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/proc.h"
#include "utf8.h"
#include "launch_int.h"
#include "task/files.h"
#include "task/task.h"
#include "task/taskstate.h"

#define EXEC_SESSIONS 64

static pthread_mutex_t emu = PTHREAD_MUTEX_INITIALIZER;
static struct { char task_id[ID_LEN]; pid_t sid; } sessions[EXEC_SESSIONS];

static void
session_note(const char *task_id, pid_t sid)
{
	size_t i, pick = 0;

	pthread_mutex_lock(&emu);
	for (i = 0; i < EXEC_SESSIONS; i++)
		if (sessions[i].sid == 0 || kill(-sessions[i].sid, 0) != 0) {
			pick = i;
			break;
		}
	if (i == EXEC_SESSIONS && sessions[pick].sid > 0)
		launch_kill_session(sessions[pick].sid, SIGKILL);   /* full: slot 0's goes */
	snprintf(sessions[pick].task_id, ID_LEN, "%s", task_id);
	sessions[pick].sid = sid;
	pthread_mutex_unlock(&emu);
}

void
launch_exec_stop_task(const char *task_id)
{
	pthread_mutex_lock(&emu);
	for (size_t i = 0; i < EXEC_SESSIONS; i++)
		if (sessions[i].sid > 0 && strcmp(sessions[i].task_id, task_id) == 0) {
			launch_kill_session(sessions[i].sid, SIGKILL);
			sessions[i].sid = 0;
		}
	pthread_mutex_unlock(&emu);
}

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads what fd has into b (kept up to cap, the rest dropped). 1 while
 * open, 0 at its end. */
static int
drain(int fd, struct buf *b, size_t cap)
{
	char chunk[8192];
	ssize_t n = read(fd, chunk, sizeof chunk);

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (n == 0)
		return 0;
	if (b->len < cap && buf_append(b, chunk, (size_t)n < cap - b->len ? (size_t)n :
	    cap - b->len) != 0)
		return 1;       /* cannot happen: the cap is checked first */
	return 1;
}

/* Waits for pid, reading both pipes, until it exits or deadline passes
 * (then its session is killed). After the exit, output still in the pipes
 * is read for a short while (a background child may hold them open). */
static void
collect(pid_t pid, int fo, int fe, int64_t deadline, struct buf *out, struct buf *err,
    int *status, bool *timed_out)
{
	struct pollfd p[2] = { { .fd = fo, .events = POLLIN }, { .fd = fe, .events = POLLIN } };
	int64_t grace_end = -1;

	*timed_out = false;
	*status = -1;
	for (;;) {
		int64_t now = mono_ms();

		if (*status == -1 && waitpid(pid, status, WNOHANG) == pid && grace_end < 0)
			grace_end = now + 300;
		if (*status == -1 && now >= deadline) {
			*timed_out = true;
			launch_kill_session(pid, SIGKILL);
			waitpid(pid, status, 0);
			return;
		}
		if ((p[0].fd < 0 && p[1].fd < 0) || (grace_end >= 0 && now >= grace_end))
			break;
		if (poll(p, 2, 50) <= 0)
			continue;
		for (int k = 0; k < 2; k++)
			if (p[k].fd >= 0 && (p[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    drain(p[k].fd, k == 0 ? out : err, LAUNCH_EXEC_OUT) == 0)
				p[k].fd = -1;
	}
	if (*status == -1)
		waitpid(pid, status, 0);
}

/* b's bytes as a JSON string, invalid UTF-8 replaced. */
static json_object *
text_json(const struct buf *b)
{
	size_t n = 0;
	char *s = utf8_dup(b->data ? b->data : "", b->len, &n);
	json_object *o = json_object_new_string_len(s ? s : "", s ? (int)n : 0);

	free(s);
	return o;
}

/* The audit row: a `cli` action with the command and how it ended. */
static void
audit(struct app *app, const struct launch_exec_req *q, json_object *in, json_object *res,
    bool ok, int64_t ms)
{
	char summary[300];
	struct action_new a = { .type = "cli", .summary = summary, .status = ok ? "completed" : "failed",
		.duration_ms = ms };
	char aid[ID_LEN];
	int64_t ord;
	struct derr e;

	snprintf(summary, sizeof summary, "osworld execute: %.*s", utf8_prec(q->argv[q->shell ? 2 : 0],
	    200), q->argv[q->shell ? 2 : 0]);
	a.input_json = json_object_to_json_string_ext(in, JSON_C_TO_STRING_PLAIN);
	a.output_json = json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN);
	derr_clear(&e);
	if (task_action_add(app->store, q->task_id, &a, aid, &ord, &e) != 0)
		log_warn("task %s: the command could not be logged: %s", q->task_id, e.message);
}

/* The task live, its display running: its environment. */
static char **
exec_env(struct app *app, const char *task_id, struct derr *e)
{
	json_object *meta = NULL, *disp;
	char **env;
	int st;

	if (task_meta(app->store, task_id, &st, &meta, e) != 0)
		return NULL;
	json_object_put(meta);
	if (task_status_final(st)) {
		derr_set(e, DERR_CONFLICT, "task_id", "task %s is %s; commands run for live tasks",
		    task_id, task_status_name(st));
		return NULL;
	}
	if ((disp = launch_task_display(task_id, e)) == NULL)
		return NULL;
	env = launch_env(json_object_object_get(disp, "env"));
	json_object_put(disp);
	return env;
}

static json_object *
audit_in(const struct launch_exec_req *q)
{
	json_object *in = json_object_new_object(), *a = json_object_new_array();

	for (size_t i = 0; q->argv[i] != NULL; i++)
		json_object_array_add(a, json_object_new_string(q->argv[i]));
	json_object_object_add(in, "argv", a);
	json_object_object_add(in, "timeout_ms", json_object_new_int(q->timeout_ms));
	return in;
}

int
launch_exec(struct app *app, const struct launch_exec_req *q, json_object **out, struct derr *e)
{
	char **env = NULL, dir[PATH_MAX];
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, status = -1, rc = -1;
	struct buf bo = { 0 }, be = { 0 };
	json_object *in = audit_in(q);
	int64_t t0 = mono_ms();
	bool timed_out;
	pid_t pid;

	*out = NULL;
	buf_init(&bo, LAUNCH_EXEC_OUT);
	buf_init(&be, LAUNCH_EXEC_OUT);
	if ((env = exec_env(app, q->task_id, e)) == NULL || files_folder(q->task_id, dir, e) != 0)
		goto done;
	if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "pipe: %s", strerror(errno));
		goto done;
	}
	struct proc_io io = { .in_fd = -1, .out_fd = po[1], .err_fd = pe[1], .extra_fd = -1,
		.search_path = true, .new_session = true, .log = "/dev/null", .cwd = dir,
		.quiet_missing = true };
	if ((pid = proc_spawn(q->argv, env, &io)) < 0) {
		derr_set(e, errno == ENOENT ? DERR_NOT_FOUND : DERR_UNAVAILABLE, "command",
		    "cannot start %s: %s", q->argv[0], strerror(errno));
		goto done;
	}
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	collect(pid, po[0], pe[0], t0 + q->timeout_ms, &bo, &be, &status, &timed_out);
	if (!timed_out && kill(-pid, 0) == 0)
		session_note(q->task_id, pid);      /* something of it lives on */
	*out = json_object_new_object();
	json_object_object_add(*out, "output", text_json(&bo));
	json_object_object_add(*out, "error", text_json(&be));
	json_object_object_add(*out, "returncode", json_object_new_int(timed_out ? -9 :
	    WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1));
	json_object_object_add(*out, "timed_out", json_object_new_boolean(timed_out));
	json_object_object_add(*out, "cwd", json_object_new_string(dir));
	audit(app, q, in, *out, !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    mono_ms() - t0);
	rc = 0;
done:
	for (int k = 0; k < 2; k++) {
		if (po[k] >= 0)
			close(po[k]);
		if (pe[k] >= 0)
			close(pe[k]);
	}
	buf_free(&bo);
	buf_free(&be);
	json_object_put(in);
	launch_argv_free(env);
	return rc;
}
