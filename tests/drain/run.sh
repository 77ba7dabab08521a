#!/usr/bin/env bash
# tests/drain/run.sh - the probes and drain of issue 39, against a real
# detmd (real SQLite, real Xvfb, detm-mcp as the MCP client):
#
#   probes     /livez and /readyz answer without the token (every other
#              route needs it), POST /api/drain does not
#   drain      three tasks, an agent logging actions on them from the
#              background, then POST /api/drain: a new task is refused
#              (HTTP 503 "draining", the same message as an MCP tool error,
#              the Python route too), the running ones go on (actions,
#              items, completion), /readyz names "draining", /metrics says
#              detm_draining 1, POST /api/drain?wait= returns drained:true
#              once the last task ends; every action the agent was told
#              was stored is there (none lost); SIGTERM ends a pending
#              ?wait= and detmd stops cleanly
#   disk       the data dir on a 4 MB tmpfs filled to the last byte (root;
#              else a read-only chmod): /readyz 503 field "db", /livez
#              still 200; freed: ready again
#   displays   --max-displays 1 and one task holding its display: /readyz
#              503 field "displays"; the display stopped: ready again
#   routing    two detmds ("pods") behind one detm-mcp --url A --url B:
#              each call goes to the detmd holding its task_id, a new task
#              to the ready one with the most free display slots (B, once
#              A drains: none lost, none refused); B killed with -9: its
#              task is a tool error naming B unavailable, A's still answer
#
# No timing is asserted beyond generous "does not hang" bounds.
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init drain --term
mnt=
suite_atexit() {
	[ -n "${agent:-}" ] && kill "$agent" 2>/dev/null
	if [ -n "$mnt" ]; then daemon_kill9; umount "$mnt" 2>/dev/null; rmdir "$mnt"; fi
	rm -rf "${dirs[@]}"
}
dirs=()
TOK=drain-token-1
H=(-H "Authorization: Bearer $TOK" -H 'Content-Type: application/json')
# call METHOD PATH [BODY]: with the token; body to $tmp/resp, status to $CODE
call() {
	CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' --max-time 60 -X "$1" "$DETM_URL$2" "${H[@]}" \
		${3:+--data-binary "$3"})
}
# bare METHOD PATH: without the token
bare() { CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' --max-time 30 -X "$1" "$DETM_URL$2"); }

# ---- probes and drain ----
DETM_DATA=$(mktemp -d /tmp/detm-test.XXXXXX); dirs+=("$DETM_DATA")
DETM_TOKEN=$TOK daemon_start || { bad "daemon start"; finish; exit 1; }
bare GET /livez
expect "GET /livez answers 200 alive without the token" 200 '.status == "alive"'
bare GET /readyz
expect "GET /readyz is 200 ready without the token, every check ok" 200 \
	'.status == "ready" and ([.checks[] | .ok] | all) and .checks.displays.max == 32'
bare GET /api/health
expect "GET /api/health still needs the token" 401 '.error.code == "unauthorized"'
bare POST /api/drain
expect "POST /api/drain without the token is 401 (and drains nothing)" 401 '.error.code == "unauthorized"'
call GET /api/drain
expect "GET /api/drain: not draining, nothing drained" 200 '.draining == false and .drained == false and .since == null'

ids=()
for i in 1 2 3; do
	call POST /api/tasks '{"name":"drain '$i'","plan":["work","finish"]}'
	ids+=("$(jqr .task_id)")
done
check "three tasks registered" [ "${#ids[@]}" = 3 ]
# The agent: logs actions on every task until told to stop, writing the
# id of every action the daemon acknowledged (201).
: >"$tmp/acked"
(
	n=0
	while [ ! -e "$tmp/stop" ] && [ "$n" -lt 2000 ]; do
		for t in "${ids[@]}"; do
			code=$(curl -sS -o "$tmp/agent.resp" -w '%{http_code}' --max-time 30 -X POST \
				"$DETM_URL/api/tasks/$t/actions" "${H[@]}" \
				--data-binary '{"action_type":"other","summary":"step '$n'","ordinal":0}')
			[ "$code" = 201 ] && echo "$t $(jq -r .action_id "$tmp/agent.resp")" >>"$tmp/acked"
		done
		n=$((n + 1))
	done
) &
agent=$!
wait_for 20 sh -c "[ \$(wc -l <'$tmp/acked') -ge 6 ]" || bad "the agent logs actions" "$(cat "$tmp/agent.resp")"

call POST /api/drain
at_drain=$(wc -l <"$tmp/acked")
expect "POST /api/drain: draining, 3 active, not drained" 200 \
	'.draining == true and .active == 3 and .paused == 0 and .drained == false and (.since | test("Z$"))'
call POST /api/tasks '{"name":"late"}'
expect "a new task is refused: 503 draining, saying to use another detmd" 503 \
	'.error.code == "draining" and (.error.message | test("another detmd"))'
msg=$(jqr .error.message)
call POST /task_register '{"name":"late py"}'
expect "the Python route task_register is refused too" 503 '.error.code == "draining"'
ACU_TOKEN=$TOK mcp_calls "$tmp/mcp" 20 \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task_register","arguments":{"name":"late mcp"}}}'
check "over MCP task_register is a tool error with the same message" \
	jq -se --arg m "$msg" '.[] | select(.id == 2) | .result.isError and (.result.content[0].text | contains($m))' "$tmp/mcp" >/dev/null
call GET '/api/tasks?status=all'
check "no task was created while draining (still 3)" [ "$(jqr '.tasks | length')" = 3 ]
bare GET /readyz
expect "GET /readyz: 503 unavailable, field draining" 503 \
	'.error.code == "unavailable" and .error.field == "draining" and .checks.draining.ok == false and .checks.db.ok'
bare GET /livez
expect "GET /livez is still 200 while draining" 200
call GET /metrics
check "/metrics: detm_draining 1" grep -qx 'detm_draining 1' "$tmp/resp"

# Running tasks go on; a drain?wait= returns once the last one ended.
call PATCH "/api/tasks/${ids[0]}/items/0" '{"status":"completed"}'
expect "a running task's item still moves while draining" 200
curl -sS -o "$tmp/waited" -w '%{http_code}' --max-time 120 -X POST "$DETM_URL/api/drain?wait=90" "${H[@]}" \
	>"$tmp/waited.code" &
waiter=$!
sleep 1
touch "$tmp/stop"
wait "$agent"
agent=
check "the agent's actions went on being stored after the drain ($at_drain before, $(wc -l <"$tmp/acked") in all)" \
	[ "$(wc -l <"$tmp/acked")" -gt "$at_drain" ]
call POST "/api/tasks/${ids[0]}/actions" '{"action_type":"other","summary":"last words","ordinal":1}'
expect "a running task still logs actions while draining" 201
call PATCH "/api/tasks/${ids[0]}" '{"status":"completed"}'
expect "task 1 completes while draining" 200
call PATCH "/api/tasks/${ids[1]}" '{"status":"paused"}'
call GET /api/drain
expect "GET /api/drain: 1 active, 1 paused, not drained" 200 '.active == 1 and .paused == 1 and .drained == false'
check "the ?wait= is still waiting (a paused task is unfinished)" kill -0 "$waiter"
call PATCH "/api/tasks/${ids[1]}" '{"status":"cancelled"}'
call PATCH "/api/tasks/${ids[2]}" '{"status":"failed"}'
wait "$waiter"
check "POST /api/drain?wait=90 returns 200 drained:true once the last task ended" \
	sh -c "[ \"\$(cat '$tmp/waited.code')\" = 200 ] && jq -e '.drained == true and .active == 0 and .paused == 0' '$tmp/waited' >/dev/null"
lost=0
while read -r t a; do
	c=$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" "$DETM_URL/api/tasks/$t/actions/$a")
	[ "$c" = 200 ] || { lost=$((lost + 1)); echo "   lost: $t $a -> $c"; }
done <"$tmp/acked"
check "none lost: each of the $(wc -l <"$tmp/acked") acknowledged actions reads back" [ "$lost" = 0 ]
call POST '/api/drain?wait=5'
expect "drained: a second POST /api/drain answers at once, drained:true" 200 '.drained == true'
call POST '/api/drain?wait=601'
expect "?wait past 600 s is 400 on the field wait" 400 '.error.field == "wait"'
# SIGTERM while a ?wait= is pending (a task left active: never drained).
DETM_DATA=$(mktemp -d /tmp/detm-test.XXXXXX); dirs+=("$DETM_DATA")
daemon_stop
DETM_TOKEN=$TOK daemon_start || { bad "daemon start (sigterm)"; finish; exit 1; }
call POST /api/tasks '{"name":"forever"}'
curl -s -o "$tmp/w2" -w '%{http_code}' --max-time 120 -X POST "$DETM_URL/api/drain?wait=600" "${H[@]}" >"$tmp/w2.code" &
waiter=$!
wait_for 10 sh -c "curl -s '$DETM_URL/readyz' | jq -e '.checks.draining.ok == false' >/dev/null"
kill -TERM "$DETM_PID"
wait_for 60 sh -c "! kill -0 $DETM_PID 2>/dev/null"
check "SIGTERM during POST /api/drain?wait=600 stops detmd well before the wait" sh -c "! kill -0 $DETM_PID 2>/dev/null"
wait "$DETM_PID" 2>/dev/null
DETM_RC=$?
DETM_PID=
check "and it exits 0" [ "$DETM_RC" = 0 ]
wait "$waiter" 2>/dev/null

# ---- disk: the data dir can take no new byte ----
if [ "$(id -u)" = 0 ] && mnt=$(mktemp -d /tmp/detm-drain-mnt.XXXXXX) && mount -t tmpfs -o size=4m tmpfs "$mnt"; then
	DETM_DATA=$mnt
	daemon_start || { bad "daemon start (tmpfs)"; finish; exit 1; }
	dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null
	# The last partial page too: tmpfs rounds to pages.
	head -c 4096 /dev/zero >>"$mnt/filler2" 2>/dev/null
	how="a full tmpfs"
	undo() { rm -f "$mnt/filler" "$mnt/filler2"; }
else
	mnt=
	DETM_DATA=$(mktemp -d /tmp/detm-test.XXXXXX); dirs+=("$DETM_DATA")
	daemon_start || { bad "daemon start (chmod)"; finish; exit 1; }
	chmod 0500 "$DETM_DATA"
	how="a read-only data dir"
	undo() { chmod 0700 "$DETM_DATA"; }
fi
api GET /readyz
expect "$how: /readyz is 503 unavailable, field db, saying why" 503 \
	'.error.code == "unavailable" and .error.field == "db" and .checks.db.ok == false and (.checks.db.why | test("data dir"))'
api GET /livez
expect "$how: /livez is still 200 (restarting would not help)" 200
undo
api GET /readyz
expect "$how undone: /readyz is 200 again" 200 '.status == "ready"'
daemon_stop
if [ -n "$mnt" ]; then umount "$mnt"; rmdir "$mnt"; mnt=; fi

# ---- displays: every slot in use ----
DETM_DATA=$(mktemp -d /tmp/detm-test.XXXXXX); dirs+=("$DETM_DATA")
daemon_start --max-displays 1 || { bad "daemon start (displays)"; finish; exit 1; }
api POST /api/tasks '{"name":"holds the display","display":true}'
expect "a task with its own display (the one slot)" 201
t=$(jqr .task_id)
api GET /readyz
expect "all display slots used: /readyz is 503, field displays, 1 of 1" 503 \
	'.error.field == "displays" and .checks.displays.running == 1 and .checks.displays.max == 1 and .checks.db.ok'
api DELETE "/api/tasks/$t/display"
api GET /readyz
expect "its display stopped: /readyz is 200 again" 200 '.checks.displays.running == 0'
daemon_stop
check "detmd stops cleanly (exit 0)" [ "${DETM_RC:-1}" = 0 ]

# ---- routing by task id: two detmds, one detm-mcp ----
# mcp_multi OUT MSG...: detm-mcp routing between $A_URL and $B_URL.
mcp_multi() {
	local out=$1; shift
	{ printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' "$@"
	  local i
	  for i in $(seq 1 300); do
		[ "$(jq -s '[.[] | select(.id != 0 and .id != null)] | length' "$out" 2>/dev/null)" = $# ] && break
		sleep 0.1
	  done; } | timeout 60 env ACU_TOKEN=$TOK "$DETM_BIN/detm-mcp" --url "$A_URL" --url "$B_URL" >"$out" 2>"$tmp/mcp.err"
}
call_of() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2" "$3"; }
res() { jq -sc --argjson id "$2" '.[] | select(.id == $id) | .result' "$1"; }
DETM_DATA=$(mktemp -d /tmp/detm-test.XXXXXX); dirs+=("$DETM_DATA")
DETM_TOKEN=$TOK daemon_start || { bad "daemon start (A)"; finish; exit 1; }
A_URL=$DETM_URL A_PID=$DETM_PID A_DATA=$DETM_DATA
DETM_DATA=$(mktemp -d /tmp/detm-test.XXXXXX); dirs+=("$DETM_DATA")
DETM_TOKEN=$TOK daemon_start --max-displays 40 || { bad "daemon start (B)"; finish; exit 1; }
B_URL=$DETM_URL B_PID=$DETM_PID
DETM_URL=$A_URL; call POST /api/tasks '{"name":"lives on A"}'; tA=$(jqr .task_id)
DETM_URL=$B_URL; call POST /api/tasks '{"name":"lives on B"}'; tB=$(jqr .task_id)
mcp_multi "$tmp/r1" "$(call_of 1 task_summary '{"task_id":"'"$tB"'"}')" "$(call_of 2 task_summary '{"task_id":"'"$tA"'"}')" \
	"$(call_of 3 task_log_action '{"task_id":"'"$tB"'","action_type":"other","summary":"routed to B"}')" \
	"$(call_of 4 task_register '{"name":"new, most free slots"}')"
n1=$(res "$tmp/r1" 1 | jq -r '.structuredContent.name') n2=$(res "$tmp/r1" 2 | jq -r '.structuredContent.name')
check "task_summary of B's task is answered by B, of A's by A (one detm-mcp, two --url)" [ "$n1|$n2" = "lives on B|lives on A" ]
DETM_URL=$B_URL; call GET "/api/tasks/$tB?detail=actions"
check "task_log_action on B's task is stored on B" [ "$(jq '[.. | objects | select(.summary? == "routed to B")] | length' "$tmp/resp")" = 1 ]
new1=$(res "$tmp/r1" 4 | jq -r '.structuredContent.task_id')
DETM_URL=$B_URL; call GET "/api/tasks/$new1"
check "task_register goes to the detmd with the most free display slots (B: 40 to A's 32)" [ "$CODE" = 200 ]
# A drains; B takes the new tasks, A's running one still answers.
DETM_URL=$B_URL; call PATCH "/api/tasks/$new1" '{"status":"completed"}'
DETM_URL=$A_URL; call POST /api/drain
kill -STOP "$B_PID"   # B does not answer: nowhere is ready
mcp_multi "$tmp/r2" "$(call_of 5 task_register '{"name":"nowhere"}')"
kill -CONT "$B_PID"
check "no detmd ready (A draining, B stopped): task_register is a tool error saying why for each" \
	[ "$(res "$tmp/r2" 5 | jq '.isError and (.content[0].text | test("draining") and test("unreachable"))')" = true ]
mcp_multi "$tmp/r3" "$(call_of 6 task_register '{"name":"after the drain"}')" "$(call_of 7 task_summary '{"task_id":"'"$tA"'"}')"
new2=$(res "$tmp/r3" 6 | jq -r '.structuredContent.task_id')
DETM_URL=$B_URL; call GET "/api/tasks/$new2"
check "A draining: the new task goes to B, not refused" [ "$CODE" = 200 ]
check "A's running task still answers through detm-mcp while A drains" \
	[ "$(res "$tmp/r3" 7 | jq -r '.structuredContent.status')" = active ]
kill -9 "$B_PID"; wait "$B_PID" 2>/dev/null
mcp_multi "$tmp/r4" "$(call_of 8 task_summary '{"task_id":"'"$tB"'"}')" "$(call_of 9 task_summary '{"task_id":"'"$tA"'"}')"
check "B killed -9: its task is a tool error saying unavailable and naming B" \
	[ "$(res "$tmp/r4" 8 | jq --arg b "$B_URL" '.isError and (.content[0].text | test("unavailable") and contains($b))')" = true ]
check "B killed -9: A's task is unaffected" [ "$(res "$tmp/r4" 9 | jq -r '.structuredContent.name')" = 'lives on A' ]
DETM_PID=$A_PID DETM_URL=$A_URL
daemon_stop
finish
