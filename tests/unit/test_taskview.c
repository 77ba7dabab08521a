/* test_taskview.c - the streamed big views (taskview_full.c) against the
 * in-memory ones (taskview.c): the same bytes, on a real SQLite file. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/jx.h"
#include "store/store.h"
#include "task/task.h"
#include "task/taskstate.h"
#include "unit.h"

static char dir[64];

static struct store *
fresh_store(void)
{
	struct store *st = NULL;
	char path[128];
	struct derr e;

	snprintf(dir, sizeof dir, "/tmp/detm-unit.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return NULL;
	snprintf(path, sizeof path, "%s/data.db", dir);
	derr_clear(&e);
	if (store_open(path, false, &st, &e) != 0)
		fprintf(stderr, "    store_open: %s\n", e.message);
	return st;
}

static void
cleanup(struct store *st)
{
	char cmd[200];

	store_close(st);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "    cleanup failed\n");
}

static int
reg(struct store *st, const char *plan_json, char id[ID_LEN])
{
	struct task_reg in = { .name = "vue \"big\" ünï" };
	struct derr e;
	int rc;

	in.plan = plan_json ? json_tokener_parse(plan_json) : NULL;
	in.metadata = json_tokener_parse("{\"n\":12345678901234567890,\"f\":0.1,\"s\":\"a/b\"}");
	rc = task_register(st, &in, id, &e);
	json_object_put(in.plan);
	json_object_put(in.metadata);
	return rc;
}

/* n actions under ordinal (-1: the current item or task-level), every
 * third with two logs, kinds of values of every sort. */
static int
add_actions(struct store *st, const char *id, int64_t ordinal, int n)
{
	char in[128], out[128], aid[ID_LEN], lid[ID_LEN];
	struct derr e;
	int64_t ord;
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		struct action_new a = { .type = "cli", .summary = "step ü 日本", .status = "completed",
		    .duration_ms = i % 2 ? -1 : i * 1.5, .has_ordinal = ordinal >= 0, .ordinal = ordinal };

		snprintf(in, sizeof in, "{\"cmd\":\"ls %d\",\"big\":123456789012345678901,\"x\":[1,null,true]}", i);
		snprintf(out, sizeof out, i % 5 ? "\"line %d\\nnext\"" : "null", i);
		a.input_json = in;
		a.output_json = i % 7 ? out : NULL;
		if (i % 3 == 0)
			a.logs = json_tokener_parse("[{\"content\":\"first \\\"q\\\"\"},"
			    "{\"log_type\":\"stderr\",\"content\":\"tab\\tend\"}]");
		bad |= task_action_add(st, id, &a, aid, &ord, &e) != 0;
		json_object_put(a.logs);
		if (i == 4)
			bad |= task_log_add(st, id, aid, "info", "a late line", lid, &e) != 0;
	}
	return bad ? -1 : 0;
}

static int
to_buf(void *cls, const char *p, size_t n)
{
	return buf_append(cls, p, n);
}

/* The streamed view of id equals jx_string of the in-memory one, both
 * with the same key added at the end. */
static bool
same_view(struct store *st, const char *id, enum task_detail d)
{
	struct store *rd = store_reader_open(st);
	struct task_view *v;
	json_object *mem;
	struct derr e;
	struct buf b;
	bool same = false;
	size_t n;
	const char *s;

	derr_clear(&e);
	buf_init(&b, 64 * 1024 * 1024);
	mem = task_summary(st, id, d, false, &e);
	v = rd != NULL ? task_view_open(rd, id, d, &e) : NULL;
	if (mem != NULL && v != NULL) {
		json_object_object_add(mem, "recording", json_tokener_parse("{\"state\":\"none\"}"));
		json_object_object_add(task_view_head(v), "recording",
		    json_tokener_parse("{\"state\":\"none\"}"));
		s = jx_string(mem, &n);
		same = task_view_write(v, to_buf, &b, &e) == 0 && b.len == n && memcmp(b.data, s, n) == 0;
		if (!same)
			fprintf(stderr, "    %zu vs %zu bytes: %.200s\n    %.200s\n", b.len, n,
			    b.data ? b.data : "", s);
	}
	json_object_put(mem);
	task_view_close(v);
	store_reader_close(rd);
	buf_free(&b);
	return same;
}

static int stop_after;

static int
stopping(void *cls, const char *p, size_t n)
{
	(void)cls;
	(void)p;
	(void)n;
	return --stop_after > 0 ? 0 : -1;
}

static void
test_streamed_views_are_the_in_memory_views(void)
{
	struct store *st = fresh_store(), *rd;
	struct item_patch p = { .status = ITEM_ACTIVE };
	struct task_view *v;
	char a[ID_LEN], b[ID_LEN];
	struct derr e;

	if (st == NULL)
		return;
	CHECK(reg(st, "[\"a\",\"b\",\"c\"]", a) == 0);
	CHECK(add_actions(st, a, 0, 205) == 0);            /* past the 200 of a view */
	CHECK(add_actions(st, a, 1, 3) == 0);
	CHECK(task_item_update(st, a, 1, &p, &e) == 0);     /* focused: item 1 */
	CHECK(reg(st, NULL, b) == 0);
	CHECK(add_actions(st, b, -1, 203) == 0);            /* task-level ones */
	CHECK(same_view(st, a, DETAIL_ACTIONS));
	CHECK(same_view(st, a, DETAIL_FOCUSED));
	CHECK(same_view(st, b, DETAIL_ACTIONS));
	CHECK(same_view(st, b, DETAIL_FOCUSED));
	CHECK(same_view(st, b, DETAIL_ITEMS));
	rd = store_reader_open(st);
	CHECK(rd != NULL);
	derr_clear(&e);
	CHECK(task_view_open(rd, "deadbeef", DETAIL_ACTIONS, &e) == NULL && e.code == DERR_NOT_FOUND);
	derr_clear(&e);
	v = task_view_open(rd, a, DETAIL_ACTIONS, &e);
	CHECK(v != NULL);
	stop_after = 50;                                    /* the reader leaves mid-way */
	CHECK(v != NULL && task_view_write(v, stopping, NULL, &e) == -1 && e.code == DERR_OK);
	task_view_close(v);
	store_reader_close(rd);
	cleanup(st);
}

/* A private reader keeps its snapshot while the writer goes on. */
static void
test_a_view_reads_one_snapshot(void)
{
	struct store *st = fresh_store(), *rd;
	struct task_view *v;
	char a[ID_LEN];
	struct derr e;
	struct buf b1, b2;

	if (st == NULL)
		return;
	CHECK(reg(st, "[\"a\"]", a) == 0);
	CHECK(add_actions(st, a, 0, 3) == 0);
	rd = store_reader_open(st);
	CHECK(rd != NULL);
	buf_init(&b1, 1 << 20);
	buf_init(&b2, 1 << 20);
	derr_clear(&e);
	v = rd != NULL ? task_view_open(rd, a, DETAIL_ACTIONS, &e) : NULL;
	CHECK(v != NULL);
	CHECK(add_actions(st, a, 0, 2) == 0);               /* after the view opened */
	CHECK(v != NULL && task_view_write(v, to_buf, &b1, &e) == 0);
	task_view_close(v);
	v = rd != NULL ? task_view_open(rd, a, DETAIL_ACTIONS, &e) : NULL;
	CHECK(v != NULL && task_view_write(v, to_buf, &b2, &e) == 0);
	task_view_close(v);
	CHECK(b1.data && strstr(b1.data, "\"actions\":3,") && strstr(b1.data, "ls 2\"") &&
	    !strstr(b1.data, "ls 3\""));
	CHECK(b2.data && strstr(b2.data, "\"actions\":5,"));
	buf_free(&b1);
	buf_free(&b2);
	store_reader_close(rd);
	cleanup(st);
}

const struct harness_test taskview_tests[] = {
	{ "streamed_views_are_the_in_memory_views", test_streamed_views_are_the_in_memory_views },
	{ "a_view_reads_one_snapshot", test_a_view_reads_one_snapshot },
	{ NULL, NULL },
};
