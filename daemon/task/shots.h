/*
 * shots.h - screenshots kept with a task's actions (the dashboard's
 * thumbnails and lightbox): DATA_DIR/screenshots/<task_id>-<id>.jpg,
 * served by GET /api/screenshots/{file} (api_shots.c, through
 * shots_open), deleted with their task.
 *
 * Thread-safe (files only). Does not: capture (callers pass JPEG bytes).
 */
#ifndef DETM_SHOTS_H
#define DETM_SHOTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"
#include "derr.h"

#define SHOTS_URL_LEN 96

/* Creates the directory and registers the delete hook. 0 or -1. */
int shots_init(const char *data_dir, struct derr *e) DETM_NODISCARD;
/* Stores a JPEG for task_id; url gets "/api/screenshots/<file>". 0 or -1
 * (logged; a lost screenshot never fails the action). */
int shots_save(const char *task_id, const unsigned char *jpeg, size_t len,
    char url[SHOTS_URL_LEN]);
/* Opens the stored screenshot called name ("<task id>-<id>.jpg"; nothing
 * else is a screenshot, so no name reaches another path): *fd (the caller
 * closes it) and its *size. 0, or -1 with DERR_NOT_FOUND and *fd -1. */
int shots_open(const char *name, int *fd, uint64_t *size, struct derr *e) DETM_NODISCARD;
#endif
