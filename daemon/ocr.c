/*
 * ocr.c - OCR for the wait engine: libtesseract (C API) in process, the
 * image preparation in front of it, and the pure helpers around it
 * (condition parsing, tolerant matching, changed-region boxes).
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
 * not); one per thread. ocr_condition, ocr_match, ocr_changed_boxes and
 * ocr_grey_thumb are pure and reentrant.
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

#include "dynlib.h"
#include "util.h"

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

/* ---- tolerant matching -------------------------------------------------- */

/* Decodes one UTF-8 sequence at s (n bytes left); returns its length (1 for
 * a malformed byte) and the code point in *cp (0xFFFD if malformed). */
static size_t
utf8_one(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xE0) == 0xC0) {
		len = 2;
		c = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3;
		c = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		*cp = 0xFFFD;
		return 1;
	}
	if (len > n) {
		*cp = 0xFFFD;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*cp = 0xFFFD;
			return 1;
		}
		c = (c << 6) | (s[i] & 0x3F);
	}
	*cp = c;
	return len;
}

/* Non-ASCII characters that separate words: quotes, dashes, ellipsis,
 * bullets, no-break and other spaces, arrows. */
static bool
cp_is_break(uint32_t c)
{
	return c == 0xA0 || c == 0xAB || c == 0xBB || c == 0xB7 || c == 0xFFFD ||
	    (c >= 0x2000 && c <= 0x206F) || (c >= 0x2190 && c <= 0x21FF) ||
	    (c >= 0x25A0 && c <= 0x25FF) || c == 0x3000;
}

static char
fold_ascii(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		c = (unsigned char)(c - 'A' + 'a');
	switch (c) {
	case '0': return 'o';
	case '1': case 'i': case '|': return 'l';
	case '5': return 's';
	default: return (char)c;
	}
}

static bool
ascii_wordch(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '|';
}

/* Normalised form: folded word characters in t[0..n), and b[p] true when
 * position p (0..n) is a word boundary. t and b have room for strlen(s)+1.
 * Returns n. */
static size_t
norm(const char *s, char *t, bool *b)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i = 0, n = 0;
	bool brk = true;

	while (i < len) {
		uint32_t cp;
		size_t k;

		if (p[i] < 0x80) {
			if (!ascii_wordch(p[i])) {
				brk = true;
				i++;
				continue;
			}
			b[n] = brk;
			t[n++] = fold_ascii(p[i]);
			brk = false;
			i++;
			continue;
		}
		k = utf8_one(p + i, len - i, &cp);
		if (cp_is_break(cp)) {
			brk = true;
		} else {
			for (size_t j = 0; j < k; j++) {
				b[n] = j == 0 && brk;
				t[n++] = (char)p[i + j];
			}
			brk = false;
		}
		i += k;
	}
	b[n] = true;
	/* Multi-letter look-alikes, inside words: rn -> m, vv -> w. */
	{
		size_t r = 0, w = 0;

		while (r < n) {
			if (r + 1 < n && !b[r + 1] &&
			    ((t[r] == 'r' && t[r + 1] == 'n') || (t[r] == 'v' && t[r + 1] == 'v'))) {
				b[w] = b[r];
				t[w++] = t[r] == 'r' ? 'm' : 'w';
				r += 2;
				continue;
			}
			b[w] = b[r];
			t[w++] = t[r++];
		}
		b[w] = true;
		n = w;
	}
	return n;
}

/* Anchored edit distance of word p (m >= 1 chars) against every prefix of
 * t[0..tn): d[j] = distance to t[0..j), where the first and the last
 * character of p must each sit on a character of t (equal or substituted):
 * no insertion or deletion at either end. That keeps a word from borrowing
 * a letter of its neighbour when spaces are ignored ("download" +
 * "lncomplete"), at the price of "complete" not matching "completed".
 * prev and row are scratch of tn+1 ints. */
#define EDIT_INF 1000000

static void
edit_prefixes(const char *p, size_t m, const char *t, size_t tn, int *d, int *prev, int *row)
{
	prev[0] = 0;
	for (size_t j = 1; j <= tn; j++)
		prev[j] = EDIT_INF;
	for (size_t i = 1; i < m; i++) {
		row[0] = EDIT_INF;
		for (size_t j = 1; j <= tn; j++) {
			int sub = prev[j - 1] + (p[i - 1] != t[j - 1]);
			int del = i > 1 ? prev[j] + 1 : EDIT_INF;     /* not before p[0] */
			int ins = j > 1 ? row[j - 1] + 1 : EDIT_INF;  /* ditto */
			int v = sub < del ? sub : del;

			row[j] = v < ins ? v : ins;
		}
		memcpy(prev, row, sizeof *prev * (tn + 1));
	}
	/* prev: p[0..m-1) against t[0..j); the last step is diagonal. */
	d[0] = EDIT_INF;
	for (size_t j = 1; j <= tn; j++)
		d[j] = prev[j - 1] >= EDIT_INF ? EDIT_INF : prev[j - 1] + (p[m - 1] != t[j - 1]);
}

bool
ocr_match(const char *text, const char *phrase)
{
	enum { PMAX = OCR_MAX_PHRASE, SPAN = 2 * OCR_MAX_PHRASE + 2 };
	char pt[PMAX + 1];
	bool pb[PMAX + 1];
	char *tt = NULL;
	bool *tb = NULL;
	size_t pn, tn, tlen, pw_off[PMAX], pw_len[PMAX], npw = 0;
	int d[SPAN], prev[SPAN], row[SPAN];
	bool reach[SPAN], next[SPAN];
	bool found = false;

	if (text == NULL || phrase == NULL || strlen(phrase) >= PMAX)
		return false;
	pn = norm(phrase, pt, pb);
	if (pn == 0)
		return false;
	for (size_t i = 0; i < pn; i++) {
		if (pb[i])
			pw_off[npw++] = i;
		pw_len[npw - 1] = i + 1 - pw_off[npw - 1];
	}
	tlen = strlen(text);
	tt = xmalloc(tlen + 1);
	tb = xmalloc(sizeof *tb * (tlen + 1));
	tn = norm(text, tt, tb);

	for (size_t s = 0; s < tn && !found; s++) {
		size_t span = 0;   /* reach[] covers positions s .. s+span */

		if (!tb[s])
			continue;
		reach[0] = true;
		for (size_t w = 0; w < npw; w++) {
			size_t m = pw_len[w], bud = m / 7, nspan = span + m + bud;
			bool any = false;

			if (nspan >= SPAN)
				nspan = SPAN - 1;
			memset(next, 0, sizeof next[0] * (nspan + 1));
			for (size_t c = 0; c <= span; c++) {
				size_t from = s + c, tmax;

				if (!reach[c] || from > tn)
					continue;
				tmax = tn - from < m + bud ? tn - from : m + bud;
				edit_prefixes(pt + pw_off[w], m, tt + from, tmax, d, prev, row);
				for (size_t j = m > bud ? m - bud : 1; j <= tmax; j++)
					if ((size_t)d[j] <= bud && c + j <= nspan) {
						next[c + j] = true;
						any = true;
					}
			}
			if (!any)
				break;
			memcpy(reach, next, sizeof reach[0] * (nspan + 1));
			span = nspan;
			if (w + 1 == npw)
				for (size_t c = 0; c <= span && !found; c++)
					found = reach[c] && s + c <= tn && tb[s + c];
		}
	}
	free(tb);
	free(tt);
	return found;
}

/* ---- conditions --------------------------------------------------------- */

#define COND_MAX 4000   /* bytes of condition looked at (VISION_MAX_CONDITION) */

/* Opening quote at s: its length and the closing quote it expects. */
static size_t
quote_open(const char *s, const char **close)
{
	if (s[0] == '"') {
		*close = "\"";
		return 1;
	}
	if (strncmp(s, "\xe2\x80\x9c", 3) == 0) {       /* “ */
		*close = "\xe2\x80\x9d";                 /* ” */
		return 3;
	}
	if (strncmp(s, "\xe2\x80\x9e", 3) == 0) {       /* „ */
		*close = "\xe2\x80\x9c";                 /* “ */
		return 3;
	}
	return 0;
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Copies s[0..n) trimmed into out (len bytes); false if it does not fit,
 * is empty, or has no letter or digit. */
static bool
phrase_put(const char *s, size_t n, char *out, size_t len)
{
	bool word = false;

	while (n > 0 && is_space(s[0])) {
		s++;
		n--;
	}
	while (n > 0 && is_space(s[n - 1]))
		n--;
	if (n == 0 || n >= len || n >= OCR_MAX_PHRASE)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ascii_wordch((unsigned char)s[i]) || (unsigned char)s[i] >= 0x80)
			word = true;
	if (!word)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

static bool
in_list(const char *w, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(w, *list) == 0)
			return true;
	return false;
}

/* Words (lowercase ASCII letters) outside the quotes decide two things: the
 * condition is about a state of the quoted thing (-> not for OCR), or about
 * its absence (-> negate). */
static const char *const state_words[] = {
	"enabled", "disabled", "greyed", "grayed", "checked", "unchecked", "ticked",
	"unticked", "selected", "deselected", "unselected", "focused", "highlighted",
	"toggled", "color", "colour", "red", "green", "blue", "yellow", "orange",
	"bold", "italic", "underlined", "blinking", "flashing", "clickable",
	"pressed", "expanded", "collapsed", NULL
};
static const char *const gone_words[] = {
	"disappear", "disappears", "disappeared", "disappearing", "vanish", "vanishes",
	"vanished", "gone", "removed", "hidden", "hides", "absent", "not", "isn",
	"doesn", "aren", "wasn", "don", "never", "no", NULL
};

/* Scans the words of s[0..n); sets *state / *gone. */
static void
scan_words(const char *s, size_t n, bool *state, bool *gone)
{
	char w[24], prev[24] = "";
	size_t i = 0;

	while (i < n) {
		size_t k = 0;

		while (i < n && !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			i++;
		while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) {
			if (k < sizeof w - 1)
				w[k++] = (char)(s[i] | 0x20);
			i++;
		}
		if (k == 0)
			break;
		w[k] = '\0';
		if (in_list(w, state_words))
			*state = true;
		if (in_list(w, gone_words) ||
		    (strcmp(w, "away") == 0 && (strcmp(prev, "go") == 0 ||
		    strcmp(prev, "goes") == 0 || strcmp(prev, "went") == 0 ||
		    strcmp(prev, "going") == 0)))
			*gone = true;
		memcpy(prev, w, k + 1);
	}
}

/* A prefixed condition ("text: Saved", "text-gone: \"Saving...\""): the
 * rest (s, n bytes, after the prefix) is the phrase, or one quoted phrase.
 * 1 with phrase set, 0 when it is not one. */
static int
cond_prefixed(const char *s, size_t n, char *phrase, size_t len)
{
	const char *close;
	size_t ql;

	while (n > 0 && is_space(*s)) {
		s++;
		n--;
	}
	while (n > 0 && is_space(s[n - 1]))
		n--;
	ql = quote_open(s, &close);
	if (ql > 0) {
		size_t cl = strlen(close);

		/* The whole rest must be one quoted phrase. */
		if (n < ql + cl || strncmp(s + n - cl, close, cl) != 0)
			return 0;
		for (const char *q = s + ql; q < s + n - cl; q++)
			if (strncmp(q, close, cl) == 0)
				return 0;
		s += ql;
		n -= ql + cl;
	}
	return phrase_put(s, n, phrase, len) ? 1 : 0;
}

/* Free text: exactly one distinct quoted phrase (repeats of it allowed).
 * 1 with *found, *found_len, 0 when there is none or two differ. */
static int
cond_quoted(const char *s, size_t n, const char **found, size_t *found_len)
{
	const char *close;

	*found = NULL;
	*found_len = 0;
	for (size_t i = 0; i < n;) {
		size_t ql = quote_open(s + i, &close), cl;
		const char *body, *end;

		if (ql == 0) {
			i++;
			continue;
		}
		cl = strlen(close);
		body = s + i + ql;
		end = strstr(body, close);
		if (end == NULL || end > s + n)
			break;
		if (*found != NULL && ((size_t)(end - body) != *found_len ||
		    strncasecmp(*found, body, *found_len) != 0))
			return 0;
		*found = body;
		*found_len = (size_t)(end - body);
		i = (size_t)(end - s) + cl;
	}
	return *found != NULL;
}

/* The words outside the quotes of free text: whether they describe a
 * state (*state: not a text condition) or the text going away (*gone). */
static void
cond_words(const char *s, size_t n, bool *state, bool *gone)
{
	const char *close;

	for (size_t i = 0; i < n;) {
		size_t ql = quote_open(s + i, &close);
		const char *end;

		if (ql == 0) {
			size_t j = i;

			while (j < n && quote_open(s + j, &close) == 0)
				j++;
			scan_words(s + i, j - i, state, gone);
			i = j;
			continue;
		}
		end = strstr(s + i + ql, close);
		if (end == NULL)
			break;
		i = (size_t)(end - s) + strlen(close);
	}
}

int
ocr_condition(const char *condition, char *phrase, size_t len, bool *negate)
{
	static const struct {
		const char *prefix;
		bool negate;
	} prefixes[] = {
		{ "text-gone:", true }, { "text_gone:", true }, { "no-text:", true },
		{ "!text:", true }, { "text:", false },
	};
	const char *s, *found;
	size_t n, found_len;
	bool state = false, gone = false;

	if (negate != NULL)
		*negate = false;
	if (condition == NULL || phrase == NULL || len == 0)
		return 0;
	phrase[0] = '\0';
	s = condition;
	while (is_space(*s))
		s++;
	n = strnlen(s, COND_MAX + 1);
	if (n > COND_MAX)
		return 0;
	for (size_t i = 0; i < ARRAY_LEN(prefixes); i++) {
		size_t pl = strlen(prefixes[i].prefix);

		if (strncasecmp(s, prefixes[i].prefix, pl) != 0)
			continue;
		if (cond_prefixed(s + pl, n - pl, phrase, len) == 0)
			return 0;
		if (negate != NULL)
			*negate = prefixes[i].negate;
		return 1;
	}
	if (!cond_quoted(s, n, &found, &found_len) || !phrase_put(found, found_len, phrase, len)) {
		phrase[0] = '\0';
		return 0;
	}
	cond_words(s, n, &state, &gone);
	if (state) {
		phrase[0] = '\0';
		return 0;
	}
	if (negate != NULL)
		*negate = gone;
	return 1;
}

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
