/*
 * util.c - allocation that aborts on OOM, clocks, ISO time, mkdir -p,
 * random ids, secrets (each drawn from getrandom(), never from the id
 * generator), constant-time compare. No state beyond the id generator's
 * seed, which is drawn from getrandom() once and guarded by a mutex.
 */
#include "util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

static void
oom(size_t n)
{
	fprintf(stderr, "detm: out of memory allocating %zu bytes\n", n);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom(n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		oom(n * size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		oom(n);
	return q;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		oom(strlen(fmt));
	va_end(ap);
	return s;
}

int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void
sleep_ms(long ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void
iso_time(int64_t ms, char out[ISO_TIME_LEN])
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;

	if (ms < 0 || gmtime_r(&secs, &tm) == NULL ||
	    strftime(out, ISO_TIME_LEN, "%Y-%m-%dT%H:%M:%S", &tm) != 19) {
		snprintf(out, ISO_TIME_LEN, "1970-01-01T00:00:00.000Z");
		return;
	}
	snprintf(out + 19, ISO_TIME_LEN - 19, ".%03dZ", (int)(ms % 1000));
}

static int
parse_epoch(const char *s, int64_t *ms_out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* Written so that NaN fails too (converting it to an integer is
	 * undefined; the fuzzer found "nan"). */
	if (errno != 0 || end == s || *end != '\0' || !(v >= 0 && v <= 1e11))
		return -1;
	*ms_out = (int64_t)(v * 1000.0);
	return 0;
}

int
time_parse(const char *s, int64_t *ms_out)
{
	struct tm tm;
	const char *p;
	int64_t ms = 0;
	int n, off_h, off_m;
	char sign;

	if (s[0] != '\0' && strchr(s, '-') == NULL)
		return parse_epoch(s, ms_out);
	memset(&tm, 0, sizeof tm);
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (p == NULL)
		return -1;
	if (*p == '.') {
		int digits = 0;

		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			if (digits < 3)
				ms = ms * 10 + (*p - '0');
		}
		for (; digits < 3; digits++)
			ms *= 10;
	}
	ms += (int64_t)timegm(&tm) * 1000;
	if (*p == 'Z' && p[1] == '\0') {
		*ms_out = ms;
		return 0;
	}
	if (*p == '\0') {
		*ms_out = ms;
		return 0;
	}
	if (sscanf(p, "%c%2d:%2d%n", &sign, &off_h, &off_m, &n) == 3 &&
	    p[n] == '\0' && (sign == '+' || sign == '-')) {
		int64_t off = ((int64_t)off_h * 60 + off_m) * 60000;

		*ms_out = sign == '+' ? ms - off : ms + off;
		return 0;
	}
	return -1;
}

int
dir_create_all(const char *path, unsigned mode)
{
	char *p = xstrdup(path), *s;
	int rc = 0;

	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST)
			rc = -1;
		*s = '/';
		if (rc != 0)
			break;
	}
	if (rc == 0 && mkdir(p, (mode_t)mode) != 0 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

/* splitmix64: fast, well distributed, and seeded from the kernel. Ids need
 * to be unique (collisions are retried by the store), not secret. */
static pthread_mutex_t id_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t id_state;
static bool id_seeded;

void
id_new(char out[ID_LEN])
{
	uint64_t z;

	pthread_mutex_lock(&id_lock);
	if (!id_seeded) {
		if (getrandom(&id_state, sizeof id_state, 0) != sizeof id_state)
			id_state = (uint64_t)now_ms() ^ (uint64_t)mono_us() << 20;
		id_seeded = true;
	}
	z = (id_state += 0x9e3779b97f4a7c15ULL);
	pthread_mutex_unlock(&id_lock);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	snprintf(out, ID_LEN, "%08x", (unsigned)(z & 0xffffffffu));
}

void
secret_new(char out[SECRET_LEN])
{
	unsigned char rnd[(SECRET_LEN - 1) / 2];
	size_t got = 0;
	ssize_t n;

	while (got < sizeof rnd) {
		n = getrandom(rnd + got, sizeof rnd - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			abort();    /* no kernel randomness: never hand out a guessable secret */
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(out + 2 * i, 3, "%02x", rnd[i]);
}

bool
fd_peer_closed(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	if (poll(&p, 1, 0) <= 0)
		return false;
	return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

static pthread_mutex_t row_lock = PTHREAD_MUTEX_INITIALIZER;   /* before id_lock */

void
id_row(char out[ID_LEN], bool jump)
{
	static uint32_t next;
	static bool started;
	uint32_t v;

	pthread_mutex_lock(&row_lock);
	if (!started || jump) {
		char r[ID_LEN];

		id_new(r);
		next = (uint32_t)strtoul(r, NULL, 16);
		started = true;
	}
	v = next++;
	pthread_mutex_unlock(&row_lock);
	snprintf(out, ID_LEN, "%08x", (unsigned)v);
}

bool
id_valid(const char *s)
{
	size_t n = 0;

	for (; s[n] != '\0'; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == ID_LEN - 1;
}

bool
secure_streq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char d = (unsigned char)(la != lb);

	/* Always walk the expected string's length so timing does not reveal
	 * how much of a guess matched. */
	for (i = 0; i < lb; i++)
		d |= (unsigned char)(b[i] ^ (i < la ? a[i] : 0));
	return d == 0;
}

char *
b64_encode(const unsigned char *p, size_t n, size_t *out_len)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t olen = (n + 2) / 3 * 4, i, o = 0;
	char *out = xmalloc(olen + 1);

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = tab[(v >> 6) & 63];
		out[o++] = tab[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);

		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	if (out_len != NULL)
		*out_len = o;
	return out;
}

/* The value of a base64 digit (standard or URL-safe alphabet), or -1. */
static int
b64_digit(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

int
b64_decode(const char *s, size_t n, size_t max, unsigned char **out, size_t *out_len)
{
	unsigned char *buf;
	uint32_t acc = 0;
	size_t o = 0, digits = 0, pad = 0, i;

	*out = NULL;
	*out_len = 0;
	if (n / 4 * 3 > max + 3)
		return -2;
	buf = xmalloc(n / 4 * 3 + 3);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int v;

		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		if (pad > 0 || (v = b64_digit(c)) < 0)
			goto bad;       /* a digit after padding, or not a digit */
		acc = acc << 6 | (uint32_t)v;
		if (++digits % 4 == 0) {
			buf[o++] = (unsigned char)(acc >> 16);
			buf[o++] = (unsigned char)(acc >> 8);
			buf[o++] = (unsigned char)acc;
			acc = 0;
		}
	}
	/* A last group of 2 or 3 digits holds 1 or 2 bytes (padding optional). */
	if (digits % 4 == 1 || pad > 2 || (pad > 0 && (digits + pad) % 4 != 0))
		goto bad;
	if (digits % 4 == 2)
		buf[o++] = (unsigned char)(acc >> 4);
	else if (digits % 4 == 3) {
		buf[o++] = (unsigned char)(acc >> 10);
		buf[o++] = (unsigned char)(acc >> 2);
	}
	if (o > max) {
		free(buf);
		return -2;
	}
	*out = buf;
	*out_len = o;
	return 0;
bad:
	free(buf);
	return -1;
}
