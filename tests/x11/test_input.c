/* test_input.c - placeholder table; filled by the module's author. */
#include "xh.h"

const struct xh_test input_tests[] = {
	{ NULL, NULL },
};
