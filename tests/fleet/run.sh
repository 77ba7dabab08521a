#!/usr/bin/env bash
# tests/fleet/run.sh - routing by task id over several detmds (issue 39
# item 3/4): three real detmds ("pods" A, B, C) on 127.0.0.2/.3/.4, one
# port, each with --peers naming a DNS name whose records are the three
# (a headless Service's shape), driven through one long-lived detm-mcp
# (--url NAME --resolve-all: a real MCP client session on its stdin) and
# through the HTTP API of one pod, as the dashboard does.
#
#   landing    task_register (display: true) lands on the ready detmd with
#              the most free display slots: B (4), B (3, first of a tie), C
#   routing    task_summary by id on each owner; video_record's clip_id
#              and video_status by clip id, gui_agent's run_id (background,
#              bin/vision-stub as the model) and gui_agent_status by run id
#              (remembered from the reply; a fresh detm-mcp finds each by
#              probing); task_list and wait_status merged from all three,
#              each entry naming its detmd
#   peers      pod A answers for the fleet: GET /api/fleet/tasks lists every
#              pod's tasks with the pod named (A itself counted once); a
#              task of C read and written through A (forwarded with A's
#              token, a file name escaped again); the dashboard's cookie
#              works for it; C's frame.jpg and live MJPEG streamed through
#              A; a raw-bytes upload through A lands on C byte for byte
#   dashboard  A's /dashboard in headless chromium (tests/dashboard/fleet.mjs):
#              every pod's tasks with their pod, C's task opened and a
#              message posted on it through A, its live view shown
#   drain      B drained while an agent logs actions on B's task through
#              A: a new task goes elsewhere, every acknowledged action is
#              on B (none lost)
#   takeover   C's task taken over, driven (input) and released through A with
#              A's dashboard cookie
#   collision  B's task id inserted on C too (sqlite3): 409 conflict naming B and
#              C on A (nothing stored), in A's fleet list's collisions, a
#              "conflict" tool error from a fresh detm-mcp
#   hung       a fourth detmd D whose peers are 6 sockets that never answer
#              (then A, B): its list, a lookup and a 503 in one timeout; a
#              detm-mcp's task_list over the 6 and B likewise
#   stop       C stopped (SIGSTOP): task_list names it after its 10 s
#   kill -9    C killed: its task is a tool error "unavailable" naming C,
#              through MCP and through A (503); task_list names C in
#              "unreachable" and still lists A's and B's
#   dns        the name loses C's record (Kubernetes drops a dead pod's
#              endpoint): detm-mcp, re-resolving every second, asks only
#              A and B; without root (no private /etc/hosts) the URLs are
#              given one by one and this part is skipped (said so)
#
# As root the suite runs itself again in a private mount namespace with a
# temporary /etc/hosts bind-mounted over the real one (unshare -m): no DNS
# server, nothing changed outside. No timing is asserted.
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

NAME=detm-fleet.test
if [ "$(id -u)" = 0 ] && [ -z "${FLEET_NS:-}" ] && command -v unshare >/dev/null; then
	hosts=$(mktemp /tmp/detm-fleet-hosts.XXXXXX)
	printf '127.0.0.1 localhost\n::1 localhost ip6-localhost\n127.0.0.2 %s\n127.0.0.3 %s\n127.0.0.4 %s\n' \
		"$NAME" "$NAME" "$NAME" >"$hosts"
	FLEET_NS=1 FLEET_HOSTS=$hosts unshare -m sh -c 'mount --bind "$FLEET_HOSTS" /etc/hosts && exec "$0"' "$0"
	rc=$?
	rm -f "$hosts"
	exit $rc
fi

suite_init fleet --term
TOK=fleet-token-1
dirs=() xvfbs=() mcp_pid=
suite_atexit() {
	local p
	[ -n "${agent:-}" ] && kill "$agent" 2>/dev/null
	[ -n "${holes:-}" ] && kill "$holes" 2>/dev/null
	[ -n "$mcp_pid" ] && kill "$mcp_pid" 2>/dev/null
	for p in "${PODS_PID[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PODS_PID[@]}"; do wait "$p" 2>/dev/null; done
	for p in "${xvfbs[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "${dirs[@]}"
}
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.2", 0)); print(s.getsockname()[1])')
if [ -n "${FLEET_NS:-}" ]; then
	PEERS="http://$NAME:$PORT" RESOLVE=(--resolve-all --resolve-every 1)
	PEER_ARGS=(--peers "$PEERS" --peers-resolve-all --peers-resolve-every 1)
else
	PEERS="http://127.0.0.2:$PORT,http://127.0.0.3:$PORT,http://127.0.0.4:$PORT" RESOLVE=()
	PEER_ARGS=(--peers "$PEERS")
fi
stub_start || { bad "vision-stub starts"; finish; exit 1; }     # gui_agent's model (background runs)
declare -A PODS_PID URL DATA
# pod NAME ADDR MAXDISPLAYS: a detmd on ADDR:$PORT
pod() {
	local d
	d=$(mktemp -d /tmp/detm-test.XXXXXX); dirs+=("$d")
	ACU_TOKEN=$TOK OPENROUTER_API_KEY=$KEY ACU_OPENROUTER_URL=$STUB "$DETM_BIN/detmd" --listen "$2" --port "$PORT" --data-dir "$d" --max-displays "$3" \
		"${PEER_ARGS[@]}" >>"$d/stdout.log" 2>&1 &
	PODS_PID[$1]=$! URL[$1]="http://$2:$PORT" DATA[$1]=$d
}
pod A 127.0.0.2 2
pod B 127.0.0.3 4
pod C 127.0.0.4 3
for p in A B C; do
	wait_for 30 curl -fs -o /dev/null "${URL[$p]}/livez" || { bad "pod $p starts" "$(cat "${DATA[$p]}/stdout.log")"; finish; exit 1; }
done
H=(-H "Authorization: Bearer $TOK" -H 'Content-Type: application/json')
# at POD METHOD PATH [BODY]: HTTP to one pod, body to $tmp/resp, status to $CODE
at() {
	CODE=$(curl -sS -o "$tmp/resp" -D "$tmp/hdrs" -w '%{http_code}' --max-time 60 -X "$2" "${URL[$1]}$3" "${H[@]}" \
		${4:+--data-binary "$4"})
}
# owner ID: the pod that holds the task (asked without forwarding)
owner() {
	local p
	for p in A B C; do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" -H 'X-Detm-Forwarded: 1' "${URL[$p]}/api/tasks/$1")" = 200 ] &&
			{ echo "$p"; return; }
	done
	echo none
}

# ---- one MCP session (detm-mcp on a coprocess), calls one at a time ----
mcp_open() {
	coproc MCP { ACU_TOKEN=$TOK exec "$DETM_BIN/detm-mcp" --url "$1" "${RESOLVE[@]}" 2>>"$tmp/mcp.err"; }
	mcp_pid=$MCP_PID
	mcp_send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fleet","version":"1"}}}'
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"${MCP[1]}"
}
mcp_close() { exec {MCP[1]}>&-; wait "$mcp_pid" 2>/dev/null; mcp_pid=; }
NID=0
# mcp_send MSG: writes MSG, the reply with its id to $tmp/reply (60 s at
# most; not a pipeline or $(): a coprocess's fds do not reach subshells)
mcp_send() {
	local id line
	id=$(jq -r .id <<<"$1")
	echo '{}' >"$tmp/reply"
	echo "$1" >&"${MCP[1]}"
	while IFS= read -r -t 60 line <&"${MCP[0]}"; do
		[ "$(jq -r .id <<<"$line" 2>/dev/null)" = "$id" ] && { echo "$line" >"$tmp/reply"; return 0; }
	done
}
# tool NAME ARGS: the call's result, in $tmp/res
tool() {
	NID=$((NID + 1))
	mcp_send "{\"jsonrpc\":\"2.0\",\"id\":$NID,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}"
	jq -c .result <"$tmp/reply" >"$tmp/res"
}
rq() { jq -r "$@" <"$tmp/res"; }
quiet() { "$@" >/dev/null; }
# fresh NAME ARGS: one call from a new detm-mcp (nothing remembered): its
# replies in $tmp/fresh, its verbose log (each HTTP exchange) in $tmp/fresh.log
fresh() {
	rm -f "$tmp/fresh"
	{ echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
	  echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}"
	  for i in $(seq 1 300); do grep -q '"id":1' "$tmp/fresh" 2>/dev/null && break; sleep 0.1; done; } |
		ACU_TOKEN=$TOK timeout 60 "$DETM_BIN/detm-mcp" -v --url "$PEERS" "${RESOLVE[@]}" >"$tmp/fresh" 2>"$tmp/fresh.log"
}

mcp_open "$PEERS"
# ---- landing: the freest ready detmd ----
ids=()
for i in 1 2 3; do
	tool task_register '{"name":"fleet '$i'","plan":["work"],"display":true}'
	ids+=("$(rq .structuredContent.task_id)")
done
t1=${ids[0]} t2=${ids[1]} t3=${ids[2]}
land="$(owner "$t1") $(owner "$t2") $(owner "$t3")"
check "three task_registers land on the freest ready detmd: B (4 free), B (3, first of a tie with C), C ($land)" \
	[ "$land" = "B B C" ]
for p in A B C; do xvfbs+=($(pgrep -P "${PODS_PID[$p]}" Xvfb)); done

# ---- routing by id through MCP ----
tool task_summary '{"task_id":"'"$t3"'"}'
n3=$(rq .structuredContent.name)
tool task_summary '{"task_id":"'"$t1"'"}'
check "task_summary by id is answered by the owner (C's fleet 3, B's fleet 1)" [ "$n3|$(rq .structuredContent.name)" = "fleet 3|fleet 1" ]
tool task_log_action '{"task_id":"'"$t3"'","action_type":"other","summary":"mcp on C"}'
at C GET "/api/tasks/$t3?detail=actions"
check "task_log_action on C's task is stored on C" [ "$(jq '[.. | objects | select(.summary? == "mcp on C")] | length' "$tmp/resp")" = 1 ]
tool video_record '{"task_id":"'"$t3"'","duration":5,"wait":false}'
clip=$(rq '.structuredContent.clip_id // empty')
check "video_record on C's task starts a clip (clip_id $clip)" [ -n "$clip" ]
tool video_status '{"clip_id":"'"$clip"'"}'
check "video_status by clip_id goes to C, which has it (remembered from video_record's reply)" \
	[ "$(rq '.isError != true and .structuredContent.clip_id == "'"$clip"'"')" = true ]
fresh video_status '{"clip_id":"'"$clip"'"}'
check "a fresh detm-mcp finds the clip by probing (video_status by clip_id)" \
	quiet jq -se '.[] | select(.id == 1) | .result.structuredContent.clip_id == "'"$clip"'"' "$tmp/fresh"
check "  its probes ask each detmd for itself (A and B 404, not A's forward to C)" \
	[ "$(grep -c "GET /api/record/$clip -> 404" "$tmp/fresh.log")" = 2 ]
stub_script '{"answers":["TOOL_CALL done {\"summary\":\"looked\",\"success\":true}"],"tokens_in":1,"tokens_out":1}'
tool gui_agent '{"task_id":"'"$t3"'","instruction":"look","background":true}'
run=$(rq '.structuredContent.run_id // empty')
check "gui_agent in the background on C's task returns a run_id ($run)" [ -n "$run" ]
tool gui_agent_status '{"run_id":"'"$run"'","block_s":10}'
check "gui_agent_status by run_id goes to C (remembered from gui_agent's reply)" \
	[ "$(rq '.isError != true and .structuredContent.run_id == "'"$run"'"')" = true ]
fresh gui_agent_status '{"run_id":"'"$run"'"}'
check "a fresh detm-mcp finds the run by probing (gui_agent_status by run_id)" \
	quiet jq -se '.[] | select(.id == 1) | .result.structuredContent.run_id == "'"$run"'"' "$tmp/fresh"
at A GET "/api/gui/agent/$run"
expect "GET /api/gui/agent/{C's run} on A: forwarded to C" 200 '.run_id == "'"$run"'"'
tool task_list '{}'
check "task_list through detm-mcp: merged from the 3 detmds, each task naming the detmd that holds it" \
	[ "$(rq --arg b "${URL[B]}" --arg c "${URL[C]}" '.structuredContent | .detmds == 3 and (.unreachable | length) == 0 and
		([.tasks[] | .detmd] | sort) == ([$b, $b, $c] | sort)')" = true ]
tool wait_status '{}'
check "wait_status without a wait_id through detm-mcp: merged from the 3 detmds" \
	[ "$(rq '.structuredContent | .detmds == 3 and (.waits | type) == "array"')" = true ]

# ---- one pod answers for the fleet (the dashboard's view) ----
at A GET '/api/fleet/tasks?status=all'
expect "GET /api/fleet/tasks on A: every pod's 3 tasks, the pods named, A counted once" 200 \
	'(.tasks | length) == 3 and .count == 3 and (.pods | length) == 3 and ([.tasks[].pod] | all(. != "")) and (.unreachable | length) == 0 and .peers'
at A GET "/api/tasks/$t3"
expect "GET /api/tasks/{C's task} on A: forwarded to C" 200 '.name == "fleet 3"'
at A POST "/api/tasks/$t3/actions" '{"action_type":"other","summary":"via A"}'
expect "POST an action on C's task through A: 201" 201
at C GET "/api/tasks/$t3?detail=actions"
check "  and it is stored on C" [ "$(jq '[.. | objects | select(.summary? == "via A")] | length' "$tmp/resp")" = 1 ]
at A PUT "/api/tasks/$t3/files/notes/a%20b%C3%A9.txt" '{"content":"via A"}'
expect "a JSON file upload to C's task through A (a name with a space and an é): 201" 201 '.path == "notes/a bé.txt"'
at A GET "/api/tasks/$t3/files/notes/a%20b%C3%A9.txt?format=json"
expect "  read back through A (format=json)" 200 '.content == "via A"'
curl -s -c "$tmp/jar" -o /dev/null "${URL[A]}/dashboard?token=$TOK"
code=$(curl -s -b "$tmp/jar" -o "$tmp/resp" -w '%{http_code}' "${URL[A]}/api/tasks/$t2?detail=actions")
check "the dashboard's cookie (A's) reads B's task through A" [ "$code|$(jq -r .name "$tmp/resp")" = "200|fleet 2" ]
code=$(curl -s -o "$tmp/frame" -w '%{http_code} %{content_type}' --max-time 30 "${H[@]}" "${URL[A]}/api/tasks/$t3/frame.jpg")
check "C's screen now (frame.jpg) through A: a JPEG, streamed from C ($code)" \
	sh -c "[ '$code' = '200 image/jpeg' ] && [ \"\$(head -c 3 '$tmp/frame' | od -An -tx1 | tr -d ' ')\" = ffd8ff ]"
curl -s -o "$tmp/live" --max-time 4 "${H[@]}" "${URL[A]}/api/tasks/$t3/live.mjpeg"
check "C's live view (MJPEG) through A: frames arrive ($(grep -ac -- '--detmframe' "$tmp/live") parts in 4 s)" \
	[ "$(grep -ac -- '--detmframe' "$tmp/live")" -ge 1 ]
printf 'raw\000bytes\377' >"$tmp/raw.bin"
code=$(curl -s -o "$tmp/resp" -w '%{http_code}' --max-time 30 -X PUT -H "Authorization: Bearer $TOK" \
	-H 'Content-Type: application/octet-stream' --data-binary @"$tmp/raw.bin" "${URL[A]}/api/tasks/$t3/files/raw.bin")
check "a raw-bytes upload (a NUL, a 0xff) to C's task through A: 201 ($code)" [ "$code" = 201 ]
curl -s -o "$tmp/raw.back" -H "Authorization: Bearer $TOK" -H 'X-Detm-Forwarded: 1' "${URL[C]}/api/tasks/$t3/files/raw.bin"
check "  and C has the same 10 bytes" cmp -s "$tmp/raw.bin" "$tmp/raw.back"
# takeover of C's task through A, as A's dashboard does it (A's cookie)
ck() { CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' --max-time 60 -b "$tmp/jar" -X "$1" "${URL[A]}$2" \
	-H 'Content-Type: application/json' ${3:+--data-binary "$3"}); }
ck POST "/api/tasks/$t3/takeover" '{"reason":"fleet takeover through A"}'
lease=$(jq -r '.lease // empty' "$tmp/resp")
check "the dashboard on A takes over C's task: 200 and a lease ($CODE)" [ "$CODE|${#lease}" = 200\|32 ]
ck GET "/api/tasks/$t3/takeover"
expect "  A (forwarding to C) says a human drives C's task" 200 '.driver == "human" and .reason == "fleet takeover through A"'
ck POST "/api/tasks/$t3/input" '{"lease":"'"$lease"'","events":[{"t":"key","k":"shift"}]}'
check "  the human's input through A with the lease: 200 ($CODE $(head -c 200 "$tmp/resp"))" [ "$CODE" = 200 ]
ck POST "/api/tasks/$t3/input" '{"lease":"0123456789abcdef0123456789abcdef","events":[{"t":"key","k":"shift"}]}'
check "  input with another lease through A is refused by C ($CODE)" [ "${CODE:0:1}" = 4 ]
ck POST "/api/tasks/$t3/release" '{"lease":"'"$lease"'","note":"done via A"}'
check "  released through A: the agent drives C's task again ($CODE)" [ "$CODE|$(jq -r .driver "$tmp/resp")" = "200|agent" ]
at A GET "/api/tasks/abcdef01"
expect "an id no pod has: 404 not_found from A" 404 '.error.code == "not_found"'

# ---- the dashboard of A (a real browser), when chromium and node are here ----
chrome=${CHROMIUM:-/usr/bin/chromium}
if [ -x "$chrome" ] && command -v node >/dev/null && npm_ci tests/dashboard playwright-core >/dev/null 2>&1; then
	A=${URL[A]} TOKEN=$TOK CHROMIUM=$chrome MSG_TASK=$t3 MSG_ON=${URL[C]} \
		TASKS="$t1=${URL[B]},$t2=${URL[B]},$t3=${URL[C]}" node tests/dashboard/fleet.mjs >"$tmp/dash.out" 2>&1
	sed '$d' "$tmp/dash.out"
	if [[ $(tail -n 1 "$tmp/dash.out") =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		PASS=$((PASS + BASH_REMATCH[1])) FAIL=$((FAIL + BASH_REMATCH[2]))
	else
		bad "the fleet dashboard ran" "$(tail -n 5 "$tmp/dash.out")"
	fi
else
	bad "the fleet dashboard: needs $chrome, node and playwright-core (scripts/install-deps.sh test)"
fi

# ---- drain B while an agent works on its task through A ----
: >"$tmp/acked"
(
	n=0
	while [ ! -e "$tmp/stop" ] && [ "$n" -lt 2000 ]; do
		c=$(curl -sS -o "$tmp/agent.resp" -w '%{http_code}' --max-time 30 -X POST \
			"${URL[A]}/api/tasks/$t1/actions" "${H[@]}" --data-binary '{"action_type":"other","summary":"step '$n'"}')
		[ "$c" = 201 ] && jq -r .action_id "$tmp/agent.resp" >>"$tmp/acked"
		n=$((n + 1))
	done
) &
agent=$!
wait_for 20 sh -c "[ \$(wc -l <'$tmp/acked') -ge 3 ]" || bad "the agent logs actions through A" "$(cat "$tmp/agent.resp")"
at B POST /api/drain
expect "B drains" 200 '.draining == true'
tool task_register '{"name":"after the drain","display":true}'
t4=$(rq .structuredContent.task_id)
check "a new task goes elsewhere, not to the draining B ($(owner "$t4"))" sh -c "[ '$(owner "$t4")' = A ] || [ '$(owner "$t4")' = C ]"
for p in A B C; do xvfbs+=($(pgrep -P "${PODS_PID[$p]}" Xvfb)); done
before=$(wc -l <"$tmp/acked")
wait_for 20 sh -c "[ \$(wc -l <'$tmp/acked') -gt $before ]"
touch "$tmp/stop"; wait "$agent"; agent=
lost=0
while read -r a; do
	c=$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" -H 'X-Detm-Forwarded: 1' "${URL[B]}/api/tasks/$t1/actions/$a")
	[ "$c" = 200 ] || lost=$((lost + 1))
done <"$tmp/acked"
check "none lost: each of the $(wc -l <"$tmp/acked") actions acknowledged through A is on B ($before before the drain's end)" \
	test "$lost" = 0 -a "$(wc -l <"$tmp/acked")" -gt "$before"

# ---- an id on two pods (ids are random per pod; here C gets a row with B's task's id) ----
sqlite3 -cmd '.timeout 10000' "${DATA[C]}/data.db" \
	"INSERT INTO tasks (id, name, created_at, updated_at) VALUES ('$t2', 'twin on C', 1, 1)"
at A GET "/api/tasks/$t2"
expect "B's task id also on C, asked on A: 409 conflict naming B and C (not whichever answers first)" 409 \
	'.error.code == "conflict" and (.error.message | contains("'"${URL[B]}"'") and contains("'"${URL[C]}"'"))'
at A POST "/api/tasks/$t2/actions" '{"action_type":"other","summary":"twin"}'
expect "  a write to it through A: 409 too" 409 '.error.code == "conflict"'
at B GET "/api/tasks/$t2?detail=actions"
check "  and nothing was stored on B" [ "$(jq '[.. | objects | select(.summary? == "twin")] | length' "$tmp/resp")" = 0 ]
at A GET '/api/fleet/tasks?status=all'
expect "  A's fleet list names the id in collisions with both pods" 200 \
	'[.collisions[] | select(.task_id == "'"$t2"'") | .detmds | sort] == [["'"${URL[B]}"'", "'"${URL[C]}"'"] | sort]'
fresh task_summary '{"task_id":"'"$t2"'"}'
check "  a fresh detm-mcp: a tool error \"conflict\" naming B and C" \
	quiet jq -se --arg b "${URL[B]}" --arg c "${URL[C]}" '.[] | select(.id == 1) | .result | .isError and
		(.content[0].text | test("conflict") and contains($b) and contains($c))' "$tmp/fresh"
sqlite3 -cmd '.timeout 10000' "${DATA[C]}/data.db" "DELETE FROM tasks WHERE id = '$t2' AND name = 'twin on C'"
at A GET "/api/tasks/$t2"
expect "  the twin gone: A forwards to B again" 200 '.name == "fleet 2"'

# ---- a pod whose peers hang: asked at once, one timeout for all ----
# D lists 6 peers that accept and never answer (each costs the 5 s peer
# timeout), then A and B: asked one after another that is 30 s or more, at
# once 5 s; curl gives up at 25 s (a bound with 20 s to spare, not a
# measurement).
python3 -c '
import socket, sys, time
ss = []
for _ in range(6):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64); ss.append(s)
print(",".join("http://127.0.0.1:%d" % s.getsockname()[1] for s in ss), flush=True)
time.sleep(600)' >"$tmp/holes" &
holes=$!
wait_for 10 test -s "$tmp/holes"
dd=$(mktemp -d /tmp/detm-test.XXXXXX); dirs+=("$dd")
ACU_TOKEN=$TOK "$DETM_BIN/detmd" --listen 127.0.0.5 --port "$PORT" --data-dir "$dd" --max-displays 1 \
	--peers "$(cat "$tmp/holes"),${URL[A]},${URL[B]}" >>"$dd/stdout.log" 2>&1 &
PODS_PID[D]=$! URL[D]="http://127.0.0.5:$PORT"
wait_for 30 curl -fs -o /dev/null "${URL[D]}/livez" || bad "pod D starts" "$(cat "$dd/stdout.log")"
code=$(curl -sS -o "$tmp/resp" -w '%{http_code}' --max-time 25 "${H[@]}" "${URL[D]}/api/tasks/$t1")
check "B's task asked on D with 6 hung peers listed first (D has not seen the id): forwarded, before 25 s ($code)" \
	sh -c "[ '$code' = 200 ] && jq -e '.name == \"fleet 1\"' '$tmp/resp' >/dev/null"
code=$(curl -sS -o "$tmp/resp" -w '%{http_code}' --max-time 25 "${H[@]}" "${URL[D]}/api/fleet/tasks?status=all")
check "D's fleet list with 6 hung peers: answered before 25 s, the 6 named unreachable, B's task listed ($code)" \
	quiet jq -e '(.unreachable | length) == 6 and ([.tasks[].task_id] | index("'"$t1"'") != null)' "$tmp/resp"
code=$(curl -sS -o "$tmp/resp" -w '%{http_code}' --max-time 25 "${H[@]}" "${URL[D]}/api/tasks/abcdef02")
check "an id no pod has, asked on D: 503 naming the 6 that did not answer, before 25 s ($code)" \
	sh -c "[ '$code' = 503 ] && [ \"\$(jq -r .error.message '$tmp/resp' | grep -o 'http://127.0.0.1:[0-9]*' | sort -u | wc -l)\" = 6 ]"
# detm-mcp over the 6 hung peers and B: task_list asked at once (10 s each
# part; one after another that is 60 s); fresh's client waits 30 s
PEERS_KEEP=$PEERS RESOLVE_KEEP=("${RESOLVE[@]}")
PEERS="$(cat "$tmp/holes"),${URL[B]}" RESOLVE=()
fresh task_list '{}'
PEERS=$PEERS_KEEP RESOLVE=("${RESOLVE_KEEP[@]}")
check "detm-mcp's task_list over 6 hung detmds and B: answered within its client's 30 s, the 6 named unreachable, B's task listed" \
	quiet jq -se '.[] | select(.id == 1) | .result.structuredContent | (.unreachable | length) == 6 and
		([.tasks[].task_id] | index("'"$t1"'") != null)' "$tmp/fresh"
kill "$holes"; kill -TERM "${PODS_PID[D]}"; wait "${PODS_PID[D]}" 2>/dev/null; unset 'PODS_PID[D]'

# ---- C hangs (SIGSTOP): named, not waited for forever ----
kill -STOP "${PODS_PID[C]}"
tool task_list '{}'
kill -CONT "${PODS_PID[C]}"
check "C stopped (SIGSTOP): task_list names it unreachable after its time and lists A's and B's tasks" \
	[ "$(rq --arg c "${URL[C]}" '.structuredContent | (.unreachable | map(.detmd)) == [$c] and ([.tasks[].task_id] | index("'"$t1"'") != null)')" = true ]

# ---- kill -9 C ----
kill -9 "${PODS_PID[C]}"; wait "${PODS_PID[C]}" 2>/dev/null
tool task_summary '{"task_id":"'"$t3"'"}'
check "C's task through MCP: a tool error, unavailable, naming C" \
	[ "$(rq --arg c "${URL[C]}" '.isError and (.content[0].text | test("unavailable") and contains($c))')" = true ]
tool task_summary '{"task_id":"'"$t1"'"}'
check "B's task still answers through MCP" [ "$(rq .structuredContent.name)" = "fleet 1" ]
tool task_list '{}'
check "task_list names C unreachable and still lists A's and B's tasks" \
	[ "$(rq --arg c "${URL[C]}" '.structuredContent | (.unreachable | map(.detmd)) == [$c] and ([.tasks[].task_id] | index("'"$t1"'") != null)')" = true ]
at A GET "/api/tasks/$t3"
expect "C's task through A: 503 unavailable naming C" 503 '.error.code == "unavailable" and (.error.message | contains("'"${URL[C]}"'"))'
at A GET "/api/tasks/$t2"
expect "B's task through A still 200" 200 '.name == "fleet 2"'
at A GET /api/fleet/tasks
expect "GET /api/fleet/tasks on A: C unreachable, A and B listed" 200 \
	'(.unreachable | map(.detmd)) == ["'"${URL[C]}"'"] and (.pods | length) == 2'

# ---- dns: the name loses C's record ----
if [ -n "${FLEET_NS:-}" ]; then
	printf '127.0.0.1 localhost\n127.0.0.2 %s\n127.0.0.3 %s\n' "$NAME" "$NAME" >/etc/hosts
	sleep 1.2
	tool task_list '{}'
	check "C's record removed from the name: detm-mcp (re-resolving every 1 s) asks A and B only" \
		[ "$(rq '.structuredContent | .detmds == 2 and (.unreachable | length) == 0')" = true ]
	at A GET /api/fleet/tasks
	expect "and so does A's fleet view" 200 '(.unreachable | length) == 0 and (.pods | length) == 2'
else
	echo "skip dns: not root (no private /etc/hosts); the URLs were given one by one"
fi
mcp_close
finish
