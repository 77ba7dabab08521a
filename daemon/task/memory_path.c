/*
 * memory_path.c - the memory tools' path resolution (issue 33): a
 * workspace-relative path is opened beneath the workspace's directory fd,
 * and no component is ever a symbolic link that gets followed. The old
 * guard (realpath, check, then open by name) could be raced: a folder on
 * the path swapped for a link between the check and the open was followed.
 * Here each step is relative to an fd already open, so a swap either is
 * seen (ELOOP) or did not happen yet; nothing outside is reached.
 *
 * Invariants: every fd is O_CLOEXEC; every component is opened O_NOFOLLOW
 * relative to the fd of the one before (the walk: O_PATH, then fstat of the
 * fd decides, so the answer is about what was opened, not a later lookup);
 * ".." is refused in the walk (memory.c refuses it before), openat2's
 * RESOLVE_BENEATH refuses any escape.
 *
 * Does not: check what the final fd is (the caller fstat's it), nor make
 * error messages (memory.c does, from errno).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memory_path.h"

/* openat2, retried on EAGAIN (the kernel's answer to a concurrent rename
 * while it resolves beneath a root); -1 with ENOSYS where it is missing. */
static int
beneath(int root, const char *rel, int flags)
{
#ifdef SYS_openat2
	struct open_how how = {
		.flags = (unsigned long long)flags,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = -1;

	for (int i = 0; i < 8; i++) {
		fd = syscall(SYS_openat2, root, rel, &how, sizeof how);
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return (int)fd;
#else
	(void)root, (void)rel, (void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

/* The next folder comp beneath fd: O_PATH|O_NOFOLLOW opens a link as
 * itself (and a FIFO or device without opening it), so fstat of that fd
 * says what the name was at that instant; a swap after it changes nothing. */
static int
walk_step(int fd, const char *comp)
{
	struct stat sb;
	int next = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC), err = 0;

	if (next < 0)
		return -1;
	if (fstat(next, &sb) != 0)
		err = errno;
	else if (S_ISLNK(sb.st_mode))
		err = ELOOP;
	else if (!S_ISDIR(sb.st_mode))
		err = ENOTDIR;
	if (err != 0) {
		close(next);
		errno = err;
		return -1;
	}
	return next;
}

int
mpath_walk(int root, const char *rel)
{
	char comp[NAME_MAX + 1];
	const char *p = rel;
	int fd = openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC), next, err;

	while (fd >= 0 && *p != '\0') {
		size_t n = strcspn(p, "/");

		memcpy(comp, p, n < NAME_MAX ? n : NAME_MAX);
		comp[n < NAME_MAX ? n : NAME_MAX] = '\0';
		p += n;
		p += strspn(p, "/");
		if (n == 0 || strcmp(comp, ".") == 0)
			continue;
		if (n > NAME_MAX || strcmp(comp, "..") == 0) {
			next = -1;
			err = n > NAME_MAX ? ENAMETOOLONG : EXDEV;
		} else {
			next = walk_step(fd, comp);
			err = errno;
		}
		close(fd);
		errno = err;
		fd = next;
	}
	if (fd < 0)
		return -1;
	/* The walk holds O_PATH fds; the caller gets a readable one (fdopendir). */
	next = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	close(fd);
	errno = err;
	return next;
}

int
mpath_opendir(int root, const char *rel)
{
	int fd = beneath(root, rel[0] != '\0' ? rel : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 && errno == ENOSYS)
		fd = mpath_walk(root, rel);
	return fd;
}

int
mpath_open(int root, const char *rel, int flags, mode_t mode)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(rel, '/'), *base = slash != NULL ? slash + 1 : rel;
	int dfd, fd, err;

	if ((size_t)snprintf(dir, sizeof dir, "%.*s", (int)(base - rel), rel) >= sizeof dir) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (strcmp(base, "..") == 0) {
		errno = EXDEV;
		return -1;
	}
	if ((dfd = mpath_opendir(root, dir)) < 0)
		return -1;
	fd = openat(dfd, base[0] != '\0' ? base : ".", flags | O_NOFOLLOW | O_CLOEXEC, mode);
	err = errno;
	close(dfd);
	errno = err;
	return fd;
}
