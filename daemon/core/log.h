/*
 * log.h - the daemon's one logger.
 *
 * Lines go to <data_dir>/logs/debug.log (opened by log_open) with a UTC
 * timestamp, level and the calling function. Before log_open, and for
 * warnings and errors always, lines also go to stderr so systemd's journal
 * sees them. Untrusted text is escaped (control bytes become \xNN) so a
 * request field cannot forge a log line. Thread-safe: one write() per line.
 */
#ifndef DETM_LOG_H
#define DETM_LOG_H

#include <stdbool.h>

#include "util.h"

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Opens (appending) path; rotates it to path.1 first when over 10 MB.
 * Returns 0, or -1 with errno set (logging then stays on stderr). */
int log_open(const char *path, bool debug);
void log_close(void);
bool log_debug_enabled(void);

void log_write(enum log_level lvl, const char *func, const char *fmt, ...)
    DETM_PRINTF(3, 4);

/* The level test happens before any formatting cost (redis serverLog). */
#define log_error(...) log_write(LOG_ERROR, __func__, __VA_ARGS__)
#define log_warn(...) log_write(LOG_WARN, __func__, __VA_ARGS__)
#define log_info(...) log_write(LOG_INFO, __func__, __VA_ARGS__)
#define log_debug(...) \
	do { \
		if (log_debug_enabled()) \
			log_write(LOG_DEBUG, __func__, __VA_ARGS__); \
	} while (0)

#endif
