/*
 * ocr_line.c - a changed box widened to the text line(s) it touches
 * (ocr_line_boxes), pure and reentrant.
 *
 * Why: text replaced in place ("Exporting, please wait..." overwritten by
 * "Export finished", "Saving..." by "Saved") changes only the glyphs that
 * differ, so the changed box starts mid-word ("t finished") and OCR of it
 * alone never reads the phrase. Each box is widened sideways, on its own
 * rows, to the edges of the region it lies in: the first column left and
 * right that is one flat tone other than the box's background (a window's
 * edge, the desktop beside a terminal, the border of a text field), else the
 * frame's edge. Gaps between words and margins are the box's background, so
 * they never stop the walk; a flat column of another tone does, which keeps
 * one background polarity in the crop for the OCR's binarisation. The box
 * is padded by a few rows up and down (ocr_text erases slivers of the
 * neighbouring lines), and boxes that then overlap are merged.
 *
 * Invariants: every box stays inside the frame; the work is one pass over
 * each box's rows (width x height luma reads), nothing allocated.
 *
 * Does not: find changes (ocr_boxes.c), OCR (ocr.c), or decide when the
 * wider read is needed (the wait engine).
 */
#include "ocr.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LINE_INK      40    /* luma distance from the background that is ink */
#define LINE_FLAT     16    /* a column within this luma range is one flat tone */
#define LINE_MAX_FRAC 2     /* boxes taller than 1/LINE_MAX_FRAC of the frame stay as they are */

static int
luma_at(const unsigned char *rgb, int width, int x, int y)
{
	const unsigned char *p = rgb + ((size_t)y * (size_t)width + (size_t)x) * 3;

	return (77 * p[0] + 150 * p[1] + 29 * p[2] + 128) >> 8;
}

/* The most common luma of the rectangle (the background of a text box). */
static int
box_background(const unsigned char *rgb, int width, const struct ocr_box *b)
{
	size_t hist[256] = { 0 };
	int mode = 0;

	for (int y = b->y; y < b->y + b->h; y++)
		for (int x = b->x; x < b->x + b->w; x++)
			hist[luma_at(rgb, width, x, y)]++;
	for (int i = 1; i < 256; i++)
		if (hist[i] > hist[mode])
			mode = i;
	return mode;
}

/* Column x over rows [y0, y1) is one flat tone that is not bg: the edge
 * of the region the line lies in. */
static bool
column_edge(const unsigned char *rgb, int width, int x, int y0, int y1, int bg)
{
	int lo = 255, hi = 0;

	for (int y = y0; y < y1; y++) {
		int v = luma_at(rgb, width, x, y);

		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		if (hi - lo > LINE_FLAT)
			return false;
	}
	return abs((lo + hi) / 2 - bg) > LINE_INK;
}

static bool
box_overlap(const struct ocr_box *a, const struct ocr_box *b)
{
	return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

static struct ocr_box
box_union(const struct ocr_box *a, const struct ocr_box *b)
{
	int x0 = a->x < b->x ? a->x : b->x, y0 = a->y < b->y ? a->y : b->y;
	int x1 = a->x + a->w > b->x + b->w ? a->x + a->w : b->x + b->w;
	int y1 = a->y + a->h > b->y + b->h ? a->y + a->h : b->y + b->h;

	return (struct ocr_box){ x0, y0, x1 - x0, y1 - y0 };
}

/* One box widened to its line (see the file comment). */
static struct ocr_box
line_of(const unsigned char *rgb, int width, int height, struct ocr_box b, int pad)
{
	int bg, x0 = b.x, x1 = b.x + b.w, y0, y1;

	if (b.h > height / LINE_MAX_FRAC)
		return b;
	bg = box_background(rgb, width, &b);
	while (x0 > 0 && !column_edge(rgb, width, x0 - 1, b.y, b.y + b.h, bg))
		x0--;
	while (x1 < width && !column_edge(rgb, width, x1, b.y, b.y + b.h, bg))
		x1++;
	y0 = b.y - pad < 0 ? 0 : b.y - pad;
	y1 = b.y + b.h + pad > height ? height : b.y + b.h + pad;
	return (struct ocr_box){ x0, y0, x1 - x0, y1 - y0 };
}

int
ocr_line_boxes(const unsigned char *rgb, int width, int height, struct ocr_box *boxes, int n,
    int pad)
{
	if (rgb == NULL || boxes == NULL || n < 0 || width < 1 || height < 1 ||
	    width > OCR_MAX_FRAME || height > OCR_MAX_FRAME || pad < 0 || pad > height)
		return -1;
	for (int i = 0; i < n; i++) {
		struct ocr_box *b = &boxes[i];

		if (b->w <= 0 || b->h <= 0 || b->x < 0 || b->y < 0 || b->x + b->w > width ||
		    b->y + b->h > height)
			return -1;
		*b = line_of(rgb, width, height, *b, pad);
	}
	for (bool again = true; again;) {
		again = false;
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++)
				if (box_overlap(&boxes[i], &boxes[j])) {
					boxes[i] = box_union(&boxes[i], &boxes[j]);
					boxes[j] = boxes[--n];
					j = i;
					again = true;
				}
	}
	return n;
}
