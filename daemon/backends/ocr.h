/*
 * ocr.h - text on the screen without a model: libtesseract in process.
 *
 * The wait engine's `ocr` backend. A condition such as
 *     text:"Download complete"      "Saving..." disappears
 * is recognised by ocr_condition; the engine then OCRs the regions that
 * changed (ocr_changed_boxes on its greyscale diff thumbnails, widened to
 * their text lines by ocr_line_boxes, then ocr_text on the full-resolution
 * frame, upscaled, line by line through ocr_read_lines' cache of lines
 * already read) and decides with ocr_match, which tolerates OCR noise but
 * not a different word.
 *
 * Measured on this machine (bench/ocr.sh): ~10 ms for a changed line
 * upscaled 2-3x, ~0.1 s for a terminal window, ~2.8 s for a full 1080p
 * frame; a downscaled frame loses small fonts entirely. So: crops of changed
 * regions at scale 2-3, never the whole screen on every poll.
 *
 * Threading: a struct ocr holds one tesseract engine and is NOT thread-safe;
 * use one per thread (ocr_new takes ~0.1 s and ~20 MB). Everything else here
 * is a pure function and may be called from any thread.
 */
#ifndef DETM_OCR_H
#define DETM_OCR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util.h"
#include "derr.h"

#define OCR_MAX_PIXELS   (4 * 1024 * 1024)  /* w*scale * h*scale */
#define OCR_MAX_SCALE    4
#define OCR_MAX_FRAME    16384              /* frame width/height */
#define OCR_MAX_PHRASE   256                /* bytes of a phrase (with NUL) */
#define OCR_MAX_THUMB    (4 * 1024 * 1024)  /* tw*th of a diff thumbnail */

struct ocr;

struct ocr_box {
	int x, y, w, h;
};

/* lang: tesseract language(s), "eng" or "eng+deu" (NULL: "eng"). The model
 * is looked up in $TESSDATA_PREFIX, then the Debian tessdata directories.
 * Missing: NULL with DERR_UNAVAILABLE naming the Debian package
 * (tesseract-ocr-eng); a malformed name: DERR_INVALID field "lang". */
struct ocr *ocr_new(const char *lang, struct derr *e);
void ocr_free(struct ocr *o);   /* NULL ok */
/* Whether OCR can run here: the model files of lang are installed (0, else
 * -1 and why). Loads neither libtesseract (~6 MB of library pages) nor the
 * model (~14 MB of heap that free does not give back: an idle detmd kept
 * 37.9 MB resident); a missing library or a broken model fails at the
 * first ocr_new with its own clean error. (A full probe in a forked child
 * hung under ASan, so it is not done.) */
int ocr_probe(const char *lang, struct derr *e);

/* Recognises the text in the rectangle (x, y, w, h) of an RGB24 frame
 * (packed rows, width*3 bytes; w or h 0: the whole frame). The rectangle is
 * clipped to the frame, converted to grey, made dark-on-light, cleared at
 * its edges (slivers of the neighbouring lines above and below; flat
 * columns such as the desktop or a window frame left and right), and
 * upscaled `scale` times (1..OCR_MAX_SCALE, Catmull-Rom; 2-3 for small UI
 * fonts); tesseract binarises. *text: malloc'd UTF-8 (possibly ""), one
 * line per recognised line; *confidence: mean word confidence 0..100 (may be NULL).
 * Errors: DERR_INVALID (bad frame, rectangle outside the frame, area over
 * OCR_MAX_PIXELS after scaling, scale out of range), DERR_INTERNAL (the
 * engine failed). On error *text is NULL. */
int ocr_text(struct ocr *o, const unsigned char *rgb, int width, int height,
    int x, int y, int w, int h, int scale, char **text, int *confidence,
    struct derr *e);

/* Is `condition` about visible text? Returns 1 and the phrase (NUL-
 * terminated in phrase[0..len)), *negate true when the text must be gone:
 *   text:"Download complete"   text: Download complete    -> phrase
 *   text-gone:"Saving..."  (also text_gone:, no-text:, !text:) -> negate
 *   any condition with exactly one "double-quoted" or “curly-quoted”
 *   phrase: wait until "Build succeeded" appears -> phrase;
 *   "Saving..." disappears / is gone / no longer shown / vanishes /
 *   goes away / is not visible ... -> negate
 * Returns 0 (not for OCR; the vision model decides) when there is no
 * phrase, more than one distinct quoted phrase ("A" changes to "B"), the
 * phrase is empty or does not fit in len, or the condition is about the
 * state of the quoted thing rather than its presence ("Save" is enabled,
 * "Wi-Fi" turns green, "Remember me" is checked). */
int ocr_condition(const char *condition, char *phrase, size_t len, bool *negate);

/* Does OCR output `text` contain `phrase`? Both sides are normalised the
 * same way: ASCII case folded; runs of anything but letters/digits (and
 * non-ASCII letters) become word breaks; look-alikes folded (0->o,
 * 1/i/I/|->l, 5->s, rn->m, vv->w). Spaces are free (OCR splits and joins
 * words), but the match must begin at a word start and end at a word end
 * of the text. Each phrase word may have floor(len/7) edits (insert,
 * delete, substitute) with its first and last letter on a letter of the
 * text (no edit may add or drop a letter at a word's end, so a word cannot
 * borrow from its neighbour): words under 7 characters must be exact after
 * folding, 7-13 characters 1 edit, 14+ 2. So "Download complete" matches
 * "Down1oad  complete.", "Downloed complete" and "Downloadcomplete", but
 * not "Download incomplete", "Download completed" or "Download"; "Save"
 * does not match "Saved" nor "Error" "Terror". A phrase with no letters or
 * digits never matches. */
bool ocr_match(const char *text, const char *phrase);

/* Regions that changed between two greyscale thumbnails (1 byte/px, tw x th,
 * same size; the wait engine's diff frames) of a full_w x full_h screen:
 * thumbnail pixels differing by more than threshold, grouped (8-connected),
 * mapped to full-resolution coordinates, padded, clipped, and merged when
 * they overlap or are close (text lines become one box). At most n boxes
 * (the closest pairs are merged until they fit), largest first. Returns the
 * count (0: nothing changed), or -1 on bad arguments. */
int ocr_changed_boxes(const unsigned char *prev, const unsigned char *cur,
    int tw, int th, int full_w, int full_h, int threshold,
    struct ocr_box *boxes, int n);

/* Widens the n boxes (full-resolution, inside the width x height RGB24
 * frame) to the text line(s) they touch, in place (ocr_line.c): each box,
 * on its own rows, sideways to the edges of the region it lies in (the
 * first column left and right that is one flat tone other than the box's
 * background, e.g. a window's edge; else the frame's edge), then pad rows
 * up and down, clipped; boxes taller than half the frame stay as they are;
 * boxes that overlap afterwards are merged. So a change that starts
 * mid-word ("t finished" of "Export finished" written over "Exporting,
 * please wait...") is read with the rest of its line. Returns the new count
 * (<= n), or -1 on bad arguments (a box outside the frame, an empty one). */
int ocr_line_boxes(const unsigned char *rgb, int width, int height, struct ocr_box *boxes, int n,
    int pad);

/* The text of box b of an RGB24 frame, read line by line (ocr_cache.c):
 * the box is cut into text lines (ocr_cut_lines), each line OCRed at
 * `scale` unless a line with the same pixels, size and scale was read before (by any thread: a cache of about
 * 1 MB, least recently used out). *text: malloc'd, the lines' texts joined
 * by '\n' ("" when the box holds no ink). Returns 0; 1 when a run is too
 * big for one OCR call (not text lines: read the box in strips with
 * ocr_text; *text NULL); -1 with e (a box outside the frame, OCR failed). */
int ocr_read_lines(struct ocr *o, const unsigned char *rgb, int width, int height, struct ocr_box b,
    int scale, char **text, struct derr *e);
/* The text lines of box b of an RGB24 frame (ocr_cut.c), at most max, in
 * reading order, each inside b (grown up or down to the whole line
 * where b's top or bottom row cuts through one): runs of rows with ink (frames, scrollbars
 * and other long runs of ink do not count), each run cut at blank gaps
 * wider than a word space into pieces that are cut into their own runs,
 * so that windows side by side give their lines apart. Returns the count
 * (0: no ink), or -1 on bad arguments or more than max lines. */
int ocr_cut_lines(const unsigned char *rgb, int width, int height, struct ocr_box b, struct ocr_box *lines,
    int max);
/* Lines answered from that cache and lines OCRed, since start. */
void ocr_cache_stats(uint64_t *hits, uint64_t *misses);

/* Area-averaged greyscale thumbnail (BT.601 luma) of an RGB24 frame, the
 * input ocr_changed_boxes expects. out has tw*th bytes; tw <= width,
 * th <= height. Returns 0, or -1 on bad arguments. */
int ocr_grey_thumb(const unsigned char *rgb, int width, int height,
    unsigned char *out, int tw, int th);

#endif
