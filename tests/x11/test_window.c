/* test_window.c - placeholder table; filled by the module's author. */
#include "xh.h"

const struct xh_test window_tests[] = {
	{ NULL, NULL },
};
