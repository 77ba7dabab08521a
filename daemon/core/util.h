/*
 * util.h - small helpers every module uses: allocation, time, UTF-8, ids.
 *
 * Out-of-memory policy (decided once, as tmux and redis do): the x*
 * allocators log and abort. Anything whose size a client controls is capped
 * before it is allocated (see limits.h), so an abort here means the machine is
 * out of memory, not that a request was large.
 */
#ifndef DETM_UTIL_H
#define DETM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cdefs.h"
#include "utf8.h"

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Returns a malloc'd formatted string; never NULL. */
char *xasprintf(const char *fmt, ...) DETM_PRINTF(1, 2);

/* Wall-clock milliseconds since the Unix epoch. */
int64_t now_ms(void);
/* Monotonic microseconds (for durations and timeouts). */
int64_t mono_us(void);
/* Sleeps ms milliseconds (ms <= 0: returns at once), resuming after a
 * signal (EINTR) until the whole time has passed. */
void sleep_ms(long ms);

/* Formats ms-since-epoch as "2026-11-22T19:30:00.123Z" into out (>= 25 bytes). */
#define ISO_TIME_LEN 25
void iso_time(int64_t ms, char out[ISO_TIME_LEN]);
/* Parses "2026-11-22T19:30:00[.123][Z|+00:00]" or plain epoch seconds
 * ("1763840000" or "1763840000.5") into ms. Returns 0, or -1 if malformed. */
int time_parse(const char *s, int64_t *ms_out);

/* UTF-8 checks, repair and cutting: utf8.h (shared with detm-mcp). */

/* mkdir -p: creates path and its missing parents with mode (as umask
 * allows). Returns 0, or -1 with errno set. */
int dir_create_all(const char *path, unsigned mode);

/* Writes a fresh random id (8 lowercase hex digits + NUL). Thread-safe. */
#define ID_LEN 9
void id_new(char out[ID_LEN]);
/* A row id for the store (same form): consecutive within a run from a
 * random start, so a batch's inserts land on one leaf page of each id
 * index instead of one random page per row (fewer WAL frames per COMMIT,
 * fewer pages to checkpoint). jump: the last one collided with an older
 * row (a previous run's range): start again from a new random point. */
void id_row(char out[ID_LEN], bool jump);
/* True if s has the form of every id detm makes: exactly 8 lowercase hex
 * digits (id_new). Checked before an id is used in a lookup or a path, so
 * "abc/items/1" or "abc\0x" can never reach a route or a query. */
bool id_valid(const char *s);

/* Writes a fresh secret (32 lowercase hex digits + NUL: 128 bits read from
 * the kernel with getrandom(2)), for what a client must not guess: a
 * takeover's lease, an MCP session id. Not id_new: its outputs are a
 * seeded sequence whose members clients see. Aborts if the kernel cannot
 * give randomness (never on Linux >= 3.17 once booted). Thread-safe. */
#define SECRET_LEN 33
void secret_new(char out[SECRET_LEN]);

/* True when the peer of a connected socket has hung up (FIN, RST or an
 * error), without reading anything from it. */
bool fd_peer_closed(int fd);

/* Standard base64 (with padding) of p[0..n); malloc'd, NUL-terminated;
 * *out_len (may be NULL) gets its length. */
char *b64_encode(const unsigned char *p, size_t n, size_t *out_len);

/* Decodes base64 s[0..n) (standard or URL-safe alphabet, padding
 * optional, whitespace skipped) into *out (malloc'd, the caller frees it)
 * and *out_len. 0; -1 when s is not base64 (*out NULL); -2 when it decodes
 * to more than max bytes (*out NULL). */
int b64_decode(const char *s, size_t n, size_t max, unsigned char **out, size_t *out_len);

/* Constant-time comparison of two NUL-terminated strings (token checks). */
bool secure_streq(const char *a, const char *b);

#endif
