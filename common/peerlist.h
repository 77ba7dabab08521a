/*
 * peerlist.h - the detmd base URLs a program talks to (detm-mcp's --url,
 * detmd's --peers): the URLs given, and with "resolve all" each URL whose
 * host is a DNS name replaced by one URL per address the name has (a
 * Kubernetes headless Service lists every ready pod that way). Issue 39
 * item 3.
 *
 * A peerset keeps the list and re-resolves its names when it is older than
 * its period (PEERLIST_RESOLVE_S), at the next peerset_get: no thread of
 * its own. A name that does not resolve keeps its last addresses (a
 * resolver hiccup does not empty the fleet); a name that never resolved
 * stays as the URL given, so errors name it.
 *
 * Thread-safety: peerset_get may be called from any thread (one mutex;
 * the resolution runs under it, so callers wait for one getaddrinfo).
 * Invariants: every URL starts with http:// or https://, has no trailing
 * slash, and fits PEERLIST_URL; the list is sorted and has no duplicate, so
 * its order does not change between resolutions unless the addresses do.
 * Does not: probe the peers, or talk HTTP.
 */
#ifndef DETM_PEERLIST_H
#define DETM_PEERLIST_H

#include <stdbool.h>
#include <stddef.h>

#define PEERLIST_MAX 32         /* URLs after expansion */
#define PEERLIST_URL 300        /* bytes of one URL */
#define PEERLIST_RESOLVE_S 30   /* default: re-resolve names older than this */

struct peerlist {
	int n;
	char url[PEERLIST_MAX][PEERLIST_URL];
};

struct peerset;

/* Checks list (URLs separated by commas or spaces) and appends them to
 * out. 0, or -1 with a sentence in err (not http(s), too long, too many). */
int peerlist_parse(const char *list, struct peerlist *out, char *err, size_t errlen);

/* A set over the URLs of given (copied); resolve_all: expand names to
 * every address, again every_s seconds after (<= 0: PEERLIST_RESOLVE_S).
 * Never NULL (aborts when out of memory). */
struct peerset *peerset_new(const struct peerlist *given, bool resolve_all, long every_s);
void peerset_free(struct peerset *ps);

/* Copies the current URLs into out (resolving first when due) and returns
 * the list's generation: it changes exactly when the URLs did. */
unsigned peerset_get(struct peerset *ps, struct peerlist *out);

/* Where ids live: one ring of PEERLIST_IDS (id, URL) pairs per process,
 * under a mutex; an entry is trusted until it falls off the ring (an id
 * does not move between detmds). ids must be 8 lowercase hex digits
 * (others are ignored / never found). */
#define PEERLIST_IDS 4096
void peerlist_remember(const char *id, const char *url);
/* The URL id was last seen on into url (cap bytes); "" when unknown. */
void peerlist_owner(const char *id, char *url, size_t cap);
/* Whether s is 8 lowercase hex digits (a task, wait, run or clip id). */
bool peerlist_id_ok(const char *s);

/* A json_object_array_sort comparator: objects newest first by
 * "updated_at", then "created_at" (ISO-8601 text sorts by time). */
int peerlist_newest_first(const void *a, const void *b);

#endif
