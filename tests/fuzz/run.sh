#!/usr/bin/env bash
# run.sh - the fuzz suite: each libFuzzer target in bin-fuzz/ (clang, ASan +
# UBSan, leak detection on) runs for FUZZ_SECONDS (20; `make fuzz`: 600)
# from the seed corpus in tests/fuzz/corpus/<target> with tests/fuzz/json.dict.
# A crash, a sanitizer report, a leak or a timeout fails the target; its
# input is kept in test-output/fuzz/. Prints executions per target and
# "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

secs=${FUZZ_SECONDS:-20}
keep=${DETM_TEST_OUT:-test-output}/fuzz
tmp=$(mktemp -d /tmp/detm-fuzz.XXXXXX)
trap 'rm -rf "$tmp" /tmp/detm-fuzz-http.*' EXIT
mkdir -p "$keep"
for target in http parse rpc; do
	bin=bin-fuzz/fuzz_$target
	if [ ! -x "$bin" ]; then
		bad "fuzz_$target" "$bin is missing (make fuzz-bins; needs clang and libclang-rt-14-dev)"
		continue
	fi
	mkdir -p "$tmp/$target"
	cp tests/fuzz/corpus/$target/* "$tmp/$target/"
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-dict=tests/fuzz/json.dict -artifact_prefix="$tmp/$target-" "$tmp/$target" \
		>"$tmp/$target.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' "$tmp/$target.log")
	cov=$(grep -o 'cov: [0-9]*' "$tmp/$target.log" | tail -1)
	arts=$(ls "$tmp/$target-"* 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ -z "$arts" ] && [ -n "$runs" ]; then
		ok "fuzz_$target: $runs, $cov, corpus $(ls "$tmp/$target" | wc -l) inputs, no crash, leak or sanitizer report"
	else
		cp $arts "$keep/" 2>/dev/null
		grep -E 'ERROR|SUMMARY|Sanitizer|leak' "$tmp/$target.log" | head -5
		bad "fuzz_$target" "exit $rc; inputs kept in $keep: $(basename -a $arts 2>/dev/null | tr '\n' ' ')"
	fi
done
finish
