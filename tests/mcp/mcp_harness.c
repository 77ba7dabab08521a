/*
 * mcp_harness.c - see mcp_harness.h. Test code: aborts on out-of-memory,
 * reports everything else to the caller.
 */
#include "mcp_harness.h"
#include "../oracle/utf8.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int
mproc_open(struct mproc *p, const char *const *args)
{
	int in[2], out[2], errfd;
	const char *bindir = getenv("DETM_BIN");
	char exe[512];
	const char *argv[32];
	size_t n = 0;
	static int seq;

	memset(p, 0, sizeof *p);
	snprintf(exe, sizeof exe, "%s/detm-mcp", bindir ? bindir : "bin");
	snprintf(p->errlog, sizeof p->errlog, "/tmp/detm-mcp-test.%d.%d.err", (int)getpid(), seq++);
	argv[n++] = exe;
	while (args != NULL && *args != NULL && n < 30)
		argv[n++] = *args++;
	argv[n] = NULL;
	if (pipe(in) != 0 || pipe(out) != 0)
		return -1;
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		errfd = open(p->errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (errfd >= 0)
			dup2(errfd, 2);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		execv(exe, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->to_child = in[1];
	p->from_child = out[0];
	return 0;
}

int
mproc_send(struct mproc *p, const char *line)
{
	size_t len = strlen(line), off = 0;
	ssize_t n;

	while (off < len) {
		n = write(p->to_child, line + off, len - off);
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return write(p->to_child, "\n", 1) == 1 ? 0 : -1;
}

int
mproc_sendf(struct mproc *p, const char *fmt, ...)
{
	char line[65536];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	return mproc_send(p, line);
}


struct json_object *
mproc_recv(struct mproc *p, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	struct pollfd pfd;
	char *nl, *grown;
	ssize_t n;

	for (;;) {
		if (p->buf != NULL && (nl = memchr(p->buf, '\n', p->len)) != NULL) {
			struct json_object *o;
			size_t ll = (size_t)(nl - p->buf);
			*nl = '\0';
			/* Every line the proxy writes must be strict UTF-8. */
			o = utf8_strict(p->buf, ll) ? json_tokener_parse(p->buf) : NULL;
			if (o == NULL)
				fprintf(stderr, "     (not JSON on stdout: %.200s)\n", p->buf);
			memmove(p->buf, nl + 1, p->len - ll - 1);
			p->len -= ll + 1;
			return o;
		}
		pfd.fd = p->from_child;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)(deadline - now_ms() > 0 ? deadline - now_ms() : 0)) <= 0)
			return NULL;
		grown = realloc(p->buf, p->len + 65536 + 1);
		if (grown == NULL)
			abort();
		p->buf = grown;
		n = read(p->from_child, p->buf + p->len, 65536);
		if (n <= 0)
			return NULL;
		p->len += (size_t)n;
	}
}

struct json_object *
mproc_wait_id(struct mproc *p, int id, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	struct json_object *o, *idv;

	while (now_ms() < deadline) {
		o = mproc_recv(p, (int)(deadline - now_ms()));
		if (o == NULL)
			return NULL;
		if (json_object_object_get_ex(o, "id", &idv) && json_object_is_type(idv, json_type_int) &&
		    json_object_get_int(idv) == id)
			return o;
		json_object_put(o);
	}
	return NULL;
}

struct json_object *
mproc_call(struct mproc *p, int id, const char *method, const char *params)
{
	if (params != NULL)
		mproc_sendf(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}", id,
		            method, params);
	else
		mproc_sendf(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\"}", id, method);
	return mproc_wait_id(p, id, 10000);
}

struct json_object *
mproc_init(struct mproc *p, const char *version)
{
	char params[512];
	struct json_object *r;

	snprintf(params, sizeof params, "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
	         "\"clientInfo\":{\"name\":\"test-mcp\",\"version\":\"1\"}}", version);
	r = mproc_call(p, 1000, "initialize", params);
	mproc_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	return r;
}

struct json_object *
mproc_tool(struct mproc *p, int id, const char *name, const char *args, struct json_object **resp)
{
	char params[60000];

	snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":%s}", name, args ? args : "{}");
	*resp = mproc_call(p, id, "tools/call", params);
	return jget(*resp, "result");
}

int
mproc_close(struct mproc *p, int timeout_ms, long *elapsed_ms)
{
	long start = now_ms();
	int status = 0, rc = -1;
	pid_t w;

	close(p->to_child);
	for (;;) {
		w = waitpid(p->pid, &status, WNOHANG);
		if (w == p->pid) {
			rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			break;
		}
		if (now_ms() - start > timeout_ms) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &status, 0);
			break;
		}
		usleep(10000);
	}
	if (elapsed_ms != NULL)
		*elapsed_ms = now_ms() - start;
	close(p->from_child);
	unlink(p->errlog);
	free(p->buf);
	p->buf = NULL;
	return rc;
}

bool
mproc_stderr_has(struct mproc *p, const char *needle)
{
	long deadline = now_ms() + 3000;
	char buf[65536];
	size_t n;
	FILE *f;

	/* the proxy logs from other threads: give them a moment */
	do {
		f = fopen(p->errlog, "r");
		if (f != NULL) {
			n = fread(buf, 1, sizeof buf - 1, f);
			fclose(f);
			buf[n] = '\0';
			if (strstr(buf, needle) != NULL)
				return true;
		}
		usleep(20000);
	} while (now_ms() < deadline);
	return false;
}

/* ---- fake detmd ---- */

static void
fake_serve(struct fake *f, int c)
{
	char req[16384], *end, *cl;
	size_t len = 0, want;
	char head[512];
	ssize_t n;

	for (;;) {
		n = recv(c, req + len, sizeof req - 1 - len, 0);
		if (n <= 0)
			return;
		len += (size_t)n;
		req[len] = '\0';
		if ((end = strstr(req, "\r\n\r\n")) != NULL)
			break;
		if (len >= sizeof req - 1)
			return;
	}
	snprintf(f->last_head, sizeof f->last_head, "%.*s", (int)(end - req), req);
	f->requests++;
	want = (size_t)(end + 4 - req);
	if ((cl = strcasestr(req, "Content-Length:")) != NULL && cl < end)
		want += (size_t)atol(cl + 15);
	while (len < want && len < sizeof req - 1) {
		n = recv(c, req + len, sizeof req - 1 - len, 0);
		if (n <= 0)
			return;
		len += (size_t)n;
	}
	if (f->mode == FAKE_SILENT && strncmp(req, "GET /api/version ", 17) != 0) {
		f->silent_seen++;
		/* never answer: wait for the client to give up */
		while ((n = recv(c, req, sizeof req, 0)) > 0)
			;
		if (n == 0)
			f->closed_early++;
		return;
	}
	snprintf(head, sizeof head, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
	         "Content-Length: %zu\r\nConnection: close\r\n\r\n", f->status, strlen(f->body));
	if (send(c, head, strlen(head), MSG_NOSIGNAL) < 0 ||
	    send(c, f->body, strlen(f->body), MSG_NOSIGNAL) < 0)
		return;
}

static void *
fake_main(void *arg)
{
	struct fake *f = arg;
	struct pollfd pfd;
	int c;

	while (!f->stop) {
		pfd.fd = f->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		c = accept(f->fd, NULL, NULL);
		if (c < 0)
			continue;
		fake_serve(f, c);
		close(c);
	}
	return NULL;
}

int
fake_start(struct fake *f, enum fake_mode mode)
{
	struct sockaddr_in a;
	socklen_t al = sizeof a;
	pthread_t *t;

	memset(f, 0, sizeof *f);
	f->mode = mode;
	f->status = 200;
	snprintf(f->body, sizeof f->body, "{}");
	f->fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    listen(f->fd, 8) != 0 || getsockname(f->fd, (struct sockaddr *)&a, &al) != 0)
		return -1;
	f->port = ntohs(a.sin_port);
	t = malloc(sizeof *t);
	if (t == NULL)
		abort();
	f->thread = t;
	return pthread_create(t, NULL, fake_main, f) == 0 ? 0 : -1;
}

void
fake_stop(struct fake *f)
{
	f->stop = true;
	pthread_join(*(pthread_t *)f->thread, NULL);
	free(f->thread);
	close(f->fd);
}

/* ---- json helpers ---- */

struct json_object *
jget(struct json_object *o, const char *path)
{
	char key[128];
	const char *dot;
	size_t n;

	while (o != NULL && *path != '\0') {
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		snprintf(key, sizeof key, "%.*s", (int)n, path);
		if (json_object_is_type(o, json_type_array)) {
			o = json_object_array_get_idx(o, (size_t)atoi(key));
		} else if (!json_object_object_get_ex(o, key, &o)) {
			return NULL;
		}
		path += n + (dot != NULL);
	}
	return o;
}

const char *
jget_str(struct json_object *o, const char *path)
{
	struct json_object *v = jget(o, path);

	return v != NULL && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

long long
jget_int(struct json_object *o, const char *path, long long dflt)
{
	struct json_object *v = jget(o, path);

	return v != NULL && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : dflt;
}

const char *
result_text(struct json_object *result)
{
	const char *s = jget_str(result, "content.0.text");

	return s ? s : "";
}
