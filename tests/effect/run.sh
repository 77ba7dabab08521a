#!/usr/bin/env bash
# effect/run.sh - the effect verdict suite: every input action says what it
# did (confirmed / suspected_noop / unverifiable, desktop/effect.h), on a
# real detmd, real task displays (Xvfb) and real X applications: a GTK 3
# window (tests/effect/app.py, python3-gi) and xterm. No timing
# thresholds: the verdicts only.
#
#   labelled set   a working button, dead space (a static label, the empty
#                  root), a disabled button, typing into a field and into
#                  nothing, a key chord that opens a dialog and one that
#                  does nothing, a spinner (an animation) under the point;
#                  a blinking caret is not an effect
#   regressions    a dialog without the focus over its parent, clicked
#                  (desktop_action and gui_do through the tree): confirmed
#   expect         window:, gone:, text: (OCR), settled: met confirms; not
#                  met is never confirmed and says which expectation failed
#   observe        region: the changed region as a JPEG (HTTP and an MCP
#                  image block); settle_ms 0: not watched
#   routes         /api/commands results carry the verdict; gui_do too;
#                  the MCP text's first line says it
#   no a11y        a display whose only program (xterm) has no tree still
#                  gets pixel evidence
#   settled wait   smart_wait settled resolves on a still screen, not while
#                  something keeps drawing
#
# Oracles from outside detmd: xdotool (which window has the focus, which
# windows exist), app.py's own widget positions, base64 + file (JPEG).
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init effect --term --rm-data
PY=/usr/bin/python3
for t in xdotool jq xterm base64 file; do
	command -v $t >/dev/null || { bad "needs $t" "run scripts/install-deps.sh test"; finish; exit 1; }
done
$PY -c 'import gi; gi.require_version("Gtk", "3.0")' 2>/dev/null ||
	{ bad "needs python3-gi and gir1.2-gtk-3.0" "run scripts/install-deps.sh test"; finish; exit 1; }

daemon_start || { bad "daemon start"; finish; exit 1; }

# run_on TASK cmd...: a program on the task display, with its env (the
# accessibility switches included), in a session of its own.
run_on() {
	local t=$1; shift
	curl -fsS "$DETM_URL/api/tasks/$t/display" >"$tmp/disp.$t"
	(
		while IFS='=' read -r k v; do export "$k=$v"; done < <(jq -r '.env | to_entries[] | "\(.key)=\(.value)"' "$tmp/disp.$t")
		exec setsid "$@" >/dev/null 2>>"$tmp/clients.log"
	) &
	pids+=($!)
}
focus_name() { xenv "$1" xdotool getwindowfocus getwindowname; }
act() { # act TASK JSON-FIELDS: POST /api/desktop/action
	api POST /api/desktop/action "{\"task_id\":\"$1\",$2}"
}
pos() { jq -r ".$1.x, .$1.y" "$tmp/pos.json" | paste -sd' '; }
click() { # click TASK WIDGET [extra fields]
	local p; read -r -a p <<<"$(pos "$2")"
	act "$1" "\"action\":\"click\",\"x\":${p[0]},\"y\":${p[1]}${3:+,$3}"
}
verdict() { # verdict NAME WANT [jq]: the reply's effect is WANT (and jq holds)
	expect "$1" 200 ".effect == \"$2\"${3:+ and ($3)}"
}

# ---- a GTK window on display A ----
api POST /api/tasks '{"name":"effect A","display":true}'
A=$(jqr .task_id)
run_on "$A" "$PY" tests/effect/app.py "$tmp/pos.json"
if wait_for 60 test -s "$tmp/pos.json" && xwait "$A" "Effect test" 20; then ok "the GTK test window is up"; else
	bad "the GTK test window is up" "$(tail -5 "$tmp/clients.log")"; finish; exit 1; fi

click "$A" work
verdict "a click on a working button: confirmed" confirmed \
	'.evidence.pixels.changed > 0 and (.effect_ms | type) == "number" and .verified == true and
	 (.summary | startswith("Clicked ("))'
click "$A" static
verdict "a click on a static label: suspected_noop" suspected_noop '.effect_ms == null and .verified == false'
click "$A" disabled
verdict "a click on a disabled button: suspected_noop" suspected_noop
act "$A" '"action":"click","x":1100,"y":650'
verdict "a click on the empty root: suspected_noop" suspected_noop
click "$A" spinner
expect "a click on a spinner (it draws all the time): never confirmed" 200 '.effect != "confirmed"'
click "$A" spinner '"expect":"window:\"Nowhere\"","settle_ms":600'
expect "an expect not met on a spinner: unverifiable, as without expect (its drawing hides any effect), not suspected_noop" 200 \
	'.effect == "unverifiable" and .expect.met == false and (.evidence.summary | test("already changing"))'
click "$A" entry
verdict "a click into the entry: confirmed (the caret)" confirmed
act "$A" '"action":"type","text":"hello"'
verdict "typing into the focused entry: confirmed" confirmed '.evidence.pixels.changed > 0'
click "$A" static '"settle_ms":1500'
verdict "a click on the static label while the entry's caret blinks (1.5 s): suspected_noop" suspected_noop
act "$A" '"action":"press_key","keys":"F9"'
verdict "a key chord bound to nothing (F9): suspected_noop" suspected_noop
act "$A" '"action":"press_key","keys":"ctrl+o"'
verdict "ctrl+o opens a dialog: confirmed with window evidence" confirmed \
	'any(.evidence.windows[]; .change == "appeared" and .title == "Opened") and (.summary | contains("appeared"))'
check "the dialog exists (xdotool)" xwait "$A" Opened 5
api POST /api/gui/do '{"task_id":"'"$A"'","instruction":"click the Close button","expect":"gone:dialog \"Opened\"","after_screenshot":false}'
verdict "gui_do closes it: expect gone:dialog \"Opened\" met" confirmed '.expect.met == true and .grounded_by == "accessibility"'

# ---- a dialog without the focus over its parent ----
click "$A" dialog
verdict "the Dialog button opens \"Unfocused\": confirmed" confirmed \
	'any(.evidence.windows[]; .change == "appeared" and .title == "Unfocused")'
wait_for 10 sh -c "jq -e .change '$tmp/pos.json' >/dev/null" || bad "app.py reports the Change button"
check "the new dialog has no focus (xdotool: '$(focus_name "$A")')" [ "$(focus_name "$A")" != Unfocused ]
api POST /api/gui/do '{"task_id":"'"$A"'","instruction":"click the Change button","after_screenshot":false}'
verdict "gui_do through the tree on the unfocused dialog: confirmed by XTest, not covered" confirmed \
	'.grounded_by == "accessibility" and .acted_by == "xtest" and .verified == true'
click "$A" change
verdict "a click on the unfocused dialog's button: confirmed (the old mis-verdict)" confirmed \
	'.evidence.pixels.changed > 0'

# ---- expect ----
act "$A" '"action":"press_key","keys":"ctrl+o","expect":"window:\"Opened\""'
verdict "expect window:\"Opened\" met: confirmed" confirmed '.expect.met == true and .expect.condition == "window:\"Opened\""'
act "$A" '"action":"press_key","keys":"ctrl+o","expect":"window:\"Opened\""'
# (without a window manager a second dialog opens: unverifiable; under
# openbox the first one has the focus and takes the keys: suspected_noop)
expect "expect window:\"Opened\" when one was open already: not confirmed" 200 \
	'.effect != "confirmed" and .expect.met == false and (.expect.why | contains("already open"))'
api POST /api/gui/do '{"task_id":"'"$A"'","instruction":"click the Close button","after_screenshot":false}'
api POST /api/gui/do '{"task_id":"'"$A"'","instruction":"click the Close button","after_screenshot":false}'
act "$A" '"action":"press_key","keys":"F9","expect":"window:\"Nowhere\""'
verdict "expect not met, nothing changed: suspected_noop naming the expectation" suspected_noop \
	'.expect.met == false and (.summary | contains("Nowhere"))'
click "$A" work '"expect":"window:\"Nowhere\"","settle_ms":600'
verdict "expect not met, something else changed: unverifiable, never confirmed" unverifiable \
	'.expect.met == false and (.evidence.summary | contains("Nowhere"))'
click "$A" work '"expect":"settled:200"'
verdict "expect settled:200 after a click that draws: confirmed" confirmed '.expect.met == true'
click "$A" entry
act "$A" '"action":"press_key","keys":"ctrl+a"'
act "$A" '"action":"type","text":"Saved","expect":"text:\"Saved\""'
verdict "expect text:\"Saved\" (OCR of the changed region): confirmed" confirmed '.expect.met == true'
act "$A" '"action":"press_key","keys":"F9","expect":"what is this"'
expect "an expect detm cannot read is a 400 naming the forms" 400 \
	'.error.field == "expect" and (.error.message | contains("window:"))'

# ---- observe, settle_ms 0 ----
click "$A" work '"observe":"region"'
verdict "observe region: confirmed with a picture" confirmed \
	'.observed.kind == "region" and .observed.media_type == "image/jpeg" and (.observed.image_b64 | length) > 100 and
	 .observed.region.width > 0'
jqr .observed.image_b64 | base64 -d >"$tmp/region.jpg" 2>/dev/null
check "the region is a JPEG ($(file -b "$tmp/region.jpg" | cut -c1-40))" eval '[[ "$(file -b "$tmp/region.jpg")" == JPEG* ]]'
lx=$(jq .label.x "$tmp/pos.json")
ly=$(jq .label.y "$tmp/pos.json")
check "the region holds the count label that changed" \
	[ "$(jqr --argjson x "$lx" --argjson y "$ly" '.observed.region | .x <= $x and .y <= $y and .x + .width >= $x and .y + .height >= $y')" = true ]
click "$A" static '"observe":"region"'
verdict "observe region when nothing changed: no picture, and why" suspected_noop \
	'.observed.region == null and (.observed.why | length) > 0'
click "$A" work '"settle_ms":0'
verdict "settle_ms 0: not watched, unverifiable" unverifiable '(.evidence.summary | contains("not watched")) and .verified == null'
sleep 0.5       # the button's press fade outlives the unwatched call; a watch now would see it drawing

# ---- /api/commands, gui_do, MCP ----
wp=($(pos work))
# (the sleep: the button's press fade outlives the click's early verdict;
# F9 during it would be unverifiable, not a suspected no-op. settle_ms 3000:
# under load the button drew its press later than the default 300 ms, and the
# click was a suspected no-op; a confirmed verdict comes as soon as it draws)
api POST /api/commands '{"task_id":"'"$A"'","commands":[{"action":"click","parameters":{"x":'"${wp[0]}"',"y":'"${wp[1]}"',"settle_ms":3000}},{"action":"sleep","parameters":{"ms":500}},{"action":"press_key","parameters":{"keys":"F9"}}]}'
expect "/api/commands: each input's result carries its verdict" 200 \
	'.results[0].data.effect == "confirmed" and (.results[1].data | has("effect") | not) and
	 .results[2].data.effect == "suspected_noop" and .succeeded == 3'
api POST /api/gui/do '{"task_id":"'"$A"'","instruction":"press(\"F9\")","after_screenshot":false}'
verdict "gui_do press(F9): suspected_noop" suspected_noop '.verified == false and .verification.result == "miss"'
api POST /api/gui/do '{"task_id":"'"$A"'","instruction":"click('"${wp[0]}"', '"${wp[1]}"')","after_screenshot":false,"observe":"region"}'
verdict "gui_do click on the working button: confirmed, with observe" confirmed '.observed.kind == "region"'
mcp_calls "$tmp/mcp.out" 60 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"effect","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"desktop_action","arguments":{"task_id":"'"$A"'","action":"click","x":'"${wp[0]}"',"y":'"${wp[1]}"',"observe":"region"}}}' \
	'{"jsonrpc":"2.0","id":3,"method":"tools/list"}'
jq -c 'select(.id == 2)' "$tmp/mcp.out" >"$tmp/mcp.act"
line=$(jq -r '.result.content[0].text' "$tmp/mcp.act" | head -1)
check "MCP: the first line says the verdict [$line]" eval '[[ "$line" == "Clicked ("*"): confirmed in "*" ms: "* ]]'
check "MCP: structuredContent has effect, evidence, effect_ms and summary" \
	[ "$(jq '.result.structuredContent | .effect == "confirmed" and (.evidence | type) == "object" and (.effect_ms | type) == "number" and (.summary | startswith("Clicked"))' "$tmp/mcp.act")" = true ]
check "MCP: observe region comes as an image block, not base64 text" \
	[ "$(jq '([.result.content[] | select(.type == "image" and .mimeType == "image/jpeg")] | length == 1) and .result.structuredContent.observed.image_b64 == null' "$tmp/mcp.act")" = true ]
check "MCP: the descriptions explain the verdicts and that only confirmed is proof" \
	[ "$(jq -r 'select(.id == 3) | [.result.tools[] | select(.name == "desktop_action" or .name == "gui_do") | .description | (contains("suspected_noop") and contains("unverifiable") and contains("Only confirmed is proof"))] | all' "$tmp/mcp.out")" = true ]

# ---- display B: no accessible program, typing into nothing, xterm ----
api POST /api/tasks '{"name":"effect B","display":true}'
B=$(jqr .task_id)
act "$B" '"action":"type","text":"abc"'
verdict "typing with no window at all: suspected_noop" suspected_noop
xstart "$B" xterm -geometry 60x10+40+40 -T plain
if xwait "$B" plain 20; then ok "an xterm on display B"; else bad "an xterm on display B"; fi
act "$B" '"action":"click","x":200,"y":80'
act "$B" '"action":"type","text":"echo effect"'
verdict "typing into an xterm (no accessibility tree): pixel evidence" confirmed '.evidence.pixels.changed > 0'
act "$B" '"action":"press_key","keys":"Return"'
verdict "Return in the xterm: confirmed" confirmed
api GET "/api/tasks/$B/display"
expect "display B has no accessibility bus up (nothing accessible runs)" 200 '.a11y.accessibility_bus == false'

# ---- smart_wait settled ----
api POST /api/waits '{"task_id":"'"$B"'","wake_when":"settled:300","timeout":20}'
expect "smart_wait settled: judged from XDamage, no model" 201 '.judged_by == "xdamage"'
api GET "/api/waits/$(jqr .wait_id)?block_s=15"
expect "settled resolves on a still screen" 200 '.status == "resolved"'
xstart "$B" xterm -geometry 40x8+40+300 -T busy -e sh -c 'while :; do date +%s%N; sleep 0.05; done'
xwait "$B" busy 20 || bad "the busy xterm appears"
api POST /api/waits '{"task_id":"'"$B"'","wake_when":"settled:400","timeout":20}'
W=$(jqr .wait_id)
sleep 2
api GET "/api/waits/$W"
expect "settled keeps watching while an xterm prints every 50 ms" 200 '.status == "watching"'
kill "$XPID" 2>/dev/null
api GET "/api/waits/$W?block_s=15"
expect "settled resolves once the printing stops" 200 '.status == "resolved"'

finish
