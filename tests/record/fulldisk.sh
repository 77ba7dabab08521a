#!/usr/bin/env bash
# fulldisk.sh - the recording suite's full-disk part (issue 31, point 4): a
# real detmd whose recordings directory is a small tmpfs that fills up
# while a task is recorded and a video_record clip runs.
#
#   the clip ends "failed" naming no space left, within its duration plus
#   a margin; video_record through bin/detm-mcp returns a tool error within
#   a deadline; /api/health still answers; the task recording ends failed
#   with frames and bytes that are the file's (ffprobe, stat); SIGTERM stops
#   detmd within 10 s with status 0 and no Xvfb or dbus-daemon of it left.
#
# Needs root (mount -t tmpfs): otherwise prints "skip: <reason>" and counts
# nothing. Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init recfull --term
DETM_DATA=$(mktemp -d /tmp/detm-recfull-data.XXXXXX)
RDIR=$DETM_DATA/recordings
mounted=
suite_atexit() {
	daemon_stop
	if [ -n "$mounted" ]; then umount "$RDIR" 2>/dev/null || umount -l "$RDIR"; fi
	rm -rf "$DETM_DATA"
}
mkdir -p "$RDIR"
if ! out=$(mount -t tmpfs -o size=2m tmpfs "$RDIR" 2>&1); then
	echo "skip: cannot mount a tmpfs as the recordings dir: $out"
	finish
	exit 0
fi
mounted=1

rec() { curl -s "$DETM_URL/api/tasks/$1" | jq -r ".recording$2"; }
free_kb() { df -k --output=avail "$RDIR" | tail -n 1 | tr -d ' '; }
# Leave about 900 KB: the task recording's first fragments fit, some
# seconds of a busy screen (and a clip of it) do not.
dd if=/dev/zero of="$RDIR/fill" bs=1k count=$(( $(free_kb) - 900 )) 2>/dev/null

daemon_start --record-fps 10 || { bad "daemon start"; finish; exit 1; }
api POST /api/tasks '{"name":"full","plan":["a"],"display":true,"display_resolution":"800x600"}'
T=$(jqr .task_id)
wait_for 10 sh -c "[ \"\$(curl -s $DETM_URL/api/tasks/$T | jq -r .recording.state)\" = recording ]"
xstart "$T" xterm -geometry 100x40+0+0 -e sh -c 'while :; do head -c 3000 /dev/urandom | base64; sleep 0.05; done'
wait_for 20 sh -c "[ \$(curl -s $DETM_URL/api/tasks/$T | jq .recording.frames) -ge 12 ]"

# ---- a clip on the filling disk ----
t0=$(date +%s)
api POST /api/record "{\"task_id\":\"$T\",\"duration\":15,\"fps\":10,\"wait\":false}"
expect "a clip starts on the nearly full disk" 202 '.status == "recording"'
cid=$(jqr .clip_id)
st=recording
while [ "$st" = recording ] && [ $(( $(date +%s) - t0 )) -lt 45 ]; do
	api GET "/api/record/$cid?block_s=5"
	st=$(jqr .status)
done
took=$(( $(date +%s) - t0 ))
expect "the clip ends failed within its 15 s + 30 s ($st after ${took}s)" 200 '.status == "failed"'
check "its error names the full disk ($(jqr .error.message))" sh -c \
	"jq -e '.error.message | test(\"no space left on device\"; \"i\")' $tmp/resp >/dev/null"
check "and not a clobbered errno" sh -c "! jq -e '.error.message | test(\"Invalid argument\")' $tmp/resp >/dev/null"

# ---- video_record over MCP returns a tool error, not a hang ----
t0=$(date +%s)
mcp_calls "$tmp/mcp.out" 60 \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"video_record\",\"arguments\":{\"task_id\":\"$T\",\"duration\":5}}}"
took=$(( $(date +%s) - t0 ))
jq -c 'select(.id == 2) | .result' "$tmp/mcp.out" >"$tmp/mcpres"
check "video_record over MCP answers within 5 s + 30 s (${took}s)" sh -c "[ -s $tmp/mcpres ] && [ $took -le 40 ]"
check "with a tool error naming the full disk ($(head -c 300 "$tmp/mcpres"))" sh -c \
	"jq -e '.isError == true and ([.content[].text] | join(\" \") | test(\"no space left\"; \"i\"))' $tmp/mcpres >/dev/null"

api GET /api/health
expect "/api/health still answers" 200

# ---- the task recording: failed, counts true to the file ----
api PATCH "/api/tasks/$T" '{"status":"completed"}'
wait_for 15 sh -c "[ \"\$(curl -s $DETM_URL/api/tasks/$T | jq -r .recording.state)\" != recording ]"
api GET "/api/tasks/$T"
F=$RDIR/$T.mp4
frames=$(jqr .recording.frames) bytes=$(jqr .recording.bytes)
check "the task recording ended failed on no space ($(jqr -c .recording | head -c 300))" sh -c \
	"jq -e '.recording.state == \"failed\" and (.recording.error.message | test(\"no space left\"; \"i\"))' $tmp/resp >/dev/null"
size=$(stat -c %s "$F" 2>/dev/null || echo none)
check "its reported bytes are the file's size ($bytes = $size)" [ "$bytes" = "$size" ]
pf=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$F" 2>/dev/null)
check "its reported frames are the file's ($frames = ffprobe $pf)" [ "$frames" = "$pf" ]
check "and the file has frames" [ "${pf:-0}" -ge 1 ]

# ---- SIGTERM stops detmd, its Xvfb and its dbus-daemon ----
api POST /api/tasks '{"name":"full2","plan":["a"],"display":true}'
T2=$(jqr .task_id)
wait_for 10 sh -c "[ \"\$(curl -s $DETM_URL/api/tasks/$T2 | jq -r .recording.state)\" = recording ]"
kids=$(ps -e -o pid=,ppid=,comm= | awk -v p="$DETM_PID" '$2 == p && ($3 ~ /^Xvfb/ || $3 ~ /^dbus-daemon/) { print $1 }')
check "the daemon runs an Xvfb and a dbus-daemon ($(echo $kids))" sh -c \
	"ps -o comm= -p $(echo $kids | tr ' ' ,) | grep -q Xvfb && ps -o comm= -p $(echo $kids | tr ' ' ,) | grep -q dbus-daemon"
# SIGTERM while a video_record call is in flight over MCP (the disk has
# room again, so the clip records until the stop).
rm -f "$RDIR/fill"
nclips=$(ls "$RDIR" | grep -c '^clip-.*\.mp4$')
mcp_calls "$tmp/mcp2.out" 60 \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"video_record\",\"arguments\":{\"task_id\":\"$T2\",\"duration\":60}}}" &
mpid=$!
wait_for 10 sh -c "[ \$(ls $RDIR | grep -c '^clip-.*\\.mp4\$') -gt $nclips ]"
sleep 2
t0=$(date +%s.%N)
kill -TERM "$DETM_PID"
for _ in $(seq 1 100); do kill -0 "$DETM_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$DETM_PID" 2>/dev/null; then
	bad "SIGTERM stops detmd within 10 s" "still running"
	daemon_kill9
else
	wait "$DETM_PID"
	rc=$?
	DETM_PID=
	check "SIGTERM stops detmd within 10 s, status 0 (status $rc, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s)" [ "$rc" = 0 ]
fi
for _ in $(seq 1 100); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
check "the MCP call in flight answers once detmd stops ($(jq -c 'select(.id == 2) | .result.content[0].text' "$tmp/mcp2.out" | head -c 200))" \
	sh -c "jq -e 'select(.id == 2) | .result' $tmp/mcp2.out >/dev/null"
kill "$mpid" 2>/dev/null
left=
for p in $kids; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
check "no Xvfb or dbus-daemon of it is left running (${left:-none})" [ -z "$left" ]
for p in $left; do kill -9 "$p" 2>/dev/null; done

finish
