#!/usr/bin/env bash
# a11y/run.sh - the accessibility suite: a real detmd, real task displays
# (Xvfb), their private D-Bus session buses and Debian's AT-SPI (bus
# launcher, registry), real GTK programs (zenity), and detm-a11y reading the
# tree. Oracles from outside: xdotool for window geometry, ps/pgrep for the
# processes, detm-mcp for the tool's text.
#
#   bus:        a task display gets a private session bus and the env its
#               programs need; nothing of AT-SPI runs before it is asked
#   elements:   zenity's Yes/No buttons with role, actions, states and
#               bounds inside the window xdotool reports; filters; max
#   isolation:  an app on display A never shows in B's list, and back
#   chromium:   with the display's env and --force-renderer-accessibility
#               its page's elements are listed
#   grounding:  gui_do "click the No button" presses it through the tree with
#               no model call (the stub sees no request; zenity exits 1),
#               effect confirmed; a click on an inert icon is suspected_noop;
#               element: and element-gone: waits resolve from the tree; a
#               display with no accessible program falls back to the vision
#               backend (the stub sees the request) and starts nothing of
#               AT-SPI; another display's tree never grounds a target; a
#               button an xterm covers is pressed through its own action
#   stop:       stopping a display leaves no process of its bus; detmd's
#               shutdown stops the others; after kill -9 the next detmd does
#   hostile:    (hostile.sh, a detmd of its own) a 1 MB title and 900 labels
#               with 10 KB names: replies capped, helper RSS bounded
#   apps:       (apps.sh, a detmd of its own) a GTK 3 form (text, value, X
#               titles, a 5000-row tree view), the three "no element" hints,
#               gnome-calculator (GTK 4), a GTK 4 window in openbox's frame
#               and LibreOffice Calc's sheet
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

tmp=$(mktemp -d /tmp/detm-a11y.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
	daemon_kill9
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
export LC_ALL=C.UTF-8

for t in zenity xdotool jq; do
	command -v $t >/dev/null || { bad "needs $t" "run scripts/install-deps.sh test"; finish; exit 1; }
done

# group_pids PGID: the live (non-zombie) processes of a process group.
group_pids() { ps -eo pid=,pgid=,stat= | awk -v g="$1" '$2 == g && $3 !~ /^Z/ {print $1}'; }
group_gone() { [ -z "$(group_pids "$1")" ]; }
group_comms() { ps -eo pgid=,stat=,comm= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ {print $3}' | sort | tr '\n' ' '; }
group_ps() { ps -eo pid,pgid,stat,args | awk -v g="$1" 'NR == 1 || $2 == g'; }
# run_on TASK cmd...: start a program with the task display's env (in the
# background, in a session of its own so cleanup can kill all it started)
run_on() {
	local t=$1; shift
	curl -fsS "$DETM_URL/api/tasks/$t/display" >"$tmp/disp.$t"
	(
		while IFS='=' read -r k v; do export "$k=$v"; done < <(jq -r '.env | to_entries[] | "\(.key)=\(.value)"' "$tmp/disp.$t")
		exec setsid "$@" >/dev/null 2>>"$tmp/clients.log"
	) &
	pids+=($!)
}
elements() { # elements TASK QUERY: GET /api/desktop/elements?task_id=TASK&QUERY into $tmp/resp
	api GET "/api/desktop/elements?task_id=$1${2:+&$2}"
}
has_buttons() { elements "$1" "role=push%20button" && [ "$CODE" = 200 ] &&
	[ "$(jqr '[.elements[].name] | (index("Yes") != null and index("No") != null)')" = true ]; }
has_window() { elements "$1" "" && [ "$(jqr --arg w "$2" '[.elements[].window] | index($w) != null')" = true ]; }

# The vision backend (UI-TARS over Ollama) is bin/vision-stub: it counts
# every grounding request, so "no model call" is checked, not assumed.
stub_start || { bad "vision-stub starts"; finish; exit 1; }
export OLLAMA_URL="$STUB" ACU_GUI_AGENT_BACKEND=uitars ACU_GROUNDING_TIMEOUT_MS=30000
daemon_start || { bad "daemon start"; finish; exit 1; }

# ---- a task display gets a bus, and nothing more until asked ----
api POST /api/tasks '{"name":"a11y A","display":true}'
A=$(jqr .task_id)
api POST /api/tasks '{"name":"a11y B","display":true}'
B=$(jqr .task_id)
api GET "/api/tasks/$A/display"
expect "display A: env has DISPLAY, XAUTHORITY, a private session bus and the a11y switches" 200 \
	'.env.DISPLAY == .name and .env.XAUTHORITY == .xauthority and
	 (.env.DBUS_SESSION_BUS_ADDRESS | startswith("unix:")) and .env.GTK_MODULES == "gail:atk-bridge" and
	 .env.NO_AT_BRIDGE == "0" and .env.ACCESSIBILITY_ENABLED == "1" and .env.QT_ACCESSIBILITY == "1" and
	 (.a11y.chromium_flags | index("--force-renderer-accessibility") != null)'
A_DISP=$(jqr .name)
A_AUTH=$(jqr .xauthority)
A_BUS=$(jqr .a11y.bus_pid)
A_ADDR=$(jqr .env.DBUS_SESSION_BUS_ADDRESS)
A_DIR=$DETM_DATA/displays/$(jqr .number).a11y
api GET "/api/tasks/$B/display"
B_BUS=$(jqr .a11y.bus_pid)
B_ADDR=$(jqr .env.DBUS_SESSION_BUS_ADDRESS)
check "two displays have two session buses" [ "$A_BUS" != "$B_BUS" -a "$A_BUS" -gt 1 -a "$B_BUS" -gt 1 -a "$A_ADDR" != "$B_ADDR" ]
comms=$(group_comms "$A_BUS")
check "display without accessible apps: only the idle session bus runs ($comms)" \
	[ "$(group_pids "$A_BUS" | wc -l)" = 1 -a "$(jqr .a11y.accessibility_bus)" = false ]

# ---- elements of a real GTK dialog ----
run_on "$A" zenity --question --title "Question" --text "Save changes?"
if wait_for 60 has_buttons "$A"; then ok "zenity's Yes and No buttons are listed"; else
	bad "zenity's buttons are listed" "$(head -c 600 "$tmp/resp"); $(tail -3 "$tmp/clients.log")"; fi
comms=$(group_comms "$A_BUS")
check "the bus launcher and the registry run in display A's bus group ($comms)" \
	eval '[[ "$comms" == *at-spi-bus-laun* && "$comms" == *at-spi2-registr* ]]'
elements "$A" "role=push%20button"
expect "buttons: role, click action, visible+showing, application and window" 200 \
	'.count == (.elements | length) and .display == "'"$A_DISP"'" and .truncated == false and
	 all(.elements[]; .role == "push button" and (.actions | index("click") != null) and
	   (.states | index("showing") != null and index("visible") != null) and
	   .application == "zenity" and .window == "Question")'
cp "$tmp/resp" "$tmp/buttons"
geo=$(DISPLAY=$A_DISP XAUTHORITY=$A_AUTH xdotool search --name '^Question$' getwindowgeometry --shell 2>/dev/null | head -5)
eval "$(printf '%s\n' "$geo" | grep -E '^(X|Y|WIDTH|HEIGHT)=[0-9]+$')"
if [ -n "${WIDTH:-}" ]; then
	inside=$(jq --argjson x "$X" --argjson y "$Y" --argjson w "$WIDTH" --argjson h "$HEIGHT" \
		'all(.elements[].bounds; .x >= $x and .y >= $y and .x + .width <= $x + $w and .y + .height <= $y + $h and .width > 0 and .height > 0)' "$tmp/buttons")
	check "button bounds lie inside the window xdotool reports (${X},${Y} ${WIDTH}x${HEIGHT})" [ "$inside" = true ]
	yes_no=$(jq '[.elements[] | select(.name == "Yes" or .name == "No") | .bounds] | (.[0].y == .[1].y and .[0].x != .[1].x)' "$tmp/buttons")
	check "Yes and No sit side by side on one row" [ "$yes_no" = true ]
else
	bad "xdotool finds the zenity window" "$geo"
fi

elements "$A" "name=YES"
expect "name filter: any case, substring" 200 '.count >= 1 and all(.elements[]; .name | ascii_downcase | contains("yes"))'
elements "$A" "role=push%20button&states=enabled,sensitive"
expect "states filter: both buttons are enabled and sensitive" 200 '.count == 2'
elements "$A" "states=no-such-state"
expect "states filter: an unknown state matches nothing" 200 '.count == 0'
elements "$A" "window=NoSuchWindow"
expect "window filter: no window of that title, no elements" 200 '.count == 0'
elements "$A" "max=1"
expect "max=1: one element, truncated" 200 '.count == 1 and .truncated == true and .max == 1'
elements "$A" "max=0"
expect "max=0 is refused" 400 '.error.field == "max"'
api GET "/api/desktop/elements"
expect "no task_id: 409 with the reason" 409 '.error.field == "task_id"'
api POST /api/tasks '{"name":"no display"}'
C=$(jqr .task_id)
elements "$C" ""
expect "a task without its own display: 409" 409 '.error.message | contains("no display of its own")'

# ---- isolation: B's app never shows on A and back ----
run_on "$B" zenity --info --title "BeeInfo" --text "Other display"
if wait_for 60 has_window "$B" BeeInfo; then ok "display B lists its own dialog"; else
	bad "display B lists its own dialog" "$(head -c 600 "$tmp/resp")"; fi
elements "$B" ""
expect "display B's list has nothing of display A" 200 \
	'all(.elements[]; .window != "Question") and (.applications | length) == 1'
elements "$A" ""
expect "display A's list has nothing of display B" 200 \
	'all(.elements[]; .window != "BeeInfo") and (.applications | length) == 1 and .count > 2'

# ---- Chromium exposes its page with the recorded env and switch ----
if command -v chromium >/dev/null; then
	flag=$(jq -r '.a11y.chromium_flags[0]' "$tmp/disp.$B")
	run_on "$B" chromium --no-sandbox --no-first-run --user-data-dir="$tmp/chromium" "$flag" \
		"data:text/html,<title>Page</title><button>Press me</button><input aria-label='Your name'>"
	chr_ok() { elements "$B" "window=Page" && [ "$(jqr '[.elements[] | select(.role == "push button" and .name == "Press me")] | length')" = 1 ]; }
	if wait_for 90 chr_ok; then ok "chromium with $flag: the page's button is listed"; else
		bad "chromium with $flag: the page's button is listed" "$(head -c 400 "$tmp/resp")"; fi
	expect "chromium: the page's field and the browser's own buttons too" 200 \
		'any(.elements[]; .role == "entry" and .name == "Your name") and any(.elements[]; .name == "Reload")'
	{ kill -9 -- "-${pids[-1]}"; wait "${pids[-1]}"; } 2>/dev/null
else
	bad "chromium is installed" "run scripts/install-deps.sh test"
fi

# ---- the MCP tool and its text ----
mcp_calls "$tmp/mcp.out" 60 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a11y","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"desktop_elements","arguments":{"task_id":"'"$A"'","role":"push button"}}}'
jq -c 'select(.id == 2)' "$tmp/mcp.out" >"$tmp/mcp"
line=$(jq -r '.result.content[0].text' "$tmp/mcp" | head -1)
check "desktop_elements: first line \"2 elements on display $A_DISP (...)\" [$line]" \
	eval '[[ "$line" == "2 elements on display $A_DISP ("* ]]'
check "desktop_elements: structuredContent has the elements" \
	[ "$(jq '.result.structuredContent.count == 2 and .result.isError != true' "$tmp/mcp")" = true ]

# ---- grounding, verification and element waits through the tree ----
# run_rc TASK FILE cmd...: run_on, and write cmd's exit status to FILE
run_rc() { local t=$1 f=$2; shift 2; run_on "$t" sh -c '"$@"; echo $? >"$0"' "$f" "$@"; }
wait_rc() { [ -s "$1" ]; }
gdo() { api POST /api/gui/do "{\"task_id\":\"$1\",\"instruction\":\"$2\",\"after_screenshot\":false}"; }
stub_script '{"answers":["Action: click(start_box='"'"'(40,40)'"'"')"]}'
api POST /api/tasks '{"name":"a11y G","display":true}'
G=$(jqr .task_id)
api POST /api/waits '{"task_id":"'"$G"'","target":"screen","wake_when":"element:button \"No\"","timeout":300}'
expect "element wait: made before the dialog, judged by the tree" 201 \
	'.status == "watching" and .judged_by == "accessibility" and .backend == "accessibility"'
WE=$(jqr .wait_id)
api POST /api/waits '{"task_id":"'"$G"'","target":"screen","wake_when":"element:button \"OK\"","judge":"model"}'
expect "element wait: judge model is refused (the tree decides)" 400 '.error.field == "judge"'
api POST /api/waits '{"target":"screen","wake_when":"element:button \"OK\""}'
expect "element wait without a task display: 409" 409 '.error.field == "task_id"'
run_rc "$G" "$tmp/rc.G1" zenity --question --title "Keep" --text "Keep the draft?"
api GET "/api/waits/$WE?block_s=120"
expect "element wait resolves when the dialog's No button appears" 200 \
	'.status == "resolved" and .judged_by == "accessibility" and (.detail | contains("push button"))'
check "the element wait asked no model (the stub saw no request)" [ "$(stub_count)" = 0 ]

gdo "$G" "click the No button"
expect "gui_do: \"click the No button\" is grounded by the tree" 200 \
	'.grounded_by == "accessibility" and .element.role == "push button" and .element.name == "No" and
	 .x == (.element.bounds.x + (.element.bounds.width / 2 | floor)) and .model == null'
expect "gui_do: the click's effect is confirmed (the dialog went), verified true" 200 \
	'.effect == "confirmed" and .verified == true and .verification.result == "hit" and
	 any(.evidence.windows[]; .change == "went" and .title == "Keep")'
cp "$tmp/resp" "$tmp/gdo.G1"
if wait_for 60 wait_rc "$tmp/rc.G1"; then
	check "zenity saw No pressed: it exits 1 ($(cat "$tmp/rc.G1"))" [ "$(cat "$tmp/rc.G1")" = 1 ]
else bad "zenity exits after the click" "$(jq -c .verification "$tmp/gdo.G1")"; fi
check "grounding through the tree asked no model (the stub saw no request)" [ "$(stub_count)" = 0 ]

# a miss: a click on the dialog's icon (inert) is a suspected no-op
run_rc "$G" "$tmp/rc.G2" zenity --info --title "Saving report" --text "Saved."
api POST /api/waits '{"task_id":"'"$G"'","target":"screen","wake_when":"element:dialog \"saving\"","timeout":300}'
api GET "/api/waits/$(jqr .wait_id)?block_s=120"
expect "element wait on a dialog's title (contained, any case)" 200 '.status == "resolved"'
elements "$G" "role=icon"
ix=$(jqr '.elements[0].bounds | .x + (.width / 2 | floor)')
iy=$(jqr '.elements[0].bounds | .y + (.height / 2 | floor)')
api POST /api/waits '{"task_id":"'"$G"'","target":"screen","wake_when":"element-gone:dialog \"Saving\"","timeout":300}'
WG=$(jqr .wait_id)
api POST /api/desktop/action '{"task_id":"'"$G"'","action":"click","x":'"${ix:-0}"',"y":'"${iy:-0}"'}'
expect "desktop_action click on the inert icon: suspected_noop, verified false" 200 \
	'.effect == "suspected_noop" and .verified == false and .effect_ms == null'
api GET "/api/waits/$WG"
expect "element-gone wait still watches while the dialog is up" 200 '.status == "watching"'
gdo "$G" "click(${ix:-0}, ${iy:-0})"
expect "gui_do click(x, y) on the icon: suspected_noop too" 200 '.effect == "suspected_noop" and .verified == false and .grounded == false'
gdo "$G" "click the OK button"
expect "gui_do \"click the OK button\": tree, confirmed" 200 '.grounded_by == "accessibility" and .effect == "confirmed" and .verified == true'
api GET "/api/waits/$WG?block_s=120"
expect "element-gone wait resolves when the dialog closes" 200 '.status == "resolved" and .judged_by == "accessibility"'
if wait_for 60 wait_rc "$tmp/rc.G2"; then
	check "zenity --info exits 0 after OK" [ "$(cat "$tmp/rc.G2")" = 0 ]
else bad "zenity --info exits after OK"; fi
check "still no model call on display G" [ "$(stub_count)" = 0 ]

# another display's tree never grounds: H has no accessible program
api POST /api/tasks '{"name":"a11y H","display":true}'
H=$(jqr .task_id)
api GET "/api/tasks/$H/display"
H_BUS=$(jqr .a11y.bus_pid)
run_rc "$G" "$tmp/rc.G3" zenity --question --title "Only on G" --text "Mine?"
if wait_for 60 has_window "$G" "Only on G"; then ok "display G shows its new dialog"; else bad "display G shows its new dialog"; fi
api POST /api/gui/find '{"task_id":"'"$H"'","description":"the Yes button"}'
expect "gui_find on H (no accessible program) falls back to the vision backend" 200 \
	'.grounded_by == "uitars" and .x == 40 and .y == 40 and .tree.matched == false'
check "the vision backend was asked once (the stub saw the request)" [ "$(stub_count)" = 1 ]
gdo "$H" "click the Yes button"
expect "gui_do on H: grounded by the backend, never by G's tree; nothing there: suspected_noop" 200 \
	'.grounded_by == "uitars" and .x == 40 and .effect == "suspected_noop" and .verified == false'
check "the vision backend was asked again (the stub saw 2 requests)" [ "$(stub_count)" = 2 ]
comms=$(group_comms "$H_BUS")
check "display H: grounding and clicks started nothing of AT-SPI ($comms)" \
	[ "$(group_pids "$H_BUS" | wc -l)" = 1 ]
api GET "/api/tasks/$H/display"
expect "display H: no accessibility bus, no helper" 200 '.a11y.accessibility_bus == false and .a11y.helper_pid == 0'
api POST /api/gui/find '{"task_id":"'"$G"'","description":"the Yes button"}'
expect "gui_find on G: its own tree answers" 200 '.grounded_by == "accessibility" and .element.window == "Only on G"'
check "and asks no model (still 2 requests)" [ "$(stub_count)" = 2 ]

# the MCP text says what grounded and whether the click landed
mcp_calls "$tmp/mcp.out" 120 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a11y","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gui_do","arguments":{"task_id":"'"$G"'","instruction":"click the Yes button"}}}'
jq -c 'select(.id == 2)' "$tmp/mcp.out" >"$tmp/mcp.gdo"
line=$(jq -r '.result.content[0].text' "$tmp/mcp.gdo" | head -1)
check "gui_do over MCP: the first line says the verdict and the grounding [$line]" \
	eval '[[ "$line" == "Clicked ("*"): confirmed in "*" ms: "*"grounded by accessibility"* ]]'
check "gui_do over MCP: structuredContent has grounded_by, element and verified" \
	[ "$(jq '.result.structuredContent | .grounded_by == "accessibility" and .element.name == "Yes" and .verified == true' "$tmp/mcp.gdo")" = true ]
if wait_for 60 wait_rc "$tmp/rc.G3"; then
	check "zenity saw Yes pressed through MCP: exits 0" [ "$(cat "$tmp/rc.G3")" = 0 ]
else bad "zenity exits after the MCP click"; fi
check "no model call for the MCP click (still 2 requests)" [ "$(stub_count)" = 2 ]
# a window with no tree over the button: a click there goes to it
run_rc "$G" "$tmp/rc.G4" zenity --question --title "Covered" --text "Go on?"
if wait_for 60 has_window "$G" Covered; then ok "display G shows the dialog to cover"; else bad "display G shows the dialog to cover"; fi
elements "$G" "window=Covered&role=push%20button&name=Yes"
bx=$(jqr '.elements[0].bounds.x // 0')
by=$(jqr '.elements[0].bounds.y // 0')
cx=$(jqr '.elements[0].bounds | .x + (.width / 2 | floor)')
cy=$(jqr '.elements[0].bounds | .y + (.height / 2 | floor)')
run_on "$G" xterm -geometry 30x6+$((bx - 20))+$((by - 20)) -T cover -e sleep 600
# mapped and viewable (xwait only finds the window): else the click's own
# click-to-focus may raise the dialog above a window not yet shown
viewable() { DISPLAY=$(disp_of "$1") XAUTHORITY=$(auth_of "$1") xdotool search --onlyvisible --name "^$2\$" >/dev/null 2>&1; }
if wait_for 30 xwait "$G" cover && wait_for 10 viewable "$G" cover; then ok "an xterm covers the Yes button"; else bad "an xterm covers the Yes button"; fi
api POST /api/desktop/action '{"task_id":"'"$G"'","action":"click","x":'"${cx:-0}"',"y":'"${cy:-0}"'}'
expect "desktop_action click on the covered button: not confirmed (the xterm on top gets it)" 200 \
	'.effect != "confirmed" and .verified != true'
gdo "$G" "click the Yes button"
expect "gui_do on the covered button runs its own AT-SPI action, confirmed by its effect" 200 \
	'.grounded_by == "accessibility" and .acted_by == "accessibility action" and .effect == "confirmed" and .verified == true'
if wait_for 60 wait_rc "$tmp/rc.G4"; then
	check "zenity saw Yes through its action: exits 0" [ "$(cat "$tmp/rc.G4")" = 0 ]
else bad "zenity exits after the action"; fi
check "no model call for the covered button (still 2 requests)" [ "$(stub_count)" = 2 ]
api DELETE "/api/tasks/$G/display"
api DELETE "/api/tasks/$H/display"

# ---- stop: nothing of the bus survives its display ----
helper=$(curl -fsS "$DETM_URL/api/tasks/$A/display" | jq .a11y.helper_pid)
check "the helper of display A runs while the display does" kill -0 "$helper"
api DELETE "/api/tasks/$A/display"
expect "display A stopped" 200 '.stopped == true'
if wait_for 20 group_gone "$A_BUS"; then ok "no process of display A's bus group is left"; else
	bad "no process of display A's bus group is left" "$(group_ps "$A_BUS")"; fi
check "display A's helper is gone" eval '! kill -0 '"$helper"' 2>/dev/null'
check "no process names display A's a11y dir" eval '! pgrep -f "$A_DIR" >/dev/null'
check "display A's a11y dir is removed" [ ! -e "$A_DIR" ]
check "display B's bus still runs" eval '! group_gone "$B_BUS"'
daemon_stop
check "detmd stops cleanly with a display's bus and helper running (exit $DETM_RC)" [ "$DETM_RC" = 0 ]
if wait_for 20 group_gone "$B_BUS"; then ok "detmd's shutdown stops display B's bus group"; else
	bad "detmd's shutdown stops display B's bus group" "$(group_ps "$B_BUS")"; fi

# ---- kill -9: the next detmd removes the bus the crashed one left ----
daemon_start || { bad "daemon restart"; finish; exit 1; }
api POST /api/tasks '{"name":"a11y crash","display":true}'
K=$(jqr .task_id)
api GET "/api/tasks/$K/display"
K_BUS=$(jqr .a11y.bus_pid)
K_DIR=$DETM_DATA/displays/$(jqr .number).a11y
elements "$K" ""        # brings up the launcher and registry too
daemon_kill9
check "after kill -9 the bus group outlives detmd" eval '! group_gone "$K_BUS"'
daemon_start || { bad "daemon restart"; finish; exit 1; }
if wait_for 20 group_gone "$K_BUS"; then ok "a restart kills the bus group the crashed detmd left"; else
	bad "a restart kills the bus group the crashed detmd left" "$(group_ps "$K_BUS")"; fi
check "and removes its a11y dir" [ ! -e "$K_DIR" ]
daemon_stop

# ---- parts with a detmd of their own ----
total_pass=0
total_fail=0
# (each starts its own detmd in a data dir of its own, and removes it)
run_part hostile env -u DETM_DATA -u DETM_URL -u DETM_PID tests/a11y/hostile.sh
run_part apps env -u DETM_DATA -u DETM_URL -u DETM_PID tests/a11y/apps.sh
PASS=$((PASS + total_pass))
FAIL=$((FAIL + total_fail))
finish
