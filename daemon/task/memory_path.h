/*
 * memory_path.h - opening a workspace-relative path beneath the workspace's
 * directory fd with no symbolic link followed in any component
 * (memory_path.c), for the memory tools (memory.c).
 *
 * Each returns a new fd (O_CLOEXEC; the caller closes it), or -1 with errno:
 * ELOOP when a component is a symbolic link (never followed), EXDEV when
 * the path would leave root ("..", absolute), ENOENT, ENOTDIR, EACCES as
 * open(2). rel is relative; "", "." and empty components name root itself.
 * Thread-safe (no state).
 */
#ifndef DETM_MEMORY_PATH_H
#define DETM_MEMORY_PATH_H

#include <sys/types.h>

/* The folder rel beneath root, O_RDONLY|O_DIRECTORY: openat2 with
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS, or
 * mpath_walk where the kernel has no openat2 (ENOSYS, before 5.6). */
int mpath_opendir(int root, const char *rel);
/* The same by a walk, one openat(O_PATH|O_NOFOLLOW) and fstat per
 * component (a link is ELOOP, anything else not a folder ENOTDIR): the
 * fallback, declared here so tests can run it on a kernel with openat2. */
int mpath_walk(int root, const char *rel);
/* The file rel beneath root: its folder by mpath_opendir, then the last
 * component by openat on that folder's fd with flags | O_NOFOLLOW |
 * O_CLOEXEC (mode for O_CREAT), so neither opening nor creating follows a
 * link. A last component that is empty ("dir/") opens the folder itself. */
int mpath_open(int root, const char *rel, int flags, mode_t mode);

#endif
