#!/usr/bin/env bash
# run.sh - the load suite: detmd under sustained writes, concurrency and a
# kill -9, with a recording and smart waits running throughout.
#
#   crash survival: 16 writers post actions and messages over keep-alive
#     connections (tests/load/loadgen.py, group commit batching them) to tasks while a task display is
#     recorded and a smart wait watches; detmd is killed -9 mid-stream and
#     restarted: every acknowledged write is in the database, integrity_check
#     is ok, the wait is watching again, the recording plays (ffprobe) and is
#     reported interrupted, and the killed daemon's Xvfb is gone
#   load: 20 detm-mcp processes and 4 HTTP clients at once against one
#     detmd (a recording and a wait running): no failed call, no lost row
#     (the rows in SQLite match what was acknowledged), RSS after the load
#     within 40 MB of before, the daemon healthy
#
# The figures are printed (and recorded in docs/reliability.md).
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init load
db() { sqlite3 -cmd '.timeout 5000' "$DETM_DATA/data.db" "$@"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$DETM_PID/status"; }
busy_display() { # busy_display TASK: an xterm whose text keeps changing on the task's display
	xstart "$1" xterm -geometry 60x20+0+0 -e sh -c 'while :; do date +%N; sleep 0.2; done'
}

# ---- crash survival under load ----
daemon_start --vision-backend passthrough || { bad "daemon start"; finish; exit 1; }
tasks=()
for i in 1 2 3 4; do
	api POST /api/tasks "{\"name\":\"load $i\",\"plan\":[\"a\",\"b\"]}"
	tasks+=("$(jqr .task_id)")
done
api POST /api/tasks '{"name":"recorded","plan":["watch"],"display":true,"display_resolution":"640x480"}'
R=$(jqr .task_id)
busy_display "$R"
api POST /api/waits "{\"task_id\":\"${tasks[0]}\",\"target\":\"screen\",\"wake_when\":\"never\",\"timeout\":3600}"
W=$(jqr .wait_id)
wait_for 10 sh -c "[ \$(curl -s $DETM_URL/api/tasks/$R | jq .recording.frames) -ge 4 ]"
xvfb_pid=$(curl -s "$DETM_URL/api/displays" | jq -r ".displays[] | select(.task_id == \"$R\") | .pid")
tests/load/loadgen.py writes "$DETM_URL" 40 16 "$tmp/acked" "${tasks[@]}" >"$tmp/writes.out" 2>&1 &
lg=$!
# Kill once the writers are well under way (not after a fixed time: on a
# busy machine the first acknowledgements can take seconds to come).
wait_for 30 sh -c "[ \$(cat '$tmp/acked' 2>/dev/null | wc -l) -ge 300 ]"
daemon_kill9
wait "$lg"
acked=$(wc -l <"$tmp/acked")
echo "   writes before kill -9: $(cat "$tmp/writes.out") (16 connections, group commit)"
check "the writers got acknowledgements before the kill ($acked)" [ "$acked" -ge 100 ]
daemon_start --vision-backend passthrough || { bad "restart"; finish; exit 1; }
db "SELECT id FROM actions" | sort >"$tmp/present"
sort "$tmp/acked" >"$tmp/acked.sorted"
missing=$(comm -23 "$tmp/acked.sorted" "$tmp/present" | wc -l)
check "every one of the $acked acknowledged writes survived kill -9 (missing: $missing)" [ "$missing" = 0 ]
check "PRAGMA integrity_check is ok" [ "$(db 'PRAGMA integrity_check')" = ok ]
api GET "/api/waits/$W"
expect "the smart wait resumed after the restart" 200 '.status == "watching"'
RF="$DETM_DATA/recordings/$R.mp4"
check "the recording in progress plays (ffprobe reads H.264)" sh -c \
	"ffprobe -v error -show_entries stream=codec_name -of csv=p=0 $RF | grep -qx h264"
api GET "/api/tasks/$R"
expect "and is reported interrupted" 200 '.recording.state == "interrupted"'
gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
check "the killed daemon's Xvfb (pid $xvfb_pid) was removed at the restart" wait_for 5 gone "${xvfb_pid:-1}"
daemon_stop

# ---- load: 20 MCP proxies + 4 HTTP clients, waits and a recording running ----
daemon_start --vision-backend passthrough || { bad "daemon start (load)"; finish; exit 1; }
api POST /api/tasks '{"name":"recorded under load","plan":["a"],"display":true,"display_resolution":"640x480"}'
R2=$(jqr .task_id)
busy_display "$R2"
for i in 1 2 3; do
	api POST /api/waits '{"target":"screen","wake_when":"never","timeout":600}'
done
api POST /api/tasks '{"name":"http load","plan":["a"]}'
H=$(jqr .task_id)
curl -s "$DETM_URL/api/health" >/dev/null
sleep 1
rss0=$(rss_kb)
before=$(db "SELECT count(*) FROM actions")
tests/load/loadgen.py mcp "$DETM_URL" "$DETM_BIN/detm-mcp" 20 15 >"$tmp/mcp.out" 2>"$tmp/mcp.err" &
m=$!
tests/load/loadgen.py mixed "$DETM_URL" 8 4 "$H" >"$tmp/mixed.out" 2>&1
wait "$m"
read -r _ calls _ cerr _ cact <"$tmp/mcp.out"
read -r _ reqs _ herr _ hact <"$tmp/mixed.out"
echo "   MCP: $(cat "$tmp/mcp.out") (20 detm-mcp processes); HTTP: $(cat "$tmp/mixed.out") (4 clients, 8 s)"
check "20 detm-mcp processes: every one of $calls tool calls succeeded" sh -c "[ '$cerr' = 0 ] && [ '$calls' -ge 1000 ]"
check "4 HTTP clients: every one of $reqs requests was 2xx" sh -c "[ '$herr' = 0 ] && [ '$reqs' -ge 100 ]"
after=$(db "SELECT count(*) FROM actions")
# task_register through MCP logs no action; every acknowledged action is a row
# (waits add one action each, created before the count).
check "no lost rows: $((after - before)) new actions = $cact (MCP) + $hact (HTTP) acknowledged" \
	[ "$((after - before))" = "$((cact + hact))" ]
rss1=$(rss_kb)
echo "   RSS before $((rss0 / 1024)) MB, after $((rss1 / 1024)) MB"
# Under ASan freed memory sits in the quarantine (256 MB by default) and is
# counted as RSS; leaks there are LeakSanitizer's job (at the clean stop).
case $DETM_BIN in *asan*) margin=600 ;; *) margin=40 ;; esac
check "memory stays bounded (RSS +$(((rss1 - rss0) / 1024)) MB, margin $margin MB)" [ "$((rss1 - rss0))" -le $((margin * 1024)) ]
check "the recording kept going under load" sh -c "curl -s $DETM_URL/api/tasks/$R2 | jq -e '.recording.state == \"recording\" and .recording.frames > 5' >/dev/null"
api GET "/api/waits?status=watching"
expect "and the waits kept watching" 200 '.count >= 3'
check "PRAGMA integrity_check is ok after the load" [ "$(db 'PRAGMA integrity_check')" = ok ]
daemon_stop
check "detmd stops cleanly after the load (exit $DETM_RC)" [ "$DETM_RC" = 0 ]

# ---- a reply only after its commit; readers see committed data only ----
# 16 writers read each acknowledged action (and log) back at once through a
# read connection, which sees committed rows only: a reply sent before its
# COMMIT would sometimes read back 404 (or without the log). Once with the
# default sync and once with --db-sync full (the WAL synced by the committer).
for sync in normal full; do
	DETM_DATA=
	daemon_start --db-sync "$sync" || { bad "daemon start (readback, $sync)"; continue; }
	tasks=()
	for i in 1 2; do
		api POST /api/tasks "{\"name\":\"readback $i\",\"plan\":[\"a\"]}"
		tasks+=("$(jqr .task_id)")
	done
	tests/load/loadgen.py readback "$DETM_URL" 6 16 "${tasks[@]}" >"$tmp/rb.out" 2>&1
	read -r _ rb_acked _ rb_unseen _ rb_logs _ rb_lunseen _ rb_err <"$tmp/rb.out"
	echo "   readback ($sync): $(cat "$tmp/rb.out")"
	check "--db-sync $sync: every one of $rb_acked acknowledged actions and $rb_logs logs reads back at once" \
		sh -c "[ '${rb_acked:-0}' -ge 50 ] && [ '$rb_unseen' = 0 ] && [ '$rb_lunseen' = 0 ] && [ '$rb_err' = 0 ]"
	daemon_kill9
	daemon_start --db-sync "$sync" || { bad "restart (readback, $sync)"; continue; }
	n=$(db "SELECT count(*) FROM actions")
	check "--db-sync $sync: after kill -9 all $rb_acked acknowledged actions are there ($n rows)" \
		[ "${n:-0}" -ge "${rb_acked:-1}" ]
	daemon_stop
done
finish
