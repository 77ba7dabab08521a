/*
 * oracle/utf8.h - strict UTF-8 (Unicode Table 3-7) for the test harnesses
 * (httpcase, the MCP harness): written apart from common/utf8.c so the
 * checks do not share its bugs. Header-only.
 */
#ifndef DETM_TEST_ORACLE_UTF8_H
#define DETM_TEST_ORACLE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

static inline bool
utf8_strict(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, k, len;
	unsigned lo, hi;

	while (i < n) {
		unsigned c = s[i];

		if (c < 0x80) {
			i++;
			continue;
		}
		lo = 0x80;
		hi = 0xbf;
		if (c >= 0xc2 && c <= 0xdf)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		else
			return false;
		if (i + len > n || s[i + 1] < lo || s[i + 1] > hi)
			return false;
		for (k = 2; k < len; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xbf)
				return false;
		i += len;
	}
	return true;
}

#endif
