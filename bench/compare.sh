#!/usr/bin/env bash
# compare.sh - the issue-21 HTTP figures for two detmd builds side by side
# in one run: each figure is measured on the old build and right after on
# the new one (alternating which goes first between rounds), so both see
# the same machine load. Prints old, new and new/old for each figure and
# the load average (uptime) before and after. A report: never fails on a
# number; exits non-zero only when a daemon does not start or stops
# answering.
#
#   bench/compare.sh OLD_BIN_DIR [NEW_BIN_DIR]     (NEW defaults to bin)
#
# Figures (wrk -t2 -c16, BENCH_DURATION each, BENCH_ROUNDS rounds):
#   floor     GET /api/health (an almost empty handler)
#   POST      POST /api/tasks/{id}/actions (group commit, --db-sync normal)
#   GET       GET /api/tasks/{id} after the POST runs
#   GET+POST  GET p99 from a second wrk (-t1 -c4) during a POST run
#   full      the POST run on daemons started with --db-sync full
#   click     a click through HTTP logged on a task (bench/desktop_bench.c,
#             BENCH_CLICKS clicks, p50/p95 in the rps columns' place), alone
#             and while a POST run (wrk -t1 -c8) writes to another task;
#             needs Xvfb, cc and the X/curl headers, else skipped
# Old build: `git worktree add --detach /tmp/old main && make -C /tmp/old all`.
set -u
cd "$(dirname "$0")/.."

OLD=${1:?usage: bench/compare.sh OLD_BIN_DIR [NEW_BIN_DIR]}
NEW=${2:-bin}
D=${BENCH_DURATION:-5s}
ROUNDS=${BENCH_ROUNDS:-2}
tmp=$(mktemp -d /tmp/detm-compare.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
die() { echo "compare: $*" >&2; exit 1; }
for b in "$OLD" "$NEW"; do [ -x "$b/detmd" ] || die "$b/detmd not built"; done
command -v wrk >/dev/null || die "wrk not found (scripts/install-deps.sh bench)"

# start NAME BIN ARGS... : a daemon on a free port; sets URL_<NAME>.
start() {
	local name=$1 bin=$2 dir=$tmp/$1 i
	shift 2
	mkdir -p "$dir"
	"$bin/detmd" --listen 127.0.0.1 --port 0 --data-dir "$dir" "$@" >"$dir/out.log" 2>&1 &
	pids+=($!)
	eval "PID_$name=$!"
	for i in $(seq 1 200); do
		if [ -s "$dir/detmd.port" ] &&
			curl -fsS -o /dev/null "http://127.0.0.1:$(cat "$dir/detmd.port")/api/health" 2>/dev/null; then
			eval "URL_$name=http://127.0.0.1:$(cat "$dir/detmd.port")"
			return 0
		fi
		sleep 0.05
	done
	cat "$dir/out.log" >&2
	die "$name did not start"
}

# task URL : a task with item 0 active; prints its id.
task() {
	local t
	t=$(curl -fsS -X POST "$1/api/tasks" -H 'Content-Type: application/json' \
		-d '{"name":"bench","plan":["log actions","read back"]}' |
		sed -n 's/.*"task_id":"\([0-9a-f]*\)".*/\1/p')
	[ -n "$t" ] || die "cannot register a task at $1"
	curl -fsS -o /dev/null -X PATCH "$1/api/tasks/$t/items/0" -H 'Content-Type: application/json' \
		-d '{"status":"active"}' || die "cannot start item 0 at $1"
	echo "$t"
}

# run OUT ARGS... : wrk with the counting script's BENCH line; "rps p50 p99".
vals() {
	sed -n 's/^BENCH .*rps=\([0-9.]*\) p50_us=\([0-9]*\) p99_us=\([0-9]*\).*/\1 \2 \3/p' "$1" | tail -n 1
}
wrk_run() {
	local out=$1
	shift
	wrk "$@" >"$out" 2>&1 || { cat "$out" >&2; die "wrk failed"; }
	[ -n "$(vals "$out")" ] || { cat "$out" >&2; die "no BENCH line"; }
}

# figure FIG VARIANT : one measurement of FIG on VARIANT (old|new);
# appends "FIG VARIANT rps p50 p99" to $tmp/results.
figure() {
	local fig=$1 v=$2 url t out=$tmp/wrk.$1.$2
	case $fig in
	full) eval "url=\$URL_${v}full"; eval "t=\$T_${v}full" ;;
	*) eval "url=\$URL_$v"; eval "t=\$T_$v" ;;
	esac
	case $fig in
	floor) wrk_run "$out" -t2 -c16 -d"$D" --latency -s bench/http/health.lua "$url/api/health" ;;
	POST | full) wrk_run "$out" -t2 -c16 -d"$D" --latency -s bench/http/post_action.lua \
		"$url/api/tasks/$t/actions" ;;
	GET) wrk_run "$out" -t2 -c16 -d"$D" --latency -s bench/http/get_task.lua "$url/api/tasks/$t" ;;
	GET+POST)
		wrk -t1 -c4 -d"$D" --latency -s bench/http/get_task.lua "$url/api/tasks/$t" >"$out.get" 2>&1 &
		local bg=$!
		wrk_run "$out" -t2 -c16 -d"$D" --latency -s bench/http/post_action.lua "$url/api/tasks/$t/actions"
		wait "$bg"
		[ -n "$(vals "$out.get")" ] || { cat "$out.get" >&2; die "no BENCH line from the GET wrk"; }
		echo "GET-during $v $(vals "$out.get")" >>"$tmp/results"
		;;
	esac
	echo "$fig $v $(vals "$out")" >>"$tmp/results"
	curl -fsS -o /dev/null --max-time 10 "$url/api/health" || die "$v stopped answering after $fig"
}

# click-setup: a display of our own and the bench program, or CLICK= (skip).
CLICK=1
if command -v Xvfb >/dev/null && command -v cc >/dev/null &&
	cc -O2 -o "$tmp/desktop_bench" bench/desktop_bench.c \
		$(pkg-config --cflags --libs libcurl x11 xtst 2>/dev/null) 2>/dev/null; then
	mkfifo "$tmp/dfd"
	Xvfb -displayfd 5 -screen 0 1280x720x24 -nolisten tcp 5>"$tmp/dfd" >/dev/null 2>&1 &
	pids+=($!)
	read -r XD <"$tmp/dfd" || CLICK=
else
	CLICK=
fi
DARGS=()
[ -n "$CLICK" ] && DARGS=(--display ":$XD")

# click VARIANT STORM : click p50/p95 on VARIANT (STORM 1: during POSTs).
click() {
	local v=$1 url t bg=
	eval "url=\$URL_$v"; eval "t=\$T_$v"
	if [ "$2" = 1 ]; then
		eval "local t2=\$T2_$v"
		wrk -t1 -c8 -d60s -s bench/http/post_action.lua "$url/api/tasks/$t2/actions" >/dev/null 2>&1 &
		bg=$!
		sleep 1
	fi
	"$tmp/desktop_bench" "$url" "$t" ":$XD" /dev/null "${BENCH_CLICKS:-1000}" >"$tmp/click.out" ||
		die "desktop_bench failed on $v"
	[ -n "$bg" ] && { kill "$bg"; wait "$bg" 2>/dev/null; }
	read -r _ _ p50 p95 _ < <(grep '^http_click' "$tmp/click.out")
	echo "click$([ "$2" = 1 ] && echo +POST) $v 0 $p50 $p95" >>"$tmp/results"
}

load0=$(uptime)
start old "$OLD" "${DARGS[@]}"
start new "$NEW" "${DARGS[@]}"
start oldfull "$OLD" --db-sync full
start newfull "$NEW" --db-sync full
for v in old new oldfull newfull; do eval "URL=\$URL_$v"; eval "T_$v=$(task "$URL")"; done
for v in old new; do eval "URL=\$URL_$v"; eval "T2_$v=$(task "$URL")"; done
: >"$tmp/results"
for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
	for fig in floor POST GET GET+POST full; do
		for v in $order; do figure "$fig" "$v"; done
	done
	if [ -n "$CLICK" ]; then
		for v in $order; do click "$v" 0; done
		for v in $order; do click "$v" 1; done
	fi
done
load1=$(uptime)
[ -n "${BENCH_RESULTS:-}" ] && cp "$tmp/results" "$BENCH_RESULTS"

echo "== old $OLD vs new $NEW: $(nproc) CPUs, wrk -t2 -c16 -d$D, $ROUNDS rounds (medians)"
echo "   load before: ${load0##*load average: }; after: ${load1##*load average: }"
printf '   %-12s %-34s %-34s %s\n' figure old new "new/old (req/s, p99)"
awk '
function med(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
{ k = $1 SUBSEP $2; n[k]++; R[k, n[k]] = $3; P50[k, n[k]] = $4; P99[k, n[k]] = $5; figs[$1] = 1 }
END {
	split("floor POST GET GET+POST GET-during full click click+POST", order, " ")
	for (f = 1; f <= 8; f++) {
		fig = order[f]
		if (!((fig SUBSEP "old") in n)) continue
		for (vi = 1; vi <= 2; vi++) {
			v = vi == 1 ? "old" : "new"; k = fig SUBSEP v
			for (i = 1; i <= n[k]; i++) { a[i] = R[k, i]; b[i] = P50[k, i]; c[i] = P99[k, i] }
			rps[v] = med(a, n[k]); p50[v] = med(b, n[k]); p99[v] = med(c, n[k])
		}
		printf "   %-12s %6.0f req/s p50 %5.2f p99 %6.2f ms   %6.0f req/s p50 %5.2f p99 %6.2f ms   x%.2f, x%.2f\n",
			fig, rps["old"], p50["old"] / 1000, p99["old"] / 1000, rps["new"], p50["new"] / 1000,
			p99["new"] / 1000, (rps["old"] > 0 ? rps["new"] / rps["old"] : 0),
			(p99["old"] > 0 ? p99["new"] / p99["old"] : 0)
	}
}' "$tmp/results"
echo "   (GET-during: the second wrk's GETs while GET+POST's POST run wrote; full: --db-sync full;"
echo "    click rows: p50 and p95 (us as ms) in the p50/p99 columns, req/s 0)"
for v in old new; do
	eval "pid=\$PID_$v"
	echo "   $v: $(awk '/^VmRSS/ { printf "RSS after the load %.1f MB", $2 / 1024 }' "/proc/$pid/status")"
done
