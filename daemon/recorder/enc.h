/*
 * enc.h - an H.264 encoder writing a fragmented MP4, in process.
 *
 * One struct enc is one output file: RGB24 frames go in (converted to
 * I420 by libjpeg-turbo's YUV encoder, faster here than swscale), libx264
 * encodes them (constant QP, yuv420p, no B-frames, one reference, one
 * thread: see X264_LEAN in enc.c), libavformat muxes
 * a fragmented MP4 (empty moov, a fragment about every half second and at every
 * keyframe) and the bytes reach the file as they are written, so a crash
 * or kill -9 leaves a playable file that ends at the last fragment.
 *
 * Timestamps are milliseconds and may be irregular (variable frame rate):
 * a caller that skips frames while the screen is unchanged simply sends
 * nothing, and the previous frame lasts until the next one. A keyframe is
 * forced when keyint_ms has passed since the last one; enc_close repeats
 * the last picture at the end time, so the file lasts as long as the
 * recording did.
 *
 * Not thread-safe: one thread per struct enc. Does not: capture, decide
 * when to encode, or delete files.
 */
#ifndef DETM_ENC_H
#define DETM_ENC_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"
#include "derr.h"

struct enc;

struct enc_opts {
	int crf;                /* 0..48; 0 means 28; the encoder runs at a constant QP of crf + 3 */
	int keyint_ms;          /* 0 means 10000 */
	const char *preset;     /* NULL means "veryfast" */
};

/* Creates path (truncating it) for a w x h video (odd sizes lose their
 * last column/row). Fails with DERR_INTERNAL naming what libav said. */
int enc_open(const char *path, int w, int h, const struct enc_opts *o,
    struct enc **out, struct derr *e) DETM_NODISCARD;
/* Encodes one RGB24 picture (stride = w*3 of the size given to enc_open)
 * shown from pts_ms on; pts_ms must grow. NULL rgb repeats the previous
 * picture (nothing to convert). After a failed write to the file every
 * call fails with that first error. */
int enc_frame(struct enc *en, const unsigned char *rgb, int64_t pts_ms,
    struct derr *e) DETM_NODISCARD;
/* Frames sent so far, and the bytes the file holds for sure (a write
 * that failed, a full disk say, is not counted). */
int64_t enc_frames(const struct enc *en);
int64_t enc_bytes(const struct enc *en);
/* enc_bytes plus the encoded bytes of the fragment still open in the muxer:
 * the size the file reaches once that fragment is written. A size cap checks
 * this, so a capped file ends within about one frame of its cap. */
int64_t enc_bytes_due(const struct enc *en);
/* The last pts given (ms), or -1. */
int64_t enc_last_pts(const struct enc *en);
/* Repeats the last picture at end_ms (if later than it), flushes and
 * writes the index; frees en (also on failure). *frames: the frames the
 * file holds. After a failed write (the first error is the one reported:
 * ENOSPC is "no space left on device while writing PATH") the file is cut
 * back to its last whole fragment and *frames counts those. NULL is a
 * no-op. */
int enc_close(struct enc *en, int64_t end_ms, int64_t *frames, struct derr *e);
/* Frees without finishing the file (it stays playable up to its last
 * fragment). NULL is a no-op. */
void enc_abort(struct enc *en);

#endif
