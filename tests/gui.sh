#!/usr/bin/env bash
# gui.sh - the GUI agent suite: gui_find / gui_do on a real 1920x1080 Xvfb
# with a real xterm at a known place, grounding answers scripted through
# bin/vision-stub in each backend's wire format (UI-TARS text via Ollama
# and OpenRouter, Anthropic computer-use tool_use); the task works on the
# shared desktop (an Xvfb of this suite's). Screenshots go to the
# model at 960 px, so every answer is mapped back with scale 2; where the
# pointer landed and which window got focus are read with xdotool.
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

tmp=$(mktemp -d /tmp/detm-gui.XXXXXX)
pids=()
cleanup() {
	daemon_kill9
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"
}
trap cleanup EXIT

key="stub-key-$$"
"$DETM_BIN/vision-stub" --port 0 --port-file "$tmp/stub.port" --key "$key" 2>"$tmp/stub.log" &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$tmp/stub.port" ] && break; sleep 0.05; done
STUB="http://127.0.0.1:$(cat "$tmp/stub.port")"

stub_say() { curl -fsS -X POST "$STUB/_stub/script" -d "$(jq -cn --arg a "$1" '{answers:[$a]}')" >/dev/null; }
export OLLAMA_URL="$STUB" ACU_CLAUDE_URL="$STUB" ACU_OPENROUTER_URL="$STUB" ANTHROPIC_API_KEY="$key" \
	ACU_GROUNDING_MAX_DIM=960 ACU_OPENCLAW_CLI=""
# The shared desktop is an Xvfb of ours, so it outlives the daemon
# restarts that switch backends (a task's own display would not).
mkfifo "$tmp/dfd"
Xvfb -displayfd 5 -screen 0 1920x1080x24 -nolisten tcp 5>"$tmp/dfd" >/dev/null 2>&1 &
pids+=($!)
read -r num <"$tmp/dfd" || { bad "Xvfb"; finish; exit 1; }
D=":$num"; A=/dev/null
start() { # start [VAR=value...]
	unset ACU_GUI_AGENT_BACKEND OPENROUTER_API_KEY
	local kv
	for kv in "$@"; do export "${kv?}"; done
	daemon_start --display "$D"
}
gdo() { api POST /api/gui/do "{\"task_id\":\"$T\",\"instruction\":$(jq -Rn --arg s "$1" '$s')}" >/dev/null; }
pointer() { DISPLAY=$D XAUTHORITY=$A xdotool getmouselocation | sed 's/x:\([0-9]*\) y:\([0-9]*\).*/\1,\2/'; }
focus() { DISPLAY=$D XAUTHORITY=$A xdotool getwindowfocus getwindowname 2>/dev/null; }
at() { [ "$(pointer)" = "$1" ]; }
focused() { [ "$(focus)" = "$1" ]; }
poll() { local i; for i in $(seq 1 60); do "$@" && return 0; sleep 0.05; done; return 1; }
# Park the pointer and wait until the server shows it there (xdotool's
# own request is asynchronous with respect to our queries).
park() { DISPLAY=$D XAUTHORITY=$A xdotool mousemove 5 5; poll at 5,5; }

start || { bad "daemon start"; finish; exit 1; }
api POST /api/tasks '{"name":"gui","plan":["click"]}' >/dev/null
T=$(jqr .task_id)
DISPLAY=$D XAUTHORITY=$A xterm -geometry 20x5+560+380 -T target -e sleep 600 2>/dev/null &
pids+=($!)
for _ in $(seq 1 100); do DISPLAY=$D XAUTHORITY=$A xdotool search --name '^target$' >/dev/null 2>&1 && break; sleep 0.05; done
api GET /api/capabilities >/dev/null
expect "capabilities: gui on, backend named" 200 '.capabilities.gui and .gui.backend == "direct"'

# ---- direct: coordinates in the instruction ----
gdo "click(600, 400)"
expect "direct: click(600, 400)" 200 '.ok and .x == 600 and .y == 400 and .action == "click" and (.after.image_b64 | length) > 100'
check "direct: the pointer is at 600,400" at 600,400
check "direct: the click focused the window there" poll focused target
for good in "double_click(10, 20)" "right click (30,40)" "move(50, 60)" "drag(100,100,200,150)" \
	'type("hi")' 'type "hello there"' "press ctrl+a" 'press("Return")' "scroll down 5" "scroll(up, 2)"; do
	gdo "$good"
	expect "direct parses: $good" 200 '.ok'
done
for badi in "click the Save button" "click(1,)" "click(1 2)" "drag(1,2,3)" "fly away" "type" \
	"scroll sideways" "press" "click(5000, 10)" "click(-5, 10)"; do
	gdo "$badi"
	expect "direct refuses: $badi" 400 '.error.field == "instruction"'
done
gdo "click the Save button"
expect "direct: naming an element asks for coordinates or a backend" 400 '.error.message | test("ACU_GUI_AGENT_BACKEND")'
api POST /api/gui/do '{"instruction":""}' >/dev/null
expect "empty instruction is 400" 400 '.error.field == "instruction"'

# ---- uitars through Ollama, scale 2 ----
daemon_stop
start ACU_GUI_AGENT_BACKEND=uitars || bad "start uitars"
park
stub_say "Action: click(start_box='(310,205)')"
api POST /api/gui/find "{\"task_id\":\"$T\",\"description\":\"the target terminal\"}" >/dev/null
expect "uitars find: image point mapped with scale 2" 200 \
	'.x == 620 and .y == 410 and .image_x == 310 and .scale == 2 and .image_size.width == 960 and .screen_size.width == 1920 and .backend == "uitars" and .model == "0000/ui-tars-1.5-7b"'
check "find does not act: the pointer did not move" at 5,5
check "the model got a 960 px JPEG and the description" sh -c \
	"curl -fsS $STUB/_stub/requests | jq -e '.requests | last | .path == \"/api/chat\" and .images[0].width == 960 and (.prompt | test(\"the target terminal\"))' >/dev/null"
stub_say "click(start_box='<|box_start|>(300,200)<|box_end|>')"
gdo "click the target terminal"
expect "uitars do: clicks at the mapped point" 200 '.ok and .x == 600 and .y == 400 and .target == "the target terminal"'
check "uitars: the pointer landed on the window (600,400)" at 600,400
stub_say "I cannot find that element on the screen."
park
gdo "click the missing button"
expect "an answer without a coordinate is an error naming it" 503 '.error.message | test("cannot find that element")'
check "and nothing was clicked" at 5,5
stub_say "click(start_box='(5000,5000)')"
gdo "click the far button"
expect "an answer outside the image is an error" 503 '.error.message | test("outside the 960x540 image")'
check "and nothing was clicked" at 5,5
stub_say "click(start_box='(280,190,340,220)')"
gdo "double click the target"
expect "a (x1,y1,x2,y2) box: its centre" 200 '.x == 620 and .y == 410 and .action == "double_click"'

# ---- uitars through OpenRouter ----
daemon_stop
start ACU_GUI_AGENT_BACKEND=uitars OPENROUTER_API_KEY="$key" || bad "start uitars/openrouter"
park
stub_say "<point>300 200</point>"
gdo "click the target"
expect "uitars via OpenRouter" 200 '.x == 600 and .y == 400 and .model == "bytedance/ui-tars-1.5-7b"'
check "OpenRouter request carried the key and an image_url" sh -c \
	"curl -fsS $STUB/_stub/requests | jq -e '.requests | last | .path == \"/chat/completions\" and (.headers.authorization | test(\"Bearer\")) and .image_count == 1' >/dev/null"

# ---- claude computer use ----
daemon_stop
start ACU_GUI_AGENT_BACKEND=claude_cu || bad "start claude_cu"
park
stub_say 'TOOL_USE {"action":"left_click","coordinate":[300,200]}'
gdo "right click the target"
expect "claude_cu: tool_use coordinate mapped with scale 2" 200 '.x == 600 and .y == 400 and .action == "right_click" and .backend == "claude_cu"'
check "claude_cu: the pointer landed at 600,400" at 600,400
check "claude_cu declared the image size to the model" sh -c \
	"curl -fsS $STUB/_stub/requests | jq -e '.requests | last | .path == \"/v1/messages\" and .images[0].width == 960' >/dev/null"

# ---- logged on the task ----
api GET "/api/tasks/$T?detail=actions" >/dev/null
n=$(jq '[.. | objects | select(.action_type? == "gui" and (.summary? // "" | test("^gui_")))] | length' <"$tmp/resp")
check "gui calls are logged as gui actions ($n)" [ "$n" -ge 20 ]
check "with the backend in their input" sh -c "jq -e '[.. | objects | select(.action_type? == \"gui\") | .input_data.backend? // empty] | index(\"claude_cu\") != null' <$tmp/resp >/dev/null"
daemon_stop

finish
