/*
 * waits_int.h - what the smart-wait engine's files share (not for other
 * modules; waits.h is the contract): struct job, the engine's state waits_engine, a
 * finished job's outcome, and the functions one file offers the others.
 *
 *   waits.c        lifecycle and API
 *   waits_jobs.c   the engine's state and its table of jobs: made, found,
 *                  finished in two steps, freed (wjob_*); calls no other
 *                  file of the engine but waits_judge.c
 *   waits_sched.c  scheduler, XDamage peeks, workers, one tick (wsched_*)
 *   waits_judge.c  OCR and model judges, verdicts (wjudge_*)
 *   waits_store.c  the wait_jobs rows (wstore_*)
 *
 * Locking: one mutex, waits_engine.mu, guards the table, the queue and every field of
 * a job marked "under mu"; functions named *_locked want it held, the
 * others must not hold it (they take it, or do slow work: SQLite, X11,
 * model calls).
 *
 * Snapshots: a reader (GET, the list) lays a job's live fields over its row
 * only while the job is not done. So a final verdict is set in the same hold
 * of mu that marks the job done (wstore_judged, tick_settled): until the
 * outcome's row is committed a reader sees the last progress, after it the
 * finished row, never a final verdict beside status watching; the event
 * that announces the finish is published after the commit.
 */
#ifndef DETM_WAITS_INT_H
#define DETM_WAITS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "backends/vision.h"
#include "waits.h"
#include "waits_check.h"
#include "x11/display.h"
#include "x11/xcap.h"

struct job {
	char id[ID_LEN];
	char task_id[ID_LEN];   /* "" for none */
	char action_id[ID_LEN]; /* the task's wait action, "" for none */
	char target[WAIT_TARGET_MAX + 1];
	char *criteria;         /* under mu */
	char *note;             /* under mu */
	int timeout_s;
	double poll_s;
	int64_t created_ms, deadline_ms;
	/* under mu */
	int64_t next_us;
	bool queued, running, done, removed, force;
	int evaluations, skipped;
	int model_saved;        /* skips of a model-judged wait: model calls the gate saved */
	int human_skips;        /* ticks that did not look: a human drove the display */
	int64_t last_frame_ms;
	char verdict[16];
	char reason[512];
	long tokens_in, tokens_out;
	/* the running worker's */
	struct xcap_frame thumb, full;
	uint8_t *ref, *cur;     /* greyscale: last judged, this tick */
	uint8_t *prev;          /* passthrough: the previous tick's */
	size_t npix;
	int64_t last_change_us, last_eval_us, started_us;
	bool changed_once;
	unsigned char *prev_jpeg;
	size_t prev_len;
	int fails;
	bool peek_live;         /* the scheduler's peeks see this display's drawing */
	uint64_t damage_seen;   /* the display's damage_seq at the last grab */
	bool damage_valid;
	uint64_t damage_judged; /* ... at the grab the model last judged */
	bool judged_valid;
	bool reread;            /* OCR said NO on changed regions only: read the whole target once */
	int64_t reread_us;      /* ... since then */
	bool ocr_owed;          /* an OCR judgement put off by OCR_MIN_US: nothing skips the next tick */
	/* the judge; under mu */
	char judge[8];          /* asked: auto | ocr | model */
	bool use_ocr;           /* in effect: OCR, else the model backend */
	char judge_why[240];
	const char *wake;       /* static: why the queued tick runs (start, poll, damage, update) */
	const char *woken_by;   /* static: what woke the last judgement */
	int wake_damage, wake_poll;
	double confidence;      /* the last model verdict's, -1 none */
	char summary[512];
	char evidence[1024];    /* JSON array text or "" */
	/* the scheduler's (under mu): XDamage seen by its peeks */
	uint64_t sched_seq;
	bool sched_valid;
	int64_t dmg_first_us, dmg_last_us;   /* 0: no drawing pending */
};

/* The engine's state: one per detmd. */
struct waits_engine {
	struct app *app;
	struct vision *vision;
	pthread_mutex_t mu;
	pthread_cond_t sched_cv;        /* new or re-armed jobs, stop */
	pthread_cond_t work_cv;         /* queued jobs, stop */
	pthread_cond_t done_cv;         /* a job finished (long polls) */
	struct job **jobs;              /* max_waits slots */
	struct job **queue;             /* ring of queued jobs */
	size_t qhead, qlen;
	pthread_t sched, *workers;
	size_t nworkers;
	bool started, stopping;
	char backend[32];               /* the backend's name (outlives waits_engine.vision) */
	bool ocr_mode;                  /* backend "ocr": tesseract, no model, waits_engine.vision NULL */
	json_object *health;            /* last backend health */
	int64_t health_at_us;
	bool ocr_ok;                    /* tesseract loads: text conditions are read in process */
	char ocr_err[240];              /* why not */
	char model_err[400];            /* no model: why (ocr backend, missing key) */
	double min_conf;                /* ACU_WAIT_MIN_CONFIDENCE */
	pthread_t health_thread;
	pthread_cond_t health_cv;       /* kick the health check, stop */
	bool health_kick;
	char (*peek_ids)[ID_LEN];       /* the scheduler's scratch: displays to peek, */
	uint64_t *peek_seq;             /* their damage counters, */
	bool *peek_ok;                  /* and whether each peek answered */
	int64_t peek_at_us;
};

/* The engine (waits.c). */
extern struct waits_engine waits_engine;

struct outcome {
	char id[ID_LEN], task_id[ID_LEN], action_id[ID_LEN];
	char *criteria;
	const char *status;     /* resolved | timed_out | cancelled | failed */
	char verdict[16];
	char reason[512];
	int evaluations, skipped, timeout_s;
	int64_t last_frame_ms, created_ms;
	long tokens_in, tokens_out;
	char *extra;            /* verdict_json */
};

/* waits.c: jobs. */
void wjob_free(struct job *j);
/* mu held: the job in the table with this id (a done one too, until its
 * finisher has written it and taken it out), or NULL. */
struct job *wjob_find(const char *id);
struct job *wjob_new(const char *id, const char *task_id, const char *target, const char *criteria,
    int timeout_s, double poll_s, int64_t created, int64_t deadline, const char *action_id);
/* mu held: put j in a free slot; -1 when full. */
int wjob_slot_put(struct job *j);
/* Marks j done (mu held) and fills o. Returns -1 if j was already done.
 * The finisher then writes the outcome (no lock: wstore_outcome_write)
 * and calls wjob_finish_end_locked. */
int wjob_finish_locked(struct job *j, const char *status, const char *verdict, const char *reason,
    struct outcome *o);
/* mu held: j leaves the table and dies unless the queue or a worker still
 * holds it. */
void wjob_finish_end_locked(struct job *j, struct outcome *o);
/* mu held: the one place a job dies (see waits.c). */
void wjob_release_locked(struct job *j);
/* Finishes j from a thread that does not hold mu. */
void wstore_finish(struct job *j, const char *status, const char *verdict, const char *reason);
/* The rest of a finish begun under mu: r and o from wjob_finish_locked
 * (called in the same hold of mu as whatever set the verdict); writes the
 * outcome and lets j leave the table. Called without mu; nothing if r < 0. */
void wstore_finish_rest(struct job *j, int r, struct outcome *o);
/* Records a judgement (wjudge_record_locked) and, on YES, finishes j
 * "resolved" in the same hold of mu, so verdict, evidence, done and status
 * change together for every reader; else writes the progress. Returns true
 * when j finished (resolved here, or by another finisher before). */
bool wstore_judged(struct job *j, struct vision_result *vr, bool use_ocr, const char *cause);

/* waits_store.c: the rows. */
/* mu held: what decided j and how (the verdict_json column), malloc'd. */
char *wjob_extra_locked(const struct job *j);
/* The row of id as JSON, or NULL with e (NOT_FOUND). */
json_object *wstore_row_get(const char *id, struct derr *e);
int wstore_row_insert(const char *id, const struct wait_new *w, int64_t now, int64_t deadline,
    const char *action_id, const char *backend, const char *judge, struct derr *e);
int wstore_row_update(const char *id, const char *criteria, int timeout_s, int64_t deadline,
    const char *note, const char *backend, struct derr *e);
/* The outcome: the row (only if still watching), the task's wait action, a
 * thread message and the wake-up. No engine lock held. */
void wstore_outcome_write(struct outcome *o);
/* After a judgement that did not end the wait: the counters reach the row. */
void wstore_progress_write(struct job *j);
/* Waits an earlier detmd left watching: resume, or time out. */
void wstore_resume(void);

/* waits_judge.c: judges. */
/* No model judges: the passthrough backend decides alone. */
bool wjudge_passthrough(bool use_ocr);
/* The OCR verdict on j's full-resolution frame (a worker's): the changed
 * regions widened to their text lines, or the whole target (whole, the
 * first look, "is gone" conditions). *partial: only changed regions were
 * read, so a NO is no proof the phrase is not on the screen. */
int wjudge_ocr(struct job *j, const char *criteria, bool whole, bool *partial, struct vision_result *vr,
    struct derr *e);
/* criteria is element:... or element-gone:... (a11y_match.h). */
bool wjudge_is_a11y(const char *criteria);
/* The verdict on an element condition from the task display's tree. */
int wjudge_a11y(struct job *j, const char *criteria, struct vision_result *vr, struct derr *e);
/* Which judge takes criteria for a wait that asked want (auto | ocr |
 * model): *ocr, and why. 0, or -1 with e (DERR_INVALID: the judge cannot
 * take it; DERR_UNAVAILABLE, with ready only: the model is not there). */
int wjudge_pick(const char *want, const char *criteria, bool ready, bool *ocr, char *why, size_t len,
    struct derr *e);
/* mu held: records a judgement in j (wstore_judged is the caller). */
void wjudge_record_locked(struct job *j, struct vision_result *vr, bool use_ocr, const char *cause);
/* A worker thread ends: its OCR engine goes. */
void wjudge_thread_end(void);

/* waits_sched.c: thread bodies (arg unused). */
void *wsched_main(void *arg);
void *wsched_worker(void *arg);
void *wsched_health(void *arg);

#endif
