/*
 * recorder_int.h - what the recorder's files share (not for other modules;
 * recorder.h is the contract): struct rec, the registry rec_registry, and the
 * functions one file offers the others.
 *
 *   recorder.c        task recordings, clips, the task hook, life
 *                     (the recorder.h API)
 *   recorder_reg.c    the registry and the state checks (calls none of
 *                     the others)
 *   recorder_run.c    a recording's thread: capture, encode, limits,
 *                     finishing (rrun_*)
 *   recorder_files.c  the status and index files, the directory total,
 *                     a recording's index (rfile_*)
 *   recorder_final.c  the latest statuses in memory and the database,
 *                     which outlive a disk too full for status files
 *                     (rfinal_*)
 *
 * Locking (see recorder.c's opening comment): rec_registry.mu guards the registry
 * and the directory total; a rec's mu guards its fields marked "under mu".
 * Lock order: rec_registry.mu, then a rec's mu. Functions named *_locked want the
 * lock they name held.
 */
#ifndef DETM_RECORDER_INT_H
#define DETM_RECORDER_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/app.h"
#include "core/util.h"
#include "derr.h"
#include "recorder.h"

#define RECS_MAX        128
#define REPEAT_MS       10000   /* a still screen: one repeated frame this often */
#define KEY_MAX         24

enum rstate { R_RECORDING, R_PAUSED, R_DONE, R_CAPPED, R_DISCARDED, R_FAILED };
/* Indexed by enum rstate. */
extern const char *const rec_state_names[];

struct rec {
	char key[KEY_MAX];      /* the task id, or "clip-<id>" */
	char task_id[ID_LEN];   /* "" for a clip of the shared display */
	char clip_id[ID_LEN];   /* "" for a task recording */
	uint64_t gen;
	int fps;
	unsigned long window;   /* 0: the whole screen */
	int w, h;               /* the encoder's frame size, once open */
	int64_t max_ms, max_bytes;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu */
	enum rstate state;
	bool stop, discard;
	int64_t frames, bytes, video_ms, started_ms;
	char reason[160];
	struct derr err;        /* R_FAILED: why (err.code DERR_OK otherwise) */
	char path[PATH_MAX], idx[PATH_MAX], meta[PATH_MAX];
};

/* The registry: every live recording, and what rec_init set up. */
struct rec_reg {
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* broadcast when a recording leaves recs */
	struct rec *recs[RECS_MAX];     /* under mu */
	uint64_t next_gen;      /* under mu */
	bool shutting_down;     /* under mu */
	bool abandoned;         /* under mu: shutdown stopped waiting for a
	                         * wedged recording (its thread must not touch
	                         * the store any more) */
	struct app *app;        /* set once by rec_init */
	char *dir;              /* DATA_DIR/recordings, set once by rec_init */
	int64_t total_bytes;    /* under mu */
};
extern struct rec_reg rec_registry;

/* recorder.c: state checks (debug and ASan builds; no-ops under NDEBUG). */
/* r->mu held (or r not yet running): r's state agrees with its fields. */
void rec_check_locked(const struct rec *r);
/* rec_registry.mu held: registered recordings have distinct keys and generations. */
void rec_reg_check_locked(void);

/* recorder_run.c */
/* A new rec (caller owns until rrun_launch succeeds) in R_RECORDING with
 * the configured limits. */
struct rec *rrun_new(const char *task_id, int fps);
/* rec_registry.mu held: registers r and starts its detached thread, which then owns
 * r and frees it when it ends. On failure r stays the caller's.
 * DERR_UNAVAILABLE when stopping or full. */
int rrun_launch(struct rec *r, struct derr *e) DETM_NODISCARD;

/* recorder_files.c */
/* Sets r's path, idx and meta from its key or task id. */
void rfile_paths(struct rec *r);
/* A file's size, or -1. */
int64_t rfile_size(const char *path);
/* Adds delta to rec_registry.total_bytes (takes rec_registry.mu; kept >= 0). */
void rfile_add_total(int64_t delta);
/* Removes a file and takes its size off the total. */
void rfile_remove(const char *path);
/* The inner {code, message, field} of the one error shape. Caller owns. */
json_object *rfile_error_json(const struct derr *e);
/* Records why r failed (takes r's mu): e's code and field, prefix + its
 * message. */
void rec_fail_set(struct rec *r, const struct derr *e, const char *prefix);
/* r's status (r->mu held). Caller owns. */
json_object *rfile_status_json(const struct rec *r);
/* Keeps r's status (rfinal_keep), writes its status file atomically
 * (takes r's mu) and publishes the change. -1 when the file could not be
 * written (logged with the system's reason; the status is kept anyway). */
int rfile_write_meta(struct rec *r);
/* A status file's JSON (caller owns), or NULL. */
json_object *rfile_read_meta(const char *path);
/* The task's recording index (frame times, action moments, takeovers) with
 * status (taken: the task's recording status, rec_task_status) under
 * "recording"; NULL with e (NOT_FOUND without a recording). */
json_object *rfile_index(struct app *a, const char *task_id, json_object *status, struct derr *e);

/* recorder_final.c */
/* Keeps status (r's latest, from rfile_status_json) in memory and in the
 * database (a failed write is logged). */
void rfinal_keep(const struct rec *r, json_object *status);
/* The latest status kept for key (caller owns), or NULL. */
json_object *rfinal_get(const char *key);
/* Forgets the statuses of a task's recording and clips (it was deleted). */
void rfinal_forget_task(const char *task_id);

#endif
