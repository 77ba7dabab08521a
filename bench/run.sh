#!/usr/bin/env bash
# run.sh - `make bench`: detmd's HTTP throughput, latency and memory, as a
# report against the targets (bench/README.md explains the output).
#
# Starts a real detmd (tests/lib.sh: free port, temp data dir), measures its
# idle RSS, then runs wrk twice against one task:
#   POST /api/tasks/{id}/actions   bench/http/post_action.lua
#   GET  /api/tasks/{id}           bench/http/get_task.lua
# and afterwards checks that the rows in `actions` equal the 2xx responses
# wrk saw. Also: the floor (GET /api/health, same wrk settings), GET p99
# *during* the POST run (a second wrk, -t1 -c4, on the same task), and the
# POST run again on a daemon started with --db-sync full. Ends with the
# issue-21 table. Targets never fail the run; a daemon that fails to start,
# dies or stops answering does (exit 1). BENCH_OLD=DIR adds bench/compare.sh
# (this build against DIR/detmd, figure by figure). Tunables: BENCH_THREADS (2),
# BENCH_CONNS (16), BENCH_DURATION (10s), DETM_BIN (bin), BENCH_MORE (the
# other benches run after: "desktop capture waits gui a11y effect record takeover
# dialects density replay replay_real").
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

THREADS=${BENCH_THREADS:-2}
CONNS=${BENCH_CONNS:-16}
DURATION=${BENCH_DURATION:-10s}
TARGET_RPS=10000
TARGET_P99_MS=5
TARGET_RSS_KB=$((15 * 1024))
failed=0
tmp=$(mktemp -d /tmp/detm-bench.XXXXXX)

cleanup() {
	daemon_stop
	rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"
}
trap cleanup EXIT

die() {
	echo "bench: $*" >&2
	[ -n "${DETM_DATA:-}" ] && [ -f "$DETM_DATA/stdout.log" ] && tail -n 20 "$DETM_DATA/stdout.log" >&2
	exit 1
}

for tool in wrk curl sqlite3; do
	command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh bench)"
done
[ -x "$DETM_BIN/detmd" ] || die "$DETM_BIN/detmd not built (make all)"

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$DETM_PID/status" 2>/dev/null; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f MB", k / 1024 }'; }
ms() { awk -v u="$1" 'BEGIN { printf "%.2f ms", u / 1000 }'; }
verdict() { if [ "$1" = 1 ]; then echo "met"; else echo "NOT met"; fi; }
alive() {
	kill -0 "$DETM_PID" 2>/dev/null && curl -fsS -o /dev/null --max-time 5 "$DETM_URL/api/health"
}

# bench_run NAME URL SCRIPT : run wrk, keep its output, set the BENCH_* vars.
bench_run() {
	local name=$1 url=$2 script=$3 line kv
	echo
	echo "== $name"
	echo "   wrk -t$THREADS -c$CONNS -d$DURATION --latency -s $script $url"
	if ! wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -s "$script" "$url" >"$tmp/wrk.out" 2>&1; then
		cat "$tmp/wrk.out" >&2
		die "wrk failed for $name"
	fi
	line=$(grep '^BENCH ' "$tmp/wrk.out" | tail -n 1)
	[ -n "$line" ] || { cat "$tmp/wrk.out" >&2; die "no BENCH line from $script"; }
	for kv in ${line#BENCH }; do
		eval "B_${kv%%=*}=${kv#*=}"
	done
	sed -n '/Latency Distribution/,/requests in/p' "$tmp/wrk.out" | sed 's/^/   /'
	alive || die "detmd stopped answering during $name"
}

# bench_bg URL SCRIPT OUT : a second wrk (-t1 -c4) in the background.
bench_bg() {
	wrk -t1 -c4 -d"$DURATION" --latency -s "$2" "$1" >"$3" 2>&1 &
	BG_PID=$!
}

# bg_vars OUT : set G_* from a background wrk's BENCH line.
bg_vars() {
	local line kv
	line=$(grep '^BENCH ' "$1" | tail -n 1)
	[ -n "$line" ] || { cat "$1" >&2; die "no BENCH line from the second wrk"; }
	for kv in ${line#BENCH }; do
		eval "G_${kv%%=*}=${kv#*=}"
	done
}

# new_task : register a task with item 0 active; sets T.
new_task() {
	T=$(curl -fsS -X POST "$DETM_URL/api/tasks" -H 'Content-Type: application/json' \
		-d '{"name":"bench","plan":["log actions","read back"]}' |
		sed -n 's/.*"task_id":"\([0-9a-f]*\)".*/\1/p')
	[ -n "$T" ] || die "cannot register the bench task"
	curl -fsS -o /dev/null -X PATCH "$DETM_URL/api/tasks/$T/items/0" -H 'Content-Type: application/json' \
		-d '{"status":"active"}' || die "cannot start item 0"
}

# report NAME : the numbers of the last bench_run against the targets.
report() {
	local rps_int=${B_rps%.*}
	printf '   %-10s %s req/s   p50 %s   p99 %s\n' "$1" "$B_rps" "$(ms "$B_p50_us")" "$(ms "$B_p99_us")"
	printf '   responses  2xx %s   non-2xx %s   socket errors %s\n' "$B_ok2xx" "$B_non2xx" "$B_sockerr"
	printf '   target     p99 <= %s ms: %s\n' "$TARGET_P99_MS" \
		"$(verdict "$([ "$B_p99_us" -le $((TARGET_P99_MS * 1000)) ] && echo 1)")"
	[ "$1" = POST ] && printf '   target     >= %s action logs/s: %s\n' "$TARGET_RPS" \
		"$(verdict "$([ "$rps_int" -ge "$TARGET_RPS" ] && echo 1)")"
	return 0
}

daemon_start || die "detmd did not start"
echo "$("$DETM_BIN/detmd" --version 2>/dev/null | head -n 1), pid $DETM_PID at $DETM_URL"
echo "data dir $DETM_DATA; $(nproc) CPUs; wrk -t$THREADS -c$CONNS -d$DURATION"

new_task

sleep 1
idle=$(rss_kb)
[ -n "$idle" ] || die "cannot read /proc/$DETM_PID/status"
echo
echo "== idle"
printf '   RSS        %s   target <= 15 MB: %s\n' "$(mb "$idle")" \
	"$(verdict "$([ "$idle" -le "$TARGET_RSS_KB" ] && echo 1)")"

rows_before=$(sqlite3 "$DETM_DATA/data.db" 'SELECT count(*) FROM actions') || die "sqlite3 cannot read data.db"
bench_run "POST /api/tasks/{id}/actions" "$DETM_URL/api/tasks/$T/actions" bench/http/post_action.lua
report POST
post_ok=$B_ok2xx post_rps=$B_rps post_p50=$B_p50_us post_p99=$B_p99_us
rows=$(sqlite3 "$DETM_DATA/data.db" 'SELECT count(*) FROM actions') || die "sqlite3 cannot read data.db"
rows=$((rows - rows_before))
if [ "$rows" -eq "$post_ok" ]; then same=yes; else same=no; fi
printf '   rows       %s new rows in actions, %s 2xx: rows == 2xx: %s\n' "$rows" "$post_ok" "$same"
# wrk stops with up to one request in flight per connection: those may be
# committed without wrk counting the 2xx. Fewer rows than 2xx is data loss.
extra=$((rows - post_ok))
if [ "$extra" -lt 0 ]; then
	printf '   rows       %s acknowledged actions are MISSING: lost writes\n' "$((-extra))"
elif [ "$extra" -gt 0 ]; then
	printf '   rows       +%s: requests in flight when wrk stopped (at most -c %s expected): %s\n' \
		"$extra" "$CONNS" "$([ "$extra" -le "$CONNS" ] && echo consistent || echo "NOT consistent")"
fi

bench_run "GET /api/tasks/{id} (after the POST run)" "$DETM_URL/api/tasks/$T" bench/http/get_task.lua
report GET
get_rps=$B_rps get_p99=$B_p99_us

bench_run "GET /api/health (the floor: an almost empty handler)" "$DETM_URL/api/health" bench/http/health.lua
report floor
floor_rps=$B_rps floor_p99=$B_p99_us

bench_bg "$DETM_URL/api/tasks/$T" bench/http/get_task.lua "$tmp/bg.out"
bench_run "POST /api/tasks/{id}/actions with GET /api/tasks/{id} at the same time (wrk -t1 -c4)" \
	"$DETM_URL/api/tasks/$T/actions" bench/http/post_action.lua
wait "$BG_PID"
report POST
bg_vars "$tmp/bg.out"
printf '   GET during %s req/s   p50 %s   p99 %s   (2xx %s, non-2xx %s)\n' "$G_rps" \
	"$(ms "$G_p50_us")" "$(ms "$G_p99_us")" "$G_ok2xx" "$G_non2xx"
post2_rps=$B_rps post2_p99=$B_p99_us

echo
echo "== after load"
after=$(rss_kb)
printf '   RSS        %s\n' "$(mb "$after")"

# bench/mcp (the MCP proxy's overhead) runs against the same daemon when
# node and detm-mcp are there; it is a report too, so its failure is noted only.
if [ -f bench/mcp/bench.mjs ] && command -v node >/dev/null && [ -x "$DETM_BIN/detm-mcp" ]; then
	echo
	echo "== bench/mcp"
	if ! (set -o pipefail; DETM_BIN=$DETM_BIN node bench/mcp/bench.mjs "$DETM_URL" 300 2>&1 | sed 's/^/   /'); then
		echo "   bench/mcp failed (not counted)"
	fi
	alive || die "detmd stopped answering during bench/mcp"
fi

daemon_stop
if [ "${DETM_RC:-1}" -ne 0 ]; then
	echo "bench: detmd exited $DETM_RC on SIGTERM" >&2
	failed=1
fi

# The same POST run with every commit fsync'ed.
rm -rf "$DETM_DATA"
DETM_DATA=
daemon_start --db-sync full || die "detmd --db-sync full did not start"
new_task
bench_run "POST /api/tasks/{id}/actions, --db-sync full" "$DETM_URL/api/tasks/$T/actions" \
	bench/http/post_action.lua
report POST
full_rps=$B_rps full_p50=$B_p50_us full_p99=$B_p99_us
daemon_stop

echo
echo "== issue 21 (bench/README.md; $(nproc) CPUs, wrk -t$THREADS -c$CONNS -d$DURATION on the same machine)"
printf '   %-58s %s\n' "POST actions, $CONNS keep-alive conns" \
	"$post_rps req/s, p50 $(ms "$post_p50"), p99 $(ms "$post_p99")"
printf '   %-58s %s\n' "POST actions, --db-sync full" \
	"$full_rps req/s, p50 $(ms "$full_p50"), p99 $(ms "$full_p99")"
printf '   %-58s %s\n' "GET task after the POST run" "$get_rps req/s, p99 $(ms "$get_p99")"
printf '   %-58s %s\n' "GET task during a POST run (POST: $post2_rps req/s, p99 $(ms "$post2_p99"))" \
	"$G_rps req/s, p99 $(ms "$G_p99_us")"
printf '   %-58s %s\n' "floor: GET /api/health" "$floor_rps req/s, p99 $(ms "$floor_p99")"
printf '   %-58s %s\n' "RSS idle / after the load" "$(mb "$idle") / $(mb "$after")"
echo "   (click through HTTP: bench/desktop.sh below; detm-mcp spawn -> tools/list: bench/mcp above)"

# Old vs new side by side (bench/compare.sh), when BENCH_OLD names the bin/
# of another build (e.g. main in a temporary worktree).
if [ -n "${BENCH_OLD:-}" ]; then
	echo
	echo "######## bench/compare.sh $BENCH_OLD $DETM_BIN"
	bench/compare.sh "$BENCH_OLD" "$DETM_BIN" || failed=1
fi

# The desktop, capture and smart-wait benches each start their own daemon
# and displays; a failure to run is counted, a missed target is not.
for b in ${BENCH_MORE-desktop capture waits gui a11y effect record takeover dialects density replay replay_real}; do
	echo
	echo "######## bench/$b.sh"
	if ! DETM_BIN=$DETM_BIN DETM_DATA= bench/$b.sh; then
		echo "bench/$b.sh failed" >&2
		failed=1
	fi
done
exit "$failed"
