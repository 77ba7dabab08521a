#!/usr/bin/env bash
# run.sh - run every test suite; exit non-zero if any suite fails.
#
# Each suite is an executable (tests/NAME/run.sh, or a C test program) that
# prints its own closing line
# "N passed, N failed" and exits non-zero on any failure. Suites run in the
# order below; DETM_BIN selects bin/ or bin-asan/. SUITES="unit http" runs a
# subset.
#
# Under the sanitizers (ASAN_OPTIONS set, as `make asan-test` does), every
# sanitizer report of every process a suite starts (detmd, detm-mcp, the
# helpers and test programs) goes to a log file of its own (log_path), and
# a suite after which any such file exists fails, whatever its own checks
# said: a leak at detmd's clean stop or a UBSan report in a helper is not
# hidden in a log nobody reads. The reports are kept in
# $DETM_TEST_OUT/sanitizer/SUITE/. The fuzz suite keeps its own handling
# (libFuzzer reads the reports itself).
set -u
cd "$(dirname "$0")/.."
export DETM_BIN=${DETM_BIN:-bin}
all_suites=(layers unit x11 http persist faults mcp desktop launch clip typing vision waits wake gui effect uitars agent record dashboard takeover memory usage done ops a11y apps hostile load fuzz)
read -r -a suites <<<"${SUITES:-${all_suites[*]}}"

declare -A cmd=(
	[unit]="$DETM_BIN/test-unit"
	[http]="tests/http/run.sh"
	[persist]="tests/persist/run.sh"
	[faults]="tests/faults/run.sh"
	[mcp]="tests/mcp/run.sh"
	[x11]="$DETM_BIN/test-x11"
	[desktop]="tests/desktop/run.sh"
	[clip]="tests/clip/run.sh"
	[dialects]="tests/dialects/run.sh"
	[launch]="tests/launch/run.sh"
	[typing]="tests/typing/run.sh"
	[vision]="tests/vision/run.sh"
	[waits]="tests/waits/run.sh"
	[wake]="tests/wake/run.sh"
	[gui]="tests/gui/run.sh"
	[effect]="tests/effect/run.sh"
	[uitars]="tests/uitars/run.sh"
	[agent]="tests/agent/run.sh"
	[record]="tests/record/run.sh"
	[dashboard]="tests/dashboard/run.sh"
	[takeover]="tests/takeover/run.sh"
	[fuzz]="tests/fuzz/run.sh"
	[hostile]="tests/hostile/run.sh"
	[load]="tests/load/run.sh"
	[memory]="tests/memory/run.sh"
	[usage]="tests/usage/run.sh"
	[done]="tests/done/run.sh"
	[a11y]="tests/a11y/run.sh"
	[apps]="tests/apps/run.sh"
	[ops]="tests/ops/run.sh"
	[layers]="tools/check-layers.sh"
)
san=
base_asan=${ASAN_OPTIONS:-}
base_ubsan=${UBSAN_OPTIONS:-}
if [ -n "$base_asan" ]; then
	san=$(mktemp -d /tmp/detm-san.XXXXXX)
	trap 'rm -rf "$san"' EXIT
fi
# sanitizer_reports SUITE: 0 (and the reports shown and kept) if the suite's
# processes wrote any.
sanitizer_reports() {
	local keep=${DETM_TEST_OUT:-test-output}/sanitizer/$1 f
	[ -n "$san" ] || return 1
	[ -n "$(ls -A "$san")" ] || return 1
	mkdir -p "$keep"
	for f in "$san"/*; do
		echo "FAIL sanitizer report from $(basename "$f") during suite $1:"
		grep -E 'ERROR|SUMMARY|runtime error|#[0-4] ' "$f" | head -12
	done
	mv "$san"/* "$keep/"
	return 0
}
failed=()
for s in "${suites[@]}"; do
	c=${cmd[$s]:-}
	if [ -z "$c" ] || [ ! -x "${c%% *}" ]; then
		echo "== suite $s: not present ($c)"
		failed+=("$s")
		continue
	fi
	echo "== suite $s"
	start=$(date +%s)
	if [ -n "$san" ] && [ "$s" != fuzz ]; then
		export ASAN_OPTIONS="$base_asan:log_path=$san/asan"
		export UBSAN_OPTIONS="$base_ubsan:log_path=$san/ubsan"
	elif [ -n "$san" ]; then
		export ASAN_OPTIONS="$base_asan" UBSAN_OPTIONS="$base_ubsan"
	fi
	rc=0
	$c || rc=1
	sanitizer_reports "$s" && rc=1
	[ "$rc" -eq 0 ] || failed+=("$s")
	echo "== suite $s took $(( $(date +%s) - start ))s"
done
if [ ${#failed[@]} -ne 0 ]; then
	echo "FAILED suites: ${failed[*]}"
	exit 1
fi
echo "all suites passed: ${suites[*]}"
