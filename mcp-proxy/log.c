/*
 * log.c - see log.h. Owns only the level; the stream is always fd 2.
 * Not here: protocol output (rpc.c owns stdout).
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#define LOG_LINE_MAX 2048

static enum log_level log_level_max = LOG_INFO;
static const char *const log_names[] = { "error", "warn", "info", "debug" };

void
log_set_level(enum log_level level)
{
	log_level_max = level;
}

bool
log_enabled(enum log_level level)
{
	return level <= log_level_max;
}

void
log_msg(enum log_level level, const char *func, const char *fmt, ...)
{
	char raw[LOG_LINE_MAX], line[LOG_LINE_MAX + 64];
	size_t o, i;
	va_list ap;
	int n;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	n = snprintf(line, sizeof line, "detm-mcp: %s: %s: ", log_names[level], func);
	o = n > 0 ? (size_t)n : 0;
	for (i = 0; raw[i] != '\0' && o + 5 < sizeof line; i++) {
		unsigned char c = (unsigned char)raw[i];
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(line + o, sizeof line - o, "\\x%02x", c);
		else
			line[o++] = (char)c;
	}
	line[o++] = '\n';
	if (write(STDERR_FILENO, line, o) < 0) {
		/* nowhere left to report it */
	}
}
