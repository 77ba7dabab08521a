/*
 * effect_px.c - the pixel side of the effect verdict (effect.h has the
 * rules): the pictures before the input, the regions that changed for
 * good after it, what is discounted (carets, animations, other
 * applications), and the observe image.
 *
 * Owns: f->before, f->mid, f->after, the FX_ANIM bits of f->mask and the
 * pixel findings of f. A pixel changed when one of its channels moved by
 * more than PIXEL_DELTA (Xvfb pixels are exact; this only ignores
 * dithering-level differences, such as the steps of a hover fade).
 *
 * Does not: wait for events (effect.c), look at windows or decide where
 * the input went (effect_check.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jx.h"
#include "core/util.h"
#include "desktop.h"
#include "effect_int.h"

#define PIXEL_DELTA 16
#define REGION_PAD 24
#define OBSERVE_QUALITY 72
#define MASK_GROW 2

static bool
pixel_moved(const unsigned char *a, const unsigned char *b)
{
	for (int c = 0; c < 3; c++) {
		int d = (int)a[c] - (int)b[c];

		if (d > PIXEL_DELTA || d < -PIXEL_DELTA)
			return true;
	}
	return false;
}

/* b clipped to the screen; false when nothing is left. */
static bool
clip(const struct effect *f, struct xwatch_box *b)
{
	int x1 = b->x + b->w, y1 = b->y + b->h;

	if (b->x < 0)
		b->x = 0;
	if (b->y < 0)
		b->y = 0;
	if (x1 > f->sw)
		x1 = f->sw;
	if (y1 > f->sh)
		y1 = f->sh;
	b->w = x1 - b->x;
	b->h = y1 - b->y;
	return b->w > 0 && b->h > 0;
}

static bool
full_frame(const struct effect *f, const struct xcap_frame *fr)
{
	return fr->scale == 1.0 && fr->src_x == 0 && fr->src_y == 0 && fr->width == f->sw &&
	    fr->height == f->sh;
}

void
fx_signature(const struct effect *f, uint8_t out[LOOPDET_SIG_N])
{
	uint32_t sum[LOOPDET_SIG_N] = { 0 }, n[LOOPDET_SIG_N] = { 0 };

	for (int y = 0; y < f->sh; y += 2) {
		const unsigned char *row = f->before.rgb + (size_t)y * (size_t)f->sw * 3;
		const uint8_t *m = f->mask + (size_t)y * (size_t)f->sw;
		size_t cy = (size_t)y * LOOPDET_SIG_H / (size_t)f->sh;

		for (int x = 0; x < f->sw; x += 2) {
			size_t c = cy * LOOPDET_SIG_W + (size_t)x * LOOPDET_SIG_W / (size_t)f->sw;
			const unsigned char *p = row + (size_t)x * 3;

			if (m[x] & (FX_ANIM | FX_PERIODIC))
				continue;
			sum[c] += (77u * p[0] + 150u * p[1] + 29u * p[2]) >> 8;
			n[c]++;
		}
	}
	for (size_t c = 0; c < LOOPDET_SIG_N; c++)
		out[c] = n[c] > 0 ? (uint8_t)(sum[c] / n[c]) : 0;
}

void
fx_mid(struct effect *f, struct display_lease *l)
{
	struct xcap_req q = { 0 };
	struct derr e = { 0 };

	f->have_mid = xcap_grab(l->cap, &q, &f->mid, &e) == 0 && full_frame(f, &f->mid);
}

/* FX_ANIM on the pixels that moved between the mid and the before
 * pictures inside box b (grown by MASK_GROW); their box joins f->anim. */
static void
mask_box(struct effect *f, const struct xwatch_box *b)
{
	int x0 = INT32_MAX, y0 = INT32_MAX, x1 = -1, y1 = -1;

	for (int y = b->y; y < b->y + b->h; y++)
		for (int x = b->x; x < b->x + b->w; x++) {
			size_t i = (size_t)y * (size_t)f->sw + (size_t)x;

			if (!pixel_moved(f->mid.rgb + i * 3, f->before.rgb + i * 3))
				continue;
			for (int dy = -MASK_GROW; dy <= MASK_GROW; dy++)
				for (int dx = -MASK_GROW; dx <= MASK_GROW; dx++)
					if (y + dy >= 0 && y + dy < f->sh && x + dx >= 0 && x + dx < f->sw)
						f->mask[(size_t)(y + dy) * (size_t)f->sw + (size_t)(x + dx)] |= FX_ANIM;
			x0 = x < x0 ? x : x0;
			y0 = y < y0 ? y : y0;
			x1 = x > x1 ? x : x1;
			y1 = y > y1 ? y : y1;
		}
	if (x1 >= 0 && f->nanim < EFFECT_MAX_ANIM)
		f->anim[f->nanim++] = (struct fx_rect){ x0, y0, x1 - x0 + 1, y1 - y0 + 1 };
}

int
fx_before(struct effect *f, struct display_lease *l)
{
	struct xcap_req q = { 0 };
	struct derr e = { 0 };

	f->have_before = f->mask != NULL && xcap_grab(l->cap, &q, &f->before, &e) == 0 &&
	    full_frame(f, &f->before);
	if (!f->have_before)
		return -1;
	for (int i = 0; f->have_mid && i < f->w.nbox; i++) {
		struct xwatch_box b = f->w.box[i];

		if (clip(f, &b))
			mask_box(f, &b);
	}
	return 0;
}

static void
fill(struct effect *f, int x, int y, int w, int h, uint8_t bit)
{
	int x1 = x + w > f->sw ? f->sw : x + w, y1 = y + h > f->sh ? f->sh : y + h;

	for (int yy = y < 0 ? 0 : y; yy < y1; yy++)
		for (int xx = x < 0 ? 0 : x; xx < x1; xx++)
			f->mask[(size_t)yy * (size_t)f->sw + (size_t)xx] |= bit;
}

void
fx_history(struct effect *f)
{
	/* still drawing when the baseline ended: a fade that outlasted it */
	for (int i = 0; f->mask != NULL && i < f->nbusy; i++) {
		fill(f, f->busy[i].x, f->busy[i].y, f->busy[i].w, f->busy[i].h, FX_ANIM);
		if (f->nanim < EFFECT_MAX_ANIM)
			f->anim[f->nanim++] = (struct fx_rect){ f->busy[i].x, f->busy[i].y, f->busy[i].w, f->busy[i].h };
	}
	for (int i = 0; f->mask != NULL && i < f->nareas; i++) {
		const struct xhist_area *a = &f->areas[i];

		fill(f, a->x, a->y, a->w, a->h, a->continuous ? FX_ANIM : FX_PERIODIC);
		if (a->continuous && f->nanim < EFFECT_MAX_ANIM)
			f->anim[f->nanim++] = (struct fx_rect){ a->x, a->y, a->w, a->h };
	}
}

/* What one box holds, against the picture before. */
struct box_diff {
	struct fx_region r;     /* the counted pixels: how many, their box */
	long elsewhere, masked, periodic;
};

/* The input's place: for a pointer, the box holds its point; for keys,
 * the box meets the focused window (or no window is known). */
static bool
at_input(const struct effect *f, const struct xwatch_box *b)
{
	const struct fx_rect *k = &f->keys_rect;

	if (f->px >= 0)
		return f->px >= b->x && f->py >= b->y && f->px < b->x + b->w && f->py < b->y + b->h;
	return k->w == 0 || (b->x < k->x + k->w && k->x < b->x + b->w && b->y < k->y + k->h &&
	    k->y < b->y + b->h);
}

/* Box b (inside the after frame's rectangle) against the picture before. */
static void
diff_box(const struct effect *f, const struct xwatch_box *b, struct box_diff *d)
{
	const struct xcap_frame *a = &f->after, *p = &f->before;
	int x0 = b->x + b->w, y0 = b->y + b->h, x1 = -1, y1 = -1;
	bool at = at_input(f, b);

	memset(d, 0, sizeof *d);
	for (int y = b->y; y < b->y + b->h; y++) {
		size_t row = (size_t)y * (size_t)f->sw;
		const unsigned char *rb = p->rgb + (row + (size_t)b->x) * 3;
		const unsigned char *ra = a->rgb + ((size_t)(y - a->src_y) * (size_t)a->width +
		    (size_t)(b->x - a->src_x)) * 3;

		for (int x = b->x; x < b->x + b->w; x++, rb += 3, ra += 3) {
			uint8_t m;

			if (!pixel_moved(rb, ra))
				continue;
			m = f->mask[row + (size_t)x];
			if (!(m & FX_TARGET)) {
				d->elsewhere++;
				continue;
			}
			if (m & FX_ANIM) {
				d->masked++;
				continue;
			}
			if ((m & FX_PERIODIC) && !at) {
				d->periodic++;
				continue;
			}
			d->r.pixels++;
			x0 = x < x0 ? x : x0;
			y0 = y < y0 ? y : y0;
			x1 = x > x1 ? x : x1;
			y1 = y > y1 ? y : y1;
		}
	}
	d->r = (struct fx_region){ x0, y0, x1 - x0 + 1, y1 - y0 + 1, d->r.pixels, b->first_us };
}

/* The boxes to look at into boxes[] (clipped), their union into *u. */
static int
boxes_pick(struct effect *f, bool all, int64_t now, struct xwatch_box *boxes, struct xwatch_box *u)
{
	int n = 0;

	for (int i = 0; i < f->w.nbox; i++) {
		struct xwatch_box b = f->w.box[i];

		if (!all && (b.last_us > now - (int64_t)EFFECT_QUIET_MS * 1000 || b.last_us <= f->px_hw))
			continue;
		if (!clip(f, &b))
			continue;
		if (n == 0)
			*u = b;
		else {
			int x1 = u->x + u->w > b.x + b.w ? u->x + u->w : b.x + b.w;
			int y1 = u->y + u->h > b.y + b.h ? u->y + u->h : b.y + b.h;

			u->x = b.x < u->x ? b.x : u->x;
			u->y = b.y < u->y ? b.y : u->y;
			u->w = x1 - u->x;
			u->h = y1 - u->y;
		}
		boxes[n++] = b;
	}
	return n;
}

/* b meets a box that was still drawing when the baseline ended. */
static bool
box_busy(const struct effect *f, const struct xwatch_box *b)
{
	for (int i = 0; i < f->nbusy; i++)
		if (b->x < f->busy[i].x + f->busy[i].w && f->busy[i].x < b->x + b->w &&
		    b->y < f->busy[i].y + f->busy[i].h && f->busy[i].y < b->y + b->h)
			return true;
	return false;
}



/* b meets an area the history says draws every so often. */
static bool
box_periodic(const struct effect *f, const struct xwatch_box *b)
{
	for (int i = 0; i < f->nareas; i++)
		if (b->x < f->areas[i].x + f->areas[i].w && f->areas[i].x < b->x + b->w &&
		    b->y < f->areas[i].y + f->areas[i].h && f->areas[i].y < b->y + b->h)
			return true;
	return false;
}

/* Any pixel of b in the target. */
static bool
box_in_target(const struct effect *f, const struct xwatch_box *b)
{
	for (int i = 0; i < f->ntarget; i++)
		if (b->x < f->target[i].x + f->target[i].w && f->target[i].x < b->x + b->w &&
		    b->y < f->target[i].y + f->target[i].h && f->target[i].y < b->y + b->h)
			return true;
	return false;
}

/* b meets an area the history says draws all the time. */
static bool
box_continuous(const struct effect *f, const struct xwatch_box *b)
{
	for (int i = 0; i < f->nareas; i++)
		if (f->areas[i].continuous && b->x < f->areas[i].x + f->areas[i].w && f->areas[i].x < b->x + b->w &&
		    b->y < f->areas[i].y + f->areas[i].h && f->areas[i].y < b->y + b->h)
			return true;
	return false;
}

bool
fx_box_idle_anim(const struct effect *f, const struct xwatch_box *b)
{
	return box_continuous(f, b);
}

int64_t
fx_last_drawing(const struct effect *f, int64_t now)
{
	int64_t last = 0;

	for (int i = 0; i < f->w.nbox; i++) {
		struct xwatch_box b = f->w.box[i];

		if (!clip(f, &b) || !box_in_target(f, &b) || box_continuous(f, &b) ||
		    (box_periodic(f, &b) && !at_input(f, &b)))
			continue;
		last = b.last_us > last ? b.last_us : last;
	}
	return last;
}

static void
reset(struct effect *f)
{
	f->nchg = 0;
	f->changed = f->elsewhere = f->masked = f->periodic = f->discounted_caret = 0;
	f->masked_at_point = false;
	f->transient = false;
}

/* Adds box i's findings to f; true when it drew in the target without
 * leaving a change or a discount (a candidate for transient). */
static bool
take(struct effect *f, const struct xwatch_box *b, const struct box_diff *d)
{
	f->elsewhere += d->elsewhere;
	f->masked += d->masked;
	f->periodic += d->periodic;
	f->masked_at_point = f->masked_at_point || (d->masked > 0 && at_input(f, b));
	if (d->r.pixels == 0)
		return d->masked == 0 && d->periodic == 0 && !box_busy(f, b) && !box_periodic(f, b) &&
		    box_in_target(f, b) && at_input(f, b);
	if (d->r.pixels < EFFECT_MIN_PIXELS || d->r.w <= EFFECT_CARET_PX || d->r.h <= EFFECT_CARET_PX) {
		f->discounted_caret++;
		return false;
	}
	f->changed += d->r.pixels;
	if (f->nchg < EFFECT_MAX_CHANGES)
		f->chg[f->nchg++] = d->r;
	return false;
}

void
fx_pixels(struct effect *f, struct display_lease *l, bool all, int64_t now)
{
	struct xwatch_box boxes[XWATCH_MAX_BOXES], u = { 0 };
	struct xcap_req q = { 0 };
	struct derr e = { 0 };
	bool drew = false;
	int n;

	if (all)
		f->px_checked = f->w.rects;
	if (!f->have_before)
		return;
	n = boxes_pick(f, all, now, boxes, &u);
	for (int i = 0; i < n; i++)
		f->px_hw = boxes[i].last_us > f->px_hw ? boxes[i].last_us : f->px_hw;
	if (all)
		reset(f);
	if (n == 0)
		return;
	q.x = u.x;
	q.y = u.y;
	q.w = u.w;
	q.h = u.h;
	if (xcap_grab(l->cap, &q, &f->after, &e) != 0 || f->after.scale != 1.0 ||
	    f->after.src_x != u.x || f->after.src_y != u.y || f->after.width != u.w || f->after.height != u.h)
		return;
	for (int i = 0; i < n; i++) {
		struct box_diff d;

		diff_box(f, &boxes[i], &d);
		drew = take(f, &boxes[i], &d) || drew;
	}
	if (all)
		f->transient = f->nchg == 0 && drew;
}

/* The region observe:region shows: the changed regions and the windows
 * that appeared, padded and clipped. false when there is none. */
static bool
observe_box(const struct effect *f, struct xwatch_box *u)
{
	int x0 = INT32_MAX, y0 = INT32_MAX, x1 = -1, y1 = -1;

	for (int i = 0; i < f->nchg; i++) {
		x0 = f->chg[i].x < x0 ? f->chg[i].x : x0;
		y0 = f->chg[i].y < y0 ? f->chg[i].y : y0;
		x1 = f->chg[i].x + f->chg[i].w > x1 ? f->chg[i].x + f->chg[i].w : x1;
		y1 = f->chg[i].y + f->chg[i].h > y1 ? f->chg[i].y + f->chg[i].h : y1;
	}
	if (f->wx1 > f->wx0) {
		x0 = f->wx0 < x0 ? f->wx0 : x0;
		y0 = f->wy0 < y0 ? f->wy0 : y0;
		x1 = f->wx1 > x1 ? f->wx1 : x1;
		y1 = f->wy1 > y1 ? f->wy1 : y1;
	}
	if (x1 < 0)
		return false;
	u->x = x0 - REGION_PAD;
	u->y = y0 - REGION_PAD;
	u->w = x1 - x0 + 2 * REGION_PAD;
	u->h = y1 - y0 + 2 * REGION_PAD;
	return clip(f, u);
}

static json_object *
size_json(int w, int h)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "width", json_object_new_int(w));
	json_object_object_add(o, "height", json_object_new_int(h));
	return o;
}

json_object *
fx_observe(struct effect *f, struct display_lease *l)
{
	struct xcap_req q = { .quality = OBSERVE_QUALITY, .format = XCAP_JPEG };
	struct xcap_frame fr = { 0 };
	struct xcap_image img = { 0 };
	struct xwatch_box u;
	struct derr e = { 0 };
	json_object *o = json_object_new_object(), *r;
	char *b64;

	jx_add_str(o, "kind", f->o.observe == EFFECT_OBSERVE_REGION ? "region" : "screen");
	if (f->o.observe == EFFECT_OBSERVE_REGION) {
		if (!observe_box(f, &u)) {
			json_object_object_add(o, "region", NULL);
			jx_add_str(o, "why", "nothing changed: there is no region to show");
			return o;
		}
		q.x = u.x;
		q.y = u.y;
		q.w = u.w;
		q.h = u.h;
		q.max_width = EFFECT_REGION_WIDTH;
	} else
		q.max_side = DESKTOP_LOOK_SIDE;
	if (xcap_shot(l->cap, &q, &fr, &img, &e) != 0) {
		jx_add_str(o, "why", e.message);
		xcap_frame_free(&fr);
		return o;
	}
	r = size_json(fr.src_w, fr.src_h);
	json_object_object_add(r, "x", json_object_new_int(fr.src_x));
	json_object_object_add(r, "y", json_object_new_int(fr.src_y));
	json_object_object_add(o, "region", r);
	json_object_object_add(o, "image_size", size_json(fr.width, fr.height));
	json_object_object_add(o, "scale", json_object_new_double(round(fr.scale * 10000) / 10000));
	b64 = b64_encode(img.data, img.len, NULL);
	json_object_object_add(o, "image_b64", json_object_new_string(b64));
	jx_add_str(o, "media_type", img.mime);
	free(b64);
	xcap_image_free(&img);
	xcap_frame_free(&fr);
	return o;
}
