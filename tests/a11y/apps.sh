#!/usr/bin/env bash
# a11y/apps.sh - the tree walk serves big and new toolkits (issue 34, item 4),
# on real programs started with the task display's env:
#   form:     a GTK 3 window (form_app.py): an entry's content as "text", a
#             password's never, a spin button's "value"; window= matches
#             the X title as well as the accessible name; a tree view of
#             5000 rows (it manages its descendants) lists the rows on
#             screen only, with its column header, and says complete
#   hints:    no element: the walk was cut short (45 nested boxes pass the
#             depth budget), the window filter matched nothing, the filter
#             matched none of the visible elements, nothing accessible
#             runs (another display) -- three distinct hints, over HTTP
#             and in desktop_elements' text over MCP
#   gtk4:     gnome-calculator (GTK 4.8, whose children are visible but not
#             showing and whose areas are window-relative): its digit
#             buttons are listed as "1".."9" (not "1 1"), and a click at the
#             listed centre of "7" types 7 into its display; all under
#             openbox (client-side decorations: no frame)
#   framed:   a plain GTK 4 window (gtk4_app.py, no header bar) that openbox
#             frames with a title bar: its buttons are listed inside the
#             client window (xwininfo) and a click at a listed centre clicks
#             that button
#   calc:     LibreOffice Calc (SAL_USE_VCLPLUGIN=gtk3): its sheet claims
#             2^31-1 cells; the walk still reaches the sheet tab, toolbar
#             buttons and the Name Box (a text holding "A1"), lists only
#             the cells on screen and reports truncated honestly (the time
#             it took is printed, not asserted: bench/a11y.sh)
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
suite_init a11y-apps --term --rm-data

for t in xdotool jq; do
	command -v $t >/dev/null || { bad "needs $t" "run scripts/install-deps.sh test"; finish; exit 1; }
done

run_on() { # run_on TASK cmd...: a program with the task display's env, in a session of its own
	local t=$1; shift
	curl -fsS "$DETM_URL/api/tasks/$t/display" >"$tmp/disp.$t"
	(
		while IFS='=' read -r k v; do export "$k=$v"; done < <(jq -r '.env | to_entries[] | "\(.key)=\(.value)"' "$tmp/disp.$t")
		exec setsid "$@" >/dev/null 2>>"$tmp/clients.log"
	) &
	pids+=($!)
}
elements() { api GET "/api/desktop/elements?task_id=$1${2:+&$2}"; }
# timed TASK QUERY: elements, and the seconds it took in $SECS
timed() {
	local out
	out=$(curl -sS -o "$tmp/resp" -w '%{http_code} %{time_total}' "$DETM_URL/api/desktop/elements?task_id=$1${2:+&$2}")
	CODE=${out% *} SECS=${out#* }
}
# settle TASK: a smart wait "settled" (nothing drew for 500 ms), 30 s at most
settle() {
	local w
	w=$(curl -sS -X POST "$DETM_URL/api/waits" -H 'Content-Type: application/json' \
		-d '{"task_id":"'"$1"'","wake_when":"settled","timeout":30}' | jq -r .wait_id)
	curl -sS -o /dev/null "$DETM_URL/api/waits/$w?block_s=35"
}
# client_geo TASK TITLE: X= Y= WIDTH= HEIGHT= of the client window titled
# exactly TITLE, from xwininfo's absolute position (xdotool getwindowgeometry
# counts a reparenting window manager's frame offset twice: 20 px low under
# openbox's title bar).
client_geo() {
	local w g
	w=$(xenv "$1" xdotool search --name "^$2\$" | head -1)
	g=$(xenv "$1" timeout 10 xwininfo -id "${w:-0}")
	X=$(awk '/Absolute upper-left X/ {print $NF}' <<<"$g") Y=$(awk '/Absolute upper-left Y/ {print $NF}' <<<"$g")
	WIDTH=$(awk '/  Width:/ {print $NF}' <<<"$g") HEIGHT=$(awk '/  Height:/ {print $NF}' <<<"$g")
}
mcp_elements() { # mcp_elements ARGS_JSON: desktop_elements over detm-mcp; its text's first line in $LINE
	mcp_calls "$tmp/mcp.out" 60 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a11y","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"desktop_elements","arguments":'"$1"'}}'
	LINE=$(jq -r 'select(.id == 2) | .result.content[0].text' "$tmp/mcp.out" | head -1)
}
have_gi=false
/usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "3.0")' 2>/dev/null && have_gi=true

# Under openbox, the default window manager: GTK 4 areas are placed by the
# client window's root position (a11y/xtop.c), inside openbox's frame.
daemon_start || { bad "daemon start"; finish; exit 1; }
api POST /api/tasks '{"name":"a11y apps","display":true}'
T=$(jqr .task_id)
api POST /api/tasks '{"name":"a11y empty","display":true}'
E=$(jqr .task_id)

# ---- form: text, value, X titles, a long tree view ----
if $have_gi; then
	run_on "$T" /usr/bin/python3 tests/a11y/form_app.py
	form_up() { elements "$T" "window=Form%20Window%20X&role=text" && [ "$(jqr .count)" = 1 ] 2>/dev/null; }
	if wait_for 60 form_up; then ok "window= matches the X title (\"Form Window X\"; accessible name \"Form Accessible\")"; else
		bad "window= matches the X title" "$(head -c 400 "$tmp/resp"); $(tail -3 "$tmp/clients.log")"; fi
	expect "the windows table names both: accessible name and X title, with the X window id" 200 \
		'.windows[0].name == "Form Accessible" and .windows[0].x_title == "Form Window X" and (.windows[0].xid > 0)'
	xid=$(jqr .windows[0].xid)
	check "its xid is the X window xdotool finds by that title" \
		eval '[ "$(xenv "$T" xdotool search --name "^Form Window X\$" | head -1)" = "$xid" ]'
	elements "$T" "window=form%20accessible"
	cp "$tmp/resp" "$tmp/form"
	expect "window= matches the accessible name too (any case)" 200 '.count > 5 and .truncated == false'
	expect "an entry's content is its text" 200 \
		'any(.elements[]; .role == "text" and .name == "Greeting" and .text == "hello detm")'
	expect "a password field's content is never listed" 200 \
		'any(.elements[]; .role == "password text" and .name == "Password" and has("text") == false) and
		 ([.. | strings | select(contains("secret-pw"))] | length) == 0'
	expect "a spin button's value" 200 'any(.elements[]; .role == "spin button" and .name == "Count" and .value == 42)'
	expect "the tree view (5000 rows, manages its descendants) lists its header and only the rows on screen" 200 \
		'any(.elements[]; .role == "table" and (.states | index("manages-descendants") != null)) and
		 any(.elements[]; .role == "table column header" and .name == "Item") and
		 any(.elements[]; .role == "table cell" and .name == "row 0") and
		 ([.elements[] | select(.role == "table cell")] | length) < 40 and
		 all(.elements[]; .name != "row 4999") and .truncated == false'

	# ---- hints: why there is no element ----
	deep_up() { elements "$T" "window=Deep&role=frame" && [ "$(jqr .count)" = 1 ] 2>/dev/null; }
	wait_for 30 deep_up
	elements "$T" "window=Deep&name=Deep%20Button"
	expect "no element because the walk was cut short (45 nested boxes): truncated, and the hint says so" 200 \
		'.count == 0 and .truncated == true and .truncated_by == "depth" and (.hint | contains("cut short"))'
	elements "$T" "window=NoSuchWindow"
	expect "no element because the window filter matched nothing: its own hint" 200 \
		'.count == 0 and .truncated == false and (.hint | contains("window filter matched none"))'
	elements "$T" "window=Form%20Window&name=zzz-none"
	expect "no element because the filter matched none of the visible ones: its own hint" 200 \
		'.count == 0 and .truncated == false and (.hint | test("no element matching the filter among the [0-9]+ visible"))'
	elements "$E" ""
	expect "no element because nothing accessible runs (an empty display): its own hint" 200 \
		'.count == 0 and .truncated == false and (.hint | contains("nothing accessible runs"))'
	mcp_elements '{"task_id":"'"$T"'","window":"Deep","name":"Deep Button"}'
	check "desktop_elements' text says the walk was cut short [$LINE]" eval '[[ "$LINE" == "0 elements"*"(truncated; the walk of the tree was cut short"* ]]'
	mcp_elements '{"task_id":"'"$T"'","window":"Form Window","name":"zzz-none"}'
	check "desktop_elements' text says the filter matched nothing [$LINE]" eval '[[ "$LINE" == "0 elements"*"complete; no element matching the filter among"* ]]'
	mcp_elements '{"task_id":"'"$E"'"}'
	check "desktop_elements' text says nothing accessible runs [$LINE]" eval '[[ "$LINE" == "0 elements"*"nothing accessible runs"* ]]'
else
	bad "/usr/bin/python3 with python3-gi and gir1.2-gtk-3.0" "run scripts/install-deps.sh test"
fi

# ---- gtk4: gnome-calculator ----
if command -v gnome-calculator >/dev/null; then
	run_on "$T" gnome-calculator
	calc_up() { elements "$T" "window=Calculator&role=push%20button" && [ "$(jqr '[.elements[] | select(.name == "7")] | length')" = 1 ] 2>/dev/null; }
	if wait_for 60 calc_up; then ok "gnome-calculator (GTK 4): the 7 button is listed"; else
		bad "gnome-calculator (GTK 4): the 7 button is listed" "$(head -c 600 "$tmp/resp"); $(tail -3 "$tmp/clients.log")"; fi
	expect "GTK 4 digit buttons are named \"0\"..\"9\", said once (not \"1 1\")" 200 \
		'([.elements[] | .name | select(test("^[0-9]$"))] | unique | length) == 10 and
		 all(.elements[]; (.name | test("^([0-9]) \\1$")) | not) and
		 (.windows[0].toolkit | startswith("GTK 4"))'
	# GTK 4 sizes its window again after openbox maps it: the positions and
	# the X geometry are compared once the screen is still (settled)
	settle "$T"
	elements "$T" "window=Calculator&role=push%20button"
	cx=$(jqr '.elements[] | select(.name == "7") | .bounds | .x + (.width / 2 | floor)')
	cy=$(jqr '.elements[] | select(.name == "7") | .bounds | .y + (.height / 2 | floor)')
	client_geo "$T" Calculator
	outside=$(jq -c --argjson x "${X:-0}" --argjson y "${Y:-0}" --argjson w "${WIDTH:-0}" --argjson h "${HEIGHT:-0}" \
		'[.elements[] | select(.role == "push button") | select(.bounds | .x < $x or .y < $y or .x + .width > $x + $w or
		  .y + .height > $y + $h) | {name, bounds}] | .[:4]' "$tmp/resp")
	if [ "$(jq '[.elements[] | select(.role == "push button")] | length > 10' "$tmp/resp")" = true ] && [ "$outside" = "[]" ]; then
		ok "the buttons are placed on the screen, inside the X window ($X,$Y ${WIDTH}x$HEIGHT)"
	else
		bad "the buttons are placed on the screen, inside the X window (${X:-?},${Y:-?} ${WIDTH:-?}x${HEIGHT:-?})" \
			"outside: $outside; the window: $(jq -c '.windows' "$tmp/resp")"
	fi
	api POST /api/desktop/action '{"task_id":"'"$T"'","action":"click","x":'"${cx:-0}"',"y":'"${cy:-0}"',"settle_ms":2000}'
	expect "the click's effect verdict is not suspected_noop" 200 '.effect != "suspected_noop"'
	typed() { elements "$T" "window=Calculator&role=text" && [ "$(jqr '[.elements[] | select(.text == "7")] | length')" -ge 1 ] 2>/dev/null; }
	if wait_for 20 typed; then ok "a click at the listed centre of \"7\" ($cx,$cy) types 7: its display's text is \"7\""; else
		bad "a click at the listed centre of \"7\" types 7" "$(jq -c '[.elements[] | {name, text}]' "$tmp/resp")"; fi
	kill "${pids[-1]}" 2>/dev/null        # gnome-calculator itself (run_on's setsid execs it)
else
	bad "gnome-calculator is installed" "run scripts/install-deps.sh test"
fi

# ---- gtk4 under openbox's frame: a plain GTK 4 window (no header bar) ----
if /usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "4.0")' 2>/dev/null; then
	run_on "$T" /usr/bin/python3 tests/a11y/gtk4_app.py
	g4_up() { elements "$T" "window=Plain%20GTK4&role=push%20button" && [ "$(jqr '[.elements[] | select(.name == "Beta")] | length')" = 1 ] 2>/dev/null; }
	if wait_for 60 g4_up; then ok "a plain GTK 4 window: its Beta button is listed"; else
		bad "a plain GTK 4 window: its Beta button is listed" "$(head -c 600 "$tmp/resp"); $(tail -3 "$tmp/clients.log")"; fi
	settle "$T"
	elements "$T" "window=Plain%20GTK4&role=push%20button"
	gw=$(xenv "$T" xdotool search --name '^Plain GTK4$' | head -1)
	check "openbox framed it: a title bar above the client window (_NET_FRAME_EXTENTS top > 0)" \
		eval '[ "$(xenv "$T" xprop -id "${gw:-0}" _NET_FRAME_EXTENTS | sed -n "s/.*= [0-9]*, [0-9]*, \([0-9]*\),.*/\1/p")" -gt 0 ]'
	client_geo "$T" "Plain GTK4"
	bx=$(jqr '.elements[] | select(.name == "Beta") | .bounds | .x + (.width / 2 | floor)')
	by=$(jqr '.elements[] | select(.name == "Beta") | .bounds | .y + (.height / 2 | floor)')
	check "its buttons are placed inside the client window, below openbox's title bar (${X:-?},${Y:-?} ${WIDTH:-?}x${HEIGHT:-?})" \
		eval '[ "$(jq --argjson x "${X:-0}" --argjson y "${Y:-0}" --argjson w "${WIDTH:-0}" --argjson h "${HEIGHT:-0}" \
			"[.elements[] | select(.role == \"push button\") | .bounds] | length == 3 and
			 all(.[]; .x >= \$x and .y >= \$y and .x + .width <= \$x + \$w and .y + .height <= \$y + \$h)" "$tmp/resp")" = true ]'
	api POST /api/desktop/action '{"task_id":"'"$T"'","action":"click","x":'"${bx:-0}"',"y":'"${by:-0}"',"settle_ms":2000}'
	clicked() { elements "$T" "window=Plain%20GTK4&role=label" && [ "$(jqr '[.elements[] | select(.name == "clicked Beta")] | length')" = 1 ] 2>/dev/null; }
	if wait_for 20 clicked; then ok "a click at the listed centre of \"Beta\" ($bx,$by) clicks Beta"; else
		bad "a click at the listed centre of \"Beta\" clicks Beta" "$(jq -c '[.elements[] | {name, bounds}]' "$tmp/resp")"; fi
else
	bad "/usr/bin/python3 with python3-gi and gir1.2-gtk-4.0" "run scripts/install-deps.sh test"
fi

# ---- calc: LibreOffice's 2^31-1 cells ----
if command -v localc >/dev/null; then
	run_on "$T" env SAL_USE_VCLPLUGIN=gtk3 localc --norestore --nologo --nolockcheck \
		-env:UserInstallation="file://$tmp/lo-profile"
	lo_up() { elements "$T" "window=LibreOffice%20Calc&role=page%20tab" && [ "$(jqr .count)" -ge 1 ] 2>/dev/null; }
	if wait_for 180 lo_up; then ok "LibreOffice Calc: its sheet tab is listed"; else
		bad "LibreOffice Calc: its sheet tab is listed" "$(head -c 600 "$tmp/resp"); $(tail -3 "$tmp/clients.log")"; fi
	timed "$T" "window=LibreOffice%20Calc"
	cp "$tmp/resp" "$tmp/calc"
	expect "Calc, default max: the sheet tab, toolbar buttons and the Name Box (a text holding A1) in the first 200" 200 \
		'any(.elements[]; .role == "page tab" and .name == "Sheet1") and
		 any(.elements[]; .role == "toggle button" and .name == "Bold") and
		 any(.elements[]; .role == "push button" and .name == "Save") and
		 any(.elements[]; .role == "text" and .text == "A1")'
	expect "Calc, default max: truncated honestly (more than 200 elements show: truncated_by max)" 200 \
		'.count == 200 and .truncated == true and .truncated_by == "max"'
	echo "info Calc, default max: answered in ${SECS} s (bench/a11y.sh measures it; no timing in make test)"
	timed "$T" "window=LibreOffice%20Calc&max=1000"
	expect "Calc, max=1000: complete (truncated false); the sheet lists only its cells on screen, A1 first" 200 \
		'.truncated == false and ([.elements[] | select(.role == "table cell")] | length) as $n | $n > 20 and $n < 1000 and
		 ([.elements[] | select(.role == "table cell")][0].name == "A1") and
		 any(.elements[]; .role == "table" and .name == "Sheet Sheet1")'
	echo "info Calc, max=1000: answered in ${SECS} s (bench/a11y.sh measures it; no timing in make test)"
	timed "$T" "window=LibreOffice%20Calc&role=push%20button"
	expect "Calc, role=push button: every toolbar button, complete" 200 \
		'.truncated == false and .count > 30 and any(.elements[]; .name == "Save") and all(.elements[]; .role == "push button")'
	echo "info Calc, role=push button: answered in ${SECS} s (bench/a11y.sh measures it; no timing in make test)"
	elements "$T" "window=LibreOffice%20Calc&name=B3"
	expect "Calc, name=B3: the cell on screen is found (its bounds inside the sheet)" 200 \
		'.truncated == false and any(.elements[]; .role == "table cell" and .name == "B3" and .bounds.width > 0)'
else
	bad "LibreOffice Calc is installed (libreoffice-calc, libreoffice-gtk3)" "run scripts/install-deps.sh test"
fi
finish
