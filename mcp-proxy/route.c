/*
 * route.c - see route.h.
 *
 * State: peerlist.h's (id, detmd URL) ring, filled by lookups and by the
 * replies that carry ids; an id's entry is trusted until it falls off the
 * ring (a task does not move between detmds) or its URL leaves the list
 * (a pod gone from the DNS name).
 * Invariant: an id goes into a path only after peerlist_id_ok.
 */
#include "route.h"

#include <stdio.h>
#include <string.h>

#include "caps.h"
#include "peerlist.h"
#include "log.h"

#define ROUTE_PROBE_S 3L

void
route_remember(const char *id, const char *url)
{
	peerlist_remember(id, url);
}

/* The index in fws of the detmd id was seen on, or -1. */
static int
cached(struct forward *const *fws, int n, const char *id)
{
	char url[PEERLIST_URL];

	peerlist_owner(id, url, sizeof url);
	for (int i = 0; i < n && url[0] != '\0'; i++)
		if (strcmp(forward_base(fws[i]), url) == 0)
			return i;
	return -1;
}

static long long
jint(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v = NULL;

	if (o != NULL && json_object_object_get_ex(o, a, &v) && b != NULL)
		json_object_object_get_ex(v, b, &v);
	return v != NULL ? json_object_get_int64(v) : 0;
}

/* task_register: the ready detmd with the most free display slots. */
static int
choose_free(struct forward *const *fws, int n, char *err, size_t errlen)
{
	int best = -1;
	long long best_free = -1;
	size_t o;

	o = (size_t)snprintf(err, errlen, "no detmd is ready for a new task:");
	for (int i = 0; i < n; i++) {
		struct json_object *j = NULL, *disp = NULL, *e = NULL, *m = NULL;
		long st = forward_probe(fws[i], "/readyz", ROUTE_PROBE_S, &j);
		long long free_slots;

		if (j != NULL && json_object_object_get_ex(j, "checks", &disp))
			json_object_object_get_ex(disp, "displays", &disp);
		free_slots = jint(disp, "max", NULL) - jint(disp, "running", NULL);
		if (st == 200 && free_slots > best_free) {
			best = i;
			best_free = free_slots;
		} else if (st != 200 && o < errlen) {
			if (j != NULL && json_object_object_get_ex(j, "error", &e))
				json_object_object_get_ex(e, "message", &m);
			o += (size_t)snprintf(err + o, errlen - o, " %s: %s;", forward_base(fws[i]),
			                      st == 0 ? "unreachable" : m != NULL ? json_object_get_string(m) : "not ready");
		}
		json_object_put(j);
	}
	if (best >= 0)
		log_debug("task_register -> %s (%lld free display slots)", forward_base(fws[best]), best_free);
	return best;
}

/* The detmd that has id (GET prefix + id answers 200), or -1 with err:
 * every detmd is asked (not only until the first 200), so an id two
 * detmds drew alike is a "conflict" error naming both, not a guess. */
static int
find_owner(struct forward *const *fws, int n, const char *id, const char *prefix, char *err,
           size_t errlen)
{
	char path[64], down[600] = "", have[600] = "";
	size_t o = 0, h = 0;
	int idx = cached(fws, n, id), found = -1, nfound = 0;

	if (idx >= 0)
		return idx;
	snprintf(path, sizeof path, "%s%s", prefix, id);
	for (int i = 0; i < n; i++) {
		long st = forward_probe(fws[i], path, ROUTE_PROBE_S, NULL);

		if (st == 200) {
			found = i;
			nfound++;
			if (h < sizeof have)
				h += (size_t)snprintf(have + h, sizeof have - h, "%s%s", h ? ", " : "",
				                      forward_base(fws[i]));
		} else if (st != 404 && o < sizeof down)
			o += (size_t)snprintf(down + o, sizeof down - o, "%s%s", o ? ", " : "", forward_base(fws[i]));
	}
	if (nfound > 1) {
		snprintf(err, errlen, "conflict: %s is on %d detmds (%s): task ids are random per detmd and "
		         "two drew the same; call the one you mean with --url set to it alone", id, nfound, have);
		return -1;
	}
	if (found >= 0) {
		route_remember(id, forward_base(fws[found]));
		return found;
	}
	if (o == 0)
		return 0;       /* nobody has it: the first detmd says not_found */
	snprintf(err, errlen, "unavailable: %s is on no reachable detmd; these did not answer: %s "
	         "(its detmd may be down or restarting; try again later)", id, down);
	return -1;
}

int
route_choose(struct forward *const *fws, int n, const struct tool *t, struct json_object *args,
             char *err, size_t errlen)
{
	static const struct { const char *arg, *path; } ids[] = {
		{ "task_id", "/api/tasks/" }, { "wait_id", "/api/waits/" },
		{ "run_id", "/api/gui/agent/" }, { "clip_id", "/api/record/" },
	};
	struct json_object *v;

	if (n <= 1)
		return 0;
	if (strcmp(t->name, "task_register") == 0)
		return choose_free(fws, n, err, errlen);
	for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
		if (json_object_object_get_ex(args, ids[k].arg, &v) && json_object_is_type(v, json_type_string) &&
		    peerlist_id_ok(json_object_get_string(v)))
			return find_owner(fws, n, json_object_get_string(v), ids[k].path, err, errlen);
	return 0;
}

void
route_remember_result(struct json_object *res, const char *url)
{
	static const char *const keys[] = { "task_id", "wait_id", "run_id", "clip_id" };
	struct json_object *sc, *id;

	if (!json_object_object_get_ex(res, "structuredContent", &sc) ||
	    json_object_object_get_ex(res, "isError", NULL))
		return;
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
		if (json_object_object_get_ex(sc, keys[k], &id) && json_object_is_type(id, json_type_string))
			route_remember(json_object_get_string(id), url);
}

bool
route_merges(const struct tool *t, struct json_object *args)
{
	struct json_object *v;

	if (strcmp(t->name, "task_list") == 0)
		return true;
	return strcmp(t->name, "wait_status") == 0 && !json_object_object_get_ex(args, "wait_id", &v);
}
