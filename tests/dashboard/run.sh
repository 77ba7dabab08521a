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
npm_ci "$dir" playwright-core || { echo "0 passed, 1 failed"; exit 1; }

total_pass=0
total_fail=0

browser() {
	daemon_start || { echo "0 passed, 1 failed"; return 1; }
	DETM_URL=$DETM_URL DETM_PID=$DETM_PID CHROMIUM=$chrome SHOTS=$shots node "$dir/dashboard.mjs"
	local rc=$?
	# node kills detmd on purpose (the offline check); if node stopped
	# before that (a failed check threw), detmd still runs: waiting for it
	# would hang the suite.
	kill -0 "$DETM_PID" 2>/dev/null && kill -9 "$DETM_PID" 2>/dev/null
	wait "$DETM_PID" 2>/dev/null
	DETM_PID=
	return $rc
}
trap 'daemon_kill9; pkill -f "detm-dash-xterm" 2>/dev/null' EXIT
run_part http tests/dashboard/http.sh
run_part browser browser
echo "   screenshots: $shots"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
