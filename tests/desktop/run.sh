#!/usr/bin/env bash
# run.sh - the desktop suite: a real detmd driving real Xvfb displays
# with real X clients (xterm, xlogo), checked from outside with independent
# tools (xdotool/xwininfo/xdpyinfo as oracles, ImageMagick for pixels, the
# files xterms write).
#
#   displays: per-task Xvfb (-displayfd, auth cookie, size), /api/displays,
#             isolation between two tasks, release on completion/delete,
#             daemon shutdown, kill -9 + restart, a dead Xvfb and a new one
#   input:    click focuses, Unicode typing, key combos, drag, scroll,
#             image-coordinate mapping
#   windows:  list/find/move/resize/minimise/close
#   capture:  JPEG/PNG/JSON, pixels of a known window, scale factor
#   router:   /api/commands results, stop_on_error, timeout
#   errors:   off-screen, unknown action/window, released display
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init desktop

act() { # act TASK JSON-fields: POST /api/desktop/action
	api POST /api/desktop/action "{\"task_id\":\"$1\",$2}" >/dev/null
}
file_has() { [ -f "$1" ] && grep -qF -- "$2" "$1"; }
gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
saver_timeout() { # saver_timeout DISPLAY: the X screen saver timeout (XGetScreenSaver)
	DISPLAY=$1 python3 -c '
import ctypes
x = ctypes.CDLL("libX11.so.6"); x.XOpenDisplay.restype = ctypes.c_void_p
d = x.XOpenDisplay(None)
if not d: raise SystemExit("cannot open the display")
v = [ctypes.c_int() for _ in range(4)]
x.XGetScreenSaver(ctypes.c_void_p(d), *[ctypes.byref(i) for i in v]); print(v[0].value)'
}
xvfb_count() { pgrep -f "Xvfb.*-auth $DETM_DATA/displays" | wc -l; }

# ---- a shared desktop of our own (the daemon's DISPLAY) ----
xvfb_start 1024x768x24 || { bad "shared Xvfb" "did not start"; finish; exit 1; }
SHARED=$XVFB_DISPLAY

daemon_start --display "$SHARED" || { bad "daemon start"; finish; exit 1; }

# ---- manifest and self-check ----
api GET /api/capabilities >/dev/null
expect "capabilities: desktop and commands on, actions listed" 200 \
	'.capabilities.desktop and .capabilities.commands and (.desktop.actions | index("click") != null) and .desktop.xvfb'
api GET /api/device >/dev/null
expect "device: shared display reachable with XTEST and MIT-SHM" 200 \
	".x11.shared_reachable and (.x11.extensions | index(\"XTEST\") != null) and (.x11.extensions | index(\"MIT-SHM\") != null) and .cpu.count >= 1 and .disk.free_mb > 0 and (.checks | length) >= 3"

# ---- two tasks, two displays ----
api POST /api/tasks '{"name":"A","plan":["type"],"display":true}' >/dev/null
expect "register with display: true" 201 '.metadata.display_number >= 100 and .metadata.display_resolution == "1280x720"'
A=$(jqr .task_id)
api POST /api/tasks '{"name":"B","display":true,"display_resolution":"800x600"}' >/dev/null
expect "register with display_resolution" 201 '.metadata.display_resolution == "800x600"'
B=$(jqr .task_id)
DA=$(disp_of "$A"); DB=$(disp_of "$B")
check "the two tasks have different displays" [ "$DA" != "$DB" ]
api GET /api/displays >/dev/null
expect "GET /api/displays lists both" 200 "[.displays[].task_id] | (index(\"$A\") != null and index(\"$B\") != null)"
check "display size is the task's" sh -c "DISPLAY=$DB XAUTHORITY=$(auth_of "$B") xdpyinfo | grep -q 'dimensions: *800x600'"
check "task displays never blank (screen saver off; Xvfb's default is 600 s)" \
	[ "$(XAUTHORITY=$(auth_of "$A") saver_timeout "$DA")" = 0 ]
check "the display needs its cookie" sh -c "! DISPLAY=$DA XAUTHORITY=/dev/null xdpyinfo >/dev/null 2>&1"
api GET "/api/tasks/$A/display" >/dev/null
expect "GET a task's display" 200 ".name == \"$DA\" and .state == \"running\""
api POST "/api/tasks/$A/display" '{}' >/dev/null
expect "a second display for the same task is 409" 409

# ---- input: click focuses, Unicode typing, key combos ----
# xstart keeps the xterm's own pid (xenv ... & kept a subshell's).
xstart "$A" xterm -geometry 60x10+0+0 -T left -e sh -c "cat > $tmp/a1.txt"
XT1=$XPID
xstart "$A" xterm -geometry 60x10+600+0 -T right -e sh -c "cat > $tmp/a2.txt"
xstart "$B" xterm -geometry 40x10+0+0 -T other -e sh -c "cat > $tmp/b.txt"
xwait "$A" right || bad "xterms appear" "no window"
xwait "$B" other
wait_for 5 test -f "$tmp/a2.txt"
focus_is() { [ "$(xenv "$A" xdotool getwindowfocus getwindowname 2>/dev/null)" = "$1" ]; }
act "$A" '"action":"click","x":800,"y":60'
expect "click" 200 '.x == 800 and .y == 60 and .display != null'
check "a click focuses the window under it (right)" wait_for 3 focus_is right
act "$A" '"action":"click","x":100,"y":60'
check "a click focuses the window under it (left)" wait_for 3 focus_is left
text='héllo wörld ß — 漢字かな 😀 tab	end'
act "$A" "\"action\":\"type\",\"text\":$(jq -Rn --arg t "$text" '$t')"
expect "type Unicode" 200 ".chars == $(printf %s "$text" | wc -m)"
act "$A" '"action":"press_key","keys":"Return"'
expect "press_key Return" 200
check "typed Unicode arrives in the xterm" wait_for 5 file_has "$tmp/a1.txt" "$text"
long=$(printf 'line %03d äöü 字 ' $(seq 1 40))
act "$A" "\"action\":\"type\",\"text\":\"$long\\n\""
check "long text (1000+ chars) arrives intact" wait_for 10 file_has "$tmp/a1.txt" "$long"
act "$A" '"action":"type","text":"discard me"'
act "$A" '"action":"press_key","keys":"ctrl+u"'
act "$A" '"action":"type","text":"kept"'
act "$A" '"action":"press_key","keys":"Return"'
check "ctrl+u (a key combo) killed the line" wait_for 5 sh -c "grep -qx kept $tmp/a1.txt && ! grep -q discard $tmp/a1.txt"
act "$A" '"action":"press_key","keys":"ctrl+shift+nosuchkey"'
expect "unknown key name is 400 on keys" 400 '.error.field == "keys"'
act "$A" '"action":"type","text":"after"'
act "$A" '"action":"press_key","keys":"Return"'
check "no modifier stays stuck after a failed chord" wait_for 5 sh -c "grep -qx after $tmp/a1.txt"
check "isolation: nothing typed on A reached B" sh -c "[ ! -s $tmp/b.txt ]"
act "$B" '"action":"click","x":50,"y":50'
act "$B" '"action":"type","text":"only on B\n"'
check "B's input arrives on B" wait_for 5 file_has "$tmp/b.txt" "only on B"
check "isolation: B's input did not reach A" sh -c "! grep -q 'only on B' $tmp/a1.txt $tmp/a2.txt"

# ---- pointer, drag, scroll, image coordinates ----
act "$A" '"action":"drag","x":10,"y":10,"x2":300,"y2":200'
expect "drag" 200 '.x2 == 300 and .y2 == 200'
act "$A" '"action":"get_mouse_position"'
expect "drag ends at x2,y2" 200 '.x == 300 and .y == 200'
act "$A" '"action":"scroll","direction":"up","amount":2'
expect "scroll" 200 '.direction == "up" and .amount == 2'
act "$A" '"action":"scroll","direction":"sideways"'
expect "scroll with a bad direction is 400" 400 '.error.field == "direction"'
api GET "/api/desktop/screenshot?task_id=$A&format=json&max_width=640" >/dev/null
expect "look at half size" 200 '.scale == 2 and .image_size.width == 640 and .screen_size.width == 1280'
api POST "/api/desktop/action?coords=image" "{\"task_id\":\"$A\",\"action\":\"mouse_move\",\"x\":100,\"y\":50}" >/dev/null
expect "image coordinates map through the last look's scale (the reply in the caller's space, with the screen point)" 200 '.x == 100 and .y == 50 and .coords == "image" and .screen_x == 200 and .screen_y == 100 and .scale == 2'

# ---- humanized input (the Python DETM's humanize switch) ----
api GET /api/humanize >/dev/null
expect "humanize is off by default, with its timing" 200 '.enabled == false and .defaults.type_max_chars == 2000 and (.defaults.click_hold_ms | length) == 2'
api POST /api/humanize '{}' >/dev/null
expect "humanize without enabled is 400" 400 '.error.field == "enabled"'
api POST /api/humanize '{"enabled":"yes"}' >/dev/null
expect "humanize with a non-boolean is 400" 400 '.error.field == "enabled"'
motions() { # motions FILE: pointer positions xev saw after the marker (10,590)
	sed -n '/(10,590), root/,$p' "$1" | grep -o 'root:([0-9]*,[0-9]*)' | grep -v 'root:(10,590)' | sort -u | wc -l
}
watch_move() { # watch_move FILE X Y: xev on B's root while the pointer moves to X,Y
	xenv "$B" xev -root -event mouse >"$1" & local xp=$!
	wait_for 5 sh -c "curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
		-d '{\"task_id\":\"$B\",\"action\":\"mouse_move\",\"x\":10,\"y\":590}' $DETM_URL/api/desktop/action \
		&& grep -q '(10,590), root' $1"
	act "$B" "\"action\":\"mouse_move\",\"x\":$2,\"y\":$3"
	sleep 0.3; kill "$xp" 2>/dev/null; wait "$xp" 2>/dev/null
}
watch_move "$tmp/xev-fast" 780 300
check "instant: a move is one motion event" [ "$(motions "$tmp/xev-fast")" = 1 ]
api POST /api/humanize '{"enabled":true,"reason":"suite"}' >/dev/null
expect "humanize on" 200 '.enabled == true and .reason == "suite" and .since > 0'
api GET /api/health >/dev/null
expect "health shows humanize" 200 '.humanize == true'
watch_move "$tmp/xev-slow" 780 300
n=$(motions "$tmp/xev-slow")
check "humanized: the pointer glides through several points ($n)" [ "$n" -ge 6 ]
check "humanized: the path is curved, not a straight line" sh -c \
	"sed -n '/(10,590), root/,\$p' $tmp/xev-slow | grep -o 'root:([0-9]*,[0-9]*)' | tr -d 'root:()' |
	 awk -F, '{ d = (\$2 - 590) - (\$1 - 10) * (300 - 590) / (780 - 10); if (d < 0) d = -d; if (d > m) m = d } END { exit !(m > 10) }'"
act "$B" '"action":"get_mouse_position"'
expect "humanized: the move ends exactly at the target" 200 '.x == 780 and .y == 300'
act "$B" '"action":"click","x":50,"y":50'
act "$B" '"action":"get_mouse_position"'
expect "humanized: the click lands within 2 px" 200 '(.x - 50 | fabs) <= 2 and (.y - 50 | fabs) <= 2'
act "$B" '"action":"type","text":"slow typed\n"'
expect "humanized typing" 200
check "humanized typing arrives intact" wait_for 5 file_has "$tmp/b.txt" "slow typed"
act "$B" "\"action\":\"type\",\"text\":\"$(printf 'x%.0s' $(seq 1 2001))\""
expect "humanized typing of more than 2000 characters is 400" 400 '.error.field == "text" and (.error.message | test("humanize off"))'
api POST /api/humanize '{"enabled":false}' >/dev/null
expect "humanize off again" 200 '.enabled == false'

# ---- windows ----
# Positions are the client's (inside openbox's frame): xwininfo is the oracle.
LEFT_X=$(xenv "$A" xwininfo -name left | awk '/Absolute upper-left X/ {print $NF}')
LEFT_Y=$(xenv "$A" xwininfo -name left | awk '/Absolute upper-left Y/ {print $NF}')
act "$A" '"action":"list_windows"'
expect "list_windows" 200 ".count >= 2 and ([.windows[].title] | index(\"left\") != null and index(\"right\") != null) and ([.windows[] | select(.title == \"left\")][0] | .class == \"XTerm\" and .x == ${LEFT_X:-0} and .y == ${LEFT_Y:-0} and .pid > 0)"
check "under the window manager a window placed at +0+0 is framed inside the screen ($LEFT_X,$LEFT_Y)" \
	sh -c "[ ${LEFT_X:--1} -ge 0 ] && [ ${LEFT_Y:--1} -gt 0 ]"
act "$A" '"action":"find_window","window_name":"RIGH"'
expect "find_window is a case-insensitive substring match" 200 '.found and .window.title == "right"'
WID=$(jqr .window.id)
act "$A" "\"action\":\"move_window\",\"window_id\":\"$WID\",\"x\":300,\"y\":250"
expect "move_window" 200
pos_is() { xenv "$A" xwininfo -id "$WID" | grep -q "Absolute upper-left X: *$1" &&
	xenv "$A" xwininfo -id "$WID" | grep -q "Absolute upper-left Y: *$2"; }
check "the window moved (xwininfo)" wait_for 3 pos_is 300 250
act "$A" "\"action\":\"resize_window\",\"window_id\":\"$WID\",\"width\":500,\"height\":300"
expect "resize_window" 200
# openbox applies xterm's size hints (whole character cells): within a cell.
size_is() {
	local w h
	w=$(xenv "$A" xwininfo -id "$WID" | awk '/  Width:/ {print $NF}')
	h=$(xenv "$A" xwininfo -id "$WID" | awk '/  Height:/ {print $NF}')
	[ "${w:-0}" -gt $(($1 - 20)) ] && [ "${w:-0}" -le "$1" ] && [ "${h:-0}" -gt $(($2 - 30)) ] && [ "${h:-0}" -le "$2" ]
}
check "the window resized (xwininfo, to whole cells)" wait_for 3 size_is 500 300
act "$A" "\"action\":\"focus_window\",\"window_name\":\"left\""
expect "focus_window by name" 200
check "focus_window focused it" wait_for 3 focus_is left
act "$A" '"action":"active_window"'
expect "active_window" 200 '.window.title == "left"'
act "$A" "\"action\":\"minimize_window\",\"window_id\":\"$WID\""
expect "minimize_window" 200 '.window.visible == false'
act "$A" '"action":"focus_window","window_id":"0x7ffffff0"'
expect "unknown window id is 404" 404 '.error.field == "window_id"'
act "$A" '"action":"find_window","window_name":"no such window"'
expect "no matching window is 404" 404
act "$A" "\"action\":\"close_window\",\"window_name\":\"left\""
expect "close_window (graceful)" 200 '.how == "delete"'
check "the xterm exited" wait_for 5 gone "$XT1"

# ---- capture ----
xstart "$B" xterm -bg red -fg red -geometry 20x5+200+150 -T redwin -e sleep 600
xwait "$B" redwin
sleep 0.3
# Where it is (openbox frames it: the client sits below its title bar).
RX=$(xenv "$B" xwininfo -name redwin | awk '/Absolute upper-left X/ {print $NF}')
RY=$(xenv "$B" xwininfo -name redwin | awk '/Absolute upper-left Y/ {print $NF}')
RX=${RX:-200} RY=${RY:-150}
curl -s -D "$tmp/h" -o "$tmp/shot.jpg" "$DETM_URL/api/desktop/screenshot?task_id=$B&max_width=800"
check "screenshot is a JPEG" sh -c "head -c 3 $tmp/shot.jpg | od -An -tx1 | grep -q 'ff d8 ff'"
check "screenshot headers carry sizes and scale" sh -c "grep -qi '^X-Image-Width: 800' $tmp/h && grep -qi '^X-Screen-Width: 800' $tmp/h && grep -qi '^X-Scale: 1' $tmp/h"
red_at() { # red_at FILE X Y: the pixel is (nearly) red
	convert "$1" -format '%[fx:int(255*p{'"$2,$3"'}.r)] %[fx:int(255*p{'"$2,$3"'}.g)] %[fx:int(255*p{'"$2,$3"'}.b)]' info: |
		awk '{ exit !($1 > 200 && $2 < 60 && $3 < 60) }'
}
check "a known window's pixels are where it is" red_at "$tmp/shot.jpg" $((RX + 30)) $((RY + 20))
not_red_at() { ! red_at "$@"; }
check "and not elsewhere" not_red_at "$tmp/shot.jpg" 50 400
curl -s -o "$tmp/half.jpg" "$DETM_URL/api/desktop/screenshot?task_id=$B&max_width=400"
check "scaled capture: the window lands at screen/scale" red_at "$tmp/half.jpg" $(((RX + 30) / 2)) $(((RY + 20) / 2))
check "scaled image is 400x300" sh -c "identify $tmp/half.jpg | grep -q ' 400x300 '"
curl -s -o "$tmp/shot.png" "$DETM_URL/api/desktop/screenshot?task_id=$B&format=png&x=$((RX + 5))&y=$((RY + 5))&w=100&h=50"
check "PNG region decodes and is red" sh -c "identify $tmp/shot.png | grep -q 'PNG 100x50' && convert $tmp/shot.png -format '%[fx:int(255*mean.r)] %[fx:int(255*mean.g)]' info: | awk '{ exit !(\$1 > 240 && \$2 < 20) }'"
api GET "/api/desktop/screenshot?task_id=$B&format=json" >/dev/null
expect "JSON screenshot" 200 '.mime_type == "image/jpeg" and (.image_b64 | length) > 1000 and .screen_size.height == 600 and .bytes < 1048576'
jqr .image_b64 | base64 -d >"$tmp/j.jpg"
check "JSON image_b64 decodes to the image" sh -c "identify $tmp/j.jpg | grep -q 'JPEG 800x600'"
api GET "/api/desktop/screenshot?task_id=$B&x=5000&y=5000&w=10&h=10" >/dev/null
expect "off-screen region is 400" 400
api GET "/api/desktop/screenshot?task_id=$B&format=gif" >/dev/null
expect "unknown format is 400" 400 '.error.field == "format"'
api GET "/api/desktop/screenshot" >/dev/null
expect "no task: the shared display" 200
curl -s -D "$tmp/h2" -o /dev/null "$DETM_URL/api/desktop/screenshot"
check "no task: it was the shared display" grep -qi "^X-Display: $SHARED" "$tmp/h2"

# ---- errors ----
act "$A" '"action":"click","x":5000,"y":10'
expect "off-screen click is 400 on x" 400 '.error.field == "x" and (.error.message | test("1280x720"))'
act "$A" '"action":"fly"'
expect "unknown action is 400 naming the actions" 400 '.error.field == "action" and (.error.message | test("double_click"))'
act "$A" '"action":"click","x":1,"y":1,"colour":"red"'
expect "unknown parameter is 400" 400 '.error.field == "colour"'
act "nosuchtask" '"action":"click","x":1,"y":1'
expect "unknown task is 404" 404
api POST /api/desktop/action '{"action":"get_mouse_position"}' >/dev/null
expect "no task: the shared display" 200 ".display == \"$SHARED\""

# ---- the command router ----
api POST /api/commands "{\"task_id\":\"$A\",\"commands\":[{\"action\":\"mouse_move\",\"parameters\":{\"x\":10,\"y\":20}},{\"action\":\"bogus\"},{\"action\":\"get_mouse_position\"}]}" >/dev/null
expect "commands: one result per command, stop on error" 200 \
	'(.results | length) == 3 and .results[0].status == "success" and .results[1].status == "error" and .results[1].error.field == "action" and .results[2].status == "error" and .succeeded == 1 and .failed == 1 and .not_run == 1'
api POST /api/commands "{\"task_id\":\"$A\",\"stop_on_error\":false,\"commands\":[{\"action\":\"click\",\"parameters\":{\"x\":99999,\"y\":1}},{\"action\":\"get_mouse_position\"}]}" >/dev/null
expect "commands: stop_on_error false runs the rest" 200 \
	'.results[0].status == "error" and .results[1].status == "success" and .results[1].data.x == 10 and .results[1].data.y == 20'
api POST /api/commands "{\"task_id\":\"$A\",\"timeout_ms\":100,\"commands\":[{\"action\":\"sleep\",\"parameters\":{\"ms\":300}},{\"action\":\"click\"}]}" >/dev/null
expect "commands: a command after the timeout is reported as timeout" 200 \
	'.results[0].status == "success" and .results[1].status == "timeout"'
api POST /api/commands '{"commands":[{"parameters":{}}]}' >/dev/null
expect "commands: a malformed list is 400 before anything runs" 400 '.error.field == "commands[0]"'
api POST /api/commands '{"commands":[]}' >/dev/null
expect "commands: empty list is 400" 400

# ---- actions are logged on the task ----
api GET "/api/tasks/$A?detail=actions" >/dev/null
n_gui=$(jq '[.. | objects | select(.action_type? == "gui")] | length' <"$tmp/resp")
check "desktop actions are logged as gui actions ($n_gui)" [ "$n_gui" -ge 20 ]
check "a failed action is logged as failed" sh -c "jq -e '[.. | objects | select(.action_type? == \"gui\" and .status? == \"failed\")] | length > 0' <$tmp/resp >/dev/null"
# A click that moves the focus is refused on the HTTP worker and runs again
# on a side worker (nowait.h): the refused try is no outcome and is not
# logged; the click is, once.
check "a click retried off the HTTP worker is logged once, never as 'would wait'" sh -c "jq -e '[.. | objects | select(.action_type? == \"gui\")] | (map(select((.output_data | tostring) | test(\"would wait\"))) | length == 0) and (map(select(.input_data.action? == \"click\" and .input_data.x? == 800 and .input_data.y? == 60)) | length == 1)' <$tmp/resp >/dev/null"
# A stored error has the reply's one shape, {"error":{"code","message","field"}}
# (it was once nested as {"error":{"error":{...}}}).
check "a failed action's output holds the one error shape" sh -c "jq -e '[.. | objects | select(.action_type? == \"gui\" and .status? == \"failed\") | .output_data.error] | length > 0 and all(.[]; (.code | type) == \"string\" and (.message | type) == \"string\" and has(\"field\") and (has(\"error\") | not))' <$tmp/resp >/dev/null"

# ---- a dead Xvfb, and a new display ----
XPID_B=$(curl -s "$DETM_URL/api/displays" | jq -r ".displays[] | select(.task_id == \"$B\") | .pid")
kill -9 "$XPID_B"
act "$B" '"action":"get_mouse_position"'
expect "a dead Xvfb is 503 with a hint" 503 '.error.message | test("died")'
api POST "/api/tasks/$B/display" '{"width":640,"height":480}' >/dev/null
expect "the task gets a new display" 201 '.width == 640 and .state == "running"'
act "$B" '"action":"get_mouse_position"'
expect "and it works" 200

# ---- a stopped X server: a quick action fails in seconds, it never hangs ----
# Quick actions run on an HTTP worker (nowait.h); a silent X server must
# not hold it: the round trip gives up after 3 s and the connection is
# dropped, then the next action reconnects. (An input whose effect is
# watched is no quick action: settle_ms 0 keeps this one quick.)
XPID_A=$(curl -s "$DETM_URL/api/displays" | jq -r ".displays[] | select(.task_id == \"$A\") | .pid")
act "$A" '"action":"mouse_move","x":5,"y":5,"settle_ms":0'
expect "a move before the X server stops" 200
# That move's target descriptor is read by a background worker (replay
# targets) that holds the display briefly; an X server stopped inside that
# read makes the next move a 503 display_unresponsive (checked below, with
# a recording as the reader) instead: let it finish first.
wait_for 10 sh -c "[ -n \"\$(sqlite3 '$DETM_DATA/data.db' \"SELECT target FROM actions WHERE task_id = '$A' ORDER BY rowid DESC LIMIT 1\")\" ]"
kill -STOP "$XPID_A"
t0=$(date +%s)
curl -s -o "$tmp/stopped" -w '%{http_code}' --max-time 60 -X POST "$DETM_URL/api/desktop/action" \
	-H 'Content-Type: application/json' --data-binary "{\"task_id\":\"$A\",\"action\":\"mouse_move\",\"x\":6,\"y\":6,\"settle_ms\":0}" \
	>"$tmp/stopped.code" &
CPID=$!
wait_for 20 sh -c "! kill -0 $CPID 2>/dev/null"
kill -CONT "$XPID_A"
wait "$CPID"
t=$(($(date +%s) - t0))
check "a move on a stopped X server is a 503 after seconds ($t s), not a hang" \
	sh -c "[ \"\$(cat $tmp/stopped.code)\" = 503 ] && [ $t -le 20 ] && jq -e '.error.message | test(\"did not answer\")' $tmp/stopped >/dev/null"
act "$A" '"action":"mouse_move","x":7,"y":7'
expect "after SIGCONT the next action reconnects and works" 200 '.x == 7'
act "$A" '"action":"get_mouse_position"'
expect "and the pointer is where it went" 200 '.x == 7 and .y == 7'

# ---- a stopped X server under a background reader: bounded, then works ----
# A recording reads A's display in the background; with the X server
# stopped, its next frame (or a connection it reopens) is stuck in Xlib
# holding the display. An action waiting for it fails with 503
# display_unresponsive within --display-wait-ms (5 s) of silence (it used
# to wait until SIGCONT); other tasks and /api/health answer meanwhile; the
# MCP tool error carries the message; after SIGCONT clicks work and the
# recording goes on.
rec_frames() { curl -s "$DETM_URL/api/tasks/$A/recording" | jq -r '.frames // 0'; }
stuck_click() { # stuck_click N: a click on stopped A; code, body, seconds in $tmp/stuckN*
	local t0
	t0=$(date +%s)
	curl -s -o "$tmp/stuck$1" -w '%{http_code}' --max-time 60 -X POST "$DETM_URL/api/desktop/action" \
		-H 'Content-Type: application/json' \
		--data-binary "{\"task_id\":\"$A\",\"action\":\"click\",\"x\":5,\"y\":5,\"settle_ms\":0}" >"$tmp/stuck$1.code"
	echo $(($(date +%s) - t0)) >"$tmp/stuck$1.s"
}
api POST "/api/tasks/$A/recording/start" '{}' >/dev/null   # 409 if already recording
api GET "/api/tasks/$A/recording" >/dev/null
expect "a recording reads A's display in the background" 200 '.state == "recording"'
wait_for 20 sh -c "[ \"\$(curl -s $DETM_URL/api/tasks/$A/recording | jq -r '.frames // 0')\" -ge 2 ]"
kill -STOP "$XPID_A"
stuck_click 1 &
SC1=$!
api GET /api/health >/dev/null
expect "/api/health answers while A's X server is stopped" 200
act "$B" '"action":"get_mouse_position"'
expect "another task's action answers meanwhile" 200
wait_for 40 sh -c "! kill -0 $SC1 2>/dev/null"
stuck_click 2 &
SC2=$!
wait_for 40 sh -c "! kill -0 $SC2 2>/dev/null"
mcp_calls "$tmp/mcp_stuck.out" 40 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"desktop","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"desktop_action","arguments":{"task_id":"'"$A"'","action":"click","x":5,"y":5}}}'
frames_stopped=$(rec_frames)
kill -CONT "$XPID_A"
wait "$SC1" "$SC2"
for n in 1 2; do
	check "click $n on a stopped X server under a reader: 503 in $(cat "$tmp/stuck$n.s") s, not a hang [$(cat "$tmp/stuck$n.code") $(jq -c .error.code "$tmp/stuck$n" 2>/dev/null)]" \
		sh -c "[ \"\$(cat $tmp/stuck$n.code)\" = 503 ] && [ \$(cat $tmp/stuck$n.s) -le 20 ]"
done
check "the second one is display_unresponsive, naming the display and the wait" \
	sh -c "jq -e --arg d '$DA' '.error.code == \"display_unresponsive\" and (.error.message | contains(\$d) and test(\"not answered for [0-9]+ ms\") and test(\"SIGCONT\"))' $tmp/stuck2 >/dev/null"
check "the MCP tool error carries the message [$(jq -r 'select(.id == 2) | .result.content[0].text' "$tmp/mcp_stuck.out" | cut -c1-90)]" sh -c \
	"jq -e 'select(.id == 2) | .result.isError == true and (.result.content[0].text | test(\"not answered for [0-9]+ ms\"))' $tmp/mcp_stuck.out >/dev/null"
act "$A" '"action":"click","x":9,"y":9'
expect "after SIGCONT the next click works" 200
act "$A" '"action":"get_mouse_position"'
expect "and the pointer is where it clicked" 200 '.x == 9 and .y == 9'
check "the recording went on (frames after SIGCONT)" wait_for 20 sh -c "[ \"\$(curl -s $DETM_URL/api/tasks/$A/recording | jq -r '.frames // 0')\" -gt $frames_stopped ]"
api GET "/api/tasks/$A/recording" >/dev/null
expect "and it is still recording" 200 '.state == "recording"'

# ---- release: completion, delete, shutdown, kill -9 ----
api PATCH "/api/tasks/$A" '{"status":"completed"}' >/dev/null
check "completing a task stops its Xvfb" wait_for 5 gone "$XPID_A"
check "and removes its socket" wait_for 5 test ! -e "/tmp/.X11-unix/X${DA#:}"
act "$A" '"action":"click","x":1,"y":1'
expect "a completed task's released display is 409 with a hint" 409 '.error.message | test("released")'
XPID_B=$(curl -s "$DETM_URL/api/displays" | jq -r ".displays[] | select(.task_id == \"$B\") | .pid")
api DELETE "/api/tasks/$B" >/dev/null
check "deleting a task stops its Xvfb" wait_for 5 gone "$XPID_B"
api POST /api/tasks '{"name":"C","display":true}' >/dev/null
api POST /api/tasks '{"name":"D","display":true}' >/dev/null
check "two more displays running" [ "$(xvfb_count)" -eq 2 ]
daemon_stop
check "daemon shutdown stops every task display" wait_for 5 [ "$(xvfb_count)" -eq 0 ]
daemon_start --display "$SHARED"
api POST /api/tasks '{"name":"E","display":true}' >/dev/null
E=$(jqr .task_id)
XPID_E=$(curl -s "$DETM_URL/api/displays" | jq -r '.displays[0].pid')
daemon_kill9
check "after kill -9 the display outlives detmd" kill -0 "$XPID_E"
daemon_start --display "$SHARED"
check "a restart removes what the crashed detmd left" wait_for 5 gone "$XPID_E"
check "and its files" sh -c "[ -z \"\$(ls $DETM_DATA/displays)\" ]"
act "$E" '"action":"click","x":1,"y":1'
expect "the crashed display is reported, with a way out" 409 '.error.message | test("POST /api/tasks")'
api POST "/api/tasks/$E/display" '{}' >/dev/null
expect "and the task can get a new one" 201
daemon_stop
check "clean stop again leaves no Xvfb" wait_for 5 [ "$(xvfb_count)" -eq 0 ]

# ---- ACU_WINDOW_MANAGER: detmd starts it on each task display ----
daemon_start --display "$SHARED" --window-manager "openbox --sm-disable"
api POST /api/tasks '{"name":"W","display":true}' >/dev/null
W=$(jqr .task_id)
WM=$(curl -s "$DETM_URL/api/displays" | jq -r ".displays[] | select(.task_id == \"$W\") | .wm_pid")
check "a task display gets the window manager (wm_pid $WM)" kill -0 "${WM:-0}"
wm_up() { xenv "$W" xprop -root _NET_SUPPORTING_WM_CHECK | grep -q 'window id'; }
check "the window manager manages the display (EWMH check window)" wait_for 10 wm_up
xstart "$W" xterm -geometry 40x5+50+50 -T managed -e sleep 60
wm_frame() { xenv "$W" xprop -name managed _NET_FRAME_EXTENTS 2>/dev/null | grep -q '='; }
check "and frames a new window (_NET_FRAME_EXTENTS)" wait_for 10 wm_frame
wfocus_is() { [ "$(xenv "$W" xdotool getwindowfocus getwindowname 2>/dev/null)" = "$1" ]; }
act "$W" '"action":"click","x":100,"y":100'
expect "a click under a window manager" 200
check "the window manager gave the clicked window the focus" wait_for 5 wfocus_is managed
act "$W" '"action":"click","x":110,"y":100'
expect "and a second click into the focused window" 200
check "which keeps the focus" wfocus_is managed
api PATCH "/api/tasks/$W" '{"status":"completed"}' >/dev/null
check "finishing the task stops its window manager" wait_for 5 gone "${WM:-0}"
daemon_stop

# ---- --shared-xvfb (make run): a shared display when none answers ----
N=150
while [ -e "/tmp/.X11-unix/X$N" ] || [ -e "/tmp/.X$N-lock" ]; do N=$((N + 1)); done
daemon_start --display ":$N" --shared-xvfb 640x480
api GET /api/desktop/screenshot?format=json >/dev/null
expect "--shared-xvfb starts a shared display of that size when none answers" 200 \
	'.screen_size.width == 640 and .screen_size.height == 480'
check "like the Python DETM's :99 it needs no cookie" sh -c "DISPLAY=:$N XAUTHORITY=/dev/null xdpyinfo >/dev/null"
check "and its screen never blanks" [ "$(XAUTHORITY=/dev/null saver_timeout ":$N")" = 0 ]
daemon_stop
check "stopping detmd stops the shared display it started" wait_for 5 sh -c "! DISPLAY=:$N xdpyinfo >/dev/null 2>&1"
daemon_start --display "$SHARED" --shared-xvfb 640x480
api GET /api/desktop/screenshot?format=json >/dev/null
expect "a shared display that answers is used as it is" 200 '.screen_size.width == 1024'
daemon_stop
check "and is left running" sh -c "DISPLAY=$SHARED xdpyinfo >/dev/null 2>&1"

finish
