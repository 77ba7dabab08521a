#!/usr/bin/env bash
# run.sh - the http suite: every tests/http/cases/*.case against a fresh
# detmd, then tests/http/token/*.case against a second detmd started with
# --token (ACU_TOKEN). Prints each case, then one closing line
# "N passed, N failed" for the whole suite; exits non-zero on any failure.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

HTTPCASE="$DETM_BIN/httpcase"
TOKEN=secret-token-42
total_pass=0
total_fail=0
tmp=$(mktemp -d /tmp/detm-http.XXXXXX)

# run_cases URL FILE... : run httpcase, echo its output, add up its counts.
run_cases() {
	local url=$1 out rc line p f
	shift
	"$HTTPCASE" --url "$url" --var TOKEN="$TOKEN" "$@" >"$tmp/out" 2>&1
	rc=$?
	grep -a -v -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/out"
	line=$(grep -a -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/out" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL httpcase exited $rc without a closing line"
		total_fail=$((total_fail + 1))
		return
	fi
	read -r p _ f _ <<<"$line"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		total_fail=$((total_fail + 1))
	fi
}

cleanup() {
	daemon_stop
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -x "$HTTPCASE" ] || [ ! -x "$DETM_BIN/detmd" ]; then
	echo "FAIL missing $HTTPCASE or $DETM_BIN/detmd (run make all $HTTPCASE)"
	echo "0 passed, 1 failed"
	exit 1
fi

# Plain daemon: every case file.
if daemon_start; then
	run_cases "$DETM_URL" tests/http/cases/*.case
	if ! kill -0 "$DETM_PID" 2>/dev/null; then
		echo "FAIL detmd died during the cases; its output:"
		tail -n 30 "$DETM_DATA/stdout.log"
		total_fail=$((total_fail + 1))
	fi
	daemon_stop
	if [ "${DETM_RC:-0}" -ne 0 ]; then
		echo "FAIL detmd exited $DETM_RC on SIGTERM"
		total_fail=$((total_fail + 1))
	fi
	rm -rf "$DETM_DATA"
else
	total_fail=$((total_fail + 1))
fi
unset DETM_DATA

# Token daemon: the auth cases.
DETM_TOKEN=$TOKEN
if daemon_start; then
	run_cases "$DETM_URL" tests/http/token/*.case
	daemon_stop
	rm -rf "$DETM_DATA"
else
	echo "FAIL detmd with ACU_TOKEN did not start"
	total_fail=$((total_fail + 1))
fi

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
