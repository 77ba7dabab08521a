#!/usr/bin/env bash
# replay/real.sh - replay on real Debian applications (issue 38 item 3):
# a scripted agent (HTTP only) records a task in mousepad (GTK 3: a line
# typed, ctrl+s, a path typed into GTK's file chooser, its Save button
# clicked) and replays it with the path as a param; the oracle is the file
# on disk. Prints per step how the replay grounded it, then
# "N passed, N failed". REAL_DEBUG=1 prints each input's evidence, the
# click's target descriptor and a screenshot (/tmp/replay2-*.jpg).
#
# Fails on main as of 2324587: the replay clicked Save at once after
# typing the path, before GTK drew the keys (Save still insensitive), or
# ended the task (stopping mousepad) before the file was written, and said
# "done", every step ok. Replay now waits after each input for settled:800.
# Fails on 0b52ed3: the keys typed after Save As waited for the editor's
# recorded title, which holds the recorded path, not the param's
# (needs_agent: the window ".../rec.txt - Mousepad" did not get the focus).
# Under two busy loops (0b52ed3: 4 of 5 runs) the Save click's recorded
# element was read after the click, from the dialog closing (filler ""):
# the replay clicked by window position, or refused (needs_agent); the
# element is now the tree read before the click (after the typed path).
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
suite_init replay-real --rm-data --term
for t in mousepad xdotool jq; do
	command -v $t >/dev/null || { bad "needs $t" "run scripts/install-deps.sh test"; finish; exit 1; }
done
out="$tmp/out"
mkdir -p "$out"
cfg=/dev/null
. tests/replay/lib.sh
daemon_start || { bad "daemon start"; finish; exit 1; }

act() { # act TASK JSON-FIELDS
	api POST /api/desktop/action "{\"task_id\":\"$1\",$2}"
	[ "$CODE" = 200 ] || bad "action $2" "$CODE $(head -c 300 "$tmp/resp")"
	[ -n "${REAL_DEBUG:-}" ] && jq -c '{effect,focus_window,evidence}' "$tmp/resp" | head -c 600 && echo
	return 0
}

# ---- mousepad: record ----
t0=$(date +%s%N)
api POST /api/tasks '{"name":"mousepad save","display":true,"display_width":1024,"display_height":768}'
M=$(jqr .task_id)
api POST "/api/tasks/$M/launch" '{"command":"mousepad","wait_window":20}'
expect "mousepad: desktop_launch starts it" 201 '.window.title | test("Mousepad")'
wait_el "$M" "role=text&window=Mousepad" >/dev/null || bad "mousepad: its text area is in the tree"
act "$M" '"action":"type","text":"hello from mousepad\n","settle_ms":4000,"param":"body"'
act "$M" '"action":"press_key","keys":"ctrl+s","expect":"window:\"Save As\""'
p=$(wait_el "$M" "role=push%20button&name=Save&window=Save%20As") || bad "mousepad: the Save As dialog shows its Save button"
act "$M" "\"action\":\"type\",\"text\":\"$out/rec.txt\",\"settle_ms\":4000,\"param\":\"file\""
# click Save only once the Name field holds the path (GTK draws typed keys
# late under load; Save is insensitive while the field is empty)
field_holds() {
	api GET "/api/desktop/elements?task_id=$1&role=text&window=Save%20As"
	[ "$(jqr --arg t "$2" '[.elements[] | select(.text == $t)] | length')" -gt 0 ]
}
wait_for 30 field_holds "$M" "$out/rec.txt" || bad "mousepad record: the Name field holds the path"
click "$M" "$p"
CLICK_AID=$(jqr .action_id)
[ -n "${REAL_DEBUG:-}" ] && { jq -c '{effect,evidence}' "$tmp/resp" | head -c 600; echo; api GET "/api/desktop/elements?task_id=$M&role=text"; jq -c '[.elements[]|{name,text,window}]' "$tmp/resp" | head -c 1500; echo; sleep 3; curl -s -o /tmp/replay2-shot.png "$DETM_URL/api/desktop/screenshot?task_id=$M"; }
wait_for 20 test -s "$out/rec.txt"
check "mousepad record: rec.txt written" grep -q "hello from mousepad" "$out/rec.txt"
# keys to the editor once more: its title now holds the path typed into
# Save As, which the replay's params replace (its focus wait must too)
act "$M" '"action":"type","text":"second line\n","settle_ms":4000'
act "$M" '"action":"press_key","keys":"ctrl+s"'
wait_for 20 grep -q "second line" "$out/rec.txt"
check "mousepad record: ctrl+s saved the second line" grep -q "second line" "$out/rec.txt"
t1=$(date +%s%N)
[ -n "${REAL_DEBUG:-}" ] && { sleep 3; for f in "$DETM_DATA"/*.db; do echo "TGT $(sqlite3 "$f" "select target from actions where task_id='$M' and target is not null" 2>&1 | head -c 2500)"; done; }
api PATCH "/api/tasks/$M" '{"status":"completed"}'
echo "# mousepad record: $(( (t1 - t0) / 1000000 )) ms"

# ---- mousepad: replay with another path ----
R=$(replay "$M" "{\"params\":{\"file\":\"$out/rep.txt\",\"body\":\"replayed line\\n\"}}") && ok "mousepad replay: 202"
result "$R"
cp "$tmp/resp" "$tmp/mousepad.replay.json"
cp "$tmp/resp" /tmp/replay2-mp.json; echo "# $(jq -c "{status,completion,steps_total,replayed,regrounded,asked,failed,model_calls}" "$tmp/resp")"
jq -r '.steps[] | "#  step \(.step) \(.action) \(.grounded_by // "-") ok=\(.ok) effect=\(.effect // "-") \(.why // "") \(.effect_summary // "")"' "$tmp/resp"
expect "mousepad replay: the Save click found by the tree (its recorded element is the button as the click found it)" 200 \
	'.steps[4].action == "click" and .steps[4].grounded_by == "accessibility"'
echo "# mousepad replay: $(took) ms"; [ -n "${REAL_DEBUG:-}" ] && curl -s -o /tmp/replay2-rep.jpg "$DETM_URL/api/desktop/screenshot?task_id=$R"
wait_for 20 test -s "$out/rep.txt"
check "mousepad replay: rep.txt written with the replayed line" grep -q "replayed line" "$out/rep.txt"
wait_for 20 grep -q "second line" "$out/rep.txt"
check "mousepad replay: the keys after Save As went to the window titled with the new path (rep.txt has the second line)" \
	grep -q "second line" "$out/rep.txt"
finish
