/*
 * files.h - each task's own folder of files, <data dir>/files/<task id>/
 * (files.c): upload, download, list and delete by a path relative to it,
 * confined to it, each call logged on the task as an `other` action.
 *
 * The folder is made at the first upload or list (mode 0700) and removed
 * with everything in it when the task is deleted. Apps started on the
 * task's display may use it as their working folder (files_dir).
 *
 * Paths: relative, components separated by '/', each 1..FILES_NAME_MAX
 * bytes of UTF-8 without control characters; "..", ".", empty components,
 * a leading '/' and names starting ".detm-" (detmd's own temporary files)
 * are refused; no symbolic link is ever followed (a link anywhere on the
 * path is DERR_FORBIDDEN), through task/memory_path.c's openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS and O_NOFOLLOW walks.
 *
 * Durability: an upload is written to a temporary file in the target's
 * folder, fsync'd, renamed over the target and the folder fsync'd (folders
 * made on the way too) before files_put returns 0: a 2xx is a promise that
 * the whole file survives a crash; a failure leaves the old file (or none).
 *
 * Thread-safe: uploads and deletes of one task are serialised (a striped
 * lock), reads are not (a rename is atomic).
 */
#ifndef DETM_FILES_H
#define DETM_FILES_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/util.h"
#include "derr.h"
#include "store/store.h"

#define FILES_MAX_BYTES    (32L * 1024 * 1024)    /* one file */
#define FILES_TASK_BYTES   (256L * 1024 * 1024)   /* all of one task's files */
#define FILES_TASK_ENTRIES 1000                   /* files and folders in one task's folder */
#define FILES_NAME_MAX     255                    /* bytes of one path component */
#define FILES_PATH_MAX     512                    /* bytes of a path (fits a URL escaped) */
#define FILES_DEPTH_MAX    16                     /* folders deep */
#define FILES_INLINE_MAX   (8L * 1024 * 1024)     /* a download answered as JSON (tools) */

/* Once at start-up: <data_dir>/files, and the hook that removes a deleted
 * task's folder. 0, or -1 with e. */
int files_init(const char *data_dir, struct derr *e) DETM_NODISCARD;

/* The absolute path of task_id's folder into out (it may not exist yet). */
void files_dir(const char *task_id, char out[PATH_MAX]);
/* The same, the folder made first if it is not there (0700): for whoever
 * starts programs on the task's display with it as their working folder.
 * 0, or -1 with e (a link or a file in its place is DERR_FORBIDDEN /
 * DERR_CONFLICT). */
int files_folder(const char *task_id, char out[PATH_MAX], struct derr *e) DETM_NODISCARD;

/* Stores len bytes as path (created or replaced, its folders made).
 * *out (caller owns): {ok, task_id, path, bytes, created, folder,
 * absolute_path}. Errors: DERR_INVALID (a bad path), DERR_FORBIDDEN (it
 * would leave the folder: "..", absolute, a symbolic link), DERR_CONFLICT
 * (a folder is in the way, or a file where a folder must be),
 * DERR_TOO_LARGE (over FILES_MAX_BYTES, or the task's folder would pass
 * FILES_TASK_BYTES or FILES_TASK_ENTRIES), DERR_NO_SPACE, DERR_IO_ERROR. */
int files_put(struct store *st, const char *task_id, const char *path,
    const unsigned char *data, size_t len, json_object **out, struct derr *e) DETM_NODISCARD;

/* Opens path for reading: *fd (the caller's; O_RDONLY, a regular file),
 * *size, *mime (static: from the name's extension). Logged as a download.
 * Errors: DERR_NOT_FOUND, DERR_FORBIDDEN, DERR_INVALID (a folder, not a
 * regular file), as files_put for the path. */
int files_open(struct store *st, const char *task_id, const char *path, int *fd,
    uint64_t *size, const char **mime, struct derr *e) DETM_NODISCARD;

/* The whole of path as JSON: {task_id, path, bytes, mime_type, encoding:
 * "utf-8" with content (the text), or "base64" with content_base64}.
 * DERR_TOO_LARGE over FILES_INLINE_MAX (download it raw). Logged. */
int files_get_json(struct store *st, const char *task_id, const char *path,
    json_object **out, struct derr *e) DETM_NODISCARD;

/* Every file and folder, sorted by path: {task_id, folder, files:[{path,
 * type: file|folder|symlink|other, bytes, mtime}], count, total_bytes,
 * limits:{...}}. Makes the folder if it is not there yet. */
int files_list(const char *task_id, json_object **out, struct derr *e) DETM_NODISCARD;

/* Removes a file, or an empty folder. Logged. */
int files_delete(struct store *st, const char *task_id, const char *path,
    json_object **out, struct derr *e) DETM_NODISCARD;

#endif
