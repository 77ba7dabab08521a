#!/usr/bin/env bash
# a11y.sh - the accessibility tree at 1080p (issue 24): listing a task
# display's elements, a tree-grounded gui_find and gui_do (no model), and
# the vision path's overhead on the same screen for comparison.
#
# A real detmd, a 1920x1080 task display, a zenity --entry dialog started
# with the display's env (a field labelled "Name:", OK, Cancel). Measured:
#   elements  GET /api/desktop/elements (all visible), curl's total time
#   find      gui_find "the Name field": detmd's total_ms (tree only)
#   do        gui_do "click the Name field": grounding + XTest click, i.e.
#             total_ms - verification.ms; and the verification's own ms
#             (the effect watch, desktop/effect.h: up to settle_ms, 300 ms,
#             when nothing changes; no tree read before the press)
#   vision    gui_find "the blue thing" (no element has that name): the
#             uitars backend through bin/vision-stub, total_ms - model_ms
# Reported, never enforced. Tunables: BENCH_A11Y_CALLS (30), DETM_BIN (bin).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

N=${BENCH_A11Y_CALLS:-30}
tmp=$(mktemp -d /tmp/detm-bench-a11y.XXXXXX)
stub= zen=
cleanup() {
	[ -n "$zen" ] && kill -- "-$zen" 2>/dev/null
	daemon_stop
	[ -n "$stub" ] && kill "$stub" 2>/dev/null
	rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"
}
trap cleanup EXIT
die() { echo "bench a11y: $*" >&2; exit 1; }
for tool in curl jq zenity; do command -v "$tool" >/dev/null || die "$tool not found"; done
[ -x "$DETM_BIN/vision-stub" ] || die "$DETM_BIN/vision-stub missing (make test-bins)"

"$DETM_BIN/vision-stub" --port 0 --port-file "$tmp/stub.port" 2>"$tmp/stub.log" &
stub=$!
for i in $(seq 1 100); do [ -s "$tmp/stub.port" ] && break; sleep 0.05; done
STUB="http://127.0.0.1:$(cat "$tmp/stub.port")"
curl -fsS -X POST "$STUB/_stub/script" -d '{"answers":["click(start_box='"'"'(40,40)'"'"')"]}' >/dev/null ||
	die "stub did not start"
export OLLAMA_URL="$STUB" ACU_GUI_AGENT_BACKEND=uitars ACU_GROUNDING_MAX_DIM=1920
daemon_start || die "detmd did not start"
T=$(curl -fsS -X POST "$DETM_URL/api/tasks" -H 'Content-Type: application/json' \
	-d '{"name":"bench-a11y","display":true,"display_resolution":"1920x1080"}' | jq -r .task_id)
curl -fsS "$DETM_URL/api/tasks/$T/display" >"$tmp/disp"
(
	while IFS='=' read -r k v; do export "$k=$v"; done < <(jq -r '.env | to_entries[] | "\(.key)=\(.value)"' "$tmp/disp")
	exec setsid zenity --entry --title Bench --text "Name:" >/dev/null 2>&1
) &
zen=$!
ready() { curl -fsS "$DETM_URL/api/desktop/elements?task_id=$T&role=text" | jq -e '.count == 1' >/dev/null 2>&1; }
for i in $(seq 1 600); do ready && break; sleep 0.1; done
ready || die "zenity's field never showed in the tree"

stats() { # stats LABEL: p50/p95/max of $tmp/vals
	sort -n "$tmp/vals" | awk -v l="$1" '{ v[NR] = $1 } END {
		printf "  %-58s p50 %7.2f ms  p95 %7.2f ms  max %7.2f ms\n", l, v[int(NR * 0.5 + 0.5)],
		    v[int(NR * 0.95 + 0.5)], v[NR] }'
}
post() { curl -fsS -X POST "$DETM_URL/api/gui/$1" -H 'Content-Type: application/json' -d "$2"; }

count=$(curl -fsS "$DETM_URL/api/desktop/elements?task_id=$T" | jq .count)
echo "accessibility tree at 1920x1080, zenity --entry ($count visible elements), $N calls each"
: >"$tmp/vals"
for i in $(seq 1 "$N"); do
	curl -fsS -o /dev/null -w '%{time_total}\n' "$DETM_URL/api/desktop/elements?task_id=$T" |
		awk '{ print $1 * 1000 }' >>"$tmp/vals" || die "elements failed"
done
stats "GET /api/desktop/elements (all; curl total)"
: >"$tmp/vals"
for i in $(seq 1 "$N"); do
	post find "{\"task_id\":\"$T\",\"description\":\"the Name field\"}" |
		jq -e -r 'select(.grounded_by == "accessibility") | .timing.total_ms' >>"$tmp/vals" || die "gui_find failed"
done
stats "gui_find \"the Name field\" (tree, total)"
: >"$tmp/vals"
: >"$tmp/vals2"
for i in $(seq 1 "$N"); do
	post do "{\"task_id\":\"$T\",\"instruction\":\"click the Name field\",\"after_screenshot\":false}" >"$tmp/r" ||
		die "gui_do failed"
	jq -e -r 'select(.grounded_by == "accessibility") | .timing.total_ms - .verification.ms' "$tmp/r" >>"$tmp/vals" ||
		die "gui_do was not grounded by the tree: $(head -c 300 "$tmp/r")"
	jq -r '.verification.ms' "$tmp/r" >>"$tmp/vals2"
done
stats "gui_do \"click the Name field\" (tree + click, no verification)"
mv "$tmp/vals2" "$tmp/vals"
stats "  its effect watch (input to verdict, <= settle_ms 300)"
: >"$tmp/vals"
for i in $(seq 1 "$N"); do
	post find "{\"task_id\":\"$T\",\"description\":\"the blue thing\"}" |
		jq -e -r 'select(.grounded_by == "uitars") | .timing.total_ms - .model_ms' >>"$tmp/vals" ||
		die "vision gui_find failed"
done
stats "gui_find by vision (stub model): overhead = total - model"
echo "  (the tree's answer needs no model call; the vision path adds the model's own latency)"
