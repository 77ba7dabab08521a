/*
 * utf8.h - the one place detm checks, repairs and cuts UTF-8.
 *
 * Every JSON detm writes (detmd's replies, detm-mcp's messages) must be valid
 * UTF-8, whatever bytes came in (headers, query values, workspace files,
 * JSON-RPC ids). The rule, used everywhere: an invalid byte (a stray
 * continuation, a truncated, overlong or surrogate sequence, anything above
 * U+10FFFF) becomes U+FFFD, one per byte; text is cut only between
 * characters.
 *
 * Self-contained (libc only), so detm-mcp links this file too without the
 * daemon's allocators; out of memory aborts, as util.h's x* allocators do.
 */
#ifndef DETM_UTF8_H
#define DETM_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#define UTF8_REPLACEMENT "\xef\xbf\xbd"    /* U+FFFD */
#define UTF8_ELLIPSIS "\xe2\x80\xa6"       /* U+2026, the mark of a cut text */

/* True if s[0..len) is well-formed UTF-8 (no overlongs, no surrogates). */
bool utf8_valid(const char *s, size_t len);
/* Number of code points in a NUL-terminated valid UTF-8 string. */
size_t utf8_chars(const char *s);
/* Length of the valid sequence at s[0..len) (1-4), or 0 if s[0] does not
 * start one. len must be >= 1. */
size_t utf8_seq(const char *s, size_t len);
/* The largest n <= max such that s[0..n) does not end inside a character
 * (s[0..len) valid or not; an invalid byte counts as one character). */
size_t utf8_cut(const char *s, size_t len, size_t max);
/* The precision for "%.*s" that prints at most max bytes of the
 * NUL-terminated s (NULL: 0), cut between characters: use it wherever a
 * format would clip text with "%.40s". */
int utf8_prec(const char *s, size_t max);
/* Copies src[0..len) into dst[cap] (cap >= 1), repaired (see above) and cut
 * between characters so it fits with its NUL; returns the bytes written. */
size_t utf8_fix(char *dst, size_t cap, const char *src, size_t len);
/* Like utf8_fix, but a text that does not fit whole is cut between
 * characters and ends with UTF8_ELLIPSIS, so a reader sees the cut (the
 * result, with its NUL, still fits in cap; cap >= 4). Returns the bytes
 * written; *cut (may be NULL) says whether it cut. */
size_t utf8_clip(char *dst, size_t cap, const char *src, size_t len, bool *cut);
/* A malloc'd, NUL-terminated repaired copy of src[0..len); *out_len (may be
 * NULL) gets its length. The allocation is 3 * len + 1 bytes, so a caller
 * may append one byte when the copy is shorter (or len >= 1). Never NULL. */
char *utf8_dup(const char *src, size_t len, size_t *out_len);
/* Repairs the NUL-terminated string in buf[cap] in place (cut between
 * characters if the repair does not fit). */
void utf8_fix_in_place(char *buf, size_t cap);

#endif
