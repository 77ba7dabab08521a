#!/usr/bin/env bash
# run.sh - the launch suite (issue 34 items 1 and 2): desktop_launch starts
# real Debian programs (xterm, mousepad, zenity) on a task's own display
# under openbox, the window manager detmd starts by default; checked from
# outside with xdotool, xwininfo and /proc, and through detm-mcp and the
# official MCP TypeScript SDK client (launch.mjs).
#
#   env:        task_register's first line names the display; the display env
#               (a11y bus and toolkit switches) is in the task's metadata; a
#               launched GTK program shows in desktop_elements
#   window:     the result names the window that appeared (xdotool agrees),
#               focused by the window manager; a file chooser stays inside
#               the screen; the next new window takes the focus
#   keys:       type/press_key name the window that had the keyboard focus,
#               and say so when none had
#   no shell:   an argument with ; $( ) ` | reaches the program verbatim
#               (/proc/PID/cmdline), nothing runs
#   log:        stdout and stderr lines land in the launch action's logs; the
#               exit code and status are in the task
#   governance: a program off the allow-list, a shell, xterm -e are 403
#               launch_denied naming the field, and audited; --launch off
#               refuses; a URL with no allowed browser is refused; open with
#               a desktop id runs its Exec line
#   stop:       cancelling the task stops what it launched (pids gone,
#               status stopped); stopping the display does too
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init launch --term

for t in xterm mousepad zenity openbox xdotool xwininfo jq; do
	command -v $t >/dev/null || { bad "needs $t" "run scripts/install-deps.sh test"; finish; exit 1; }
done

gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
launch() { api POST "/api/tasks/$1/launch" "$2"; }
# mcp TASKFILE CALL-JSON...: initialize, then the tools/call messages (ids 2..).
mcp() {
	local out=$1 i=2 msgs=()
	shift
	for c in "$@"; do
		msgs+=("{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":$c}")
		i=$((i + 1))
	done
	mcp_calls "$out" 60 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"launch","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' "${msgs[@]}"
}
reply() { jq -c "select(.id == $2)" "$1"; }
x_of() { DISPLAY=$(disp_of "$1") XAUTHORITY=$(auth_of "$1") "${@:2}" 2>/dev/null; }
jqe() { jq -e "$@" >/dev/null; }

daemon_start || { bad "daemon start"; finish; exit 1; }

# ---- register over MCP: the display and its env ----
mcp "$tmp/m1" '{"name":"task_register","arguments":{"name":"launch","plan":["start","work"],"display":true}}'
reply "$tmp/m1" 2 >"$tmp/r"
T=$(jq -r '.result.structuredContent.task_id' "$tmp/r")
TD=$(jq -r '.result.structuredContent.metadata.display' "$tmp/r")
line=$(jq -r '.result.content[0].text' "$tmp/r")
check "task_register's first line names the display it started [$line]" \
	eval '[[ "$line" == *"own display $TD"* && "$line" == *desktop_launch* ]]'
check "the task's metadata has the display env with the a11y bus and switches" jqe \
	'.result.structuredContent.metadata.display_env | (.DBUS_SESSION_BUS_ADDRESS | startswith("unix:path=")) and .GTK_MODULES == "gail:atk-bridge" and .GNOME_ACCESSIBILITY == "1" and .QT_ACCESSIBILITY == "1" and .SAL_USE_VCLPLUGIN == "gtk3" and .DISPLAY != null and .XAUTHORITY != null' "$tmp/r"
api GET /api/displays
expect "the display runs the window manager (openbox by default)" 200 \
	".window_manager.command == \"openbox\" and .window_manager.found and ([.displays[] | select(.task_id == \"$T\")][0] | .window_manager == \"openbox\" and .wm_pid > 0)"
api GET /api/health
expect "health says which window manager and that it is installed" 200 '.window_manager.found == true'
api GET /api/capabilities
expect "capabilities say launching is on and what it may start" 200 \
	'.desktop.launch.enabled == true and (.desktop.launch.allow | index("mousepad") != null) and (.desktop.launch.allow | index("sh") == null)'

in_screen() { # in_screen WID: the frame xwininfo reports is inside 1280x720
	local g
	case $1 in 0x*) ;; *) return 1 ;; esac     # (xwininfo without an id waits for a click)
	g=$(x_of "$T" timeout 10 xwininfo -id "$1" -frame)
	local x y w h
	x=$(awk '/Absolute upper-left X/ {print $NF}' <<<"$g"); y=$(awk '/Absolute upper-left Y/ {print $NF}' <<<"$g")
	w=$(awk '/  Width:/ {print $NF}' <<<"$g"); h=$(awk '/  Height:/ {print $NF}' <<<"$g")
	[ "$x" -ge 0 ] && [ "$y" -ge 0 ] && [ $((x + w)) -le 1280 ] && [ $((y + h)) -le 720 ]
}

# ---- a keyboard with no window ----
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"type\",\"text\":\"lost\"}"
expect "type with no window says the keys went nowhere" 200 \
	'.focus_window == null and (.observation | test("no window had the keyboard focus: the keys went nowhere"))'

# ---- xterm over MCP: the result names its window ----
mcp "$tmp/m2" "{\"name\":\"desktop_launch\",\"arguments\":{\"task_id\":\"$T\",\"command\":\"xterm\",\"args\":[\"-T\",\"launched-xterm\"]}}"
reply "$tmp/m2" 2 >"$tmp/r"
XT=$(jq -r '.result.structuredContent.pid' "$tmp/r")
XW=$(jq -r '.result.structuredContent.window.id // empty' "$tmp/r")
line=$(jq -r '.result.content[0].text' "$tmp/r")
check "desktop_launch over MCP names the window that appeared [$line]" \
	eval '[[ "$line" == *"started xterm (pid $XT) on $TD; its window $XW \"launched-xterm\""* && "$line" == *"keyboard focus"* ]]'
check "xdotool finds that window, of that pid" sh -c \
	"[ \"\$(printf '0x%x' \$(DISPLAY=$TD XAUTHORITY=$(auth_of "$T") xdotool search --name '^launched-xterm\$' | head -1))\" = '$XW' ] && [ \"\$(DISPLAY=$TD XAUTHORITY=$(auth_of "$T") xdotool getwindowpid $((XW)))\" = $XT ]"
check "the window manager gave it the keyboard focus" sh -c \
	"[ \"\$(DISPLAY=$TD XAUTHORITY=$(auth_of "$T") xdotool getwindowfocus getwindowname)\" = launched-xterm ]"
check "it runs in a session of its own (sid = pid)" sh -c "[ \"\$(ps -o sid= -p $XT | tr -d ' ')\" = $XT ]"
check "with the display's env" sh -c "tr '\\0' '\\n' </proc/$XT/environ | grep -qx 'DISPLAY=$TD' && tr '\\0' '\\n' </proc/$XT/environ | grep -qx 'GNOME_ACCESSIBILITY=1' && ! tr '\\0' '\\n' </proc/$XT/environ | grep -q '^ACU_'"

# ---- mousepad: its accessibility tree, typing names the window ----
launch "$T" '{"command":"mousepad","wait_window":20}'
expect "launch mousepad (HTTP)" 201 '.status == "running" and .window.title == "Untitled 1 - Mousepad" and .window.ours and .window.focused'
MP=$(jqr .pid)
MW=$(jqr .window.id)
check "the next new window took the focus from the xterm" sh -c \
	"[ \"\$(DISPLAY=$TD XAUTHORITY=$(auth_of "$T") xdotool getwindowfocus getwindowname)\" = 'Untitled 1 - Mousepad' ]"
in_tree() { curl -s "$DETM_URL/api/desktop/elements?task_id=$T&max=50" | jq -e '.applications | index("mousepad") != null' >/dev/null; }
check "the launched program shows in desktop_elements (the a11y env reached it)" wait_for 20 in_tree
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"type\",\"text\":\"typed by launch\"}"
expect "type names the window that had the keyboard focus" 200 \
	".focus_window.id == \"$MW\" and (.observation | test(\"into \\\"Untitled 1 - Mousepad\\\"\"))"
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"press_key\",\"keys\":\"ctrl+a\"}"
expect "press_key names it too" 200 ".focus_window.id == \"$MW\" and (.observation | test(\"in \\\"\"))"
# The issue's case: ctrl+o opens a dialog, and what is typed next must reach it.
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"press_key\",\"keys\":\"ctrl+o\"}"
dialog_up() { x_of "$T" xdotool search --name '^Open File$' >/dev/null; }
check "ctrl+o opened mousepad's file dialog" wait_for 10 dialog_up
sleep 0.5
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"type\",\"text\":\"/tmp/\"}"
expect "the dialog got the focus: typing goes into it and says so" 200 \
	'.focus_window.title == "Open File" and (.observation | test("into \"Open File\""))'
check "the dialog is inside the screen" in_screen "$(jqr .focus_window.id)"
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"press_key\",\"keys\":\"Escape\"}"

# ---- no shell: arguments verbatim ----
weird='a;b $(touch '"$tmp"'/pwned) `touch '"$tmp"'/pwned2` | c && d'
launch "$T" "$(jq -nc --arg w "$weird" '{command:"zenity",args:["--info","--title","verbatim","--text",$w]}')"
expect "launch zenity with shell metacharacters in an argument" 201 '.window.title == "verbatim"'
ZP=$(jqr .pid)
check "the argument reached the program verbatim (/proc/PID/cmdline)" sh -c \
	"tr '\\0' '\\n' </proc/$ZP/cmdline | grep -qxF -- '$weird'"
check "and nothing of it ran" sh -c "[ ! -e $tmp/pwned ] && [ ! -e $tmp/pwned2 ]"
ZW=$(jqr .window.id)
check "a GTK dialog is placed inside the screen" in_screen "$ZW"
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"close_window\",\"window_id\":\"$ZW\"}"

# ---- a file chooser stays inside the screen and takes the focus ----
launch "$T" '{"command":"zenity","args":["--file-selection","--title","pick a file"],"wait_window":20}'
expect "launch a GTK file chooser" 201 '.window != null and .window.focused'
FW=$(jqr .window.id)
check "the file chooser is inside the screen (xwininfo, frame included)" in_screen "$FW"
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"press_key\",\"keys\":\"Escape\"}"
expect "keys go to the chooser (Escape closes it)" 200 ".focus_window.id == \"$FW\""

# ---- stdout and stderr into the task's log ----
launch "$T" '{"command":"zenity","args":["--entry","--title","say","--entry-text","line from zenity"]}'
expect "launch zenity --entry" 201 '.window.title == "say"'
EP=$(jqr .pid)
EA=$(jqr .action_id)
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"press_key\",\"keys\":\"Return\"}"
check "zenity printed its answer and exited" wait_for 10 gone "$EP"
logged() { curl -s "$DETM_URL/api/tasks/$T/actions/$EA" | jq -e "$1" >/dev/null; }
check "its stdout line is in the launch action's logs" wait_for 5 logged \
	'[.logs[] | select(.log_type == "stdout") | .content] | index("line from zenity") != null'
check "the action is completed with exit code 0" wait_for 5 logged '.status == "completed" and .output_data.exit_code == 0'
launch "$T" '{"command":"xterm","args":["-no-such-option"]}'
expect "a program that fails at once" 201 '.window == null and (.observation | test("ended"))'
XA=$(jqr .action_id)
check "its stderr lines are logged and the action failed" wait_for 5 sh -c \
	"curl -s '$DETM_URL/api/tasks/$T/actions/$XA' | jq -e '.status == \"failed\" and ([.logs[] | select(.log_type == \"stderr\")] | length) > 0 and .output_data.exit_code != 0' >/dev/null"

# ---- listed in the task ----
api GET "/api/tasks/$T"
expect "GET the task lists the launched processes" 200 \
	"[.launched[] | select(.pid == $XT)][0] | .status == \"running\" and .program == \"xterm\" and .window_title == \"launched-xterm\""
expect "with how the finished ones ended" 200 \
	"[.launched[] | select(.pid == $EP)][0] | .status == \"exited\" and .exit_code == 0"
api GET "/api/tasks/$T/launch"
expect "GET /api/tasks/{id}/launch lists them" 200 '(.launched | length) >= 5'

# ---- governance ----
launch "$T" '{"command":"sh","args":["-c","touch '"$tmp"'/shell-ran"]}'
expect "a shell not on the allow-list is 403 launch_denied" 403 \
	'.error.code == "launch_denied" and .error.field == "command" and (.error.message | test("allow-list"))'
check "and did not run" [ ! -e "$tmp/shell-ran" ]
launch "$T" '{"command":"xterm","args":["-e","sh"]}'
expect "xterm -e (a command through a terminal) is refused" 403 '.error.code == "launch_denied" and .error.field == "args"'
launch "$T" '{"command":"/tmp/evil/mousepad"}'
expect "a path is not a listed name" 403 '.error.code == "launch_denied"'
mcp "$tmp/m3" "{\"name\":\"desktop_launch\",\"arguments\":{\"task_id\":\"$T\",\"command\":\"bash\"}}"
reply "$tmp/m3" 2 >"$tmp/r"
check "over MCP the refusal is a tool error saying why" jqe \
	'.result.isError == true and (.result.content[0].text | test("not on the launch allow-list"))' "$tmp/r"
audited() { curl -s "$DETM_URL/api/tasks/$T?detail=actions" | jq -e '[.items[].action_details[]?, .task_actions[]? | select(.action_type == "cli" and (.summary | startswith("launch refused")) and .status == "failed")] | length >= 4' >/dev/null; }
check "every refusal is audited on the task as a failed cli action" audited
# (on a display of its own: a second mousepad on the same session bus hands
# its file to the first one and exits)
api POST /api/tasks '{"name":"desktop id","display":true}'
K=$(jqr .task_id)
launch "$K" '{"open":"org.xfce.mousepad.desktop","args":["'"$tmp"'/from-desktop-id.txt"],"wait_window":20}'
expect "open with a desktop id runs its Exec line with the file" 201 \
	'.argv == ["mousepad","'"$tmp"'/from-desktop-id.txt"] and (.window.title | test("from-desktop-id.txt"))'
launch "$K" '{"open":"org.xfce.mousepad.desktop","args":["'"$tmp"'/second.txt"],"wait_window":3}'
expect "a second instance that hands its file to the first says so" 201 \
	'.status == "exited" and (.observation | test("instance already running"))'
launch "$K" '{"open":"no-such-app"}'
expect "an unknown desktop id is 404" 404 '.error.field == "open"'

# ---- stop with the task ----
running=$(curl -s "$DETM_URL/api/tasks/$T" | jq -r '[.launched[] | select(.status == "running") | .pid] | join(" ")')
api POST "/api/tasks/$T/cancel" '{"reason":"done"}'
expect "cancel the task" 200 '.status == "cancelled"'
all_gone() { for p in $running; do gone "$p" || return 1; done; }
check "cancelling stopped every launched process ($running)" wait_for 5 all_gone
api GET "/api/tasks/$T"
expect "and they are listed as stopped" 200 '[.launched[] | select(.status == "running")] | length == 0'
check "their actions record that detm stopped them" sh -c \
	"curl -s '$DETM_URL/api/tasks/$T/actions/$(curl -s "$DETM_URL/api/tasks/$T" | jq -r "[.launched[] | select(.pid == $XT)][0].action_id")' | jq -e '.output_data.stopped_by_detm == true' >/dev/null"

# ---- stopping the display stops them too ----
api POST /api/tasks '{"name":"display stop","display":true}'
S=$(jqr .task_id)
launch "$S" '{"command":"xlogo","wait_window":3}'
LP=$(jqr .pid)
api DELETE "/api/tasks/$S/display"
check "stopping the task's display stops its programs" wait_for 5 gone "$LP"
launch "$S" '{"command":"xlogo"}'
expect "no display: 409 naming the way out" 409 '.error.field == "task_id" and (.error.message | test("display"))'

# ---- the MCP SDK client ----
sdk=tests/mcp/sdk
if ! command -v node >/dev/null 2>&1; then
	bad "sdk client" "node not found"
elif ! npm_ci "$sdk" @modelcontextprotocol/sdk; then
	bad "sdk client" "npm ci failed"
else
	node tests/launch/launch.mjs >"$tmp/sdk.out" 2>&1
	sed '$d' "$tmp/sdk.out"
	p=$(tail -1 "$tmp/sdk.out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
	if [ -n "$p" ]; then PASS=$((PASS + ${p% *})); FAIL=$((FAIL + ${p#* })); else bad "sdk client" "$(tail -3 "$tmp/sdk.out")"; fi
fi

# ---- keys into the frame of a client that went ----
# The focused client is destroyed while openbox is stopped: X gives the
# focus back to openbox's frame (or the frame under the pointer), which
# stays mapped until openbox runs again. A key then reaches no application:
# focus_window null, "went nowhere" (it named the untitled frame before).
api POST /api/tasks '{"name":"frame focus","display":true}'
F=$(jqr .task_id)
xstart "$F" xterm -T frame-victim
victim=$XPID
if xwait "$F" frame-victim 20; then
	fw=$(x_of "$F" xdotool search --name '^frame-victim$' | head -1)
	x_of "$F" xdotool windowactivate --sync "$fw" mousemove --window "$fw" 20 20
	api GET /api/displays
	wm=$(jqr "[.displays[] | select(.task_id == \"$F\")][0].wm_pid")
	kill -STOP "$wm"
	kill -9 "$victim"
	wait_for 10 sh -c "! DISPLAY=$(disp_of "$F") XAUTHORITY=$(auth_of "$F") xwininfo -id $fw >/dev/null 2>&1"
	api POST /api/desktop/action "{\"task_id\":\"$F\",\"action\":\"press_key\",\"keys\":\"x\"}"
	kill -CONT "$wm"
	expect "a key while the focus is on the frame of a client that went goes nowhere (focus_window null)" 200 \
		'.focus_window == null and (.observation | test("no window had the keyboard focus: the keys went nowhere"))'
else
	bad "xterm frame-victim opened on the task display"
fi
api PATCH "/api/tasks/$F" '{"status":"completed"}'

# ---- --launch off, and a list without browsers ----
daemon_stop
daemon_start --launch off || { bad "daemon start --launch off"; finish; exit 1; }
api POST /api/tasks '{"name":"off","display":true}'
O=$(jqr .task_id)
launch "$O" '{"command":"xlogo"}'
expect "--launch off refuses every launch" 403 '.error.code == "launch_denied" and (.error.message | test("off"))'
api GET /api/capabilities
expect "and capabilities say so" 200 '.desktop.launch.enabled == false and (.desktop.launch.why | test("--launch off"))'
daemon_stop
daemon_start --launch-allow "xlogo zenity" || { bad "daemon start --launch-allow"; finish; exit 1; }
api POST /api/tasks '{"name":"narrow","display":true}'
N=$(jqr .task_id)
launch "$N" '{"open":"https://example.invalid/"}'
expect "a URL with no allowed browser or xdg-open is refused" 403 '.error.code == "launch_denied" and .error.field == "open"'
launch "$N" '{"command":"mousepad"}'
expect "a default program dropped from the list is refused" 403 '.error.code == "launch_denied"'
launch "$N" '{"command":"xlogo","wait_window":0}'
expect "and a listed one starts (wait_window 0: no wait)" 201 '.window == null and (.observation | test("not waiting"))'

# ---- a window manager that is not installed ----
daemon_stop
daemon_start --window-manager "no-such-wm --replace" || { bad "daemon start with a missing window manager"; finish; exit 1; }
api GET /api/health
expect "health says the window manager is not installed" 200 \
	'.window_manager.found == false and (.window_manager.note | test("not installed"))'
api POST /api/tasks '{"name":"no wm","display":true}'
expect "and task displays still start, without one" 201 '.metadata.display != null'
M=$(jqr .task_id)
api GET "/api/tasks/$M/display"
expect "(its display runs none)" 200 '.window_manager == null'
api GET /api/doctor
expect "the doctor warns about it" 200 \
	'[.results[] | select(.name == "window_manager")][0] | .status == "warn" and (.detail | test("not installed"))'

# ---- --window-manager none ----
daemon_stop
daemon_start --window-manager none || { bad "daemon start --window-manager none"; finish; exit 1; }
api POST /api/tasks '{"name":"bare","display":true}'
B=$(jqr .task_id)
api GET "/api/tasks/$B/display"
expect "--window-manager none: the display has none" 200 '.window_manager == null and (has("wm_pid") | not)'
check "and nothing manages the screen" sh -c "! DISPLAY=$(disp_of "$B") XAUTHORITY=$(auth_of "$B") xprop -root _NET_SUPPORTING_WM_CHECK | grep -q 'window id'"

finish
