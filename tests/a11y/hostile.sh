#!/usr/bin/env bash
# a11y/hostile.sh - a hostile accessible application costs detm-a11y a
# bounded amount (issue 33, item 4): hostile_app.py shows a 1 MB title, a
# 1 MB program name and 900 visible labels with 10 KB names and
# descriptions. desktop_elements (HTTP and MCP) and an element wait on that
# display must get valid, capped replies while the helper's peak RSS
# (VmHWM in /proc/PID/status, read from outside) stays under HWM_MB.
# Before the fix every element carried the 1 MB title: ~1 GB and a 503.
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
suite_init a11y-hostile --term --rm-data

HWM_MB=150
# Under AddressSanitizer (make asan-test) freed memory waits in a 256 MB
# quarantine, which the bound is not about: keep it small for this detmd
# and its helper (ignored by plain builds).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
for t in xdotool jq iconv; do
	command -v $t >/dev/null || { bad "needs $t" "run scripts/install-deps.sh test"; finish; exit 1; }
done
/usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "3.0")' 2>/dev/null ||
	{ bad "needs /usr/bin/python3 with python3-gi and gir1.2-gtk-3.0" "run scripts/install-deps.sh test"; finish; exit 1; }
/usr/bin/python3 -c 'import dbus' 2>/dev/null ||
	{ bad "needs /usr/bin/python3 with python3-dbus" "run scripts/install-deps.sh test"; finish; exit 1; }

run_on() { # run_on TASK cmd...: a program with the task display's env, in a session of its own
	local t=$1; shift
	curl -fsS "$DETM_URL/api/tasks/$t/display" >"$tmp/disp.$t"
	(
		while IFS='=' read -r k v; do export "$k=$v"; done < <(jq -r '.env | to_entries[] | "\(.key)=\(.value)"' "$tmp/disp.$t")
		exec setsid "$@" >"$tmp/app.out" 2>>"$tmp/clients.log"
	) &
	pids+=($!)
}
elements() { api GET "/api/desktop/elements?task_id=$1${2:+&$2}"; }
helper_pid() { curl -fsS "$DETM_URL/api/tasks/$1/display" | jq -r .a11y.helper_pid; }
hwm_mb() { awk '/^VmHWM:/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null || echo 0; }
rss_mb() { awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null || echo 0; }
utf8_ok() { iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1; }

daemon_start || { bad "daemon start"; finish; exit 1; }
api POST /api/tasks '{"name":"hostile a11y","display":true}'
T=$(jqr .task_id)
run_on "$T" /usr/bin/python3 tests/a11y/hostile_app.py
listed() { elements "$T" "role=frame" && [ "$CODE" = 200 ] && [ "$(jqr '.count')" -ge 1 ] 2>/dev/null; }
if wait_for 90 listed; then ok "the hostile window is listed"; else
	bad "the hostile window is listed" "$CODE $(head -c 300 "$tmp/resp"); $(tail -3 "$tmp/clients.log")"; finish; exit 1; fi
HP=$(helper_pid "$T")

elements "$T" ""
cp "$tmp/resp" "$tmp/default"
expect "default max: 200 elements, truncated by max, valid JSON" 200 \
	'.count == 200 and (.elements | length) == 200 and .truncated == true and .truncated_by == "max"'
check "the reply is valid UTF-8 ($(stat -c %s "$tmp/default") bytes)" utf8_ok "$tmp/default"
expect "the window and its application are named once, capped at 4096 bytes with an ellipsis" 200 \
	'(.windows | length) == 1 and (.windows[0].name | startswith("Hostile TTT") and utf8bytelength <= 4096 and endswith("…")) and
	 (.windows[0].application | startswith("hostile-ppp") and utf8bytelength <= 4096 and endswith("…")) and
	 all(.applications[]; utf8bytelength <= 256)'
expect "each element points at its window and carries a short copy of its name (<= 256 bytes)" 200 \
	'all(.elements[]; .window_index == 0 and (.window | startswith("Hostile TTT") and utf8bytelength <= 256 and endswith("…")) and
	   (.application | utf8bytelength <= 256))'
expect "names and descriptions are capped at 4096 bytes, cut with an ellipsis" 200 \
	'[.elements[] | select(.role == "label")] | length > 100 and
	 all(.[]; (.name | startswith("L") and utf8bytelength <= 4096 and endswith("…")) and
	   (.description | utf8bytelength <= 4096 and endswith("…")))'

elements "$T" "max=1000"
cp "$tmp/resp" "$tmp/big"
size=$(stat -c %s "$tmp/big")
expect "max=1000: the helper stops at its byte cap and says so (truncated_by bytes)" 200 \
	'.truncated == true and .truncated_by == "bytes" and .count == (.elements | length) and .count > 300 and .count < 900'
check "max=1000: the reply stays under 9 MB ($size bytes) and is valid UTF-8" eval '[ "$size" -lt 9437184 ] && utf8_ok "$tmp/big"'
elements "$T" "role=label&name=L899%20"
expect "a filter still reaches the last label past the byte cap of a full listing" 200 \
	'.count == 1 and .truncated == false and (.elements[0].name | startswith("L899 "))'

hwm=$(hwm_mb "$HP")
check "detm-a11y's peak RSS stays under $HWM_MB MB after three listings (VmHWM ${hwm} MB)" \
	[ "$hwm" -gt 0 -a "$hwm" -lt "$HWM_MB" ]

# an element wait re-reads the tree about every second
api POST /api/waits '{"task_id":"'"$T"'","target":"screen","wake_when":"element:button \"Nowhere\"","timeout":60}'
expect "an element wait on the hostile display watches" 201 '.status == "watching"'
W=$(jqr .wait_id)
rounds() { api GET "/api/waits/$W" && [ "$(jqr .evaluations)" -ge 4 ] 2>/dev/null; }
wait_for 60 rounds
expect "the element wait still watches after 4 rounds (no error from the helper)" 200 \
	'.status == "watching" and .evaluations >= 4'
hwm=$(hwm_mb "$HP")
check "the same helper ($HP) answered every round: never killed for a reply over the cap" \
	[ "$(helper_pid "$T")" = "$HP" ]
check "detm-a11y's peak RSS stays under $HWM_MB MB through the element wait (VmHWM ${hwm} MB, VmRSS $(rss_mb "$HP") MB)" \
	[ "$hwm" -gt 0 -a "$hwm" -lt "$HWM_MB" ]
api DELETE "/api/waits/$W"

mcp_calls "$tmp/mcp.out" 60 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a11y","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"desktop_elements","arguments":{"task_id":"'"$T"'","max":50}}}'
jq -c 'select(.id == 2)' "$tmp/mcp.out" >"$tmp/mcp"
line=$(jq -r '.result.content[0].text' "$tmp/mcp" | head -1)
check "desktop_elements over MCP: 50 elements, truncated [$line]" \
	eval '[[ "$line" == "50 elements on display "*"truncated"* ]]'
check "desktop_elements over MCP: its text is short (each name clipped) and valid UTF-8" \
	eval '[ "$(jq -r ".result.content[0].text" "$tmp/mcp" | wc -c)" -lt 65536 ] && utf8_ok "$tmp/mcp"'
hwm=$(hwm_mb "$HP")
check "detm-a11y's peak RSS at the end: ${hwm} MB < $HWM_MB MB" [ "$hwm" -gt 0 -a "$hwm" -lt "$HWM_MB" ]
# Applications that die while their tree is read. Two CI-like runs under
# ASan saw detm-a11y SEGV inside libatspi 2.46 when mousepad quit during a
# walk: atspi_accessible_get_toolkit_name reads the application again after
# its D-Bus call, and a bus-name-gone signal dispatched during that call
# has cleared it. 40 windows of 300 labels each die abruptly (os._exit) at
# random moments while two clients list the display's elements. (A stress
# check: on the old helper it did not hit that narrow window in 3 runs; the
# fix, no longer calling those accessors, comes from reading libatspi.)
api POST /api/tasks '{"name":"churn a11y","display":true}'
T2=$(jqr .task_id)
elements "$T2" "max=5"
HP2=$(helper_pid "$T2")
: >"$tmp/churn.codes"
lister() { # lister SECONDS: list elements on T2 until then, one status per line
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		curl -s -o "$tmp/churn.$BASHPID" -w '%{http_code}\n' --max-time 60 "$DETM_URL/api/desktop/elements?task_id=$T2&max=400" >>"$tmp/churn.codes"
		jq -r '[.elements[]? | select(.role == "label")] | length' "$tmp/churn.$BASHPID" >>"$tmp/churn.labels" 2>/dev/null
	done
}
lister 30 & l1=$!
lister 30 & l2=$!
for i in $(seq 1 40); do
	run_on "$T2" /usr/bin/python3 tests/a11y/churn_app.py $((150 + RANDOM % 900))
	sleep 0.$((RANDOM % 4 + 4))
done
wait $l1 $l2
n_list=$(wc -l <"$tmp/churn.codes")
n_200=$(grep -c '^200$' "$tmp/churn.codes")
n_seen=$(grep -c '^[1-9]' "$tmp/churn.labels")
check "the listings saw the dying windows' labels ($n_seen of $n_list)" [ "$n_seen" -ge 5 ]
check "40 windows died while their trees were read: every one of $n_list listings was 200 ($n_200)" \
	[ "$n_list" -ge 10 -a "$n_200" = "$n_list" ]
check "the same helper ($HP2) answered them all: it never crashed" [ "$(helper_pid "$T2")" = "$HP2" ]
# An application that leaves at a known moment: vanish_app.py embeds itself
# in the registry and exits without a reply when the reader asks its name.
# (libatspi defers the bus's "name gone" signal to its main loop, so this
# does not reach the crash above either: that needs the helper to see the
# application gone between two walks before the registry drops it.)
HP2=$(helper_pid "$T2")
run_on "$T2" /usr/bin/python3 tests/a11y/vanish_app.py
embedded() { grep -q '^ready' "$tmp/app.out"; }
if wait_for 20 embedded; then ok "an application that leaves when asked its name is embedded"; else
	bad "an application that leaves when asked its name is embedded" "$(tail -3 "$tmp/clients.log")"; fi
elements "$T2" "max=50"
expect "listing the display while it leaves is 200" 200 '.count >= 0'
check "it left mid-read ($(grep -h leaving "$tmp/clients.log"))" grep -q 'vanish_app: .*leaving' "$tmp/clients.log"
elements "$T2" "max=50"
expect "the next listing is 200 as well" 200 '.count >= 0'
check "the helper ($HP2) survived it" [ "$(helper_pid "$T2")" = "$HP2" ]
finish
