#!/usr/bin/env bash
# run.sh - the dashboard suite: tests/dashboard/dashboard.mjs drives Debian's
# chromium (headless, through playwright-core from npm, lockfile committed)
# against a real detmd on a free port with real Xvfb task displays and
# xterms. Screenshots of the main views go to $DETM_TEST_OUT/dashboard
# (default test-output/dashboard). Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

dir=tests/dashboard
shots=${DETM_TEST_OUT:-test-output}/dashboard
mkdir -p "$shots"
chrome=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chrome" ] || ! command -v node >/dev/null; then
	echo "FAIL dashboard: needs $chrome and node (scripts/install-deps.sh test)"
	echo "0 passed, 1 failed"
	exit 1
fi
if [ ! -d "$dir/node_modules/playwright-core" ] &&
   ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>npm-ci.log); then
	echo "FAIL dashboard: npm ci failed in $dir:"
	cat "$dir/npm-ci.log"
	echo "0 passed, 1 failed"
	exit 1
fi
rm -f "$dir/npm-ci.log"

total_pass=0
total_fail=0
# part NAME CMD...: run one part, show it, add its closing line to the sum.
part() {
	local name=$1 out rc line p f
	shift
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed '$d'
	line=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
	else
		printf '%s\n' "$line"
		p=0 f=1
	fi
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	echo "   ($name: $p passed, $f failed)"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
}

browser() {
	daemon_start || { echo "0 passed, 1 failed"; return 1; }
	DETM_URL=$DETM_URL DETM_PID=$DETM_PID CHROMIUM=$chrome SHOTS=$shots node "$dir/dashboard.mjs"
	local rc=$?
	wait "$DETM_PID" 2>/dev/null   # node killed it on purpose (the offline check)
	DETM_PID=
	return $rc
}
trap 'daemon_kill9; pkill -f "detm-dash-xterm" 2>/dev/null' EXIT
part http tests/dashboard/http.sh
part browser browser
echo "   screenshots: $shots"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
