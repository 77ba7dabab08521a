/*
 * files.c - each task's own folder of files (files.h): upload (written to
 * a temporary file, fsync'd, renamed, the folder fsync'd), download (an fd
 * for a raw reply, or the bytes as JSON for a tool), list, delete, the
 * caps, the removal of a deleted task's folder, and one `other` action
 * logged on the task per upload, download and delete.
 *
 * Invariants: an upload or delete of a task runs under its stripe lock,
 * so the caps are checked against a folder nobody else of detmd changes
 * meanwhile (a program on the task's display still may: the caps bound
 * what detmd writes, not what such a program does); a log row carries the
 * path and size, never the content.
 *
 * Not here: paths, folders and walks (files_path.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/jx.h"
#include "core/log.h"
#include "files_int.h"
#include "memory_path.h"
#include "task.h"
#include "utf8.h"

#define STRIPES 16

static pthread_mutex_t stripes[STRIPES] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER,
};

static pthread_mutex_t *
stripe(const char *task_id)
{
	unsigned h = 5381;

	for (const char *p = task_id; *p != '\0'; p++)
		h = h * 33 + (unsigned char)*p;
	return &stripes[h % STRIPES];
}

static const struct {
	const char *ext, *mime;
} mimes[] = {
	{ "txt", "text/plain; charset=utf-8" }, { "md", "text/markdown; charset=utf-8" },
	{ "csv", "text/csv; charset=utf-8" }, { "json", "application/json" },
	{ "html", "text/html; charset=utf-8" }, { "xml", "application/xml" },
	{ "png", "image/png" }, { "jpg", "image/jpeg" }, { "jpeg", "image/jpeg" },
	{ "gif", "image/gif" }, { "webp", "image/webp" }, { "svg", "image/svg+xml" },
	{ "pdf", "application/pdf" }, { "zip", "application/zip" }, { "mp4", "video/mp4" },
};

static const char *
mime_of(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot != NULL && strchr(dot, '/') == NULL)
		for (size_t i = 0; i < ARRAY_LEN(mimes); i++)
			if (strcasecmp(dot + 1, mimes[i].ext) == 0)
				return mimes[i].mime;
	return "application/octet-stream";
}

/* One `other` action on the task: what, the path, and the outcome. */
static void
log_file(struct store *st, const char *task_id, const char *what, const char *path,
    int64_t bytes, const struct derr *err)
{
	struct action_new a = { .type = "other", .duration_ms = -1 };
	json_object *in = json_object_new_object(), *out = json_object_new_object();
	char summary[400], id[ID_LEN], fixed[512];
	struct derr e2;
	int64_t ord;

	/* A refused path may be anything: logged repaired and cut. */
	utf8_fix(fixed, sizeof fixed, path, strlen(path));
	path = fixed;
	json_object_object_add(in, "path", json_object_new_string(path));
	if (err == NULL) {
		json_object_object_add(out, "bytes", json_object_new_int64(bytes));
		snprintf(summary, sizeof summary, "%s %.*s (%lld bytes)", what, utf8_prec(path, 300),
		    path, (long long)bytes);
	} else {
		derr_add_json(out, err);
		snprintf(summary, sizeof summary, "%s %.*s failed: %.*s", what, utf8_prec(path, 150),
		    path, utf8_prec(err->message, 200), err->message);
	}
	a.status = err == NULL ? "completed" : "failed";
	a.summary = summary;
	a.input_json = jx_string(in, NULL);
	a.output_json = jx_string(out, NULL);
	if (task_action_add(st, task_id, &a, id, &ord, &e2) != 0)
		log_warn("could not log the %s of %s on task %s: %s", what, path, task_id, e2.message);
	json_object_put(in);
	json_object_put(out);
}

static void
on_task_change(const char *task_id, int from, int to, void *arg)
{
	int top;

	(void)from;
	(void)arg;
	if (to != TASK_HOOK_DELETED || !id_valid(task_id))
		return;
	top = open(files_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		return;
	pthread_mutex_lock(stripe(task_id));
	fpath_rmtree(top, task_id);
	fsync(top);
	pthread_mutex_unlock(stripe(task_id));
	close(top);
}

int
files_init(const char *data_dir, struct derr *e)
{
	free(files_root);
	files_root = xasprintf("%s/files", data_dir);
	if (mkdir(files_root, 0700) != 0 && errno != EEXIST)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot create %s: %s", files_root, strerror(errno));
	task_hook_add(on_task_change, NULL);
	return 0;
}

void
files_dir(const char *task_id, char out[PATH_MAX])
{
	snprintf(out, PATH_MAX, "%s/%s", files_root, task_id);
}

int
files_folder(const char *task_id, char out[PATH_MAX], struct derr *e)
{
	int fd;

	pthread_mutex_lock(stripe(task_id));
	fd = fpath_task_fd(task_id, true, e);
	pthread_mutex_unlock(stripe(task_id));
	if (fd < 0)
		return -1;
	close(fd);
	files_dir(task_id, out);
	return 0;
}

/* Writes data into a new temporary file in pfd, fsync'd; its name in tmp. */
static int
write_tmp(int pfd, const unsigned char *data, size_t len, char tmp[64])
{
	char secret[SECRET_LEN];
	size_t done = 0;
	int fd, err;

	secret_new(secret);
	snprintf(tmp, 64, "%sup-%.16s", FILES_TMP_PREFIX, secret);
	fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		done += (size_t)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	return 0;
fail:
	err = errno != 0 ? errno : EIO;
	if (fd >= 0)
		close(fd);
	unlinkat(pfd, tmp, 0);
	errno = err;
	return -1;
}

/* The caps for an upload of len bytes as path (which holds old bytes, or
 * is new), missing folders to be made on the way. */
static int
check_caps(int root, const char *path, size_t len, int64_t old, bool exists, int missing,
    struct derr *e)
{
	struct fusage u;

	fpath_usage(root, &u);
	if (u.bytes - old + (int64_t)len > FILES_TASK_BYTES)
		return derr_set(e, DERR_TOO_LARGE, NULL, "the task's folder would hold %lld bytes: "
		    "at most %ld (it holds %lld; delete files first)",
		    (long long)(u.bytes - old + (int64_t)len), FILES_TASK_BYTES, (long long)u.bytes);
	if (u.entries + missing + (exists ? 0 : 1) > FILES_TASK_ENTRIES)
		return derr_set(e, DERR_TOO_LARGE, NULL, "the task's folder would hold more than %d "
		    "files and folders", FILES_TASK_ENTRIES);
	(void)path;
	return 0;
}

/* The upload under the task's lock; *created says it is new. */
static int
put_locked(int root, const char *path, const unsigned char *data, size_t len, bool *created,
    struct derr *e)
{
	const char *base;
	struct stat sb;
	char tmp[64];
	int missing, pfd = -1, rc = -1;
	int64_t old = 0;
	bool exists = false;

	if ((missing = fpath_missing(root, path, e)) < 0)
		return -1;
	if (missing == 0 && (pfd = fpath_parent(root, path, false, &base, e)) < 0)
		return -1;
	if (pfd >= 0 && fstatat(pfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(sb.st_mode)) {
			rc = fpath_errno(ELOOP, path, "store", e);
			goto out;
		}
		if (!S_ISREG(sb.st_mode)) {
			rc = fpath_errno(EISDIR, path, "store", e);
			goto out;
		}
		exists = true;
		old = sb.st_size;
	}
	if (check_caps(root, path, len, old, exists, missing, e) != 0)
		goto out;
	if (pfd < 0 && (pfd = fpath_parent(root, path, true, &base, e)) < 0)
		goto out;
	if (write_tmp(pfd, data, len, tmp) != 0) {
		rc = fpath_errno(errno, path, "store", e);
		goto out;
	}
	/* Checked again: a program may have put a link or a folder there. */
	if (fstatat(pfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(sb.st_mode)) {
		unlinkat(pfd, tmp, 0);
		rc = fpath_errno(S_ISLNK(sb.st_mode) ? ELOOP : EISDIR, path, "store", e);
		goto out;
	}
	if (renameat(pfd, tmp, pfd, base) != 0 || fsync(pfd) != 0) {
		int err = errno;

		unlinkat(pfd, tmp, 0);
		rc = fpath_errno(err, path, "store", e);
		goto out;
	}
	*created = !exists;
	rc = 0;
out:
	if (pfd >= 0)
		close(pfd);
	return rc;
}

static json_object *
file_reply(const char *task_id, const char *path, int64_t bytes)
{
	json_object *o = json_object_new_object();
	char dir[PATH_MAX], abs[PATH_MAX + FILES_PATH_MAX + 2];

	files_dir(task_id, dir);
	snprintf(abs, sizeof abs, "%s/%s", dir, path);
	json_object_object_add(o, "task_id", json_object_new_string(task_id));
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "bytes", json_object_new_int64(bytes));
	json_object_object_add(o, "folder", json_object_new_string(dir));
	json_object_object_add(o, "absolute_path", json_object_new_string(abs));
	return o;
}

int
files_put(struct store *st, const char *task_id, const char *path, const unsigned char *data,
    size_t len, json_object **out, struct derr *e)
{
	bool created = false;
	int depth, root = -1, rc = -1;

	*out = NULL;
	if (fpath_check(path, &depth, e) != 0) {
		/* refused before anything was tried; logged all the same */
	} else if (len > (size_t)FILES_MAX_BYTES) {
		derr_set(e, DERR_TOO_LARGE, NULL, "a file holds at most %ld bytes (got %zu)",
		    FILES_MAX_BYTES, len);
	} else {
		pthread_mutex_lock(stripe(task_id));
		if ((root = fpath_task_fd(task_id, true, e)) >= 0)
			rc = put_locked(root, path, data, len, &created, e);
		pthread_mutex_unlock(stripe(task_id));
	}
	if (root >= 0)
		close(root);
	log_file(st, task_id, "upload", path, (int64_t)len, rc == 0 ? NULL : e);
	if (rc != 0)
		return -1;
	*out = file_reply(task_id, path, (int64_t)len);
	json_object_object_add(*out, "ok", json_object_new_boolean(1));
	json_object_object_add(*out, "created", json_object_new_boolean(created));
	json_object_object_add(*out, "mime_type", json_object_new_string(mime_of(path)));
	return 0;
}

/* path's fd (a regular file) and size; not logged. */
static int
open_file(const char *task_id, const char *path, int *fd, uint64_t *size, struct derr *e)
{
	struct stat sb;
	int root, err;

	*fd = -1;
	if ((root = fpath_task_fd(task_id, false, e)) < 0)
		return -1;
	/* O_NONBLOCK: a FIFO someone made there must not block the open. */
	*fd = mpath_open(root, path, O_RDONLY | O_NONBLOCK, 0);
	err = errno;
	close(root);
	if (*fd < 0)
		return fpath_errno(err, path, "read", e);
	if (fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(*fd);
		*fd = -1;
		return derr_set(e, DERR_INVALID, "path", "'%.*s' is not a file (a folder? list it with "
		    "GET /api/tasks/%s/files)", utf8_prec(path, 200), path, task_id);
	}
	*size = (uint64_t)sb.st_size;
	return 0;
}

int
files_open(struct store *st, const char *task_id, const char *path, int *fd, uint64_t *size,
    const char **mime, struct derr *e)
{
	int depth, rc;

	*fd = -1;
	*mime = mime_of(path);
	rc = fpath_check(path, &depth, e) != 0 ? -1 : open_file(task_id, path, fd, size, e);
	log_file(st, task_id, "download", path, rc == 0 ? (int64_t)*size : 0, rc == 0 ? NULL : e);
	return rc;
}

/* Reads all of fd (size bytes) into a new buffer. */
static unsigned char *
slurp(int fd, uint64_t size, size_t *got)
{
	unsigned char *buf = xmalloc((size_t)size + 1);
	size_t done = 0;

	while (done < size) {
		ssize_t n = read(fd, buf + done, (size_t)size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;  /* shorter than it was: what is there */
		done += (size_t)n;
	}
	buf[done] = '\0';
	*got = done;
	return buf;
}

int
files_get_json(struct store *st, const char *task_id, const char *path, json_object **out,
    struct derr *e)
{
	unsigned char *data;
	uint64_t size;
	const char *mime;
	size_t got;
	int fd;

	*out = NULL;
	if (files_open(st, task_id, path, &fd, &size, &mime, e) != 0)
		return -1;
	if (size > (uint64_t)FILES_INLINE_MAX) {
		close(fd);
		return derr_set(e, DERR_TOO_LARGE, "path", "'%.*s' has %llu bytes: a tool answer "
		    "holds at most %ld; download it raw with GET /api/tasks/%s/files/<path>",
		    utf8_prec(path, 200), path, (unsigned long long)size, FILES_INLINE_MAX, task_id);
	}
	data = slurp(fd, size, &got);
	close(fd);
	*out = file_reply(task_id, path, (int64_t)got);
	json_object_object_add(*out, "mime_type", json_object_new_string(mime));
	if (utf8_valid((const char *)data, got) && strlen((const char *)data) == got) {
		json_object_object_add(*out, "encoding", json_object_new_string("utf-8"));
		json_object_object_add(*out, "content", json_object_new_string_len((const char *)data,
		    (int)got));
	} else {
		char *b64 = b64_encode(data, got, NULL);

		json_object_object_add(*out, "encoding", json_object_new_string("base64"));
		json_object_object_add(*out, "content_base64", json_object_new_string(b64));
		free(b64);
	}
	free(data);
	return 0;
}

int
files_list(const char *task_id, json_object **out, struct derr *e)
{
	json_object *arr = json_object_new_array(), *lim = json_object_new_object();
	struct fusage u = { 0, 0 };
	char dir[PATH_MAX];
	bool more = false;
	int root;

	*out = NULL;
	pthread_mutex_lock(stripe(task_id));
	root = fpath_task_fd(task_id, true, e);
	if (root >= 0)
		fpath_usage(root, &u);
	pthread_mutex_unlock(stripe(task_id));
	if (root < 0) {
		json_object_put(arr);
		json_object_put(lim);
		return -1;
	}
	fpath_list(root, arr, FILES_TASK_ENTRIES, &more);
	close(root);
	files_dir(task_id, dir);
	*out = json_object_new_object();
	json_object_object_add(*out, "task_id", json_object_new_string(task_id));
	json_object_object_add(*out, "folder", json_object_new_string(dir));
	json_object_object_add(*out, "count", json_object_new_int((int)json_object_array_length(arr)));
	json_object_object_add(*out, "files", arr);
	json_object_object_add(*out, "total_bytes", json_object_new_int64(u.bytes));
	json_object_object_add(*out, "truncated", json_object_new_boolean(more));
	json_object_object_add(lim, "file_bytes", json_object_new_int64(FILES_MAX_BYTES));
	json_object_object_add(lim, "task_bytes", json_object_new_int64(FILES_TASK_BYTES));
	json_object_object_add(lim, "task_entries", json_object_new_int(FILES_TASK_ENTRIES));
	json_object_object_add(lim, "name_bytes", json_object_new_int(FILES_NAME_MAX));
	json_object_object_add(lim, "path_bytes", json_object_new_int(FILES_PATH_MAX));
	json_object_object_add(lim, "depth", json_object_new_int(FILES_DEPTH_MAX));
	json_object_object_add(*out, "limits", lim);
	return 0;
}

static int
delete_locked(int root, const char *path, int64_t *bytes, struct derr *e)
{
	const char *base;
	struct stat sb;
	int pfd = fpath_parent(root, path, false, &base, e), rc = -1;

	if (pfd < 0)
		return -1;
	if (fstatat(pfd, base, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
		rc = fpath_errno(errno, path, "delete", e);
	} else if (unlinkat(pfd, base, S_ISDIR(sb.st_mode) ? AT_REMOVEDIR : 0) != 0 ||
	    fsync(pfd) != 0) {
		rc = fpath_errno(errno == EEXIST ? ENOTEMPTY : errno, path, "delete", e);
	} else {
		*bytes = S_ISREG(sb.st_mode) ? sb.st_size : 0;
		rc = 0;
	}
	close(pfd);
	return rc;
}

int
files_delete(struct store *st, const char *task_id, const char *path, json_object **out,
    struct derr *e)
{
	int64_t bytes = 0;
	int depth, root, rc = -1;

	*out = NULL;
	pthread_mutex_lock(stripe(task_id));
	if (fpath_check(path, &depth, e) == 0 && (root = fpath_task_fd(task_id, false, e)) >= 0) {
		rc = delete_locked(root, path, &bytes, e);
		close(root);
	}
	pthread_mutex_unlock(stripe(task_id));
	log_file(st, task_id, "delete", path, bytes, rc == 0 ? NULL : e);
	if (rc != 0)
		return -1;
	*out = file_reply(task_id, path, bytes);
	json_object_object_add(*out, "ok", json_object_new_boolean(1));
	json_object_object_add(*out, "deleted", json_object_new_boolean(1));
	return 0;
}
