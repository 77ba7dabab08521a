/*
 * unit.h - the unit tests' tables: each test is a function that calls
 * CHECK() (tests/harness.h).
 */
#ifndef DETM_UNIT_H
#define DETM_UNIT_H

#include "harness.h"

/* Each test file exports its table, ended by { NULL, NULL }. */
extern const struct harness_test util_tests[];
extern const struct harness_test oswform_tests[];
extern const struct harness_test state_tests[];
extern const struct harness_test http_tests[];
extern const struct harness_test store_tests[];
extern const struct harness_test store_fault_tests[];
extern const struct harness_test humanize_tests[];
extern const struct harness_test takeover_tests[];
extern const struct harness_test usage_tests[];
extern const struct harness_test checks_tests[];
extern const struct harness_test a11ymatch_tests[];
extern const struct harness_test jsjson_tests[];
extern const struct harness_test a11yreply_tests[];
extern const struct harness_test completion_tests[];
extern const struct harness_test launch_tests[];
extern const struct harness_test taskview_tests[];
extern const struct harness_test expect_tests[];
extern const struct harness_test loopdet_tests[];
extern const struct harness_test peerlist_tests[];

#endif
