/*
 * main.c - bin/test-vision: the vision layer against bin/vision-stub (see
 * tests/vision/run.sh, which starts the stub and sets VISION_STUB_URL and
 * VISION_STUB_KEY). Prints "ok/FAIL name" per test and a closing
 * "N passed, N failed"; an argument runs only tests whose name contains it.
 */
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "backends/httpc.h"
#include "vt.h"

HARNESS_DEFINE;
const char *vt_url;
const char *vt_key;
struct vision_image vt_jpeg_a, vt_jpeg_b;

static int
control(const char *method, const char *path, const char *json, json_object **reply)
{
	char *url = xasprintf("%s%s", vt_url, path);
	json_object *body = json != NULL ? json_tokener_parse(json) : NULL;
	struct httpc_req rq = { method, url, NULL, body, 5000, 64 * 1024 * 1024 };
	struct httpc_resp rs;
	int rc = httpc_do(&rq, &rs);

	if (json != NULL && body == NULL)
		fprintf(stderr, "    bad JSON in test: %s\n", json);
	CHECK(rc == HTTPC_OK && rs.status == 200);
	if (rc != HTTPC_OK || rs.status != 200)
		fprintf(stderr, "    stub %s %s: %s %ld %s\n", method, path, rs.error, rs.status, rs.excerpt);
	if (reply != NULL) {
		*reply = rs.json;
		rs.json = NULL;
	}
	httpc_resp_free(&rs);
	json_object_put(body);
	free(url);
	return rc == HTTPC_OK && rs.status == 200 ? 0 : -1;
}

int
vt_script(const char *json)
{
	return control("POST", "/_stub/script", json, NULL);
}

int
vt_reset(void)
{
	return control("POST", "/_stub/reset", NULL, NULL);
}

json_object *
vt_requests(void)
{
	json_object *r = NULL, *arr = NULL;

	if (control("GET", "/_stub/requests", NULL, &r) == 0 && json_object_object_get_ex(r, "requests", &arr))
		arr = json_object_get(arr);
	json_object_put(r);
	return arr != NULL ? arr : json_object_new_array();
}

void
vt_fnv1a(const unsigned char *p, size_t n, char out[17])
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static int
make_jpeg(int w, int h, int seed, struct vision_image *out)
{
	tjhandle tj = tjInitCompress();
	unsigned char *rgb = xmalloc((size_t)w * (size_t)h * 3), *jpeg = NULL;
	unsigned long len = 0;
	int rc;

	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			unsigned char *p = rgb + ((size_t)y * (size_t)w + (size_t)x) * 3;

			p[0] = (unsigned char)(x * 4 + seed);
			p[1] = (unsigned char)(y * 5);
			p[2] = (unsigned char)((x ^ y) * 3 + seed);
		}
	rc = tj != NULL ? tjCompress2(tj, rgb, w, 0, h, TJPF_RGB, &jpeg, &len, TJSAMP_420, 80, 0) : -1;
	free(rgb);
	if (tj != NULL)
		tjDestroy(tj);
	if (rc != 0)
		return -1;
	out->jpeg = xmalloc(len);
	memcpy((void *)(uintptr_t)out->jpeg, jpeg, len);
	out->len = len;
	tjFree(jpeg);
	return 0;
}

int
main(int argc, char **argv)
{
	const struct harness_test *const tables[] = { parse_tests, backend_tests };

	vt_url = getenv("VISION_STUB_URL");
	vt_key = getenv("VISION_STUB_KEY");
	if (vt_url == NULL || vt_key == NULL) {
		fprintf(stderr, "test-vision: run through tests/vision/run.sh (VISION_STUB_URL, VISION_STUB_KEY)\n");
		harness_count(false);
		return harness_finish();
	}
	if (make_jpeg(64, 48, 0, &vt_jpeg_a) != 0 ||
	    make_jpeg(40, 30, 77, &vt_jpeg_b) != 0) {
		fprintf(stderr, "test-vision: setup failed\n");
		harness_count(false);
		return harness_finish();
	}
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		harness_run(tables[t], argc > 1 ? argv[1] : NULL);
	free((void *)(uintptr_t)vt_jpeg_a.jpeg);
	free((void *)(uintptr_t)vt_jpeg_b.jpeg);
	httpc_global_cleanup();
	return harness_finish();
}
