/*
 * ocr_cache.c - a box read line by line, each line's text remembered by
 * its pixels (ocr_read_lines), shared by every thread and every display.
 *
 * Why: a busy screen (a terminal that scrolls, a clock) redraws many lines
 * while only one or two of them are new. Reading the whole box each time
 * cost ~20 % of a core per wait (issue 39). So the box is cut into text
 * lines (ocr_cut.c: runs of rows with ink, and within a run, pieces apart
 * by wide blank gaps, each cut into its own lines), and each line's text is looked up by a hash of its pixels (not
 * its position: a scrolled line is the same line) before tesseract is
 * asked. Every wait watching a display (and any display showing the same
 * pixels) shares the reads: one OCR per new line, whoever asks first.
 *
 * Invariants: the table holds at most CACHE_SLOTS texts of at most
 * CACHE_TEXT bytes each (about 1 MB in all), evicting the least recently
 * used; its mutex is never held while tesseract runs (two threads that miss
 * the same line at once both read it; the second insert replaces the
 * first). A hash collision (64 bits, with the line's size and scale in the
 * key) would return another line's text: negligible, and a wait that
 * misses a phrase reads again at the next change.
 *
 * Does not: decide what to read (the wait engine), find the lines
 * (ocr_cut.c), OCR itself (ocr.c), or
 * match phrases (ocr_phrase.c).
 */
#include "ocr.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_SLOTS 1024
#define CACHE_TEXT  1024    /* bytes of one line's text kept (longer: cut) */
#define CUT_MAX     512     /* lines of one box (ocr_cut_lines) */

struct slot {
	uint64_t key, used;
	int w, h, scale;
	char *text;
};

static struct {
	pthread_mutex_t mu;
	struct slot s[CACHE_SLOTS];
	uint64_t clock, hits, misses;
} cache = { .mu = PTHREAD_MUTEX_INITIALIZER };

static uint64_t
hash_rect(const unsigned char *rgb, int width, struct ocr_box b, int scale)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)b.w << 32) ^ ((uint64_t)b.h << 8) ^ (uint64_t)scale;
	size_t n = (size_t)b.w * 3;

	for (int y = b.y; y < b.y + b.h; y++) {
		const unsigned char *p = rgb + ((size_t)y * (size_t)width + (size_t)b.x) * 3;
		size_t i = 0;

		for (; i + 8 <= n; i += 8) {
			uint64_t v;

			memcpy(&v, p + i, 8);
			h = (h ^ v) * 0xff51afd7ed558ccdULL;
			h ^= h >> 29;
		}
		for (; i < n; i++)
			h = (h ^ p[i]) * 0x100000001b3ULL;
		h ^= h >> 31;
	}
	return h;
}

/* Copies a cached text into *text (0), or 1 when absent. */
static int
cache_get(uint64_t key, struct ocr_box b, int scale, char **text)
{
	int rc = 1;

	pthread_mutex_lock(&cache.mu);
	for (int i = 0; i < CACHE_SLOTS; i++) {
		struct slot *s = &cache.s[i];

		if (s->text != NULL && s->key == key && s->w == b.w && s->h == b.h && s->scale == scale) {
			s->used = ++cache.clock;
			*text = xstrdup(s->text);
			rc = 0;
			break;
		}
	}
	if (rc == 0)
		cache.hits++;
	else
		cache.misses++;
	pthread_mutex_unlock(&cache.mu);
	return rc;
}

static void
cache_put(uint64_t key, struct ocr_box b, int scale, const char *text)
{
	struct slot *victim = &cache.s[0];
	char *copy = xmalloc(CACHE_TEXT);

	snprintf(copy, CACHE_TEXT, "%s", text);
	pthread_mutex_lock(&cache.mu);
	for (int i = 0; i < CACHE_SLOTS; i++) {
		struct slot *s = &cache.s[i];

		if (s->text == NULL || (s->key == key && s->w == b.w && s->h == b.h && s->scale == scale)) {
			victim = s;
			break;
		}
		if (s->used < victim->used)
			victim = s;
	}
	free(victim->text);
	*victim = (struct slot){ .key = key, .used = ++cache.clock, .w = b.w, .h = b.h, .scale = scale,
	    .text = copy };
	pthread_mutex_unlock(&cache.mu);
}

/* One line: from the cache, else read and remembered. */
static int
read_line(struct ocr *o, const unsigned char *rgb, int width, int height, struct ocr_box b, int scale,
    char **text, struct derr *e)
{
	uint64_t key = hash_rect(rgb, width, b, scale);

	if (cache_get(key, b, scale, text) == 0)
		return 0;
	if (ocr_text(o, rgb, width, height, b.x, b.y, b.w, b.h, scale, text, NULL, e) != 0)
		return -1;
	cache_put(key, b, scale, *text);
	return 0;
}

static void
append(char **all, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (n == 0)
		return;
	*all = xrealloc(*all, *len + n + 2);
	if (*len > 0)
		(*all)[(*len)++] = '\n';
	memcpy(*all + *len, s, n + 1);
	*len += n;
}

int
ocr_read_lines(struct ocr *o, const unsigned char *rgb, int width, int height, struct ocr_box b,
    int scale, char **text, struct derr *e)
{
	struct ocr_box *lines;
	char *all;
	size_t len = 0;
	int n, rc = 0;

	*text = NULL;
	if (b.x < 0 || b.y < 0 || b.w <= 0 || b.h <= 0 || b.x + b.w > width || b.y + b.h > height ||
	    scale < 1 || scale > OCR_MAX_SCALE)
		return derr_set(e, DERR_INVALID, NULL, "ocr_read_lines: a box outside the frame");
	lines = xmalloc(sizeof *lines * CUT_MAX);
	all = xstrdup("");
	if ((n = ocr_cut_lines(rgb, width, height, b, lines, CUT_MAX)) < 0)
		rc = 1;         /* more pieces than lines of text have: the caller reads it in strips */
	for (int i = 0; i < n && rc == 0; i++) {
		char *t = NULL;

		if ((int64_t)lines[i].w * scale * lines[i].h * scale > OCR_MAX_PIXELS)
			rc = 1;         /* not lines of text: the caller reads it in strips */
		else if (read_line(o, rgb, width, height, lines[i], scale, &t, e) != 0)
			rc = -1;
		else
			append(&all, &len, t);
		free(t);
	}
	free(lines);
	if (rc != 0) {
		free(all);
		return rc;
	}
	*text = all;
	return 0;
}

void
ocr_cache_stats(uint64_t *hits, uint64_t *misses)
{
	pthread_mutex_lock(&cache.mu);
	*hits = cache.hits;
	*misses = cache.misses;
	pthread_mutex_unlock(&cache.mu);
}
