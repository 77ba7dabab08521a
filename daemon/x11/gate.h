/*
 * gate.h - the change gate of the smart-wait engine: a small greyscale
 * copy of a frame, and how much of it changed since another.
 *
 * Pure functions on caller-owned buffers; no allocation, no state.
 */
#ifndef DETM_GATE_H
#define DETM_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "xcap.h"

/* out[f->width * f->height] = luma of f (BT.601 integer weights). */
void gate_grey(const struct xcap_frame *f, uint8_t *out);

/* Fraction (0..1) of pixels whose luma differs by more than
 * pixel_threshold between a and b (n pixels each). */
double gate_diff(const uint8_t *a, const uint8_t *b, size_t n, int pixel_threshold);

/* A frame counts as changed when more than this fraction of the thumbnail
 * moved by more than GATE_PIXEL_THRESHOLD (cursor blinks and JPEG-level
 * noise stay below it; a new line of text in a terminal does not). */
#define GATE_PIXEL_THRESHOLD 24
#define GATE_CHANGED_FRACTION 0.0005
/* The gate of a text (OCR) judge, whose look costs milliseconds, not a
 * model call: a few glyphs redrawn in place count ("Saving..." overwritten
 * by "Saved" in xterm's 6x13 font moves 27 px of a 320x180 thumbnail, under
 * GATE_CHANGED_FRACTION's 29); a blinking caret (~5 px) still does not. */
#define GATE_TEXT_FRACTION (GATE_CHANGED_FRACTION / 3)

#endif
