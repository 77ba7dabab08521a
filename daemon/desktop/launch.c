/*
 * launch.c - desktop_launch (see launch.h): the registry of launched
 * processes, starting one, stopping a task's, listing them.
 *
 * A start: the request checked, the task live, launching on
 * (launchpol_enabled), the command (or `open` resolved, launch_open.c)
 * with the toolkit flags detm adds, the allow-list (launchpol_check), the
 * task's own running display and its environment, the windows already
 * there (under an agent's lease: a human driving the display refuses
 * it), a slot, pipes, the spawn (its own session: pgid = sid = pid), the
 * audit row (a `cli` action, `started`), the watcher (launch_watch.c),
 * then its window (launch_win.c). Every refusal after the task is known is
 * audited too, as a failed action.
 *
 * The child's environment (launch_argv.c): detmd's own, without what
 * belongs to another display or session (DISPLAY, XAUTHORITY, the D-Bus
 * and AT-SPI addresses, WAYLAND_DISPLAY, ...) and without detmd's secrets
 * (ACU_*, *_API_KEY, *TOKEN*, *SECRET*, *PASSWORD*), then the display's
 * "env" (display.h: DISPLAY, XAUTHORITY, the session bus, the
 * accessibility switches of GTK, Qt, Gecko and LibreOffice).
 *
 * Lock order: the registry lock is a leaf (nothing is called under it
 * that takes another lock, except the condition wait).
 */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/launchpol.h"
#include "core/log.h"
#include "core/proc.h"
#include "launch_int.h"
#include "task/task.h"
#include "task/taskstate.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct lproc procs[LAUNCH_MAX];

void
launch_lock(void)
{
	pthread_mutex_lock(&mu);
}

void
launch_unlock(void)
{
	pthread_mutex_unlock(&mu);
}

void
launch_signal(void)
{
	pthread_cond_broadcast(&cv);
}

/* ---- the audit row ---- */

static void
audit(struct app *app, const char *task_id, const char *summary, const char *status,
    json_object *in, json_object *outj, char action_id[ID_LEN])
{
	struct action_new a = { .type = "cli", .summary = summary, .status = status,
		.duration_ms = -1 };
	struct derr e;
	int64_t ord;

	action_id[0] = '\0';
	a.input_json = in != NULL ? json_object_to_json_string_ext(in, JSON_C_TO_STRING_PLAIN) : NULL;
	a.output_json = outj != NULL ? json_object_to_json_string_ext(outj, JSON_C_TO_STRING_PLAIN) : NULL;
	derr_clear(&e);
	if (task_action_add(app->store, task_id, &a, action_id, &ord, &e) != 0) {
		log_warn("task %s: the launch could not be logged: %s", task_id, e.message);
		action_id[0] = '\0';
	}
}

/* A refused launch, logged as a failed action; returns -1 (e kept). */
static int
audit_refusal(struct app *app, const char *task_id, json_object *in, const struct derr *e)
{
	json_object *o = json_object_new_object();
	char summary[400], aid[ID_LEN];

	derr_add_json(o, e);
	snprintf(summary, sizeof summary, "launch refused: %.*s", utf8_prec(e->message, 300), e->message);
	audit(app, task_id, summary, "failed", in, o, aid);
	json_object_put(o);
	return -1;
}

/* ---- the registry ---- */

/* Lock held: a slot for a new process, or NULL (all in use); how many of
 * the task's run in *running. */
static struct lproc *
slot_take(const char *task_id, int *running)
{
	struct lproc *free_slot = NULL, *oldest = NULL;

	*running = 0;
	for (size_t i = 0; i < LAUNCH_MAX; i++) {
		struct lproc *p = &procs[i];

		if (p->state == L_RUNNING && strcmp(p->task_id, task_id) == 0)
			(*running)++;
		if (p->state == L_FREE && free_slot == NULL)
			free_slot = p;
		if ((p->state == L_EXITED || p->state == L_STOPPED) && !p->watching &&
		    (oldest == NULL || p->ended_ms < oldest->ended_ms))
			oldest = p;
	}
	return free_slot != NULL ? free_slot : oldest;
}

/* The child: its own session, stdout and stderr into the pipes. */
static pid_t
spawn(char **argv, char **env, int out_w, int err_w)
{
	struct proc_io io = { .in_fd = -1, .out_fd = out_w, .err_fd = err_w, .extra_fd = -1,
		.search_path = true, .new_session = true, .log = "/dev/null" };

	return proc_spawn(argv, env, &io);
}

/* Claims a slot, starts argv with env and its watcher. 0 with *pp, or -1. */
static int
start_proc(struct app *app, const char *task_id, char **argv, char **env, const char *display,
    json_object *in, struct lproc **pp, struct derr *e)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, running;
	struct lproc *p;
	char summary[700], aid[ID_LEN];
	pid_t pid;

	launch_lock();
	p = slot_take(task_id, &running);
	if (p != NULL && running < LAUNCH_TASK_RUNNING) {
		memset(p, 0, sizeof *p);
		p->state = L_RUNNING;   /* claimed; not listed until the pid is set */
		p->watching = true;
	}
	launch_unlock();
	if (running >= LAUNCH_TASK_RUNNING)
		return derr_set(e, DERR_UNAVAILABLE, "task_id", "task %s already runs %d launched "
		    "programs (the most at once)", task_id, LAUNCH_TASK_RUNNING);
	if (p == NULL)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "%d launched programs run on this daemon "
		    "(the most at once)", LAUNCH_MAX);
	if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "pipe: %s", strerror(errno));
		goto fail;
	}
	pid = spawn(argv, env, out[1], err[1]);
	close(out[1]);
	close(err[1]);
	out[1] = err[1] = -1;
	if (pid < 0) {
		derr_set(e, DERR_UNAVAILABLE, "command", "cannot start %.*s: %s",
		    utf8_prec(argv[0], 128), argv[0], strerror(errno));
		goto fail;
	}
	launch_lock();          /* listed (and stoppable) from here on */
	snprintf(p->task_id, sizeof p->task_id, "%s", task_id);
	snprintf(p->program, sizeof p->program, "%s", strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0]);
	launch_argv_join(argv, p->command, sizeof p->command);
	snprintf(p->display, sizeof p->display, "%s", display);
	p->pid = pid;
	p->exit_code = -1;
	p->fd_out = out[0];
	p->fd_err = err[0];
	p->started_ms = now_ms();
	p->started_mono_us = mono_us();
	launch_unlock();
	json_object_object_add(in, "pid", json_object_new_int(pid));
	snprintf(summary, sizeof summary, "launch %.*s on %s (pid %ld)", utf8_prec(p->command, 400),
	    p->command, display, (long)pid);
	audit(app, task_id, summary, "started", in, NULL, aid);
	launch_lock();
	memcpy(p->action_id, aid, sizeof aid);  /* fixed before the watcher reads it */
	launch_unlock();
	if (launch_watch_start(app, p) != 0) {
		launch_kill_session(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(p->fd_out);
		close(p->fd_err);
		launch_lock();
		p->state = L_STOPPED;
		p->ended_ms = now_ms();
		p->watching = false;
		launch_unlock();
		return derr_set(e, DERR_UNAVAILABLE, NULL, "cannot watch the new process; it was stopped");
	}
	log_info("task %s: launched %s on %s (pid %ld)", task_id, p->command, display, (long)pid);
	*pp = p;
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	launch_lock();
	p->state = L_FREE;
	p->watching = false;
	launch_unlock();
	return -1;
}

/* ---- start ---- */

/* The result's one line: what started, where, and its window. */
static void
observe(const struct lproc *p, json_object *win, int waited_ms, int wait_ms, char *out, size_t cap)
{
	json_object *v;
	size_t o;

	o = (size_t)snprintf(out, cap, "started %s (pid %ld) on %s", p->program, (long)p->pid,
	    p->display);
	if (o >= cap)
		return;
	if (win != NULL) {
		json_object_object_get_ex(win, "focused", &v);
		snprintf(out + o, cap - o, "; its window %s \"%s\" appeared at %d,%d %dx%d%s",
		    json_object_get_string(json_object_object_get(win, "id")),
		    json_object_get_string(json_object_object_get(win, "title")),
		    json_object_get_int(json_object_object_get(win, "x")),
		    json_object_get_int(json_object_object_get(win, "y")),
		    json_object_get_int(json_object_object_get(win, "width")),
		    json_object_get_int(json_object_object_get(win, "height")),
		    json_object_get_boolean(v) ? " and has the keyboard focus" :
		    ", without the keyboard focus");
	} else if (p->state != L_RUNNING && p->sig == 0 && p->exit_code == 0) {
		snprintf(out + o, cap - o, "; it ended (exit status 0) and no new window appeared: a "
		    "program may hand its work to an instance already running (mousepad, a browser), "
		    "whose window then changes; desktop_action list_windows shows the windows");
	} else if (p->state != L_RUNNING) {
		snprintf(out + o, cap - o, "; it ended (%s %d) before any window appeared: its output "
		    "lines are in the task's log (task_drill_down)", p->sig ? "signal" : "exit status",
		    p->sig ? p->sig : p->exit_code);
	} else if (wait_ms > 0) {
		snprintf(out + o, cap - o, "; no window yet after %.1f s (it may still be starting: "
		    "desktop_action list_windows shows it once it is there)", waited_ms / 1000.0);
	} else {
		snprintf(out + o, cap - o, "; not waiting for a window (wait_window 0)");
	}
	utf8_fix_in_place(out, cap);
}

static json_object *
result(const struct lproc *p, char *const *argv, json_object *added, json_object *win,
    int waited_ms, int wait_ms)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	char obs[700];

	launch_lock();
	observe(p, win, waited_ms, wait_ms, obs, sizeof obs);
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "task_id", json_object_new_string(p->task_id));
	json_object_object_add(o, "pid", json_object_new_int(p->pid));
	json_object_object_add(o, "program", json_object_new_string(p->program));
	json_object_object_add(o, "command", json_object_new_string(p->command));
	json_object_object_add(o, "display", json_object_new_string(p->display));
	json_object_object_add(o, "action_id", p->action_id[0] ? json_object_new_string(p->action_id) : NULL);
	json_object_object_add(o, "status", json_object_new_string(p->state == L_RUNNING ? "running" :
	    p->state == L_EXITED ? "exited" : "stopped"));
	if (p->state != L_RUNNING && p->exit_code >= 0)
		json_object_object_add(o, "exit_code", json_object_new_int(p->exit_code));
	if (p->sig != 0)
		json_object_object_add(o, "signal", json_object_new_int(p->sig));
	launch_unlock();
	for (size_t i = 0; argv[i] != NULL; i++)
		json_object_array_add(a, json_object_new_string(argv[i]));
	json_object_object_add(o, "argv", a);
	json_object_object_add(o, "added", json_object_get(added));
	json_object_object_add(o, "window", json_object_get(win));
	json_object_object_add(o, "waited_ms", json_object_new_int(waited_ms));
	json_object_object_add(o, "observation", json_object_new_string(obs));
	return o;
}

/* The request as the audit row's input. */
static json_object *
audit_in(const struct launch_req *q)
{
	json_object *in = json_object_new_object();

	if (q->command != NULL)
		json_object_object_add(in, "command", json_object_new_string(q->command));
	if (q->open != NULL)
		json_object_object_add(in, "open", json_object_new_string(q->open));
	if (q->args != NULL)
		json_object_object_add(in, "args", json_object_get(q->args));
	return in;
}

/* The checks that need no process: the task, the switch, argv, the
 * allow-list, the display. *argv and *disp (caller's) on success. */
static int
prepare(struct app *app, const struct launch_req *q, json_object *in, json_object *added,
    char ***argv, json_object **disp, struct derr *e)
{
	const char *kind = "command";
	char why[300], path[PATH_MAX];
	json_object *meta;
	int st;

	*argv = NULL;
	*disp = NULL;
	if (task_meta(app->store, q->task_id, &st, &meta, e) != 0)
		return -1;
	json_object_put(meta);
	if (task_status_final(st))
		return derr_set(e, DERR_CONFLICT, "task_id", "task %s is %s; programs are launched for "
		    "live tasks", q->task_id, task_status_name(st));
	if (!launchpol_enabled(app->cfg, why, sizeof why)) {
		derr_set(e, DERR_LAUNCH_DENIED, "command", "launching programs is %s", why);
		return audit_refusal(app, q->task_id, in, e);
	}
	if (q->command != NULL ? launch_argv_command(q->command, q->args, argv, e) :
	    launch_open_resolve(app->cfg, q->open, q->args, argv, &kind, e))
		return audit_refusal(app, q->task_id, in, e);
	json_object_object_add(in, "opened_as", json_object_new_string(kind));
	launch_argv_flags(*argv, added);
	if (launchpol_check(app->cfg, *argv, path, sizeof path, e) != 0)
		return audit_refusal(app, q->task_id, in, e);
	if ((*disp = launch_task_display(q->task_id, e)) == NULL)
		return audit_refusal(app, q->task_id, in, e);
	return 0;
}

/* The task ended while its program started (its stop did not see it
 * yet): stop it too. 0, or -1 with DERR_CONFLICT. */
static int
ended_meanwhile(struct app *app, struct lproc *p, struct derr *e)
{
	json_object *meta = NULL;
	struct derr e2;
	int st;

	derr_clear(&e2);
	if (task_meta(app->store, p->task_id, &st, &meta, &e2) == 0 && !task_status_final(st)) {
		json_object_put(meta);
		return 0;
	}
	json_object_put(meta);
	launch_stop_task(p->task_id);
	return derr_set(e, DERR_CONFLICT, "task_id", "task %s ended while %s started; it was stopped",
	    p->task_id, p->program);
}

int
launch_start(struct app *app, const struct launch_req *q, json_object **out, struct derr *e)
{
	json_object *in = audit_in(q), *added = json_object_new_array(), *disp = NULL, *win = NULL;
	char **argv = NULL, **env = NULL;
	unsigned long *before = NULL;
	struct lproc *p = NULL;
	size_t nb = 0;
	int rc = -1, waited = 0;

	*out = NULL;
	if ((q->command == NULL) == (q->open == NULL)) {
		derr_set(e, DERR_INVALID, "command", "give command (with args) or open, not both");
		goto out;
	}
	if (launch_args_valid(q->args, e) != 0 || prepare(app, q, in, added, &argv, &disp, e) != 0)
		goto out;
	if (launch_win_snapshot(app, q->task_id, &before, &nb, e) != 0) {
		audit_refusal(app, q->task_id, in, e);
		goto out;
	}
	env = launch_env(json_object_object_get(disp, "env"));
	if (start_proc(app, q->task_id, argv, env, json_object_get_string(
	    json_object_object_get(disp, "name")), in, &p, e) != 0) {
		audit_refusal(app, q->task_id, in, e);
		goto out;
	}
	if (ended_meanwhile(app, p, e) != 0)
		goto out;
	launch_win_wait(app, p, before, nb, q->wait_ms, &win, &waited);
	*out = result(p, argv, added, win, waited, q->wait_ms);
	rc = 0;
out:
	json_object_put(in);
	json_object_put(added);
	json_object_put(disp);
	json_object_put(win);
	launch_argv_free(argv);
	launch_argv_free(env);
	free(before);
	return rc;
}

/* ---- stop and list ---- */

static bool
task_running(const char *task_id, bool all)
{
	for (size_t i = 0; i < LAUNCH_MAX; i++)
		if (procs[i].watching && procs[i].pid > 0 &&
		    (all || strcmp(procs[i].task_id, task_id) == 0))
			return true;
	return false;
}

/* Stops the processes of task_id (every task's when all). */
static void
stop_where(const char *task_id, bool all)
{
	pid_t pids[LAUNCH_MAX];
	size_t n = 0, i;
	struct timespec dl;
	int64_t t0 = mono_us();
	bool killed = false;

	launch_lock();
	for (i = 0; i < LAUNCH_MAX; i++) {
		struct lproc *p = &procs[i];

		if (p->watching && p->pid > 0 && (all || strcmp(p->task_id, task_id) == 0)) {
			p->stop = true;
			pids[n++] = p->pid;
		}
	}
	launch_unlock();
	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		launch_kill_session(pids[i], SIGTERM);
	launch_lock();
	while (task_running(task_id, all)) {
		int64_t left = LAUNCH_STOP_GRACE_MS + 1000 - (mono_us() - t0) / 1000;

		if (!killed && left <= 1000) {
			launch_unlock();
			for (i = 0; i < n; i++)
				launch_kill_session(pids[i], SIGKILL);
			killed = true;
			launch_lock();
			continue;
		}
		if (left <= 0) {
			log_warn("launched processes of %s did not end after SIGKILL",
			    all ? "detmd" : task_id);
			break;
		}
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 50 * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&cv, &mu, &dl);
	}
	launch_unlock();
}

void
launch_stop_task(const char *task_id)
{
	if (task_id != NULL) {
		stop_where(task_id, false);
		launch_exec_stop_task(task_id);
	}
}

void
launch_shutdown(void)
{
	stop_where("", true);
}

json_object *
launch_list(const char *task_id)
{
	static const char *const states[] = { "free", "running", "exited", "stopped" };
	json_object *arr = NULL;
	const struct lproc *sorted[LAUNCH_MAX];
	size_t n = 0, i, j;
	char when[ISO_TIME_LEN], wid[24];

	launch_lock();
	for (i = 0; i < LAUNCH_MAX; i++)
		if (procs[i].state != L_FREE && procs[i].pid > 0 &&
		    strcmp(procs[i].task_id, task_id) == 0)
			sorted[n++] = &procs[i];
	for (i = 1; i < n; i++)         /* oldest first */
		for (j = i; j > 0 && sorted[j]->started_ms < sorted[j - 1]->started_ms; j--) {
			const struct lproc *t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		const struct lproc *p = sorted[i];
		json_object *o = json_object_new_object();

		if (arr == NULL)
			arr = json_object_new_array();
		iso_time(p->started_ms, when);
		json_object_object_add(o, "pid", json_object_new_int(p->pid));
		json_object_object_add(o, "program", json_object_new_string(p->program));
		json_object_object_add(o, "command", json_object_new_string(p->command));
		json_object_object_add(o, "display", json_object_new_string(p->display));
		json_object_object_add(o, "started_at", json_object_new_string(when));
		json_object_object_add(o, "status", json_object_new_string(states[p->state]));
		if (p->state != L_RUNNING && p->exit_code >= 0)
			json_object_object_add(o, "exit_code", json_object_new_int(p->exit_code));
		if (p->sig != 0)
			json_object_object_add(o, "signal", json_object_new_int(p->sig));
		if (p->window != 0) {
			snprintf(wid, sizeof wid, "0x%lx", p->window);
			json_object_object_add(o, "window_id", json_object_new_string(wid));
			json_object_object_add(o, "window_title", json_object_new_string(p->window_title));
		}
		json_object_object_add(o, "action_id", p->action_id[0] ?
		    json_object_new_string(p->action_id) : NULL);
		json_object_object_add(o, "lines_logged", json_object_new_int((int)p->lines_logged));
		json_object_object_add(o, "lines_dropped", json_object_new_int((int)p->lines_dropped));
		json_object_array_add(arr, o);
	}
	launch_unlock();
	return arr;
}
