/*
 * enc.c - RGB24 frames to a fragmented H.264 MP4 (enc.h).
 *
 * Pipeline per frame: tjEncodeYUVPlanes (RGB -> I420, straight into the
 * AVFrame's planes) -> avcodec_send_frame (libx264) -> packets ->
 * av_write_frame (mp4 muxer, fragmented) -> avio_flush, so what was muxed
 * is in the file, not in a buffer, when the call returns.
 *
 * States of a struct enc:
 *
 *   empty      after enc_open: header written, no frame yet (frames 0,
 *              last_pts -1, no picture)
 *   encoding   after the first enc_frame: frames > 0
 *   (freed)    enc_close (repeat the last picture, flush, trailer) or
 *              enc_abort; either frees it, also on failure
 *
 *   empty -> encoding -> encoding ...   enc_frame (a new or repeated picture)
 *   empty | encoding -> (freed)         enc_close, enc_abort
 *
 * Invariants, asserted by enc_check after enc_open and after every frame in
 * debug and ASan builds (not under NDEBUG): every libav object is there and
 * the header is written; the encoded size is even, at least 16 and within
 * the caller's; frames == 0 exactly when last_pts and last_key are -1;
 * once encoding, the AVFrame holds a picture (so a repeat costs no
 * conversion), pts strictly increased, and the last keyframe is at most
 * keyint_ms old (last_key <= last_pts < last_key + keyint_ms).
 */
#include "enc.h"

#include <assert.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <turbojpeg.h>

#include "core/dynlib.h"
#include "core/log.h"

#if defined(__SANITIZE_ADDRESS__)
#define ENC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ENC_SANITIZED 1
#endif
#endif

struct enc {
	AVFormatContext *fmt;
	AVCodecContext *ctx;
	AVStream *st;
	AVFrame *frame;
	AVPacket *pkt;
	tjhandle tj;
	int w, h;               /* encoded size (even) */
	int src_w;              /* the caller's row width in pixels */
	int keyint_ms;
	int64_t last_pts, last_key;
	int64_t frames;
	bool have_picture;
	bool header_done;
	char *path;
	/* What is in the file for sure: its size after the last write that
	 * reached it whole, and the frames those bytes hold (the fragmented
	 * muxer writes a fragment's frames when the next fragment starts). */
	int64_t good_bytes, good_frames;
	/* Packet bytes handed to the muxer since good_bytes last moved: what the
	 * file will hold once the open fragment is written (enc_bytes_due). */
	int64_t muxed_since;
	struct derr broken;     /* a write to the file failed: every call fails so */
};

/* libavformat (with libavcodec and libavutil, its dependencies) is loaded
 * at the first enc_open, not linked: mapped at start-up they cost an idle
 * detmd some 18 MB of RSS. */
/* Memory before the last bit of compression (issue 39: a recording held
 * ~45 MB, ~30 MB of it libx264's). A constant quantiser (qp, the caller's
 * crf value) instead of CRF: CRF makes x264 keep quarter-size "lowres"
 * copies of every frame for its rate control; one reference frame; no
 * sub-pixel motion search (subme=0: no half-pel planes, three more
 * frame-sized planes each); no lookahead, scenecut, weighted prediction,
 * adaptive quantisation or macroblock tree. Measured at 720p on a
 * terminal that scrolls twice a second, 8 recordings: 46 -> ~20 MB of
 * detmd RSS per recording (the libraries, ~4 MB a recording of the 20
 * there, are paid once; 32 recordings: 18 MB, ~14.6 MB of it anonymous
 * memory) and ~40 % less CPU. Files are larger at the same number: on a
 * screen of random text at 10 fps, 103 KB a frame at qp 28 against 48 KB
 * at crf 28, 76 KB at qp 31 (hence X264_QP_UP); sub-pixel search (subme=1,
 * 60 KB at qp 28) would cost ~6 MB more per recording. */
#define X264_QP_UP 3        /* qp = crf + 3: about the size CRF gave, without its lookahead */
#define X264_LEAN "subme=0:ref=1:scenecut=0:weightp=0:aq-mode=0:rc-lookahead=0:sync-lookahead=0:mbtree=0"

#define LAV_SONAME "libavformat.so.59"
#define LAV_FUNCS(X) \
	X(av_strerror) \
	X(avcodec_send_frame) \
	X(avcodec_receive_packet) \
	X(av_packet_rescale_ts) \
	X(av_write_frame) \
	X(av_packet_unref) \
	X(avio_flush) \
	X(avcodec_find_encoder_by_name) \
	X(avformat_alloc_output_context2) \
	X(avformat_new_stream) \
	X(avcodec_alloc_context3) \
	X(av_frame_alloc) \
	X(av_packet_alloc) \
	X(av_opt_set) \
	X(avcodec_open2) \
	X(avcodec_parameters_from_context) \
	X(avio_open) \
	X(av_dict_set) \
	X(avformat_write_header) \
	X(av_dict_free) \
	X(av_frame_get_buffer) \
	X(av_frame_make_writable) \
	X(avio_seek) \
	X(av_write_trailer) \
	X(avio_closep) \
	X(avformat_free_context) \
	X(avcodec_free_context) \
	X(av_frame_free) \
	X(av_packet_free) \
	X(av_log_set_level)

static struct {
#define LAV_FIELD(name) __typeof__(&name) name;
	LAV_FUNCS(LAV_FIELD)
#undef LAV_FIELD
} lav;
static pthread_once_t lav_once = PTHREAD_ONCE_INIT;
static char lav_err[256];

static void
lav_load(void)
{
	static const struct dynsym syms[] = {
#define LAV_SYM(name) { #name, offsetof(__typeof__(lav), name) },
		LAV_FUNCS(LAV_SYM)
#undef LAV_SYM
	};

	if (dynlib_load(LAV_SONAME, syms, ARRAY_LEN(syms), &lav, sizeof lav, "video encoding",
	    "libavformat59", lav_err, sizeof lav_err) == NULL) {
		log_warn("%s", lav_err);
		return;
	}
	lav.av_log_set_level(AV_LOG_ERROR);     /* not libx264's statistics on stderr */
}

/* en's fields agree with its state (see the opening comment). */
static void
enc_check(const struct enc *en)
{
#ifndef NDEBUG
	assert(en->fmt != NULL && en->fmt->pb != NULL && en->ctx != NULL && en->st != NULL);
	assert(en->frame != NULL && en->frame->data[0] != NULL && en->pkt != NULL && en->tj != NULL);
	assert(en->header_done && en->keyint_ms > 0);
	assert(en->w >= 16 && en->h >= 16 && en->w % 2 == 0 && en->h % 2 == 0 && en->w <= en->src_w);
	if (en->frames == 0) {
		assert(en->last_pts == -1 && en->last_key == -1);
	} else {
		assert(en->frames > 0 && en->have_picture);
		assert(en->last_key >= 0 && en->last_key <= en->last_pts);
		assert(en->last_pts - en->last_key < en->keyint_ms);
	}
#else
	(void)en;
#endif
}

static int
av_fail(struct derr *e, const char *what, int err)
{
	char msg[AV_ERROR_MAX_STRING_SIZE] = "";

	lav.av_strerror(err, msg, sizeof msg);
	return derr_set(e, DERR_INTERNAL, NULL, "video encoder: %s: %s", what, msg);
}

/* A write to the file failed (err: libav's code, AVERROR(ENOSPC) for a
 * full disk): en is broken from now on, e says so and names the file. */
static int
io_fail(struct enc *en, int err, struct derr *e)
{
	char msg[AV_ERROR_MAX_STRING_SIZE] = "";

	if (en->broken.code == DERR_OK) {
		if (err == AVERROR(ENOSPC)) {
			derr_set(&en->broken, DERR_UNAVAILABLE, NULL,
			    "no space left on device while writing %s", en->path);
		} else {
			lav.av_strerror(err, msg, sizeof msg);
			derr_set(&en->broken, DERR_INTERNAL, NULL, "video encoder: writing %s: %s",
			    en->path, msg);
		}
	}
	*e = en->broken;
	return -1;
}

/* After a write: the file took every byte (0, good_bytes and good_frames
 * advanced to `frames`), or not (-1, en broken). */
static int
io_check(struct enc *en, int64_t frames, struct derr *e)
{
	AVIOContext *pb = en->fmt->pb;

	lav.avio_flush(pb);
	if (pb->error < 0)
		return io_fail(en, pb->error, e);
	if (lav.avio_seek(pb, 0, SEEK_CUR) > en->good_bytes) {
		en->good_bytes = lav.avio_seek(pb, 0, SEEK_CUR);
		en->good_frames = frames;
		en->muxed_since = 0;
	}
	return 0;
}

/* Sends frame (NULL: flush) and writes every packet that comes out. A
 * packet written ends the fragment of the frames before it, so what
 * reaches the file holds en->frames frames (the current one is not
 * counted yet). */
static int
drain(struct enc *en, AVFrame *frame, struct derr *e)
{
	int rc = lav.avcodec_send_frame(en->ctx, frame), psize;

	if (rc < 0 && !(frame == NULL && rc == AVERROR_EOF))
		return av_fail(e, "send frame", rc);
	for (;;) {
		rc = lav.avcodec_receive_packet(en->ctx, en->pkt);
		if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
			break;
		if (rc < 0)
			return av_fail(e, "receive packet", rc);
		lav.av_packet_rescale_ts(en->pkt, en->ctx->time_base, en->st->time_base);
		en->pkt->stream_index = en->st->index;
		psize = en->pkt->size;
		rc = lav.av_write_frame(en->fmt, en->pkt);
		lav.av_packet_unref(en->pkt);
		if (en->fmt->pb->error < 0)     /* the muxer's own code may not say it */
			return io_fail(en, en->fmt->pb->error, e);
		if (rc < 0)
			return av_fail(e, "write", rc);
		if (io_check(en, en->frames, e) != 0)
			return -1;
		en->muxed_since += psize;       /* after io_check: this packet opens the next fragment */
	}
	return io_check(en, en->frames, e);
}

int
enc_open(const char *path, int w, int h, const struct enc_opts *o,
    struct enc **out, struct derr *e)
{
	static const struct enc_opts defaults = { 0 };
	const AVCodec *codec;
	AVDictionary *mux = NULL;
	struct enc *en;
	char params[160];
	int rc;

	*out = NULL;
	if (o == NULL)
		o = &defaults;
	pthread_once(&lav_once, lav_load);
	if (lav.avformat_alloc_output_context2 == NULL)
		return derr_set(e, DERR_UNAVAILABLE, NULL, "%s", lav_err);
	if ((codec = lav.avcodec_find_encoder_by_name("libx264")) == NULL)
		return derr_set(e, DERR_UNAVAILABLE, NULL,
		    "video encoder: libavcodec has no libx264 (install libavcodec59)");
	if (w < 16 || h < 16)
		return derr_set(e, DERR_INVALID, NULL, "video encoder: %dx%d is too small", w, h);
	en = xcalloc(1, sizeof *en);
	en->path = xstrdup(path);
	en->src_w = w;
	en->w = w & ~1;
	en->h = h & ~1;
	en->keyint_ms = o->keyint_ms > 0 ? o->keyint_ms : 10000;
	en->last_pts = en->last_key = -1;
	rc = lav.avformat_alloc_output_context2(&en->fmt, NULL, "mp4", path);
	if (rc < 0 || en->fmt == NULL) {
		av_fail(e, "mp4 muxer", rc);
		goto fail;
	}
	en->st = lav.avformat_new_stream(en->fmt, NULL);
	en->ctx = lav.avcodec_alloc_context3(codec);
	en->frame = lav.av_frame_alloc();
	en->pkt = lav.av_packet_alloc();
	en->tj = tjInitCompress();
	if (en->st == NULL || en->ctx == NULL || en->frame == NULL || en->pkt == NULL || en->tj == NULL) {
		derr_set(e, DERR_INTERNAL, NULL, "video encoder: out of memory");
		goto fail;
	}
	en->ctx->width = en->w;
	en->ctx->height = en->h;
	en->ctx->pix_fmt = AV_PIX_FMT_YUV420P;
	en->ctx->time_base = (AVRational){ 1, 1000 };
	en->ctx->max_b_frames = 0;
	en->ctx->thread_count = 1;
	en->ctx->gop_size = 600;        /* keyframes are forced by time instead */
	if (en->fmt->oformat->flags & AVFMT_GLOBALHEADER)
		en->ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	snprintf(params, sizeof params, "qp=%d:%s", (o->crf > 0 && o->crf <= 48 ? o->crf : 28) + X264_QP_UP, X264_LEAN);
	lav.av_opt_set(en->ctx->priv_data, "preset", o->preset ? o->preset : "veryfast", 0);
	lav.av_opt_set(en->ctx->priv_data, "tune", "zerolatency", 0);
	lav.av_opt_set(en->ctx->priv_data, "x264-params", params, 0);
	lav.av_opt_set(en->ctx->priv_data, "forced-idr", "1", 0);
	if ((rc = lav.avcodec_open2(en->ctx, codec, NULL)) < 0) {
		av_fail(e, "libx264", rc);
		goto fail;
	}
	if ((rc = lav.avcodec_parameters_from_context(en->st->codecpar, en->ctx)) < 0) {
		av_fail(e, "stream parameters", rc);
		goto fail;
	}
	en->st->time_base = en->ctx->time_base;
	if ((rc = lav.avio_open(&en->fmt->pb, path, AVIO_FLAG_WRITE)) < 0) {
		av_fail(e, path, rc);
		goto fail;
	}
	lav.av_dict_set(&mux, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0);
	lav.av_dict_set(&mux, "frag_duration", "500000", 0);   /* 0.5 s: a size cap overshoots by at most this much video */
	rc = lav.avformat_write_header(en->fmt, &mux);
	lav.av_dict_free(&mux);
	if (rc < 0) {
		av_fail(e, "mp4 header", rc);
		goto fail;
	}
	en->header_done = true;
	if (io_check(en, 0, e) != 0)
		goto fail;
	en->frame->format = AV_PIX_FMT_YUV420P;
	en->frame->width = en->w;
	en->frame->height = en->h;
	if ((rc = lav.av_frame_get_buffer(en->frame, 32)) < 0) {
		av_fail(e, "frame buffer", rc);
		goto fail;
	}
	enc_check(en);
	*out = en;
	return 0;
fail:
	enc_abort(en);
	return -1;
}

int
enc_frame(struct enc *en, const unsigned char *rgb, int64_t pts_ms, struct derr *e)
{
	int strides[3];
	unsigned char *planes[3];
	bool key;

	if (en->broken.code != DERR_OK) {
		*e = en->broken;
		return -1;
	}
	if (pts_ms <= en->last_pts)
		return derr_set(e, DERR_INTERNAL, NULL, "video encoder: time went back (%lld <= %lld)",
		    (long long)pts_ms, (long long)en->last_pts);
	if (rgb == NULL && !en->have_picture)
		return derr_set(e, DERR_INTERNAL, NULL, "video encoder: nothing to repeat");
	if (lav.av_frame_make_writable(en->frame) < 0)
		return derr_set(e, DERR_INTERNAL, NULL, "video encoder: frame not writable");
	if (rgb != NULL) {
		for (int i = 0; i < 3; i++) {
			planes[i] = en->frame->data[i];
			strides[i] = en->frame->linesize[i];
		}
		if (tjEncodeYUVPlanes(en->tj, rgb, en->w, en->src_w * 3, en->h, TJPF_RGB,
		    planes, strides, TJSAMP_420, 0) != 0)
			return derr_set(e, DERR_INTERNAL, NULL, "video encoder: RGB to I420: %s",
			    tjGetErrorStr2(en->tj));
		en->have_picture = true;
	}
	key = en->last_key < 0 || pts_ms - en->last_key >= en->keyint_ms;
	en->frame->pts = pts_ms;
	en->frame->pict_type = key ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
	if (drain(en, en->frame, e) != 0)
		return -1;
	if (key)
		en->last_key = pts_ms;  /* only once encoded: a failed frame changes no state */
	en->last_pts = pts_ms;
	en->frames++;
	enc_check(en);
	return 0;
}

int64_t
enc_frames(const struct enc *en)
{
	return en->frames;
}

int64_t
enc_bytes(const struct enc *en)
{
	return en->good_bytes;
}

int64_t
enc_bytes_due(const struct enc *en)
{
	return en->good_bytes + en->muxed_since;
}

int64_t
enc_last_pts(const struct enc *en)
{
	return en->last_pts;
}

/* Frees en; a broken file is cut back to what was written whole (a
 * fragment the disk took only part of is not left dangling). */
static int64_t
enc_end(struct enc *en)
{
	int64_t frames = en->good_frames;
	char *path = en->path;
	int64_t good = en->good_bytes;
	bool cut = en->broken.code != DERR_OK;

	en->path = NULL;
	enc_abort(en);
	if (cut && truncate(path, good) != 0)
		log_warn("cannot cut %s back to %lld bytes: %s", path, (long long)good,
		    strerror(errno));
	free(path);
	return frames;
}

int
enc_close(struct enc *en, int64_t end_ms, int64_t *frames, struct derr *e)
{
	int rc = 0, arc;

	*frames = 0;
	if (en == NULL)
		return 0;
	if (en->have_picture && end_ms > en->last_pts && enc_frame(en, NULL, end_ms, e) != 0)
		rc = -1;
	if (rc == 0 && drain(en, NULL, e) != 0)
		rc = -1;
	if (rc == 0 && (arc = lav.av_write_trailer(en->fmt)) < 0)
		rc = en->fmt->pb->error < 0 ? io_fail(en, en->fmt->pb->error, e) : av_fail(e, "mp4 trailer", arc);
	if (rc == 0 && io_check(en, en->frames, e) != 0)
		rc = -1;
	if (rc != 0 && en->broken.code != DERR_OK)
		*e = en->broken;        /* the first write error, not what followed */
	*frames = enc_end(en);
	return rc;
}

void
enc_abort(struct enc *en)
{
	if (en == NULL)
		return;
	if (en->fmt != NULL && en->fmt->pb != NULL)
		lav.avio_closep(&en->fmt->pb);
	lav.avformat_free_context(en->fmt);
	lav.avcodec_free_context(&en->ctx);
	lav.av_frame_free(&en->frame);
	lav.av_packet_free(&en->pkt);
	if (en->tj != NULL)
		tjDestroy(en->tj);
	free(en->path);
	free(en);
#if defined(__GLIBC__) && !defined(ENC_SANITIZED)
	/* x264 and the muxer free tens of MB per encoder into the recording
	 * thread's malloc arena, which glibc keeps: without this, RSS stayed at
	 * 150-330 MB after parallel recordings had ended (issue 16). Not under
	 * AddressSanitizer: its allocator replaces glibc's, whose arenas may
	 * never have been set up (malloc_trim then read address 0x8). */
	malloc_trim(0);
#endif
}
