/*
 * shots.c - action screenshots on disk (shots.h). File names are
 * "<task id>-<id>.jpg" (8 hex digits each): the route accepts nothing
 * else, so no request can name another path.
 */
#include "shots.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "task.h"

static char *dir;

static bool
name_ok(const char *name)
{
	if (strlen(name) != 2 * (ID_LEN - 1) + 1 + 4 || strcmp(name + 2 * (ID_LEN - 1) + 1, ".jpg") != 0 ||
	    name[ID_LEN - 1] != '-')
		return false;
	for (int i = 0; i < 2 * (ID_LEN - 1) + 1; i++)
		if (i != ID_LEN - 1 && !((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return true;
}

static void
on_task_change(const char *task_id, int from, int to, void *arg)
{
	struct dirent *de;
	char path[PATH_MAX];
	DIR *dh;

	(void)from;
	(void)arg;
	if (to != TASK_HOOK_DELETED || (dh = opendir(dir)) == NULL)
		return;
	while ((de = readdir(dh)) != NULL)
		if (strncmp(de->d_name, task_id, ID_LEN - 1) == 0 && name_ok(de->d_name)) {
			snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
			unlink(path);
		}
	closedir(dh);
}

int
shots_init(const char *data_dir, struct derr *e)
{
	dir = xasprintf("%s/screenshots", data_dir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return derr_set(e, DERR_INTERNAL, NULL, "cannot create %s: %s", dir, strerror(errno));
	task_hook_add(on_task_change, NULL);
	return 0;
}

int
shots_save(const char *task_id, const unsigned char *jpeg, size_t len, char url[SHOTS_URL_LEN])
{
	char id[ID_LEN], path[PATH_MAX];
	FILE *f;

	id_new(id);
	snprintf(path, sizeof path, "%s/%s-%s.jpg", dir, task_id, id);
	f = fopen(path, "wbe");
	if (f == NULL || fwrite(jpeg, 1, len, f) != len || fclose(f) != 0) {
		log_warn("cannot save screenshot %s: %s", path, strerror(errno));
		if (f != NULL)
			unlink(path);
		return -1;
	}
	snprintf(url, SHOTS_URL_LEN, "/api/screenshots/%s-%s.jpg", task_id, id);
	return 0;
}

int
shots_open(const char *name, int *fd, uint64_t *size, struct derr *e)
{
	char path[PATH_MAX];
	struct stat sb;

	*fd = -1;
	if (!name_ok(name))
		return derr_set(e, DERR_NOT_FOUND, NULL, "no screenshot '%.*s'", utf8_prec(name,
		    40), name);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, &sb) != 0) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return derr_set(e, DERR_NOT_FOUND, NULL, "no screenshot '%.*s'", utf8_prec(name,
		    40), name);
	}
	*size = (uint64_t)sb.st_size;
	return 0;
}
