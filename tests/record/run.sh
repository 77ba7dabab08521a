#!/usr/bin/env bash
# run.sh - the recording suite: a real detmd records real Xvfb task
# displays with real xterms; the files are checked with independent tools
# (ffprobe and ffmpeg from Debian's ffmpeg, only to verify; ImageMagick for
# pixels; python3 to split the MJPEG stream).
#
#   task recordings: H.264/yuv420p fMP4, frame count = the index = ffprobe,
#                    duration, a decoded frame shows the window, pause,
#                    operator stop/start, action moments in the index,
#                    byte ranges (206/416), failed -> discarded (or kept
#                    with --record-keep-failed), delete removes the files,
#                    kill -9 mid-recording leaves a playable file reported
#                    "interrupted", the size cap stops cleanly with a message
#   video_record:    POST /api/record clips of the asked length, 400s, async
#   live view:       MJPEG parts are whole JPEGs, two viewers share one
#                    capture, capture stops when the last viewer leaves;
#                    frame.jpg
#   full disk:       tests/record/fulldisk.sh (a tmpfs as the recordings
#                    dir; skipped, counting nothing, where it cannot mount)
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init record

rec() { curl -s "$DETM_URL/api/tasks/$1" | jq -r ".recording$2"; }
rec_is() { [ "$(rec "$1" .state)" = "$2" ]; }
probe() { # probe FILE JQ: ffprobe's view of FILE, filtered
	ffprobe -v error -count_frames -show_entries stream=codec_name,pix_fmt,nb_read_frames,width,height \
		-show_entries format=duration -of json "$1" 2>/dev/null | jq -r "$2"
}
near() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { x = a - b; if (x < 0) x = -x; exit !(x <= d) }'; }
new_task() { # new_task NAME [RES]: a task with its own display; sets T
	api POST /api/tasks "{\"name\":\"$1\",\"plan\":[\"a\",\"b\"],\"display\":true,\"display_resolution\":\"${2:-800x600}\"}"
	T=$(jqr .task_id)
}
busy_xterm() { # busy_xterm TASK: an xterm whose text changes 5 times a second
	xstart "$1" xterm -geometry 60x20+0+0 -e sh -c 'i=0; while :; do i=$((i+1)); echo "line $i $(date +%N)"; sleep 0.2; done'
}
file_of() { echo "$DETM_DATA/recordings/$1.mp4"; }

daemon_start || { bad "daemon start"; finish; exit 1; }
api GET /api/capabilities
expect "capabilities: recording on" 200 '.capabilities.recording == true'

# ---- a task is recorded while its window changes ----
new_task rec
A=$T
t0=$(date +%s.%N)
busy_xterm "$A"
xstart "$A" xterm -bg red -fg red -geometry 20x5+500+400 -T redwin -e sleep 600
check "a task with its own display is being recorded" wait_for 10 rec_is "$A" recording
check "frames and bytes grow while the screen changes" wait_for 15 sh -c \
	"[ \$(curl -s $DETM_URL/api/tasks/$A | jq .recording.frames) -ge 6 ]"
api POST "/api/tasks/$A/actions" '{"action_type":"cli","summary":"first step"}'
sleep 1
api POST "/api/tasks/$A/actions" '{"action_type":"gui","summary":"second step"}'
api POST "/api/tasks/$A/pause" '{}'
check "pausing the task pauses the recording" wait_for 5 rec_is "$A" paused
f1=$(rec "$A" .frames)
sleep 1.5
check "no frames while paused" [ "$(rec "$A" .frames)" = "$f1" ]
api POST "/api/tasks/$A/resume" '{}'
check "resuming resumes it" wait_for 5 rec_is "$A" recording
sleep 1.5
api GET "/api/tasks/$A/recording/start"
expect "GET on the start route is 405" 405
api POST "/api/tasks/$A/recording/start" '{}'
expect "a second start is 409" 409
t1=$(date +%s.%N)
api PATCH "/api/tasks/$A" '{"status":"completed"}'
check "completing the task finishes the file" wait_for 10 rec_is "$A" done
api GET "/api/tasks/$A"
frames=$(jqr .recording.frames); dur=$(jqr .recording.duration_s); bytes=$(jqr .recording.bytes)
F=$(file_of "$A")
check "the file is H.264 yuv420p at the display's size" [ "$(probe "$F" '.streams[0] | "\(.codec_name) \(.pix_fmt) \(.width)x\(.height)"')" = "h264 yuv420p 800x600" ]
pf=$(probe "$F" '.streams[0].nb_read_frames')
check "ffprobe counts the frames the daemon reports ($pf = $frames)" [ "$pf" = "$frames" ]
pd=$(probe "$F" '.format.duration')
check "the duration matches ($pd s vs $dur s)" near "$pd" "$dur" 1.0
check "the reported bytes are the file's size" [ "$(stat -c %s "$F")" = "$bytes" ]
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
check "the 1.5 s of pause are not in the video ($dur s of $wall s)" awk -v d="$dur" -v w="$wall" 'BEGIN { exit !(d < w - 1.0 && d > w - 4) }' 
ffmpeg -nostdin -v error -i "$F" -update 1 -y "$tmp/last.png" 2>/dev/null   # the last frame
px=$(convert "$tmp/last.png" -crop 1x1+560+430 -depth 8 txt:- 2>/dev/null | grep -o '#[0-9A-F]\{6\}')
check "a decoded frame shows the red window ($px)" sh -c "case '$px' in '#F'?0?0?|'#E'?0?0?) true;; *) false;; esac"
api GET "/api/tasks/$A/recording/index"
expect "the index has every frame and both actions with moments in the video" 200 \
	"(.frames | length) == $frames and (.actions | length) == 2 and (.actions | all(.t_s != null and .t_s >= 0 and .t_s <= $dur + 0.01)) and .actions[1].t_s > .actions[0].t_s"

# ---- downloads: whole file and byte ranges ----
size=$(stat -c %s "$F")
code=$(curl -s -o "$tmp/whole.mp4" -w '%{http_code}' "$DETM_URL/api/tasks/$A/recording.mp4")
check "GET recording.mp4 is the whole file" sh -c "[ $code = 200 ] && cmp -s $tmp/whole.mp4 $F"
curl -s -D "$tmp/h" -o "$tmp/range" -r 100-1099 "$DETM_URL/api/tasks/$A/recording.mp4"
check "a range request is 206 with Content-Range" grep -qi "^Content-Range: bytes 100-1099/$size" "$tmp/h"
check "and exactly those bytes" sh -c "dd if=$F bs=1 skip=100 count=1000 2>/dev/null | cmp -s - $tmp/range"
curl -s -o "$tmp/tail" -r -500 "$DETM_URL/api/tasks/$A/recording.mp4"
check "a suffix range gives the last 500 bytes" sh -c "tail -c 500 $F | cmp -s - $tmp/tail"
code=$(curl -s -o "$tmp/resp" -w '%{http_code}' -r "$((size + 10))-" "$DETM_URL/api/tasks/$A/recording.mp4")
check "a range past the end is 416 in the JSON error shape" sh -c "[ $code = 416 ] && jq -e '.error.code == \"range_not_satisfiable\"' $tmp/resp >/dev/null"
code=$(curl -s -o /dev/null -w '%{http_code}' -I "$DETM_URL/api/tasks/$A/recording.mp4")
check "HEAD works" [ "$code" = 200 ]

# ---- operator stop and start ----
new_task ops
B=$T
busy_xterm "$B"
wait_for 10 rec_is "$B" recording
api POST "/api/tasks/$B/recording/stop" '{}'
expect "operator stop finishes the file" 200 '.state == "done" and .frames >= 1'
api POST "/api/tasks/$B/recording/stop" '{}'
expect "stopping again is 409" 409
api POST "/api/tasks/$B/recording/start" '{}'
expect "operator start records again" 201 '.state == "recording"'
api POST "/api/tasks/nosuch00/recording/start" '{}'
expect "start on an unknown task is 404" 404

# ---- failed tasks, deletion ----
api PATCH "/api/tasks/$B" '{"status":"failed"}'
check "a failed task's recording is discarded" wait_for 10 rec_is "$B" discarded
check "and its file is gone" sh -c "[ ! -e $(file_of "$B") ]"
api GET "/api/tasks/$B/recording.mp4"
expect "so the download is 404" 404
api DELETE "/api/tasks/$A"
check "deleting a task deletes its video and index" sh -c "[ ! -e $F ] && [ ! -e ${F%.mp4}.idx ]"

# ---- video_record clips ----
new_task clips 640x480
C=$T
busy_xterm "$C"
api POST /api/record "{\"task_id\":\"$C\",\"duration\":2,\"fps\":5}"
expect "video_record waits and returns the clip" 200 '.status == "done" and (.url | test("/api/record/.*/clip.mp4")) and .bytes > 0'
url=$(jqr .url)
curl -s -o "$tmp/clip.mp4" "$DETM_URL$url"
cd2=$(probe "$tmp/clip.mp4" '.format.duration')
check "the clip lasts the 2 s asked for ($cd2)" near "$cd2" 2 0.6
check "the clip is H.264 at the display's size" [ "$(probe "$tmp/clip.mp4" '.streams[0] | "\(.codec_name) \(.width)"')" = "h264 640" ]
api POST /api/record "{\"task_id\":\"$C\",\"duration_s\":1,\"wait\":false}"
expect "duration_s and wait:false give 202 and an id" 202 '.status == "recording" and (.clip_id | length) == 8'
cid=$(jqr .clip_id)
api GET "/api/record/$cid?block_s=20"
expect "the clip's status can be long-polled until done" 200 '.status == "done"'
# over MCP (detm-mcp): a clip the call does not wait for comes back as a
# handle that video_status follows (OpenClaw cuts calls at 60 s: clips over
# 55 s are handles by default; here wait:false on a short one)
mcp_calls "$tmp/mcpclip.out" 40 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"video_record\",\"arguments\":{\"task_id\":\"$C\",\"duration\":2,\"wait\":false}}}"
mid=$(jq -r 'select(.id == 2) | .result.structuredContent.clip_id' "$tmp/mcpclip.out")
check "MCP video_record wait:false: at once, recording, told to follow it with video_status" sh -c \
	"jq -e 'select(.id == 2) | .result.structuredContent.status == \"recording\" and (.result.content[0].text | test(\"follow it with video_status $mid\"))' '$tmp/mcpclip.out' >/dev/null"
mcp_calls "$tmp/mcpvs.out" 40 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"video_status\",\"arguments\":{\"clip_id\":\"$mid\",\"block_s\":20}}}"
check "MCP video_status follows it to done, with its path" sh -c \
	"jq -e 'select(.id == 2) | .result.structuredContent.status == \"done\" and (.result.content[0].text | test(\"is done: .* saved to\"))' '$tmp/mcpvs.out' >/dev/null"
xstart "$C" xterm -geometry 30x6+300+200 -T cliptarget -e sleep 600
xwait "$C" cliptarget
geom=$(DISPLAY=$(disp_of "$C") XAUTHORITY=$(auth_of "$C") xwininfo -name cliptarget | awk '/Width:/ { w = $2 } /Height:/ { h = $2 } END { print w "x" h }')
api POST /api/record "{\"task_id\":\"$C\",\"duration\":1,\"target\":\"window:cliptarget\"}"
expect "video_record of one window" 200 '.status == "done" and .window.title == "cliptarget"'
curl -s -o "$tmp/win.mp4" "$DETM_URL$(jqr .url)"
wg=$(probe "$tmp/win.mp4" '.streams[0] | "\(.width)x\(.height)"')
check "the window clip has the window's size ($wg for $geom, even-rounded)" sh -c \
	"[ '$wg' = \"\$(echo $geom | awk -Fx '{ printf \"%dx%d\", \$1 - \$1 % 2, \$2 - \$2 % 2 }')\" ]"
api POST /api/record "{\"task_id\":\"$C\",\"duration\":1,\"target\":\"window:no such window\"}"
expect "a window that is not there is 404 on target" 404 '.error.field == "target"'
# A clip whose window closes fails; its status says why in the one error
# shape (the busy xterm keeps drawing, so the next tick grabs the gone window).
xstart "$C" xterm -geometry 30x6+300+300 -T cliptarget2 -e sleep 600
xwait "$C" cliptarget2
api POST /api/record "{\"task_id\":\"$C\",\"duration\":30,\"target\":\"window:cliptarget2\",\"wait\":false}"
expect "a window clip starts (wait:false)" 202 '.status == "recording"'
fid=$(jqr .clip_id)
xenv "$C" xdotool search --name '^cliptarget2$' windowkill
api GET "/api/record/$fid?block_s=25"
expect "a clip whose window closed fails with {code,message,field}" 200 \
	'.status == "failed" and (.error | type) == "object" and (.error.code | type) == "string" and (.error.message | length) > 0 and (.error | has("field"))'
for bad_body in '{"duration":0}' '{"duration":121}' '{"duration_s":"5"}' '{"fps":0}' '{"fps":31}' \
	'{"target":"desktop"}' '{"task_id":"nosuch00"}' '{"colour":1}'; do
	api POST /api/record "$bad_body"
	case $CODE in 400|404) ok "video_record refuses $bad_body ($CODE)" ;; *) bad "video_record refuses $bad_body" "got $CODE" ;; esac
done
api GET /api/record/00000000
expect "an unknown clip is 404" 404

# ---- live view ----
mjpeg_ok() { # mjpeg_ok FILE MIN: at least MIN parts, each a whole JPEG of its Content-Length
	python3 - "$1" "$2" <<'EOF'
import sys, re
data = open(sys.argv[1], "rb").read()
parts = data.split(b"--detmframe\r\n")[1:]
ok = 0
for p in parts:
    head, sep, rest = p.partition(b"\r\n\r\n")
    m = re.search(rb"Content-Length: (\d+)", head)
    if not sep or not m or b"image/jpeg" not in head:
        continue
    body = rest[:int(m.group(1))]
    if len(body) == int(m.group(1)) and body[:2] == b"\xff\xd8" and body[-2:] == b"\xff\xd9":
        ok += 1
print(ok, file=sys.stderr)
sys.exit(0 if ok >= int(sys.argv[2]) else 1)
EOF
}
streams() { curl -s "$DETM_URL/api/live" | jq "$1"; }
timeout 4 curl -s -N -o "$tmp/live1" "$DETM_URL/api/tasks/$C/live.mjpeg" & v1=$!
timeout 4 curl -s -N -o "$tmp/live2" "$DETM_URL/api/tasks/$C/live.mjpeg" & v2=$!
check "two viewers share one capture" wait_for 3 sh -c "[ \"\$(curl -s $DETM_URL/api/live | jq -c '[.streams[] | select(.task_id == \"$C\") | .viewers]')\" = '[2]' ]"
wait "$v1" "$v2" 2>/dev/null
check "the MJPEG stream delivers several whole JPEG parts" mjpeg_ok "$tmp/live1" 5
check "so does the second viewer's" mjpeg_ok "$tmp/live2" 5
check "capture stops after the last viewer leaves" wait_for 6 sh -c "[ \"\$(curl -s $DETM_URL/api/live | jq '.streams | length')\" = 0 ]"
curl -s -D "$tmp/h" -o /dev/null --max-time 2 "$DETM_URL/api/tasks/$C/live.mjpeg"
check "the stream's type is multipart/x-mixed-replace" grep -qi '^Content-Type: multipart/x-mixed-replace; boundary=detmframe' "$tmp/h"
curl -s -o "$tmp/f.jpg" "$DETM_URL/api/tasks/$C/frame.jpg"
check "frame.jpg is a JPEG of the display" sh -c "identify $tmp/f.jpg | grep -q 'JPEG 640x480'"
api GET /api/tasks/nosuch00/live.mjpeg
expect "live view of an unknown task is 404" 404

# ---- kill -9 mid-recording, restart ----
new_task crash
K=$T
busy_xterm "$K"
check "recording before the crash" wait_for 15 sh -c "[ \$(curl -s $DETM_URL/api/tasks/$K | jq .recording.frames) -ge 8 ]"
sleep 1.5
daemon_kill9
KF=$(file_of "$K")
check "after kill -9 the file is readable H.264 (ffprobe)" sh -c "[ \"\$(ffprobe -v error -count_frames -show_entries stream=codec_name,nb_read_frames -of csv=p=0 $KF)\" != '' ] && ffprobe -v error -show_entries stream=codec_name -of csv=p=0 $KF | grep -qx h264"
kf=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$KF")
check "with the frames written before the kill ($kf)" [ "${kf:-0}" -ge 2 ]
daemon_start || { bad "restart"; finish; exit 1; }
check "after a restart the recording is reported interrupted, with its file" \
	sh -c "curl -s $DETM_URL/api/tasks/$K | jq -e '.recording.state == \"interrupted\" and .recording.url != null' >/dev/null"
daemon_stop

# ---- limits: the size cap stops the recording cleanly, with a message ----
daemon_start --record-fps 10 --record-task-max-mb 1 || { bad "daemon start (cap)"; finish; exit 1; }
new_task capped
P=$T
xstart "$P" xterm -geometry 100x40+0+0 -e sh -c 'while :; do head -c 3000 /dev/urandom | base64; sleep 0.05; done'
check "a recording that reaches ACU_RECORD_TASK_MAX_MB stops as capped" wait_for 60 rec_is "$P" capped
check "the task thread says why" sh -c \
	"curl -s $DETM_URL/api/tasks/$P/messages | jq -e '[.messages[] | select(.content | test(\"recording stopped.*ACU_RECORD_TASK_MAX_MB\"))] | length == 1' >/dev/null"
PF=$(file_of "$P")
check "the capped file is playable and near the cap" sh -c \
	"ffprobe -v error -show_entries stream=codec_name -of csv=p=0 $PF | grep -qx h264 && [ \$(stat -c %s $PF) -lt 1250000 ]"
daemon_stop

# ---- a failed task's recording kept on request ----
daemon_start --record-keep-failed || { bad "daemon start (keep)"; finish; exit 1; }
new_task keep
Q=$T
busy_xterm "$Q"
wait_for 10 sh -c "[ \$(curl -s $DETM_URL/api/tasks/$Q | jq .recording.frames) -ge 2 ]"
api PATCH "/api/tasks/$Q" '{"status":"failed"}'
check "--record-keep-failed keeps a failed task's video" wait_for 10 sh -c \
	"curl -s $DETM_URL/api/tasks/$Q | jq -e '.recording.state == \"done\"' >/dev/null && [ -s $(file_of "$Q") ]"
daemon_stop

# ---- a full recordings disk: its own daemon and tmpfs ----
total_pass=0 total_fail=0
run_part fulldisk tests/record/fulldisk.sh
PASS=$((PASS + total_pass)) FAIL=$((FAIL + total_fail))

finish
