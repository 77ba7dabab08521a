#!/usr/bin/env bash
# run.sh - run every test suite; exit non-zero if any suite fails.
#
# Each suite is an executable (tests/NAME/run.sh, or a C test program) that
# prints its own closing line
# "N passed, N failed" and exits non-zero on any failure. Suites run in the
# order below; DETM_BIN selects bin/ or bin-asan/. SUITES="unit http" runs a
# subset.
set -u
cd "$(dirname "$0")/.."
export DETM_BIN=${DETM_BIN:-bin}
all_suites=(layers unit x11 http persist mcp desktop typing vision waits wake gui uitars agent record dashboard takeover memory usage ops a11y hostile load fuzz)
read -r -a suites <<<"${SUITES:-${all_suites[*]}}"

declare -A cmd=(
	[unit]="$DETM_BIN/test-unit"
	[http]="tests/http/run.sh"
	[persist]="tests/persist/run.sh"
	[mcp]="tests/mcp/run.sh"
	[x11]="$DETM_BIN/test-x11"
	[desktop]="tests/desktop/run.sh"
	[typing]="tests/typing/run.sh"
	[vision]="tests/vision/run.sh"
	[waits]="tests/waits/run.sh"
	[wake]="tests/wake/run.sh"
	[gui]="tests/gui/run.sh"
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
	[a11y]="tests/a11y/run.sh"
	[ops]="tests/ops/run.sh"
	[layers]="tools/check-layers.sh"
)
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
	if ! $c; then
		failed+=("$s")
	fi
	echo "== suite $s took $(( $(date +%s) - start ))s"
done
if [ ${#failed[@]} -ne 0 ]; then
	echo "FAILED suites: ${failed[*]}"
	exit 1
fi
echo "all suites passed: ${suites[*]}"
