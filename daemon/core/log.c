/*
 * log.c - see log.h. State: one file descriptor (or -1) and the debug flag,
 * both set once by log_open before threads start.
 */
#include "log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_LINE_MAX 4096
#define LOG_ROTATE_BYTES (10L * 1024 * 1024)

static int log_fd = -1;
static bool log_dbg;

static const char *const level_names[] = { "ERROR", "WARN", "INFO", "DEBUG" };

int
log_open(const char *path, bool debug)
{
	struct stat st;
	char old[4096];
	int fd;

	log_dbg = debug;
	if (stat(path, &st) == 0 && st.st_size > LOG_ROTATE_BYTES) {
		snprintf(old, sizeof old, "%s.1", path);
		rename(path, old);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	log_fd = fd;
	return 0;
}

void
log_close(void)
{
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
}

bool
log_debug_enabled(void)
{
	return log_dbg;
}

/* Copies src into dst escaping control bytes; returns bytes written. */
static size_t
log_escape(char *dst, size_t cap, const char *src)
{
	size_t o = 0;

	for (; *src != '\0' && o + 5 < cap; src++) {
		unsigned char c = (unsigned char)*src;

		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(dst + o, cap - o, "\\x%02x", c);
		else
			dst[o++] = (char)c;
	}
	dst[o] = '\0';
	return o;
}

void
log_write(enum log_level lvl, const char *func, const char *fmt, ...)
{
	char msg[LOG_LINE_MAX], line[LOG_LINE_MAX + 128];
	char ts[ISO_TIME_LEN];
	va_list ap;
	int n;

	if (lvl == LOG_DEBUG && !log_dbg)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	iso_time(now_ms(), ts);
	n = snprintf(line, sizeof line, "%s %-5s %s: ", ts, level_names[lvl], func);
	if (n < 0)
		return;
	n += (int)log_escape(line + n, sizeof line - (size_t)n - 1, msg);
	line[n++] = '\n';
	if (log_fd >= 0 && write(log_fd, line, (size_t)n) < 0) {
		/* nothing sensible to do: the log itself failed */
	}
	if (lvl <= LOG_WARN) {
		if (write(STDERR_FILENO, line, (size_t)n) < 0) {
			/* ditto */
		}
	}
}
