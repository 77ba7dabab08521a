#!/usr/bin/env bash
# gui.sh - gui_do's own cost at 1080p, model latency excluded: capture +
# JPEG encode + request build + answer parse + act + after-thumbnail, i.e.
# total_ms - model_ms of each reply, with bin/vision-stub answering a
# UI-TARS click at once. Target (issue 7): <= 15 ms.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
N=${BENCH_GUI_N:-30}
tmp=$(mktemp -d /tmp/detm-bench-gui.XXXXXX)
pids=()
cleanup() { daemon_stop; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"; }
trap cleanup EXIT
"$DETM_BIN/vision-stub" --port 0 --port-file "$tmp/port" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
STUB="http://127.0.0.1:$(cat "$tmp/port")"
curl -fsS -X POST "$STUB/_stub/script" -d "{\"answers\":[\"click(start_box='(600,400)')\"]}" >/dev/null
mkfifo "$tmp/dfd"
Xvfb -displayfd 5 -screen 0 1920x1080x24 -nolisten tcp 5>"$tmp/dfd" >/dev/null 2>&1 &
pids+=($!)
read -r num <"$tmp/dfd"
DISPLAY=:$num xterm -geometry 120x40+0+0 -e sleep 600 2>/dev/null &
pids+=($!)
OLLAMA_URL=$STUB ACU_GUI_AGENT_BACKEND=uitars daemon_start --display ":$num" || exit 1
sleep 0.5
for i in $(seq "$N"); do
	curl -fsS -X POST "$DETM_URL/api/gui/do" -H 'Content-Type: application/json' \
		-d '{"instruction":"click the terminal"}' | jq -r '[.total_ms - .model_ms, .capture_ms, .model_ms, .act_ms] | @tsv'
done >"$tmp/t"
sort -n "$tmp/t" | awk -v n="$N" 'NR == int(n / 2) + 1 { printf "== gui_do at 1920x1080 (uitars via the stub, %d calls)\n   overhead without the model: p50 %.2f ms (capture+encode %.2f ms, stub answer %.2f ms, act+thumbnail %.2f ms)\n   target <= 15 ms: %s\n", n, $1, $2, $3, $4, ($1 <= 15 ? "met" : "NOT met") }'
