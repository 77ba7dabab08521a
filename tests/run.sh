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
all_suites=(layers unit x11 http persist faults mcp desktop launch osworld clip typing vision waits wake gui effect dialects uitars agent openclaw record dashboard takeover memory usage done loops replay replay-real ops drain fleet deploy a11y apps hostile load fuzz)
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
	[osworld]="tests/osworld/run.sh"
	[typing]="tests/typing/run.sh"
	[vision]="tests/vision/run.sh"
	[waits]="tests/waits/run.sh"
	[wake]="tests/wake/run.sh"
	[gui]="tests/gui/run.sh"
	[effect]="tests/effect/run.sh"
	[uitars]="tests/uitars/run.sh"
	[agent]="tests/agent/run.sh"
	[openclaw]="tests/openclaw/run.sh"
	[record]="tests/record/run.sh"
	[dashboard]="tests/dashboard/run.sh"
	[takeover]="tests/takeover/run.sh"
	[fuzz]="tests/fuzz/run.sh"
	[hostile]="tests/hostile/run.sh"
	[load]="tests/load/run.sh"
	[memory]="tests/memory/run.sh"
	[usage]="tests/usage/run.sh"
	[done]="tests/done/run.sh"
	[loops]="tests/loops/run.sh"
	[replay]="tests/replay/run.sh"
	[replay-real]="tests/replay/real.sh"
	[a11y]="tests/a11y/run.sh"
	[apps]="tests/apps/run.sh"
	[ops]="tests/ops/run.sh"
	[drain]="tests/drain/run.sh"
	[fleet]="tests/fleet/run.sh"
	[deploy]="tests/deploy/run.sh"
	[layers]="tools/check-layers.sh"
)
# Suites that run alone even with TEST_JOBS > 1: nothing else runs while
# they do. apps starts five real desktop applications at once (chromium,
# firefox, LibreOffice, ...), each of which takes seconds of CPU to answer
# an input on 2 loaded cores; beside another suite its fixed-order scripts
# (click a field, then type) met the app before it had taken the click.
# typing runs two busy loops of its own and meets README's known issue
# "Typing can change text" (a spare keycode reused 500 ms after its last
# key, xterm reading later under load): beside another suite it only adds
# load to both. replay-real replays a real mousepad's Save As: under heavy
# load (ASan beside two busy loops) one replay in three said done and wrote
# no file (README known issue), so it too runs alone.
declare -A exclusive=([apps]=1 [typing]=1 [replay-real]=1)
base_asan=${ASAN_OPTIONS:-}
base_ubsan=${UBSAN_OPTIONS:-}
jobs=${TEST_JOBS:-1}
case $jobs in ''|*[!0-9]*|0) echo "TEST_JOBS must be a positive number (got '$jobs')"; exit 2 ;; esac
work=$(mktemp -d /tmp/detm-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
# sanitizer_reports SUITE DIR: 0 (and the reports shown and kept) if the
# suite's processes wrote any into DIR.
sanitizer_reports() {
	local keep=${DETM_TEST_OUT:-test-output}/sanitizer/$1 f
	[ -n "$base_asan" ] || return 1
	[ -n "$(ls -A "$2")" ] || return 1
	mkdir -p "$keep"
	for f in "$2"/*; do
		echo "FAIL sanitizer report from $(basename "$f") during suite $1:"
		grep -E 'ERROR|SUMMARY|runtime error|#[0-4] ' "$f" | head -12
	done
	mv "$2"/* "$keep/"
	return 0
}
# run_suite NAME: runs it (its sanitizer reports in a folder of its own),
# printing what it prints and how long it took; its status in
# $work/NAME.rc.
run_suite() {
	local s=$1 c=${cmd[$1]:-} start rc=0 sd="$work/san.$1"
	if [ -z "$c" ] || [ ! -x "${c%% *}" ]; then
		echo "== suite $s: not present ($c)"
		echo 1 >"$work/$s.rc"
		return
	fi
	echo "== suite $s"
	start=$(date +%s)
	mkdir -p "$sd"
	if [ -n "$base_asan" ] && [ "$s" != fuzz ]; then
		export ASAN_OPTIONS="$base_asan:log_path=$sd/asan:log_exe_name=1"
		export UBSAN_OPTIONS="$base_ubsan:log_path=$sd/ubsan:log_exe_name=1"
	elif [ -n "$base_asan" ]; then
		export ASAN_OPTIONS="$base_asan" UBSAN_OPTIONS="$base_ubsan"
	fi
	$c || rc=1
	sanitizer_reports "$s" "$sd" && rc=1
	echo "== suite $s took $(( $(date +%s) - start ))s"
	echo "$rc" >"$work/$s.rc"
}
# TEST_JOBS=N runs N suites at once, each one's output printed whole when
# it ends (1, the default: one after another, printed as they go); an
# exclusive suite waits until the others end and runs alone.
# With TEST_JOBS > 1 the exclusive suites go first: none waits for two
# others to drain half-way through the list.
if [ "$jobs" -gt 1 ]; then
	first=() rest=()
	for s in "${suites[@]}"; do
		if [ -n "${exclusive[$s]:-}" ]; then first+=("$s"); else rest+=("$s"); fi
	done
	suites=("${first[@]}" "${rest[@]}")
fi
running=()
# show_done: the output of every suite that ended, once.
show_done() {
	local r
	for r in "${running[@]}"; do
		[ -e "$work/$r.rc" ] && [ ! -e "$work/$r.shown" ] && { cat "$work/$r.out"; : >"$work/$r.shown"; }
	done
}
for s in "${suites[@]}"; do
	if [ "$jobs" -eq 1 ]; then
		run_suite "$s"
		continue
	fi
	limit=$jobs
	[ -n "${exclusive[$s]:-}" ] && limit=1
	while [ "$(jobs -rp | wc -l)" -ge "$limit" ]; do
		wait -n 2>/dev/null || true
		show_done
	done
	run_suite "$s" >"$work/$s.out" 2>&1 &
	running+=("$s")
	if [ -n "${exclusive[$s]:-}" ]; then
		wait
		show_done
	fi
done
wait
show_done
failed=()
for s in "${suites[@]}"; do
	[ "$(cat "$work/$s.rc" 2>/dev/null)" = 0 ] || failed+=("$s")
done
if [ ${#failed[@]} -ne 0 ]; then
	echo "FAILED suites: ${failed[*]}"
	exit 1
fi
echo "all suites passed: ${suites[*]}"
