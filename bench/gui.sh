#!/usr/bin/env bash
# gui.sh - gui_do overhead excluding model latency at 1080p (issue 7):
# capture + JPEG encode + parse + ground-answer mapping + XTest act (+ the
# 320-px after-screenshot), as detmd itself times it.
#
# A real detmd drives a 1920x1080 task display; the uitars backend talks to
# bin/vision-stub (Ollama wire format), which answers at once with a fixed
# click(start_box=...). ACU_GROUNDING_MAX_DIM=1920, so the full 1080p frame
# is encoded (q80) and sent. For each call the reply's timing gives
#   total_ms  the whole gui_do inside detmd
#   model_ms  the HTTP round trip to the model (stub: loopback + its parsing)
# and overhead = total_ms - model_ms. Also measured: gui_do with explicit
# coordinates (no capture, no model) with and without the after-screenshot,
# and the capture+encode share. Target: overhead p50 <= 15 ms. Reported,
# never enforced. Tunables: BENCH_GUI_CALLS (50), DETM_BIN (bin).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

N=${BENCH_GUI_CALLS:-50}
TARGET_MS=15
tmp=$(mktemp -d /tmp/detm-bench-gui.XXXXXX)
stub=
cleanup() { daemon_stop; [ -n "$stub" ] && kill "$stub" 2>/dev/null; rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"; }
trap cleanup EXIT
die() { echo "bench gui: $*" >&2; exit 1; }
for tool in curl jq xterm; do command -v "$tool" >/dev/null || die "$tool not found"; done
[ -x "$DETM_BIN/vision-stub" ] || die "$DETM_BIN/vision-stub missing (make test-bins)"

"$DETM_BIN/vision-stub" --port 0 --port-file "$tmp/stub.port" 2>"$tmp/stub.log" &
stub=$!
for i in $(seq 1 100); do [ -s "$tmp/stub.port" ] && break; sleep 0.05; done
STUB="http://127.0.0.1:$(cat "$tmp/stub.port")"
curl -fsS -X POST "$STUB/_stub/script" -d '{"answers":["click(start_box='"'"'(450,330)'"'"')"]}' >/dev/null ||
	die "stub did not start"

export OLLAMA_URL="$STUB" ACU_GUI_AGENT_BACKEND=uitars ACU_GROUNDING_MAX_DIM=1920
unset OPENROUTER_API_KEY
daemon_start || die "detmd did not start"
T=$(curl -fsS -X POST "$DETM_URL/api/tasks" -H 'Content-Type: application/json' \
	-d '{"name":"bench-gui","display":true,"display_resolution":"1920x1080"}' | jq -r .task_id)
meta=$(curl -fsS "$DETM_URL/api/tasks/$T")
DISPLAY=$(jq -r .metadata.display <<<"$meta") XAUTHORITY=$(jq -r .metadata.xauthority <<<"$meta") \
	xterm -geometry 80x24+300+200 -T bench -e sleep 600 2>/dev/null &
xt=$!
sleep 0.5

run() { # run LABEL INSTRUCTION AFTER(true|false) JQ-EXPR-FOR-ONE-NUMBER
	local label=$1 instr=$2 after=$3 expr=$4 i
	: >"$tmp/vals"
	for i in $(seq 1 "$N"); do
		curl -fsS -X POST "$DETM_URL/api/gui/do" -H 'Content-Type: application/json' \
			-d "{\"task_id\":\"$T\",\"instruction\":\"$instr\",\"after_screenshot\":$after}" |
			jq -r "$expr" >>"$tmp/vals" || die "gui_do failed"
	done
	sort -n "$tmp/vals" | awk -v l="$label" '{ v[NR] = $1 } END {
		printf "  %-52s p50 %7.2f ms  p95 %7.2f ms  max %7.2f ms\n", l, v[int(NR * 0.5 + 0.5)],
		    v[int(NR * 0.95 + 0.5)], v[NR] }'
	sort -n "$tmp/vals" | awk '{ v[NR] = $1 } END { print v[int(NR * 0.5 + 0.5)] }' >"$tmp/p50"
}

echo "gui_do at 1920x1080, $N calls each (detmd's own timing; the stub model answers at once)"
run "grounded: capture+encode (1080p JPEG q80)" "click the bench window" false '.timing.capture_ms'
run "grounded: act (XTest click)" "click the bench window" false '.timing.act_ms'
run "grounded: model round trip (stub, excluded)" "click the bench window" false '.grounding.model_ms'
run "grounded: overhead = total - model (no after-shot)" "click the bench window" false \
	'(.timing.total_ms - .grounding.model_ms)'
over=$(cat "$tmp/p50")
run "grounded: overhead = total - model (+ after-shot)" "click the bench window" true \
	'(.timing.total_ms - .grounding.model_ms)'
over_after=$(cat "$tmp/p50")
run "explicit click(450, 330): total (no after-shot)" "click(450, 330)" false '.timing.total_ms'
run "explicit click(450, 330): total (+ 320-px after-shot)" "click(450, 330)" true '.timing.total_ms'
kill "$xt" 2>/dev/null
awk -v o="$over" -v oa="$over_after" -v t="$TARGET_MS" 'BEGIN {
	printf "target: overhead p50 <= %d ms: %.2f ms (%s); with the after-screenshot %.2f ms (%s)\n",
	    t, o, o <= t ? "met" : "NOT met", oa, oa <= t ? "met" : "NOT met" }'
