/*
 * dialect_int.h - what the dialect files share (dialect.c's helpers; not
 * for other folders, dialect.h is the contract): one request's run
 * (struct dl), running a detm desktop action and reading its verdict,
 * screenshots sized to a dialect's image budget, zooms, Gemini's grid, and
 * key names of the DOM (OpenAI, Gemini) turned into detm's chords.
 *
 * A dialect is a row of dialect.c's family table (struct dl_family): its
 * picture budget and its run and look functions.
 */
#ifndef DETM_DIALECT_INT_H
#define DETM_DIALECT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "core/app.h"
#include "derr.h"
#include "dialect.h"

#define DL_CALLS_MAX 100        /* provider calls (blocks, items, function calls) per request */
#define DL_ACTIONS_MAX 100      /* OpenAI actions per computer_call */
#define DL_WAIT_MAX_S 300       /* a wait or a held key, in seconds */
#define DL_SCROLL_PX 100        /* pixels one wheel click stands for (OpenAI, Gemini) */

struct dl_family;

/* One request's run. */
struct dl {
	struct app *app;
	const struct dialect_opts *o;
	const struct dl_family *fam;
	int screen_w, screen_h;         /* 0 until dl_screen */
	bool failed;                    /* an action failed: the rest are not run */
	json_object *detm;              /* dialect_out.detm, filled by dl_act */
	char verdicts[256];
	char error[300];                /* the first failure's message */
	bool err_recorded;              /* the failure is in detm already */
};

/* A desktop action's outcome as the dialects tell it. */
struct dl_res {
	json_object *data;              /* desktop_run's result (owned; dl_res_free) */
	char line[512];                 /* what happened and the verdict, one line */
	char verdict[32];               /* "confirmed", "verified", "unknown"...; "" for no input */
};

/* A screenshot for a model. */
struct dl_img {
	char *b64;                      /* PNG, base64 (owned) */
	int w, h;                       /* its size */
	int screen_w, screen_h;
	double scale;                   /* screen pixels per image pixel */
	int x, y;                       /* its origin on the screen (a zoom's region) */
};

/* Runs desktop action `action` with params (consumed) through desktop_run,
 * on the task's display, in image coordinates or screen pixels. Records it
 * in d->detm. 0 with *r filled, or -1 with e (the action's error). */
int dl_act(struct dl *d, const char *action, json_object *params, bool image_coords,
    struct dl_res *r, struct derr *e);
void dl_res_free(struct dl_res *r);
/* A wait of ms: no display is held meanwhile (the recorder, the live view
 * and smart waits go on), a client that hangs up ends it; logged on the
 * task as a `wait` gui action. 0, or -1 with e (cancelled). */
int dl_wait(struct dl *d, long ms, struct dl_res *r, struct derr *e);
/* A call of the provider's failed (e): marks the run failed and records
 * the error in d->detm unless dl_act did already. */
void dl_fail(struct dl *d, const char *what, const struct derr *e);
/* The screen's size (d->screen_w/h), read once per request. */
int dl_screen(struct dl *d, struct derr *e);
/* A screenshot of the whole screen within the family's budget (or
 * o->max_side), as a look: later image coordinates refer to it. */
int dl_shot(struct dl *d, struct dl_img *img, struct derr *e);
/* The region (x0, y0)-(x1, y1), given in the last look's image pixels, at
 * the screen's own resolution (scaled down only to fit the budget); not a
 * look. Logged on the task as a "zoom" action. */
int dl_zoom(struct dl *d, int x0, int y0, int x1, int y1, struct dl_img *img, struct derr *e);
void dl_img_free(struct dl_img *img);
/* "data:image/png;base64,..." of img (malloc'd). */
char *dl_data_url(const struct dl_img *img);
/* Gemini's grid (0..1000 on each axis) to screen pixels. */
int dl_grid(struct dl *d, double gx, double gy, const char *fx, const char *fy,
    int *x, int *y, struct derr *e);

/* Key names as the DOM / Playwright and OpenAI's keypress spell them
 * ("Control", "ArrowLeft", "ENTER", "cmd") to one detm chord
 * ("ctrl+Left") in out; a lone capital letter in a chord with modifiers is
 * its key ("ctrl+a"). DERR_INVALID on field when out is too small or a
 * name is empty. */
int dl_chord(const char *const *names, size_t n, const char *field, char *out, size_t cap,
    struct derr *e);

/* Parameters for dl_act: a new object with "x"/"y" (x < -99999: none). */
json_object *dl_xy(int x, int y);
/* A number argument of a call: JSON int or double, in [min, max]. */
int dl_num(json_object *o, const char *key, bool required, double min, double max,
    double *out, bool *present, struct derr *e);
/* text folded to one line and cut to cap bytes between characters. */
void dl_oneline(const char *text, char *out, size_t cap);

/* The dialect families (dialect_*.c). */
typedef int (*dl_run_fn)(struct dl *d, json_object *body, struct dialect_out *out, struct derr *e);
typedef int (*dl_look_fn)(struct dl *d, const struct dl_img *img, json_object *out);
struct dl_family {
	const char *name;
	int max_side;                   /* a screenshot's long side at most */
	long max_pixels;                /* and its pixels (0: no cap) */
	dl_run_fn run;
	dl_look_fn look;                /* adds the image and tool declaration to out */
};
int dl_anthropic_run(struct dl *d, json_object *body, struct dialect_out *out, struct derr *e);
int dl_anthropic_look(struct dl *d, const struct dl_img *img, json_object *out);
int dl_openai_run(struct dl *d, json_object *body, struct dialect_out *out, struct derr *e);
int dl_openai_look(struct dl *d, const struct dl_img *img, json_object *out);
int dl_gemini_run(struct dl *d, json_object *body, struct dialect_out *out, struct derr *e);
int dl_gemini_look(struct dl *d, const struct dl_img *img, json_object *out);

#endif
