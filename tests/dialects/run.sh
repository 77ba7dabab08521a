#!/usr/bin/env bash
# run.sh - the dialects suite: provider computer tools (Anthropic's toolset
# and single computer tool, OpenAI's computer_call, Gemini's computer use)
# spoken to a real detmd at /api/computer/{dialect}, driving a real GTK
# application (tests/dialects/app.py) on a task's own 1920x1080 display.
# A scripted "model" sends each dialect's batches; what happened is checked
# from outside: the application's own report of every event it got
# (pointer events in its own pixels, modifiers, keys, entry text), xdotool's
# pointer, the PNGs' own headers (ImageMagick), and the task's action log.
#
#   anthropic: screenshot budget (long side <= 1568, <= 1.15 MP) and its
#              scale, coordinates scaled once, the 17 members, held
#              modifiers, zoom at full resolution without moving the look,
#              the single computer tool with its screenshot after, refusals
#              (is_error, "Not executed"), malformed envelopes (400)
#   openai:    computer_call_output shape, batched and single action,
#              buttons, keys held, drag paths, scroll, safety checks (409
#              unless acknowledged, then echoed), status "incomplete"
#   gemini:    the 0-1000 grid, type_text_at, key_combination, drag,
#              scroll_at, navigate through the address bar, Content forms,
#              ids, safety_decision, errors
#   sdk:       tests/dialects/sdk (the official @anthropic-ai/sdk, openai
#              and @google/genai packages and TypeScript): every answer
#              saved here is compiled as a literal of the SDKs' own request
#              types (tsc --noEmit), sent through the SDKs' clients to a
#              local catcher, and the Anthropic answers are compared with
#              what the SDK's own toolset driver answers for the same calls
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init dialects --term
mkdir -p "$tmp/answers"

# post DIALECT JSON [QUERY]: POST /api/computer/DIALECT?task_id=T&QUERY;
# body to $tmp/resp, headers to $tmp/hdr, status to CODE.
post() {
	CODE=$(curl -sS -o "$tmp/resp" -D "$tmp/hdr" -w '%{http_code}' -X POST \
		"$DETM_URL/api/computer/$1?task_id=$T${3:+&$3}" -H 'Content-Type: application/json' \
		--data-binary "$2")
}
hdr() { grep -i "^$1:" "$tmp/hdr" | head -1 | cut -d' ' -f2- | tr -d '\r'; }
save() { cp "$tmp/resp" "$tmp/answers/$1.json"; printf '%s' "$2" >"$tmp/answers/$1.request.json"; }
# The application's events since the last mark.
mark() { MARK=$(wc -l <"$tmp/app.log"); }
since() { tail -n +"$((MARK + 1))" "$tmp/app.log"; }
events() { since | jq -sc "$1"; }
settle() { sleep 0.3; }
near() { [ $(($1 - $2)) -le 2 ] && [ $(($2 - $1)) -le 2 ]; }
# PNG size of base64 on stdin, "WxH".
png_size() { base64 -d | identify -format '%wx%h' png:- 2>/dev/null; }
jqok() { jq -e "$@" >/dev/null; }

xvfb_start 1024x768x24 || { bad "shared Xvfb" "did not start"; finish; exit 1; }
daemon_start --display "$XVFB_DISPLAY" || { bad "daemon start"; finish; exit 1; }
api POST /api/tasks '{"name":"dialects","plan":["drive"],"display":true,"display_resolution":"1920x1080"}' >/dev/null
expect "a task with a 1920x1080 display" 201
T=$(jqr .task_id)
: >"$tmp/app.log"
xstart "$T" /usr/bin/python3 tests/dialects/app.py "$tmp/app.log"
wait_for 15 grep -q '"ready"' "$tmp/app.log" || { bad "the GTK application starts" "$(cat "$tmp/clients.log")"; finish; exit 1; }
ready=$(grep '"ready"' "$tmp/app.log" | head -1)
read -r PX PY PW PH <<<"$(jq -r '.pad | @tsv' <<<"$ready")"
read -r EX EY EW EH <<<"$(jq -r '.entry | @tsv' <<<"$ready")"
read -r BX BY BW BH <<<"$(jq -r '.button | @tsv' <<<"$ready")"
ok "the application is up: pad at ($PX,$PY) ${PW}x$PH"

# ================= Anthropic =================
tu() { # tu ID NAME INPUT: a toolset member tool_use block
	printf '{"type":"tool_use","id":"%s","name":"%s","input":%s,"toolset_name":"computer"}' "$1" "$2" "$3"
}
req=$(tu s1 screenshot '{}')
post anthropic "$req"
save anthropic-screenshot "[$req]"
expect "anthropic: screenshot answers one tool_result with toolset_name" 200 \
	'length == 1 and .[0].type == "tool_result" and .[0].tool_use_id == "s1" and .[0].toolset_name == "computer" and (.[0] | has("is_error") | not)'
AW=0 AH=0
size=$(jq -r '.[0].content[] | select(.type == "image") | .source.data' "$tmp/resp" | png_size)
AW=${size%x*} AH=${size#*x}
check "anthropic: the screenshot is a PNG within the image budget (${size}: long side <= 1568, <= 1.15 MP)" \
	sh -c "[ ${AW:-0} -gt 0 ] && [ $AW -le 1568 ] && [ $AH -le 1568 ] && [ \$(($AW * $AH)) -le 1150000 ]"
check "anthropic: the screenshot states its size and scale" \
	jqok ".[0].content[0].source.media_type == \"image/png\" and (.[0].content[1].text | test(\"${AW}x${AH} px of the 1920x1080 screen\"))" "$tmp/resp"
# image pixels for a screen point: what a model reading the picture would say
img() { awk -v s="$1" -v w="$AW" 'BEGIN { printf "%d", s * w / 1920 + 0.5 }'; }
ix=$(img $((PX + 300))); iy=$(img $((PY + 200)))
ex=$(awk -v i="$ix" -v w="$AW" 'BEGIN { printf "%d", i * 1920 / w + 0.5 }')
ey=$(awk -v i="$iy" -v w="$AW" 'BEGIN { printf "%d", i * 1920 / w + 0.5 }')

mark
req="[$(tu c1 left_click "{\"coordinate\":[$ix,$iy]}"),$(tu c2 left_click "{\"coordinate\":[$(img $((EX + 20))),$(img $((EY + EH / 2)))]}"),$(tu c3 type '{"text":"hello anthropic"}'),$(tu c4 key '{"text":"Return"}')]"
post anthropic "$req"
save anthropic-batch "$req"
settle
expect "anthropic: a batch of 4 answers 4 results in order, with the SDK's acknowledgments" 200 \
	'[.[].tool_use_id] == ["c1","c2","c3","c4"] and [.[].content[0].text] == ["Clicked.","Clicked.","Typed.","Pressed Return."] and ([.[] | select(.is_error)] | length == 0) and (.[0].content[1].text | startswith("detm: Clicked"))'
got=$(events '[.[] | select(.ev == "press")][0] | "\(.x) \(.y)"')
read -r gx gy <<<"$(tr -d '"' <<<"$got")"
check "anthropic: the click lands where the model pointed, scaled once (pad ($((ex - PX)),$((ey - PY))) got ($gx,$gy))" \
	sh -c "$(declare -f near); near ${gx:-0} $((ex - PX)) && near ${gy:-0} $((ey - PY))"
check "anthropic: the entry got the typed text and Return" \
	jqok -s 'any(.[]; .ev == "activate" and .text == "hello anthropic")' <(since)

mark
pt="[$ix,$iy]"
# (waits longer than twice GTK's double-click time keep the clicks apart:
# GDK counts a triple press within 2 x 400 ms of a double's first)
pause() { tu "$1" wait '{"duration":1}'; }
req="[$(tu m1 left_click "{\"coordinate\":$pt,\"text\":\"shift\"}"),$(tu m2 right_click "{\"coordinate\":$pt}"),$(tu m3 middle_click "{\"coordinate\":$pt}"),$(pause p1),$(tu m4 double_click "{\"coordinate\":$pt}"),$(pause p2),$(tu m5 triple_click "{\"coordinate\":$pt}")]"
post anthropic "$req"
save anthropic-clicks "$req"
settle
check "anthropic: text on a click holds the modifier (shift-click)" \
	jqok -s '[.[] | select(.ev == "press")][0] | .button == 1 and (.mods | index("shift") != null)' <(since)
check "anthropic: right and middle click press buttons 3 and 2" \
	jqok -s '[.[] | select(.ev == "press") | .button][1:3] == [3, 2]' <(since)
check "anthropic: double_click and triple_click are a double and a triple press" \
	jqok -s '[.[] | select(.ev == "press" and .n > 1) | .n] == [2, 2, 3]' <(since)
check "anthropic: no modifier stays held after the shift-click" \
	jqok -s '[.[] | select(.ev == "press")][1:] | all(.mods == [])' <(since)

mark
x2=$(img $((PX + 600))); y2=$(img $((PY + 350)))
req="[$(tu d1 left_click_drag "{\"start_coordinate\":$pt,\"coordinate\":[$x2,$y2]}")]"
post anthropic "$req"
save anthropic-drag "$req"
settle
ex2=$(awk -v i="$x2" -v w="$AW" 'BEGIN { printf "%d", i * 1920 / w + 0.5 }')
ey2=$(awk -v i="$y2" -v w="$AW" 'BEGIN { printf "%d", i * 1920 / w + 0.5 }')
read -r rx ry <<<"$(events '[.[] | select(.ev == "release")][0] | "\(.x) \(.y)"' | tr -d '"')"
check "anthropic: left_click_drag presses at the start and releases at the end" \
	sh -c "$(declare -f near); near ${rx:-0} $((ex2 - PX)) && near ${ry:-0} $((ey2 - PY))"

mark
req="[$(tu w1 scroll "{\"coordinate\":$pt,\"scroll_direction\":\"down\",\"scroll_amount\":3}"),$(tu w2 scroll "{\"coordinate\":$pt,\"scroll_direction\":\"left\",\"scroll_amount\":2,\"text\":\"ctrl\"}")]"
post anthropic "$req"
save anthropic-scroll "$req"
settle
expect "anthropic: scroll acknowledges its direction" 200 '.[0].content[0].text == "Scrolled down." and .[1].content[0].text == "Scrolled left."'
check "anthropic: scroll sends 3 wheel clicks down, then 2 left with ctrl held" \
	jqok -s '[.[] | select(.ev == "scroll")] | ([.[] | select(.dir == "down")] | length) == 3 and ([.[] | select(.dir == "left" and (.mods | index("ctrl") != null))] | length) == 2' <(since)

mark
req="[$(tu k1 left_click "{\"coordinate\":$pt}"),$(tu k2 key '{"text":"ctrl+shift+k"}'),$(tu k3 hold_key '{"text":"shift","duration":0.4}'),$(tu k4 key '{"text":"x","repeat":3}')]"
post anthropic "$req"
save anthropic-keys "$req"
settle
expect "anthropic: hold_key acknowledges what and how long" 200 '.[2].content[0].text == "Held shift for 0.4s." and .[3].content[0].text == "Pressed x."'
check "anthropic: key sends a chord (ctrl+shift+k)" \
	jqok -s 'any(.[]; .ev == "key" and (.name == "K" or .name == "k") and (.mods | index("ctrl") != null and index("shift") != null))' <(since)
check "anthropic: hold_key holds shift about 0.4 s" \
	jqok -s '([.[] | select(.ev == "key" and .name == "Shift_L")] | last | .t) as $d | ([.[] | select(.ev == "keyup" and .name == "Shift_L")] | last | .t) as $u | ($u - $d) >= 0.3 and ($u - $d) < 3' <(since)
check "anthropic: key with repeat presses it 3 times" \
	jqok -s '[.[] | select(.ev == "key" and .name == "x")] | length == 3' <(since)

mark
mx=$(img $((PX + 150))); my=$(img $((PY + 150)))
req="[$(tu b1 mouse_move "{\"coordinate\":[$mx,$my]}"),$(tu b2 left_mouse_down '{}'),$(tu b3 mouse_move "{\"coordinate\":[$(img $((PX + 250))),$my]}"),$(tu b4 left_mouse_up '{}'),$(tu b5 cursor_position '{}')]"
post anthropic "$req"
save anthropic-buttons "$req"
settle
expect "anthropic: cursor_position answers X=..,Y=.. in image pixels" 200 \
	".[4].content == [{\"type\":\"text\",\"text\":\"X=$(img $((PX + 250))),Y=$my\"}]"
check "anthropic: left_mouse_down, a move and left_mouse_up make a drag" \
	jqok -s '([.[] | select(.ev == "press")] | length) == 1 and ([.[] | select(.ev == "release")][0].x - [.[] | select(.ev == "press")][0].x) > 90' <(since)

zx0=$(img "$BX"); zy0=$(img "$BY"); zx1=$(img $((BX + BW))); zy1=$(img $((BY + BH)))
req="[$(tu z1 zoom "{\"region\":[$zx0,$zy0,$zx1,$zy1]}")]"
post anthropic "$req"
save anthropic-zoom "$req"
zsize=$(jq -r '.[0].content[] | select(.type == "image") | .source.data' "$tmp/resp" | png_size)
zw=${zsize%x*}
check "anthropic: zoom answers the region at full resolution (${zsize}, the button is ${BW}x$BH)" \
	sh -c "$(declare -f near); near ${zw:-0} $BW"
expect "anthropic: zoom states it is a zoom" 200 '.[0].content[1].text | startswith("Zoom: ")'
mark
post anthropic "[$(tu z2 left_click "{\"coordinate\":$pt}")]"
settle
read -r gx gy <<<"$(events '[.[] | select(.ev == "press")][0] | "\(.x) \(.y)"' | tr -d '"')"
check "anthropic: after a zoom, coordinates still mean the last screenshot's pixels" \
	sh -c "$(declare -f near); near ${gx:-0} $((ex - PX)) && near ${gy:-0} $((ey - PY))"

req="[$(tu t1 wait '{"duration":0.2}')]"
post anthropic "$req"
expect "anthropic: wait acknowledges its duration" 200 '.[0].content[0].text == "Waited 0.2s."'
# A wait holds no display: a screenshot taken meanwhile is not kept waiting.
curl -sS -o "$tmp/wait.out" -X POST "$DETM_URL/api/computer/anthropic?task_id=$T" -H 'Content-Type: application/json' \
	--data-binary "$(tu t2 wait '{"duration":4}')" &
waiter=$!
sleep 0.5
curl -sS -o /dev/null "$DETM_URL/api/desktop/screenshot?task_id=$T"
check "anthropic: a screenshot during a wait is answered before the wait ends" kill -0 "$waiter"
wait "$waiter"
check "anthropic: the wait then ends as asked" jqok '.[0].content[0].text == "Waited 4s."' "$tmp/wait.out"

# refusals: the dialect's own error form, and what follows is not run
mark
req="[$(tu r1 left_click "{\"coordinate\":$pt}"),$(tu r2 teleport '{}'),$(tu r3 type '{"text":"never"}')]"
post anthropic "$req"
save anthropic-refusal "$req"
settle
expect "anthropic: an unknown member is is_error with text, and the rest is not executed" 200 \
	'(.[0] | has("is_error") | not) and .[1].is_error == true and .[1].toolset_name == "computer" and (.[1].content | length == 1 and .[0].type == "text") and .[2].is_error == true and .[2].content[0].text == "Not executed: an earlier computer action in this turn failed."'
check "anthropic: nothing after the refusal was typed" sh -c "! grep -q never '$tmp/app.log'"
check "anthropic: X-Detm-Failed counts the refused and the skipped" [ "$(hdr X-Detm-Failed)" = 2 ]
post anthropic "[$(tu r4 mouse_move '{}')]"
expect "anthropic: a member without its argument is is_error naming it" 200 \
	'.[0].is_error == true and (.[0].content[0].text | test("coordinate"))'
post anthropic "[$(tu r5 left_click '{"coordinate":[99999,5]}')]"
expect "anthropic: an off-screen point is is_error" 200 '.[0].is_error == true and (.[0].content[0].text | test("off screen"))'
post anthropic '{"type":"tool_use","name":"left_click","input":{},"toolset_name":"computer"}'
expect "anthropic: a tool_use without an id is 400 in detm's error shape" 400 '.error.code == "invalid_argument"'
post anthropic '[{"type":"text","text":"hi"},{"type":"tool_use","id":"x","name":"bash","input":{}}]'
expect "anthropic: no computer tool_use is 400" 400 '.error.message | test("no computer tool_use")'
post anthropic 'not json'
expect "anthropic: a body that is not JSON is 400" 400
CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X POST "$DETM_URL/api/computer/claude?task_id=$T" -H 'Content-Type: application/json' -d '{}')
expect "an unknown dialect is 404" 404
CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X POST "$DETM_URL/api/computer/anthropic?task_id=deadbeef" -H 'Content-Type: application/json' -d "$(tu s screenshot '{}')")
expect "an unknown task is 404" 404

# the single computer tool (computer_20251124 / computer_20250124)
mark
req='{"role":"assistant","content":[{"type":"text","text":"Clicking."},{"type":"tool_use","id":"o1","name":"computer","input":{"action":"left_click","coordinate":'$pt'}}]}'
post anthropic "$req"
save anthropic-single "$(jq -c .content <<<"$req")"
settle
expect "anthropic single tool: a message's tool_use answered without toolset_name, with the screen after it" 200 \
	'length == 1 and .[0].tool_use_id == "o1" and (.[0] | has("toolset_name") | not) and .[0].content[0].text == "Clicked." and ([.[0].content[] | select(.type == "image")] | length == 1)'
check "anthropic single tool: the click landed" jqok -s 'any(.[]; .ev == "press")' <(since)
post anthropic '{"type":"tool_use","id":"o2","name":"computer","input":{"action":"screenshot"}}' 'screenshot=none'
expect "anthropic single tool: screenshot works, and no second picture after it" 200 \
	'[.[0].content[] | select(.type == "image")] | length == 1'

# ================= OpenAI =================
cc() { # cc CALL_ID ACTIONS [extra fields]: a GA computer_call item
	printf '{"type":"computer_call","id":"cu_%s","call_id":"%s","status":"completed","pending_safety_checks":[]%s,"actions":%s}' "$1" "$1" "${3:-}" "$2"
}
mark
req=$(cc call1 "[{\"type\":\"click\",\"button\":\"left\",\"x\":$((EX + 20)),\"y\":$((EY + EH / 2))},{\"type\":\"keypress\",\"keys\":[\"CTRL\",\"A\"]},{\"type\":\"type\",\"text\":\"hello openai\"},{\"type\":\"keypress\",\"keys\":[\"ENTER\"]}]")
post openai "$req"
save openai-batch "$req"
settle
expect "openai: the answer is the computer_call_output item" 200 \
	'.type == "computer_call_output" and .call_id == "call1" and .output.type == "computer_screenshot" and (.output.image_url | startswith("data:image/png;base64,")) and (has("status") | not) and (keys - ["type","call_id","output"] == [])'
check "openai: X-Detm-Calls and X-Detm-Verdicts tell detm's account" \
	sh -c "[ '$(hdr X-Detm-Calls)' = 1 ] && [ '$(hdr X-Detm-Failed)' = 0 ] && [ -n '$(hdr X-Detm-Verdicts)' ]"
osize=$(jq -r '.output.image_url | sub("^data:image/png;base64,"; "")' "$tmp/resp" | png_size)
check "openai: the screenshot keeps the 1920x1080 screen's pixels (got $osize)" [ "$osize" = 1920x1080 ]
check "openai: ctrl+A, type and ENTER reached the entry" \
	jqok -s 'any(.[]; .ev == "activate" and .text == "hello openai")' <(since)

mark
q="\"x\":$((PX + 300)),\"y\":$((PY + 200))"
req=$(cc call2 "[{\"type\":\"click\",\"button\":\"right\",$q},{\"type\":\"click\",\"button\":\"wheel\",$q},{\"type\":\"double_click\",$q,\"keys\":null},{\"type\":\"click\",\"button\":\"left\",$q,\"keys\":[\"shift\"]},{\"type\":\"move\",\"x\":$((PX + 400)),\"y\":$((PY + 210))}]")
post openai "$req"
save openai-clicks "$req"
settle
check "openai: right, wheel, double and shift-click reach the pad at its pixels" \
	jqok -s '[.[] | select(.ev == "press")] | (.[0].button == 3 and .[1].button == 2 and (map(select(.n == 2)) | length == 1) and (last.mods | index("shift") != null) and (.[0].x == 300 and .[0].y == 200))' <(since)
loc=$(xenv "$T" xdotool getmouselocation --shell | tr '\n' ' ')
mark
post openai "$(cc call2b "[{\"type\":\"click\",\"button\":\"back\",$q},{\"type\":\"click\",\"button\":\"forward\",$q}]")"
settle
check "openai: back and forward press buttons 8 and 9" \
	jqok -s '[.[] | select(.ev == "press") | .button] == [8, 9]' <(since)
check "openai: move puts the pointer there ($loc)" sh -c "echo '$loc' | grep -q 'X=$((PX + 400)) Y=$((PY + 210))'"

mark
req=$(cc call3 "[{\"type\":\"drag\",\"path\":[{\"x\":$((PX + 100)),\"y\":$((PY + 100))},{\"x\":$((PX + 500)),\"y\":$((PY + 300))}]},{\"type\":\"drag\",\"path\":[{\"x\":$((PX + 100)),\"y\":$((PY + 100))},{\"x\":$((PX + 200)),\"y\":$((PY + 300))},{\"x\":$((PX + 400)),\"y\":$((PY + 120))}]}]")
post openai "$req"
save openai-drag "$req"
settle
check "openai: a drag of two points and along a path of three press and release where they say" \
	jqok -s '[.[] | select((.ev == "press" and .n == 1) or .ev == "release") | [.ev, .x, .y]] == [["press",100,100],["release",500,300],["press",100,100],["release",400,120]]' <(since)

mark
req=$(cc call4 "[{\"type\":\"scroll\",\"x\":$((PX + 300)),\"y\":$((PY + 200)),\"scroll_x\":0,\"scroll_y\":300},{\"type\":\"scroll\",\"x\":$((PX + 300)),\"y\":$((PY + 200)),\"scroll_x\":-200,\"scroll_y\":0},{\"type\":\"wait\"}]")
post openai "$req"
save openai-scroll "$req"
settle
check "openai: scroll_y 300 is 3 wheel clicks down, scroll_x -200 is 2 left" \
	jqok -s '[.[] | select(.ev == "scroll") | .dir] == ["down","down","down","left","left"]' <(since)

mark
req='{"type":"computer_call","id":"cu_5","call_id":"call5","status":"completed","pending_safety_checks":[],"action":{"type":"click","button":"left","x":'$((BX + 5))',"y":'$((BY + 5))'}}'
post openai "$req"
save openai-single "$req"
settle
expect "openai: the older single action is run too" 200 '.call_id == "call5"'
check "openai: the button was clicked" jqok -s 'any(.[]; .ev == "clicked")' <(since)

mark
safety='"pending_safety_checks":[{"id":"cu_sc_1","code":"malicious_instructions","message":"The page asks for a password."}]'
req="{\"type\":\"computer_call\",\"id\":\"cu_6\",\"call_id\":\"call6\",\"status\":\"completed\",$safety,\"actions\":[{\"type\":\"type\",\"text\":\"unsafe\"}]}"
post openai "$req"
expect "openai: a pending safety check not acknowledged is 409, nothing run" 409 '.error.code == "conflict" and (.error.message | test("cu_sc_1"))'
settle
check "openai: nothing was typed for the unacknowledged call" sh -c "! grep -q unsafe '$tmp/app.log'"
req="{\"type\":\"computer_call\",\"id\":\"cu_6\",\"call_id\":\"call6\",\"status\":\"completed\",$safety,\"acknowledged_safety_checks\":[{\"id\":\"cu_sc_1\",\"code\":\"malicious_instructions\",\"message\":\"The page asks for a password.\"}],\"actions\":[{\"type\":\"screenshot\"}]}"
post openai "$req"
save openai-acked "$req"
expect "openai: acknowledged, it runs and echoes acknowledged_safety_checks" 200 '.acknowledged_safety_checks[0].id == "cu_sc_1"'

mark
req=$(cc call7 "[{\"type\":\"click\",\"button\":\"left\",\"x\":$((PX + 10)),\"y\":$((PY + 10))},{\"type\":\"levitate\"},{\"type\":\"type\",\"text\":\"never2\"}]")
post openai "$req"
save openai-refusal "$req"
settle
expect "openai: an unknown action answers the screen with status incomplete" 200 '.status == "incomplete" and .output.type == "computer_screenshot"'
check "openai: X-Detm-Error names the unknown action" sh -c "hdr() { grep -i \"^\$1:\" '$tmp/hdr' | cut -d' ' -f2-; }; hdr X-Detm-Error | grep -q levitate"
check "openai: the actions after it were not run" sh -c "! grep -q never2 '$tmp/app.log'"
post openai '{"type":"computer_call","call_id":"c8","actions":"click"}'
expect "openai: actions that is not an array is 400" 400
req='{"id":"resp_1","object":"response","output":[{"type":"reasoning","id":"rs_1","summary":[]},'$(cc call9 '[{"type":"screenshot"}]')']}'
post openai "$req"
expect "openai: a whole response answers an array of outputs" 200 'type == "array" and length == 1 and .[0].call_id == "call9"'
post openai "$(cc call10 '[{"type":"wait"}]')" 'detm=1'
expect "openai: ?detm=1 gives detm's record beside the answer" 200 '.answer.call_id == "call10" and .detm[0].action == "wait" and .detm[0].ok == true and .calls == 1'

# ================= Gemini =================
grid() { awk -v p="$1" -v s="$2" 'BEGIN { printf "%d", p * 1000 / s + 0.5 }'; }
px() { awk -v g="$1" -v s="$2" 'BEGIN { printf "%d", int(g * s / 1000) }'; }
mark
g1x=$(grid $((PX + 300)) 1920); g1y=$(grid $((PY + 200)) 1080)
req="{\"name\":\"click_at\",\"args\":{\"x\":$g1x,\"y\":$g1y}}"
post gemini "$req"
save gemini-click "$req"
settle
expect "gemini: a FunctionCall answers a user Content with one functionResponse and the screen" 200 \
	'.role == "user" and (.parts | length == 1) and .parts[0].functionResponse.name == "click_at" and (.parts[0].functionResponse.response.output | test("clicked"; "i")) and .parts[0].functionResponse.parts[0].inlineData.mimeType == "image/png"'
gsize=$(jq -r '.parts[0].functionResponse.parts[0].inlineData.data' "$tmp/resp" | png_size)
check "gemini: the screenshot is at most 1440 px wide (got $gsize)" [ "${gsize%x*}" = 1440 ]
read -r gx gy <<<"$(events '[.[] | select(.ev == "press")][0] | "\(.x) \(.y)"' | tr -d '"')"
check "gemini: the 0-1000 grid maps to the screen ($(px "$g1x" 1920),$(px "$g1y" 1080) on screen; pad got $gx,$gy)" \
	sh -c "$(declare -f near); near ${gx:-0} $(($(px "$g1x" 1920) - PX)) && near ${gy:-0} $(($(px "$g1y" 1080) - PY))"

mark
ex=$(grid $((EX + 30)) 1920); ey=$(grid $((EY + EH / 2)) 1080)
req="{\"role\":\"model\",\"parts\":[{\"text\":\"I will type.\"},{\"functionCall\":{\"id\":\"fc1\",\"name\":\"type_text_at\",\"args\":{\"x\":$ex,\"y\":$ey,\"text\":\"hello gemini\"}}},{\"functionCall\":{\"id\":\"fc2\",\"name\":\"key_combination\",\"args\":{\"keys\":\"Control+Shift+K\"}}}]}"
post gemini "$req"
save gemini-type "$req"
settle
expect "gemini: a model Content answers each call with its id, in order, each with the screen" 200 \
	'[.parts[].functionResponse.id] == ["fc1","fc2"] and ([.parts[].functionResponse.parts | length] == [1,1])'
check "gemini: type_text_at clears the field, types and presses Enter" \
	jqok -s 'any(.[]; .ev == "activate" and .text == "hello gemini")' <(since)
check "gemini: key_combination sends Control+Shift+K" \
	jqok -s 'any(.[]; .ev == "key" and (.name == "K" or .name == "k") and (.mods | index("ctrl") != null and index("shift") != null))' <(since)

mark
req="[{\"functionCall\":{\"name\":\"drag_and_drop\",\"args\":{\"x\":$(grid $((PX + 100)) 1920),\"y\":$(grid $((PY + 100)) 1080),\"destination_x\":$(grid $((PX + 600)) 1920),\"destination_y\":$(grid $((PY + 300)) 1080)}}},{\"functionCall\":{\"name\":\"scroll_at\",\"args\":{\"x\":$g1x,\"y\":$g1y,\"direction\":\"down\",\"magnitude\":300}}},{\"functionCall\":{\"name\":\"hover_at\",\"args\":{\"x\":500,\"y\":500}}}]"
post gemini "$req" 'screenshot=last'
save gemini-drag "$req"
settle
expect "gemini: screenshot=last puts the screen on the last response only" 200 '[.parts[].functionResponse.parts | length] == [0,0,1] or [.parts[].functionResponse | has("parts")] == [false,false,true]'
read -r rx ry <<<"$(events '[.[] | select(.ev == "release")][0] | "\(.x) \(.y)"' | tr -d '"')"
read -r sx sy <<<"$(events '[.[] | select(.ev == "press")][0] | "\(.x) \(.y)"' | tr -d '"')"
check "gemini: drag_and_drop presses at the start and releases at the destination" \
	sh -c "$(declare -f near); near ${sx:-0} $(($(px "$(grid $((PX + 100)) 1920)" 1920) - PX)) && near ${rx:-0} $(($(px "$(grid $((PX + 600)) 1920)" 1920) - PX)) && near ${ry:-0} $(($(px "$(grid $((PY + 300)) 1080)" 1080) - PY))"
check "gemini: scroll_at magnitude 300 of 1080 px is 3 wheel clicks down" \
	jqok -s '[.[] | select(.ev == "scroll") | .dir] == ["down","down","down"]' <(since)
loc=$(xenv "$T" xdotool getmouselocation --shell | tr '\n' ' ')
check "gemini: hover_at 500,500 is the screen's middle ($loc)" sh -c "echo '$loc' | grep -q 'X=960 Y=540'"

mark
req='[{"name":"navigate","args":{"url":"https://example.org/dialects"}},{"name":"go_back","args":{}}]'
post gemini "$req"
save gemini-navigate "$req"
settle
check "gemini: navigate goes through the address bar (ctrl+L, the URL, Enter)" \
	jqok -s 'any(.[]; .ev == "activate" and .text == "https://example.org/dialects")' <(since)
check "gemini: go_back is alt+Left" \
	jqok -s 'any(.[]; .ev == "key" and .name == "Left" and (.mods | index("alt") != null))' <(since)

mark
req='[{"name":"fly_to","args":{}},{"name":"type_text_at","args":{"x":10,"y":10,"text":"never3"}}]'
post gemini "$req"
save gemini-refusal "$req"
settle
expect "gemini: an unknown function answers response.error, and the next is not executed" 200 \
	'(.parts[0].functionResponse.response.error | test("fly_to")) and (.parts[1].functionResponse.response.error | startswith("Not executed"))'
check "gemini: nothing after it was typed" sh -c "! grep -q never3 '$tmp/app.log'"
post gemini '{"name":"click_at","args":{"x":1500,"y":10}}'
expect "gemini: a point off the grid is response.error" 200 '.parts[0].functionResponse.response.error | test("0-1000 grid")'
req='{"name":"click_at","args":{"x":10,"y":10,"safety_decision":{"decision":"require_confirmation","explanation":"A cookie banner."}}}'
post gemini "$req"
expect "gemini: require_confirmation without the user's acknowledgement is 409" 409 '.error.field == "safety_decision"'
req='{"name":"click_at","args":{"x":10,"y":10,"safety_decision":{"decision":"require_confirmation","explanation":"A cookie banner."}},"safety_acknowledgement":true}'
post gemini "$req"
save gemini-acked "$req"
expect "gemini: acknowledged, it runs and says so" 200 '.parts[0].functionResponse.response.safety_acknowledgement == "true"'
post gemini '{"parts":[{"text":"no calls here"}]}'
expect "gemini: no function call is 400" 400

# ================= first looks, the task's log =================
api GET /api/capabilities >/dev/null
expect "capabilities list the computer dialects" 200 '.desktop.computer_dialects == ["anthropic","openai","gemini"]'

for d in anthropic openai gemini; do
	api GET "/api/computer/$d?task_id=$T" >/dev/null
	cp "$tmp/resp" "$tmp/answers/look-$d.json"
	expect "GET /api/computer/$d: a first look with its tool declaration" 200 '.dialect != null and .image_size.width > 0 and .scale > 0 and .content != null and .tool != null'
done
jq -e ".tool.display_width_px == .image_size.width" "$tmp/answers/look-anthropic.json" >/dev/null &&
	ok "anthropic look: display_width_px is the screenshot's width" || bad "anthropic look: display_width_px is the screenshot's width"

api GET "/api/tasks/$T/items/0?limit=1000" >/dev/null
expect "every dialect action is in the task's log as a gui action (zoom too)" 200 \
	'[.actions[] | select(.action_type == "gui")] | length > 40 and any(.summary | startswith("zoom:")) and any(.summary | startswith("click:")) and any(.summary | startswith("press_key:"))'

# ================= gemini open_web_browser: a browser through desktop_launch =================
if command -v chromium >/dev/null; then
	api POST /api/tasks '{"name":"browser","display":true,"display_resolution":"1280x720"}'
	TB=$(jqr .task_id)
	CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X POST "$DETM_URL/api/computer/gemini?task_id=$TB&screenshot=none" \
		-H 'Content-Type: application/json' --data-binary '{"name":"open_web_browser","args":{}}')
	save gemini-browser '{"name":"open_web_browser","args":{}}'
	expect "gemini: open_web_browser starts the allowed browser on the task display (desktop_launch)" 200 \
		'.parts[0].functionResponse.response.output | test("started chromium")'
	check "... its process runs, listed on the task" sh -c \
		"curl -s '$DETM_URL/api/tasks/$TB' | jq -e '[.launched[]? | select(.status == \"running\" and (.program | test(\"chromium\")))] | length >= 1' >/dev/null"
	CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X POST "$DETM_URL/api/computer/gemini?task_id=$TB&screenshot=none" \
		-H 'Content-Type: application/json' --data-binary '{"name":"open_web_browser","args":{}}')
	expect "gemini: a second open_web_browser starts no second browser" 200 \
		'.parts[0].functionResponse.response.output | test("open already")'
	api POST "/api/tasks/$TB/cancel" '{}' >/dev/null
else
	bad "gemini open_web_browser" "chromium is not installed (scripts/install-deps.sh test)"
fi

# ================= the official SDKs =================
sdk=tests/dialects/sdk
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	bad "sdk" "node/npm not found on PATH"
elif ! npm_ci "$sdk" typescript; then
	bad "sdk: npm ci"
else
	out=$(node "$sdk/check.mjs" "$tmp/answers" "$tmp/sdk-gen" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^(ok|FAIL)' | while read -r line; do echo "$line"; done
	p=$(printf '%s\n' "$out" | grep -c '^ok')
	f=$(printf '%s\n' "$out" | grep -c '^FAIL')
	PASS=$((PASS + p))
	FAIL=$((FAIL + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then bad "sdk: check.mjs exited $rc" "$(printf '%s\n' "$out" | tail -5)"; fi
fi

finish
