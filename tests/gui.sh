#!/usr/bin/env bash
# gui.sh - the GUI agent suite: POST /api/gui/find and /api/gui/do on a real
# detmd driving a real 1920x1080 Xvfb task display with real xterms, every
# grounding backend answered by bin/vision-stub (UI-TARS text over Ollama
# and OpenRouter, Anthropic computer-use tool_use, OmniParser /parse/ plus
# a Claude picker). Grounding images are downscaled to 960 px (scale 2):
# the model answers in image pixels and the click must land at image x 2.
#
# Oracles are independent of detmd: xdotool getmouselocation (where the
# pointer is), xdotool getwindowfocus getwindowname (a click focuses the
# window under it), and the stub's request records (what was sent).
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

tmp=$(mktemp -d /tmp/detm-gui.XXXXXX)
pids=()
cleanup() {
	daemon_stop
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"
}
trap cleanup EXIT
export LC_ALL=C.UTF-8

key="stub-key-$$"
"$DETM_BIN/vision-stub" --port 0 --port-file "$tmp/stub.port" --key "$key" 2>"$tmp/stub.log" &
pids+=($!)
for i in $(seq 1 100); do [ -s "$tmp/stub.port" ] && break; sleep 0.05; done
STUB="http://127.0.0.1:$(cat "$tmp/stub.port")"

stub_check() { # stub_check NAME jq-expr-on-last-request
	local v; v=$(stub_last "$2")
	if [ "$v" = "true" ]; then ok "$1"; else bad "$1" "$2 -> $v in $(stub_last . | head -c 400)"; fi
}
xenv() { DISPLAY=$DISP XAUTHORITY=$AUTH "$@" 2>>"$tmp/clients.log"; }
pointer() { xenv xdotool getmouselocation | sed -E 's/x:([0-9]+) y:([0-9]+).*/\1,\2/'; }
focus() { xenv xdotool getwindowfocus getwindowname; }
pointer_is() { [ "$(pointer)" = "$1" ]; }
focus_is() { [ "$(focus)" = "$1" ]; }
gdo() { # gdo INSTRUCTION-JSON-STRING [extra]
	api POST /api/gui/do "{\"task_id\":\"$T\",\"instruction\":$1${2:+,$2}}"
}
gfind() { api POST /api/gui/find "{\"task_id\":\"$T\",\"description\":$1}"; }
at() { # at NAME POINT: the pointer is at POINT (x,y) per xdotool
	if wait_for 2 pointer_is "$2"; then ok "$1"; else bad "$1" "pointer at $(pointer), want $2"; fi
}
focused() {
	if wait_for 3 focus_is "$2"; then ok "$1"; else bad "$1" "focus on '$(focus)', want '$2'"; fi
}

# The scene: a 1920x1080 task display, a "target" xterm at +400+300 and an
# "other" xterm at +1000+600. (450,330) is inside target, (1050,650) inside other.
TGT=450,330
OTH=1050,650
scene() { # scene VAR=value...: restart detmd with that config, new task and windows
	daemon_stop   # SIGTERM: detmd stops its Xvfb, and the xterms on it exit
	rm -rf "${DETM_DATA:-/nonexistent}"
	unset DETM_DATA ACU_GUI_AGENT_BACKEND OPENROUTER_API_KEY ANTHROPIC_API_KEY ACU_OMNIPARSER_URL \
		ACU_GROUNDING_MAX_DIM ACU_UITARS_COORDS
	local kv
	for kv in "$@"; do export "${kv?}"; done
	daemon_start || { bad "daemon start ($*)"; return 1; }
	api POST /api/tasks '{"name":"gui","plan":["gui work"],"display":true,"display_resolution":"1920x1080"}'
	T=$(jq -r .task_id <"$tmp/resp")
	DISP=$(jq -r .metadata.display <"$tmp/resp")
	AUTH=$(jq -r .metadata.xauthority <"$tmp/resp")
	DISPLAY=$DISP XAUTHORITY=$AUTH xterm -geometry 20x5+400+300 -T target -e sleep 600 2>>"$tmp/clients.log" &
	pids+=($!)
	DISPLAY=$DISP XAUTHORITY=$AUTH xterm -geometry 20x5+1000+600 -T other -e sleep 600 2>>"$tmp/clients.log" &
	pids+=($!)
	wait_for 10 sh -c "DISPLAY=$DISP XAUTHORITY=$AUTH xdotool search --name '^other$' >/dev/null 2>&1" &&
		wait_for 10 sh -c "DISPLAY=$DISP XAUTHORITY=$AUTH xdotool search --name '^target$' >/dev/null 2>&1" ||
		bad "xterms appear ($*)"
	sleep 0.2
}
export OLLAMA_URL="$STUB" ACU_CLAUDE_URL="$STUB" ACU_OPENROUTER_URL="$STUB" ACU_GROUNDING_TIMEOUT_MS=5000

# ======== direct (the default) ========
scene || { finish; exit 1; }
api GET /api/capabilities
expect "capabilities: gui true, backend direct" 200 '.capabilities.gui == true and .gui.backend == "direct"'

gdo '"click(1050, 650)"'
expect "direct: click(1050, 650)" 200 '.action == "click" and .x == 1050 and .y == 650 and .grounded == false and .backend == "direct"'
at "direct: the pointer is where asked" "$OTH"
focused "direct: the click focused the window under it" other
expect "direct: an after-screenshot <= 320 px" 200 '.after.width <= 320 and (.after.image_b64 | length) > 100 and .after.media_type == "image/jpeg"'
expect "direct: timing reported" 200 '.timing.total_ms >= 0 and .timing.act_ms >= 0'
gdo '"click(450,330)"' '"after_screenshot":false'
expect "direct: after_screenshot false" 200 '.after == null'
focused "direct: click(450,330) focuses target" target

# The parsing table: valid forms.
ok_form() { # ok_form INSTRUCTION-JSON ACTION [jq]
	gdo "$1"
	expect "valid: $1" 200 ".action == \"$2\"${3:+ and $3}"
}
ok_form '"double_click(450, 330)"' double_click '.clicks == 2 and .x == 450'
ok_form '"right_click(460,335)"' right_click '.button == 3 and .x == 460 and .y == 335'
ok_form '"move(10, 20)"' move '.x == 10 and .y == 20'
at "valid: move(10, 20) moved the pointer" 10,20
ok_form '"type(\"hi there\")"' type '.chars == 8'
ok_form "\"type('it\\\\'s')\"" type '.chars == 4'
ok_form '"press(\"ctrl+e\")"' press '.keys == "ctrl+e"'
ok_form '"press Return"' press '.keys == "Return"'
ok_form '"scroll(450, 330, \"down\", 2)"' scroll '.direction == "down" and .amount == 2 and .x == 450'
ok_form '"scroll(\"up\")"' scroll '.amount == 3'
ok_form '"scroll down 5 at 450, 330"' scroll '.amount == 5 and .x == 450'
ok_form '"drag(100, 100, 200, 150)"' drag '.x == 100 and .x2 == 200 and .y2 == 150'
ok_form '"drag (100, 100) to (300, 200)"' drag '.x2 == 300 and .y2 == 200'
ok_form '"click at 1050, 650"' click '.x == 1050 and .y == 650'
ok_form '"double-click (450, 330)"' double_click '.x == 450'
ok_form '"click(start_box='"'"'(460,340)'"'"')"' click '.x == 460 and .y == 340'
ok_form '"  Click(5,6);  "' click '.x == 5 and .y == 6'

# Malformed forms: 400, nothing done (the pointer stays put).
gdo '"move(777, 555)"' >/dev/null
bad_form() { # bad_form INSTRUCTION-JSON [jq on the error]
	gdo "$1"
	expect "malformed: $1" 400 ".error.field == \"instruction\"${2:+ and $2}"
}
bad_form '"click(450)"' '(.error.message | test("click\\(x, y\\)"))'
bad_form '"click(a, b, c)"'
bad_form '"click(1,2"' '(.error.message | test("end with"))'
bad_form '"type()"'
bad_form '"type(hello"'
bad_form '"scroll(1, 2, \"sideways\")"'
bad_form '"scroll(\"down\", 500)"'
bad_form '"drag(1, 2, 3)"'
bad_form '"frobnicate(1, 2)"' '(.error.message | test("unknown action"))'
bad_form '"dance wildly"' '(.error.message | test("start with an action"))'
bad_form '"press"'
api POST /api/gui/do "{\"task_id\":\"$T\"}"
expect "malformed: instruction missing" 400 '.error.field == "instruction"'
api POST /api/gui/do "{\"task_id\":\"$T\",\"instruction\":\"click(1,1)\",\"bogus\":1}"
expect "malformed: unknown field" 400 '.error.field == "bogus"'
# Out of range: 400 naming the screen size.
bad_form '"click(1920, 5)"' '(.error.message | test("1920x1080"))'
bad_form '"click(-1, 5)"' '(.error.message | test("off screen"))'
bad_form '"double_click(100, 1080)"' '(.error.message | test("1920x1080"))'
bad_form '"drag(10, 10, 5000, 10)"' '(.error.message | test("drag end"))'
bad_form '"scroll(3000, 10, \"up\")"'
at "malformed and out-of-range forms did not move the pointer" 777,555
# Words need a model.
gdo '"click the Save button"'
expect "direct: a target in words is 400 naming the forms" 400 \
	'(.error.message | test("direct backend needs coordinates")) and (.error.message | test("click\\(x, y\\)"))'
gfind '"the Save button"'
expect "direct: gui/find is 400" 400 '(.error.message | test("direct backend"))'
api GET "/api/tasks/$T?detail=actions"
n=$(jq '[.. | objects | select(.action_type? == "gui" and ((.input_data? // "" | tostring) | test("gui_do")))] | length' <"$tmp/resp")
check "logging: gui_do calls are gui actions on the task ($n)" [ "$n" -ge 20 ]
check "logging: failed gui_do calls are logged as failed" sh -c \
	"jq -e '[.. | objects | select(.action_type? == \"gui\" and .status? == \"failed\" and ((.summary // \"\") | test(\"gui_do\")))] | length > 0' <$tmp/resp >/dev/null"
check "logging: a failed gui_do's output holds the one error shape" sh -c \
	"jq -e '[.. | objects | select(.action_type? == \"gui\" and .status? == \"failed\" and ((.summary // \"\") | test(\"gui_do\"))) | .output_data.error] | length > 0 and all(.[]; (.code | type) == \"string\" and (.message | type) == \"string\" and has(\"field\") and (has(\"error\") | not))' <$tmp/resp >/dev/null"

# ======== uitars through Ollama, image downscaled to 960 (scale 2) ========
# UI-TARS 1.5 answers in pixels of the image as it saw it: 960x540 after
# its smart resize is 952x532, so (225,165) is image (226.9,167.5), screen
# (454,335), inside target (tests/uitars checks the mapping in depth).
TGU=454,335
scene ACU_GUI_AGENT_BACKEND=uitars ACU_GROUNDING_MAX_DIM=960 || { finish; exit 1; }
api GET /api/capabilities
expect "uitars: capabilities name backend and provider" 200 '.gui.backend == "uitars" and .gui.provider == "ollama"'
gdo '"click(1050, 650)"' >/dev/null
stub_script '{"answers":["Action: click(start_box='"'"'(225,165)'"'"')"]}'
gdo '"click the target window"'
expect "uitars/ollama: grounded click" 200 \
	'.grounded and .x == 454 and .y == 335 and .backend == "uitars" and .model == "0000/ui-tars-1.5-7b"'
expect "uitars/ollama: scale 2 explicit (960 image, 1920 screen)" 200 \
	'.grounding.scale == 2 and .grounding.image_size.width == 960 and .grounding.screen_size.width == 1920 and .grounding.image_point.x == 226.891'
at "uitars/ollama: the click landed at image x 2" "$TGU"
focused "uitars/ollama: the target window got the click" target
stub_check "uitars/ollama: Ollama wire format (keep_alive, model, one 960-px JPEG)" \
	'.api == "ollama" and .keep_alive == "5m" and .model == "0000/ui-tars-1.5-7b" and .images[0].width == 960 and .images[0].jpeg and (.prompt | test("target window"))'

gdo '"click(1050, 650)"' >/dev/null
stub_script '{"answers":["start_box='"'"'<|box_start|>(225,165)<|box_end|>'"'"'"]}'
gfind '"the target window"'
expect "uitars: gui/find returns screen and image coordinates" 200 \
	'.x == 454 and .y == 335 and .scale == 2 and .image_size.width == 960 and .backend == "uitars" and .display != null'
at "uitars: gui/find did not move the pointer" "$OTH"
focused "uitars: gui/find did not click" other

stub_script '{"answers":["click(start_box='"'"'(200,150,250,180)'"'"')"]}'
gdo '"double click the target"'
expect "uitars: a (x1,y1,x2,y2) box clicks its centre" 200 \
	'.action == "double_click" and .x == 454 and .y == 335 and .grounding.box.x1 == 403 and .grounding.box.y2 == 365'
gdo '"click(1050, 650)"' >/dev/null
stub_script '{"answers":["<point>225 165</point>"]}'
gdo '"type \"ok\" into the target"'
expect "uitars: type into a target clicks it, then types" 200 '.action == "type" and .x == 454 and .chars == 2'
focused "uitars: typing went to the target" target

gdo '"click(1050, 650)"' >/dev/null
stub_script '{"answers":["I cannot find that element on the screen"]}'
gdo '"click the missing widget"'
expect "uitars: an unparseable answer is 503 quoting it" 503 '(.error.message | test("cannot find that element"))'
stub_script '{"answers":["click(start_box='"'"'(5000,5000)'"'"')"]}'
gdo '"click the far widget"'
expect "uitars: an answer outside the image is 503" 503 '(.error.message | test("outside the 960x540 image"))'
at "uitars: bad answers moved nothing" "$OTH"
focused "uitars: bad answers clicked nothing" other
stub_script '{"fail_always":500}'
gfind '"anything"'
expect "uitars: a failing server is 503 with its status" 503 '(.error.message | test("HTTP 500"))'
api GET "/api/tasks/$T?detail=actions"
check "logging: grounded calls logged with backend and model" sh -c \
	"jq -e '[.. | objects | select(.action_type? == \"gui\" and ((.summary // \"\") | test(\"uitars 0000/ui-tars-1.5-7b\")))] | length >= 3' <$tmp/resp >/dev/null"
check "logging: the log row carries scale and the raw answer" sh -c \
	"jq -e '[.. | objects | select(.action_type? == \"gui\") | .output_data? | tostring | select(test(\"scale\") and test(\"start_box\"))] | length >= 1' <$tmp/resp >/dev/null"

# ======== uitars through OpenRouter ========
scene ACU_GUI_AGENT_BACKEND=uitars ACU_GROUNDING_MAX_DIM=960 OPENROUTER_API_KEY="$key" || { finish; exit 1; }
gdo '"click(1050, 650)"' >/dev/null
stub_script '{"answers":["Thought: the target.\nAction: click(start_box='"'"'(225,165)'"'"')"]}'
gdo '"click the target window"'
expect "uitars/openrouter: grounded click" 200 '.x == 454 and .y == 335 and .model == "bytedance/ui-tars-1.5-7b"'
at "uitars/openrouter: the click landed" "$TGU"
focused "uitars/openrouter: target focused" target
stub_check "uitars/openrouter: OpenAI wire format with the key" \
	'.api == "openai" and .path == "/chat/completions" and .headers.authorization == "Bearer '"$key"'" and .max_tokens == 100 and .images[0].width == 960'

# ======== uitars, 0..1000 relative answers ========
scene ACU_GUI_AGENT_BACKEND=uitars ACU_GROUNDING_MAX_DIM=960 ACU_UITARS_COORDS=1000 || { finish; exit 1; }
gdo '"click(1050, 650)"' >/dev/null
stub_script '{"answers":["click(start_box='"'"'(234,306)'"'"')"]}'
gdo '"click the target window"'
expect "uitars/1000: relative answer mapped (234/1000*1920, 306/1000*1080)" 200 '.x == 449 and .y == 330'
focused "uitars/1000: target focused" target

# ======== claude_cu ========
scene ACU_GUI_AGENT_BACKEND=claude_cu ACU_GROUNDING_MAX_DIM=960 ANTHROPIC_API_KEY="$key" || { finish; exit 1; }
gdo '"click(1050, 650)"' >/dev/null
stub_script '{"answers":["I will click it."],"tool_use":{"action":"left_click","coordinate":[225,165]}}'
gdo '"click the target window"'
expect "claude_cu: grounded click" 200 '.x == 450 and .y == 330 and .backend == "claude_cu" and .grounding.scale == 2'
at "claude_cu: the click landed at image x 2" "$TGT"
focused "claude_cu: target focused" target
stub_check "claude_cu: computer tool declared with the image size, beta header" \
	'.api == "anthropic" and .tools[0].type == "computer_20250124" and .tools[0].display_width_px == 960 and .tools[0].display_height_px == 540 and .headers["anthropic-beta"] == "computer-use-2025-01-24"'
gdo '"click(1050, 650)"' >/dev/null
stub_script '{"answers":["I do not see a target."]}'
gdo '"click the target window"'
expect "claude_cu: no tool_use is 503 quoting the text" 503 '(.error.message | test("without a tool_use")) and (.error.message | test("do not see"))'
stub_script '{"tool_use":{"action":"screenshot"}}'
gfind '"the target window"'
expect "claude_cu: a tool_use without a coordinate is 503" 503 '(.error.message | test("no click coordinate"))'
at "claude_cu: bad answers moved nothing" "$OTH"

# ======== omniparser + Claude picker ========
scene ACU_GUI_AGENT_BACKEND=omniparser ACU_GROUNDING_MAX_DIM=960 ANTHROPIC_API_KEY="$key" ACU_OMNIPARSER_URL="$STUB" || { finish; exit 1; }
gdo '"click(1050, 650)"' >/dev/null
parsed='[{"type":"text","bbox":[0.01,0.01,0.05,0.03],"interactivity":false,"content":"Menu"},{"type":"icon","bbox":[0.2291666,0.2962963,0.2395833,0.3148148],"interactivity":true,"content":"target window"}]'
stub_script "{\"parsed\":$parsed,\"answers\":[\"1\"]}"
gdo '"click the target window"'
expect "omniparser: the picked element's centre is clicked" 200 \
	'.x == 450 and .y == 330 and .grounding.element == "target window" and .grounding.provider == "omniparser+claude"'
at "omniparser: the click landed" "$TGT"
focused "omniparser: target focused" target
stub_check "omniparser: the picker saw the numbered elements" '.api == "anthropic" and (.prompt | test("1: icon: target window")) and .max_tokens == 10'
curl -fsS "$STUB/_stub/requests" | jq -e '[.requests[] | select(.path == "/parse/" and .images[0].width == 960)] | length == 1' >/dev/null &&
	ok "omniparser: /parse/ got the 960-px image" || bad "omniparser: /parse/ got the 960-px image"
stub_script "{\"parsed\":$parsed,\"answers\":[\"7\"]}"
gdo '"click the target window"'
expect "omniparser: a number that is no element is 503" 503 '(.error.message | test("not an element number"))'

# ======== omniparser without a key: the word-match picker ========
scene ACU_GUI_AGENT_BACKEND=omniparser ACU_GROUNDING_MAX_DIM=960 ACU_OMNIPARSER_URL="$STUB" || { finish; exit 1; }
gdo '"click(1050, 650)"' >/dev/null
stub_script "{\"parsed\":$parsed}"
gfind '"the Target Window"'
expect "omniparser/words: the caption sharing words wins (no model)" 200 \
	'.x == 450 and .y == 330 and .provider == "omniparser+words" and .model == "word-match"'
at "omniparser/words: gui/find did not move the pointer" "$OTH"
gfind '"the Export button"'
expect "omniparser/words: no shared word is 503" 503 '(.error.message | test("shares a word"))'

finish
