/* test_peerlist.c - common/peerlist.c: the URL lists detm-mcp's --url and
 * detmd's --peers take, and their expansion of a name to every address
 * (with "localhost", which /etc/hosts gives 127.0.0.1; the fleet suite
 * does three addresses in a private /etc/hosts). */
#include <pthread.h>
#include <string.h>

#include "fanout.h"
#include "peerlist.h"
#include "unit.h"

static void
test_lists_are_checked_deduplicated_and_trimmed(void)
{
	struct peerlist pl = { 0 };
	char err[200];

	CHECK(peerlist_parse("http://a:1/, http://b:2,http://a:1 https://c", &pl, err, sizeof err) == 0);
	CHECK(pl.n == 3);
	CHECK(strcmp(pl.url[0], "http://a:1") == 0 && strcmp(pl.url[2], "https://c") == 0);
	CHECK(peerlist_parse("ftp://x", &pl, err, sizeof err) == -1);
	CHECK_MSG(strstr(err, "ftp://x") != NULL, "%s", err);
}

static void
test_resolve_all_expands_a_name_and_keeps_ip_literals(void)
{
	struct peerlist given = { 0 }, got;
	char err[200];
	struct peerset *ps;
	bool v4 = false;

	CHECK(peerlist_parse("http://localhost:18790/x,http://10.1.2.3:5", &given, err, sizeof err) == 0);
	ps = peerset_new(&given, true, 30);
	CHECK(peerset_get(ps, &got) == peerset_get(ps, &got));      /* same list, same generation */
	for (int i = 0; i < got.n; i++)
		v4 |= strcmp(got.url[i], "http://127.0.0.1:18790/x") == 0;
	CHECK_MSG(v4, "localhost gave %d URLs, first %s", got.n, got.url[0]);
	CHECK(strcmp(got.url[0], "http://10.1.2.3:5") == 0);       /* sorted, the literal kept */
	for (int i = 0; i < got.n; i++)
		CHECK_MSG(strstr(got.url[i], "localhost") == NULL, "%s", got.url[i]);
	peerset_free(ps);
	ps = peerset_new(&given, false, 30);
	peerset_get(ps, &got);
	CHECK(got.n == 2 && strcmp(got.url[0], "http://localhost:18790/x") == 0);
	peerset_free(ps);
}

static void
test_ids_remembered_and_checked(void)
{
	char url[PEERLIST_URL];

	peerlist_remember("0a1b2c3d", "http://p:1");
	peerlist_remember("../etc/x", "http://p:1");
	peerlist_owner("0a1b2c3d", url, sizeof url);
	CHECK(strcmp(url, "http://p:1") == 0);
	peerlist_remember("0a1b2c3d", "http://q:2");
	peerlist_owner("0a1b2c3d", url, sizeof url);
	CHECK(strcmp(url, "http://q:2") == 0);
	peerlist_owner("../etc/x", url, sizeof url);
	CHECK(url[0] == '\0');
	CHECK(!peerlist_id_ok("0A1B2C3D") && !peerlist_id_ok("0a1b2c3") && peerlist_id_ok("deadbeef"));
}

struct fan_item {
	int i, seen;
	pthread_t by;
};

static void *
fan_one(void *arg)
{
	struct fan_item *f = arg;

	f->seen = f->i + 1;
	f->by = pthread_self();
	return NULL;
}

static void
test_fanout_runs_every_item_on_threads(void)
{
	struct fan_item it[2 * FANOUT_MAX + 6];
	int n = (int)(sizeof it / sizeof it[0]), ok = 0, other = 0;

	for (int i = 0; i < n; i++)
		it[i] = (struct fan_item){ .i = i };
	fanout_run(it, (size_t)n, sizeof it[0], fan_one);
	for (int i = 0; i < n; i++) {
		ok += it[i].seen == i + 1;
		other += !pthread_equal(it[i].by, pthread_self());
	}
	CHECK_MSG(ok == n, "%d of %d items ran once with their own item", ok, n);
	CHECK_MSG(other == n, "%d of %d on a thread of their own", other, n);
	fanout_run(NULL, 0, sizeof it[0], fan_one);     /* nothing: no call */
}

const struct harness_test peerlist_tests[] = {
	{ "fanout: every item (3 rounds) run once, each on a thread of its own", test_fanout_runs_every_item_on_threads },
	{ "peerlist: lists checked, deduplicated, trailing slash trimmed", test_lists_are_checked_deduplicated_and_trimmed },
	{ "peerlist: resolve_all expands a name to its addresses, keeps IP literals", test_resolve_all_expands_a_name_and_keeps_ip_literals },
	{ "peerlist: ids remembered by URL, only 8 lowercase hex", test_ids_remembered_and_checked },
	{ NULL, NULL },
};
