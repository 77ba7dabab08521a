/*
 * shots.h - screenshots kept with a task's actions (the dashboard's
 * thumbnails and lightbox): DATA_DIR/screenshots/<task_id>-<id>.jpg,
 * served by GET /api/screenshots/{file} (api_screenshot, declared in
 * api.h), deleted with their task.
 *
 * Thread-safe (files only). Does not: capture (callers pass JPEG bytes).
 */
#ifndef DETM_SHOTS_H
#define DETM_SHOTS_H

#include <stddef.h>

#include "api.h"
#include "derr.h"
#include "util.h"

#define SHOTS_URL_LEN 96

/* Creates the directory and registers the delete hook. 0 or -1. */
int shots_init(const char *data_dir, struct derr *e) DETM_NODISCARD;
/* Stores a JPEG for task_id; url gets "/api/screenshots/<file>". 0 or -1
 * (logged; a lost screenshot never fails the action). */
int shots_save(const char *task_id, const unsigned char *jpeg, size_t len,
    char url[SHOTS_URL_LEN]);
#endif
