#!/usr/bin/env bash
# loops/run.sh - loop detection (issue 38 item 1) on a real detmd, real task
# displays (Xvfb + openbox) and xterms, driven by a scripted agent (HTTP
# desktop actions, and detm-mcp's desktop_action for one loop):
#
#   repeat    the same click on dead space (the root window), three times:
#             flagged at the third, signal repeat, not before
#   cycle     type "x" then BackSpace in an xterm, three rounds: flagged at
#             the third round's BackSpace, signal cycle, period 2
#   noop      typing different words into an xterm that echoes nothing
#             (stty -echo), through detm-mcp: flagged at the fourth,
#             signal noop
#   progress  an xterm fed a new command line at a time (type, Return),
#             every one changing the screen: never flagged
#   item      a plan item with many times the actions and the time of the
#             one before it (the agent's own task_log_action rows): item
#   pause     a task with metadata loop_pause_after 2: the second loop
#             pauses it and asks for a human (driver state helping, the
#             wake event human_needed)
#
# Each flag: GET task's loops, a `loop` system message in the thread, the
# `task_loop` wake-up (a --wake-command recording the event JSON) whose
# sentence says what repeats and since when, the `loop` SSE event. No
# timing thresholds: only how many inputs it took.
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init loops --term --rm-data
for t in xdotool jq xterm; do
	command -v $t >/dev/null || { bad "needs $t" "run scripts/install-deps.sh test"; finish; exit 1; }
done
cat >"$tmp/record.sh" <<EOF
#!/bin/sh
# one wake event JSON per line
{ cat; echo; } >>"$tmp/wake.jsonl"
EOF
chmod +x "$tmp/record.sh"
: >"$tmp/wake.jsonl"
ACU_OPENCLAW_CLI="" ACU_WAKE_COMMAND="$tmp/record.sh" daemon_start --loop-item-min 6 ||
	{ bad "daemon start"; finish; exit 1; }

new_task() { # new_task NAME [extra json]: a task with its own display; prints its id
	api POST /api/tasks "{\"name\":\"$1\",\"display\":true${2:+,$2}}"
	jqr .task_id
}
act() { # act TASK JSON-FIELDS: one desktop action (the scripted agent's step)
	api POST /api/desktop/action "{\"task_id\":\"$1\",$2}"
	[ "$CODE" = 200 ] || bad "action on $1: $2" "$CODE $(head -c 300 "$tmp/resp")"
}
loops_of() { curl -fsS "$DETM_URL/api/tasks/$1" | jq -c '.loops'; }
no_loop() { # no_loop NAME TASK
	local l; l=$(loops_of "$2")
	if [ "$l" = null ]; then ok "$1"; else bad "$1" "$l"; fi
}
flagged() { # flagged NAME TASK JQ: GET task's loops holds JQ
	local l; l=$(loops_of "$2")
	if jq -e "$3" <<<"$l" >/dev/null 2>&1; then ok "$1"; else bad "$1" "$l"; fi
}
woken() { # woken NAME TASK JQ: a task_loop wake event for TASK holding JQ was delivered
	if wait_for 10 sh -c "jq -c 'select(.event == \"task_loop\" and .task_id == \"$2\")' '$tmp/wake.jsonl' 2>/dev/null |
		jq -e '$3' >/dev/null 2>&1"; then ok "$1"; else bad "$1" "$(tail -c 600 "$tmp/wake.jsonl")"; fi
}
xterm_on() { # xterm_on TASK TITLE [args...]: an xterm up on TASK's display
	local t=$1 title=$2
	shift 2
	xstart "$t" xterm -geometry 60x10+40+40 -T "$title" "$@"
	if xwait "$t" "$title" 20 && wait_for 10 sh -c "DISPLAY=$(disp_of "$t") XAUTHORITY=$(auth_of "$t") \
		xdotool getwindowfocus getwindowname 2>/dev/null | grep -qx '$title'"; then
		ok "an xterm '$title' has the focus"
	else
		bad "an xterm '$title' has the focus" "$(tail -3 "$tmp/clients.log")"
	fi
	sleep 0.5       # its first prompt drawn
}

# ---- repeat: the same click on dead space ----
R=$(new_task repeat)
xterm_on "$R" loops-r
# The first click on the root takes the focus from the xterm, which redraws
# itself: the screen changed, so that one starts no run. The agent's first
# click lands elsewhere.
act "$R" '"action":"click","x":900,"y":500'
act "$R" '"action":"click","x":1100,"y":600'
expect "a click on the bare root: suspected_noop" 200 '.effect == "suspected_noop"'
act "$R" '"action":"click","x":1102,"y":601'
no_loop "two clicks on dead space are no loop yet" "$R"
act "$R" '"action":"click","x":1100,"y":600'
flagged "the third is: signal repeat, 3 times, what says the click" "$R" \
	'.count == 1 and .last.signal == "repeat" and .last.times == 3 and (.last.what | startswith("click at (1100, 600)"))
	 and (.last.since | type) == "string" and (.last.sentence | contains("since"))'
api GET "/api/tasks/$R/messages"
expect "the thread has a loop system message explaining it" 200 \
	'[.messages[] | select(.role == "system" and .msg_type == "loop")] | length == 1
	 and (.[0].content | startswith("Loop detected: the same input (click at (1100, 600)) 3 times in a row since"))'
woken "the agent is woken: task_loop with what repeats and since when" "$R" \
	'(.text | contains("loop detected: the same input (click at (1100, 600)) 3 times in a row since")) and .payload.signal == "repeat"'
check "the loop event went out on the event stream" sh -c \
	"curl -s --max-time 2 '$DETM_URL/api/events?since=0' | grep -q '^data: {\"type\":\"loop\",\"op\":\"created\",\"task_id\":\"$R\"'"
api GET "/api/tasks?status=active"
expect "the task list carries the loops (the dashboard's marker)" 200 \
	"any(.tasks[]; .task_id == \"$R\" and .loops.count == 1)"
api GET "/api/tasks/$R"
expect "one loop is under the default limit (3): the task stays active" 200 '.status == "active"'

# ---- cycle: type x, BackSpace, again ----
C=$(new_task cycle)
xterm_on "$C" loops-c
for i in 1 2; do
	act "$C" '"action":"type","text":"x"'
	[ "$i" = 1 ] && expect "typing x into the xterm: confirmed" 200 '.effect == "confirmed"'
	act "$C" '"action":"press_key","keys":"BackSpace"'
	[ "$i" = 1 ] && expect "BackSpace: confirmed" 200 '.effect == "confirmed"'
done
no_loop "two rounds of type x / BackSpace are no loop yet" "$C"
act "$C" '"action":"type","text":"x"'
no_loop "... nor two and a half" "$C"
act "$C" '"action":"press_key","keys":"BackSpace"'
flagged "the third round is: signal cycle, period 2, 3 times" "$C" \
	'.count == 1 and .last.signal == "cycle" and .last.period == 2 and .last.times == 3
	 and (.last.what | test("^type .*x.* then press_key .*BackSpace"))'
woken "the wake-up says which two inputs repeat" "$C" \
	'(.text | contains("the same 2 inputs")) and (.text | contains("BackSpace")) and .payload.signal == "cycle"'

# ---- noop: typing into an xterm that echoes nothing, through detm-mcp ----
N=$(new_task noop)
xterm_on "$N" loops-n -e sh -c 'stty -echo -icanon; exec sleep 600'
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
for i in 1 2 3 4; do
	mcp_calls "$tmp/mcp.$i" 60 "$init" \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"desktop_action","arguments":{"task_id":"'"$N"'","action":"type","text":"word '"$i"'"}}}'
	[ "$i" = 3 ] && no_loop "three suspected_noop in a row are no loop yet (--loop-noops 4)" "$N"
done
check "MCP desktop_action typing into nothing: suspected_noop" \
	[ "$(jq -r 'select(.id == 2) | .result.structuredContent.effect' "$tmp/mcp.4")" = suspected_noop ]
flagged "the fourth is: signal noop, 4 in a row (the MCP path feeds it too)" "$N" \
	'.count == 1 and .last.signal == "noop" and .last.times == 4 and (.last.what | contains("word 4"))'
woken "the wake-up says nothing changed" "$N" '(.text | contains("changed nothing on the screen")) and .payload.signal == "noop"'

# ---- progress: a new command line at a time ----
P=$(new_task progress)
xterm_on "$P" loops-p
for i in 1 2 3 4 5 6 7 8; do
	act "$P" "\"action\":\"type\",\"text\":\"echo progress line $i\""
	act "$P" '"action":"press_key","keys":"Return"'
done
expect "the last Return still changed the screen" 200 '.effect == "confirmed"'
no_loop "16 inputs of slow real progress (each line new on screen): never flagged" "$P"
api GET "/api/tasks/$P/messages"
expect "... and no loop message" 200 '[.messages[] | select(.msg_type == "loop")] | length == 0'

# ---- item: far longer than the item before it ----
I=$(new_task item '"plan":["open","fill","send"]')
log_on() { api POST "/api/tasks/$I/actions" "{\"action_type\":\"other\",\"summary\":\"$2\",\"status\":\"completed\",\"ordinal\":$1}"; }
log_on 0 "open a"
log_on 0 "open b"
sleep 1.2
for i in $(seq 1 12); do
	log_on 1 "fill $i"
	[ "$i" -eq 4 ] && sleep 4.2      # the item's time span: over 4 x the 1 s floor
done
flagged "an item with 4x the actions and the time of the item before: signal item" "$I" \
	'.last.signal == "item" and .last.ordinal == 1 and .last.times >= 8 and
	 (.last.sentence | contains("plan item 1 has taken"))'

# ---- pause past the task's limit ----
Z=$(new_task pause '"metadata":{"loop_pause_after":2}')
xterm_on "$Z" loops-z
act "$Z" '"action":"click","x":900,"y":500'
for i in 1 2 3; do act "$Z" '"action":"click","x":1000,"y":650'; done
flagged "the first loop on a task with loop_pause_after 2" "$Z" '.count == 1 and .paused_at == null'
api GET "/api/tasks/$Z"
expect "... leaves it active" 200 '.status == "active"'
for i in 1 2 3; do act "$Z" '"action":"click","x":1000,"y":650'; done
flagged "the second loop: recorded, and paused_at set" "$Z" '.count == 2 and .signals.repeat == 2 and (.paused_at | type) == "string"'
api GET "/api/tasks/$Z"
expect "the task is paused" 200 '.status == "paused"'
api GET "/api/tasks/$Z/takeover"
expect "and a human is asked for (request_human's path): state helping, the reason says loops" 200 \
	'.state == "helping" and (.help.reason | contains("loop detection paused this task"))'
api GET "/api/tasks/$Z/messages"
expect "the thread says who paused it and why" 200 \
	'any(.messages[]; .msg_type == "control" and (.content | contains("Loop detection")))'
woken "the second wake-up says the task is paused" "$Z" '.payload.count == 2 and (.text | contains("The task is paused"))'
check "the operator is woken: human_needed" wait_for 10 sh -c \
	"jq -e 'select(.event == \"human_needed\" and .task_id == \"$Z\")' '$tmp/wake.jsonl' >/dev/null 2>&1"
finish
