#!/usr/bin/env bash
# waits.sh - what watching costs, on this machine:
#
#   gate tick   grab (MIT-SHM, downscaled to ACU_DIFF_MAX_WIDTH) + greyscale +
#               diff, at 1280x720 and 1920x1080 (bench/gate_bench.c, the
#               daemon's own code) - target <= 2.5 ms per 1080p tick
#   idle waits  detmd's CPU while 20 waits watch still screens for
#               BENCH_IDLE_S (60) seconds - target ~0 %
#   calls saved a scripted scenario (an xterm printing a line every 2 s for
#               20 s, then still for 20 s) against bin/vision-stub: model
#               calls made vs the checks the gate answered alone, and vs a
#               fixed 1 s poll that asks the model every time (the Python DETM)
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

IDLE_S=${BENCH_IDLE_S:-60}
tmp=$(mktemp -d /tmp/detm-bench-waits.XXXXXX)
pids=()
cleanup() {
	daemon_stop
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"
}
trap cleanup EXIT
die() { echo "bench waits: $*" >&2; exit 1; }

PKGS="x11 x11-xcb xcb xext libturbojpeg zlib json-c"
cc -std=c11 -D_GNU_SOURCE -O2 -iquote daemon -iquote common $(pkg-config --cflags $PKGS) -o "$tmp/gate_bench" \
	bench/gate_bench.c daemon/x11/gate.c daemon/x11/xcap.c daemon/x11/xcap_pixels.c daemon/x11/xcap_encode.c daemon/x11/xerr.c daemon/core/nowait.c common/derr.c common/utf8.c daemon/core/util.c daemon/core/log.c \
	$(pkg-config --libs $PKGS) -lpthread || die "cannot build bench/gate_bench.c"

echo "== gate tick (grab -> 320 px greyscale -> diff), 500 ticks"
for geom in 1280x720 1920x1080; do
	mkfifo "$tmp/dfd.$geom"
	Xvfb -displayfd 5 -screen 0 "${geom}x24" -nolisten tcp 5>"$tmp/dfd.$geom" >/dev/null 2>&1 &
	pids+=($!)
	read -r num <"$tmp/dfd.$geom" || die "Xvfb did not start"
	DISPLAY=:$num xterm -geometry 120x40+0+0 -e sh -c 'ls -lR /usr/share | head -200; sleep 600' 2>/dev/null &
	pids+=($!)
	sleep 0.5
	read -r _ size n p50 p95 < <("$tmp/gate_bench" ":$num" 320 500) || die "gate_bench failed"
	printf '   %-10s p50 %6.3f ms   p95 %6.3f ms\n' "$size" "$(awk -v u="$p50" 'BEGIN{print u/1000}')" \
		"$(awk -v u="$p95" 'BEGIN{print u/1000}')"
	[ "$geom" = 1920x1080 ] && printf '   target  <= 2.5 ms per 1080p tick: %s\n' \
		"$([ "$p50" -le 2500 ] && echo met || echo "NOT met")"
done

"$DETM_BIN/vision-stub" --port 0 --port-file "$tmp/stub.port" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/stub.port" ] && break; sleep 0.05; done
STUB="http://127.0.0.1:$(cat "$tmp/stub.port")"
curl -fsS -X POST "$STUB/_stub/script" -d '{"answers":["NO: not yet"]}' >/dev/null
OLLAMA_URL=$STUB daemon_start || die "detmd did not start"
api() { curl -fsS -X "$1" "$DETM_URL$2" -H 'Content-Type: application/json' ${3:+--data-binary "$3"}; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$DETM_PID/stat"; }

echo "== 20 idle waits for ${IDLE_S} s (4 displays x 5 waits, still screens)"
for d in 1 2 3 4; do
	t=$(api POST /api/tasks "{\"name\":\"idle$d\",\"display\":true}" | jq -r .task_id)
	for w in 1 2 3 4 5; do
		api POST /api/waits "{\"task_id\":\"$t\",\"wake_when\":\"never $w\",\"timeout\":3600}" >/dev/null
	done
done
sleep 2
c0=$(cpu_ticks); calls0=$(curl -fsS "$STUB/_stub/requests" | jq '.requests | length')
sleep "$IDLE_S"
c1=$(cpu_ticks); calls1=$(curl -fsS "$STUB/_stub/requests" | jq '.requests | length')
hz=$(getconf CLK_TCK)
pct=$(awk -v a="$c0" -v b="$c1" -v hz="$hz" -v s="$IDLE_S" 'BEGIN { printf "%.2f", (b - a) / hz / s * 100 }')
printf '   detmd CPU: %s %% of one core; model calls during the idle window: %d\n' "$pct" $((calls1 - calls0))
for w in $(api GET /api/waits | jq -r '.waits[].wait_id'); do api DELETE "/api/waits/$w" >/dev/null; done

echo "== model calls saved by the gate (40 s scripted scenario)"
curl -fsS -X DELETE "$STUB/_stub/requests" >/dev/null
t=$(api POST /api/tasks '{"name":"scenario","display":true}' | jq -r .task_id)
disp=$(api GET "/api/tasks/$t/display" | jq -r .name); auth=$(api GET "/api/tasks/$t/display" | jq -r .xauthority)
w=$(api POST /api/waits "{\"task_id\":\"$t\",\"wake_when\":\"never\",\"timeout\":3600}" | jq -r .wait_id)
DISPLAY=$disp XAUTHORITY=$auth xterm -geometry 80x30+0+0 -e sh -c 'for i in $(seq 10); do echo step $i; sleep 2; done; sleep 600' 2>/dev/null &
pids+=($!)
sleep 40
read -r ev sk < <(api GET "/api/waits/$w" | jq -r '"\(.evaluations) \(.skipped)"')
printf '   detmd: %d model calls, %d checks answered by the gate alone\n' "$ev" "$sk"
printf '   a fixed 1 s poll asking the model each time (Python DETM): ~40 calls -> %s%% fewer calls\n' \
	"$(awk -v e="$ev" 'BEGIN { printf "%.0f", (1 - e / 40) * 100 }')"

echo "== latency from drawing to verdict (20 changes on a 1280x720 xterm, OCR judge; target <= 1.5 s)"
t=$(api POST /api/tasks '{"name":"latency","display":true}' | jq -r .task_id)
disp=$(api GET "/api/tasks/$t/display" | jq -r .name); auth=$(api GET "/api/tasks/$t/display" | jq -r .xauthority)
mkfifo "$tmp/lines"
DISPLAY=$disp XAUTHORITY=$auth xterm -geometry 80x24+0+0 -fa Mono -fs 12 -e sh -c \
	"exec 3<>'$tmp/lines'; while read -r l <&3; do date +%s%3N > '$tmp/drawn'; echo \"\$l\"; done" 2>/dev/null &
pids+=($!)
exec 4>"$tmp/lines"
sleep 2
: >"$tmp/lat"
for i in $(seq 20); do
	w=$(api POST /api/waits "{\"task_id\":\"$t\",\"wake_when\":\"text:\\\"mark $i done\\\"\",\"timeout\":30}" | jq -r .wait_id)
	sleep 1.5
	echo "mark $i done" >&4
	r=$(api GET "/api/waits/$w?block_s=20" | jq -r '"\(.status) \(.woken_by)"')
	t1=$(date +%s%3N)
	[ "${r%% *}" = resolved ] && echo "$((t1 - $(cat "$tmp/drawn"))) ${r#* }" >>"$tmp/lat"
done
exec 4>&-
sort -n "$tmp/lat" | awk '{ v[NR] = $1; if ($2 == "damage") d++ } END {
	if (NR == 0) { print "   no change resolved"; exit }
	printf "   %d of 20 resolved; p50 %d ms, p95 %d ms, max %d ms; %d woken by XDamage\n",
	    NR, v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.999)], v[NR], d }'

echo "== latency from text replaced in place to verdict (20 lines overwritten with \\r on a 1280x720 xterm, OCR judge; issue 34)"
t=$(api POST /api/tasks '{"name":"inplace","display":true}' | jq -r .task_id)
disp=$(api GET "/api/tasks/$t/display" | jq -r .name); auth=$(api GET "/api/tasks/$t/display" | jq -r .xauthority)
mkfifo "$tmp/inplace"
DISPLAY=$disp XAUTHORITY=$auth xterm -geometry 80x24+0+0 -fa Mono -fs 12 -e sh -c \
	"exec 3<>'$tmp/inplace'; while read -r l <&3; do date +%s%3N > '$tmp/drawn'; printf '\\r%-50s' \"\$l\"; done" 2>/dev/null &
pids+=($!)
exec 4>"$tmp/inplace"
sleep 2
: >"$tmp/lat"
for i in $(seq 20); do
	echo "Exporting $i, please wait..." >&4
	w=$(api POST /api/waits "{\"task_id\":\"$t\",\"wake_when\":\"text:\\\"Export $i finished\\\"\",\"timeout\":30}" | jq -r .wait_id)
	sleep 1.5
	echo "Export $i finished" >&4
	r=$(api GET "/api/waits/$w?block_s=20" | jq -r '"\(.status) \(.woken_by)"')
	t1=$(date +%s%3N)
	[ "${r%% *}" = resolved ] && echo "$((t1 - $(cat "$tmp/drawn"))) ${r#* }" >>"$tmp/lat"
done
exec 4>&-
sort -n "$tmp/lat" | awk '{ v[NR] = $1; if ($2 == "reread") r++ } END {
	if (NR == 0) { print "   no replacement resolved"; exit }
	printf "   %d of 20 resolved; p50 %d ms, p95 %d ms, max %d ms; %d by the whole-target re-read\n",
	    NR, v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.999)], v[NR], r }'
