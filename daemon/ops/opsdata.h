/*
 * opsdata.h - what the export bundle and the dump read, written straight
 * into a ZIP entry: database rows as a JSON array or as CSV, and the
 * daemon log's lines of a time window.
 *
 * Rows come from a read-only SQLite connection of the caller's own
 * (opsdata_open), not the daemon's store: an archive may take minutes to
 * leave at the client's pace and must never hold a reader of the pool or
 * the writer's lock. Each row is formatted and written before the next is
 * read, so memory stays flat whatever the table holds.
 *
 * Formatting rules (both forms): an INTEGER column whose name ends in
 * "_at" is a time (ms since the epoch) and is written as ISO-8601 UTC;
 * columns holding JSON text (metadata, input_data, output_data,
 * verdict_json) are parsed back into JSON in the JSON form. Text passes
 * through the redactor when one is given.
 *
 * Not thread-safe per connection; one archive builder owns one.
 */
#ifndef DETM_OPSDATA_H
#define DETM_OPSDATA_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "core/redact.h"
#include "core/zipout.h"

/* DATA_DIR/data.db, read-only, with a busy timeout. NULL with err filled. */
sqlite3 *opsdata_open(const char *data_dir, char *err, size_t errlen);

/* Parameters bound to ?1 (text, may be NULL), ?2 and ?3 (integers). */
struct opsbind {
	const char *text;
	int64_t a, b;
};

/* Writes the rows of sql as a JSON array into the open entry. Returns the
 * row count, or -1 (a database error is written into the array as an
 * {"error": ...} element, an archive error ends it). */
long opsdata_json(sqlite3 *db, const char *sql, const struct opsbind *bind,
    struct zipout *z, const struct redact *rd);
/* The same as CSV (RFC 4180; a header line of column names). A text cell
 * that starts with =, +, -, @, tab or CR is written with a leading ' (a
 * spreadsheet would run it as a formula); numbers are written as they are. */
long opsdata_csv(sqlite3 *db, const char *sql, const struct opsbind *bind,
    struct zipout *z, const struct redact *rd);

/* Rows of (time ms, text) as lines "ISO-time  text". Row count or -1. */
long opsdata_lines(sqlite3 *db, const char *sql, const struct opsbind *bind,
    struct zipout *z, const struct redact *rd);

/* The name of a table whose name starts with "usage" (the usage-recording
 * table when this daemon has one) into out; false when there is none. */
bool opsdata_usage_table(sqlite3 *db, char *out, size_t len);
/* Whether table has a column named col. */
bool opsdata_has_column(sqlite3 *db, const char *table, const char *col);

/* Log lines (DATA_DIR/logs/debug.log.1, then debug.log) whose time is in
 * [from_ms, to_ms]; errors_only keeps ERROR and WARN lines. Lines are
 * redacted when rd is given. Returns the line count, or -1 on an archive
 * error. A missing log is no error (0 lines). */
long opsdata_log(const char *data_dir, int64_t from_ms, int64_t to_ms, bool errors_only,
    struct zipout *z, const struct redact *rd);

#endif
