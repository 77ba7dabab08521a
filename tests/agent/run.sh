#!/usr/bin/env bash
# run.sh - the gui_agent suite: POST /api/gui/agent on a real 1280x720
# Xvfb task display with a real xterm (`cat > file`), the supervisor model
# played by bin/vision-stub speaking OpenRouter's wire format with tool
# calls (scripted "TOOL_CALL name {args}" answers), grounding by `direct`
# (coordinates) and by the UI-TARS stand-in (targets in words).
#
#   a scripted session clicks into the xterm and types: the text arrives;
#   the reply has the Python DETM's fields, tokens summed over every call,
#   one gui action per step plus one for the run; escalate; answers without
#   a tool call are retried then fail; max turns; a second agent on the same
#   display is 409; cancelling the task stops the run; no key -> 503; the
#   MCP tool and the Python route forward to it.
#   takeover mid-run: the stub holds a model answer (the supervisor's, then
#   a grounding call's) while the operator takes the display over; when it
#   answers, the run ends with stopped_by human_takeover and nothing of it
#   reaches the screen (the xterm's file, the pointer).
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init agent
stub_start || { bad "vision-stub starts"; finish; exit 1; }
key=$KEY
script() { # script ANSWER...: the stub's answers, in order (the last repeats)
	local a; a=$(printf '%s\n' "$@" | jq -R . | jq -s -c .)
	stub_script "{\"answers\":$a,\"tokens_in\":100,\"tokens_out\":10${HOLD:+,\"hold\":$HOLD}}"
}
agent() { api POST /api/gui/agent "$1"; }

start() { # start [detmd args]: daemon, task with a display, an xterm writing to $tmp/typed
	daemon_stop
	rm -f "$tmp/typed"
	OPENROUTER_API_KEY=$key ACU_OPENROUTER_URL=$STUB daemon_start "$@" || { bad "daemon start"; return 1; }
	api POST /api/tasks '{"name":"agent","plan":["do it"],"display":true,"display_resolution":"1280x720"}'
	T=$(jqr .task_id)
	DISP=$(jqr .metadata.display)
	AUTH=$(jqr .metadata.xauthority)
	xstart "$T" xterm -geometry 40x10+100+100 -T target -e sh -c "cat > $tmp/typed"
	xwait "$T" target
}
gui_actions() { curl -s "$DETM_URL/api/tasks/$T?detail=actions" | jq '[.items[].action_details[] | select(.action_type == "gui")] | length'; }

start || { finish; exit 1; }
# The screenshot is 1280 wide: screenshot pixels are screen pixels here.
script 'TOOL_CALL click {"x":200,"y":150}' 'TOOL_CALL type_text {"text":"hello from the agent\n"}' \
	'TOOL_CALL done {"summary":"typed the greeting","success":true}'
agent "{\"task_id\":\"$T\",\"instruction\":\"type a greeting into the terminal\",\"context\":\"an xterm is open\"}"
expect "a scripted session succeeds with the Python reply fields" 200 \
	'.success == true and .summary == "typed the greeting" and .escalated == false and .actions_taken == 2 and .turns == 3 and (.actions_log | length) == 3 and (.session_id | length) == 8 and .elapsed_s > 0'
expect "tokens are summed over all three model calls" 200 '.tokens_in == 300 and .tokens_out == 30'
check "the click and the typing reached the xterm" wait_for 5 grep -qx 'hello from the agent' "$tmp/typed"
check "each step and the run are gui actions on the task (2 + 1)" [ "$(gui_actions)" = 3 ]
check "the model got the tools, the screenshot and the instruction" sh -c "curl -s $STUB/_stub/requests |
	jq -e '.requests | map(select(.api == \"openai\")) | length == 3' >/dev/null"
stub_check() { [ "$(curl -s "$STUB/_stub/requests" | jq -c "[.requests[] | select(.api == \"openai\")] | last | $1")" = true ]; }
check "each call carried one image" stub_check '.image_count == 1'

script 'TOOL_CALL escalate {"reason":"a CAPTCHA is showing"}'
agent "{\"task_id\":\"$T\",\"instruction\":\"log in\"}"
expect "escalate ends the run with the reason" 200 '.success == false and .escalated == true and .escalation_reason == "a CAPTCHA is showing"'

script 'I think I should click somewhere.'
agent "{\"task_id\":\"$T\",\"instruction\":\"do it\"}"
expect "answers without a tool call are retried, then the run fails" 200 \
	'.success == false and (.summary | test("did not call a tool")) and .turns == 3'
script 'TOOL_CALL click {"x":"left"' 'TOOL_CALL done {"summary":"ok","success":true}'
agent "{\"task_id\":\"$T\",\"instruction\":\"do it\"}"
expect "bad JSON arguments are one retry, not the end" 200 '.success == true and .turns == 2'
script 'TOOL_CALL click {"target":"the terminal"}' 'TOOL_CALL done {"summary":"x","success":false}'
agent "{\"task_id\":\"$T\",\"instruction\":\"do it\"}"
expect "a target in words with the direct backend is an error the model sees" 200 \
	'.actions_log[0].result | test("^error: could not find")'

# ---- a human takes over while the agent waits for its model ----
held() { curl -s "$STUB/_stub/script" | jq -e '.held == 1' >/dev/null; }
agent_bg() { # agent_bg INSTRUCTION: a run in the background, its reply in $tmp/bg.json
	curl -s -o "$tmp/bg.json" -X POST -H 'Content-Type: application/json' \
		-d "{\"task_id\":\"$T\",\"instruction\":\"$1\",\"timeout\":120}" "$DETM_URL/api/gui/agent"
}
takeover_midrun() { # takeover_midrun WHAT: take over once the held request waits, then let it answer
	check "the run waits on its model ($1)" wait_for 60 held
	api POST "/api/tasks/$T/takeover" '{"reason":"mid-run"}'
	expect "the operator takes the display over meanwhile ($1)" 200 '.driver == "human"'
	LEASE=$(jqr .lease)
	curl -s -X POST "$STUB/_stub/release" >/dev/null
}
bg_is() { jq -e "$1" "$tmp/bg.json" >/dev/null; }
: >"$tmp/typed"
HOLD=2 script 'TOOL_CALL click {"x":200,"y":150}' 'TOOL_CALL type_text {"text":"after the takeover\n"}' \
	'TOOL_CALL done {"summary":"x","success":true}'
agent_bg "type after the click" & bg=$!
takeover_midrun "turn 2's answer"
wait "$bg"
check "the run ends at its next step with a clear result (stopped_by human_takeover)" bg_is \
	'.success == false and .stopped_by == "human_takeover" and .turns == 2 and .actions_taken == 1 and (.summary | test("a human took over the desktop")) and (.summary | test("human is driving"))'
api POST "/api/tasks/$T/release" "{\"lease\":\"$LEASE\",\"note\":\"back to you\"}"
expect "the operator hands back" 200 '.driver == "agent"'
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"type\",\"text\":\"marker\\n\"}"
expect "the agent types again after the release" 200
only_marker() { wait_for 10 grep -qx marker "$tmp/typed" && ! grep -q 'after the takeover' "$tmp/typed"; }
check "nothing of the stopped run was typed (only the later marker arrived)" only_marker

start --gui-agent-max-turns 2 || { finish; exit 1; }
script 'TOOL_CALL wait {"seconds":0.1}'
agent "{\"task_id\":\"$T\",\"instruction\":\"wait forever\"}"
expect "max turns stops the run" 200 '.success == false and .turns == 2 and (.summary | test("ACU_GUI_AGENT_MAX_TURNS"))'

start --gui-agent-backend uitars --uitars-openrouter-model ui-tars-stub || { finish; exit 1; }
stub_script '{"rules":[{"contains":"the terminal window","answer":"click(start_box='"'"'(300,200)'"'"')"}],"answers":["TOOL_CALL click {\"target\":\"the terminal window\"}","TOOL_CALL type_text {\"text\":\"grounded words\\n\"}","TOOL_CALL done {\"summary\":\"ok\",\"success\":true}"]}'
agent "{\"task_id\":\"$T\",\"instruction\":\"type into the terminal\"}"
expect "a target in words is grounded by the configured backend (UI-TARS)" 200 '.success == true and .actions_taken == 2'
check "and the click found the xterm" wait_for 5 grep -qx 'grounded words' "$tmp/typed"

# the takeover comes while gui_do grounds the target (request 2: UI-TARS)
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"mouse_move\",\"x\":5,\"y\":5}"
stub_script '{"rules":[{"contains":"the terminal window","answer":"click(start_box='"'"'(300,200)'"'"')"}],"answers":["TOOL_CALL click {\"target\":\"the terminal window\"}","TOOL_CALL done {\"summary\":\"ok\",\"success\":true}"],"hold":2}'
agent_bg "click the terminal" & bg=$!
takeover_midrun "the grounding call"
wait "$bg"
check "a takeover during grounding stops the run before its click" bg_is \
	'.success == false and .stopped_by == "human_takeover" and .turns == 1 and .actions_taken == 0'
api POST "/api/tasks/$T/release" "{\"lease\":\"$LEASE\"}"
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"get_mouse_position\"}"
expect "the grounded click never happened (the pointer is where it was)" 200 '.x == 5 and .y == 5'
# gui_do alone: the takeover comes while it grounds its target (request 1)
stub_script '{"rules":[{"contains":"the terminal window","answer":"click(start_box='"'"'(300,200)'"'"')"}],"hold":1}'
curl -s -o "$tmp/do.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d "{\"task_id\":\"$T\",\"instruction\":\"click the terminal window\"}" "$DETM_URL/api/gui/do" >"$tmp/do.code" & bg=$!
takeover_midrun "gui_do's grounding"
wait "$bg"
check "gui_do grounded during a takeover is 409 human_control, not a click" sh -c \
	"[ \"\$(cat '$tmp/do.code')\" = 409 ] && jq -e '.error.code == \"human_control\"' '$tmp/do.json' >/dev/null"
api POST "/api/tasks/$T/release" "{\"lease\":\"$LEASE\"}"
api POST /api/desktop/action "{\"task_id\":\"$T\",\"action\":\"get_mouse_position\"}"
expect "and the pointer did not move" 200 '.x == 5 and .y == 5'

stub_script '{"answers":["TOOL_CALL wait {\"seconds\":0.2}"],"delay_ms":300}'
agent_bg long & bg=$!
sleep 1
agent "{\"task_id\":\"$T\",\"instruction\":\"second\"}"
expect "a second agent on the same display is 409 naming the first" 409 '.error.message | test("gui_agent session [0-9a-f]{8} is already driving")'
api POST "/api/tasks/$T/cancel" '{}'
wait "$bg"
check "cancelling the task stops the running agent" sh -c "jq -e '.success == false and (.summary | test(\"cancelled\"))' $tmp/bg.json >/dev/null"

# ---- background runs (gui_agent background: true, gui_agent_status) ----
start || { finish; exit 1; }
script 'TOOL_CALL type_text {"text":"from the background\n"}' 'TOOL_CALL done {"summary":"typed in the background","success":true}'
agent "{\"task_id\":\"$T\",\"instruction\":\"type it\",\"background\":true}"
expect "background: 202 at once with a run_id, running" 202 '.status == "running" and (.run_id | test("^[0-9a-f]{8}$")) and .task_id == "'"$T"'"'
R=$(jqr .run_id)
api GET "/api/gui/agent/$R?block_s=30"
expect "its status, followed with block_s, ends done with the run's reply" 200 \
	'.status == "done" and .success == true and .summary == "typed in the background" and .result.actions_taken == 1 and .elapsed_s >= 0 and .elapsed_s <= 60'
check "... and the typing reached the xterm" wait_for 5 grep -qx 'from the background' "$tmp/typed"
check "... and the run is a gui action on the task, as a synchronous one is (1 + 1)" [ "$(gui_actions)" = 2 ]
api GET /api/gui/agent/0badc0de
expect "an unknown run is 404 naming run_id" 404 '.error.field == "run_id"'
stub_script '{"answers":["TOOL_CALL wait {\"seconds\":0.2}"],"delay_ms":200}'
agent "{\"task_id\":\"$T\",\"instruction\":\"wait a lot\",\"background\":true}"
R2=$(jqr .run_id)
api GET "/api/gui/agent/$R2?block_s=1"
expect "a long run answers running after block_s" 200 '.status == "running"'
api POST "/api/gui/agent/$R2/cancel" '{}'
expect "cancel answers its status" 200 '.run_id == "'"$R2"'"'
api GET "/api/gui/agent/$R2?block_s=30"
expect "a cancelled run ends cancelled, not done" 200 '.status == "cancelled" and (.summary | test("cancelled"))'
# over MCP (detm-mcp): the tool's background flag and gui_agent_status
script 'TOOL_CALL done {"summary":"mcp background","success":true}'
mcp_calls "$tmp/mcpbg.out" 60 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"gui_agent\",\"arguments\":{\"task_id\":\"$T\",\"instruction\":\"x\",\"background\":true}}}"
R3=$(jq -r 'select(.id == 2) | .result.structuredContent.run_id' "$tmp/mcpbg.out")
check "MCP gui_agent background: its first line says how to follow it" sh -c \
	"jq -e 'select(.id == 2) | .result.content[0].text | test(\"started in the background; follow it with gui_agent_status $R3\")' '$tmp/mcpbg.out' >/dev/null"
mcp_calls "$tmp/mcpst.out" 60 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"gui_agent_status\",\"arguments\":{\"run_id\":\"$R3\",\"block_s\":20}}}"
check "MCP gui_agent_status: done, succeeded, the summary in the first line" sh -c \
	"jq -e 'select(.id == 2) | .result.structuredContent.status == \"done\" and (.result.content[0].text | test(\"is done after .*succeeded: mcp background\"))' '$tmp/mcpst.out' >/dev/null"

mcp_calls "$tmp/mcp.out" 30 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gui_agent","arguments":{"instruction":"x","timeout":0}}}'
check "the MCP tool gui_agent checks its arguments (timeout 0)" sh -c "jq -e 'select(.id == 2) | .result.isError == true' $tmp/mcp.out | grep -q true"
start || { finish; exit 1; }
script 'TOOL_CALL done {"summary":"nothing to do","success":true}'
api POST /gui_agent "{\"task_id\":\"$T\",\"instruction\":\"nothing\"}"
expect "the Python route /gui_agent" 200 '.success == true'
api POST /live_ui "{\"task_id\":\"$T\",\"instruction\":\"nothing\"}"
expect "and its alias /live_ui" 200 '.success == true'
daemon_stop
daemon_start || { bad "daemon start (no key)"; finish; exit 1; }
agent '{"instruction":"x"}'
expect "without OPENROUTER_API_KEY the error says what to set" 503 '.error.message | test("OPENROUTER_API_KEY")'
agent '{}'
expect "an instruction is required" 400 '.error.field == "instruction"'
agent '{"instruction":"x","timeout":301}'
expect "timeout is at most 300" 400 '.error.field == "timeout"'
daemon_stop
finish
