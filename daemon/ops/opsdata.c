/*
 * opsdata.c - rows and log lines into ZIP entries (opsdata.h).
 */
#include "opsdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/buf.h"
#include "core/jx.h"
#include "core/log.h"
#include "core/util.h"

#define LOG_LINE_CAP (64 * 1024)

sqlite3 *
opsdata_open(const char *data_dir, char *err, size_t errlen)
{
	char *path = xasprintf("%s/data.db", data_dir);
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);

	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		db = NULL;
	} else
		sqlite3_busy_timeout(db, 5000);
	free(path);
	return db;
}

static sqlite3_stmt *
prepare(sqlite3 *db, const char *sql, const struct opsbind *bind)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		log_warn("ops query failed: %s", sqlite3_errmsg(db));
		return NULL;
	}
	if (bind != NULL) {
		int n = sqlite3_bind_parameter_count(s);

		if (n >= 1 && bind->text != NULL)
			sqlite3_bind_text(s, 1, bind->text, -1, SQLITE_STATIC);
		if (n >= 2)
			sqlite3_bind_int64(s, 2, bind->a);
		if (n >= 3)
			sqlite3_bind_int64(s, 3, bind->b);
	}
	return s;
}

static bool
is_time_col(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && strcmp(name + n - 3, "_at") == 0;
}

static bool
is_json_col(const char *name)
{
	static const char *const cols[] = { "metadata", "input_data", "output_data", "verdict_json" };

	for (size_t i = 0; i < ARRAY_LEN(cols); i++)
		if (strcmp(name, cols[i]) == 0)
			return true;
	return false;
}

static json_object *
row_json(sqlite3_stmt *s)
{
	json_object *o = json_object_new_object();
	int i, n = sqlite3_column_count(s);

	for (i = 0; i < n; i++) {
		const char *name = sqlite3_column_name(s, i);
		const char *text = (const char *)sqlite3_column_text(s, i);
		json_object *v = NULL;

		switch (sqlite3_column_type(s, i)) {
		case SQLITE_NULL:
			break;
		case SQLITE_INTEGER:
			if (is_time_col(name)) {
				jx_add_time(o, name, sqlite3_column_int64(s, i));
				continue;
			}
			v = json_object_new_int64(sqlite3_column_int64(s, i));
			break;
		case SQLITE_FLOAT:
			v = json_object_new_double(sqlite3_column_double(s, i));
			break;
		default:
			v = is_json_col(name) ? jx_parse_stored(text) : NULL;
			if (v == NULL)
				v = json_object_new_string(text ? text : "");
			break;
		}
		json_object_object_add(o, name, v);
	}
	return o;
}

/* Writes text redacted (or as it is). */
static int
put_text(struct zipout *z, const char *text, const struct redact *rd)
{
	char *red;
	int rc;

	if (rd == NULL)
		return zipout_write(z, text, strlen(text));
	red = redact_text(rd, text, NULL);
	rc = zipout_write(z, red, strlen(red));
	free(red);
	return rc;
}

long
opsdata_json(sqlite3 *db, const char *sql, const struct opsbind *bind, struct zipout *z,
    const struct redact *rd)
{
	sqlite3_stmt *s = prepare(db, sql, bind);
	long rows = 0;
	int rc = SQLITE_ERROR;

	if (zipout_write(z, "[", 1) != 0)
		goto out;
	while (s != NULL && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_object *o = row_json(s);
		int w = (rows > 0 ? zipout_write(z, ",\n", 2) : zipout_write(z, "\n", 1)) |
		    put_text(z, jx_string(o, NULL), rd);

		json_object_put(o);
		if (w != 0) {
			rows = -1;
			goto out;
		}
		rows++;
	}
	if (rc != SQLITE_DONE) {
		json_object *er = json_object_new_object();

		jx_add_str(er, "error", db ? sqlite3_errmsg(db) : "no database");
		if (zipout_printf(z, "%s%s", rows ? ",\n" : "\n", jx_string(er, NULL)) != 0)
			rows = -1;
		json_object_put(er);
	}
	if (rows >= 0 && zipout_write(z, "\n]\n", 3) != 0)
		rows = -1;
out:
	sqlite3_finalize(s);
	return rows;
}

/* A text cell a spreadsheet would read as a formula (or whose leading tab
 * or CR hides one): OWASP's CSV injection list. */
static bool
formula_like(const char *text)
{
	return text[0] != '\0' && strchr("=+-@\t\r", text[0]) != NULL;
}

/* One CSV field: quoted when it holds a comma, quote, CR or LF. A text
 * cell (guard) that starts like a formula gets a leading ' so that a
 * spreadsheet shows it as text; numbers and times we format are left. */
static int
csv_field(struct zipout *z, const char *text, const struct redact *rd, bool guard)
{
	char *red = redact_text(rd, text, NULL);
	bool quote = guard && formula_like(red);
	struct buf b;
	const char *p;
	int rc;

	if (!quote && strpbrk(red, ",\"\r\n") == NULL) {
		rc = zipout_write(z, red, strlen(red));
		free(red);
		return rc;
	}
	buf_init(&b, (size_t)-1 / 2);
	if (buf_append(&b, quote ? "\"'" : "\"", quote ? 2 : 1) != 0)
		abort();
	for (p = red; *p != '\0'; p++)
		if ((*p == '"' && buf_append(&b, "\"\"", 2) != 0) ||
		    (*p != '"' && buf_append(&b, p, 1) != 0))
			abort();
	if (buf_append(&b, "\"", 1) != 0)
		abort();
	rc = zipout_write(z, b.data, b.len);
	buf_free(&b);
	free(red);
	return rc;
}

static int
csv_row(struct zipout *z, sqlite3_stmt *s, bool header, const struct redact *rd)
{
	int i, n = sqlite3_column_count(s);
	char num[64], ts[ISO_TIME_LEN];

	for (i = 0; i < n; i++) {
		const char *name = sqlite3_column_name(s, i), *text = "";
		bool guard = true;

		if (i > 0 && zipout_write(z, ",", 1) != 0)
			return -1;
		if (header)
			text = name;
		else if (sqlite3_column_type(s, i) == SQLITE_INTEGER && is_time_col(name)) {
			iso_time(sqlite3_column_int64(s, i), ts);
			text = ts;
			guard = false;
		} else if (sqlite3_column_type(s, i) == SQLITE_FLOAT) {
			snprintf(num, sizeof num, "%.17g", sqlite3_column_double(s, i));
			text = num;
			guard = false;
		} else if (sqlite3_column_type(s, i) != SQLITE_NULL) {
			text = (const char *)sqlite3_column_text(s, i);
			guard = sqlite3_column_type(s, i) != SQLITE_INTEGER;
		}
		if (csv_field(z, text ? text : "", rd, guard) != 0)
			return -1;
	}
	return zipout_write(z, "\r\n", 2);
}

long
opsdata_csv(sqlite3 *db, const char *sql, const struct opsbind *bind, struct zipout *z,
    const struct redact *rd)
{
	sqlite3_stmt *s = prepare(db, sql, bind);
	long rows = 0;
	int rc;

	if (s == NULL)
		return zipout_printf(z, "error\r\n%s\r\n", db ? sqlite3_errmsg(db) : "no database") ? -1 : 0;
	if (csv_row(z, s, true, rd) != 0) {
		rows = -1;
		goto out;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (csv_row(z, s, false, rd) != 0) {
			rows = -1;
			goto out;
		}
		rows++;
	}
	if (rc != SQLITE_DONE)
		log_warn("ops csv: %s", sqlite3_errmsg(db));
out:
	sqlite3_finalize(s);
	return rows;
}

long
opsdata_lines(sqlite3 *db, const char *sql, const struct opsbind *bind, struct zipout *z,
    const struct redact *rd)
{
	sqlite3_stmt *s = prepare(db, sql, bind);
	char ts[ISO_TIME_LEN];
	long rows = 0;

	while (s != NULL && sqlite3_step(s) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(s, 1);
		char *red = redact_text(rd, text ? text : "", NULL);
		int w;

		for (char *q = red; *q != '\0'; q++)
			if (*q == '\n' || *q == '\r')
				*q = ' ';       /* one line per row */
		iso_time(sqlite3_column_int64(s, 0), ts);
		w = zipout_printf(z, "%s  %s\n", ts, red);
		free(red);
		if (w != 0) {
			rows = -1;
			break;
		}
		rows++;
	}
	sqlite3_finalize(s);
	return rows;
}

bool
opsdata_usage_table(sqlite3 *db, char *out, size_t len)
{
	sqlite3_stmt *s = prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND "
	    "name LIKE 'usage%' ORDER BY name LIMIT 1", NULL);
	bool found = false;

	if (s != NULL && sqlite3_step(s) == SQLITE_ROW) {
		snprintf(out, len, "%s", (const char *)sqlite3_column_text(s, 0));
		found = true;
	}
	sqlite3_finalize(s);
	return found;
}

bool
opsdata_has_column(sqlite3 *db, const char *table, const char *col)
{
	char *sql = xasprintf("SELECT 1 FROM pragma_table_info('%s') WHERE name = ?1", table);
	struct opsbind b = { col, 0, 0 };
	sqlite3_stmt *s = strchr(table, '\'') ? NULL : prepare(db, sql, &b);
	bool has = s != NULL && sqlite3_step(s) == SQLITE_ROW;

	sqlite3_finalize(s);
	free(sql);
	return has;
}

/* The lines of one log file in the window. */
static long
log_file(const char *path, const char *from, const char *to, bool errors_only,
    struct zipout *z, const struct redact *rd)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long lines = 0;
	bool in = false;

	if (f == NULL)
		return 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		/* "2026-11-22T19:30:00.123Z LEVEL func: ..." */
		if (n >= ISO_TIME_LEN && line[4] == '-' && line[10] == 'T')
			in = strncmp(line, from, ISO_TIME_LEN - 1) >= 0 &&
			    strncmp(line, to, ISO_TIME_LEN - 1) <= 0;
		if (!in || (errors_only && strstr(line, " ERROR ") == NULL && strstr(line, " WARN ") == NULL))
			continue;
		if (n > LOG_LINE_CAP) {
			line[LOG_LINE_CAP - 1] = '\n';
			line[LOG_LINE_CAP] = '\0';
		}
		if (put_text(z, line, rd) != 0) {
			lines = -1;
			break;
		}
		lines++;
	}
	free(line);
	fclose(f);
	return lines;
}

long
opsdata_log(const char *data_dir, int64_t from_ms, int64_t to_ms, bool errors_only,
    struct zipout *z, const struct redact *rd)
{
	char from[ISO_TIME_LEN], to[ISO_TIME_LEN];
	char *old = xasprintf("%s/logs/debug.log.1", data_dir), *cur = xasprintf("%s/logs/debug.log", data_dir);
	long a, b = -1;

	iso_time(from_ms, from);
	iso_time(to_ms, to);
	a = log_file(old, from, to, errors_only, z, rd);
	if (a >= 0)
		b = log_file(cur, from, to, errors_only, z, rd);
	free(old);
	free(cur);
	return a < 0 || b < 0 ? -1 : a + b;
}
