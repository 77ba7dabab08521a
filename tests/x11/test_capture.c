/* test_capture.c - placeholder table; filled by the module's author. */
#include "xh.h"

const struct xh_test capture_tests[] = {
	{ NULL, NULL },
};
