/*
 * display.c - the display registry: per-task Xvfb processes and the cached
 * Xlib connection of every display (see display.h for the threading rule).
 *
 * Owns: the registry (an array of struct dentry, guarded by reg_lock), each
 * entry's connection (guarded by the entry's own mutex), the Xvfb and
 * window-manager child processes, and DATA_DIR/displays/N.{auth,pid}.
 *
 * Entry life: display_start creates an entry (state RUNNING) and puts it in
 * the table; display_stop unlinks it, marks it STOPPED, closes its
 * connection under its mutex (so after any lease in flight) and kills the
 * processes. Entries are reference counted (the table holds one ref, each
 * lease one), so a stop racing a lease never frees memory in use. The
 * shared desktop is a static entry that is never unlinked.
 *
 * Keyboard map: typing keeps spare keycodes bound (xinput.h); a janitor
 * thread looks at every display once a second and, when nobody holds it
 * (trylock), lets xinput_idle restore the map of one idle for
 * XINPUT_IDLE_MS. close_conn restores it too (xinput_forget).
 *
 * Waiting for a held entry (lock_bounded) is bounded by X server silence:
 * a probe (xalive.h) tells a busy holder from one stuck in Xlib on a
 * stopped or hung server; the waiter then fails (DERR_DISPLAY_UNRESPONSIVE)
 * having changed nothing, and teardown kills such a server before it takes
 * the mutex.
 *
 * Lock order: reg_lock, then nothing; an entry mutex, then auth_lock or
 * xinput's cache lock. reg_lock is never taken while waiting for an entry
 * mutex (the janitor only trylocks entries).
 *
 * The X server processes (Xvfb, the window manager, their cookie files and
 * stopping them) are display_proc.c's, over display_int.h.
 *
 * Does not: know about tasks in the database (the API layer reads task
 * metadata), scale coordinates, or log actions.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <X11/extensions/Xdamage.h>

#include "a11y.h"
#include "core/log.h"
#include "core/nowait.h"
#include "core/proc.h"
#include "core/util.h"
#include "display.h"
#include "display_int.h"
#include "xalive.h"
#include "xcap.h"
#include "xerr.h"
#include "xhist.h"
#include "xinput.h"

#define FIRST_NUMBER 100
#define LAST_NUMBER 999
#define START_TRIES 8
#define LOCK_SLICE_MS 100   /* lock_bounded polls its probe this often */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t auth_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct config *cfg;
static char *dir;               /* DATA_DIR/displays */
static char *log_dir;           /* DATA_DIR/logs */
static struct dentry **table;   /* cfg->max_displays slots */
static struct dentry shared = { .mu = PTHREAD_MUTEX_INITIALIZER, .refs = 1, .look = { 1.0, 0, 0 } };
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool running, stop;
} jan = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* ---- small helpers ---- */

static int lock_bounded(struct dentry *de, int64_t *alive_us, struct derr *e);

/* reg_lock held: the registry's invariants (debug and ASan builds; compiled
 * out under NDEBUG). Entries in the table are RUNNING or DIED (STOPPED
 * ones have left it), hold the table's reference, are managed, carry a
 * task id and the name of their number; no two share a number, and no
 * task has two running displays. */
static void
registry_check_locked(void)
{
#ifndef NDEBUG
	for (size_t i = 0; table != NULL && i < (size_t)cfg->max_displays; i++) {
		const struct dentry *a = table[i];
		char name[16];

		if (a == NULL)
			continue;
		assert(a->state == D_RUNNING || a->state == D_DIED);
		assert(a->refs >= 1 && a->managed && id_valid(a->task_id));
		assert(a->number >= FIRST_NUMBER && a->number <= LAST_NUMBER);
		snprintf(name, sizeof name, ":%d", a->number);
		assert(strcmp(a->name, name) == 0);
		for (size_t j = i + 1; j < (size_t)cfg->max_displays; j++) {
			const struct dentry *b = table[j];

			assert(b == NULL || b->number != a->number);
			assert(b == NULL || strcmp(a->task_id, b->task_id) != 0 ||
			    a->state != D_RUNNING || b->state != D_RUNNING);
		}
	}
#endif
}

static bool
file_exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

static bool
number_taken(int n)
{
	char path[64];
	size_t i;

	for (i = 0; i < (size_t)cfg->max_displays; i++)
		if (table[i] != NULL && table[i]->number == n)
			return true;
	snprintf(path, sizeof path, "/tmp/.X11-unix/X%d", n);
	if (file_exists(path))
		return true;
	snprintf(path, sizeof path, "/tmp/.X%d-lock", n);
	return file_exists(path);
}

static Display *
open_conn(const char *name, const unsigned char *cookie)
{
	Display *d;

	pthread_mutex_lock(&auth_lock);
	if (cookie != NULL)
		XSetAuthorization((char *)(uintptr_t)"MIT-MAGIC-COOKIE-1", 18,
		    (char *)(uintptr_t)cookie, COOKIE_LEN);
	d = XOpenDisplay(name);
	if (cookie != NULL)
		XSetAuthorization(NULL, 0, NULL, 0);
	pthread_mutex_unlock(&auth_lock);
	if (d != NULL) {
		xerr_watch(d);
		xinput_prepare(d);
	}
	return d;
}

/* Entry mutex held: after (re)connecting, ask to hear about drawing on
 * the screen (one DamageNotify each time the damage region goes from empty
 * to non-empty; drain_damage re-arms it). */
static void
watch_damage(struct dentry *de)
{
	int ev, err;

	de->damage = 0;
	if (!XDamageQueryExtension(de->d, &ev, &err))
		return;
	xerr_begin();
	de->damage = XDamageCreate(de->d, DefaultRootWindow(de->d), XDamageReportNonEmpty);
	de->damage_event = ev + XDamageNotify;
	XSync(de->d, False);
	if (xerr_last() != 0)
		de->damage = 0;
	de->damage_seq++;       /* a new connection: assume something changed */
}

/* Entry mutex held: reads what the server sent without blocking; counts
 * damage and re-arms the report. Other events are dropped. A lease leaves
 * the re-arm request in Xlib's buffer (flush false): the lease's own
 * requests carry it, or display_unlease flushes it. */
static void
drain_damage(struct dentry *de, bool flush)
{
	bool damaged = false;

	if (de->damage == 0)
		return;
	while (XEventsQueued(de->d, QueuedAfterReading) > 0) {
		XEvent ev;

		XNextEvent(de->d, &ev);
		if (ev.type == de->damage_event)
			damaged = true;
	}
	if (damaged) {
		de->damage_seq++;
		XDamageSubtract(de->d, de->damage, None, None);
		if (flush)
			XFlush(de->d);
	}
}

/* Entry mutex held. */
static void
close_conn(struct dentry *de)
{
	xcap_free(de->cap);
	de->cap = NULL;
	de->damage = 0;         /* dies with the connection */
	if (de->d != NULL) {
		bool dead = xerr_io_dead(de->d);

		xinput_forget(de->d);   /* restores the keyboard map if alive */
		xerr_forget(de->d);
		/* After an I/O error Xlib must not write to the socket again;
		 * XCloseDisplay still frees the structure. */
		(void)dead;
		XCloseDisplay(de->d);
		de->d = NULL;
	}
}

static void
unref(struct dentry *de)
{
	bool last;

	if (de == NULL || de == &shared)
		return;
	pthread_mutex_lock(&reg_lock);
	last = --de->refs == 0;
	pthread_mutex_unlock(&reg_lock);
	if (!last)
		return;
	pthread_mutex_destroy(&de->mu);
	free(de);
}

static void
remove_files(int number)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s/%d.pid", dir, number);
	unlink(path);
	snprintf(path, sizeof path, "%s/%d.auth", dir, number);
	unlink(path);
}

/* After OUR Xvfb of that number is dead (never for a number another
 * server holds): the socket and lock that a server killed with SIGKILL (no
 * clean exit within STOP_GRACE_MS on a loaded machine) leaves in /tmp.
 * Left there they keep the number taken (number_taken) for every later
 * detmd and X server; the desktop suite saw the socket outlive a completed
 * task under load. */
static void
remove_x_files(int number)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "/tmp/.X11-unix/X%d", number);
	unlink(path);
	snprintf(path, sizeof path, "/tmp/.X%d-lock", number);
	unlink(path);
}

/* ---- start ---- */

static int
write_pidfile(const struct dentry *de)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof path, "%s/%d.pid", dir, de->number);
	f = fopen(path, "we");
	if (f == NULL)
		return -1;
	fprintf(f, "%ld %s\n", (long)de->pid, de->task_id);
	return fclose(f);
}

/* The switches a11y_describe's env leaves to us: Gecko shows its tree
 * only with GNOME_ACCESSIBILITY, LibreOffice through its GTK3 plugin, and
 * GTK and Qt pick X11 even when the host session is Wayland. */
static void
env_extra(json_object *o)
{
	static const char *const kv[][2] = {
		{ "GNOME_ACCESSIBILITY", "1" }, { "SAL_USE_VCLPLUGIN", "gtk3" },
		{ "GDK_BACKEND", "x11" }, { "QT_QPA_PLATFORM", "xcb" },
	};
	json_object *env;

	if (!json_object_object_get_ex(o, "env", &env) || !json_object_is_type(env, json_type_object))
		return;
	for (size_t i = 0; i < ARRAY_LEN(kv); i++)
		if (!json_object_object_get_ex(env, kv[i][0], NULL))
			json_object_object_add(env, kv[i][0], json_object_new_string(kv[i][1]));
}

static json_object *
entry_json(const struct dentry *de)
{
	json_object *o = json_object_new_object();
	static const char *const states[] = { "running", "died", "stopped" };
	char when[ISO_TIME_LEN], res[32];

	json_object_object_add(o, "name", json_object_new_string(de->name));
	if (de->managed) {
		json_object_object_add(o, "number", json_object_new_int(de->number));
		json_object_object_add(o, "task_id", json_object_new_string(de->task_id));
		json_object_object_add(o, "width", json_object_new_int(de->width));
		json_object_object_add(o, "height", json_object_new_int(de->height));
		snprintf(res, sizeof res, "%dx%d", de->width, de->height);
		json_object_object_add(o, "resolution", json_object_new_string(res));
		json_object_object_add(o, "pid", json_object_new_int(de->pid));
		json_object_object_add(o, "state", json_object_new_string(states[de->state]));
		json_object_object_add(o, "xauthority", json_object_new_string(de->auth_path));
		iso_time(de->started_at, when);
		json_object_object_add(o, "started_at", json_object_new_string(when));
		snprintf(res, sizeof res, "%.1f", (double)de->start_us / 1000.0);
		json_object_object_add(o, "start_ms", json_object_new_double_s((double)de->start_us / 1000.0, res));
		if (de->wm_pid > 0)
			json_object_object_add(o, "wm_pid", json_object_new_int(de->wm_pid));
		json_object_object_add(o, "window_manager", de->wm_pid > 0 ?
		    json_object_new_string(cfg->window_manager) : NULL);
		a11y_describe(de->number, o);   /* "env", "a11y" (a11y.h; its lock is a leaf) */
		env_extra(o);
	}
	return o;
}

/* start_lock held: a free slot of the table for task_id's display, after
 * stopping a dead display the task still has. SIZE_MAX with e set when the
 * task has a running display (409) or every slot is in use (503). */
static size_t
slot_claim(const char *task_id, struct derr *e)
{
	size_t slot = SIZE_MAX, i;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < (size_t)cfg->max_displays; i++) {
		if (table[i] != NULL && strcmp(table[i]->task_id, task_id) == 0 &&
		    table[i]->state == D_RUNNING) {
			derr_set(e, DERR_CONFLICT, "display", "task %s already has display %s",
			    task_id, table[i]->name);
			pthread_mutex_unlock(&reg_lock);
			return SIZE_MAX;
		}
		if (table[i] != NULL && strcmp(table[i]->task_id, task_id) == 0)
			slot = i;       /* a died display: replace it */
	}
	pthread_mutex_unlock(&reg_lock);
	if (slot != SIZE_MAX) {
		(void)display_stop(task_id);
		slot = SIZE_MAX;
	}
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < (size_t)cfg->max_displays && slot == SIZE_MAX; i++)
		if (table[i] == NULL)
			slot = i;
	pthread_mutex_unlock(&reg_lock);
	if (slot == SIZE_MAX)
		derr_set(e, DERR_UNAVAILABLE, "display",
		    "all %ld task displays are in use (ACU_MAX_DISPLAYS)", cfg->max_displays);
	return slot;
}

/* start_lock held: picks a free display number for de, writes its cookie
 * file and starts Xvfb there, moving on to the next number when another X
 * server won the race. 0, or -1 with e set (nothing left behind). */
static int
xvfb_spawn(struct dentry *de, struct derr *e)
{
	int tries, r;

	de->number = FIRST_NUMBER;
	for (tries = 0; tries < START_TRIES; tries++) {
		pthread_mutex_lock(&reg_lock);
		while (de->number <= LAST_NUMBER && number_taken(de->number))
			de->number++;
		pthread_mutex_unlock(&reg_lock);
		if (de->number > LAST_NUMBER)
			return derr_set(e, DERR_UNAVAILABLE, "display",
			    "no free display number from :%d to :%d", FIRST_NUMBER, LAST_NUMBER);
		snprintf(de->auth_path, sizeof de->auth_path, "%s/%d.auth", dir, de->number);
		if (dproc_write_auth(de->auth_path, de->number, de->cookie) != 0)
			return derr_set(e, DERR_INTERNAL, NULL, "cannot write the display's auth file");
		r = dproc_xvfb_launch(de, cfg, log_dir, e);
		if (r == 0)
			return 0;
		remove_files(de->number);       /* failed, or lost the number: next */
		if (r < 0)
			return -1;
		de->number++;
	}
	return derr_set(e, DERR_UNAVAILABLE, "display", "Xvfb failed to start %d times; see %s/xvfb-*.log",
	    START_TRIES, log_dir);
}

/* Opens detmd's own connection to a started Xvfb (capture, damage). 0, or
 * -1 with e set after stopping the server. */
static int
xvfb_connect(struct dentry *de, struct derr *e)
{
	pthread_mutex_lock(&de->mu);
	de->d = open_conn(de->name, de->cookie);
	if (de->d != NULL) {
		de->cap = xcap_new(de->d);
		watch_damage(de);
		de->hist = xhist_start(open_conn(de->name, de->cookie), de->name);
	}
	pthread_mutex_unlock(&de->mu);
	if (de->d != NULL)
		return 0;
	derr_set(e, DERR_UNAVAILABLE, "display", "Xvfb %s started but refuses connections", de->name);
	dproc_kill_wait(de->pid);
	remove_files(de->number);
	remove_x_files(de->number);
	return -1;
}

int
display_start(const char *task_id, int width, int height, json_object **info,
    struct derr *e)
{
	struct dentry *de = NULL;
	size_t slot;
	int rc = -1;

	*info = NULL;
	if (width == 0 || height == 0) {
		width = cfg->display_w;
		height = cfg->display_h;
	}
	/* One start at a time: numbers are picked and claimed atomically with
	 * respect to this daemon; other X servers are seen through their
	 * socket and lock files, and a lost race makes Xvfb exit (retry). */
	pthread_mutex_lock(&start_lock);
	slot = slot_claim(task_id, e);
	if (slot == SIZE_MAX)
		goto out;
	de = xcalloc(1, sizeof *de);
	pthread_mutex_init(&de->mu, NULL);
	de->refs = 1;
	de->managed = true;
	de->look.scale = 1.0;
	de->width = width;
	de->height = height;
	snprintf(de->task_id, sizeof de->task_id, "%s", task_id);
	dproc_random_bytes(de->cookie, COOKIE_LEN);
	if (xvfb_spawn(de, e) != 0)
		goto out;
	snprintf(de->name, sizeof de->name, ":%d", de->number);
	de->started_at = now_ms();
	if (write_pidfile(de) != 0)
		log_warn("cannot write the pid file for %s", de->name);
	if (xvfb_connect(de, e) != 0)
		goto out;
	pthread_mutex_lock(&de->mu);
	dwm_start(de, de->d, log_dir);
	pthread_mutex_unlock(&de->mu);
	(void)a11y_start(de->number, de->name, de->auth_path, dir);     /* logs; works without */
	pthread_mutex_lock(&reg_lock);
	de->state = D_RUNNING;
	table[slot] = de;
	registry_check_locked();
	pthread_mutex_unlock(&reg_lock);
	log_info("display %s (%dx%d) for task %s: Xvfb pid %ld ready in %.1f ms", de->name,
	    width, height, task_id, (long)de->pid, (double)de->start_us / 1000.0);
	*info = entry_json(de);
	de = NULL;
	rc = 0;
out:
	pthread_mutex_unlock(&start_lock);
	if (de != NULL) {
		pthread_mutex_destroy(&de->mu);
		free(de);
	}
	return rc;
}

/* ---- keyboard map janitor ---- */

/* Restores an idle display's keyboard map, unless someone holds it. */
static void
janitor_visit(struct dentry *de)
{
	if (pthread_mutex_trylock(&de->mu) != 0)
		return;
	if (de->d != NULL && !xerr_io_dead(de->d) && xinput_idle(de->d, XINPUT_IDLE_MS) == 1)
		log_info("display %s: keyboard map restored after %d ms without typing",
		    de->name, XINPUT_IDLE_MS);
	pthread_mutex_unlock(&de->mu);
}

static void
janitor_sweep(void)
{
	janitor_visit(&shared);
	for (size_t i = 0; i < (size_t)cfg->max_displays; i++) {
		struct dentry *de = NULL;

		pthread_mutex_lock(&reg_lock);
		if (table[i] != NULL && table[i]->state == D_RUNNING) {
			de = table[i];
			de->refs++;
		}
		pthread_mutex_unlock(&reg_lock);
		if (de != NULL) {
			janitor_visit(de);
			unref(de);
		}
	}
}

static void *
janitor_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&jan.mu);
	while (!jan.stop) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&jan.cv, &jan.mu, &ts);
		if (jan.stop)
			break;
		pthread_mutex_unlock(&jan.mu);
		janitor_sweep();
		pthread_mutex_lock(&jan.mu);
	}
	pthread_mutex_unlock(&jan.mu);
	return NULL;
}

static void
janitor_stop(void)
{
	if (!jan.running)
		return;
	pthread_mutex_lock(&jan.mu);
	jan.stop = true;
	pthread_cond_signal(&jan.cv);
	pthread_mutex_unlock(&jan.mu);
	pthread_join(jan.thread, NULL);
	jan.running = false;
}

/* ---- stop ---- */

static void
teardown(struct dentry *de)
{
	bool killed = false;
	int64_t alive;
	struct derr e;

	a11y_stop(de->number);
	/* A holder stuck in Xlib on a stopped or hung server lets go only
	 * when the server goes: kill it first, then the holder's call fails
	 * (xerr.h: an I/O error is not fatal) and gives the lease back. */
	if (pthread_mutex_trylock(&de->mu) != 0 && lock_bounded(de, &alive, &e) != 0) {
		log_warn("display %s of task %s: a reader holds it and its X server has not answered "
		    "for %ld ms; killing the server first, which fails the reader's call",
		    de->name, de->task_id, cfg->display_wait_ms);
		dproc_kill_wait(de->wm_pid);
		if (de->state != D_DIED)
			dproc_kill_wait(de->pid);
		killed = true;
		pthread_mutex_lock(&de->mu);
	}
	close_conn(de);
	xhist_stop(de->hist);
	de->hist = NULL;
	pthread_mutex_unlock(&de->mu);
	if (!killed) {
		dproc_kill_wait(de->wm_pid);
		if (de->state != D_DIED)
			dproc_kill_wait(de->pid);
	}
	remove_files(de->number);
	remove_x_files(de->number);
	log_info("display %s of task %s stopped", de->name, de->task_id);
}

int
display_stop(const char *task_id)
{
	struct dentry *de = NULL;
	size_t i;

	if (table == NULL || task_id == NULL)
		return 1;
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < (size_t)cfg->max_displays; i++)
		if (table[i] != NULL && strcmp(table[i]->task_id, task_id) == 0) {
			de = table[i];
			table[i] = NULL;
			if (de->state == D_RUNNING)
				de->state = D_STOPPED;
			break;
		}
	registry_check_locked();
	pthread_mutex_unlock(&reg_lock);
	if (de == NULL)
		return 1;
	teardown(de);
	unref(de);
	return 0;
}

void
display_shutdown(void)
{
	size_t i;

	janitor_stop();
	if (table == NULL)
		return;
	for (i = 0; i < (size_t)cfg->max_displays; i++) {
		char id[ID_LEN] = "";

		pthread_mutex_lock(&reg_lock);
		if (table[i] != NULL)
			snprintf(id, sizeof id, "%s", table[i]->task_id);
		pthread_mutex_unlock(&reg_lock);
		if (id[0] != '\0')
			display_stop(id);
	}
	pthread_mutex_lock(&shared.mu);
	close_conn(&shared);
	xhist_stop(shared.hist);
	shared.hist = NULL;
	pthread_mutex_unlock(&shared.mu);
	if (shared.wm_pid > 0) {
		dproc_kill_wait(shared.wm_pid);
		shared.wm_pid = 0;
	}
	if (shared.pid > 0) {
		log_info("stopping the shared display %s (Xvfb pid %ld)", shared.name, (long)shared.pid);
		dproc_kill_wait(shared.pid);
		shared.pid = 0;
	}
}

/* ---- lease ---- */

/* reg_lock held: the task's entry (any state) or NULL. */
static struct dentry *
find_task(const char *task_id)
{
	size_t i;

	for (i = 0; i < (size_t)cfg->max_displays; i++)
		if (table[i] != NULL && strcmp(table[i]->task_id, task_id) == 0)
			return table[i];
	return NULL;
}

bool
display_has(const char *task_id)
{
	bool r;

	pthread_mutex_lock(&reg_lock);
	r = table != NULL && find_task(task_id) != NULL;
	pthread_mutex_unlock(&reg_lock);
	return r;
}

int
display_task_number(const char *task_id)
{
	struct dentry *de;
	int n = -1;

	if (task_id == NULL)
		return -1;
	pthread_mutex_lock(&reg_lock);
	de = table != NULL ? find_task(task_id) : NULL;
	if (de != NULL && de->state == D_RUNNING)
		n = de->number;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

/* A per-task Xvfb that exited on its own: reap it, mark the entry died. */
static bool
check_died(struct dentry *de)
{
	int status;

	if (!de->managed || de->state != D_RUNNING)
		return de->state == D_DIED;
	if (waitpid(de->pid, &status, WNOHANG) != de->pid)
		return false;
	pthread_mutex_lock(&reg_lock);
	de->state = D_DIED;
	de->exit_status = status;
	registry_check_locked();
	pthread_mutex_unlock(&reg_lock);
	log_warn("Xvfb %s of task %s died (status %d)", de->name, de->task_id, status);
	return true;
}

/* Fills e: de's X server has not answered for silent_us (waited_us in
 * all), says what to do. Returns -1. */
static int
unresponsive(const struct dentry *de, struct derr *e, const char *what, int64_t silent_us,
    int64_t waited_us)
{
	char owner[64] = "", pid[48] = "", fix[160] = "";

	if (de->managed) {
		snprintf(owner, sizeof owner, " of task %s", de->task_id);
		snprintf(fix, sizeof fix, ", or replace the display (DELETE then POST "
		    "/api/tasks/%s/display)", de->task_id);
	}
	if (de->pid > 0)
		snprintf(pid, sizeof pid, " (pid %ld)", (long)de->pid);
	return derr_set(e, DERR_DISPLAY_UNRESPONSIVE, "display",
	    "display %s%s %s has not answered for %lld ms (waited %lld ms): the X server is "
	    "stopped or hung and nothing was done; retry once it answers again (a stopped "
	    "Xvfb%s resumes with SIGCONT)%s", de->name, owner, what,
	    (long long)(silent_us / 1000), (long long)(waited_us / 1000), pid, fix);
}

/* Before opening a connection off the HTTP worker (XOpenDisplay waits
 * without bound for the setup reply): 0 when the server answers a probe
 * before display_wait_ms of silence counted from alive_us (when it last
 * answered, as far as lock_entry knows; at least LOCK_SLICE_MS from now),
 * or cannot be probed; else -1 with e. The probe's connection stays open
 * in *probe_fd (-1 if none) until the caller has opened its own: an X
 * server started without -noreset resets when its last client leaves, and
 * a probe closed first would make it refuse the XOpenDisplay that follows
 * (a user's shared Xvfb with no other client did, every first open). */
static int
probe_before_open(const struct dentry *de, int64_t alive_us, int *probe_fd, struct derr *e)
{
	const int64_t start = mono_us(), wait_us = (int64_t)cfg->display_wait_ms * 1000;
	int64_t until = alive_us + wait_us, left;
	int fd = xalive_start(de->name, de->managed ? de->cookie : NULL, COOKIE_LEN), rc = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (until < start + LOCK_SLICE_MS * 1000)
		until = start + LOCK_SLICE_MS * 1000;
	while (fd >= 0 && !xalive_answered(fd)) {
		left = until - mono_us();
		if (left <= 0) {
			rc = unresponsive(de, e, "has no connection and its X server",
			    mono_us() - alive_us, mono_us() - alive_us);
			break;
		}
		(void)poll(&p, 1, (int)(left / 1000) + 1);
	}
	if (rc != 0) {
		xalive_end(fd);
		fd = -1;
	}
	*probe_fd = fd;
	return rc;
}

/* The entry's mutex, held by another thread: waited for in slices while a
 * probe (xalive.h) asks the X server whether it answers. A holder may take
 * as long as it likes while the server answers; once the server has been
 * silent for display_wait_ms (the holder is stuck inside Xlib on a stopped
 * or hung server) the wait gives up with DERR_DISPLAY_UNRESPONSIVE, having
 * touched nothing. A display that cannot be probed (not local) is waited
 * for as Xlib would, without bound. */
static int
lock_bounded(struct dentry *de, int64_t *alive_us, struct derr *e)
{
	const int64_t wait_us = (int64_t)cfg->display_wait_ms * 1000;
	/* Most waits end within a slice: no probe for those. */
	int64_t now = mono_us(), start = now, alive = now, next_probe = now + LOCK_SLICE_MS * 1000;
	int fd = -1, rc = -1, r;
	struct timespec until;

	for (;;) {
		if (fd >= 0 && xalive_answered(fd)) {
			xalive_end(fd);
			fd = -1;
			alive = now;
			next_probe = now + wait_us / 2;
		}
		if (fd < 0 && now >= next_probe) {
			fd = xalive_start(de->name, de->managed ? de->cookie : NULL, COOKIE_LEN);
			if (fd < 0) {   /* nothing to probe: wait as Xlib would */
				alive = now;
				next_probe = now + wait_us / 2;
			}
		}
		if (now - alive >= wait_us)
			break;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += LOCK_SLICE_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if ((r = pthread_mutex_timedlock(&de->mu, &until)) == 0) {
			rc = 0;
			*alive_us = fd >= 0 && xalive_answered(fd) ? mono_us() : alive;
			goto out;
		}
		if (r != ETIMEDOUT)
			break;
		now = mono_us();
	}
	unresponsive(de, e, "is held by another reader and its X server", now - alive, now - start);
out:
	xalive_end(fd);
	return rc;
}

/* The entry's mutex: taken, or in nowait mode (nowait.h) refused when
 * another thread holds it (a screenshot, a recording's frame, a slow
 * action); elsewhere waited for, within lock_bounded's bound. */
static int
lock_entry(struct dentry *de, int64_t *alive_us, struct derr *e)
{
	*alive_us = mono_us();
	if (pthread_mutex_trylock(&de->mu) == 0)
		return 0;
	if (nowait_active())
		return nowait_refuse(e, "another thread holds the display");
	return lock_bounded(de, alive_us, e);
}

int
display_lease(const char *task_id, enum display_pick pick, struct display_lease *l,
    struct derr *e)
{
	struct dentry *de = NULL;
	int64_t alive_us;
	int probe_fd = -1;
	int sw, sh;

	memset(l, 0, sizeof *l);
	if (pick != DISPLAY_SHARED && task_id != NULL) {
		pthread_mutex_lock(&reg_lock);
		de = find_task(task_id);
		if (de != NULL)
			de->refs++;
		pthread_mutex_unlock(&reg_lock);
		if (de == NULL && pick == DISPLAY_TASK)
			return derr_set(e, DERR_CONFLICT, "task_id",
			    "task %s has no display of its own running; start one with "
			    "POST /api/tasks/%s/display", task_id, task_id);
	}
	if (de == NULL)
		de = &shared;
	if (lock_entry(de, &alive_us, e) != 0) {
		unref(de);
		return -1;
	}
	if (de->managed) {
		if (de->state == D_STOPPED || check_died(de)) {
			bool died = de->state == D_DIED;
			char name[16];

			snprintf(name, sizeof name, "%s", de->name);
			close_conn(de);
			pthread_mutex_unlock(&de->mu);
			unref(de);
			if (died) {
				/* The entry stays (DIED) until the task gets a new
				 * display (display_start replaces it) or ends, so
				 * every caller hears "died", not only the first one
				 * (a recorder or a wait leasing first used to make
				 * the agent's next call a 409 "no display"). */
				return derr_set(e, DERR_UNAVAILABLE, "display",
				    "display %s of task %s died (Xvfb exited); start a new one with "
				    "POST /api/tasks/%s/display", name, task_id, task_id);
			}
			return derr_set(e, DERR_CONFLICT, "task_id",
			    "display %s of task %s has been stopped", name, task_id);
		}
	}
	if (de->d != NULL && xerr_io_dead(de->d))
		close_conn(de);
	if (de->d == NULL && nowait_active()) {
		pthread_mutex_unlock(&de->mu);
		unref(de);
		return nowait_refuse(e, "the display's connection has to be opened");
	}
	if (de->d == NULL && probe_before_open(de, alive_us, &probe_fd, e) != 0) {
		pthread_mutex_unlock(&de->mu);
		unref(de);
		return -1;
	}
	if (de->d == NULL) {
		de->d = open_conn(de->name, de->managed ? de->cookie : NULL);
		xalive_end(probe_fd);
		if (de->d == NULL) {
			pthread_mutex_unlock(&de->mu);
			unref(de);
			if (de == &shared)
				return derr_set(e, DERR_UNAVAILABLE, "display",
				    "the shared display %s is not reachable (no X server there? "
				    "give the task its own display with display: true)", shared.name);
			return derr_set(e, DERR_UNAVAILABLE, "display", "display %s is not reachable",
			    de->name);
		}
		de->cap = xcap_new(de->d);
		watch_damage(de);
		if (de->hist == NULL && !de->managed)
			de->hist = xhist_start(open_conn(de->name, NULL), de->name);
	}
	drain_damage(de, false);
	sw = DisplayWidth(de->d, DefaultScreen(de->d));
	sh = DisplayHeight(de->d, DefaultScreen(de->d));
	de->width = sw;
	de->height = sh;
	l->d = de->d;
	l->cap = de->cap;
	l->width = sw;
	l->height = sh;
	l->name = de->name;
	l->managed = de->managed;
	l->look = &de->look;
	l->damage = de->damage != 0;
	l->damage_seq = de->damage_seq;
	l->entry = de;
	return 0;
}

int
display_damage_peek(const char *task_id, uint64_t *seq)
{
	struct dentry *de = NULL;
	int r = 0;

	if (task_id != NULL && task_id[0] != '\0') {
		pthread_mutex_lock(&reg_lock);
		de = table != NULL ? find_task(task_id) : NULL;
		if (de != NULL)
			de->refs++;
		pthread_mutex_unlock(&reg_lock);
	}
	if (de == NULL)
		de = &shared;
	if (pthread_mutex_trylock(&de->mu) != 0)
		goto out;       /* leased: whoever holds it drains the damage */
	if (de->d != NULL && de->damage != 0 && !xerr_io_dead(de->d) &&
	    (!de->managed || de->state == D_RUNNING)) {
		drain_damage(de, true);
		if (!xerr_io_dead(de->d)) {
			*seq = de->damage_seq;
			r = 1;
		}
	}
	pthread_mutex_unlock(&de->mu);
out:
	if (de != &shared)
		unref(de);
	return r;
}

struct xhist *
display_hist(const struct display_lease *l)
{
	return l->entry != NULL ? l->entry->hist : NULL;
}

void
display_event(struct display_lease *l, const XEvent *ev)
{
	struct dentry *de = l->entry;

	if (de == NULL || de->damage == 0 || ev->type != de->damage_event ||
	    ((const XDamageNotifyEvent *)(const void *)ev)->damage != de->damage)
		return;
	de->damage_seq++;
	l->damage_seq = de->damage_seq;
	XDamageSubtract(de->d, de->damage, None, None);
}

void
display_unlease(struct display_lease *l)
{
	struct dentry *de;

	if (l == NULL || l->entry == NULL)
		return;
	de = l->entry;
	l->entry = NULL;
	l->d = NULL;
	if (de->d != NULL && xerr_io_dead(de->d))
		close_conn(de);
	else if (de->d != NULL)
		XFlush(de->d);  /* drain_damage's re-arm, if nothing sent it */
	pthread_mutex_unlock(&de->mu);
	unref(de);
}

int64_t
display_lease_gen(const struct display_lease *l)
{
	const struct dentry *de = l->entry;

	return de != NULL && de->managed ? de->started_at : 0;
}

Display *
display_open_extra(const struct display_lease *l)
{
	const struct dentry *de = l->entry;
	Display *d;

	if (de == NULL)
		return NULL;
	pthread_mutex_lock(&auth_lock);
	if (de->managed)
		XSetAuthorization((char *)(uintptr_t)"MIT-MAGIC-COOKIE-1", 18,
		    (char *)(uintptr_t)de->cookie, COOKIE_LEN);
	d = XOpenDisplay(de->name);
	if (de->managed)
		XSetAuthorization(NULL, 0, NULL, 0);
	pthread_mutex_unlock(&auth_lock);
	if (d != NULL)
		xerr_watch(d);
	return d;
}

void
display_close_extra(Display *d)
{
	if (d == NULL)
		return;
	xerr_forget(d);
	XCloseDisplay(d);
}

/* ---- listing ---- */

json_object *
display_list(void)
{
	json_object *out = json_object_new_object(), *arr = json_object_new_array(), *sh;
	size_t i;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; table != NULL && i < (size_t)cfg->max_displays; i++)
		if (table[i] != NULL)
			json_object_array_add(arr, entry_json(table[i]));
	pthread_mutex_unlock(&reg_lock);
	json_object_object_add(out, "displays", arr);
	sh = json_object_new_object();
	json_object_object_add(sh, "name", json_object_new_string(shared.name));
	json_object_object_add(out, "shared", sh);
	json_object_object_add(out, "max", json_object_new_int64(cfg ? cfg->max_displays : 0));
	json_object_object_add(out, "xvfb", json_object_new_boolean(display_xvfb_found()));
	json_object_object_add(out, "window_manager", display_wm_json());
	return out;
}

const char *
display_shared_name(void)
{
	return shared.name;
}

bool
display_xvfb_found(void)
{
	char full[PATH_MAX];

	return cfg != NULL && proc_find(cfg->xvfb, full, sizeof full);
}

/* ---- startup ---- */

/* Kills the Xvfb servers (and their process groups) a previous detmd
 * with this data dir left behind, and removes their files. */
static void
cleanup_stale(void)
{
	DIR *dh = opendir(dir);
	struct dirent *ent;

	if (dh == NULL)
		return;
	while ((ent = readdir(dh)) != NULL) {
		char path[PATH_MAX], auth[PATH_MAX];
		long pid = 0;
		int number;
		FILE *f;

		if (sscanf(ent->d_name, "%d.pid", &number) != 1 || strstr(ent->d_name, ".pid") == NULL)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
		snprintf(auth, sizeof auth, "%s/%d.auth", dir, number);
		f = fopen(path, "re");
		if (f != NULL) {
			if (fscanf(f, "%ld", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		if (pid > 1 && dproc_is_our_server((pid_t)pid, auth)) {
			int waited;

			log_info("removing display :%d (Xvfb pid %ld) left by an earlier detmd", number, pid);
			kill(-(pid_t)pid, SIGTERM);
			kill((pid_t)pid, SIGTERM);
			for (waited = 0; waited < STOP_GRACE_MS && dproc_alive((pid_t)pid); waited += 10)
				sleep_ms(10);
			if (dproc_alive((pid_t)pid)) {
				kill(-(pid_t)pid, SIGKILL);
				kill((pid_t)pid, SIGKILL);
				for (waited = 0; waited < STOP_GRACE_MS && dproc_alive((pid_t)pid); waited += 10)
					sleep_ms(10);
			}
			if (!dproc_alive((pid_t)pid))
				remove_x_files(number);
		}
		remove_files(number);
	}
	closedir(dh);
}

/* --shared-xvfb WxH: when nothing answers on the shared display, start an
 * Xvfb there (no cookie, like the Python DETM's :99, so agents' own
 * clients need only DISPLAY). It lives until detmd stops; one left by a
 * killed detmd answers at the next start and is used as it is. Failure is
 * logged, not fatal: task displays work without it. */
static void
shared_autostart(void)
{
	struct derr e;
	Display *d;
	int w = 0, h = 0, n = -1;
	char extra;

	if (cfg->shared_xvfb[0] == '\0')
		return;
	if (sscanf(cfg->shared_xvfb, "%dx%d%c", &w, &h, &extra) != 2 || w < 64 || h < 64 ||
	    w > 8192 || h > 8192 || sscanf(shared.name, ":%d", &n) != 1 || n < 0) {
		log_warn("--shared-xvfb %s for display %s: need WxH and a local :N display",
		    cfg->shared_xvfb, shared.name);
		return;
	}
	if ((d = XOpenDisplay(shared.name)) != NULL) {
		XCloseDisplay(d);
		log_info("the shared display %s answers; not starting one", shared.name);
		return;
	}
	shared.number = n;
	shared.width = w;
	shared.height = h;
	shared.auth_path[0] = '\0';
	derr_clear(&e);
	if (dproc_xvfb_launch(&shared, cfg, log_dir, &e) != 0) {
		log_warn("cannot start the shared display %s: %s", shared.name,
		    e.code != DERR_OK ? e.message : "the number is taken");
		shared.pid = 0;
		return;
	}
	log_info("started the shared display %s (%dx%d, Xvfb pid %ld)", shared.name, w, h,
	    (long)shared.pid);
	/* Ours, so it gets the window manager task displays get. */
	if ((d = XOpenDisplay(shared.name)) != NULL) {
		dwm_start(&shared, d, log_dir);
		XCloseDisplay(d);
	}
}

int
display_init(const struct config *c, struct derr *e)
{
	cfg = c;
	xerr_init();
	snprintf(shared.name, sizeof shared.name, "%s", c->display);
	dir = xasprintf("%s/displays", c->data_dir);
	log_dir = xasprintf("%s/logs", c->data_dir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot create %s: %s", dir, strerror(errno));
	table = xcalloc((size_t)c->max_displays, sizeof *table);
	dwm_init(c, c->data_dir);      /* not displays/: that holds only live displays' files */
	cleanup_stale();
	a11y_cleanup(dir);      /* the accessibility buses an earlier detmd left */
	shared_autostart();
	jan.stop = false;
	if (pthread_create(&jan.thread, NULL, janitor_main, NULL) == 0)
		jan.running = true;
	else
		log_warn("no keyboard map janitor thread: typed bindings stay until a "
		    "display closes");
	return 0;
}
