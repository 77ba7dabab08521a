/*
 * files_int.h - what files.c (the operations) and files_path.c (paths,
 * folders and walks) share; private to daemon/task/.
 */
#ifndef DETM_FILES_INT_H
#define DETM_FILES_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "files.h"

#define FILES_TMP_PREFIX ".detm-"      /* detmd's own names; refused in paths */

/* The folder of every task's folder (<data dir>/files), set by files_init. */
extern char *files_root;

/* Refuses a path that breaks the rules of files.h (DERR_INVALID, or
 * DERR_FORBIDDEN for "..", an absolute path); *depth gets its number of
 * components. 0 or -1. */
int fpath_check(const char *path, int *depth, struct derr *e) DETM_NODISCARD;
/* A failed file system call on path (errno err) as a derr: ELOOP/EXDEV
 * forbidden (a symbolic link, or outside), ENOENT not found, ENOTDIR and
 * EISDIR conflict, ENOSPC no_space, EIO io_error, else internal (logged). */
int fpath_errno(int err, const char *path, const char *what, struct derr *e);
/* The task's folder (O_RDONLY|O_DIRECTORY, never a link), made (0700, its
 * parent fsync'd) when create. -1 with e (DERR_NOT_FOUND "no files yet"
 * when absent and !create). */
int fpath_task_fd(const char *task_id, bool create, struct derr *e);
/* How many folders on path's way (all components but the last) do not
 * exist yet beneath root. -1 with e when one is a link or a file. */
int fpath_missing(int root, const char *path, struct derr *e);
/* The folder of path's last component beneath root, made on the way when
 * create (each new folder's parent fsync'd), as an fd; *base points into
 * path at the last component. -1 with e. */
int fpath_parent(int root, const char *path, bool create, const char **base, struct derr *e);

struct fusage {
	int64_t bytes;          /* regular files' sizes */
	int entries;            /* files, folders, links, others */
};
/* What root holds, walked without following links (at most
 * FILES_DEPTH_MAX + 1 deep). Leftover temporary files (FILES_TMP_PREFIX)
 * of an upload that never finished are removed on the way: the caller
 * holds the task's lock, so none is in use. */
void fpath_usage(int root, struct fusage *u);
/* Every entry beneath root as {path, type, bytes, mtime} into arr (at most
 * max; *more set when there were more). */
void fpath_list(int root, json_object *arr, int max, bool *more);
/* Removes name beneath dirfd and everything in it, never following a
 * link (a link is removed as itself). */
void fpath_rmtree(int dirfd, const char *name);

#endif
