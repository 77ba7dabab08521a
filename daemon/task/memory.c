/*
 * memory.c - the agent's workspace memory, as the Python DETM's memory
 * tools had it: MEMORY.md and the .md files of memory/ under the workspace directory
 * (ACU_WORKSPACE, default ~/.openclaw/workspace, the OpenClaw workspace).
 * Plain C (memory.h); the routes are api_memory.c's:
 *
 *   POST /api/memory/search {query, max_results=10}
 *       -> {query, results:[{path, line (1-based), snippet, score}], count}
 *       A line matches when every lower-cased term of the query is in it;
 *       the snippet is lines i-1..i+2 (<= 400 characters), the score the
 *       number of term occurrences; best first (then file, line), one hit
 *       per 5-line block of a file.
 *   POST /api/memory/read {path="MEMORY.md", offset=1, limit=100}
 *       -> {path, offset, limit, total_lines, content}
 *   POST /api/memory/append {note, path?}
 *       -> {ok, path, appended}: "## [HH:MM UTC] Note" and the note, at the
 *       end of memory/<UTC date>.md or of path.
 *
 * The path guard is real (the Python one was a string-prefix check, so a
 * sibling "workspace2" passed): a path must be relative, without "..", and
 * is opened beneath the workspace's directory fd following no symbolic link
 * in any component (memory_path.c: openat2 RESOLVE_BENEATH|NO_SYMLINKS, or
 * an O_NOFOLLOW walk), so a folder swapped for a link mid-request is
 * refused, never followed (issue 33); a link anywhere on the path is 403.
 * The file is opened O_NONBLOCK and must be a regular file (a FIFO is 400
 * at once, never a hung request); an append creates its file with openat on
 * its folder's fd. Search lists memory/ through that folder's fd. Sizes
 * are capped: files read (4 MiB), notes (64 KiB), lines returned (2000);
 * a search reads at most 64 MiB for at most 5 s (then "truncated": true).
 * Text read is made valid UTF-8 (a Latin-1 file's bytes become U+FFFD) and
 * snippets are cut between characters. Messages name paths relative to the
 * workspace, never absolute ones.
 *
 * Does not: index, cache or lock files (appends are single O_APPEND writes).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/jx.h"
#include "core/log.h"
#include "memory.h"
#include "memory_path.h"

#define FILE_MAX        (4 * 1024 * 1024)
#define TERMS_MAX       16
#define SNIPPET_MAX     400
#define FILES_MAX       1000
/* One search reads at most this much, for at most this long; past either
 * it answers with what it found and "truncated": true. */
#define SCAN_BYTES_MAX  (64 * 1024 * 1024)
#define SCAN_US_MAX     (5 * 1000000)

struct hit {
	char *path;
	int line;
	int score;
	char *snippet;
};

/* The workspace's directory fd (the configured path may itself be a link:
 * it is the operator's); -1 and DERR_NOT_FOUND if it does not exist
 * (create: make it first). */
static int
root_open(const struct config *cfg, bool create, struct derr *e)
{
	int fd;

	/* Absolute paths go to the log, never into a message. */
	if (create && dir_create_all(cfg->workspace, 0700) != 0) {
		log_warn("cannot create the workspace %s: %s", cfg->workspace, strerror(errno));
		return derr_set(e, DERR_INTERNAL, NULL, "cannot create the workspace (ACU_WORKSPACE): %s",
		    strerror(errno));
	}
	fd = open(cfg->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return derr_set(e, DERR_NOT_FOUND, NULL, "the workspace does not exist (ACU_WORKSPACE)");
	return fd;
}

/* The message for a path refused because a component is a symbolic link
 * (ELOOP) or would leave the workspace (EXDEV): links are not followed, so
 * where one leads is not looked at. */
static int
outside(const char *rel, struct derr *e)
{
	return derr_set(e, DERR_FORBIDDEN, "path", "'%.*s' leads outside the workspace (symbolic "
	    "links are not followed)", utf8_prec(rel, 200), rel);
}

/* Refuses absolute paths, ".." and paths too long to open. */
static int
lexical(const char *rel, struct derr *e)
{
	const char *p = rel;

	if (rel[0] == '\0' || rel[0] == '/')
		return derr_set(e, DERR_FORBIDDEN, "path", "path must be relative to the workspace");
	while (*p != '\0') {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return derr_set(e, DERR_FORBIDDEN, "path", "path may not contain '..'");
		p += n;
		if (*p == '/')
			p++;
	}
	if (strlen(rel) >= PATH_MAX)
		return derr_set(e, DERR_INVALID, "path", "path is too long");
	return 0;
}

/* Reads up to size bytes of fd; the text comes back valid UTF-8 (the
 * workspace may hold Latin-1 or binary files: invalid bytes become U+FFFD). */
static char *
read_capped(int fd, size_t size)
{
	char *raw = xmalloc(size + 1), *text;
	size_t have = 0;
	ssize_t got;

	while (have < size) {
		got = read(fd, raw + have, size - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += (size_t)got;
	}
	raw[have] = '\0';
	if (utf8_valid(raw, have))
		return raw;
	text = utf8_dup(raw, have, NULL);
	free(raw);
	return text;
}

/* Reads a regular file inside the workspace (at most FILE_MAX bytes). */
static char *
slurp(int root, const char *rel, struct derr *e)
{
	struct stat sb;
	char *buf = NULL;
	int fd = -1;

	if (lexical(rel, e) != 0)
		return NULL;
	/* O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer. */
	fd = mpath_open(root, rel, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
		derr_set(e, DERR_NOT_FOUND, "path", "no file '%.*s' in the workspace",
		    utf8_prec(rel, 200), rel);
		return NULL;
	}
	if (fd < 0 && (errno == ELOOP || errno == EXDEV)) {
		outside(rel, e);
		return NULL;
	}
	if (fd < 0 || fstat(fd, &sb) != 0) {
		derr_set(e, fd < 0 && errno == EACCES ? DERR_FORBIDDEN : DERR_NOT_FOUND, "path",
		    "'%.*s' is not a readable file", utf8_prec(rel, 200), rel);
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		derr_set(e, DERR_INVALID, "path", "'%.*s' is not a regular file", utf8_prec(rel,
		    200), rel);
		goto out;
	}
	if (sb.st_size > FILE_MAX) {
		derr_set(e, DERR_TOO_LARGE, "path", "'%.*s' is larger than %d MiB", utf8_prec(rel,
		    200), rel, FILE_MAX >> 20);
		goto out;
	}
	buf = read_capped(fd, (size_t)sb.st_size);
out:
	if (fd >= 0)
		close(fd);
	return buf;
}

/* ---- search ---- */

static char *
lower_dup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);

	for (size_t i = 0; i < n; i++)
		d[i] = (char)tolower((unsigned char)s[i]);
	d[n] = '\0';
	return d;
}

static int
count_in(const char *hay, const char *needle)
{
	int c = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		c++;
	return c;
}

/* Searches one file's text, adding hits (at most cap in all). */
static void
search_text(const char *rel, char *text, char **terms, int nterms, struct hit *hits, int *nhits,
    int cap)
{
	char **lines;
	int n = 0, count = 1;

	for (const char *p = text; (p = strchr(p, '\n')) != NULL; p++)
		count++;
	lines = xcalloc((size_t)count, sizeof *lines);
	for (char *p = text; p != NULL && n < count;) {
		lines[n++] = p;
		p = strchr(p, '\n');
		if (p != NULL)
			*p++ = '\0';
	}
	for (int i = 0; i < n && *nhits < cap; i++) {
		char *low = lower_dup(lines[i], strlen(lines[i]));
		int score = 0, k;

		for (k = 0; k < nterms; k++) {
			int c = count_in(low, terms[k]);

			if (c == 0)
				break;
			score += c;
		}
		free(low);
		if (k < nterms)
			continue;
		{
			/* A few bytes over the cap, so the sequence snprintf may
			 * cut lies past SNIPPET_MAX; then back off to a character
			 * boundary (the text is valid UTF-8: read_capped). */
			char snip[SNIPPET_MAX + 8];
			size_t o = 0;

			for (int j = i > 0 ? i - 1 : 0; j <= i + 2 && j < n && o + 1 < sizeof snip; j++)
				o += (size_t)snprintf(snip + o, sizeof snip - o, "%s%s", o ? "\n" : "", lines[j]);
			o = utf8_cut(snip, strlen(snip), SNIPPET_MAX);
			snip[o] = '\0';
			hits[*nhits] = (struct hit){ xstrdup(rel), i + 1, score, xstrdup(snip) };
			(*nhits)++;
		}
	}
	free(lines);
}

/* Best score first; ties in file and line order, so results are stable. */
static int
by_score(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	int c;

	if (x->score != y->score)
		return y->score - x->score;
	if ((c = strcmp(x->path, y->path)) != 0)
		return c;
	return x->line - y->line;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* MEMORY.md, then the .md files of memory/ in name order, into files (malloc'd,
 * workspace-relative); returns how many (at most FILES_MAX). */
static int
list_files(int root, char *files[FILES_MAX])
{
	struct dirent *de;
	int nfiles = 0, dfd;
	DIR *dh = NULL;

	files[nfiles++] = xstrdup("MEMORY.md");
	/* Through the workspace's fd, never by path: memory/ as a link is skipped. */
	if ((dfd = mpath_opendir(root, "memory")) >= 0 && (dh = fdopendir(dfd)) == NULL)
		close(dfd);
	if (dh != NULL) {
		while ((de = readdir(dh)) != NULL && nfiles < FILES_MAX) {
			size_t n = strlen(de->d_name);

			if (n > 3 && strcmp(de->d_name + n - 3, ".md") == 0)
				files[nfiles++] = xasprintf("memory/%s", de->d_name);
		}
		closedir(dh);
	}
	qsort(files + 1, (size_t)nfiles - 1, sizeof files[0], by_name);
	return nfiles;
}

int
memory_search(const struct config *cfg, const char *query, int maxr, json_object **out,
    struct derr *e)
{
	char *terms[TERMS_MAX], *q, *save = NULL;
	char *files[FILES_MAX];
	int nterms = 0, nfiles = 0, nhits = 0, cap, root;
	int64_t deadline = mono_us() + SCAN_US_MAX;
	size_t scanned = 0;
	bool truncated = false;
	struct hit *hits;
	json_object *o, *arr;

	q = lower_dup(query, strlen(query));
	for (char *t = strtok_r(q, " \t\n", &save); t != NULL && nterms < TERMS_MAX;
	    t = strtok_r(NULL, " \t\n", &save))
		terms[nterms++] = t;
	if (nterms == 0) {
		free(q);
		return derr_set(e, DERR_INVALID, "query", "query has no terms");
	}
	o = json_object_new_object();
	arr = json_object_new_array();
	jx_add_str(o, "query", query);
	/* The Python tool stopped at 3x max_results lines, so the one-per-block
	 * rule could leave fewer results than asked; collect enough for it. */
	cap = maxr * 10;
	hits = xcalloc((size_t)cap * 2 + 8, sizeof *hits);
	if ((root = root_open(cfg, false, e)) >= 0) {
		nfiles = list_files(root, files);
		for (int i = 0; i < nfiles; i++) {
			struct derr fe;
			char *text = NULL;

			if (scanned >= SCAN_BYTES_MAX || mono_us() > deadline)
				truncated = true;
			else
				text = slurp(root, files[i], &fe);
			scanned += text != NULL ? strlen(text) : 0;

			/* Once the cap is reached, later files may still add a line each. */
			if (text != NULL)
				search_text(files[i], text, terms, nterms, hits, &nhits,
				    nhits >= cap ? nhits + 1 : cap);
			free(text);
			free(files[i]);
			if (nhits >= cap * 2) {
				for (int k = i + 1; k < nfiles; k++)
					free(files[k]);
				break;
			}
		}
		close(root);
	}
	qsort(hits, (size_t)nhits, sizeof *hits, by_score);
	for (int i = 0, kept = 0; i < nhits; i++) {
		bool dup = false;

		for (int j = 0; j < i && !dup; j++)
			dup = hits[j].path != NULL && strcmp(hits[j].path, hits[i].path) == 0 &&
			    hits[j].line / 5 == hits[i].line / 5 && hits[j].score >= 0;
		if (!dup && kept < maxr) {
			json_object *h = json_object_new_object();

			jx_add_str(h, "path", hits[i].path);
			json_object_object_add(h, "line", json_object_new_int(hits[i].line));
			jx_add_str(h, "snippet", hits[i].snippet);
			json_object_object_add(h, "score", json_object_new_int(hits[i].score));
			json_object_array_add(arr, h);
			kept++;
		}
	}
	for (int i = 0; i < nhits; i++) {
		free(hits[i].path);
		free(hits[i].snippet);
	}
	free(hits);
	free(q);
	json_object_object_add(o, "count", json_object_new_int((int)json_object_array_length(arr)));
	if (truncated)
		json_object_object_add(o, "truncated", json_object_new_boolean(1));
	json_object_object_add(o, "results", arr);
	*out = o;
	return 0;
}

/* ---- read ---- */

int
memory_read(const struct config *cfg, const char *path, int64_t offset, int64_t limit,
    json_object **out, struct derr *e)
{
	char *text, *p, *start = NULL, *end = NULL;
	int64_t line = 1, total = 0;
	json_object *o;
	int root;

	if ((root = root_open(cfg, false, e)) < 0)
		return -1;
	text = slurp(root, path, e);
	close(root);
	if (text == NULL)
		return -1;
	for (p = text; *p != '\0'; line++) {
		char *nl = strchr(p, '\n');

		if (line == offset)
			start = p;
		if (line == offset + limit - 1 || (nl == NULL && start != NULL && end == NULL))
			end = nl != NULL ? nl : p + strlen(p);
		total++;
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	if (start != NULL && end == NULL)
		end = text + strlen(text);
	o = json_object_new_object();
	jx_add_str(o, "path", path);
	json_object_object_add(o, "offset", json_object_new_int64(offset));
	json_object_object_add(o, "limit", json_object_new_int64(limit));
	json_object_object_add(o, "total_lines", json_object_new_int64(total));
	json_object_object_add(o, "content", json_object_new_string_len(start ? start : "",
	    start ? (int)(end - start) : 0));
	free(text);
	*out = o;
	return 0;
}

/* ---- append ---- */

/* The last component of path names a file (not "", "." or ".."). */
static bool
names_file(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base != NULL ? base + 1 : path;
	return base[0] != '\0' && strcmp(base, ".") != 0 && strcmp(base, "..") != 0;
}

/* A failed open or write of path (workspace-relative) as a derr: what the
 * client can fix is 4xx; only the unexpected is 500 (logged). */
static int
append_error(int err, const char *path, struct derr *e)
{
	switch (err) {
	case ELOOP:
		return derr_set(e, DERR_FORBIDDEN, "path", "cannot append to '%.*s': it is a "
		    "symbolic link", utf8_prec(path, 200), path);
	case EACCES:
	case EPERM:
	case EROFS:
		return derr_set(e, DERR_FORBIDDEN, "path", "cannot append to '%.*s': %s",
		    utf8_prec(path, 200), path,
		    strerror(err));
	case EISDIR:
	case ENOTDIR:
	case ENXIO:             /* a FIFO with no reader, a socket */
	case ENODEV:
		return derr_set(e, DERR_INVALID, "path", "cannot append to '%.*s': not a regular "
		    "file", utf8_prec(path, 200), path);
	case ENOENT:
		return derr_set(e, DERR_NOT_FOUND, "path", "the folder of '%.*s' does not exist",
		    utf8_prec(path, 200), path);
	case ENOSPC:
	case EDQUOT:
		return derr_set(e, DERR_UNAVAILABLE, NULL, "cannot append to '%.*s': %s",
		    utf8_prec(path, 200), path,
		    strerror(err));
	default:
		log_warn("memory_append %s: %s", path, strerror(err));
		return derr_set(e, DERR_INTERNAL, NULL, "cannot append to '%.*s': %s",
		    utf8_prec(path, 200), path,
		    strerror(err));
	}
}

/* Opens path (workspace-relative, checked) for appending: its folder
 * beneath root (no link followed), then the file created or opened by openat
 * on that folder's fd, O_NOFOLLOW; the fd of a regular file, or -1 with e
 * set. */
static int
append_open(int root, const char *path, struct derr *e)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/'), *base = slash != NULL ? slash + 1 : path;
	struct stat sb;
	int dfd, fd, err;

	snprintf(dir, sizeof dir, "%.*s", (int)(base - path), path);
	if ((dfd = mpath_opendir(root, dir)) < 0)
		return errno == ELOOP || errno == EXDEV ? outside(path, e) : append_error(errno, path, e);
	/* O_NONBLOCK: a FIFO must not block the open (ENXIO without a reader);
	 * with one, fstat refuses it. */
	fd = openat(dfd, base, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
	    0600);
	err = errno;
	close(dfd);
	if (fd < 0)
		return append_error(err, path, e);
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return append_error(EISDIR, path, e);
	}
	return fd;
}

int
memory_append(const struct config *cfg, const char *note, const char *path, json_object **out,
    struct derr *e)
{
	char rel[64] = "", *block;
	struct tm tm;
	time_t now = time(NULL);
	json_object *o;
	ssize_t len;
	int root, fd, err;

	if ((root = root_open(cfg, true, e)) < 0)
		return -1;
	gmtime_r(&now, &tm);
	if (path == NULL) {
		strftime(rel, sizeof rel, "memory/%Y-%m-%d.md", &tm);
		path = rel;
	}
	if (lexical(path, e) != 0)
		fd = -1;
	else if (!names_file(path))
		fd = derr_set(e, DERR_INVALID, "path", "path must name a file, not a folder ('%.*s')",
		    utf8_prec(path, 200), path);
	/* memory/ is made on demand (at the workspace's fd: a link there is
	 * EEXIST, then refused by append_open). */
	else if (strcmp(path, rel) == 0 && mkdirat(root, "memory", 0700) != 0 && errno != EEXIST)
		fd = append_error(errno, "memory", e);
	else
		fd = append_open(root, path, e);
	close(root);
	if (fd < 0)
		return -1;
	block = xasprintf("\n## [%02d:%02d UTC] Note\n\n%s\n", tm.tm_hour, tm.tm_min, note);
	len = write(fd, block, strlen(block));
	err = errno;
	close(fd);
	if (len != (ssize_t)strlen(block)) {
		free(block);
		return append_error(len < 0 ? err : ENOSPC, path, e);
	}
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	jx_add_str(o, "path", path);
	json_object_object_add(o, "appended", json_object_new_int((int)strlen(block)));
	free(block);
	*out = o;
	return 0;
}
