#!/usr/bin/env bash
# replay/run.sh - record once, replay without the model (issue 38 item 3) on
# a real detmd, real Xvfb task displays and a real GTK 3 application with
# its accessibility tree (save_app.py, started through desktop_launch).
#
#   record:   a scripted agent (HTTP only) launches the app, clicks the
#             "File name" entry (found through /api/desktop/elements), types
#             a name (with "param":"filename"), clicks "Content", types a
#             text, clicks Save, waits for the "Saved" window, clicks OK
#   replay:   POST /api/tasks/{id}/replay -> 202 and a new task linked to
#             its source (replay_of, the source's "replays"); the replay
#             ends done with every step replayed, 0 model calls; the file
#             is on disk again and OK in the "Saved" window was clicked
#             (the app's own log, read by the suite)
#   params:   through detm-mcp's task_replay, {"filename":"q3.csv","hello
#             replay":"bye"}: q3.csv holds "bye"
#   moved:    the app in another layout and window size (every widget
#             elsewhere): the clicks are re-grounded by the tree at other
#             points, 0 model calls, the file is written
#   gone:     the save button renamed, ask_model false: needs_agent at that step naming what
#             was looked for, the task stays active (xdotool: the app's
#             window, no Saved window); the agent clicks the
#             button itself and replays again with replay_task_id and
#             from_step: done, the file is written; with the model
#             (bin/vision-stub) it is asked for that step alone: asked 1,
#             model_calls 1, one request seen by the stub (its default
#             answer grounds nothing, so the replay stops there)
#
#   interrupted: a replay mid-way (waiting at step 5) when detmd is killed
#             (kill -9) or stopped (SIGTERM): after a restart on the same
#             data dir it reads interrupted at step 5 with why (HTTP, the
#             task summary, MCP task_replay_status), its task cancelled
#
# Oracles apart from detmd: the files on disk, xdotool. Prints
# "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init replay --rm-data --term
for t in xdotool jq python3; do
	command -v $t >/dev/null || { bad "needs $t" "run scripts/install-deps.sh test"; finish; exit 1; }
done
/usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "3.0")' 2>/dev/null ||
	{ bad "needs python3-gi and GTK 3" "run scripts/install-deps.sh test"; finish; exit 1; }
app="$PWD/tests/replay/save_app.py"
out="$tmp/out"
mkdir -p "$out"
cfg="$tmp/app.json"
. tests/replay/lib.sh
layout a 420 200 Save
# The grounding model is bin/vision-stub (UI-TARS over Ollama): it counts
# every request, so "0 model calls" is checked from outside detmd too.
stub_start || { bad "vision-stub starts"; finish; exit 1; }
export OLLAMA_URL="$STUB" ACU_GUI_AGENT_BACKEND=uitars ACU_GROUNDING_TIMEOUT_MS=30000
daemon_start --launch-allow "$app" || { bad "daemon start"; finish; exit 1; }

# ---- record ----
t_rec0=$(date +%s%N)
api POST /api/tasks '{"name":"save a file","display":true,"display_width":1024,"display_height":768}'
S=$(jqr .task_id)
api POST "/api/tasks/$S/launch" "{\"command\":\"$app\",\"args\":[\"$cfg\"],\"wait_window\":15}"
expect "record: desktop_launch starts the app" 201 '.window.title == "Replay Saver"'
record_save "$S" first.txt "hello replay" filename
save_at=$SAVE_AT
check "record: the app wrote first.txt" [ "$(cat "$out/first.txt" 2>/dev/null)" = "hello replay" ]
t_rec1=$(date +%s%N)
api PATCH "/api/tasks/$S" '{"status":"completed"}'
rm -f "$out/first.txt"

# ---- replay, nothing changed ----
R1=$(replay "$S" '{}') && ok "replay: 202 with a new task id"
api GET "/api/tasks/$R1"
expect "replay: the new task names its source (metadata.replay_of)" 200 ".metadata.replay_of == \"$S\" and .metadata.display != null"
result "$R1"
expect "replay: done, all 7 steps replayed, 0 model calls" 200 \
	'.status == "done" and .steps_total == 7 and .replayed == 7 and .model_calls == 0 and .failed == 0'
# Measured, not asserted: the scripted recording (no model: the agent's
# element lookups and inputs) against the replay, from its own clock.
echo "measured: record $(( (t_rec1 - t_rec0) / 1000000 )) ms; replay $(took) ms, model_calls $(jqr .model_calls)"
expect "replay: the clicks were grounded by the accessibility tree" 200 \
	'[.steps[] | select(.action == "click") | .grounded_by] | length == 4 and all(. == "accessibility")'
expect "replay: the launch re-launched, keys waited for their window" 200 \
	'.steps[0].grounded_by == "launch" and ([.steps[] | select(.action == "type") | .grounded_by] | all(. == "focus"))'
check "replay: the file is on disk again (read by the suite)" [ "$(cat "$out/first.txt" 2>/dev/null)" = "hello replay" ]
check "replay: OK in the Saved window was clicked (the app's own log)" [ "$(grep -c '^ok first.txt$' "$out/events.log")" = 2 ]
api GET "/api/tasks/$S"
expect "replay: the source lists its replay" 200 "(.replays // []) | index(\"$R1\") != null"
api GET "/api/tasks/$R1"
expect "replay: the replay task ended completed" 200 '.status == "completed" and .replay.status == "done"'

# ---- params ----
# through detm-mcp's task_replay (waits for the result: block_s)
mcp_calls "$tmp/mcp.out" 60 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task_replay","arguments":{"task_id":"'"$S"'","params":{"filename":"q3.csv","hello replay":"bye"},"block_s":25}}}'
R2=$(jq -r 'select(.id == 2) | .result.structuredContent.task_id // empty' "$tmp/mcp.out")
[ -n "$R2" ] || bad "MCP task_replay answers with the replay task_id" "$(head -c 400 "$tmp/mcp.out")"
result "$R2"
expect "params (MCP task_replay): done, two texts replaced" 200 '.status == "done" and ([.steps[] | select(.param != null)] | length == 2)'
check "params: q3.csv holds the replaced text" [ "$(cat "$out/q3.csv" 2>/dev/null)" = "bye" ]

# ---- moved: another layout and size ----
layout b 640 360 Save
rm -f "$out/first.txt"
R3=$(replay "$S" '{}')
result "$R3"
echo "measured: moved replay $(took) ms, $(jqr .regrounded) of $(jqr .steps_total) steps re-grounded, model_calls $(jqr .model_calls)"
expect "moved: done with 0 model calls" 200 '.status == "done" and .model_calls == 0 and .replayed == 7'
expect "moved: every click re-grounded by the tree" 200 \
	'[.steps[] | select(.action == "click") | .grounded_by] | all(. == "accessibility")'
new_save=$(jq -r '.steps[5].point | "\(.x) \(.y)"' "$tmp/resp")
check "moved: Save was clicked elsewhere than at record time ($save_at -> $new_save)" [ "$new_save" != "$save_at" ]
check "moved: the file is written" [ "$(cat "$out/first.txt" 2>/dev/null)" = "hello replay" ]

# ---- gone: the target is not there ----
layout a 420 200 Store
rm -f "$out/first.txt"
check "no model request in any replay so far (the stub saw $(stub_count))" [ "$(stub_count)" = 0 ]
R4=$(replay "$S" '{"timeout_ms":4000,"ask_model":false}')
result "$R4"
expect "gone: needs_agent at step 5 (the Save click) with what was looked for" 200 \
	'.status == "needs_agent" and .needs.step == 5 and (.needs.looked_for | contains("Save")) and .model_calls == 0 and .replayed == 5'
api GET "/api/tasks/$R4"
expect "gone: the replay task stays active for the agent" 200 '.status == "active"'
saved=$(xenv "$R4" xdotool search --name '^Saved$' 2>/dev/null | wc -l)
main=$(xenv "$R4" xdotool search --name '^Replay Saver$' 2>/dev/null | wc -l)
check "gone: on its display the app waits, nothing was saved (xdotool: $main, $saved windows)" [ "$main" = 1 ] && [ "$saved" = 0 ] && [ ! -e "$out/first.txt" ]
p=$(el "$R4" "role=push%20button&name=Store")
click "$R4" "$p"
R4b=$(replay "$S" "{\"replay_task_id\":\"$R4\",\"from_step\":6}")
check "gone: the replay goes on in the same task" [ "$R4b" = "$R4" ]
result "$R4"
expect "gone: from_step 6 ends done" 200 '.status == "done" and .from_step == 6 and .replayed == 1'
check "gone: the file is written" [ "$(cat "$out/first.txt" 2>/dev/null)" = "hello replay" ]

# ---- gone, with the model asked ----
rm -f "$out/first.txt"
R5=$(replay "$S" '{"timeout_ms":4000}')
result "$R5"
expect "gone, model: the model was asked for that step alone (asked 1, model_calls 1)" 200 \
	'.asked == 1 and .model_calls == 1 and ([.steps[] | select(.asked == true) | .step] == [5])'
check "gone, model: the stub saw exactly one request" [ "$(stub_count)" = 1 ]

# ---- errors ----
api POST "/api/tasks/$S/replay" '{"from_step":99}'
expect "from_step past the steps: 400 on from_step" 400 '.error.field == "from_step"'
api POST "/api/tasks/$S/replay" '{"params":{"a":1}}'
expect "a non-string param: 400 on params" 400 '.error.field == "params"'
api GET "/api/tasks/$S/replay"
expect "GET replay of a source: its latest replay and the list" 200 '(.replays | length) >= 4'

# ---- interrupted: detmd ends under a running replay (kill -9, SIGTERM) ----
# In the Store layout the replay waits at step 5 for a Save button
# (timeout_ms 120000): it is mid-way when detmd ends; detmd restarts on
# the same data dir and the replay must read interrupted at step 5, never
# running, its task not active (HTTP, the summary, MCP task_replay_status).
layout a 420 200 Store
midway() { api GET "/api/tasks/$1/replay"; [ "$(jqr .status)" = running ] && [ "$(jqr '.steps | length')" -ge 5 ]; }
for how in kill9 term; do
	R6=$(replay "$S" '{"timeout_ms":120000,"ask_model":false}')
	wait_for 90 midway "$R6" || bad "$how: the replay is mid-way (waits at step 5)" "$(head -c 300 "$tmp/resp")"
	if [ $how = kill9 ]; then daemon_kill9; why='killed'; else daemon_stop; why='SIGTERM'; fi
	daemon_start --launch-allow "$app" || { bad "$how: detmd restarts on the same data dir"; finish; exit 1; }
	api GET "/api/tasks/$R6/replay"
	expect "$how, restarted: GET replay says interrupted at step 5 and why, not running" 200 \
		".status == \"interrupted\" and .interrupted.step == 5 and (.interrupted.why | test(\"$why\")) and .replayed == 5"
	api GET "/api/tasks/$R6"
	expect "$how, restarted: the summary's replay is interrupted, the replay task cancelled" 200 \
		'.replay.status == "interrupted" and .status == "cancelled"'
done
mcp_calls "$tmp/mcp2.out" 30 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task_replay_status","arguments":{"task_id":"'"$R6"'"}}}'
check "MCP task_replay_status: interrupted at step 5" [ "$(jq -r 'select(.id == 2) | .result.structuredContent | "\(.status) \(.interrupted.step)"' "$tmp/mcp2.out")" = "interrupted 5" ]
finish
