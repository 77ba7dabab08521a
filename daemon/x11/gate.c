/*
 * gate.c - greyscale thumbnails and their difference (see gate.h).
 * Integer arithmetic only; the loops are simple enough for the compiler to
 * vectorise at -O2.
 */
#include <stdlib.h>

#include "gate.h"

void
gate_grey(const struct xcap_frame *f, uint8_t *out)
{
	size_t n = (size_t)f->width * (size_t)f->height, i;
	const unsigned char *p = f->rgb;

	for (i = 0; i < n; i++, p += 3)
		out[i] = (uint8_t)((77u * p[0] + 150u * p[1] + 29u * p[2]) >> 8);
}

double
gate_diff(const uint8_t *a, const uint8_t *b, size_t n, int pixel_threshold)
{
	size_t i, changed = 0;

	if (n == 0)
		return 0.0;
	for (i = 0; i < n; i++) {
		int d = (int)a[i] - (int)b[i];

		changed += (size_t)(d > pixel_threshold || d < -pixel_threshold);
	}
	return (double)changed / (double)n;
}
