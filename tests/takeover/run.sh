#!/usr/bin/env bash
# run.sh - the takeover suite: a human drives a task's desktop from the
# dashboard while the agent is fenced off.
#
#   browser: tests/takeover/takeover.mjs drives Debian's chromium (headless,
#            playwright-core from tests/dashboard's lockfile) against a real
#            detmd with a real Xvfb task display, xev and an xterm on it,
#            bin/wake-recv as the wake URL sink, and bin/detm-mcp for
#            request_human
#   lease:   only the lease's holder releases; force:true is the operator's
#            override, recorded as forced
#   limits:  the idle timeout releases by itself (with a thread message and
#            a wake event); token mode refuses a takeover without the token
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

tmp=$(mktemp -d /tmp/detm-takeover.XXXXXX)
RECV_PID=
cleanup() {
	daemon_kill9
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
export LC_ALL=C.UTF-8
total_pass=0
total_fail=0
dash=tests/dashboard
chrome=${CHROMIUM:-/usr/bin/chromium}

start_recv() { # start_recv NAME: bin/wake-recv into $tmp/NAME.log; sets RECV_URL
	rm -f "$tmp/$1.port"
	"$DETM_BIN/wake-recv" --out "$tmp/$1.log" --port-file "$tmp/$1.port" >/dev/null 2>&1 &
	RECV_PID=$!
	wait_for 10 test -s "$tmp/$1.port" || return 1
	RECV_URL="http://127.0.0.1:$(cat "$tmp/$1.port")/wake"
}

browser() {
	if [ ! -x "$chrome" ] || ! command -v node >/dev/null; then
		echo "FAIL takeover: needs $chrome and node (scripts/install-deps.sh test)"
		echo "0 passed, 1 failed"
		return 1
	fi
	if ! npm_ci "$dash" playwright-core; then
		echo "0 passed, 1 failed"
		return 1
	fi
	start_recv wake || { echo "FAIL wake receiver"; echo "0 passed, 1 failed"; return 1; }
	mkdir -p "$tmp/browser"
	ACU_STUCK_DETECTION=0 DETM_DATA=$tmp/browser daemon_start --wake-url "$RECV_URL" --openclaw-cli "" \
		|| { echo "0 passed, 1 failed"; return 1; }
	DETM_URL=$DETM_URL CHROMIUM=$chrome WAKE_LOG=$tmp/wake.log OUT=$tmp DETM_BIN=$DETM_BIN \
		node tests/takeover/takeover.mjs
	local rc=$?
	daemon_stop     # SIGTERM: detmd stops the displays it started
	kill "$RECV_PID" 2>/dev/null
	return $rc
}

# thread_has TASK TEXT: a message of TASK's thread contains TEXT
thread_has() {
	curl -s ${DETM_TOKEN:+-H "Authorization: Bearer $DETM_TOKEN"} "$DETM_URL/api/tasks/$1/messages" |
		jq -e --arg s "$2" '[.messages[].content | select(contains($s))] | length > 0' >/dev/null
}
driver_is() {
	[ "$(curl -s ${DETM_TOKEN:+-H "Authorization: Bearer $DETM_TOKEN"} "$DETM_URL/api/tasks/$1" |
		jq -r .driver.driver)" = "$2" ]
}
tapi() { # api with the token
	CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X "$1" "$DETM_URL$2" \
		-H 'Content-Type: application/json' -H "Authorization: Bearer $DETM_TOKEN" \
		${3:+--data-binary "$3"})
}

limits() {
	PASS=0 FAIL=0
	start_recv idle || { bad "wake receiver"; finish; return; }
	mkdir -p "$tmp/limits"
	ACU_STUCK_DETECTION=0 ACU_RECORD=0 DETM_TOKEN=tk-secret-$$ DETM_DATA=$tmp/limits daemon_start --takeover-idle 1 \
		--wake-url "$RECV_URL" --openclaw-cli "" || { bad "daemon start"; finish; return; }
	export DETM_TOKEN=tk-secret-$$
	tapi POST /api/tasks '{"name":"limits","display":true,"display_resolution":"640x480"}'
	expect "a task with its own display (token given)" 201
	T=$(jqr .task_id)
	api POST "/api/tasks/$T/takeover" '{"reason":"no token"}'
	expect "token mode: a takeover without the token is refused" 401
	check "and the agent still drives" driver_is "$T" agent
	tapi POST "/api/tasks/$T/takeover" '{"reason":"with token"}'
	expect "token mode: with the token the takeover starts" 200 '.driver == "human" and (.lease | test("^[0-9a-f]{32}$"))'
	curl -s -N --max-time 2 -H "Authorization: Bearer $DETM_TOKEN" "$DETM_URL/api/events?since=0" >"$tmp/events" 2>/dev/null
	check "the event stream carries the takeover" grep -q "^event: takeover" "$tmp/events"
	check "the idle timeout hands the desktop back by itself" wait_for 20 driver_is "$T" agent
	check "and the thread says why" thread_has "$T" "no human input for the idle timeout"
	check "and the agent is woken with the summary" wait_for 10 sh -c \
		"grep -q '\"event\":\"human_released\"' '$tmp/idle.log' && grep -q '\"ended_by\":\"idle_timeout\"' '$tmp/idle.log'"
	tapi POST "/api/tasks/$T/release" '{}'
	expect "releasing what is no longer taken over is a conflict" 409 '.error.code == "conflict"'
	unset DETM_TOKEN
	daemon_stop
	kill "$RECV_PID" 2>/dev/null
	finish
}

# The lease: a client with only the API token (the agent) cannot end a
# human's takeover; the lease's holder can; force:true is the operator's
# override and is recorded as forced.
lease() {
	PASS=0 FAIL=0
	mkdir -p "$tmp/lease"
	ACU_STUCK_DETECTION=0 ACU_RECORD=0 DETM_TOKEN=tk-lease-$$ DETM_DATA=$tmp/lease daemon_start \
		--openclaw-cli "" || { bad "daemon start"; finish; return; }
	export DETM_TOKEN=tk-lease-$$
	tapi POST /api/tasks '{"name":"lease","display":true,"display_resolution":"640x480"}'
	expect "a task with its own display" 201
	T=$(jqr .task_id)
	tapi POST "/api/tasks/$T/takeover" '{"reason":"typing a password"}'
	expect "the human takes over; the lease is a 128-bit secret" 200 '.lease | test("^[0-9a-f]{32}$")'
	L=$(jqr .lease)
	tapi POST "/api/tasks/$T/release" '{"note":"agent wants the desktop"}'
	expect "a release without the lease is refused (403, says to send the lease or force)" 403 \
		'.error.code == "forbidden" and (.error.message | test("no lease given")) and (.error.message | test("force"))'
	check "and the human still drives" driver_is "$T" human
	tapi POST "/api/tasks/$T/release" '{"lease":"0123456789abcdef0123456789abcdef"}'
	expect "a release with a wrong lease is refused" 403 '.error.message | test("does not hold the takeover")'
	tapi POST "/api/tasks/$T/release" "{\"lease\":\"${L:0:8}\"}"
	expect "and so is one with the lease's first 8 digits" 403
	check "the human still drives after both" driver_is "$T" human
	tapi POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"mouse_move\",\"x\":5,\"y\":5}"
	expect "the agent's input is still fenced off" 409 '.error.code == "human_control"'
	tapi POST "/api/tasks/$T/release" "{\"lease\":\"$L\",\"note\":\"done\"}"
	expect "with the lease the takeover ends (not forced)" 200 \
		'.driver == "agent" and .ended_by == "release" and .forced == false'
	check "and the agent drives" driver_is "$T" agent
	tapi POST "/api/tasks/$T/takeover" '{"reason":"again"}'
	expect "taken over again" 200
	L2=$(jqr .lease)
	check "a new takeover gets a new lease" [ -n "$L2" -a "$L2" != "$L" ]
	tapi POST "/api/tasks/$T/release" '{"force":"yes"}'
	expect "force must be a boolean" 400
	tapi POST "/api/tasks/$T/release" '{"force":true,"note":"operator override"}'
	expect "force:true ends it without the lease, marked forced" 200 \
		'.driver == "agent" and .ended_by == "forced_release" and .forced == true'
	check "the thread records the release as forced" thread_has "$T" "FORCED to end without the human's lease"
	unset DETM_TOKEN
	daemon_stop
	finish
}

run_part browser browser
run_part lease lease
run_part limits limits
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
