/*
 * ocr.c - OCR for the wait engine: libtesseract (C API) in process and the
 * image preparation in front of it. The pure helpers around it have their
 * own files: ocr_phrase.c (condition parsing, tolerant matching),
 * ocr_boxes.c (changed-region boxes) and ocr_line.c (a changed box widened
 * to its text line).
 *
 * Owns: per struct ocr one TessBaseAPI, initialised once with the LSTM
 * engine and the model directory we checked ourselves (so a missing model is
 * a clean DERR_UNAVAILABLE, never tesseract's own stderr message). Image
 * buffers are per call (allocated and freed in ocr_text; their cost is noise
 * next to recognition).
 *
 * Invariants:
 *   - Every size is checked before it is multiplied or allocated: frames are
 *     at most OCR_MAX_FRAME square, the scaled rectangle at most
 *     OCR_MAX_PIXELS, thumbnails at most OCR_MAX_THUMB, phrases
 *     OCR_MAX_PHRASE bytes.
 *   - The image given to tesseract is 8-bit grey, dark text on a light
 *     background (inverted when the background is dark), with a border of
 *     background so glyphs touching the crop edge are still read.
 *   - tesseract's chatter goes to /dev/null: `debug_file` is a process-wide
 *     tesseract parameter, set under a mutex by ocr_new.
 *   - OpenMP is serialised: Debian's libtesseract is built with OpenMP, and
 *     its parallel LSTM loops (num_threads(4)) make OCR 5-7x slower on this
 *     2-vCPU machine (bench/ocr.sh: a 152x32 crop 65 ms instead of 9 ms,
 *     1080p 12.7 s instead of 2.9 s). OMP_THREAD_LIMIT is read only when
 *     libgomp loads, so ocr_new instead sets max-active-levels to 0 through
 *     libgomp's omp_set_max_active_levels (found with dlsym: no link-time
 *     OpenMP dependency, nothing done if tesseract has no OpenMP). That is
 *     process-wide; detmd has no other OpenMP user.
 *   - libtesseract is loaded with dlopen on the first ocr_new, not linked:
 *     it drags in libstdc++, leptonica, ICU and OpenMP (~4 MB of resident
 *     pages at start), and a detmd that never OCRs should not pay for it.
 *     The prototypes still come from <tesseract/capi.h>; a missing library
 *     or symbol is a clean DERR_UNAVAILABLE.
 *
 * Threading: a struct ocr is not thread-safe (tesseract's API object is
 * not); one per thread. ocr_grey_thumb (here) and the helpers of
 * ocr_phrase.c, ocr_boxes.c and ocr_line.c are pure and reentrant.
 *
 * Does not: capture (xcap does), decide when to OCR (the wait engine does),
 * return word positions, or run tesseract's legacy engine.
 */
#include "ocr.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <tesseract/capi.h>

#include "core/dynlib.h"

#define OCR_BORDER    10        /* px of background around the image */
#define OCR_LANG_MAX  64
#define OCR_SLIVER    4         /* rows: a descender band, never a text line */

struct ocr {
	TessBaseAPI *api;
	char lang[OCR_LANG_MAX];
};

/* ---- engine ------------------------------------------------------------ */

static pthread_mutex_t ocr_init_lock = PTHREAD_MUTEX_INITIALIZER;

/* The tesseract C API, resolved from the library at first use. */
#define TESS_SONAME "libtesseract.so.5"
static struct {
	__typeof__(&TessBaseAPICreate) create;
	__typeof__(&TessBaseAPIDelete) del;
	__typeof__(&TessBaseAPIEnd) end;
	__typeof__(&TessBaseAPIInit2) init2;
	__typeof__(&TessBaseAPISetVariable) set_variable;
	__typeof__(&TessBaseAPISetPageSegMode) set_psm;
	__typeof__(&TessBaseAPISetImage) set_image;
	__typeof__(&TessBaseAPISetSourceResolution) set_resolution;
	__typeof__(&TessBaseAPIRecognize) recognize;
	__typeof__(&TessBaseAPIGetUTF8Text) utf8_text;
	__typeof__(&TessBaseAPIMeanTextConf) mean_conf;
	__typeof__(&TessDeleteText) delete_text;
	__typeof__(&TessBaseAPIClear) clear;
} tess;
static void *tess_lib;
static pthread_once_t tess_once = PTHREAD_ONCE_INIT;
static char tess_err[256];

static void
tess_load(void)
{
	static const struct dynsym syms[] = {
#define TSYM(field, name) { #name, offsetof(__typeof__(tess), field) }
		TSYM(create, TessBaseAPICreate), TSYM(del, TessBaseAPIDelete),
		TSYM(end, TessBaseAPIEnd), TSYM(init2, TessBaseAPIInit2),
		TSYM(set_variable, TessBaseAPISetVariable), TSYM(set_psm, TessBaseAPISetPageSegMode),
		TSYM(set_image, TessBaseAPISetImage),
		TSYM(set_resolution, TessBaseAPISetSourceResolution),
		TSYM(recognize, TessBaseAPIRecognize), TSYM(utf8_text, TessBaseAPIGetUTF8Text),
		TSYM(mean_conf, TessBaseAPIMeanTextConf), TSYM(delete_text, TessDeleteText),
		TSYM(clear, TessBaseAPIClear),
#undef TSYM
	};

	tess_lib = dynlib_load(TESS_SONAME, syms, ARRAY_LEN(syms), &tess, sizeof tess, "OCR",
	    "libtesseract5", tess_err, sizeof tess_err);
}

/* Every OpenMP parallel region runs on one thread (see the top comment).
 * libgomp is a dependency of libtesseract, so the handle finds it. */
static void
omp_serialise(void)
{
	void (*set_levels)(int);
	void *sym = dlsym(tess_lib, "omp_set_max_active_levels");

	if (sym == NULL)
		return;
	memcpy(&set_levels, &sym, sizeof set_levels);   /* object -> function pointer */
	set_levels(0);
}

/* "eng", "chi_sim", "eng+deu": components of [A-Za-z0-9_-] joined by '+'. */
static bool
lang_valid(const char *lang)
{
	size_t n = strlen(lang), comp = 0;

	if (n == 0 || n >= OCR_LANG_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = lang[i];

		if (c == '+') {
			if (comp == 0)
				return false;
			comp = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-') {
			comp++;
		} else {
			return false;
		}
	}
	return comp > 0;
}

static bool
model_in(const char *dir, const char *one, size_t onelen)
{
	char path[4096];
	int n = snprintf(path, sizeof path, "%s/%.*s.traineddata", dir, (int)onelen, one);

	return n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

/* The first directory that holds every component of lang, or NULL with
 * *missing (*missing_len bytes) naming the first component found in none. */
static const char *
model_dir(const char *lang, const char **missing, size_t *missing_len)
{
	static const char *const fixed[] = {
		"/usr/share/tesseract-ocr/5/tessdata",
		"/usr/share/tesseract-ocr/4.00/tessdata",
		"/usr/share/tessdata",
	};
	const char *env = getenv("TESSDATA_PREFIX");
	const char *dirs[ARRAY_LEN(fixed) + 1];
	size_t nd = 0;

	if (env != NULL && env[0] != '\0')
		dirs[nd++] = env;
	for (size_t i = 0; i < ARRAY_LEN(fixed); i++)
		dirs[nd++] = fixed[i];
	for (size_t d = 0; d < nd; d++) {
		const char *p = lang;

		while (*p != '\0' && model_in(dirs[d], p, strcspn(p, "+"))) {
			p += strcspn(p, "+");
			if (*p == '+')
				p++;
		}
		if (*p == '\0')
			return dirs[d];
	}
	*missing = lang;
	*missing_len = strcspn(lang, "+");
	for (const char *p = lang; *p != '\0';) {
		size_t len = strcspn(p, "+");
		bool somewhere = false;

		for (size_t d = 0; d < nd && !somewhere; d++)
			somewhere = model_in(dirs[d], p, len);
		if (!somewhere) {
			*missing = p;
			*missing_len = len;
			break;
		}
		p += len;
		if (*p == '+')
			p++;
	}
	return NULL;
}

struct ocr *
ocr_new(const char *lang, struct derr *e)
{
	struct ocr *o = NULL;
	const char *dir, *missing = NULL;
	size_t missing_len = 0;
	char pkg[OCR_LANG_MAX];
	int rc = -1;

	if (lang == NULL)
		lang = "eng";
	if (!lang_valid(lang)) {
		derr_set(e, DERR_INVALID, "lang",
		    "OCR language must be like \"eng\" or \"eng+deu\"");
		return NULL;
	}
	dir = model_dir(lang, &missing, &missing_len);
	if (dir == NULL) {
		size_t i;

		/* Debian names the package after the model, '_' -> '-'. */
		for (i = 0; i < missing_len && i < sizeof pkg - 1; i++) {
			char c = missing[i];

			pkg[i] = c == '_' ? '-' : (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
		}
		pkg[i] = '\0';
		derr_set(e, DERR_UNAVAILABLE, "lang",
		    "OCR model '%s' is not installed (Debian package tesseract-ocr-%s)",
		    pkg, pkg);
		return NULL;
	}

	pthread_once(&tess_once, tess_load);
	if (tess_lib == NULL) {
		derr_set(e, DERR_UNAVAILABLE, NULL, "%s", tess_err);
		return NULL;
	}
	o = xcalloc(1, sizeof *o);
	snprintf(o->lang, sizeof o->lang, "%s", lang);
	pthread_mutex_lock(&ocr_init_lock);
	omp_serialise();
	o->api = tess.create();
	if (o->api == NULL) {
		derr_set(e, DERR_INTERNAL, NULL, "OCR engine could not be created");
		goto unlock;
	}
	/* Process-wide; before Init so model loading is quiet too. */
	tess.set_variable(o->api, "debug_file", "/dev/null");
	if (tess.init2(o->api, dir, lang, OEM_LSTM_ONLY) != 0) {
		derr_set(e, DERR_UNAVAILABLE, "lang",
		    "OCR model '%s' could not be loaded (reinstall tesseract-ocr-%s)",
		    lang, lang);
		goto unlock;
	}
	/* UI text is scattered words and short lines, not a page of prose:
	 * sparse text finds them all (bench/ocr.sh compares AUTO). */
	tess.set_psm(o->api, PSM_SPARSE_TEXT);
	/* We hand over dark-on-light images; tesseract's per-line inversion
	 * retry only costs time then. */
	tess.set_variable(o->api, "tessedit_do_invert", "0");
	rc = 0;
unlock:
	pthread_mutex_unlock(&ocr_init_lock);
	if (rc != 0) {
		ocr_free(o);
		return NULL;
	}
	return o;
}

void
ocr_free(struct ocr *o)
{
	if (o == NULL)
		return;
	if (o->api != NULL) {
		tess.end(o->api);
		tess.del(o->api);
	}
	free(o);
}

int
ocr_probe(const char *lang, struct derr *e)
{
	const char *missing = NULL;
	size_t missing_len = 0;

	if (!lang_valid(lang))
		return derr_set(e, DERR_INVALID, "lang", "OCR language must be like \"eng\" or \"eng+deu\"");
	if (model_dir(lang, &missing, &missing_len) == NULL)
		return derr_set(e, DERR_UNAVAILABLE, "lang", "OCR model '%.*s' is not installed "
		    "(Debian package tesseract-ocr-%.*s)", (int)missing_len, missing, (int)missing_len, missing);
	return 0;
}

/* ---- image preparation -------------------------------------------------- */

/* Catmull-Rom taps for destination index X of an s-times upscale of a line
 * of n samples: 4 clamped source indices and weights (sum 1). */
struct ocr_tap {
	int i[4];
	float w[4];
};

static void
taps_make(struct ocr_tap *t, int dst_n, int src_n, int s)
{
	for (int X = 0; X < dst_n; X++) {
		float u = ((float)X + 0.5f) / (float)s - 0.5f;
		int i0 = u < 0 ? -1 : (int)u;
		float f = u - (float)i0, f2 = f * f, f3 = f2 * f;

		t[X].w[0] = (-f3 + 2 * f2 - f) * 0.5f;
		t[X].w[1] = (3 * f3 - 5 * f2 + 2) * 0.5f;
		t[X].w[2] = (-3 * f3 + 4 * f2 + f) * 0.5f;
		t[X].w[3] = (f3 - f2) * 0.5f;
		for (int k = 0; k < 4; k++) {
			int j = i0 - 1 + k;

			t[X].i[k] = j < 0 ? 0 : j >= src_n ? src_n - 1 : j;
		}
	}
}

static unsigned char
clamp_u8(float v)
{
	return v <= 0 ? 0 : v >= 255 ? 255 : (unsigned char)(v + 0.5f);
}

/* Upscales grey src (w x h) s times into dst (stride dstride) at (ox, oy). */
static void
upscale(const unsigned char *src, int w, int h, int s, unsigned char *dst,
    size_t dstride, int ox, int oy)
{
	int W = w * s, H = h * s;
	struct ocr_tap *tx = xmalloc(sizeof *tx * (size_t)W);
	struct ocr_tap *ty = xmalloc(sizeof *ty * (size_t)H);
	float *rows = xmalloc(sizeof *rows * (size_t)W * (size_t)h);

	taps_make(tx, W, w, s);
	taps_make(ty, H, h, s);
	for (int y = 0; y < h; y++) {
		const unsigned char *sr = src + (size_t)y * (size_t)w;
		float *r = rows + (size_t)y * (size_t)W;

		for (int X = 0; X < W; X++) {
			const struct ocr_tap *t = &tx[X];

			r[X] = t->w[0] * sr[t->i[0]] + t->w[1] * sr[t->i[1]] +
			    t->w[2] * sr[t->i[2]] + t->w[3] * sr[t->i[3]];
		}
	}
	for (int Y = 0; Y < H; Y++) {
		const struct ocr_tap *t = &ty[Y];
		const float *r0 = rows + (size_t)t->i[0] * (size_t)W;
		const float *r1 = rows + (size_t)t->i[1] * (size_t)W;
		const float *r2 = rows + (size_t)t->i[2] * (size_t)W;
		const float *r3 = rows + (size_t)t->i[3] * (size_t)W;
		unsigned char *d = dst + (size_t)(oy + Y) * dstride + (size_t)ox;

		for (int X = 0; X < W; X++)
			d[X] = clamp_u8(t->w[0] * r0[X] + t->w[1] * r1[X] +
			    t->w[2] * r2[X] + t->w[3] * r3[X]);
	}
	free(rows);
	free(ty);
	free(tx);
}

static unsigned char
luma(const unsigned char *p)
{
	return (unsigned char)((77 * p[0] + 150 * p[1] + 29 * p[2] + 128) >> 8);
}

/* Grey copy of the rectangle; inverted when the most common tone (the
 * background) is dark. Returns the background grey after inversion. */
static unsigned char
grey_crop(const unsigned char *rgb, int width, int x, int y, int w, int h,
    unsigned char *out)
{
	size_t hist[32] = { 0 };
	size_t n = (size_t)w * (size_t)h, best = 0;
	int mode = 0;

	for (int r = 0; r < h; r++) {
		const unsigned char *p = rgb + ((size_t)(y + r) * (size_t)width + (size_t)x) * 3;
		unsigned char *q = out + (size_t)r * (size_t)w;

		for (int c = 0; c < w; c++, p += 3) {
			q[c] = luma(p);
			hist[q[c] >> 3]++;
		}
	}
	for (int i = 0; i < 32; i++)
		if (hist[i] > best) {
			best = hist[i];
			mode = i;
		}
	if (mode >= 16)
		return (unsigned char)(mode * 8 + 4);
	for (size_t i = 0; i < n; i++)
		out[i] = (unsigned char)(255 - out[i]);
	return (unsigned char)(255 - (mode * 8 + 4));
}

/* No ink in the row: every pixel near the background, ignoring columns
 * that are flat over the whole crop (the desktop or a window frame beside
 * the text is not ink). */
static bool
row_blank(const unsigned char *r, int w, unsigned char bg, const bool *flat)
{
	for (int i = 0; i < w; i++)
		if (!flat[i] && abs((int)r[i] - (int)bg) > 48)
			return false;
	return true;
}

/* What is around the text in a crop cut from a changed region, painted
 * with the background so tesseract does not read it into the text:
 *   - slivers: the descenders of the line above (or the tops of the line
 *     below), a band of at most OCR_SLIVER rows of ink at the top (bottom)
 *     edge separated from the rest by a blank row ("Tests" -> "li"); a
 *     whole line of text is taller than that even in a 6x13 font;
 *   - flat columns at the left and right edge (the desktop or a window
 *     frame next to the text: "Tests" -> "i"). Only runs touching an edge,
 *     so a glyph's stem inside the crop is never touched. */
static void
erase_edges(unsigned char *g, int w, int h, unsigned char bg)
{
	int lim = h / 4 < OCR_SLIVER ? h / 4 : OCR_SLIVER;
	bool *flat;

	if (h < 12)
		return;
	flat = xmalloc(sizeof *flat * (size_t)w);
	for (int c = 0; c < w; c++) {
		int lo = 255, hi = 0;

		for (int r = 0; r < h; r++) {
			int v = g[(size_t)r * (size_t)w + (size_t)c];

			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		flat[c] = hi - lo <= 16;
	}
	for (int side = 0; side < 2; side++)
		for (int k = 0; k < w; k++) {
			int c = side == 0 ? k : w - 1 - k;

			if (!flat[c])
				break;
			for (int r = 0; r < h; r++)
				g[(size_t)r * (size_t)w + (size_t)c] = bg;
		}
	for (int edge = 0; edge < 2; edge++) {
		int ink = 0;

		for (int k = 0; k <= lim; k++) {
			int r = edge == 0 ? k : h - 1 - k;

			if (!row_blank(g + (size_t)r * (size_t)w, w, bg, flat)) {
				ink++;
				continue;
			}
			for (int j = 0; ink > 0 && j < k; j++)
				memset(g + (size_t)(edge == 0 ? j : h - 1 - j) * (size_t)w, bg, (size_t)w);
			break;
		}
	}
	free(flat);
}

/* Trims trailing whitespace (tesseract ends with "\n" or "\n\f"). */
static void
rtrim(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\f' ||
	    s[n - 1] == '\r' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

int
ocr_text(struct ocr *o, const unsigned char *rgb, int width, int height,
    int x, int y, int w, int h, int scale, char **text, int *confidence,
    struct derr *e)
{
	unsigned char *grey = NULL, *img = NULL, bg;
	char *out;
	int64_t area;
	int W, H, conf;
	size_t stride;
	int rc = -1;

	if (text != NULL)
		*text = NULL;
	if (confidence != NULL)
		*confidence = 0;
	if (o == NULL || text == NULL)
		return derr_set(e, DERR_INVALID, NULL, "ocr_text: no engine or no result pointer");
	if (rgb == NULL || width <= 0 || height <= 0 || width > OCR_MAX_FRAME ||
	    height > OCR_MAX_FRAME)
		return derr_set(e, DERR_INVALID, "frame", "frame must be 1..%d px square",
		    OCR_MAX_FRAME);
	if (scale < 1 || scale > OCR_MAX_SCALE)
		return derr_set(e, DERR_INVALID, "scale", "scale must be 1..%d", OCR_MAX_SCALE);
	if (w < 0 || h < 0 || x >= width || y >= height)
		return derr_set(e, DERR_INVALID, "x", "rectangle lies outside the %dx%d frame",
		    width, height);
	/* w, h 0: to the frame's edge. Then clip (in 64 bits: x + w may overflow). */
	{
		int64_t x0 = x, y0 = y;
		int64_t x1 = w == 0 ? width : x0 + w, y1 = h == 0 ? height : y0 + h;

		if (x0 < 0)
			x0 = 0;
		if (y0 < 0)
			y0 = 0;
		if (x1 > width)
			x1 = width;
		if (y1 > height)
			y1 = height;
		if (x1 <= x0 || y1 <= y0)
			return derr_set(e, DERR_INVALID, "x",
			    "rectangle lies outside the %dx%d frame", width, height);
		x = (int)x0;
		y = (int)y0;
		w = (int)(x1 - x0);
		h = (int)(y1 - y0);
	}
	area = (int64_t)w * scale * (int64_t)h * scale;
	if (area > OCR_MAX_PIXELS)
		return derr_set(e, DERR_INVALID, "w",
		    "%dx%d at scale %d is %lld px; OCR takes at most %d (OCR changed regions, "
		    "not the whole screen)", w, h, scale, (long long)area, OCR_MAX_PIXELS);

	W = w * scale + 2 * OCR_BORDER;
	H = h * scale + 2 * OCR_BORDER;
	stride = (size_t)W;
	grey = xmalloc((size_t)w * (size_t)h);
	img = xmalloc(stride * (size_t)H);
	bg = grey_crop(rgb, width, x, y, w, h, grey);
	erase_edges(grey, w, h, bg);
	memset(img, bg, stride * (size_t)H);
	if (scale == 1) {
		for (int r = 0; r < h; r++)
			memcpy(img + (size_t)(OCR_BORDER + r) * stride + OCR_BORDER,
			    grey + (size_t)r * (size_t)w, (size_t)w);
	} else {
		upscale(grey, w, h, scale, img, stride, OCR_BORDER, OCR_BORDER);
	}

	tess.set_image(o->api, img, W, H, 1, W);
	/* Screens are ~96 dpi; the upscale makes glyphs look like print. */
	tess.set_resolution(o->api, 96 * scale);
	if (tess.recognize(o->api, NULL) != 0) {
		derr_set(e, DERR_INTERNAL, NULL, "OCR failed on a %dx%d image", W, H);
		goto out;
	}
	out = tess.utf8_text(o->api);
	conf = tess.mean_conf(o->api);
	*text = xstrdup(out != NULL ? out : "");
	tess.delete_text(out);
	rtrim(*text);
	if (confidence != NULL)
		*confidence = conf < 0 ? 0 : conf > 100 ? 100 : conf;
	rc = 0;
out:
	tess.clear(o->api);
	free(img);
	free(grey);
	return rc;
}

/* ---- thumbnails ----------------------------------------------------------- */

int
ocr_grey_thumb(const unsigned char *rgb, int width, int height,
    unsigned char *out, int tw, int th)
{
	if (rgb == NULL || out == NULL || width < 1 || height < 1 || width > OCR_MAX_FRAME ||
	    height > OCR_MAX_FRAME || tw < 1 || th < 1 || tw > width || th > height)
		return -1;
	for (int ty = 0; ty < th; ty++) {
		int y0 = (int)((int64_t)ty * height / th), y1 = (int)((int64_t)(ty + 1) * height / th);

		for (int tx = 0; tx < tw; tx++) {
			int x0 = (int)((int64_t)tx * width / tw), x1 = (int)((int64_t)(tx + 1) * width / tw);
			uint64_t sum = 0, cnt = (uint64_t)(x1 - x0) * (uint64_t)(y1 - y0);

			for (int y = y0; y < y1; y++) {
				const unsigned char *p = rgb + ((size_t)y * (size_t)width + (size_t)x0) * 3;

				for (int x = x0; x < x1; x++, p += 3)
					sum += luma(p);
			}
			out[(size_t)ty * (size_t)tw + (size_t)tx] = (unsigned char)((sum + cnt / 2) / cnt);
		}
	}
	return 0;
}
