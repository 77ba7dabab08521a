/*
 * files_path.c - the task files' paths and folders (files_int.h): the
 * lexical rules, the task's folder, the folders on a path's way (found
 * through memory_path.c's openat2 beneath the task's folder, made one by
 * one with mkdirat on the fd of the one before), errno as derr, and the
 * walks that measure, list and remove a folder without following a link.
 *
 * Invariants: every fd is O_CLOEXEC; every step of a walk is relative to
 * an fd already open and opens its next component O_NOFOLLOW (a link is
 * looked at with fstatat(AT_SYMLINK_NOFOLLOW), never entered); walks stop
 * FILES_DEPTH_MAX + 1 folders down, whatever another program made there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/jx.h"
#include "core/log.h"
#include "files_int.h"
#include "memory_path.h"
#include "utf8.h"

#define WALK_DEPTH (FILES_DEPTH_MAX + 1)

char *files_root;

int
fpath_check(const char *path, int *depth, struct derr *e)
{
	const char *p = path;
	size_t len = strlen(path);

	*depth = 0;
	if (len == 0)
		return derr_set(e, DERR_INVALID, "path", "path is empty");
	if (path[0] == '/')
		return derr_set(e, DERR_FORBIDDEN, "path", "path must be relative to the task's "
		    "folder, not absolute");
	if (len > FILES_PATH_MAX)
		return derr_set(e, DERR_INVALID, "path", "path is too long (%zu bytes, at most %d)",
		    len, FILES_PATH_MAX);
	if (!utf8_valid(path, len))
		return derr_set(e, DERR_INVALID, "path", "path is not valid UTF-8");
	while (*p != '\0') {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return derr_set(e, DERR_FORBIDDEN, "path", "path may not contain '..': files "
			    "stay inside the task's folder");
		if (n == 0 || (n == 1 && p[0] == '.'))
			return derr_set(e, DERR_INVALID, "path", "path has an empty or '.' component "
			    "(write a/b, not a//b, ./a or a/)");
		if (n > FILES_NAME_MAX)
			return derr_set(e, DERR_INVALID, "path", "a name in path is too long (%zu "
			    "bytes, at most %d)", n, FILES_NAME_MAX);
		if (strncmp(p, FILES_TMP_PREFIX, strlen(FILES_TMP_PREFIX)) == 0)
			return derr_set(e, DERR_INVALID, "path", "names starting '%s' are detmd's own",
			    FILES_TMP_PREFIX);
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
				return derr_set(e, DERR_INVALID, "path", "path holds a control character");
		if (++*depth > FILES_DEPTH_MAX + 1)
			return derr_set(e, DERR_INVALID, "path", "path is too deep (at most %d folders)",
			    FILES_DEPTH_MAX);
		p += n;
		if (*p == '/' && *++p == '\0')
			return derr_set(e, DERR_INVALID, "path", "path ends with '/': name a file");
	}
	return 0;
}

int
fpath_errno(int err, const char *path, const char *what, struct derr *e)
{
	int n = utf8_prec(path, 200);

	switch (err) {
	case ELOOP:
	case EXDEV:
		return derr_set(e, DERR_FORBIDDEN, "path", "cannot %s '%.*s': a symbolic link is on "
		    "its way (links are never followed: files stay inside the task's folder)", what, n, path);
	case ENOENT:
		return derr_set(e, DERR_NOT_FOUND, "path", "cannot %s '%.*s': no such file in the "
		    "task's folder", what, n, path);
	case ENOTDIR:
		return derr_set(e, DERR_CONFLICT, "path", "cannot %s '%.*s': a file is where a folder "
		    "must be", what, n, path);
	case EISDIR:
		return derr_set(e, DERR_CONFLICT, "path", "cannot %s '%.*s': it is a folder", what, n, path);
	case ENOTEMPTY:
		return derr_set(e, DERR_CONFLICT, "path", "cannot %s '%.*s': the folder is not empty",
		    what, n, path);
	case EACCES:
	case EPERM:
	case EROFS:
		return derr_set(e, DERR_FORBIDDEN, "path", "cannot %s '%.*s': %s", what, n, path,
		    strerror(err));
	case ENAMETOOLONG:
		return derr_set(e, DERR_INVALID, "path", "cannot %s '%.*s': a name is too long", what,
		    n, path);
	case ENOSPC:
	case EDQUOT:
		return derr_set(e, DERR_NO_SPACE, NULL, "cannot %s '%.*s': no space left on the "
		    "device; nothing was stored", what, n, path);
	case EIO:
		return derr_set(e, DERR_IO_ERROR, NULL, "cannot %s '%.*s': the disk failed (EIO); "
		    "nothing was stored", what, n, path);
	default:
		log_warn("files: %s %s: %s", what, path, strerror(err));
		return derr_set(e, DERR_INTERNAL, NULL, "cannot %s '%.*s': %s", what, n, path,
		    strerror(err));
	}
}

/* fsync of a folder, so a name made or renamed in it survives a crash. */
static int
sync_dir(int dfd)
{
	return fsync(dfd) == 0 || errno == EINVAL ? 0 : -1;
}

int
fpath_task_fd(const char *task_id, bool create, struct derr *e)
{
	int top, fd = -1, err;

	if (!id_valid(task_id))         /* a folder's name is a task id, nothing else */
		return derr_set(e, DERR_NOT_FOUND, "task_id", "no task with id '%.*s'",
		    utf8_prec(task_id, 64), task_id);
	top = open(files_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		return fpath_errno(errno, task_id, "open the folder of task", e);
	if (create && mkdirat(top, task_id, 0700) == 0 && sync_dir(top) != 0) {
		err = errno;
		close(top);
		return fpath_errno(err, task_id, "make the folder of task", e);
	}
	fd = openat(top, task_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = errno;
	close(top);
	if (fd >= 0)
		return fd;
	if (err == ENOENT)
		return derr_set(e, DERR_NOT_FOUND, "path", "task %s has no files yet", task_id);
	return fpath_errno(err, task_id, "open the folder of task", e);
}

/* The next folder comp beneath dfd (openat2 through memory_path.c: no
 * link followed), made first when create and absent. *made says so. */
static int
step(int dfd, const char *comp, bool create, bool *made)
{
	int fd = mpath_opendir(dfd, comp);

	*made = false;
	if (fd >= 0 || errno != ENOENT || !create)
		return fd;
	if (mkdirat(dfd, comp, 0700) != 0 && errno != EEXIST)
		return -1;
	*made = true;
	return mpath_opendir(dfd, comp);
}

/* Walks path's folders beneath root; *base at the last component. The fd
 * of the last folder there is, or -1 with errno; *missing counts the
 * folders that were not there (made when create). */
static int
walk(int root, const char *path, bool create, const char **base, int *missing)
{
	char comp[FILES_NAME_MAX + 1];
	const char *p = path, *slash;
	int fd = dup(root), next, err;
	bool gone = false;

	*missing = 0;
	for (; fd >= 0 && (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		bool made;

		if (gone) {
			(*missing)++;   /* below a missing folder: missing too */
			continue;
		}
		snprintf(comp, sizeof comp, "%.*s", (int)(slash - p), p);
		next = step(fd, comp, create, &made);
		err = errno;
		if (next < 0 && err == ENOENT && !create) {
			gone = true;
			(*missing)++;
			continue;
		}
		if (made) {
			(*missing)++;
			if (sync_dir(fd) != 0) {
				err = errno;
				if (next >= 0)
					close(next);
				next = -1;
			}
		}
		close(fd);
		errno = err;
		fd = next;
	}
	*base = p;
	return fd;
}

int
fpath_missing(int root, const char *path, struct derr *e)
{
	const char *base;
	int missing, fd = walk(root, path, false, &base, &missing);

	if (fd < 0 && errno != ENOENT)
		return fpath_errno(errno, path, "store", e);
	if (fd >= 0)
		close(fd);
	return missing;
}

int
fpath_parent(int root, const char *path, bool create, const char **base, struct derr *e)
{
	int missing, fd = walk(root, path, create, base, &missing);

	if (fd < 0)
		return fpath_errno(errno, path, create ? "store" : "open", e);
	if (!create && missing > 0) {
		close(fd);
		return fpath_errno(ENOENT, path, "open", e);
	}
	return fd;
}

/* Calls fn for each entry of the folder dfd (not "." or ".."), with its
 * lstat. */
static void
each(int dfd, void (*fn)(int dfd, const char *name, const struct stat *sb, void *arg), void *arg)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dh = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (dh == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(dh)) != NULL) {
		struct stat sb;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		fn(dfd, de->d_name, &sb, arg);
	}
	closedir(dh);
}

struct usage_walk {
	struct fusage *u;
	int depth;
};

static void
usage_one(int dfd, const char *name, const struct stat *sb, void *arg)
{
	struct usage_walk *w = arg;
	int fd;

	if (strncmp(name, FILES_TMP_PREFIX, strlen(FILES_TMP_PREFIX)) == 0 && S_ISREG(sb->st_mode)) {
		unlinkat(dfd, name, 0);         /* an upload that never finished */
		return;
	}
	w->u->entries++;
	if (S_ISREG(sb->st_mode))
		w->u->bytes += sb->st_size;
	if (!S_ISDIR(sb->st_mode) || w->depth >= WALK_DEPTH)
		return;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	w->depth++;
	each(fd, usage_one, w);
	w->depth--;
	close(fd);
}

void
fpath_usage(int root, struct fusage *u)
{
	struct usage_walk w = { u, 0 };

	u->bytes = 0;
	u->entries = 0;
	each(root, usage_one, &w);
}

struct list_walk {
	json_object *arr;
	int max, depth;
	bool *more;
	char prefix[FILES_PATH_MAX + FILES_NAME_MAX + 2];
};

static void
list_one(int dfd, const char *name, const struct stat *sb, void *arg)
{
	struct list_walk *w = arg;
	json_object *o;
	size_t plen = strlen(w->prefix);
	int fd;

	if (strncmp(name, FILES_TMP_PREFIX, strlen(FILES_TMP_PREFIX)) == 0)
		return;
	if ((int)json_object_array_length(w->arr) >= w->max) {
		*w->more = true;
		return;
	}
	o = json_object_new_object();
	snprintf(w->prefix + plen, sizeof w->prefix - plen, "%s", name);
	json_object_object_add(o, "path", json_object_new_string(w->prefix));
	json_object_object_add(o, "type", json_object_new_string(S_ISREG(sb->st_mode) ? "file" :
	    S_ISDIR(sb->st_mode) ? "folder" : S_ISLNK(sb->st_mode) ? "symlink" : "other"));
	json_object_object_add(o, "bytes", json_object_new_int64(S_ISREG(sb->st_mode) ? sb->st_size : 0));
	jx_add_time(o, "mtime", (int64_t)sb->st_mtim.tv_sec * 1000 + sb->st_mtim.tv_nsec / 1000000);
	json_object_array_add(w->arr, o);
	if (S_ISDIR(sb->st_mode) && w->depth < WALK_DEPTH &&
	    (fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		size_t n = strlen(w->prefix);

		snprintf(w->prefix + n, sizeof w->prefix - n, "/");
		w->depth++;
		each(fd, list_one, w);
		w->depth--;
		close(fd);
	}
	w->prefix[plen] = '\0';
}

static int
by_path(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;

	return strcmp(json_object_get_string(json_object_object_get(x, "path")),
	    json_object_get_string(json_object_object_get(y, "path")));
}

void
fpath_list(int root, json_object *arr, int max, bool *more)
{
	struct list_walk w = { .arr = arr, .max = max, .more = more };

	*more = false;
	each(root, list_one, &w);
	json_object_array_sort(arr, by_path);
}

static void rmtree_at(int dirfd, const char *name, int depth);

static void
rm_one(int dfd, const char *name, const struct stat *sb, void *arg)
{
	(void)sb;
	rmtree_at(dfd, name, *(int *)arg);
}

/* How deep a removal goes: a program on the task's display may have made
 * folders deeper than uploads can; what is below this stays (logged). */
#define RM_DEPTH 64

static void
rmtree_at(int dirfd, const char *name, int depth)
{
	int fd = depth < RM_DEPTH ? openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC) : -1;

	if (fd >= 0) {
		depth++;
		each(fd, rm_one, &depth);
		close(fd);
		if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0)
			log_warn("files: cannot remove the folder %s: %s", name, strerror(errno));
		return;
	}
	if (unlinkat(dirfd, name, 0) != 0 && errno != ENOENT)
		log_warn("files: cannot remove %s: %s", name, strerror(errno));
}

void
fpath_rmtree(int dirfd, const char *name)
{
	rmtree_at(dirfd, name, 0);
}
