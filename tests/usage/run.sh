#!/usr/bin/env bash
# usage/run.sh - the usage suite: model usage and cost, per-task budgets,
# the gate's saved calls, and /metrics, on a real detmd with real task
# displays (Xvfb), every model answered by bin/vision-stub in its real wire
# format with the token counts we script (OpenAI usage.prompt_tokens, Ollama
# prompt_eval_count, Anthropic usage.input_tokens).
#
# Oracles apart from detmd's own answers: the stub's request records (did
# a model call reach it?), bin/wake-recv (the wake-up webhook), the sqlite3
# CLI on data.db, and a small Prometheus text-format parser (metrics.py;
# Debian's prometheus package, which has promtool, is a 96 MB server).
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

tmp=$(mktemp -d /tmp/detm-usage.XXXXXX)
pids=()
total_pass=0 total_fail=0
cleanup() {
	daemon_stop
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"
}
trap cleanup EXIT
export LC_ALL=C.UTF-8

key="stub-key-$$"
"$DETM_BIN/vision-stub" --port 0 --port-file "$tmp/stub.port" --key "$key" 2>"$tmp/stub.log" &
pids+=($!)
"$DETM_BIN/wake-recv" --out "$tmp/wake.log" --port-file "$tmp/recv.port" 2>"$tmp/recv.err" &
pids+=($!)
for i in $(seq 1 100); do [ -s "$tmp/stub.port" ] && [ -s "$tmp/recv.port" ] && break; sleep 0.05; done
STUB="http://127.0.0.1:$(cat "$tmp/stub.port")"
export OLLAMA_URL="$STUB" ACU_CLAUDE_URL="$STUB" ACU_OPENROUTER_URL="$STUB" ACU_GROUNDING_TIMEOUT_MS=5000 \
	ACU_VISION_TIMEOUT_MS=5000 ACU_WAKE_URL="http://127.0.0.1:$(cat "$tmp/recv.port")/hook" ACU_OPENCLAW_CLI=""
DETM_DATA=$(mktemp -d /tmp/detm-test.XXXXXX)

start() { # start [VAR=value...]: (re)start detmd on the same data dir with that config
	daemon_stop
	unset ACU_GUI_AGENT_BACKEND OPENROUTER_API_KEY ANTHROPIC_API_KEY ACU_UITARS_OPENROUTER_MODEL ACU_VISION_BACKEND
	local kv
	for kv in "$@"; do export "${kv?}"; done
	daemon_start || { bad "daemon start ($*)"; return 1; }
}
new_task() { # new_task NAME [extra json]: a task with its own display; prints its id
	api POST /api/tasks "{\"name\":\"$1\",\"display\":true${2:+,$2}}"
	jqr .task_id
}
gfind() { api POST /api/gui/find "{\"task_id\":\"$1\",\"description\":\"the OK button\"}"; }
near() { # near A B: |A - B| < 1e-9 (jq prints the numbers)
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-9) }'
}
check_near() { # check_near NAME GOT WANT
	if near "$2" "$3"; then ok "$1"; else bad "$1" "got $2, want $3"; fi
}
task_status() { curl -fsS "$DETM_URL/api/tasks/$1" | jq -r .status; }
is_status() { [ "$(task_status "$1")" = "$2" ]; }
sq() { sqlite3 "$DETM_DATA/data.db" "$1"; }
id_ok() { [[ $1 =~ ^[0-9a-f]{8}$ ]]; }

UITARS='{"answers":["Action: click(point='"'"'<point>10 20</point>'"'"')"],"tokens_in":1000,"tokens_out":50}'

echo "-- ${SECONDS}s"
# ======== usage and cost: OpenAI format, the price table ========
start ACU_GUI_AGENT_BACKEND=uitars OPENROUTER_API_KEY="$key" || { finish; exit 1; }
stub_script "$UITARS"
T=$(new_task cost)
gfind "$T"
expect "gui/find through uitars on openrouter" 200 '.x >= 0'
api GET "/api/usage/stats?task_id=$T"
expect "stats: one row, provider and model, tokens as the stub reported them" 200 \
	'(.rows | length) == 1 and .rows[0].provider == "openrouter" and .rows[0].model == "bytedance/ui-tars-1.5-7b"
	 and .rows[0].requests == 1 and .rows[0].input_tokens == 1000 and .rows[0].output_tokens == 50'
check_near "stats: cost from the table (0.1/0.2 USD per Mtok)" "$(jqr .rows[0].cost_usd)" 0.00011
expect "stats: totals and 30 daily rows, today last" 200 \
	"(.daily | length) == 30 and .daily[29].requests == 1 and .daily[29].date == \"$(date -u +%F)\"
	 and .daily[0].requests == 0 and .totals.requests == 1 and .totals.input_tokens == 1000"
api GET "/api/tasks/$T"
expect "task summary carries usage totals" 200 '.usage.requests == 1 and .usage.output_tokens == 50 and .budget == null'
check "the row in SQLite names the task and the purpose" \
	[ "$(sq "SELECT task_id || ' ' || purpose || ' ' || outcome FROM usage_events")" = "$T ground ok" ]

# An override file in the data dir changes the price of the next calls.
printf '{"prices":[{"provider":"openrouter","model":"bytedance/ui-tars","input_per_mtok":2,"output_per_mtok":4}]}\n' \
	>"$DETM_DATA/prices.json"
prices_loaded() { curl -fsS "$DETM_URL/api/usage/prices" | jq -e '.file_loaded and .prices[0].origin == "prices.json"' >/dev/null; }
check "prices.json is read when it appears" wait_for 10 prices_loaded
gfind "$T"
api GET "/api/tasks/$T"
check_near "a call priced from prices.json (2/4 USD per Mtok) adds 0.0022" "$(jqr .usage.cost_usd)" 0.00231
rm -f "$DETM_DATA/prices.json"

# A reply without token counts: the model has a price, the call's cost is unknown.
stub_script '{"answers":["click(point='"'"'<point>10 20</point>'"'"')"],"usage":false}'
N=$(new_task nousage)
gfind "$N"
api GET "/api/usage/stats?task_id=$N"
expect "no usage in the reply: tokens 0, cost null (not 0)" 200 \
	'.rows[0].requests == 1 and .rows[0].input_tokens == 0 and .rows[0].cost_usd == null'
# OpenRouter's own usage.cost is believed over the table.
stub_script '{"answers":["click(point='"'"'<point>10 20</point>'"'"')"],"tokens_in":1000,"tokens_out":50,"cost":0.0042}'
gfind "$N"
api GET "/api/usage/stats?task_id=$N"
expect "a provider-reported cost is used as reported" 200 \
	'.totals.requests == 2 and .totals.unpriced_requests == 1 and (.totals.cost_usd - 0.0042 | fabs) < 1e-9'

# A model nobody priced costs null, not 0.
start ACU_GUI_AGENT_BACKEND=uitars OPENROUTER_API_KEY="$key" ACU_UITARS_OPENROUTER_MODEL=acme/mystery-7b || { finish; exit 1; }
stub_script "$UITARS"
U=$(new_task unknown)
gfind "$U"
api GET "/api/usage/stats?task_id=$U"
expect "unknown model: cost null, counted as unpriced" 200 \
	'.rows[0].model == "acme/mystery-7b" and .rows[0].cost_usd == null and .rows[0].unpriced_requests == 1
	 and .totals.cost_usd == null and .rows[0].input_tokens == 1000'
api GET "/api/usage/stats"
expect "all tasks: the known costs add up, the unpriced call is not counted as 0" 200 \
	'.totals.requests == 5 and .totals.unpriced_requests == 2 and (.totals.cost_usd - 0.00651 | fabs) < 1e-9'
api GET "/api/usage/stats?since=abc"
expect "since must be days" 400 '.error.field == "since"'

# Ollama format (uitars without an OpenRouter key): local, free.
start ACU_GUI_AGENT_BACKEND=uitars || { finish; exit 1; }
stub_script '{"answers":["click(point='"'"'<point>10 20</point>'"'"')"],"tokens_in":700,"tokens_out":9}'
O=$(new_task ollama)
gfind "$O"
api GET "/api/usage/stats?task_id=$O"
expect "ollama: prompt_eval_count/eval_count read, cost 0 (local)" 200 \
	'.rows[0].provider == "ollama" and .rows[0].input_tokens == 700 and .rows[0].output_tokens == 9 and .rows[0].cost_usd == 0'

# Anthropic format (claude_cu): usage.input_tokens/output_tokens, Sonnet 4 at 3/15.
start ACU_GUI_AGENT_BACKEND=claude_cu ANTHROPIC_API_KEY="$key" || { finish; exit 1; }
stub_script '{"answers":["ok"],"tool_use":{"action":"left_click","coordinate":[10,20]},"tokens_in":2000,"tokens_out":100}'
A=$(new_task anthropic)
gfind "$A"
expect "claude_cu grounding answered" 200 '.x >= 0'
api GET "/api/usage/stats?task_id=$A"
expect "anthropic: provider, model, tokens" 200 \
	'.rows[0].provider == "anthropic" and (.rows[0].model | startswith("claude-sonnet-4")) and .rows[0].input_tokens == 2000'
check_near "anthropic: 2000 in x 3 + 100 out x 15 per Mtok" "$(jqr .rows[0].cost_usd)" 0.0075

echo "-- ${SECONDS}s"
# ======== budgets ========
start ACU_GUI_AGENT_BACKEND=uitars OPENROUTER_API_KEY="$key" || { finish; exit 1; }
stub_script "$UITARS"
B=$(new_task budget '"budget":{"model_calls":2}')
check "register with a budget" id_ok "$B"
gfind "$B"; gfind "$B"
expect "calls under the budget run" 200 '.x >= 0'
check "reaching model_calls pauses the task" wait_for 10 is_status "$B" paused
api GET "/api/tasks/$B/messages"
expect "the control message says which limit and the figures" 200 \
	'[.messages[] | select(.msg_type == "control") | .content] | any(test("^Budget paused the task: the model_calls limit is reached: 2 of 2"))'
woken() { grep -q "\"event\":\"budget_reached\",\"task_id\":\"$1\"" "$tmp/wake.log" 2>/dev/null; }
check "the agent is woken with the reason (budget_reached)" wait_for 10 woken "$B"
check "the wake-up text names the limit" grep -q "model_calls limit is reached" "$tmp/wake.log"
n0=$(stub_count)
gfind "$B"
expect "a call over the budget is refused with a clear error" 409 \
	'.error.field == "budget" and (.error.message | test("reached its budget.*model_calls.*raise the budget"))'
check "... and never reaches the model" [ "$(stub_count)" -eq "$n0" ]
api GET "/api/tasks/$B"
expect "the summary shows the budget, what is spent and what was reached" 200 \
	'.budget.model_calls == 2 and .budget.spent.model_calls == 2 and .budget.reached == "model_calls" and .usage.requests == 2'
api PATCH "/api/tasks/$B" '{"budget":{"model_calls":3}}'
expect "an operator raises the budget" 200 '.status == "paused"'
api POST "/api/tasks/$B/resume"
expect "... and resumes" 200 '.status == "active"'
gfind "$B"
expect "the task continues: the call runs" 200 '.x >= 0'
check "... and reaches the model" [ "$(stub_count)" -eq $((n0 + 1)) ]
check "3 of 3: paused again" wait_for 10 is_status "$B" paused
api POST "/api/tasks/$B/resume"
check "resumed without raising: the next call is refused" sh -c "curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d '{\"task_id\":\"$B\",\"description\":\"x\"}' $DETM_URL/api/gui/find | grep -q 409"
check "... and the task is paused again" wait_for 10 is_status "$B" paused
api PATCH "/api/tasks/$B" '{"budget":{"usd":-1}}'
expect "a negative limit is refused" 400 '.error.field == "budget"'
api PATCH "/api/tasks/$B" '{"budget":{"dollars":1}}'
expect "an unknown budget key is refused" 400 '.error.field == "budget"'

# usd: 0.00011 a call; the second crosses 0.0002.
C=$(new_task usd '"budget":{"usd":0.0002}')
gfind "$C"
check "usd: one call under the limit keeps the task active" is_status "$C" active
gfind "$C"
check "usd: the call that crosses it pauses the task" wait_for 10 is_status "$C" paused
api GET "/api/tasks/$C"
expect "usd: reached usd" 200 '.budget.reached == "usd" and (.budget.spent.usd - 0.00022 | fabs) < 1e-9'

# tokens: 1050 a call.
K=$(new_task tokens '"budget":{"tokens":2000}')
gfind "$K"; gfind "$K"
check "tokens: 2100 of 2000 pauses the task" wait_for 10 is_status "$K" paused
api GET "/api/tasks/$K"
expect "tokens: reached tokens" 200 '.budget.reached == "tokens" and .budget.spent.tokens == 2100'

# minutes: no call needed, the budget thread watches the clock.
M=$(new_task minutes '"budget":{"minutes":0.02}')
check "minutes: 1.2 s after registration the task is paused" wait_for 15 is_status "$M" paused
api GET "/api/tasks/$M/messages"
expect "minutes: the control message names the limit" 200 \
	'[.messages[] | select(.msg_type == "control") | .content] | any(test("minutes limit is reached"))'

# The MCP tools carry the budget argument (the tool router, same schema).
api POST /api/tools/task_register '{"name":"via tool","budget":{"model_calls":5,"usd":1.5}}'
TT=$(jqr '.task_id // .result.task_id // empty')
api GET "/api/tasks/$TT"
expect "task_register with budget through the tool router" 200 '.budget.model_calls == 5 and .budget.usd == 1.5'
api POST /api/tools/task_update "{\"task_id\":\"$TT\",\"budget\":{\"tokens\":100}}"
api GET "/api/tasks/$TT"
expect "task_update merges a budget key" 200 '.budget.model_calls == 5 and .budget.tokens == 100'

echo "-- ${SECONDS}s"
# ======== smart waits: the gate's saved calls, and the budget hold ========
start ACU_VISION_BACKEND=openrouter OPENROUTER_API_KEY="$key" || { finish; exit 1; }
stub_script '{"answers":["NO: not yet"],"tokens_in":300,"tokens_out":5}'
Wt=$(new_task waits)
api POST /api/waits "{\"task_id\":\"$Wt\",\"target\":\"screen\",\"wake_when\":\"a dialog says done\",\"timeout\":120}"
W=$(jqr .wait_id)
saved() { curl -fsS "$DETM_URL/api/waits/$W" | jq -e '.model_calls_saved >= 1 and .evaluations >= 1' >/dev/null; }
check "a still screen: the gate saves model calls (model_calls_saved)" wait_for 30 saved
api GET "/api/tasks/$Wt"
expect "wait judging is recorded under the task" 200 '.usage.requests >= 1 and .usage.input_tokens >= 300'
check "... with purpose wait" [ "$(sq "SELECT DISTINCT purpose FROM usage_events WHERE task_id = '$Wt'")" = "wait" ]
calls=$(jq -r .usage.requests <"$tmp/resp")
api PATCH "/api/tasks/$Wt" "{\"budget\":{\"model_calls\":$calls}}"
check "a wait's task at its budget is paused" wait_for 10 is_status "$Wt" paused
n1=$(stub_count)
sk=$(curl -fsS "$DETM_URL/api/waits/$W" | jq .skipped)
api PATCH "/api/waits/$W" '{"wake_when":"a dialog says finished"}'
skipped_more() { [ "$(curl -fsS "$DETM_URL/api/waits/$W" | jq .skipped)" -gt "$sk" ]; }
check "over budget the wait keeps watching without judging" wait_for 15 skipped_more
check "... no model call reached the stub" [ "$(stub_count)" -eq "$n1" ]
api GET "/api/waits/$W"
expect "... and the wait is still watching" 200 '.status == "watching"'

echo "-- ${SECONDS}s"
# ======== /metrics ========
metric() { # metric SELECTOR: the value of one sample (python parser), or "none"
	curl -fsS ${DETM_TOKEN:+-H "Authorization: Bearer $DETM_TOKEN"} "$DETM_URL/metrics" >"$tmp/metrics.txt" &&
		python3 tests/usage/metrics.py "$tmp/metrics.txt" "$1"
}
check "/metrics parses as Prometheus text (types, labels, histograms)" python3 tests/usage/metrics.py <(curl -fsS "$DETM_URL/metrics")
sel='detm_http_requests_total{method="GET",route="/api/tasks/{id}",status="200"}'
before=$(metric "$sel"); [ "$before" = none ] && before=0
for i in 1 2 3; do curl -fsS -o /dev/null "$DETM_URL/api/tasks/$Wt"; done
moved() { [ "$(metric "$sel")" = "$((before + 3))" ]; }
check "the request counter for GET /api/tasks/{id} moves by 3 after 3 requests" wait_for 10 moved
hsel='detm_http_request_duration_seconds_count{method="GET",route="/api/tasks/{id}"}'
check "the latency histogram counts them too" [ "$(metric "$hsel")" -ge 3 ]
check "model calls by backend" [ "$(metric 'detm_model_calls_total{provider="openrouter",model="google/gemini-2.0-flash-001"}')" -ge 1 ]
check "active tasks and watching waits are gauges" [ "$(metric 'detm_waits_watching')" -ge 1 ]
check "wake deliveries are counted" [ "$(metric 'detm_wake_events_total{result="delivered"}')" -ge 1 ]
check "the database size is there" [ "$(metric 'detm_db_size_bytes{file="data.db"}')" -gt 0 ]

# ======== the dashboard's usage panel (headless chromium) ========
chrome=${CHROMIUM:-/usr/bin/chromium}
if [ -x "$chrome" ] && npm_ci tests/dashboard playwright-core; then
	run_part dashboard env DETM_URL="$DETM_URL" CHROMIUM="$chrome" TASK="$C" node tests/usage/dashboard.mjs
	PASS=$((PASS + total_pass)) FAIL=$((FAIL + total_fail))
else
	bad "dashboard panel" "needs $chrome and playwright-core (npm ci in tests/dashboard)"
fi

DETM_TOKEN=tok-$$ start || { finish; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' "$DETM_URL/metrics")
check "/metrics without the token: 401" [ "$code" = 401 ]
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer tok-$$" "$DETM_URL/metrics")
check "/metrics with the token: 200" [ "$code" = 200 ]
unset DETM_TOKEN

finish
