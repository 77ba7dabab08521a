/*
 * xcap_cursor.c - xcap_cursor_draw: the pointer's image (XFixes) blended
 * into a grabbed frame, for screenshots that must show the cursor (the
 * OSWorld server's /screenshot). Xvfb keeps the cursor out of the frame
 * buffer, so a grab never has it.
 *
 * Invariants: only pixels inside the frame are written; the frame's scale
 * and origin map the cursor's screen position to image pixels (a scaled
 * frame gets the cursor at its screen size, not scaled: it stays visible).
 * Does not: grab, encode, or move the pointer.
 */
#include "xcap.h"

#include <X11/extensions/Xfixes.h>

/* One ARGB pixel (premultiplied, as XFixes gives it) over one RGB pixel. */
static void
blend(unsigned char *px, unsigned long argb)
{
	unsigned a = (argb >> 24) & 0xff;
	unsigned rgb[3] = { (argb >> 16) & 0xff, (argb >> 8) & 0xff, argb & 0xff };

	for (int k = 0; k < 3; k++) {
		unsigned v = rgb[k] + px[k] * (255 - a) / 255;

		px[k] = (unsigned char)(v > 255 ? 255 : v);
	}
}

int
xcap_cursor_draw(Display *d, struct xcap_frame *f)
{
	int ev, er;
	XFixesCursorImage *ci;
	double scale = f->scale > 0 ? f->scale : 1.0;

	if (f->rgb == NULL || !XFixesQueryExtension(d, &ev, &er))
		return -1;
	ci = XFixesGetCursorImage(d);
	if (ci == NULL)
		return -1;
	int ox = (int)((ci->x - ci->xhot - f->src_x) / scale);
	int oy = (int)((ci->y - ci->yhot - f->src_y) / scale);

	for (int cy = 0; cy < ci->height; cy++) {
		int y = oy + cy;

		if (y < 0 || y >= f->height)
			continue;
		for (int cx = 0; cx < ci->width; cx++) {
			int x = ox + cx;
			unsigned long argb = ci->pixels[(size_t)cy * ci->width + cx];

			if (x < 0 || x >= f->width || (argb >> 24) == 0)
				continue;
			blend(f->rgb + ((size_t)y * f->width + x) * 3, argb);
		}
	}
	XFree(ci);
	return 0;
}
