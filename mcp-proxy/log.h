/*
 * log.h - the proxy's logger. Everything goes to stderr, because stdout
 * carries the MCP protocol and nothing else. Thread-safe (one write(2) per
 * line). Control bytes in the message are escaped so untrusted text cannot
 * break a line.
 */
#ifndef DETM_MCP_LOG_H
#define DETM_MCP_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Messages above this level are dropped (default LOG_INFO). Set once at
 * startup, before threads start. */
void log_set_level(enum log_level level);
bool log_enabled(enum log_level level);

void log_msg(enum log_level level, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_error(...) log_msg(LOG_ERROR, __func__, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __func__, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __func__, __VA_ARGS__)
#define log_debug(...) do { if (log_enabled(LOG_DEBUG)) \
	log_msg(LOG_DEBUG, __func__, __VA_ARGS__); } while (0)

#endif
