#!/usr/bin/env bash
# density.sh - how many busy task displays one detmd carries (issue 39.1).
#
# One detmd, task displays added in steps (BENCH_DENSITY_STEPS, "1 4 8 16 32").
# Each display runs an xterm that prints the time twice a second (it
# scrolls: every line moves), is recorded at the default rate (ACU_RECORD,
# ACU_RECORD_FPS) and has one OCR text wait on text that never appears.
# At each step, for BENCH_DENSITY_S (12) seconds while clicks go round the
# displays (POST /api/desktop/action, settle_ms 0, one after another):
#   CPU %       detmd's utime+stime from /proc/PID/stat over the window
#   RSS         detmd's VmRSS at the end of the window (MB/disp: above the
#               idle daemon, per display); Xvfb MB/d: the displays' X
#               servers (their own processes), per display
#   click       p50/p99 of the clicks' wall time (curl time_total)
#   OCR lines/s text lines tesseract read (detm_ocr_lines_total{source="read"})
#   wait p95    change -> verdict of waits that do resolve: BENCH_DENSITY_W (5)
#               lines written on display 1 (a second xterm), one wait each
# BENCH_DENSITY_CLICKS=0: no clicks (the waits' own cost, with ACU_RECORD=0
# the encoder's off too); BENCH_DENSITY_PERF=FILE: perf record of detmd
# over each window into FILE.N.
# "breaks at": the first step with a wait not resolved, click p99 over
# BENCH_DENSITY_CLICK_P99_MS (250), wait p95 over BENCH_DENSITY_WAIT_P95_MS
# (3000) or detmd at >= 90 % of every CPU.
# Prints a table per step; a report, never an assertion (a detmd that dies
# or stops answering fails the run). The machine may be shared: the load
# average is printed with the table.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

STEPS=${BENCH_DENSITY_STEPS:-1 4 8 16 32}
# where it breaks: the first step past one of these (or a missed wait, or
# detmd using nearly every CPU)
BREAK_CLICK_MS=${BENCH_DENSITY_CLICK_P99_MS:-250}
BREAK_WAIT_MS=${BENCH_DENSITY_WAIT_P95_MS:-3000}
WINDOW_S=${BENCH_DENSITY_S:-12}
NWAITS=${BENCH_DENSITY_W:-5}
CLICKS=${BENCH_DENSITY_CLICKS:-1}     # 0: no clicks (the waits' own cost)
tmp=$(mktemp -d /tmp/detm-bench-density.XXXXXX)
pids=()
cleanup() {
	exec 4>&- 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	daemon_stop
	wait 2>/dev/null
	rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"
}
trap cleanup EXIT
die() { echo "bench density: $*" >&2; exit 1; }
for tool in curl jq xterm; do
	command -v "$tool" >/dev/null || die "$tool not found"
done

daemon_start "$@" || die "detmd did not start"
api() { curl -fsS -X "$1" "$DETM_URL$2" -H 'Content-Type: application/json' ${3:+--data-binary "$3"}; }
ocr_read() { curl -fsS "$DETM_URL/metrics" | awk '/^detm_ocr_lines_total\{source="read"\}/ { print $2 }'; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$DETM_PID/stat"; }
xvfb_kb() { ps -eo rss=,args= | awk -v d="$DETM_DATA/" '/^ *[0-9]+ Xvfb / && index($0, d) { s += $1 } END { print s + 0 }'; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$DETM_PID/status"; }
pct() { sort -n "$1" | awk -v q="$2" '{ v[NR] = $1 } END { if (NR == 0) print "-"; else printf "%d", v[int(NR * q + 0.999)] }'; }
hz=$(getconf CLK_TCK)

tasks=()
# add_display : a task with its own display, a busy xterm and a wait.
add_display() {
	local t disp auth n=${#tasks[@]}
	t=$(api POST /api/tasks "{\"name\":\"density$n\",\"display\":true}" | jq -r .task_id)
	[ -n "$t" ] && [ "$t" != null ] || die "cannot create task $n"
	disp=$(api GET "/api/tasks/$t/display" | jq -r .name)
	auth=$(api GET "/api/tasks/$t/display" | jq -r .xauthority)
	DISPLAY=$disp XAUTHORITY=$auth xterm -geometry 80x20+0+0 -fa Mono -fs 11 -e sh -c \
		'while :; do date +%T.%N; sleep 0.5; done' 2>/dev/null &
	pids+=($!)
	api POST /api/waits "{\"task_id\":\"$t\",\"wake_when\":\"text:\\\"never shown $n\\\"\",\"timeout\":3600}" \
		>/dev/null || die "cannot create the wait of task $n"
	tasks+=("$t")
	if [ "$n" = 0 ]; then   # display 1 also gets the xterm whose lines resolve waits
		mkfifo "$tmp/lines"
		# beside the busy xterm (80 columns at 11 pt end near x=725), not over
		# it: at +700 whichever came up last covered the other's edge, and
		# a wait rightly did not see "mark N done" when "ma" was hidden
		DISPLAY=$disp XAUTHORITY=$auth xterm -geometry 50x8+730+0 -fa Mono -fs 12 -e sh -c \
			"exec 3<>'$tmp/lines'; while read -r l <&3; do date +%s%3N > '$tmp/drawn'; echo \"\$l\"; done" \
			2>/dev/null &
		pids+=($!)
		exec 4>"$tmp/lines"
	fi
}

echo "== density: $(nproc) CPUs, $(awk 'NR == 1 { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM; busy xterm per display, recording ${ACU_RECORD:-1} (ACU_RECORD) at the default rate, 1 text wait each, clicks $CLICKS; ${WINDOW_S} s windows"
printf '   %-8s %-8s %-10s %-10s %-10s %-11s %-10s %-10s %-10s %-16s %s\n' displays "CPU %" "CPU%/disp" "RSS MB" "MB/disp" "Xvfb MB/d" \
	"click p50" "click p99" "OCR lines/s" "wait p95" "load avg"
base_rss=$(rss_kb)
k=0
broke=
for n in $STEPS; do
	while [ "${#tasks[@]}" -lt "$n" ]; do add_display; done
	sleep 3
	kill -0 "$DETM_PID" 2>/dev/null || die "detmd died with $n displays"
	: >"$tmp/click"
	c0=$(cpu_ticks); t0=$(date +%s%N); o0=$(ocr_read)
	if [ -n "${BENCH_DENSITY_PERF:-}" ]; then  # a profile of detmd over the window
		perf record -g -p "$DETM_PID" -o "$BENCH_DENSITY_PERF.$n" -- sleep "$WINDOW_S" >/dev/null 2>&1 &
	fi
	end=$((SECONDS + WINDOW_S)); i=0
	while [ "$SECONDS" -lt "$end" ]; do
		[ "$CLICKS" = 0 ] && { sleep 0.5; continue; }
		t=${tasks[$((i % n))]}; i=$((i + 1))
		curl -fsS -o /dev/null -w '%{time_total}\n' -X POST "$DETM_URL/api/desktop/action" \
			-H 'Content-Type: application/json' \
			--data-binary "{\"task_id\":\"$t\",\"action\":\"click\",\"x\":1200,\"y\":700,\"settle_ms\":0}" |
			awk '{ printf "%d\n", $1 * 1000000 }' >>"$tmp/click" || die "click failed with $n displays"
		sleep 0.05
	done
	c1=$(cpu_ticks); t1=$(date +%s%N); o1=$(ocr_read)
	rss=$(rss_kb); xvfb=$(xvfb_kb); load=$(cut -d' ' -f1 /proc/loadavg)
	cpu=$(awk -v a="$c0" -v b="$c1" -v hz="$hz" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", (b - a) / hz / (ns / 1e9) * 100 }')
	: >"$tmp/lat"
	for w in $(seq "$NWAITS"); do
		k=$((k + 1))
		wid=$(api POST /api/waits "{\"task_id\":\"${tasks[0]}\",\"wake_when\":\"text:\\\"mark $k done\\\"\",\"timeout\":30}" | jq -r .wait_id)
		sleep 1.2
		echo "mark $k done" >&4
		r=$(api GET "/api/waits/$wid?block_s=20" | jq -r .status)
		now=$(date +%s%3N)
		if [ "$r" = resolved ]; then
			echo "$((now - $(cat "$tmp/drawn")))" >>"$tmp/lat"
		else    # the wait's own evidence: what OCR read
			echo "   wait \"mark $k done\" $r: $(api GET "/api/waits/$wid" | jq -r .detail)" >>"$tmp/missed"
		fi
	done
	resolved=$(wc -l <"$tmp/lat")
	printf '   %-8s %-8s %-10s %-10s %-10s %-11s %-10s %-10s %-10s %-16s %s\n' "$n" "$cpu" \
		"$(awk -v c="$cpu" -v n="$n" 'BEGIN { printf "%.1f", c / n }')" \
		"$(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }')" \
		"$(awk -v k="$rss" -v b="$base_rss" -v n="$n" 'BEGIN { printf "%.1f", (k - b) / 1024 / n }')" \
		"$(awk -v k="$xvfb" -v n="$n" 'BEGIN { printf "%.1f", k / 1024 / n }')" \
		"$(awk -v u="$(pct "$tmp/click" 0.5)" 'BEGIN { printf "%.1f ms", u / 1000 }')" \
		"$(awk -v u="$(pct "$tmp/click" 0.99)" 'BEGIN { printf "%.1f ms", u / 1000 }')" \
		"$(awk -v a="$o0" -v b="$o1" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", (b - a) / (ns / 1e9) }')" \
		"$(pct "$tmp/lat" 0.95) ms ($resolved/$NWAITS)" "$load"
	why=
	[ "$resolved" -lt "$NWAITS" ] && why="$why, $((NWAITS - resolved)) of $NWAITS waits not resolved"
	[ "$CLICKS" != 0 ] && [ "$(pct "$tmp/click" 0.99)" -gt $((BREAK_CLICK_MS * 1000)) ] &&
		why="$why, click p99 over $BREAK_CLICK_MS ms"
	[ "$resolved" -gt 0 ] && [ "$(pct "$tmp/lat" 0.95)" -gt "$BREAK_WAIT_MS" ] && why="$why, wait p95 over $BREAK_WAIT_MS ms"
	awk -v c="$cpu" -v n="$(nproc)" 'BEGIN { exit !(c >= 90 * n) }' && why="$why, detmd took ${cpu} % of $(nproc) CPUs"
	[ -z "$broke" ] && [ -n "$why" ] && broke="$n displays:${why#,}"
done
echo "   breaks at: ${broke:-not within ${STEPS##* } displays}"
[ -s "$tmp/missed" ] && cat "$tmp/missed"
echo "   (MB/disp: RSS above the idle daemon's $(awk -v k="$base_rss" 'BEGIN { printf "%.0f", k / 1024 }') MB, per display; targets: a text wait on a busy screen <= 3 % of a core, a recording <= 15 MB)"
