/*
 * vt.h - the vision suite's harness: CHECK (tests/harness.h), the stub's
 * address (VISION_STUB_URL, VISION_STUB_KEY from tests/vision/run.sh) and
 * helpers that drive its control API.
 */
#ifndef DETM_VT_H
#define DETM_VT_H

#include <stdatomic.h>
#include <stdio.h>

#include <json-c/json.h>

#include "backends/vision.h"

#include "harness.h"


extern const struct harness_test parse_tests[];
extern const struct harness_test backend_tests[];

extern const char *vt_url;      /* http://127.0.0.1:PORT */
extern const char *vt_key;      /* the key the stub checks */

/* Control API; each returns 0 or -1 (and fails a CHECK). */
int vt_script(const char *json);
int vt_reset(void);
/* The recorded requests (a new array; caller puts it). */
json_object *vt_requests(void);

/* Test JPEGs made with TurboJPEG at start: 64x48 and 40x30. */
extern struct vision_image vt_jpeg_a, vt_jpeg_b;
/* FNV-1a 64 of bytes, as the stub prints it (16 hex digits). */
void vt_fnv1a(const unsigned char *p, size_t n, char out[17]);

#endif
