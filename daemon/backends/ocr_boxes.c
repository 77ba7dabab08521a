/*
 * ocr_boxes.c - where two greyscale thumbnails differ, as a few boxes of
 * the full-resolution frame to OCR (ocr_changed_boxes), pure and
 * reentrant.
 *
 * Changed pixels are grouped into blobs (gaps of BOX_GAP thumbnail px
 * bridged), mapped to the full frame with a margin (wide sideways, tight
 * vertically), merged while near each other, and reduced to at most n
 * boxes, largest first; more than BOX_MAXC blobs collapse into one box.
 * The thumbnail is at most OCR_MAX_THUMB px and the frame OCR_MAX_FRAME
 * square, checked before anything is allocated.
 *
 * Does not: OCR (ocr.c), or decide which boxes matter (the wait engine).
 */
#include "ocr.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* ---- changed regions ---------------------------------------------------- */

#define BOX_GAP   2     /* thumbnail px bridged when grouping changed pixels */
#define BOX_MAXC  256   /* components before everything becomes one box */

struct cbox {
	int x0, y0, x1, y1;   /* full-res, half-open */
};

static int64_t
cbox_area(const struct cbox *b)
{
	return (int64_t)(b->x1 - b->x0) * (b->y1 - b->y0);
}

static struct cbox
cbox_union(const struct cbox *a, const struct cbox *b)
{
	struct cbox u = *a;

	if (b->x0 < u.x0)
		u.x0 = b->x0;
	if (b->y0 < u.y0)
		u.y0 = b->y0;
	if (b->x1 > u.x1)
		u.x1 = b->x1;
	if (b->y1 > u.y1)
		u.y1 = b->y1;
	return u;
}

/* Close enough to be one region: overlapping after padding, or on the same
 * rows with a horizontal gap of at most gx. */
static bool
cbox_near(const struct cbox *a, const struct cbox *b, int gx)
{
	bool yov = a->y0 < b->y1 && b->y0 < a->y1;
	int gap = a->x1 <= b->x0 ? b->x0 - a->x1 : b->x1 <= a->x0 ? a->x0 - b->x1 : 0;

	return yov && gap <= gx;
}

static int
cbox_cmp(const void *pa, const void *pb)
{
	int64_t a = cbox_area(pa), b = cbox_area(pb);

	return (a < b) - (a > b);
}

/* The geometry shared by the steps of ocr_changed_boxes. */
struct boxgeo {
	int tw, th, full_w, full_h;
	int padx, pady;         /* padding around a region at full resolution */
	int gx;                 /* horizontal gap under which regions merge */
};

/* Flood-fills the changed pixels reachable from `start` (gaps of up to
 * BOX_GAP thumbnail pixels bridged), marking them visited; returns their
 * bounding box in thumbnail pixels. */
static struct cbox
blob_grow(unsigned char *mark, int *stack, size_t start, const struct boxgeo *g)
{
	struct cbox b;
	int sp = 0;

	b.x0 = b.x1 = (int)(start % (size_t)g->tw);
	b.y0 = b.y1 = (int)(start / (size_t)g->tw);
	mark[start] = 2;
	stack[sp++] = (int)start;
	while (sp > 0) {
		int p = stack[--sp], px = p % g->tw, py = p / g->tw;

		b.x0 = px < b.x0 ? px : b.x0;
		b.x1 = px > b.x1 ? px : b.x1;
		b.y0 = py < b.y0 ? py : b.y0;
		b.y1 = py > b.y1 ? py : b.y1;
		for (int dy = -BOX_GAP; dy <= BOX_GAP; dy++) {
			int qy = py + dy;

			if (qy < 0 || qy >= g->th)
				continue;
			for (int dx = -BOX_GAP; dx <= BOX_GAP; dx++) {
				int qx = px + dx;
				size_t q = (size_t)qy * (size_t)g->tw + (size_t)qx;

				if (qx < 0 || qx >= g->tw || mark[q] != 1)
					continue;
				mark[q] = 2;
				stack[sp++] = (int)q;   /* each pixel pushed once: sp < npx */
			}
		}
	}
	return b;
}

/* A box of thumbnail pixels (inclusive) to full resolution (exclusive
 * ends), padded by pad and clipped to the frame. */
static struct cbox
box_to_full(const struct cbox *t, int padx, int pady, const struct boxgeo *g)
{
	struct cbox f;

	f.x0 = (int)((int64_t)t->x0 * g->full_w / g->tw) - padx;
	f.y0 = (int)((int64_t)t->y0 * g->full_h / g->th) - pady;
	f.x1 = (int)(((int64_t)(t->x1 + 1) * g->full_w + g->tw - 1) / g->tw) + padx;
	f.y1 = (int)(((int64_t)(t->y1 + 1) * g->full_h + g->th - 1) / g->th) + pady;
	f.x0 = f.x0 < 0 ? 0 : f.x0;
	f.y0 = f.y0 < 0 ? 0 : f.y0;
	f.x1 = f.x1 > g->full_w ? g->full_w : f.x1;
	f.y1 = f.y1 > g->full_h ? g->full_h : f.y1;
	return f;
}

/* Too scattered to be regions: one box, the bounding box of the regions
 * found and of every changed pixel not yet visited. */
static void
boxes_collapse(struct cbox *cb, int nc, const unsigned char *mark, size_t npx,
    const struct boxgeo *g)
{
	struct cbox all = cb[0], rest = { g->tw, g->th, -1, -1 };

	for (int i = 1; i < nc; i++)
		all = cbox_union(&all, &cb[i]);
	for (size_t i = 0; i < npx; i++)
		if (mark[i] == 1) {
			int px = (int)(i % (size_t)g->tw), py = (int)(i / (size_t)g->tw);

			rest.x0 = px < rest.x0 ? px : rest.x0;
			rest.y0 = py < rest.y0 ? py : rest.y0;
			rest.x1 = px > rest.x1 ? px : rest.x1;
			rest.y1 = py > rest.y1 ? py : rest.y1;
		}
	if (rest.x1 >= 0) {
		struct cbox full = box_to_full(&rest, 0, 0, g);

		all = cbox_union(&all, &full);
	}
	cb[0] = all;
}

/* Merges boxes closer than gx until none are; returns the new count. */
static int
boxes_merge_near(struct cbox *cb, int nc, int gx)
{
	for (bool again = true; again;) {
		again = false;
		for (int i = 0; i < nc; i++)
			for (int j = i + 1; j < nc; j++)
				if (cbox_near(&cb[i], &cb[j], gx)) {
					cb[i] = cbox_union(&cb[i], &cb[j]);
					cb[j] = cb[--nc];
					j = i;   /* cb[i] grew: look again */
					again = true;
				}
	}
	return nc;
}

/* While there are more than n boxes, merges the pair whose union adds the
 * least area. Returns the new count (<= n). */
static int
boxes_reduce(struct cbox *cb, int nc, int n)
{
	while (nc > n) {
		int bi = 0, bj = 1;
		int64_t best = INT64_MAX;

		for (int i = 0; i < nc; i++)
			for (int j = i + 1; j < nc; j++) {
				struct cbox u = cbox_union(&cb[i], &cb[j]);
				int64_t grow = cbox_area(&u) - cbox_area(&cb[i]) - cbox_area(&cb[j]);

				if (grow < best) {
					best = grow;
					bi = i;
					bj = j;
				}
			}
		cb[bi] = cbox_union(&cb[bi], &cb[bj]);
		cb[bj] = cb[--nc];
	}
	return nc;
}

int
ocr_changed_boxes(const unsigned char *prev, const unsigned char *cur,
    int tw, int th, int full_w, int full_h, int threshold,
    struct ocr_box *boxes, int n)
{
	unsigned char *mark = NULL;   /* 1 changed, 2 visited */
	int *stack = NULL;
	struct cbox *cb = NULL;
	struct boxgeo g;
	size_t npx;
	int nc = 0;
	bool overflow = false;

	if (prev == NULL || cur == NULL || boxes == NULL || n < 1 || tw < 1 || th < 1 ||
	    (int64_t)tw * th > OCR_MAX_THUMB || full_w < 1 || full_h < 1 ||
	    full_w > OCR_MAX_FRAME || full_h > OCR_MAX_FRAME || threshold < 0 ||
	    threshold > 255)
		return -1;
	npx = (size_t)tw * (size_t)th;
	mark = xmalloc(npx);
	for (size_t i = 0; i < npx; i++)
		mark[i] = abs((int)cur[i] - (int)prev[i]) > threshold;
	stack = xmalloc(sizeof *stack * npx);
	cb = xmalloc(sizeof *cb * (BOX_MAXC + 1));
	/* Generous sideways (a line's first and last glyph), tight vertically
	 * (the line above must not come along). */
	g = (struct boxgeo){ tw, th, full_w, full_h, (full_w + tw - 1) / tw + 4, 2,
	    2 * ((full_w + tw - 1) / tw) + 8 };
	for (size_t start = 0; start < npx && !overflow; start++) {
		struct cbox t;

		if (mark[start] != 1)
			continue;
		t = blob_grow(mark, stack, start, &g);
		cb[nc] = box_to_full(&t, g.padx, g.pady, &g);
		if (++nc > BOX_MAXC)
			overflow = true;
	}
	if (overflow) {
		boxes_collapse(cb, nc, mark, npx, &g);
		nc = 1;
	}
	nc = boxes_merge_near(cb, nc, g.gx);
	nc = boxes_reduce(cb, nc, n);
	qsort(cb, (size_t)nc, sizeof *cb, cbox_cmp);
	for (int i = 0; i < nc; i++) {
		boxes[i].x = cb[i].x0;
		boxes[i].y = cb[i].y0;
		boxes[i].w = cb[i].x1 - cb[i].x0;
		boxes[i].h = cb[i].y1 - cb[i].y0;
	}
	free(cb);
	free(stack);
	free(mark);
	return nc;
}
