/*
 * ocr_cut.c - where the text lines of a box are (ocr_cut_lines): the box
 * cut into runs of rows with ink, each run cut at wide blank gaps into
 * pieces, each piece cut into its own runs of rows again (a recursive
 * X-Y cut, a few levels deep).
 *
 * Why the second cut: two windows side by side (a terminal that scrolls
 * next to another one) have their lines at different heights, so a run of
 * rows over the whole box holds a line of one and half of two lines of the
 * other; tesseract, given that band, dropped short words ("mark 6 done"
 * read as "mark done": a text wait that never resolved, issue 39). Each
 * piece is cut into rows with its own background, so each window's lines
 * come out whole.
 *
 * Rules do not count as ink: a pixel in a vertical run of ink at least
 * RULE_LEN tall (a window's frame, a scrollbar, the desktop beside a
 * window) does not make a row hold ink, and one in a horizontal run at
 * least RULE_LEN wide (a title bar, a window's bottom edge, an underline)
 * does not make a column hold ink; otherwise a frame would join every line
 * of a window into one run, and a title bar every column of the screen.
 * Nor does a vertical rule make a column hold ink: pieces end at frames.
 *
 * Invariants: at most `max` boxes, each inside b, in reading order (top to
 * bottom, then left to right within a run); runs thinner than BAND_MIN_H
 * are dropped (rules, dots). Work is bounded: one luma and mask pass per
 * piece, at most CUT_DEPTH levels.
 *
 * Does not: OCR (ocr.c), remember readings (ocr_cache.c).
 */
#include "ocr.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BAND_INK    40      /* luma distance from the background that is ink */
#define BAND_MIN_H  3       /* thinner runs of ink are rules, not text */
#define BAND_PAD    1       /* blank rows/columns kept around a line */
#define RULE_LEN    48      /* a run of ink this long is a rule, not a glyph */
#define SEG_GAP_MIN 16      /* blank columns that part two pieces of a run: at least, */
#define SEG_GAP_MAX 48      /* ... at most (else twice the run's height) */
#define CUT_DEPTH   3       /* rows, pieces, their rows, their pieces... */

enum { INK = 1, VRULE = 2, HRULE = 4 };

/* A piece being cut: its box and one mask byte per pixel. */
struct grid {
	struct ocr_box b;
	uint8_t *m;
};

struct out {
	struct ocr_box *lines;
	int n, max;
};

static int
luma(const unsigned char *p)
{
	return (77 * p[0] + 150 * p[1] + 29 * p[2] + 128) >> 8;
}

/* How many pixels of ink (against bg) run on from (x, y) in steps of
 * (dx, dy) inside the frame, up to RULE_LEN: a run that reaches the edge
 * of the box is measured on outside it, so a window's frame is a rule in
 * a box one line high as in the whole screen (a line then reads the same,
 * and hits the cache, whichever box it was read in). */
static int
beyond(const unsigned char *rgb, int width, int height, int x, int y, int dx, int dy, int bg)
{
	int n = 0;

	for (; n < RULE_LEN && x >= 0 && y >= 0 && x < width && y < height; x += dx, y += dy, n++)
		if (abs(luma(rgb + ((size_t)y * (size_t)width + (size_t)x) * 3) - bg) <= BAND_INK)
			break;
	return n;
}

/* The mask of b: ink (far from b's most common luma), and which ink is in
 * a long vertical or horizontal run (measured on beyond b's edges). */
static void
grid_fill(struct grid *g, const unsigned char *rgb, int width, int height)
{
	struct ocr_box b = g->b;
	size_t hist[256] = { 0 };
	int bg = 0;

	for (int y = 0; y < b.h; y++)
		for (int x = 0; x < b.w; x++)
			g->m[(size_t)y * (size_t)b.w + (size_t)x] = (uint8_t)luma(rgb + ((size_t)(b.y + y) *
			    (size_t)width + (size_t)(b.x + x)) * 3);
	for (size_t i = 0; i < (size_t)b.w * (size_t)b.h; i++)
		hist[g->m[i]]++;
	for (int i = 1; i < 256; i++)
		if (hist[i] > hist[bg])
			bg = i;
	for (size_t i = 0; i < (size_t)b.w * (size_t)b.h; i++)
		g->m[i] = abs(g->m[i] - bg) > BAND_INK ? INK : 0;
	for (int x = 0; x < b.w; x++)           /* vertical runs */
		for (int y = 0; y < b.h;) {
			int y0 = y, len;

			while (y < b.h && (g->m[(size_t)y * (size_t)b.w + (size_t)x] & INK))
				y++;
			len = y - y0;
			if (len > 0 && y0 == 0)
				len += beyond(rgb, width, height, b.x + x, b.y - 1, 0, -1, bg);
			if (len > 0 && y == b.h)
				len += beyond(rgb, width, height, b.x + x, b.y + b.h, 0, 1, bg);
			if (len >= RULE_LEN)
				for (int k = y0; k < y; k++)
					g->m[(size_t)k * (size_t)b.w + (size_t)x] |= VRULE;
			y += y == y0;
		}
	for (int y = 0; y < b.h; y++) {         /* horizontal runs */
		uint8_t *r = g->m + (size_t)y * (size_t)b.w;

		for (int x = 0; x < b.w;) {
			int x0 = x, len;

			while (x < b.w && (r[x] & INK))
				x++;
			len = x - x0;
			if (len > 0 && x0 == 0)
				len += beyond(rgb, width, height, b.x - 1, b.y + y, -1, 0, bg);
			if (len > 0 && x == b.w)
				len += beyond(rgb, width, height, b.x + b.w, b.y + y, 1, 0, bg);
			if (len >= RULE_LEN)
				for (int k = x0; k < x; k++)
					r[k] |= HRULE;
			x += x == x0;
		}
	}
}

/* Row y (of the grid) holds ink that is not part of a vertical rule. */
static bool
row_ink(const struct grid *g, int y)
{
	const uint8_t *r = g->m + (size_t)y * (size_t)g->b.w;

	for (int x = 0; x < g->b.w; x++)
		if ((r[x] & (INK | VRULE)) == INK)
			return true;
	return false;
}

/* Column x of grid rows [y0, y1) holds ink that is part of no rule (a
 * vertical rule, a window's edge, parts pieces; it is not read). */
static bool
col_ink(const struct grid *g, int x, int y0, int y1)
{
	for (int y = y0; y < y1; y++)
		if (g->m[(size_t)y * (size_t)g->b.w + (size_t)x] == INK)
			return true;
	return false;
}

static void cut(const unsigned char *rgb, int width, int height, struct ocr_box b, int depth, struct out *o);

static void
emit(struct out *o, struct ocr_box b)
{
	if (o->n < o->max)
		o->lines[o->n++] = b;
	else
		o->n = o->max + 1;      /* overflow: the caller reads the box another way */
}

/* Rows [y0, y1) of g (one run of rows with ink): its pieces, each read
 * again one level deeper, or the run itself (its inked columns) when it
 * is one piece. */
static void
cut_run(const unsigned char *rgb, int width, int height, const struct grid *g, int y0, int y1, int depth, struct out *o)
{
	struct ocr_box b = g->b, piece[16];
	int gap = (y1 - y0) * 2, n = 0, x = 0;

	gap = gap < SEG_GAP_MIN ? SEG_GAP_MIN : gap > SEG_GAP_MAX ? SEG_GAP_MAX : gap;
	while (x < b.w && n < (int)ARRAY_LEN(piece)) {
		int x0, last, blank = 0;

		while (x < b.w && !col_ink(g, x, y0, y1))
			x++;
		if (x >= b.w)
			break;
		x0 = last = x;
		for (; x < b.w && (blank < gap || n == (int)ARRAY_LEN(piece) - 1); x++) {
			if (col_ink(g, x, y0, y1)) {
				last = x;
				blank = 0;
			} else
				blank++;
		}
		x0 = x0 - BAND_PAD < 0 ? 0 : x0 - BAND_PAD;
		last = last + 1 + BAND_PAD > b.w ? b.w : last + 1 + BAND_PAD;
		piece[n++] = (struct ocr_box){ b.x + x0, b.y + y0, last - x0, y1 - y0 };
	}
	if (n == 1 || depth + 1 >= CUT_DEPTH) {
		for (int i = 0; i < n; i++)
			emit(o, piece[i]);
		return;
	}
	for (int i = 0; i < n; i++)
		cut(rgb, width, height, piece[i], depth + 1, o);
}

/* Box b: its runs of rows with ink, each handed to cut_run. */
static void
cut(const unsigned char *rgb, int width, int height, struct ocr_box b, int depth, struct out *o)
{
	struct grid g = { .b = b, .m = xmalloc((size_t)b.w * (size_t)b.h) };
	int y = 0;

	grid_fill(&g, rgb, width, height);
	while (y < b.h && o->n <= o->max) {
		int y0, y1;

		while (y < b.h && !row_ink(&g, y))
			y++;
		if (y >= b.h)
			break;
		y0 = y;
		while (y < b.h && row_ink(&g, y))
			y++;
		y1 = y;
		if (y1 - y0 < BAND_MIN_H)
			continue;
		y0 = y0 - BAND_PAD < 0 ? 0 : y0 - BAND_PAD;
		y1 = y1 + BAND_PAD > b.h ? b.h : y1 + BAND_PAD;
		cut_run(rgb, width, height, &g, y0, y1, depth, o);
	}
	free(g.m);
}

/* Row y over b's columns holds ink (against bg) outside the rule columns. */
static bool
frame_row_ink(const unsigned char *rgb, int width, struct ocr_box b, int y, int bg, const bool *rule)
{
	const unsigned char *p = rgb + ((size_t)y * (size_t)width + (size_t)b.x) * 3;

	for (int x = 0; x < b.w; x++, p += 3)
		if (!rule[x] && abs(luma(p) - bg) > BAND_INK)
			return true;
	return false;
}

/* A box whose top or bottom row cuts through a line of text (a changed
 * region's edge) grows to that line's blank row, at most RULE_LEN rows
 * each way (else it stays): the line is then read whole, and reads the
 * same, and hits the cache, whichever box it was found in. Columns with
 * a vertical rule through the edge row (a frame) do not count. */
static struct ocr_box
grow_to_lines(const unsigned char *rgb, int width, int height, struct ocr_box b)
{
	size_t hist[256] = { 0 };
	bool *rule = xcalloc((size_t)b.w, 1);
	int bg = 0, y;

	for (int yy = b.y; yy < b.y + b.h; yy += 2)
		for (int x = b.x; x < b.x + b.w; x += 2)
			hist[luma(rgb + ((size_t)yy * (size_t)width + (size_t)x) * 3)]++;
	for (int i = 1; i < 256; i++)
		if (hist[i] > hist[bg])
			bg = i;
	for (int x = 0; x < b.w; x++)
		rule[x] = beyond(rgb, width, height, b.x + x, b.y, 0, -1, bg) +
		    beyond(rgb, width, height, b.x + x, b.y + b.h - 1, 0, 1, bg) >= RULE_LEN ||
		    beyond(rgb, width, height, b.x + x, b.y, 0, 1, bg) >= RULE_LEN;
	if (b.y > 0 && frame_row_ink(rgb, width, b, b.y, bg, rule)) {
		for (y = b.y - 1; y >= 0 && b.y - y <= RULE_LEN && frame_row_ink(rgb, width, b, y, bg, rule); y--)
			;
		if (y >= 0 && b.y - y <= RULE_LEN) {
			b.h += b.y - y;
			b.y = y;
		}
	}
	if (b.y + b.h < height && frame_row_ink(rgb, width, b, b.y + b.h - 1, bg, rule)) {
		for (y = b.y + b.h; y < height && y - (b.y + b.h) < RULE_LEN && frame_row_ink(rgb, width, b, y, bg, rule);
		    y++)
			;
		if (y < height && y - (b.y + b.h) < RULE_LEN)
			b.h = y + 1 - b.y;
	}
	free(rule);
	return b;
}

int
ocr_cut_lines(const unsigned char *rgb, int width, int height, struct ocr_box b, struct ocr_box *lines,
    int max)
{
	struct out o = { .lines = lines, .max = max };

	if (rgb == NULL || b.x < 0 || b.y < 0 || b.w <= 0 || b.h <= 0 || b.x + b.w > width ||
	    b.y + b.h > height || max < 1)
		return -1;
	cut(rgb, width, height, grow_to_lines(rgb, width, height, b), 0, &o);
	return o.n > max ? -1 : o.n;
}
