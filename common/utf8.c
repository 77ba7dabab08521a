/*
 * utf8.c - see utf8.h. Stateless; no allocation except utf8_dup and
 * utf8_fix_in_place's scratch copy.
 */
#include "utf8.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t
utf8_seq(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned c = s[0];
	size_t n, k;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0) {
		n = 1;
		cp = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		n = 2;
		cp = c & 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		n = 3;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (k = 1; k <= n; k++) {
		if (k >= len || (s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
	    (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n + 1;
}

bool
utf8_valid(const char *s, size_t len)
{
	size_t i = 0, k;
	uint64_t w;

	while (i < len) {
		/* ASCII eight bytes at a time: replies are mostly ASCII, and a
		 * 37 KB tools/list took ~0.15 ms byte by byte. */
		if (len - i >= 8) {
			memcpy(&w, s + i, 8);
			if ((w & 0x8080808080808080ULL) == 0) {
				i += 8;
				continue;
			}
		}
		if ((k = utf8_seq(s + i, len - i)) == 0)
			return false;
		i += k;
	}
	return true;
}

size_t
utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	}
	return n;
}

size_t
utf8_cut(const char *s, size_t len, size_t max)
{
	size_t i = 0, k;

	if (max >= len)
		return len;
	while (i < max) {
		k = utf8_seq(s + i, len - i);
		if (k == 0)
			k = 1;
		if (i + k > max)
			break;
		i += k;
	}
	return i;
}

int
utf8_prec(const char *s, size_t max)
{
	if (s == NULL)
		return 0;
	if (max > INT_MAX)
		max = INT_MAX;
	return (int)utf8_cut(s, strnlen(s, max + 4), max);
}

size_t
utf8_fix(char *dst, size_t cap, const char *src, size_t len)
{
	size_t i = 0, o = 0, k;

	while (i < len) {
		k = utf8_seq(src + i, len - i);
		if (k == 0) {
			if (o + 3 >= cap)
				break;
			memcpy(dst + o, UTF8_REPLACEMENT, 3);
			o += 3;
			i++;
			continue;
		}
		if (o + k >= cap)
			break;
		memcpy(dst + o, src + i, k);
		o += k;
		i += k;
	}
	dst[o] = '\0';
	return o;
}

size_t
utf8_clip(char *dst, size_t cap, const char *src, size_t len, bool *cut)
{
	size_t i = 0, o = 0, k, out, fit_o = 0;

	if (cut != NULL)
		*cut = false;
	while (i < len) {
		k = utf8_seq(src + i, len - i);
		out = k == 0 ? 3 : k;
		if (o + out >= cap) {   /* does not fit whole: back to where the mark fits */
			o = fit_o;
			memcpy(dst + o, UTF8_ELLIPSIS, 3);
			o += 3;
			if (cut != NULL)
				*cut = true;
			break;
		}
		memcpy(dst + o, k == 0 ? UTF8_REPLACEMENT : src + i, out);
		o += out;
		i += k == 0 ? 1 : k;
		if (o + 3 < cap)
			fit_o = o;
	}
	dst[o] = '\0';
	return o;
}

char *
utf8_dup(const char *src, size_t len, size_t *out_len)
{
	size_t cap = len * 3 + 1, n;
	char *d;

	if (len > (SIZE_MAX - 1) / 3 || (d = malloc(cap)) == NULL) {
		fprintf(stderr, "detm: out of memory repairing %zu bytes of UTF-8\n", len);
		abort();
	}
	n = utf8_fix(d, cap, src, len);
	if (out_len != NULL)
		*out_len = n;
	return d;
}

void
utf8_fix_in_place(char *buf, size_t cap)
{
	size_t len = strnlen(buf, cap);
	char *copy;

	if (cap == 0 || utf8_valid(buf, len))
		return;
	copy = utf8_dup(buf, len, NULL);
	utf8_fix(buf, cap, copy, strlen(copy));
	free(copy);
}
