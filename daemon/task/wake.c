/*
 * wake.c - the wake-up queue and its delivery thread. See wake.h.
 *
 * Owns: a bounded FIFO of events (at most WAKE_QUEUE_MAX; posting to a full
 * queue drops the oldest, logged), one delivery thread, the sink settings
 * read from the config at wake_init, and the counters wake_stats reports.
 *
 * An event's life: queued (due now) -> in flight on the delivery thread,
 * which tries every sink still in its `todo` mask -> done when the mask is
 * empty (delivered), or back in the queue, due after a backoff of
 * base * 2^(attempt-1), with only the failed sinks left (a sink that took
 * the event is never sent it again) -> after the last attempt, dropped and
 * logged (failed). Events are independent: one waiting out its backoff does
 * not hold up the others. Delivery is sequential, so a slow sink (up to the
 * timeout) delays the events behind it, never a request thread.
 *
 * Invariants: the queue, the counters and `stopping` are guarded by `mu`;
 * only the delivery thread spawns (proc_spawn) or reaps children (it waits for its own
 * pid only, so it cannot reap another module's processes); a child runs in
 * its own process group with default signal dispositions and an empty mask,
 * its stdout and stderr append to DATA_DIR/logs/wake.log, and it is killed
 * (the whole group) at the timeout or at shutdown.
 *
 * Not here: what the events say (the wait engine, stuck.c), any retry
 * across restarts (the queue is in memory; a restart loses what is queued).
 */
#include "wake.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends/httpc.h"
#include "core/jx.h"
#include "core/log.h"
#include "core/proc.h"
#include "task.h"

extern char **environ;

#define WAKE_ARGV_MAX 32
#define WAKE_ARGS_BYTES 4096
#define WAKE_OUT_SCAN 65536      /* bytes of a CLI's stdout read for its "ok" */

enum wake_sink { SINK_OPENCLAW = 1, SINK_COMMAND = 2, SINK_URL = 4 };

enum wake_run_rc { RUN_OK = 0, RUN_FAILED = 1, RUN_MISSING = 2 };

struct wake_ev {
	struct wake_ev *next;
	char id[ID_LEN];
	char *kind;
	char *task_id;          /* NULL: no task */
	char *text;
	json_object *obj;       /* the event JSON */
	char *session;          /* the task's OpenClaw session key, or NULL */
	bool session_read;      /* looked up (once, on the delivery thread) */
	unsigned todo;          /* sinks still to deliver to */
	int attempts;
	int64_t due_us;         /* mono_us */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool started;
	atomic_bool stopping;
	struct wake_ev *head, *tail;
	size_t count;
	bool inflight;
	/* settings */
	char *openclaw;         /* NULL: off */
	char *cmd_buf;          /* the split command; argv points into it */
	char *cmd_argv[WAKE_ARGV_MAX + 1];
	char *url;              /* NULL: off */
	char *url_auth;         /* "Authorization: Bearer T" for it, or NULL */
	char *log_path;
	struct store *st;       /* for the task's session key; NULL: none */
	unsigned sinks;
	long timeout_ms, backoff_ms;
	long openclaw_timeout_ms;
	int max_attempts;
	bool openclaw_missing_logged;
	/* counters */
	int64_t posted, delivered, failed, dropped, unrouted, attempts;
} wake_state = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void
wake_ev_free(struct wake_ev *ev)
{
	if (ev == NULL)
		return;
	free(ev->kind);
	free(ev->task_id);
	free(ev->text);
	free(ev->session);
	json_object_put(ev->obj);
	free(ev);
}

/* Lock held. */
static void
wake_append(struct wake_ev *ev)
{
	ev->next = NULL;
	if (wake_state.tail != NULL)
		wake_state.tail->next = ev;
	else
		wake_state.head = ev;
	wake_state.tail = ev;
	wake_state.count++;
}

/* Lock held: unlinks ev (prev is its predecessor or NULL). */
static void
wake_unlink(struct wake_ev *prev, struct wake_ev *ev)
{
	if (prev != NULL)
		prev->next = ev->next;
	else
		wake_state.head = ev->next;
	if (wake_state.tail == ev)
		wake_state.tail = prev;
	ev->next = NULL;
	wake_state.count--;
}

/* Copies s cut to at most max bytes on a UTF-8 character boundary. */
static char *
wake_strcap(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return xstrdup(s);
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return xstrndup(s, max);
}

static void
wake_sleep_us(int64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Appends one header line to wake.log, so a child's output can be told
 * apart from the next one's. */
static void
wake_log_line(const struct wake_ev *ev, const char *sink)
{
	char ts[ISO_TIME_LEN], line[256];
	int fd, n;

	iso_time(now_ms(), ts);
	n = snprintf(line, sizeof line, "--- %s wake %s %s task %s -> %s (attempt %d)\n", ts,
	    ev->id, ev->kind, ev->task_id ? ev->task_id : "-", sink, ev->attempts + 1);
	fd = open(wake_state.log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (n > 0 && write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
		log_debug("cannot write %s", wake_state.log_path);
	close(fd);
}

/* A memfd holding data, positioned at 0, for a child's stdin; -1 on error. */
static int
wake_stdin_fd(const char *data, size_t len)
{
	int fd = memfd_create("detm-wake", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether the child's stdout (memfd at out) holds a line that is "ok"
 * (blanks around it aside); the output is copied to wake.log either way. */
static bool
wake_said_ok(int out)
{
	char buf[WAKE_OUT_SCAN + 1], *line, *save;
	ssize_t n;
	bool ok = false;
	int fd;

	if (out < 0 || lseek(out, 0, SEEK_SET) != 0 || (n = read(out, buf, WAKE_OUT_SCAN)) <= 0)
		return false;
	buf[n] = '\0';
	fd = open(wake_state.log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0 && write(fd, buf, (size_t)n) < 0)
		log_debug("cannot write %s", wake_state.log_path);
	if (fd >= 0)
		close(fd);
	for (line = strtok_r(buf, "\r\n", &save); line != NULL && !ok; line = strtok_r(NULL, "\r\n", &save)) {
		line += strspn(line, " \t");
		ok = strncmp(line, "ok", 2) == 0 && line[2 + strspn(line + 2, " \t")] == '\0';
	}
	return ok;
}

/* Runs argv (PATH lookup) with stdin from `in` (or /dev/null), waits up to
 * timeout_ms. RUN_MISSING when the program does not exist. ok_line: the
 * child's stdout is read; a line "ok" means it delivered, even if it then
 * failed to exit in time (OpenClaw's CLI prints it once the Gateway took
 * the event; killing it later must not send the event twice). */
static enum wake_run_rc
wake_run(char *const argv[], const char *in, size_t in_len, long timeout_ms, bool ok_line)
{
	enum wake_run_rc rc = RUN_FAILED;
	struct proc_io io = { .log = wake_state.log_path, .out_fd = -1, .extra_fd = -1,
		.search_path = true, .quiet_missing = true };
	int64_t deadline;
	pid_t pid;
	int status = 0, infd = -1, outfd = -1;
	bool killed = false;

	if (in != NULL && (infd = wake_stdin_fd(in, in_len)) < 0) {
		log_warn("wake: cannot make stdin for %s: %s", argv[0], strerror(errno));
		return RUN_FAILED;
	}
	if (ok_line && (outfd = memfd_create("detm-wake-out", MFD_CLOEXEC)) < 0)
		log_warn("wake: cannot capture the output of %s: %s", argv[0], strerror(errno));
	io.in_fd = infd;
	io.out_fd = outfd;
	if ((pid = proc_spawn(argv, environ, &io)) < 0) {
		if (errno == ENOENT)
			rc = RUN_MISSING;
		goto out;
	}
	deadline = mono_us() + (int64_t)timeout_ms * 1000;
	for (int64_t nap = 1000;; nap = nap < 20000 ? nap * 2 : 20000) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			log_warn("wake: waitpid %s: %s", argv[0], strerror(errno));
			goto out;
		}
		if (atomic_load(&wake_state.stopping) || mono_us() >= deadline) {
			if (!atomic_load(&wake_state.stopping))
				log_warn("wake: %s took longer than %ld ms; killed", argv[0], timeout_ms);
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			killed = true;
			break;
		}
		wake_sleep_us(nap);
	}
	if (ok_line && wake_said_ok(outfd)) {
		if (killed || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			log_info("wake: %s printed 'ok' before it %s: delivered, not sent again", argv[0],
			    killed ? "was killed" : "failed");
		rc = RUN_OK;
	} else if (killed) {
		rc = RUN_FAILED;
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		rc = RUN_OK;
	else if (WIFEXITED(status))
		log_warn("wake: %s exited with status %d", argv[0], WEXITSTATUS(status));
	else
		log_warn("wake: %s killed by signal %d", argv[0],
		    WIFSIGNALED(status) ? WTERMSIG(status) : -1);
out:
	if (infd >= 0)
		close(infd);
	if (outfd >= 0)
		close(outfd);
	return rc;
}

static bool
wake_to_openclaw(struct wake_ev *ev)
{
	/* The Python daemon's argv, order included; then the task's session
	 * (OpenClaw: a targeted wake of that session, at once). */
	char a1[] = "system", a2[] = "event", a3[] = "--text", a5[] = "--mode", a6[] = "now";
	char a7[] = "--session-key";
	char *argv[] = { wake_state.openclaw, a1, a2, a3, ev->text, a5, a6, NULL, NULL, NULL };
	enum wake_run_rc r;

	if (ev->session != NULL) {
		argv[7] = a7;
		argv[8] = ev->session;
	}
	wake_log_line(ev, "openclaw");
	r = wake_run(argv, NULL, 0, wake_state.openclaw_timeout_ms, true);
	if (r == RUN_MISSING) {
		/* Not installed: nothing to wake, nothing to retry. */
		if (!wake_state.openclaw_missing_logged)
			log_info("wake: '%s' is not on PATH; OpenClaw wake-ups are skipped "
			    "(set ACU_OPENCLAW_CLI, or \"\" to silence this)", wake_state.openclaw);
		wake_state.openclaw_missing_logged = true;
		return true;
	}
	wake_state.openclaw_missing_logged = false;
	return r == RUN_OK;
}

static bool
wake_to_command(struct wake_ev *ev)
{
	size_t len;
	const char *json = jx_string(ev->obj, &len);
	enum wake_run_rc r;

	wake_log_line(ev, "command");
	r = wake_run(wake_state.cmd_argv, json, len, wake_state.timeout_ms, false);
	if (r == RUN_MISSING)
		log_warn("wake: the wake command '%s' does not exist", wake_state.cmd_argv[0]);
	return r == RUN_OK;
}

static bool
wake_to_url(struct wake_ev *ev)
{
	const char *headers[] = { "User-Agent: detmd/" DETM_VERSION, wake_state.url_auth, NULL };
	json_object *reply = NULL;
	char err[256] = "";
	long status = 0;
	int r;

	r = httpc_post_json(wake_state.url, headers, ev->obj, wake_state.timeout_ms, &status, &reply, err, sizeof err);
	json_object_put(reply);
	if (r == 0 && status >= 200 && status < 300)
		return true;
	if (r == 0)
		log_warn("wake: POST %s answered %ld: %s", wake_state.url, status, err);
	else
		log_warn("wake: POST %s failed: %s", wake_state.url, err);
	return false;
}

/* The session a task asked its wake-ups to go to: metadata
 * "openclaw_session_key", a string of 1..WAKE_SESSION_MAX printable
 * bytes (anything else is ignored, logged). Delivery thread only, once per
 * event; it goes into the event JSON as "sessionKey" (OpenClaw's
 * /hooks/wake field) and to the CLI as --session-key. */
static void
wake_session_read(struct wake_ev *ev)
{
	json_object *meta = NULL, *v;
	struct derr e = { 0 };
	const char *k;
	int status;

	ev->session_read = true;
	if (ev->task_id == NULL || wake_state.st == NULL ||
	    task_meta(wake_state.st, ev->task_id, &status, &meta, &e) != 0)
		return;
	if (meta != NULL && json_object_object_get_ex(meta, "openclaw_session_key", &v)) {
		k = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
		if (wake_session_ok(k)) {
			ev->session = xstrdup(k);
			json_object_object_add(ev->obj, "sessionKey", json_object_new_string(k));
		} else
			log_warn("wake %s: task %s's metadata.openclaw_session_key is not a session key "
			    "(1-%d printable characters); the wake goes to the main session", ev->id,
			    ev->task_id, WAKE_SESSION_MAX);
	}
	json_object_put(meta);
}

/* Delivery thread only: tries every sink still to do; clears the ones that
 * took the event. */
static void
wake_deliver(struct wake_ev *ev)
{
	if (!ev->session_read)
		wake_session_read(ev);
	if ((ev->todo & SINK_OPENCLAW) && !atomic_load(&wake_state.stopping) && wake_to_openclaw(ev))
		ev->todo &= ~(unsigned)SINK_OPENCLAW;
	if ((ev->todo & SINK_COMMAND) && !atomic_load(&wake_state.stopping) && wake_to_command(ev))
		ev->todo &= ~(unsigned)SINK_COMMAND;
	if ((ev->todo & SINK_URL) && !atomic_load(&wake_state.stopping) && wake_to_url(ev))
		ev->todo &= ~(unsigned)SINK_URL;
}

static void
wake_abs_time(int64_t due_us, struct timespec *ts)
{
	struct timespec now;
	int64_t wait_us = due_us - mono_us(), ns;

	if (wait_us < 0)
		wait_us = 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (int64_t)now.tv_nsec + (wait_us % 1000000) * 1000;
	ts->tv_sec = now.tv_sec + (time_t)(wait_us / 1000000) + (time_t)(ns / 1000000000);
	ts->tv_nsec = (long)(ns % 1000000000);
}

static void *
wake_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wake_state.mu);
	while (!atomic_load(&wake_state.stopping)) {
		struct wake_ev *ev, *prev = NULL, *p;
		int64_t now = mono_us(), next = INT64_MAX;

		ev = NULL;
		for (p = wake_state.head; p != NULL; prev = p, p = p->next) {
			if (p->due_us <= now) {
				ev = p;
				break;
			}
			if (p->due_us < next)
				next = p->due_us;
		}
		if (ev == NULL) {
			if (next == INT64_MAX) {
				pthread_cond_wait(&wake_state.cv, &wake_state.mu);
			} else {
				struct timespec ts;

				wake_abs_time(next, &ts);
				pthread_cond_timedwait(&wake_state.cv, &wake_state.mu, &ts);
			}
			continue;
		}
		wake_unlink(prev, ev);
		wake_state.inflight = true;
		pthread_mutex_unlock(&wake_state.mu);

		wake_deliver(ev);

		pthread_mutex_lock(&wake_state.mu);
		wake_state.inflight = false;
		wake_state.attempts++;
		ev->attempts++;
		if (ev->todo == 0) {
			wake_state.delivered++;
			log_info("wake %s delivered (%s, task %s, attempt %d)", ev->id, ev->kind,
			    ev->task_id ? ev->task_id : "-", ev->attempts);
			wake_ev_free(ev);
		} else if (atomic_load(&wake_state.stopping)) {
			wake_state.dropped++;
			wake_ev_free(ev);
		} else if (ev->attempts >= wake_state.max_attempts) {
			wake_state.failed++;
			log_warn("wake %s (%s, task %s) not delivered after %d attempts; dropped",
			    ev->id, ev->kind, ev->task_id ? ev->task_id : "-", ev->attempts);
			wake_ev_free(ev);
		} else {
			int shift = ev->attempts - 1 < 16 ? ev->attempts - 1 : 16;
			int64_t delay = (int64_t)wake_state.backoff_ms * 1000 * ((int64_t)1 << shift);

			log_info("wake %s: attempt %d failed; retrying in %lld ms", ev->id,
			    ev->attempts, (long long)(delay / 1000));
			ev->due_us = mono_us() + delay;
			wake_append(ev);
		}
	}
	pthread_mutex_unlock(&wake_state.mu);
	return NULL;
}

/* Splits s on blanks into wake_state.cmd_argv. 0, or -1 if empty or too long. */
static int
wake_split(const char *s)
{
	size_t n = 0;
	char *p, *save = NULL;

	if (strlen(s) >= WAKE_ARGS_BYTES)
		return -1;
	wake_state.cmd_buf = xstrdup(s);
	for (p = strtok_r(wake_state.cmd_buf, " \t\n", &save); p != NULL; p = strtok_r(NULL, " \t\n", &save)) {
		if (n == WAKE_ARGV_MAX)
			return -1;
		wake_state.cmd_argv[n++] = p;
	}
	wake_state.cmd_argv[n] = NULL;
	return n > 0 ? 0 : -1;
}

static void
wake_free_settings(void)
{
	free(wake_state.openclaw);
	free(wake_state.cmd_buf);
	free(wake_state.url);
	free(wake_state.url_auth);
	free(wake_state.log_path);
	wake_state.openclaw = wake_state.cmd_buf = wake_state.url = wake_state.log_path = NULL;
	wake_state.url_auth = NULL;
	wake_state.cmd_argv[0] = NULL;
	wake_state.sinks = 0;
}

bool
wake_session_ok(const char *k)
{
	size_t n = k != NULL ? strlen(k) : 0;

	if (n == 0 || n > WAKE_SESSION_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)k[i] < 0x21 || k[i] == 0x7f)
			return false;
	return true;
}

int
wake_init(struct store *st, const struct config *cfg, struct derr *e)
{
	pthread_condattr_t ca;
	int err;

	if (wake_state.started)
		return 0;
	wake_free_settings();
	if (cfg->openclaw_cli[0] != '\0') {
		wake_state.openclaw = xstrdup(cfg->openclaw_cli);
		wake_state.sinks |= SINK_OPENCLAW;
	}
	if (cfg->wake_command[0] != '\0') {
		if (wake_split(cfg->wake_command) != 0) {
			wake_free_settings();
			return derr_set(e, DERR_INVALID, "wake_command",
			    "--wake-command must be a program and at most %d arguments, under %d bytes",
			    WAKE_ARGV_MAX - 1, WAKE_ARGS_BYTES);
		}
		wake_state.sinks |= SINK_COMMAND;
	}
	if (cfg->wake_url[0] != '\0') {
		if (strncmp(cfg->wake_url, "http://", 7) != 0 && strncmp(cfg->wake_url, "https://", 8) != 0) {
			wake_free_settings();
			return derr_set(e, DERR_INVALID, "wake_url",
			    "--wake-url must be an http:// or https:// URL");
		}
		wake_state.url = xstrdup(cfg->wake_url);
		if (cfg->wake_url_token[0] != '\0')
			wake_state.url_auth = xasprintf("Authorization: Bearer %s", cfg->wake_url_token);
		wake_state.sinks |= SINK_URL;
	}
	wake_state.log_path = xasprintf("%s/logs/wake.log", cfg->data_dir);
	wake_state.st = st;
	wake_state.timeout_ms = cfg->wake_timeout_s * 1000;
	wake_state.openclaw_timeout_ms = cfg->openclaw_timeout_s * 1000;
	wake_state.backoff_ms = cfg->wake_backoff_ms;
	wake_state.max_attempts = (int)cfg->wake_attempts;
	wake_state.posted = wake_state.delivered = wake_state.failed = wake_state.dropped = wake_state.unrouted = wake_state.attempts = 0;
	wake_state.openclaw_missing_logged = false;
	atomic_store(&wake_state.stopping, false);

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wake_state.cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((err = pthread_create(&wake_state.thread, NULL, wake_main, NULL)) != 0) {
		pthread_cond_destroy(&wake_state.cv);
		wake_free_settings();
		return derr_set(e, DERR_INTERNAL, NULL, "cannot start the wake thread: %s", strerror(err));
	}
	wake_state.started = true;
	log_info("wake-ups: openclaw %s, command %s, url %s (timeout %ld s, %ld attempts)",
	    wake_state.openclaw ? wake_state.openclaw : "off", wake_state.cmd_argv[0] ? wake_state.cmd_argv[0] : "off",
	    wake_state.url ? wake_state.url : "off", cfg->wake_timeout_s, cfg->wake_attempts);
	return 0;
}

void
wake_shutdown(void)
{
	struct wake_ev *ev;
	size_t left;

	if (!wake_state.started)
		return;
	pthread_mutex_lock(&wake_state.mu);
	atomic_store(&wake_state.stopping, true);
	pthread_cond_signal(&wake_state.cv);
	pthread_mutex_unlock(&wake_state.mu);
	pthread_join(wake_state.thread, NULL);

	pthread_mutex_lock(&wake_state.mu);
	left = wake_state.count;
	while ((ev = wake_state.head) != NULL) {
		wake_unlink(NULL, ev);
		wake_ev_free(ev);
	}
	wake_state.dropped += (int64_t)left;
	wake_state.started = false;
	pthread_mutex_unlock(&wake_state.mu);
	if (left > 0)
		log_warn("wake: shutting down with %zu undelivered event(s); dropped", left);
	pthread_cond_destroy(&wake_state.cv);
	wake_free_settings();
}

void
wake_post(const char *kind, const char *task_id, const char *text, json_object *payload)
{
	struct wake_ev *ev, *old = NULL;
	char ts[ISO_TIME_LEN], id[ID_LEN];
	size_t text_len;

	if (kind == NULL || text == NULL) {
		json_object_put(payload);
		return;
	}
	ev = xcalloc(1, sizeof *ev);
	id_new(ev->id);
	ev->kind = xstrdup(kind);
	ev->task_id = task_id ? xstrdup(task_id) : NULL;
	ev->text = wake_strcap(text, WAKE_TEXT_MAX);
	text_len = strlen(ev->text);
	memcpy(id, ev->id, ID_LEN);
	iso_time(now_ms(), ts);
	ev->obj = json_object_new_object();
	json_object_object_add(ev->obj, "event", json_object_new_string(kind));
	jx_add_str(ev->obj, "task_id", task_id);
	json_object_object_add(ev->obj, "text", json_object_new_string(ev->text));
	json_object_object_add(ev->obj, "payload", payload ? payload : json_object_new_object());
	json_object_object_add(ev->obj, "ts", json_object_new_string(ts));
	json_object_object_add(ev->obj, "id", json_object_new_string(ev->id));

	pthread_mutex_lock(&wake_state.mu);
	if (!wake_state.started || atomic_load(&wake_state.stopping) || wake_state.sinks == 0) {
		bool running = wake_state.started && !atomic_load(&wake_state.stopping);

		wake_state.unrouted++;
		pthread_mutex_unlock(&wake_state.mu);
		log_info("wake %s: %s for task %s not sent (%s)", id, kind, task_id ? task_id : "-",
		    running ? "no wake sink configured" : "wake-ups are not running");
		wake_ev_free(ev);
		return;
	}
	ev->todo = wake_state.sinks;
	ev->due_us = mono_us();
	if (wake_state.count >= WAKE_QUEUE_MAX) {
		old = wake_state.head;
		wake_unlink(NULL, old);
		wake_state.dropped++;
	}
	wake_append(ev);
	wake_state.posted++;
	pthread_cond_signal(&wake_state.cv);
	pthread_mutex_unlock(&wake_state.mu);
	/* ev belongs to the delivery thread now. */
	log_info("wake %s: %s for task %s queued (%zu bytes of text)", id, kind,
	    task_id ? task_id : "-", text_len);
	if (old != NULL) {
		log_warn("wake: queue full (%d); dropped the oldest event %s (%s, task %s)",
		    WAKE_QUEUE_MAX, old->id, old->kind, old->task_id ? old->task_id : "-");
		wake_ev_free(old);
	}
}

json_object *
wake_stats(void)
{
	json_object *o = json_object_new_object(), *sinks = json_object_new_array();

	pthread_mutex_lock(&wake_state.mu);
	json_object_object_add(o, "running", json_object_new_boolean(wake_state.started));
	json_object_object_add(o, "posted", json_object_new_int64(wake_state.posted));
	json_object_object_add(o, "delivered", json_object_new_int64(wake_state.delivered));
	json_object_object_add(o, "failed", json_object_new_int64(wake_state.failed));
	json_object_object_add(o, "dropped", json_object_new_int64(wake_state.dropped));
	json_object_object_add(o, "unrouted", json_object_new_int64(wake_state.unrouted));
	json_object_object_add(o, "attempts", json_object_new_int64(wake_state.attempts));
	json_object_object_add(o, "pending", json_object_new_int64((int64_t)wake_state.count + (wake_state.inflight ? 1 : 0)));
	if (wake_state.sinks & SINK_OPENCLAW)
		json_object_array_add(sinks, json_object_new_string("openclaw"));
	if (wake_state.sinks & SINK_COMMAND)
		json_object_array_add(sinks, json_object_new_string("command"));
	if (wake_state.sinks & SINK_URL)
		json_object_array_add(sinks, json_object_new_string("url"));
	pthread_mutex_unlock(&wake_state.mu);
	json_object_object_add(o, "sinks", sinks);
	return o;
}
