/*
 * ground.h - grounding backends: a description in words plus one JPEG
 * screenshot in, a point in the IMAGE's pixel space out.
 *
 * Backends (config gui_backend):
 *   uitars      UI-TARS 1.5: OpenRouter chat/completions when
 *               OPENROUTER_API_KEY is set, else Ollama /api/chat (with
 *               keep_alive). Answers click(start_box='(x,y)') and every
 *               variant ByteDance's parser reads; coordinates are UI-TARS
 *               1.5 pixels of the image as the model saw it (smart
 *               resize), or 0..1000 relative (config uitars_coords = "1000").
 *   claude_cu   Anthropic computer-use tool (computer_20250124) declared
 *               with the image's size; the tool_use coordinate of a click.
 *   omniparser  POST {omniparser_url}/parse/ -> elements (boxes as 0..1
 *               ratios, captions); a picker (Claude Messages when
 *               ANTHROPIC_API_KEY is set, else word overlap) names the
 *               element; its box centre is the point.
 *   direct      no model: ground_run is DERR_INVALID (gui.c says which
 *               forms carry coordinates).
 *
 * Contract: the result is inside the image (0 <= x < width, 0 <= y <
 * height) or the call fails. A backend that cannot be reached, answers
 * non-2xx, or answers something without a usable point (unparseable,
 * outside the image, an element number that does not exist) is
 * DERR_UNAVAILABLE whose message quotes what came back. Mapping to the
 * screen (scale, origin) is the caller's (gui.c).
 *
 * Thread-safe: no state; HTTP goes through httpc (pooled). No retries.
 * Does not: capture, act, log, or hold a display lease.
 */
#ifndef DETM_GROUND_H
#define DETM_GROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/util.h"
#include "derr.h"

#define GROUND_MAX_DESCRIPTION 2000   /* bytes */
#define GROUND_MAX_ELEMENTS    300    /* OmniParser elements offered to the picker */

struct ground_req {
	const char *description;
	const unsigned char *jpeg;
	size_t len;
	int width, height;      /* the image's size */
};

struct ground_result {
	double x, y;            /* image pixels */
	bool has_box;
	double box[4];          /* x1, y1, x2, y2 image pixels (when has_box) */
	double confidence;      /* < 0: not known */
	char backend[32];       /* "uitars", ... */
	char provider[32];      /* "openrouter", "ollama", "anthropic", "omniparser+claude", ... */
	char model[128];
	char raw[512];          /* the model's answer, trimmed (for logs and errors) */
	char element[256];      /* omniparser: the chosen element's caption */
	int64_t latency_us;     /* all model calls */
};

/* Grounds q with the configured backend. 0, or -1 with e. r is filled as
 * far as it got either way (backend, model, raw). */
int ground_run(const struct config *cfg, const struct ground_req *q, struct ground_result *r,
    struct derr *e);

/* Checks the grounding options at start: a known backend and answer space.
 * 0, or -1 with e naming the option. */
int ground_check(const struct config *cfg, struct derr *e);

/* The configured backend's name and model ("" for direct). */
const char *ground_model(const struct config *cfg);
/* Who the configured backend calls: "openrouter", "ollama", "anthropic",
 * "omniparser+claude", "omniparser+words", or "" for direct. */
const char *ground_provider(const struct config *cfg);
/* True when the configured backend has a model to find a target in words
 * (false for direct, which needs coordinates). */
bool ground_has_model(const struct config *cfg);
/* The longest side of the screenshot sent to the backend: the configured
 * grounding_max_dim, capped by the backend's own limit (claude_cu: 1280). */
long ground_max_dim(const struct config *cfg);

/*
 * UI-TARS answer parser (exposed for tests), read as ByteDance's own
 * @ui-tars/action-parser 1.2.3 reads it (ground.c lists the forms): the
 * first action after the last "Action:" (or its full-width colon U+FF1A),
 * its start_box= / start_point= / point= value: (x,y), [x,y],
 * (x1,y1,x2,y2), <bbox>x1 y1 x2 y2</bbox>, <bbox>x y</bbox>, <point>x
 * y</point>, <|box_start|> tags ignored; a box is its centre (*has_box, box[] in image pixels).
 * Answer space: rel1000 -> 0..1000 relative to the image; else UI-TARS
 * 1.5's absolute pixels of the image as the model saw it, i.e. after
 * Qwen2.5-VL's smart resize (ground_uitars_resize) of the w x h image sent.
 * Returns 0 with a point inside w x h (image pixels), else -1 with a
 * reason in err.
 */
int ground_parse_uitars(const char *text, int w, int h, bool rel1000, double *x, double *y,
    bool *has_box, double box[4], char *err, size_t errlen);

/* The size UI-TARS 1.5 sees a w x h image at (smart resize: each side
 * rounded to a multiple of 28, the area kept within 100..16384 28x28
 * patches, as @ui-tars/action-parser computes it). w x h itself when the
 * aspect ratio exceeds 200. */
void ground_uitars_resize(int w, int h, int *mw, int *mh);

#endif
