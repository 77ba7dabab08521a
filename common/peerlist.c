/*
 * peerlist.c - see peerlist.h. Expansion: "http://NAME:PORT/PATH" becomes
 * "http://ADDR:PORT/PATH" for each address getaddrinfo gives NAME (IPv6 in
 * brackets); an IP literal, or a set without resolve_all, stays as given.
 */
#include "peerlist.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <json-c/json.h>

struct peerset {
	pthread_mutex_t mu;
	struct peerlist given, cur;
	bool resolve_all;
	long every_s;
	time_t resolved_at;     /* CLOCK_MONOTONIC seconds; 0: never */
	unsigned gen;
};

static int
add_url(struct peerlist *out, const char *u, size_t n, char *err, size_t errlen)
{
	if (out->n >= PEERLIST_MAX)
		return snprintf(err, errlen, "at most %d detmd URLs", PEERLIST_MAX), -1;
	if (n >= PEERLIST_URL)
		return snprintf(err, errlen, "a URL longer than %d bytes", PEERLIST_URL - 1), -1;
	while (n > 0 && u[n - 1] == '/')
		n--;
	for (int i = 0; i < out->n; i++)
		if (strncmp(out->url[i], u, n) == 0 && out->url[i][n] == '\0')
			return 0;
	memcpy(out->url[out->n], u, n);
	out->url[out->n++][n] = '\0';
	return 0;
}

int
peerlist_parse(const char *list, struct peerlist *out, char *err, size_t errlen)
{
	const char *p = list;

	while (p != NULL && *p != '\0') {
		size_t n = strcspn(p, ", \t\r\n");

		if (n > 0) {
			if (strncmp(p, "http://", 7) != 0 && strncmp(p, "https://", 8) != 0)
				return snprintf(err, errlen, "'%.*s' is not an http:// or https:// URL",
				                (int)(n < 200 ? n : 200), p), -1;
			if (add_url(out, p, n, err, errlen) != 0)
				return -1;
		}
		p += n;
		p += strspn(p, ", \t\r\n");
	}
	return 0;
}

static int
url_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The host part of url: *h (not NUL-ended) of *hn bytes; false if none. */
static bool
host_of(const char *url, const char **h, size_t *hn)
{
	const char *s = strstr(url, "://");

	if (s == NULL)
		return false;
	s += 3;
	*h = s;
	*hn = s[0] == '[' ? strcspn(s, "]") + 1 : strcspn(s, ":/");
	return *hn > 0;
}

/* Appends url with its host replaced by each address of that host to out;
 * -1 when the name does not resolve. */
static int
expand_one(const char *url, struct peerlist *out)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	char host[256], addr[INET6_ADDRSTRLEN], u[PEERLIST_URL * 2], e[80];
	const char *h;
	size_t hn;
	struct in6_addr a6;

	if (!host_of(url, &h, &hn) || hn >= sizeof host || h[0] == '[')
		return add_url(out, url, strlen(url), e, sizeof e), 0;
	memcpy(host, h, hn);
	host[hn] = '\0';
	if (inet_pton(AF_INET, host, &a6) == 1)
		return add_url(out, url, strlen(url), e, sizeof e), 0;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return -1;
	for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
		const void *src = ai->ai_family == AF_INET ?
		    (const void *)&((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr :
		    (const void *)&((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_addr;
		bool v6 = ai->ai_family == AF_INET6;
		int n;

		if ((ai->ai_family != AF_INET && !v6) || inet_ntop(ai->ai_family, src, addr, sizeof addr) == NULL)
			continue;
		n = snprintf(u, sizeof u, "%.*s%s%s%s%s", (int)(h - url), url, v6 ? "[" : "", addr,
		             v6 ? "]" : "", h + hn);
		if (n > 0 && (size_t)n < sizeof u)
			add_url(out, u, (size_t)n, e, sizeof e);
	}
	freeaddrinfo(res);
	return 0;
}

static time_t
mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* Resolves every given URL again (lock held). */
static void
resolve(struct peerset *ps)
{
	struct peerlist next = { 0 };

	for (int i = 0; i < ps->given.n; i++) {
		struct peerlist one = { 0 };
		char e[80];

		if (expand_one(ps->given.url[i], &one) != 0) {
			if (ps->resolved_at != 0) {
				/* keep the last list: a resolver hiccup does not empty it */
				ps->resolved_at = mono_s();
				return;
			}
			add_url(&one, ps->given.url[i], strlen(ps->given.url[i]), e, sizeof e);
		}
		for (int k = 0; k < one.n; k++)
			add_url(&next, one.url[k], strlen(one.url[k]), e, sizeof e);
	}
	qsort(next.url, (size_t)next.n, sizeof next.url[0], url_cmp);
	if (next.n != ps->cur.n || memcmp(next.url, ps->cur.url, sizeof next.url[0] * (size_t)next.n) != 0)
		ps->gen++;
	ps->cur = next;
	ps->resolved_at = mono_s();
}

struct peerset *
peerset_new(const struct peerlist *given, bool resolve_all, long every_s)
{
	struct peerset *ps = calloc(1, sizeof *ps);

	if (ps == NULL)
		abort();
	pthread_mutex_init(&ps->mu, NULL);
	ps->given = *given;
	ps->cur = *given;
	ps->resolve_all = resolve_all;
	ps->every_s = every_s > 0 ? every_s : PEERLIST_RESOLVE_S;
	ps->gen = 1;
	return ps;
}

void
peerset_free(struct peerset *ps)
{
	if (ps == NULL)
		return;
	pthread_mutex_destroy(&ps->mu);
	free(ps);
}

unsigned
peerset_get(struct peerset *ps, struct peerlist *out)
{
	unsigned gen;

	pthread_mutex_lock(&ps->mu);
	if (ps->resolve_all && (ps->resolved_at == 0 || mono_s() - ps->resolved_at >= ps->every_s))
		resolve(ps);
	*out = ps->cur;
	gen = ps->gen;
	pthread_mutex_unlock(&ps->mu);
	return gen;
}

static struct {
	char id[9];
	char url[PEERLIST_URL];
} ids[PEERLIST_IDS];
static unsigned ids_next;
static pthread_mutex_t ids_mu = PTHREAD_MUTEX_INITIALIZER;

bool
peerlist_id_ok(const char *s)
{
	return s != NULL && strlen(s) == 8 && strspn(s, "0123456789abcdef") == 8;
}

void
peerlist_remember(const char *id, const char *url)
{
	unsigned i;

	if (!peerlist_id_ok(id) || url == NULL)
		return;
	pthread_mutex_lock(&ids_mu);
	for (i = 0; i < PEERLIST_IDS && strcmp(ids[i].id, id) != 0; i++)
		;
	if (i == PEERLIST_IDS) {
		i = ids_next;
		ids_next = (ids_next + 1) % PEERLIST_IDS;
		snprintf(ids[i].id, sizeof ids[i].id, "%s", id);
	}
	snprintf(ids[i].url, sizeof ids[i].url, "%s", url);
	pthread_mutex_unlock(&ids_mu);
}

void
peerlist_owner(const char *id, char *url, size_t cap)
{
	url[0] = '\0';
	if (!peerlist_id_ok(id))
		return;
	pthread_mutex_lock(&ids_mu);
	for (unsigned i = 0; i < PEERLIST_IDS && url[0] == '\0'; i++)
		if (strcmp(ids[i].id, id) == 0)
			snprintf(url, cap, "%s", ids[i].url);
	pthread_mutex_unlock(&ids_mu);
}

static const char *
str_at(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : "";
}

int
peerlist_newest_first(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a, *y = *(struct json_object *const *)b;
	int c = strcmp(str_at(y, "updated_at"), str_at(x, "updated_at"));

	return c != 0 ? c : strcmp(str_at(y, "created_at"), str_at(x, "created_at"));
}
