/*
 * memory.h - the agent's workspace memory (memory.c): search, read and
 * append the Markdown notes under ACU_WORKSPACE, behind a real path guard.
 * Plain C: api_memory.c checks the request's shape and calls these.
 *
 * Each call returns 0 with *out a new object (the caller owns it), or -1
 * with e filled (a path outside the workspace or through a symbolic link is
 * DERR_FORBIDDEN on "path", a missing file DERR_NOT_FOUND). Thread-safe (no
 * state; appends are single O_APPEND writes).
 */
#ifndef DETM_MEMORY_H
#define DETM_MEMORY_H

#include <stdint.h>

#include <json-c/json.h>

#include "core/config.h"
#include "derr.h"

#define MEMORY_QUERY_MAX    500         /* bytes of a search query */
#define MEMORY_RESULTS_MAX  100         /* max_results */
#define MEMORY_PATH_MAX     512         /* bytes of a workspace-relative path */
#define MEMORY_LINES_MAX    2000        /* lines one read returns */
#define MEMORY_NOTE_MAX     (64 * 1024) /* bytes of one note */

/* Lines holding every term of query (space-separated, case-insensitive):
 * {query, results:[{path, line, snippet, score}], count[, truncated]}, at
 * most max_results (1..MEMORY_RESULTS_MAX). No workspace: no results. */
int memory_search(const struct config *cfg, const char *query, int max_results,
    json_object **out, struct derr *e) DETM_NODISCARD;
/* limit lines of path from line offset (1-based):
 * {path, offset, limit, total_lines, content}. */
int memory_read(const struct config *cfg, const char *path, int64_t offset, int64_t limit,
    json_object **out, struct derr *e) DETM_NODISCARD;
/* Appends "## [HH:MM UTC] Note" and note to path (NULL: memory/<UTC
 * date>.md, its folder made on demand): {ok, path, appended}. */
int memory_append(const struct config *cfg, const char *note, const char *path,
    json_object **out, struct derr *e) DETM_NODISCARD;

#endif
