#!/usr/bin/env bash
# run.sh - the wake suite: stuck detection and wake-up delivery against a
# real detmd, with shortened intervals (checks every second). Tasks are
# made idle by moving tasks.updated_at back with sqlite3 (the daemon reads
# it on every check), so no test waits out the stuck threshold.
#
#   sinks:     a wake command (event JSON on stdin, argv split on blanks),
#              a webhook (bin/wake-recv records each POST), a fake
#              `openclaw` first on PATH (records its argv)
#   packet:    event shape, text prefix, items, current item with actions
#              and logs, last 5 messages, waits, the "stuck" thread message,
#              updated_at not bumped by the alert
#   not stuck: a task with a watching wait (until the wait resolves), a
#              completed task, a task with recent activity
#   cooldown:  one event per task within a long cooldown; a second one
#              after a short cooldown
#   failures:  a command that exits 1 is retried up to --wake-attempts; a
#              webhook that answers 500 or whose port is closed is retried
#              and logged; the daemon stays healthy and stops cleanly
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init wake

api() { # api METHOD PATH [BODY]: body to $tmp/resp (and stdout), status to $CODE
	CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X "$1" "$DETM_URL$2" \
		-H 'Content-Type: application/json' ${3:+--data-binary "$3"})
	cat "$tmp/resp"
}
jqr() { jq -r "$@" <"$tmp/resp"; }
jqe() { jq -e "$@" >/dev/null; }
sql() { sqlite3 -cmd '.timeout 5000' "$DETM_DATA/data.db" "$@"; }
now_ms() { date +%s%3N; }
# idle TASK SECONDS: the task's last activity was SECONDS ago
idle() { sql "UPDATE tasks SET updated_at = $(now_ms) - $2 * 1000 WHERE id = '$1'"; }
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
has_events() { [ "$(events_for "$1" "$2")" -ge "$3" ]; }  # has_events FILE TASK N
events_for() { # events_for FILE TASK: how many recorded events are for TASK
	[ -f "$1" ] || { echo 0; return; }
	jq -c --arg t "$2" 'select(.task_id == $t)' <"$1" 2>/dev/null | wc -l
}
new_task() { # new_task JSON: registers, prints the id
	api POST /api/tasks "$1" >/dev/null
	jqr .task_id
}
start_recv() { # start_recv NAME [args]: starts bin/wake-recv, sets RECV_PORT
	local name=$1; shift
	"$DETM_BIN/wake-recv" --out "$tmp/$name.log" --port-file "$tmp/$name.port" "$@" &
	pids+=($!)
	wait_for 5 test -s "$tmp/$name.port" || { bad "$name receiver starts"; return 1; }
	RECV_PORT=$(cat "$tmp/$name.port")
}

sanitizer_clean() { ! grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$DETM_DATA/stdout.log"; }
stop_checked() { # stop_checked NAME: daemon_stop, then rc 0 and no sanitizer report
	daemon_stop
	check "$1: exits 0" [ "$DETM_RC" -eq 0 ]
	check "$1: no sanitizer report" sanitizer_clean
}

# ---- helpers on disk ----
mkdir -p "$tmp/fakebin"
cat >"$tmp/fakebin/openclaw" <<EOF
#!/bin/sh
# one JSON array of its arguments per call
for a in "\$@"; do printf '%s' "\$a" | jq -Rs .; done | jq -cs . >>"$tmp/openclaw.jsonl"
EOF
cat >"$tmp/record.sh" <<EOF
#!/bin/sh
# record.sh OUT TAG: appends stdin as one line to OUT, the tag to OUT.args
cat >>"\$1"; echo >>"\$1"
echo "\$2" >>"\$1.args"
EOF
cat >"$tmp/fail.sh" <<EOF
#!/bin/sh
cat >/dev/null
echo run >>"$tmp/fail.count"
echo "fail.sh: failing on purpose"
exit 1
EOF
chmod +x "$tmp/fakebin/openclaw" "$tmp/record.sh" "$tmp/fail.sh"

# ==== run 1: all three sinks, long cooldown ====
# The webhook wants a token, as OpenClaw's /hooks/wake does (hooks.token).
start_recv hook --token "hook-secret-1234" || { finish; exit 1; }
HOOK_PORT=$RECV_PORT
DETM_DATA=$(mktemp -d "$tmp/d1.XXXXXX")
PATH="$tmp/fakebin:$PATH" ACU_WAKE_COMMAND="$tmp/record.sh $tmp/cmd.jsonl tag-one" \
	ACU_WAKE_URL="http://127.0.0.1:$HOOK_PORT/hook" ACU_WAKE_URL_TOKEN="hook-secret-1234" \
	daemon_start --stuck-check 1 --stuck-after 30 --stuck-cooldown 3600 --wake-backoff-ms 100 ||
	{ bad "daemon start"; finish; exit 1; }

# S: stuck, with a plan in progress, actions with logs, 7 messages, a finished wait.
S=$(new_task '{"name":"stuck one","plan":["open the app","fill the form","submit"],"agent_id":"agent-7","metadata":{"k":"v"}}')
api PATCH "/api/tasks/$S/items/0" '{"status":"active"}' >/dev/null
api PATCH "/api/tasks/$S/items/0" '{"status":"completed"}' >/dev/null
api PATCH "/api/tasks/$S/items/1" '{"status":"active"}' >/dev/null
api POST "/api/tasks/$S/actions" '{"action_type":"gui","summary":"typed the name","ordinal":1,"logs":[{"content":"typed Alice"}]}' >/dev/null
api POST "/api/tasks/$S/actions" '{"action_type":"cli","summary":"ran check","ordinal":1,"status":"failed","logs":[{"log_type":"error","content":"check: exit 3"},{"content":"second log"}]}' >/dev/null
for i in 1 2 3 4 5 6 7; do
	api POST "/api/tasks/$S/messages" "{\"role\":\"agent\",\"content\":\"note $i\"}" >/dev/null
done
t=$(now_ms)
sql "INSERT INTO wait_jobs (id, task_id, target, criteria, status, created_at, deadline_at, resolved_at)
     VALUES ('wdone001', '$S', 'screen', 'the form is saved', 'resolved', $t - 90000, $t, $t - 80000)"
# W: idle but watching a wait. C: idle but completed. R: active, recent activity.
W=$(new_task '{"name":"waiting","plan":["wait"]}')
sql "INSERT INTO wait_jobs (id, task_id, target, criteria, status, created_at, deadline_at)
     VALUES ('wwatch01', '$W', 'screen', 'a dialog appears', 'watching', $t, $t + 600000)"
C=$(new_task '{"name":"done","plan":["x"]}')
api PATCH "/api/tasks/$C" '{"status":"completed"}' >/dev/null
R=$(new_task '{"name":"recent","plan":["x"]}')
# K: started from an OpenClaw session (its key in the metadata); KB: a key
# with a blank, which is no session key.
K=$(new_task '{"name":"from a session","plan":["x"],"metadata":{"openclaw_session_key":"agent:main:s-42"}}')
KB=$(new_task '{"name":"bad session","plan":["x"],"metadata":{"openclaw_session_key":"two words"}}')
idle "$K" 120; idle "$KB" 120
# Big: 300 items of 400 characters (120 KB of titles) and a 60 KB log line.
big_plan=$(jq -cn '[range(300) | "item \(.) " + ("x" * 390)]')
Big=$(new_task "{\"name\":\"big\",\"plan\":$big_plan}")
api POST "/api/tasks/$Big/actions" "{\"action_type\":\"cli\",\"summary\":\"long\",\"ordinal\":0,\"logs\":[{\"content\":\"$(head -c 60000 /dev/zero | tr '\0' y)\"}]}" >/dev/null
idle "$S" 120; idle "$W" 120; idle "$C" 120; idle "$Big" 120
s_updated=$(sql "SELECT updated_at FROM tasks WHERE id = '$S'")

check "the stuck task is reported through the wake command" wait_for 8 has_events "$tmp/cmd.jsonl" "$S" 1
check "... through the webhook" wait_for 5 grep -q "^POST .*\"task_id\":\"$S\"" "$tmp/hook.log"
check "... with the webhook's token (--wake-url-token as Bearer): no 401" sh -c "! grep -q \"^401 \" \"$tmp/hook.log\""
check "... through openclaw" wait_for 5 grep -q "$S" "$tmp/openclaw.jsonl"
sleep 3.5      # more than three further checks
jq -c "select(.task_id == \"$S\")" <"$tmp/cmd.jsonl" | head -1 >"$tmp/ev.json"
ev() { jq -e "$@" "$tmp/ev.json" >/dev/null; }
check "event: event, task_id, id, ts" ev ".event == \"task_stuck\" and .task_id == \"$S\" and (.id | test(\"^[0-9a-f]{8}$\")) and (.ts | test(\"^20[0-9-]{8}T[0-9:.]+Z$\"))"
check "event: text is '[task_stuck_resume] ' + the packet" \
	ev '(.text | startswith("[task_stuck_resume] ")) and ((.text | ltrimstr("[task_stuck_resume] ") | fromjson) == .payload)'
check "packet: task state" ev ".payload | .task_id == \"$S\" and .name == \"stuck one\" and .status == \"active\" and .agent_id == \"agent-7\" and .metadata.k == \"v\" and .idle_seconds >= 119 and (.reason | test(\"no updates for .* no active smart wait\")) and (.updated_at | endswith(\"Z\"))"
check "packet: plan items and progress" ev '.payload | (.items | map([.ordinal, .title, .status])) == [[0,"open the app","completed"],[1,"fill the form","active"],[2,"submit","pending"]] and .progress.completed == [0] and .progress.current == 1 and .progress.current_name == "fill the form" and .progress.remaining == [2] and .progress.pct == 33'
check "packet: current item with its actions and logs" ev '.payload.current_item | .ordinal == 1 and .status == "active" and .action_count == 2 and (.actions | map(.summary)) == ["typed the name","ran check"] and .actions[0].logs[0].content == "typed Alice" and (.actions[1].logs | map(.content)) == ["check: exit 3","second log"] and .actions[1].status == "failed"'
check "packet: the last 5 messages, oldest first" ev '.payload.recent_messages | length == 5 and .[4].content == "note 7" and .[0].content == "note 3" and .[0].role == "agent"'
check "packet: wait state" ev '.payload.wait | .active_wait_ids == [] and .last_wait_state == "resolved" and (.waits | length) == 1 and .waits[0].wait_id == "wdone001" and .waits[0].criteria == "the form is saved" and .waits[0].target == "screen" and .last_wait_event_at == .waits[0].resolved_at'
check "the wake command got its arguments (split on blanks)" grep -qx tag-one "$tmp/cmd.jsonl.args"
jq -c "select(.task_id == \"$Big\")" <"$tmp/cmd.jsonl" | head -1 >"$tmp/big.json"
check "a big task's packet is cut to fit (truncated, text < 64 KiB + prefix)" jqe \
	'.payload.truncated == true and (.text | length) < 65600 and .payload.progress.current == 0 and (.payload.progress.remaining | length) == 299' "$tmp/big.json"
check "... and still reaches openclaw as one argument" wait_for 3 grep -q "$Big" "$tmp/openclaw.jsonl"
check "cooldown: exactly one event for the stuck task" [ "$(events_for "$tmp/cmd.jsonl" "$S")" -eq 1 ]
check "not stuck: a task with a watching wait" [ "$(events_for "$tmp/cmd.jsonl" "$W")" -eq 0 ]
check "not stuck: a completed task" [ "$(events_for "$tmp/cmd.jsonl" "$C")" -eq 0 ]
check "not stuck: an active task with recent activity" [ "$(events_for "$tmp/cmd.jsonl" "$R")" -eq 0 ]

id1=$(jq -r .id "$tmp/ev.json")
hook_line=$(grep "\"task_id\":\"$S\"" "$tmp/hook.log" | head -1)
check "webhook: POST /hook as application/json" [ "${hook_line%% \{*}" = "POST /hook application/json" ]
echo "${hook_line#* * * }" >"$tmp/hook.json"
check "webhook: the same event as the command got" \
	sh -c "jq -e --slurpfile a '$tmp/ev.json' '. == \$a[0]' '$tmp/hook.json' >/dev/null"
check "webhook: one POST for the task" [ "$(grep -c "\"task_id\":\"$S\"" "$tmp/hook.log")" -eq 1 ]
grep "$S" "$tmp/openclaw.jsonl" | head -1 >"$tmp/oc.json"
check "openclaw: argv is system event --text TEXT --mode now" \
	jqe --arg id "$id1" 'length == 6 and .[0:3] == ["system","event","--text"] and .[4:6] == ["--mode","now"] and (.[3] | startswith("[task_stuck_resume] {")) and (.[3] | ltrimstr("[task_stuck_resume] ") | fromjson | .task_id) != null' "$tmp/oc.json"
check "openclaw: the text is the command event's text" \
	sh -c "[ \"\$(jq -r '.[3]' '$tmp/oc.json')\" = \"\$(jq -r .text '$tmp/ev.json')\" ]"
check "openclaw: called once for the task" [ "$(grep -c "$S" "$tmp/openclaw.jsonl")" -eq 1 ]

check "session: the task's wake goes to its OpenClaw session (--session-key)" wait_for 5 \
	sh -c "grep '$K' '$tmp/openclaw.jsonl' | head -1 | jq -e '.[6:] == [\"--session-key\",\"agent:main:s-42\"]' >/dev/null"
check "session: the webhook's JSON names it (sessionKey, OpenClaw's /hooks/wake field)" wait_for 5 \
	sh -c "grep '\"task_id\":\"$K\"' '$tmp/hook.log' | head -1 | sed 's/^[^{]*//' | jq -e '.sessionKey == \"agent:main:s-42\"' >/dev/null"
check "session: a key that is no session key is not passed on" wait_for 5 \
	sh -c "grep '$KB' '$tmp/openclaw.jsonl' | head -1 | jq -e 'length == 6' >/dev/null"
check "session: ... and the log says why" grep -q "openclaw_session_key is not a session key" "$DETM_DATA/logs/debug.log"

api GET "/api/tasks/$S/messages" >/dev/null
check "a system 'stuck' message is in the thread" \
	jqe '[.messages[] | select(.role == "system" and .msg_type == "stuck")] | length == 1 and (.[0].content | test("stuck"))' "$tmp/resp"
check "the alert does not count as activity (updated_at unchanged)" \
	[ "$(sql "SELECT updated_at FROM tasks WHERE id = '$S'")" = "$s_updated" ]

# The watching wait ends: the task is now idle with no wait, so it is stuck.
sql "UPDATE wait_jobs SET status = 'timed_out', resolved_at = $(now_ms) WHERE id = 'wwatch01'"
check "a task whose wait ended is reported" wait_for 5 has_events "$tmp/cmd.jsonl" "$W" 1
check "... with the ended wait in its packet" sh -c \
	"jq -e 'select(.task_id == \"$W\") | .payload.wait.last_wait_state == \"timed_out\"' <'$tmp/cmd.jsonl' >/dev/null"
check "wake-ups are logged with kind and task" grep -q "wake .*: task_stuck for task $S queued" "$DETM_DATA/logs/debug.log"
t0=$(date +%s%N)
daemon_stop
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "stops promptly and cleanly (rc $DETM_RC, ${ms} ms)" [ "$DETM_RC" -eq 0 -a "$ms" -lt 3000 ]
check "run 1: no sanitizer report" sanitizer_clean

# ==== run 2: short cooldown; a webhook answering 500 ====
start_recv hook500 --status 500 || { finish; exit 1; }
DETM_DATA=$(mktemp -d "$tmp/d2.XXXXXX")
ACU_WAKE_COMMAND="$tmp/record.sh $tmp/cmd2.jsonl tag-two" ACU_WAKE_URL="http://127.0.0.1:$RECV_PORT/h" \
	daemon_start --openclaw-cli "" --stuck-check 1 --stuck-after 30 --stuck-cooldown 3 \
	--wake-attempts 2 --wake-backoff-ms 100 || { bad "daemon start (run 2)"; finish; exit 1; }
T=$(new_task '{"name":"again","plan":["a"]}')
idle "$T" 60
check "short cooldown: a second event after the cooldown" wait_for 12 has_events "$tmp/cmd2.jsonl" "$T" 2
gap=$(jq -s "[.[] | select(.task_id == \"$T\") | .ts | sub(\"\\\\.[0-9]+Z$\"; \"Z\") | fromdate] | .[1] - .[0]" "$tmp/cmd2.jsonl")
check "... not before the cooldown (gap ${gap}s >= 3 s)" [ "${gap:-0}" -ge 3 ]
check "... the two events are different wake-ups" \
	sh -c "[ \$(jq -r 'select(.task_id == \"$T\") | .id' <'$tmp/cmd2.jsonl' | sort -u | wc -l) -ge 2 ]"
check "webhook 500: each event POSTed --wake-attempts (2) times" wait_for 3 \
	sh -c "[ \$(grep -c '\"id\":\"$(jq -r "select(.task_id == \"$T\") | .id" <"$tmp/cmd2.jsonl" | head -1)\"' '$tmp/hook500.log') -eq 2 ]"
check "webhook 500: logged as answered 500" grep -q "POST http://127.0.0.1:$RECV_PORT/h answered 500" "$DETM_DATA/logs/debug.log"
check "webhook 500: the command sink is not sent the event again" \
	[ "$(jq -r "select(.task_id == \"$T\") | .id" <"$tmp/cmd2.jsonl" | sort | uniq -d | wc -l)" -eq 0 ]
check "openclaw \"\" turns the OpenClaw sink off" grep -q "wake-ups: openclaw off" "$DETM_DATA/logs/debug.log"
stop_checked "run 2"

# ==== run 3: failing sinks ====
# A closed port: bind a receiver, note its port, stop it.
start_recv closed || { finish; exit 1; }
CLOSED=$RECV_PORT
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null
DETM_DATA=$(mktemp -d "$tmp/d3.XXXXXX")
ACU_WAKE_COMMAND="$tmp/fail.sh" ACU_WAKE_URL="http://127.0.0.1:$CLOSED/hook" \
	daemon_start --openclaw-cli "" --stuck-check 1 --stuck-after 30 --stuck-cooldown 3600 \
	--wake-attempts 3 --wake-backoff-ms 100 || { bad "daemon start (run 3)"; finish; exit 1; }
F=$(new_task '{"name":"failing sinks","plan":["a"]}')
idle "$F" 60
check "failing command: retried up to 3 attempts" wait_for 8 sh -c "[ \$(cat '$tmp/fail.count' 2>/dev/null | wc -l) -ge 3 ]"
sleep 1.5
check "... and then dropped (exactly 3 runs)" [ "$(lines "$tmp/fail.count")" -eq 3 ]
check "... logged as not delivered" grep -q "wake .* (task_stuck, task $F) not delivered after 3 attempts" "$DETM_DATA/logs/debug.log"
check "... its exit status is logged" grep -q "fail.sh exited with status 1" "$DETM_DATA/logs/debug.log"
check "... its output went to logs/wake.log" grep -q "fail.sh: failing on purpose" "$DETM_DATA/logs/wake.log"
check "closed webhook port: each attempt logged as failed" \
	[ "$(grep -c "POST http://127.0.0.1:$CLOSED/hook failed" "$DETM_DATA/logs/debug.log")" -eq 3 ]
api GET /api/health >/dev/null
check "the daemon stays healthy" [ "$CODE" = 200 -a "$(jqr .status)" = ok ]
api POST /api/tasks '{"name":"still works","plan":["a"]}' >/dev/null
check "... and serves requests" [ "$CODE" = 201 ]
stop_checked "run 3"

# ==== run 4: stuck detection off; a wake command that hangs ====
DETM_DATA=$(mktemp -d "$tmp/d4.XXXXXX")
ACU_WAKE_COMMAND="$tmp/record.sh $tmp/cmd4.jsonl x" ACU_STUCK_DETECTION=0 \
	daemon_start --openclaw-cli "" --stuck-check 1 --stuck-after 1 ||
	{ bad "daemon start (run 4)"; finish; exit 1; }
O=$(new_task '{"name":"off","plan":["a"]}')
idle "$O" 60
sleep 2.5
check "ACU_STUCK_DETECTION=0: no event" [ "$(lines "$tmp/cmd4.jsonl")" -eq 0 ]
check "... and it says so in the log" grep -q "stuck detection is off" "$DETM_DATA/logs/debug.log"
stop_checked "run 4"

cat >"$tmp/hang.sh" <<EOF
#!/bin/sh
echo \$\$ >>"$tmp/hang.count"
exec sleep 30
EOF
chmod +x "$tmp/hang.sh"
DETM_DATA=$(mktemp -d "$tmp/d5.XXXXXX")
ACU_WAKE_COMMAND="$tmp/hang.sh" daemon_start --openclaw-cli "" --stuck-check 1 --stuck-after 30 \
	--wake-timeout 1 --wake-attempts 5 --wake-backoff-ms 100 ||
	{ bad "daemon start (run 5)"; finish; exit 1; }
H=$(new_task '{"name":"hangs","plan":["a"]}')
idle "$H" 60
check "a hanging command is killed at the timeout and retried" wait_for 8 \
	sh -c "[ \$(cat '$tmp/hang.count' 2>/dev/null | wc -l) -ge 2 ]"
check "... logged as killed" grep -q "hang.sh took longer than 1000 ms; killed" "$DETM_DATA/logs/debug.log"
t0=$(date +%s%N)
daemon_stop
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "stop while a wake command runs: prompt and clean (rc $DETM_RC, ${ms} ms)" [ "$DETM_RC" -eq 0 -a "$ms" -lt 3000 ]
alive=0
for p in $(cat "$tmp/hang.count"); do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
check "... no wake command process is left" [ "$alive" -eq 0 ]
check "run 5: no sanitizer report" sanitizer_clean

# ==== run 6: an OpenClaw CLI that prints ok, then hangs past its timeout ====
# (OpenClaw's CLI prints "ok" once the Gateway took the event; Node can then
# take seconds to exit). Delivered once: never killed and sent again.
mkdir -p "$tmp/okbin"
printf '#!/bin/sh\necho $$ >>"%s/okhang.count"\necho ok\nexec sleep 30\n' "$tmp" >"$tmp/okbin/openclaw"
chmod +x "$tmp/okbin/openclaw"
DETM_DATA=$(mktemp -d "$tmp/d6.XXXXXX")
PATH="$tmp/okbin:$PATH" daemon_start --stuck-check 1 --stuck-after 30 --stuck-cooldown 3600 \
	--openclaw-timeout 1 --wake-attempts 5 --wake-backoff-ms 100 ||
	{ bad "daemon start (run 6)"; finish; exit 1; }
O=$(new_task '{"name":"ok then hang","plan":["a"]}')
idle "$O" 60
check "an OpenClaw CLI that printed ok is killed at --openclaw-timeout" wait_for 8 \
	grep -q "openclaw took longer than 1000 ms; killed" "$DETM_DATA/logs/debug.log"
sleep 1.5       # several backoffs: a retry would have started by now
check "... and counted delivered: run once, not again ($(wc -l <"$tmp/okhang.count" 2>/dev/null) runs)" \
	[ "$(wc -l <"$tmp/okhang.count")" -eq 1 ]
check "... logged as delivered after its ok" grep -q "printed 'ok' before it was killed" "$DETM_DATA/logs/debug.log"
check "... its output is in wake.log" grep -qx "ok" "$DETM_DATA/logs/wake.log"
daemon_stop
check "run 6: no sanitizer report" sanitizer_clean

finish
