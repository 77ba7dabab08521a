#!/usr/bin/env bash
# done/run.sh - "done, checked" (issue 38 item 2) on a real detmd: a task or
# plan item set to completed is judged against the evidence detm holds and
# the reply, GET task, the thread and detm-mcp's first line say it.
#
#   an item with no actions -> unchecked; a failed action not followed by a
#   success -> contradicted; a success with effect confirmed -> evidenced,
#   without an effect verdict -> unchecked; suspected_noop -> contradicted;
#   an open smart wait (a real one, on the task's Xvfb) -> contradicted;
#   done_when file exists (absolute, workspace-relative) -> evidenced,
#   missing -> contradicted, leaving the workspace or text: -> unchecked.
#   A contradicted completion is stored (the status is completed), never
#   refused.
#
# Oracles apart from detmd's reply: GET task, the thread, the sqlite3 CLI
# on data.db, detm-mcp's result text. Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init done --rm-data
ws="$tmp/ws"
mkdir -p "$ws/out"
export ACU_OPENCLAW_CLI=""
daemon_start --workspace "$ws" || { bad "daemon start"; finish; exit 1; }

new_task() { # new_task NAME [extra json]: prints its id
	api POST /api/tasks "{\"name\":\"$1\",\"plan\":[\"a\",\"b\",\"c\",\"d\",\"e\"]${2:+,$2}}"
	jqr .task_id
}
act() { # act TASK ORDINAL STATUS [output json]
	api POST "/api/tasks/$1/actions" "{\"action_type\":\"gui\",\"summary\":\"click Save $3\",\"status\":\"$3\",\"ordinal\":$2${4:+,\"output_data\":$4}}"
	[ "$CODE" = 201 ] || bad "log action on $1/$2" "$CODE $(cat "$tmp/resp")"
}
item_done() { api PATCH "/api/tasks/$1/items/$2" '{"status":"completed"}'; }

# ---- plan items ----
T=$(new_task items)
item_done "$T" 0
expect "item with no actions: unchecked" 200 \
	'.completion == "unchecked" and .completion_item == 0 and (.completion_why.sentence | contains("no actions"))'
act "$T" 1 failed
item_done "$T" 1
expect "item after a failed action: contradicted, and still completed" 200 \
	'.completion == "contradicted" and (.completion_why.sentence | test("1 failed action since the item started"))
	 and .items[1].status == "completed"'
act "$T" 2 failed
act "$T" 2 completed '{"effect":"confirmed"}'
item_done "$T" 2
expect "a failure followed by a success with effect confirmed: evidenced" 200 \
	'.completion == "evidenced" and (.completion_why.sentence | contains("confirmed"))'
act "$T" 3 completed '{"result":{"ok":true}}'
item_done "$T" 3
expect "a success without an effect verdict: unchecked" 200 \
	'.completion == "unchecked" and (.completion_why.sentence | contains("no effect verdict"))'
act "$T" 4 completed '{"verification":{"effect":{"verdict":"suspected_noop"}}}'
item_done "$T" 4
expect "the last action's effect suspected_noop: contradicted" 200 \
	'.completion == "contradicted" and (.completion_why.sentence | contains("suspected_noop"))'
api GET "/api/tasks/$T"
expect "GET task shows each item's completion and why" 200 \
	'[.items[].completion] == ["unchecked","contradicted","evidenced","unchecked","contradicted"]
	 and (.items[1].completion_why.reasons | length) >= 1'
api GET "/api/tasks/$T/messages"
expect "the thread has a system message per verdict" 200 \
	'[.messages[] | select(.role == "system" and .msg_type == "completion")] | length == 5
	 and any(.[]; .content | startswith("Item 1 completed: contradicted: 1 failed action"))'
check "stored in the row (data.db)" sh -c \
	"[ \"\$(sqlite3 '$DETM_DATA/data.db' \"SELECT json_extract(completion, '\$.completion') FROM plan_items WHERE task_id = '$T' AND ordinal = 1\")\" = contradicted ]"
api PATCH "/api/tasks/$T/items/3" '{"title":"renamed"}'
expect "a PATCH that completes nothing judges nothing" 200 '.completion_item == null and .completion == null'

# ---- the task, with an open smart wait ----
W=$(new_task wait '"display":true')
api POST /api/waits "{\"task_id\":\"$W\",\"target\":\"screen\",\"wake_when\":\"text:\\\"NEVER_ON_SCREEN_42\\\"\",\"timeout\":300}"
WID=$(jqr .wait_id)
api GET "/api/waits/$WID"
expect "a real wait is watching" 200 '.status == "watching"'
api PATCH "/api/tasks/$W" '{"status":"completed"}'
expect "task completed with a wait still watching: contradicted" 200 \
	'.status == "completed" and .completion == "contradicted" and .completion_item == null
	 and (.completion_why.sentence | contains("smart wait on the task still watching"))'
api GET "/api/tasks/$W"
expect "GET task shows the task's completion" 200 '.completion == "contradicted"'
api GET "/api/tasks?status=completed"
expect "the task list shows it too (the dashboard flags it)" 200 \
	"any(.tasks[]; .task_id == \"$W\" and .completion == \"contradicted\")"

# ---- done_when ----
D=$(new_task file "\"done_when\":[\"file:\\\"$tmp/export.csv\\\"\"]")
api GET "/api/tasks/$D"
expect "done_when is kept in the metadata" 200 ".metadata.done_when == [\"file:\\\"$tmp/export.csv\\\"\"]"
: >"$tmp/export.csv"
api PATCH "/api/tasks/$D" '{"status":"completed"}'
expect "done_when file exists (absolute): evidenced" 200 \
	'.completion == "evidenced" and (.completion_why.sentence | contains("export.csv exists"))'
M=$(new_task missing "\"done_when\":[\"file:$tmp/nothing.csv\"]")
act "$M" 0 completed '{"effect":"confirmed"}'
api PATCH "/api/tasks/$M" '{"status":"completed"}'
expect "done_when file missing: contradicted, though the last action was confirmed" 200 \
	'.completion == "contradicted" and (.completion_why.sentence | contains("is false: no file"))'
: >"$ws/out/q3.csv"
R=$(new_task rel '"metadata":{"done_when":"file:\"out/q3.csv\""}')
api PATCH "/api/tasks/$R" '{"status":"completed"}'
expect "done_when workspace-relative (in metadata) exists: evidenced" 200 '.completion == "evidenced"'
: >"$tmp/outside.csv"
O=$(new_task out '"done_when":["file:\"../outside.csv\"","text:\"Exported\""]')
api PATCH "/api/tasks/$O" '{"status":"completed"}'
expect "leaving the workspace and text: stay unchecked, and say why" 200 \
	'.completion == "unchecked" and (.completion_why.reasons | any(contains("leads outside the workspace")))
	 and (.completion_why.reasons | any(contains("cannot check text synchronously")))'
N=$(new_task none)
api PATCH "/api/tasks/$N" '{"status":"completed"}'
expect "a task with no actions and no done_when: unchecked" 200 \
	'.completion == "unchecked" and (.completion_why.reasons | any(contains("no done_when")))'
api POST /api/tasks '{"name":"bad","done_when":["file:x",3]}'
expect "done_when must be a list of strings" 400 '.error.field | startswith("done_when")'

# ---- detm-mcp's first line ----
P=$(new_task mcp)
act "$P" 2 failed
mcp_calls "$tmp/mcp.out" 30 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task_item_update","arguments":{"task_id":"'"$P"'","ordinal":2,"status":"completed"}}}'
check "task_item_update's first line: Item 2 completed: contradicted: 1 failed action" sh -c \
	"jq -r 'select(.id == 2) | .result.content[0].text' '$tmp/mcp.out' | grep -q '^Item 2 completed: contradicted: 1 failed action since the item started'"
check "and structuredContent has completion" sh -c \
	"jq -e 'select(.id == 2) | .result.structuredContent.completion == \"contradicted\"' '$tmp/mcp.out' | grep -q true"
api DELETE "/api/waits/$WID"
finish
