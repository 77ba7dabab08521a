/*
 * merge.c - see merge.h. The list key is the first array in the tool's
 * reply ("tasks", "waits"); each detmd's reply is read from the shaped
 * result's structuredContent, so the per-detmd call is exactly the one a
 * single detmd would get.
 */
#include "merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fanout.h"
#include "peerlist.h"
#include "result.h"
#include "route.h"

#define MERGE_TIMEOUT_S 10L     /* one detmd's part of a merged list */

/* One detmd's part, asked on a thread of its own with its own copy of the
 * arguments and of the steering (no progress: it is the caller thread's). */
struct part {
	struct forward *fw;
	const struct tool *t;
	struct json_object *args;       /* owned copy */
	struct forward_ctl ctl;
	struct json_object *res;        /* NULL: cancelled */
};

static void *
part_run(void *arg)
{
	struct part *p = arg;

	p->res = forward_call(p->fw, p->t, p->args, &p->ctl);
	return NULL;
}

static const char *
list_key(const struct tool *t)
{
	return strcmp(t->name, "task_list") == 0 ? "tasks" : "waits";
}

static const char *
str_of(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : "";
}

/* The text of a failed result (its first content block). */
static const char *
error_text(struct json_object *res)
{
	struct json_object *c, *b;

	if (json_object_object_get_ex(res, "content", &c) && (b = json_object_array_get_idx(c, 0)) != NULL)
		return str_of(b, "text");
	return "failed";
}

static void
add_detmd(struct json_object *all, struct json_object *sc, const char *key, const char *url)
{
	struct json_object *arr;

	if (!json_object_object_get_ex(sc, key, &arr) || !json_object_is_type(arr, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(e, json_type_object))
			continue;
		json_object_object_add(e, "detmd", json_object_new_string(url));
		json_object_array_add(all, json_object_get(e));
		route_remember(str_of(e, strcmp(key, "tasks") == 0 ? "task_id" : "wait_id"), url);
	}
}

struct json_object *
merge_call(struct forward *const *fws, int n, const struct tool *t, struct json_object *args,
           struct forward_ctl *ctl)
{
	struct json_object *all = json_object_new_array(), *down = json_object_new_array(), *out, *v;
	const char *key = list_key(t);
	char why[1500] = "";
	size_t o = 0, len;
	long long limit = 0;
	int ok = 0;

	struct part *p = calloc((size_t)n, sizeof *p);
	bool cancelled = false;

	if (p == NULL)
		abort();
	for (int i = 0; i < n; i++) {
		struct json_object *copy = NULL;

		p[i].fw = fws[i];
		p[i].t = t;
		p[i].args = json_object_deep_copy(args, &copy, NULL) == 0 ? copy : json_object_new_object();
		p[i].ctl = (struct forward_ctl){ .cancel = ctl->cancel, .timeout_s = MERGE_TIMEOUT_S };
	}
	fanout_run(p, (size_t)n, sizeof *p, part_run);	/* hung detmds cost one MERGE_TIMEOUT_S */
	for (int i = 0; i < n; i++) {
		struct json_object *res = p[i].res, *sc, *d;

		json_object_put(p[i].args);
		if (res == NULL || cancelled) { /* cancelled */
			cancelled = true;
			json_object_put(res);
			continue;
		}
		if (json_object_object_get_ex(res, "isError", NULL) ||
		    !json_object_object_get_ex(res, "structuredContent", &sc)) {
			d = json_object_new_object();
			json_object_object_add(d, "detmd", json_object_new_string(forward_base(fws[i])));
			json_object_object_add(d, "error", json_object_new_string(error_text(res)));
			json_object_array_add(down, d);
			if (o < sizeof why)
				o += (size_t)snprintf(why + o, sizeof why - o, "%s%s: %.300s", o ? "; " : "",
				                      forward_base(fws[i]), error_text(res));
		} else {
			add_detmd(all, sc, key, forward_base(fws[i]));
			ok++;
		}
		json_object_put(res);
	}
	free(p);
	if (cancelled) {
		json_object_put(all);
		json_object_put(down);
		return NULL;
	}
	if (ok == 0) {
		json_object_put(all);
		json_object_put(down);
		return result_error(NULL, "no detmd answered %s: %s", t->name, why);
	}
	json_object_array_sort(all, peerlist_newest_first);
	if (json_object_object_get_ex(args, "limit", &v))
		limit = json_object_get_int64(v);
	len = json_object_array_length(all);
	if (limit > 0 && len > (size_t)limit)
		json_object_array_del_idx(all, (size_t)limit, len - (size_t)limit);
	out = json_object_new_object();
	json_object_object_add(out, key, all);
	json_object_object_add(out, "detmds", json_object_new_int(n));
	json_object_object_add(out, "unreachable", down);
	if (o > 0)
		json_object_object_add(out, "note", json_object_new_string(why));
	return result_shape(t, out);
}
