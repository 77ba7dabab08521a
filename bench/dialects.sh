#!/usr/bin/env bash
# dialects.sh - per-step overhead of the provider computer dialects
# (POST /api/computer/{dialect}) next to detm's own desktop_action, on a
# 1920x1080 task display with an xterm, on this machine:
#
#   action        one click, answered without a picture (Anthropic toolset
#                 member; desktop_action for reference)
#   step          one click and the picture the model needs next: Anthropic
#                 [left_click, screenshot] (1429x804 PNG), OpenAI a
#                 computer_call [click] (its output is a 1920x1080 PNG),
#                 Gemini click_at (a 1440x810 PNG)
#   observation   a screenshot alone, per dialect
#
# Each figure is curl's time_total (request sent to reply read) over
# BENCH_STEPS (100) requests: p50 and p95. The peer figures to read them
# against (E2B's OSWorld-v2 runs, shared/reference/peers-2026-11.md §5): one
# GUI action 0.19-0.23 s, one observation 3.1-3.6 s (median).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

STEPS=${BENCH_STEPS:-100}
tmp=$(mktemp -d /tmp/detm-bench-dialects.XXXXXX)
cleanup() { daemon_stop; kill "${xvfb:-}" "${xt:-}" 2>/dev/null; rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"; }
trap cleanup EXIT
die() { echo "bench dialects: $*" >&2; exit 1; }

mkfifo "$tmp/dfd"
Xvfb -displayfd 5 -screen 0 1024x768x24 -nolisten tcp 5>"$tmp/dfd" >/dev/null 2>&1 &
xvfb=$!
read -r shared <"$tmp/dfd" || die "Xvfb did not start"
daemon_start --display ":$shared" || die "detmd did not start"
task=$(curl -fsS -X POST "$DETM_URL/api/tasks" -H 'Content-Type: application/json' \
	-d '{"name":"bench","display":true,"display_resolution":"1920x1080"}' | jq -r .task_id)
disp=$(curl -fsS "$DETM_URL/api/tasks/$task/display" | jq -r .name)
auth=$(curl -fsS "$DETM_URL/api/tasks/$task/display" | jq -r .xauthority)
DISPLAY=$disp XAUTHORITY=$auth xterm -geometry 120x40+0+0 -e sleep 600 2>/dev/null &
xt=$!
sleep 0.5

# time PATH BODY: STEPS requests, "p50 p95" in ms
time_it() {
	local i
	: >"$tmp/t"
	for i in $(seq 1 "$STEPS"); do
		curl -sS -o /dev/null -w '%{time_total}\n' -X POST "$DETM_URL$1" \
			-H 'Content-Type: application/json' --data-binary "$2" >>"$tmp/t" || die "POST $1 failed"
	done
	sort -n "$tmp/t" | awk '{ a[NR] = $1 * 1000 } END { printf "p50 %8.2f ms   p95 %8.2f ms\n", a[int(NR * 0.5 + 0.5)], a[int(NR * 0.95 + 0.5)] }'
}
tu() { printf '{"type":"tool_use","id":"%s","name":"%s","input":%s,"toolset_name":"computer"}' "$1" "$2" "$3"; }
A="/api/computer/anthropic?task_id=$task"
O="/api/computer/openai?task_id=$task"
G="/api/computer/gemini?task_id=$task"
# a first look, so image coordinates mean something
curl -fsS -o /dev/null "$DETM_URL$A" || die "first look failed"

echo "== action (a click, no picture; $STEPS each)"
printf '%-38s %s\n' "desktop_action click" "$(time_it /api/desktop/action "{\"task_id\":\"$task\",\"action\":\"click\",\"x\":300,\"y\":300}")"
printf '%-38s %s\n' "anthropic left_click" "$(time_it "$A" "$(tu a left_click '{"coordinate":[200,200]}')")"
echo "== step (a click and the next picture)"
printf '%-38s %s\n' "anthropic left_click + screenshot" "$(time_it "$A" "[$(tu a left_click '{"coordinate":[200,200]}'),$(tu b screenshot '{}')]")"
printf '%-38s %s\n' "openai computer_call [click]" "$(time_it "$O" '{"type":"computer_call","call_id":"c","actions":[{"type":"click","button":"left","x":300,"y":300}]}')"
printf '%-38s %s\n' "gemini click_at" "$(time_it "$G" '{"name":"click_at","args":{"x":150,"y":280}}')"
echo "== observation (a screenshot)"
printf '%-38s %s\n' "anthropic screenshot (1429x804)" "$(time_it "$A" "$(tu s screenshot '{}')")"
printf '%-38s %s\n' "openai [screenshot] (1920x1080)" "$(time_it "$O" '{"type":"computer_call","call_id":"c","actions":[{"type":"screenshot"}]}')"
printf '%-38s %s\n' "gemini hover_at + picture (1440x810)" "$(time_it "$G" '{"name":"hover_at","args":{"x":500,"y":500}}')"
echo "peers: E2B OSWorld-v2 one GUI action 190-230 ms, one observation 3100-3600 ms (median)"
