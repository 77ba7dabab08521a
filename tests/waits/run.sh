#!/usr/bin/env bash
# run.sh - the smart-wait suite: a real detmd watching real Xvfb displays
# with real X clients, judged through bin/vision-stub (our stand-in that
# speaks Ollama/OpenAI/Anthropic wire formats and records every request).
#
#   an xterm that changes after a delay resolves a wait; a still screen
#   makes no model calls; timeouts; cancel; update; long-poll; task end
#   cancels; restart mid-wait resumes; an expired wait is timed out at
#   start; two waits on two displays are independent; every backend through
#   the daemon; a failing backend fails the wait; passthrough; bad input;
#   parallel churn of create/cancel/update/task end/delete; every reply about
#   a wait read while it resolves is one consistent snapshot.
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init waits --rm-data
stub_start || { bad "vision-stub starts"; finish; exit 1; }
key=$KEY

wait_for_s() { local t=$1 i; shift; for i in $(seq 1 $((t * 10))); do "$@" && return 0; sleep 0.1; done; return 1; }
new_task() { api POST /api/tasks "{\"name\":\"$1\",\"display\":true}" >/dev/null; jqr .task_id; }
xrun() { # xrun TASK cmd...: an X client on the task's display
	local t=$1 d a; shift
	d=$(curl -s "$DETM_URL/api/tasks/$t" | jq -r .metadata.display)
	a=$(curl -s "$DETM_URL/api/tasks/$t" | jq -r .metadata.xauthority)
	DISPLAY=$d XAUTHORITY=$a "$@" 2>>"$tmp/clients.log" &
	pids+=($!)
}
wait_create() { # wait_create TASK CONDITION TIMEOUT [extra json]
	api POST /api/waits "{\"task_id\":\"$1\",\"target\":\"screen\",\"wake_when\":\"$2\",\"timeout\":$3${4:+,$4}}" >/dev/null
	jqr .wait_id
}
printf '#!/bin/sh\ncat >> %s/wake.log\necho >> %s/wake.log\n' "$tmp" "$tmp" >"$tmp/wake.sh"
chmod +x "$tmp/wake.sh"
export ACU_WAKE_COMMAND="$tmp/wake.sh" ACU_OPENCLAW_CLI=""
export OLLAMA_URL="$STUB" ACU_VLLM_URL="$STUB" ACU_CLAUDE_URL="$STUB" ACU_OPENROUTER_URL="$STUB" \
	ACU_VLLM_API_KEY="$key" ANTHROPIC_API_KEY="$key" OPENROUTER_API_KEY="$key" ACU_VISION_TIMEOUT_MS=5000
start() { # start [VAR=value...]: a daemon judging with the stub (Ollama API unless told)
	unset ACU_VISION_BACKEND ACU_WAIT_MAX_FAILURES ACU_SETTLE_S ACU_WAIT_REJUDGE_S
	local kv
	for kv in "$@"; do export "${kv?}"; done
	daemon_start
}

start ACU_WAIT_REJUDGE_S=2 || { bad "daemon start"; finish; exit 1; }
api GET /api/capabilities >/dev/null
expect "capabilities: waits on, vision backend named" 200 '.capabilities.waits and .vision.backend == "ollama"'

# ---- a screen that changes after a delay resolves the wait ----
stub_script '{"answers":["NO: nothing yet","YES: the build finished line is visible"]}'
T=$(new_task changes)
api POST /api/waits "{\"task_id\":\"$T\",\"target\":\"screen\",\"wake_when\":\"the terminal says build finished\",\"timeout\":60}" >/dev/null
expect "POST /api/waits returns the wait at once" 201 '.status == "watching" and .timeout_s == 60 and .target == "screen" and (.action_id | length) == 8'
W=$(jqr .wait_id); WACT=$(jqr .action_id)
sleep 1
check "the first look costs one model call" [ "$(stub_count)" -eq 1 ]
xrun "$T" xterm -geometry 60x10+0+0 -e sh -c 'sleep 1; echo build finished; sleep 60'
api GET "/api/waits/$W?block_s=20" >/dev/null
expect "long-poll returns when the wait resolves" 200 '.status == "resolved" and .verdict == "YES" and (.detail | test("build finished")) and .evaluations >= 2'
check "the model saw the condition and JPEG frames" sh -c "[ \"\$(curl -fsS $STUB/_stub/requests | jq '[.requests[] | select(.api == \"ollama\")] | last | (.prompt | test(\"build finished\")) and (.images | all(.jpeg and .width <= 960))')\" = true ]"
woke() { grep -q "\"event\":\"$1\".*$2" "$tmp/wake.log" 2>/dev/null; }
check "the gateway is woken: wait_resolved event to ACU_WAKE_COMMAND" wait_for_s 5 woke wait_resolved "$W"
check "... its text names the task and the call to make next" \
	grep -q "\"event\":\"wait_resolved\".*\"text\":\"\\[smart_wait resolved\\] Job $W: .*\\[task $T: call task_summary" "$tmp/wake.log"
api GET "/api/tasks/$T/messages" >/dev/null
expect "the task thread says so" 200 '[.messages[] | select(.role == "wait")] | last | .content | test("smart_wait resolved.*build finished")'
api GET "/api/tasks/$T/actions/$WACT" >/dev/null
expect "the wait is a completed wait action on the task" 200 '.action_type == "wait" and .status == "completed" and (.output_data | tostring | test("resolved"))'

# ---- a still screen makes no model calls ----
stub_script '{"answers":["NO: still nothing"]}'
T2=$(new_task still)
W2=$(wait_create "$T2" "a dialog appears" 60)
sleep 2
api GET "/api/waits/$W2" >/dev/null
lf=$(jqr .last_frame_at); sk=$(jqr .skipped)
sleep 5
n=$(stub_count)
check "a still screen: one model call in 7 s, though ACU_WAIT_REJUDGE_S is 2 ($n)" [ "$n" -eq 1 ]
api GET "/api/waits/$W2" >/dev/null
expect "and the gate counted skipped checks" 200 '.skipped >= 1 and .evaluations == 1 and .status == "watching"'
expect "XDamage: nothing drawn, so no grabs at all (last_frame_at unchanged)" 200 \
	".last_frame_at == \"$lf\" and .skipped > $sk"
api GET /api/device >/dev/null

# ---- update, cancel ----
api PATCH "/api/waits/$W2" '{"wake_when":"a different dialog","message":"changed my mind"}' >/dev/null
expect "PATCH changes the condition" 200 '.wake_when == "a different dialog" and .note == "changed my mind"'
sleep 1
check "a new condition is judged at once" [ "$(stub_count)" -eq 2 ]
check "with the new condition in the prompt" sh -c "[ \"\$(curl -fsS $STUB/_stub/requests | jq '[.requests[] | select(.api == \"ollama\")] | last | .prompt | test(\"a different dialog\")')\" = true ]"
check "and how long the wait has run (7 s and more)" sh -c "[ \"\$(curl -fsS $STUB/_stub/requests | jq '[.requests[] | select(.api == \"ollama\")] | last | .prompt | test(\"WAITING FOR: ([7-9]|[1-9][0-9])s\")')\" = true ]"
api PATCH "/api/waits/$W2" '{"timeout":2}' >/dev/null
expect "PATCH timeout restarts the clock" 200 '.timeout_s == 2 and .remaining_seconds <= 2'
api GET "/api/waits/$W2?block_s=10" >/dev/null
expect "and the wait times out on time" 200 '.status == "timed_out"'
check "a timeout wakes the gateway too" wait_for_s 5 woke wait_timed_out "$W2"
api PATCH "/api/waits/$W2" '{"timeout":30}' >/dev/null
expect "a finished wait cannot change" 409
W3=$(wait_create "$T2" "anything" 60)
api DELETE "/api/waits/$W3?reason=not%20needed" >/dev/null
expect "DELETE cancels" 200 '.status == "cancelled" and .detail == "not needed"'
api DELETE "/api/waits/$W3" >/dev/null
expect "cancelling again changes nothing" 200 '.status == "cancelled" and .detail == "not needed"'
W4=$(wait_create "$T2" "anything" 60)
api PATCH "/api/tasks/$T2" '{"status":"completed"}' >/dev/null
api GET "/api/waits/$W4" >/dev/null
expect "finishing the task cancels its waits" 200 '.status == "cancelled" and (.detail | test("completed"))'
api GET "/api/waits?task_id=$T2&status=all" >/dev/null
expect "GET /api/waits?task_id&status=all lists them" 200 '.count == 3'
api GET "/api/waits" >/dev/null
expect "GET /api/waits lists the watching ones" 200 '[.waits[].status] | all(. == "watching")'

# ---- two displays, two waits, independent ----
stub_script '{"rules":[{"contains":"alpha","answer":"YES: alpha is there"},{"contains":"beta","answer":"NO: no beta"}]}'
TA=$(new_task alpha); TB=$(new_task beta)
WA=$(wait_create "$TA" "alpha shows" 30)
WB=$(wait_create "$TB" "beta shows" 30)
api GET "/api/waits/$WA?block_s=10" >/dev/null
expect "wait on display A resolves" 200 '.status == "resolved"'
api GET "/api/waits/$WB" >/dev/null
expect "while the wait on display B keeps watching" 200 '.status == "watching" and .evaluations >= 1'
api DELETE "/api/waits/$WB" >/dev/null

# ---- restart mid-wait; an expired wait at start ----
stub_script '{"answers":["NO: not yet"]}'
TR=$(new_task restart)
WR=$(wait_create "$TR" "restart test" 120)
WX=$(wait_create "$TR" "expires while down" 2)
sleep 1
daemon_stop
sleep 2
start || bad "restart"
api GET "/api/waits/$WX" >/dev/null
expect "an expired wait is timed out at start" 200 '.status == "timed_out" and (.detail | test("not running"))'
api GET "/api/waits/$WR" >/dev/null
expect "an unexpired wait resumes watching, with what it had counted" 200 '.status == "watching" and .evaluations >= 1 and .verdict == "NO"'
stub_script '{"answers":["YES: seen after the restart"]}'
api POST "/api/tasks/$TR/display" '{}' >/dev/null
api PATCH "/api/waits/$WR" '{"wake_when":"restart test again"}' >/dev/null
api GET "/api/waits/$WR?block_s=10" >/dev/null
expect "and resolves after the restart" 200 '.status == "resolved" and (.detail | test("after the restart"))'
daemon_kill9
start || bad "restart after kill -9"
api GET "/api/waits/$WR" >/dev/null
expect "a resolved wait survives kill -9" 200 '.status == "resolved"'

# ---- a failing backend fails the wait, with the error ----
daemon_stop
start ACU_WAIT_MAX_FAILURES=2 || bad "start"
stub_script '{"fail_always":503}'
TF=$(new_task failing)
WF=$(wait_create "$TF" "anything" 60)
api GET "/api/waits/$WF?block_s=30" >/dev/null
expect "a backend that keeps failing fails the wait" 200 '.status == "failed" and (.detail | test("503"))'
api GET /api/health >/dev/null
expect "and the daemon stays healthy" 200

# ---- every backend through the daemon ----
for b in vllm claude openrouter; do
	daemon_stop
	start ACU_VISION_BACKEND=$b || bad "start $b"
	stub_script "{\"answers\":[\"YES: $b saw it\"]}"
	TB=$(new_task "$b")
	WB=$(wait_create "$TB" "backend $b" 20)
	api GET "/api/waits/$WB?block_s=10" >/dev/null
	expect "backend $b resolves a wait through the daemon" 200 ".status == \"resolved\" and .backend == \"$b\" and (.detail | test(\"$b saw it\")) and .tokens.in > 0"
	check "backend $b sent its key" sh -c "[ \"\$(curl -fsS $STUB/_stub/requests | jq -r '[.requests[] | select(.api != \"health\")] | last | (.headers.authorization // .headers[\"x-api-key\"])')\" != null ]"
done

# ---- passthrough: changed, then still ----
daemon_stop
start ACU_VISION_BACKEND=passthrough ACU_SETTLE_S=2 || bad "start passthrough"
TP=$(new_task passthrough)
WP=$(wait_create "$TP" "anything changes" 30)
sleep 2
api GET "/api/waits/$WP" >/dev/null
expect "passthrough: a still screen keeps watching" 200 '.status == "watching"'
xrun "$TP" xterm -geometry 40x5+10+10 -e sleep 60
api GET "/api/waits/$WP?block_s=15" >/dev/null
expect "passthrough: resolves when the screen changed and settled" 200 '.status == "resolved" and .verdict == "CHANGED"'

# ---- bad input ----
api POST /api/waits '{"target":"pty:1","wake_when":"x"}' >/dev/null
expect "unknown target type is 400" 400 '.error.field == "target"'
api POST /api/waits '{"target":"screen"}' >/dev/null
expect "missing wake_when is 400" 400 '.error.field == "wake_when"'
api POST /api/waits '{"wake_when":"x","timeout":0}' >/dev/null
expect "timeout 0 is 400" 400 '.error.field == "timeout"'
api POST /api/waits '{"wake_when":"x","task_id":"nosuch12"}' >/dev/null
expect "unknown task is 404" 404
api GET /api/waits/nosuch12 >/dev/null
expect "unknown wait is 404" 404 '.error.field == "wait_id"'
api GET "/api/waits/$WP?block_s=999" >/dev/null
expect "block_s over the cap is 400" 400 '.error.field == "block_s"'
api POST /api/waits "{\"task_id\":\"$T2\",\"wake_when\":\"x\"}" >/dev/null
expect "a wait on a finished task is 409" 409
# ---- churn: waits created, cancelled, updated, read, their task ended or
# deleted, all from parallel clients (a job freed while still queued crashed
# detmd here); under make asan-test this runs with ASan watching ----
tests/waits/churn.py "$DETM_URL" 12 40 >"$tmp/churn.json" 2>"$tmp/churn.err"
check "churn: detmd is alive after 12 rounds of 40 parallel waits" kill -0 "$DETM_PID"
check "churn: every wait was created ($(jq -c . "$tmp/churn.json"))" jq -e '.created == 480 and .rounds == 12' "$tmp/churn.json"
check "churn: no 5xx and no failed request" jq -e '."5xx" == 0 and .errors == 0' "$tmp/churn.json"
check "churn: no wait is left watching" jq -e '.watching == 0' "$tmp/churn.json"
api GET /api/health >/dev/null
expect "churn: detmd answers health after it" 200 '.status == "ok"'

# ---- a wait read while it resolves is one snapshot: a GET once said the
# text "is on the screen" (verdict and detail recorded) with status still
# watching (the finish not yet written). Many waits resolve at the first
# look while readers GET them and their list, and each is read back after
# the event on /api/events that announces its end ----
# (On the old code this caught the half-finished wait in about one run in
# three or four under two busy loops: the window is a few instructions.)
daemon_stop
start || bad "start (consistent)"
stub_script '{"rules":[{"contains":"consistency","answer":"YES: consistency seen"}]}'
tests/waits/consistent.py "$DETM_URL" 10 40 10 >"$tmp/consistent.json" 2>"$tmp/consistent.err"
check "consistent: every reply read while waits resolve is one snapshot ($(jq -c '{replies,bad,examples,waits,errors}' "$tmp/consistent.json"))" \
	jq -e '.bad == 0 and .errors == 0 and .waits == 400 and .replies > .waits' "$tmp/consistent.json"
check "consistent: after the event announcing a wait's end, GET shows it resolved ($(jq -c '{unannounced,early,resets}' "$tmp/consistent.json"))" \
	jq -e '(.early | length) == 0 and (.unannounced == 0 or (.resets // 0) > 0)' "$tmp/consistent.json"

# ---- issue 20: drawing wakes the check; text conditions are read by OCR
# whatever the model backend; a model's FINAL_JSON verdict ----
daemon_stop
start || bad "start (issue 20)"
ms_now() { date +%s%3N; }
# xterm_at TASK TEXT DELAY [TEXT2 DELAY2]: a still xterm that prints TEXT after DELAY s,
# writing the time it did (ms) to $tmp/drawn.<TEXT>
xterm_at() {
	local t=$1 a=$2 d=$3 b=${4:-} d2=${5:-0}
	xrun "$t" xterm -geometry 80x24+0+0 -fa Mono -fs 12 -e sh -c \
		"sleep $d; date +%s%3N > '$tmp/drawn.1'; echo '$a'; ${b:+sleep $d2; date +%s%3N > '$tmp/drawn.2'; echo '$b';} sleep 120"
}
TT=$(new_task textjudge)
rm -f "$tmp"/drawn.*
xterm_at "$TT" "Download complete" 7
sleep 2
stub_script '{"answers":["NO: a model was asked about a text condition"]}'
api POST /api/waits "{\"task_id\":\"$TT\",\"wake_when\":\"text:\\\"Download complete\\\"\",\"timeout\":60}" >/dev/null
expect "auto judge: a text condition on a daemon with a model backend goes to OCR, and says why" 201 \
	'.judge == "auto" and .judged_by == "ocr" and (.judge_reason | test("text condition")) and .backend == "ocr"'
WT=$(jqr .wait_id)
api GET "/api/waits/$WT?block_s=40" >/dev/null; t1=$(ms_now)
expect "auto judge: OCR resolves when the xterm prints the phrase after 5 s of stillness" 200 \
	'.status == "resolved" and .judged_by == "ocr" and (.detail | test("Download complete"))'
echo "   ocr wait: $(jq -r '"woken_by \(.woken_by), wakeups \(.wakeups | tojson), evaluations \(.evaluations)"' "$tmp/resp"); latency from drawing to verdict: $((t1 - $(cat "$tmp/drawn.1"))) ms (target <= 1500)"
# Which path reaches the check first (XDamage or the fallback poll) depends
# on the machine's load, so only the report is checked here; the model wait
# below, which keeps drawing, checks that drawing wakes checks.
expect "the wait reports what woke the check that saw it" 200 \
	'(.woken_by == "damage" or .woken_by == "poll") and (.wakeups.damage | type) == "number" and (.wakeups.poll | type) == "number"'
check "a text condition costs no model call ($(stub_count))" [ "$(stub_count)" -eq 0 ]

TM=$(new_task modeljudge)
rm -f "$tmp"/drawn.*
xterm_at "$TM" "server ready" 7 "server ready again" 3
sleep 2
stub_script '{"answers":["NO: nothing yet","YES\nready, I think\nFINAL_JSON: {\"decision\":\"resolved\",\"confidence\":0.2,\"evidence\":[\"a line\"],\"summary\":\"unsure\"}","YES\nthe server says ready\nFINAL_JSON: {\"decision\":\"resolved\",\"confidence\":0.93,\"evidence\":[\"server ready line\",\"prompt below it\"],\"summary\":\"The server printed ready.\"}"]}'
WM=$(wait_create "$TM" "the server looks ready in the terminal" 60)
api GET "/api/waits/$WM" >/dev/null
expect "a picture condition goes to the model, and says why" 200 '.judged_by == "model" and (.judge_reason | test("not a text condition"))'
wait_for_s 15 test -s "$tmp/drawn.1"
sleep 1.5
api GET "/api/waits/$WM" >/dev/null
expect "a FINAL_JSON resolved with confidence 0.2 < ACU_WAIT_MIN_CONFIDENCE counts as PARTIAL" 200 \
	'.status == "watching" and .verdict == "PARTIAL" and (.detail | test("MIN_CONFIDENCE")) and .confidence == 0.2'
api GET "/api/waits/$WM?block_s=30" >/dev/null; t1=$(ms_now)
expect "the model wait resolves on the next drawing, with the FINAL_JSON summary and evidence" 200 \
	'.status == "resolved" and .evaluations == 3 and .detail == "The server printed ready." and .summary == "The server printed ready." and .evidence == ["server ready line","prompt below it"] and .confidence == 0.93'
echo "   model wait: $(jq -r '"woken_by \(.woken_by), wakeups \(.wakeups | tojson)"' "$tmp/resp"); latency from drawing to verdict: $((t1 - $(cat "$tmp/drawn.2"))) ms (target <= 1000 + the stand-in's ~0 ms)"
expect "drawing woke its checks" 200 '.wakeups.damage >= 2'
check "the prompt asks for FINAL_JSON and says how long the wait ran" sh -c "[ \"\$(curl -fsS $STUB/_stub/requests | jq '[.requests[] | select(.api == \"ollama\")] | last | .prompt | test(\"FINAL_JSON\") and test(\"WAITING FOR: [0-9]+s\")')\" = true ]"

stub_script '{"answers":["NO: the model read it"]}'
api POST /api/waits "{\"task_id\":\"$TM\",\"wake_when\":\"text:\\\"nothing like this\\\"\",\"timeout\":30,\"judge\":\"model\"}" >/dev/null
expect "judge model: a text condition goes to the model when asked" 201 '.judge == "model" and .judged_by == "model"'
WJ=$(jqr .wait_id)
check "and the model is asked" wait_for_s 5 sh -c "[ \"\$(curl -fsS $STUB/_stub/requests | jq '[.requests[] | select(.api == \"ollama\")] | length')\" -ge 1 ]"
api DELETE "/api/waits/$WJ" >/dev/null
api POST /api/waits '{"wake_when":"a window opens","judge":"ocr"}' >/dev/null
expect "judge ocr on a picture condition is 400, saying how to write a text one" 400 '.error.field == "wake_when" and (.error.message | test("text:"))'
api POST /api/waits '{"wake_when":"text:\"x\"","judge":"oracle"}' >/dev/null
expect "an unknown judge is 400" 400 '.error.field == "judge"'

# ---- a model backend that is down: text still works, a picture is 503 at once ----
daemon_stop
start OLLAMA_URL=http://127.0.0.1:9 || bad "start with the model down"
check "GET /api/health reports the model unreachable" wait_for_s 10 sh -c \
	"curl -fsS $DETM_URL/api/health | jq -e '.vision.reachable == false and .vision.backend == \"ollama\" and .vision.ocr.ok and .vision.judges.text == \"ocr\"' >/dev/null"
check "the startup log says which judge takes which conditions" \
	grep -q "text conditions.*-> OCR in process.*other conditions -> the ollama model" "$DETM_DATA/stdout.log"
TD=$(new_task modeldown)
xterm_at "$TD" "Download complete" 4
t0=$(ms_now)
api POST /api/waits "{\"task_id\":\"$TD\",\"wake_when\":\"the dialog closes\",\"timeout\":60}" >/dev/null
expect "a picture condition with the model down is 503 at creation, naming the backend, its URL and the fix" 503 \
	'(.error.message | test("ollama")) and (.error.message | test("127.0.0.1:9")) and (.error.message | test("start Ollama")) and (.error.message | test("text:"))'
check "at once ($(( $(ms_now) - t0 )) ms), not after retries" [ $(( $(ms_now) - t0 )) -lt 5000 ]
api POST /api/waits "{\"task_id\":\"$TD\",\"wake_when\":\"wait until \\\"Download complete\\\" appears\",\"timeout\":60}" >/dev/null
expect "a quoted phrase with the model down is accepted, for OCR" 201 '.judged_by == "ocr"'
WD=$(jqr .wait_id)
api GET "/api/waits/$WD?block_s=40" >/dev/null
expect "and resolves by OCR" 200 '.status == "resolved" and .judged_by == "ocr" and (.detail | test("Download complete"))'
daemon_stop
start ACU_VISION_BACKEND=claude ANTHROPIC_API_KEY= || bad "start claude without a key"
api POST /api/waits '{"wake_when":"the dialog closes","timeout":10}' >/dev/null
expect "claude without a key: detmd starts, and a picture wait is 503 naming ANTHROPIC_API_KEY" 503 '.error.message | test("ANTHROPIC_API_KEY")'
api POST /api/waits '{"wake_when":"text:\"Saved\"","timeout":10}' >/dev/null
expect "while a text wait is taken, for OCR" 201 '.judged_by == "ocr"'
api DELETE "/api/waits/$(jqr .wait_id)" >/dev/null
export OLLAMA_URL="$STUB" ANTHROPIC_API_KEY="$key"

# ---- ocr: text conditions judged in process, no model, no stand-in ----
daemon_stop
start ACU_VISION_BACKEND=ocr || bad "start ocr"
curl -fsS -X DELETE "$STUB/_stub/requests" >/dev/null
TO=$(new_task ocr)
api POST /api/waits "{\"task_id\":\"$TO\",\"wake_when\":\"text:\\\"Download complete\\\"\",\"timeout\":60}" >/dev/null
expect "ocr: a text condition is accepted" 201
WO=$(jqr .wait_id)
api POST /api/waits "{\"task_id\":\"$TO\",\"wake_when\":\"the dialog closes\",\"timeout\":60}" >/dev/null
expect "ocr: a condition that is not about text is 400, with how to write one" 400 '.error.field == "wake_when" and (.error.message | test("text:"))'
xrun "$TO" xterm -geometry 70x12+40+40 -T dl -e sh -c 'sleep 2; echo Download complete; sleep 60'
api GET "/api/waits/$WO?block_s=40" >/dev/null
expect "ocr: resolves when a real xterm prints the phrase" 200 '.status == "resolved" and (.detail | test("Download complete"))'
api POST /api/waits "{\"task_id\":\"$TO\",\"wake_when\":\"text-gone:\\\"Download complete\\\"\",\"timeout\":60}" >/dev/null
WG=$(jqr .wait_id)
# Once it has been judged at least once (not after a fixed time: OCR under
# ASan on a busy machine can take longer than the 3 s this slept).
wait_for 30 sh -c "curl -s $DETM_URL/api/waits/$WG | jq -e '.evaluations >= 1' >/dev/null"
api GET "/api/waits/$WG" >/dev/null
expect "ocr: text-gone keeps watching while the phrase is there" 200 '.status == "watching" and .evaluations >= 1'
api POST /api/desktop/action "{\"task_id\":\"$TO\",\"action\":\"close_window\",\"window_name\":\"dl\",\"force\":true}" >/dev/null
api GET "/api/waits/$WG?block_s=40" >/dev/null
expect "ocr: text-gone resolves when the window is gone" 200 '.status == "resolved" and (.detail | test("no longer"))'
check "ocr: no model server was asked" [ "$(stub_count)" -eq 0 ]

# ---- issue 34: text replaced in place on its line. OCR read only the
# changed box ("t finished"), the screen then stayed still and every later
# check was skipped: the wait timed out with the text on the screen. Now the
# judge reads the whole line around a change, a text judge's gate counts a
# few glyphs redrawn, and a NO on changed regions owes one read of the whole
# target once the screen is still ----
# xterm_replace TASK FIRST SECOND DELAY [FONT...]: an xterm showing FIRST,
# overwritten in place DELAY s later (\r, then SECOND padded with spaces);
# the time of the change (ms) goes to $tmp/replaced.TASK
xterm_replace() {
	local t=$1 a=$2 b=$3 d=$4; shift 4
	xrun "$t" xterm -geometry 80x24+0+0 "$@" -e sh -c \
		"printf '%s' '$a'; sleep $d; date +%s%3N > '$tmp/replaced.$t'; printf '\\r%-40s' '$b'; sleep 120"
}
# replaced_wait NAME FIRST SECOND [FONT...]: a task ($RT), its xterm, and a
# wait for SECOND ($RW) made while FIRST is on the screen
replaced_wait() {
	local n=$1 a=$2 b=$3; shift 3
	RT=$(new_task "$n")
	xterm_replace "$RT" "$a" "$b" 6 "$@"
	RW=$(wait_create "$RT" "text:\\\"$b\\\"" 30)
}
# Xft DejaVu Sans Mono 12 and xterm's default 6x13 bitmap font (its few
# changed glyphs are under the model gate's threshold)
replaced_wait replace-export "Exporting, please wait..." "Export finished" -fa Mono -fs 12; TE=$RT WE=$RW
replaced_wait replace-save "Saving..." "Saved"; WS=$RW
replaced_wait replace-download "Downloading 40%" "Download complete"; WL=$RW
WN=$(wait_create "$TE" "text:\\\"Export failed\\\"" 40)
for c in "$WE Export finished" "$WS Saved" "$WL Download complete"; do
	w=${c%% *} phrase=${c#* }
	api GET "/api/waits/$w?block_s=40" >/dev/null
	expect "replaced in place: \"$phrase\" over the old text on its line resolves the wait" 200 \
		".status == \"resolved\" and .verdict == \"YES\" and .judged_by == \"ocr\" and (.detail | test(\"$phrase\"))"
	t=$(jqr .task_id)
	ra=$(jqr 'select(.status == "resolved") | .resolved_at')
	if [ -n "$ra" ] && [ -s "$tmp/replaced.$t" ]; then
		lat=$(( $(date -d "$ra" +%s%3N) - $(cat "$tmp/replaced.$t") ))
		echo "   \"$phrase\": resolved $lat ms after the change ($(jq -r '"woken_by \(.woken_by), evaluations \(.evaluations), skipped \(.skipped)"' "$tmp/resp"))"
		check "and soon after the change, well within the wait's timeout ($lat ms < 5000)" [ "$lat" -lt 5000 ]
	fi
done
# The wait for a phrase that never appears, on the "Export finished" screen:
# its NO on the changed line is followed by one read of the whole screen,
# then nothing while the screen is still.
check "replaced in place: a NO on the changed line is followed by a re-read of the whole screen" \
	wait_for_s 10 sh -c "curl -s $DETM_URL/api/waits/$WN | jq -e '.woken_by == \"reread\" and .status == \"watching\"' >/dev/null"
sleep 1
ev=$(curl -s "$DETM_URL/api/waits/$WN" | jq .evaluations)
sleep 2
api GET "/api/waits/$WN" >/dev/null
expect "and only one: a still screen is not read again ($ev evaluations)" 200 ".status == \"watching\" and .evaluations == $ev and .verdict == \"NO\""
api GET "/api/waits/$WN?block_s=40" >/dev/null
expect "replaced in place: a phrase that never appears still times out (the re-read claims nothing)" 200 \
	'.status == "timed_out" and .verdict == "TIMEOUT"'

# ---- issue 39: two windows side by side, their lines at different heights
# (a terminal printing the time twice a second at 11 pt, another at 12 pt
# with seven lines). A run of rows over the whole screen held a line of one
# and parts of two lines of the other, and tesseract read "mark 6 done" as
# "mark done": the wait never resolved with the phrase on the screen. Now
# the box is cut into pieces at wide blank gaps and each piece into its own
# lines ----
TS=$(new_task side-by-side)
xrun "$TS" xterm -geometry 80x20+0+0 -fa Mono -fs 11 -e sh -c 'while :; do date +%T.%N; sleep 0.5; done'
xrun "$TS" xterm -geometry 50x8+730+0 -fa Mono -fs 12 -e sh -c \
	"for i in 1 2 3 4 5 6 7; do echo mark \$i done; done; touch '$tmp/marks'; sleep 120"
wait_for_s 30 test -e "$tmp/marks"
WSB=$(wait_create "$TS" "text:\\\"mark 6 done\\\"" 40)
api GET "/api/waits/$WSB?block_s=40" >/dev/null
expect "side by side: a line of the window beside a scrolling terminal resolves the wait" 200 \
	'.status == "resolved" and .verdict == "YES" and (.detail | test("mark 6 done"))'
jq -r '"   side by side: \(.status) after \(.evaluations) evaluations: \(.detail)"' "$tmp/resp"

# ---- issue 34 in Chromium: a page whose script replaces a span's text on a
# click ("Exporting" and "Export" share their first glyphs here too) ----
if command -v chromium >/dev/null; then
	TC=$(new_task replace-chromium)
	page="data:text/html,<title>Export</title><body style='margin:40px;font:18px sans-serif'><p>Status: <span id=s>Exporting, please wait...</span></p>
<script>document.addEventListener('click',()=>{document.getElementById('s').textContent='Export finished'})</script>"
	xrun "$TC" setsid chromium --no-sandbox --no-first-run --disable-gpu --user-data-dir="$tmp/chromium" \
		--window-position=0,0 --window-size=1280,720 --app="$page"
	WU=$(wait_create "$TC" "text:\\\"Exporting, please wait\\\"" 120)
	api GET "/api/waits/$WU?block_s=120" >/dev/null
	expect "chromium: the page is up (an OCR wait saw its first text)" 200 '.status == "resolved"'
	WC=$(wait_create "$TC" "text:\\\"Export finished\\\"" 30)
	wait_for_s 10 sh -c "curl -s $DETM_URL/api/waits/$WC | jq -e '.evaluations >= 1' >/dev/null"
	t0=$(ms_now)
	api POST /api/desktop/action "{\"task_id\":\"$TC\",\"action\":\"click\",\"x\":640,\"y\":400}" >/dev/null
	api GET "/api/waits/$WC?block_s=40" >/dev/null
	expect "chromium: the span's text replaced by script resolves the wait" 200 \
		'.status == "resolved" and .verdict == "YES" and (.detail | test("Export finished"))'
	ra=$(jqr 'select(.status == "resolved") | .resolved_at')
	[ -n "$ra" ] && echo "   chromium: resolved $(( $(date -d "$ra" +%s%3N) - t0 )) ms after the click ($(jq -r '"woken_by \(.woken_by), evaluations \(.evaluations)"' "$tmp/resp"))"
	{ kill -9 -- "-${pids[-1]}"; wait "${pids[-1]}"; } 2>/dev/null
else
	bad "chromium is installed" "run scripts/install-deps.sh test"
fi

daemon_stop

finish
