#!/usr/bin/env bash
# run.sh - the hostile-HTTP suite: a real detmd against clients that
# misbehave on purpose.
#
#   slowloris:  120 connections that trickle header bytes do not stop a
#               normal client; a connection that goes quiet is closed after
#               the connection timeout
#   streams:    40 event streams open past the timeout hold no worker and
#               all get the next event
#   crowd:      256 connections trickling headers, then 300 event-stream
#               clients: /api/health still answers; the header deadline
#               closes the trickling ones, streams past the cap get 503 JSON
#   sizes:      oversize headers, bodies and URLs are refused, detmd lives on
#   framing:    several Content-Length or Host headers, Content-Length with
#               Transfer-Encoding, a coding other than chunked, HTTP/1.1
#               without Host: the JSON 400/501 before any body is read; a
#               Content-Length libmicrohttpd cannot parse closes at once
#   bytes:      a method of raw bytes is answered in valid UTF-8
#   mcp:        70 initialize calls on /mcp fill the 64 sessions and are
#               refused past them (503 JSON-RPC); another client's session
#               lives on
#   big task:   a 50 MB task: 8 exports that read nothing hold little
#               memory (and give it back), a 9th is 503 with Retry-After,
#               /api/health answers quickly during 4 full views, and the
#               export's task.json is the full view byte for byte
#   every route (from GET /api/routes, so new routes are covered when they
#   land): a foreign Origin and a foreign Host are 403, and with a token
#   (ACU_TOKEN) no route answers without it (401 JSON), including the
#   dashboard, the event stream and the MJPEG view
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init hostile
healthy() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$DETM_URL/api/health")" = 200 ]; }

daemon_start --connection-timeout 3 || { bad "daemon start"; finish; exit 1; }
port=${DETM_URL##*:}

# ---- slowloris ----
python3 - "$port" 120 >"$tmp/slow.log" 2>&1 <<'EOF2' &
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
socks = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    socks.append(s)
print("open", len(socks), flush=True)
for k in range(20):                      # one header line a second: never idle
    for s in socks:
        try:
            s.sendall(b"X-Slow: %d\r\n" % k)
        except OSError:
            pass
    time.sleep(1)
EOF2
pids+=($!)
wait_for 10 grep -q '^open 120' "$tmp/slow.log"
check "with 120 slowloris connections open, a normal request is served" healthy
api POST /api/tasks '{"name":"under siege","plan":["a"]}'
expect "and a write too" 201
python3 - "$port" >"$tmp/idle.log" 2>&1 <<'EOF2'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /api/health HTTP/1.1\r\n")
s.settimeout(15)
t = time.time()
try:
    data = s.recv(100)
except socket.timeout:
    data = None
print("closed" if data == b"" or (data and data.startswith(b"HTTP/1.1 408")) else "open", round(time.time() - t, 1))
EOF2
check "a connection that goes quiet is closed after the timeout ($(cat "$tmp/idle.log"))" grep -q '^closed' "$tmp/idle.log"
kill "${pids[0]}" 2>/dev/null

# ---- streams hold no worker ----
# 40 event streams (more than the HTTP workers, 1 per CPU) stay open past
# the connection timeout (3 s: waiting streams are suspended, not idle),
# requests are still served, and one write's event reaches every stream.
for i in $(seq 1 40); do
	curl -sN --max-time 60 "$DETM_URL/api/events" >"$tmp/sse.$i" 2>/dev/null &
	pids+=($!)
done
wait_for 20 sh -c "[ \$(grep -l '^event: hello' $tmp/sse.* 2>/dev/null | wc -l) -ge 40 ]"
check "40 event streams are open" [ "$(grep -l '^event: hello' "$tmp"/sse.* | wc -l)" -ge 40 ]
sleep 5                                 # past the connection timeout
check "with 40 event streams open, a normal request is served" healthy
api POST /api/tasks '{"name":"streamed","plan":["a"]}'
expect "and a write too" 201
st=$(jqr .task_id)
wait_for 20 sh -c "[ \$(grep -l '\"task_id\":\"$st\"' $tmp/sse.* 2>/dev/null | wc -l) -ge 40 ]"
check "its event reached all 40 streams, still open after the timeout" \
	[ "$(grep -l "\"task_id\":\"$st\"" "$tmp"/sse.* | wc -l)" -ge 40 ]
for p in "${pids[@]:1}"; do kill "$p" 2>/dev/null; done

# ---- sizes ----
big=$(head -c 100000 /dev/zero | tr '\0' a)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$DETM_URL/api/health")
check "a 100 KB header is refused ($code)" sh -c "[ '$code' = 431 ] || [ '$code' = 413 ] || [ '$code' = 000 ]"
check "detmd is healthy after it" healthy
head -c 3000000 /dev/zero | tr '\0' a >"$tmp/body"
code=$(curl -s -o "$tmp/resp" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary @"$tmp/body" "$DETM_URL/api/tasks")
check "a 3 MB body is 413 in the JSON error shape" sh -c "[ $code = 413 ] && jq -e '.error.code == \"payload_too_large\"' $tmp/resp >/dev/null"
code=$(curl -s -o "$tmp/resp" -w '%{http_code}' "$DETM_URL/api/tasks?x=$(head -c 5000 /dev/zero | tr '\0' b)")
check "a 5 KB URL is refused ($code)" sh -c "[ $code = 400 ] || [ $code = 414 ]"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: text/plain' -d '{"name":"x"}' "$DETM_URL/api/tasks")
check "a body that is not JSON-typed is 415" [ "$code" = 415 ]
check "detmd is healthy after all of it" healthy

# ---- framing (RFC 9112) ----
raw() { tests/hostile/raw.py "$port" "$1" 6 >"$tmp/raw.json"; }
rawis() { # rawis NAME STATUS CODE: one reply with STATUS and the JSON error CODE
	jq -e --argjson s "$2" --arg c "$3" '.status == $s and .statuses == 1 and .elapsed < 5 and
		(.body | fromjson | .error.code == $c)' "$tmp/raw.json" >/dev/null && ok "$1" || bad "$1" "$(cat "$tmp/raw.json")"
}
hdr='POST /api/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n'
raw "${hdr}Content-Length: 12\r\nContent-Length: 13\r\n\r\n{\"name\":\"x\"}"
rawis "two different Content-Length headers: 400" 400 invalid_argument
raw "${hdr}Content-Length: 12\r\nContent-Length: 12\r\n\r\n{\"name\":\"x\"}"
rawis "two equal Content-Length headers: 400" 400 invalid_argument
raw "${hdr}Transfer-Encoding: chunked\r\nContent-Length: 12\r\n\r\nc\r\n{\"name\":\"x\"}\r\n0\r\n\r\n"
rawis "Transfer-Encoding beside Content-Length: 400" 400 invalid_argument
raw "${hdr}Transfer-Encoding: gzip\r\n\r\n{\"name\":\"x\"}"
rawis "Transfer-Encoding gzip: 501 at once, no hang" 501 not_implemented
raw "${hdr}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{\"name\":\"x\"}\r\n0\r\n\r\n"
rawis "two Transfer-Encoding headers: 400" 400 invalid_argument
raw 'GET /api/health HTTP/1.1\r\nConnection: close\r\n\r\n'
rawis "HTTP/1.1 without Host: 400" 400 invalid_argument
raw 'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n'
rawis "two Host headers: 400" 400 invalid_argument
raw "${hdr}Transfer-Encoding: chunked\r\n\r\nc\r\n{\"name\":\"x\"}\r\n0\r\n\r\n"
jq -e '.status == 201 and .statuses == 1' "$tmp/raw.json" >/dev/null && ok "a chunked body is still accepted" || bad "chunked body" "$(cat "$tmp/raw.json")"
raw 'GET /api/health HTTP/1.0\r\n\r\n'
jq -e '.status == 200' "$tmp/raw.json" >/dev/null && ok "HTTP/1.0 without Host is served" || bad "HTTP/1.0 without Host" "$(cat "$tmp/raw.json")"
for v in -1 abc 99999999999999999999; do
	raw "${hdr}Content-Length: $v\r\n\r\n{\"name\":\"x\"}"
	# libmicrohttpd answers these itself before detmd sees the request (an
	# HTML 400/413 whose status line it sends twice; docs/security.md): the
	# connection must close at once and nothing may be stored.
	jq -e '.closed and .elapsed < 5 and .status >= 400 and .status < 500' "$tmp/raw.json" >/dev/null &&
		ok "Content-Length $v: refused and closed at once" || bad "Content-Length $v" "$(cat "$tmp/raw.json")"
done
n_tasks=$(curl -s "$DETM_URL/api/tasks?limit=200" | jq '[.tasks[] | select(.name == "x")] | length')
check "only the chunked request stored a task ($n_tasks)" [ "$n_tasks" = 1 ]
check "detmd is healthy after the framing cases" healthy
# ---- bytes that are not UTF-8 in the request line ----
# A method (and a path, as MHD hands it over) of raw bytes is echoed in the
# 404/405 message: the reply must still be strict UTF-8.
for method in 'G\xc3T' 'P\xffST' 'X\xe0\x80\xafY'; do
	r=$(python3 - "$port" "$method" <<'EOF2'
import socket, sys
m = sys.argv[2].encode().decode("unicode_escape").encode("latin-1")
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(m + b" /api/version HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
head, _, body = data.partition(b"\r\n\r\n")
status = head.split(b" ")[1].decode() if b" " in head else "none"
try:
    body.decode("utf-8")
    print(status, "utf8")
except UnicodeDecodeError:
    print(status, "invalid:", body[:120])
EOF2
)
	case $r in
	4??\ utf8) ok "method $method: $r" ;;
	*) bad "method $method answers a 4xx in valid UTF-8" "$r" ;;
	esac
done

# ---- /mcp sessions: a client opening sessions in a loop ----
# One client holds a session; another sends 70 initialize calls. The table
# has 64 slots and drops only sessions idle for 10 minutes: the first
# session keeps working, the calls past the cap get 503 with a JSON-RPC
# error naming the cap, and ending a session (DELETE) makes room.
mcp() { # mcp OUT [SID] BODY: POST /mcp; headers in OUT.h, body in OUT; prints the status
	curl -s -o "$1" -D "$1.h" -w '%{http_code}' -X POST "$DETM_URL/mcp" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' ${3:+-H "Mcp-Session-Id: $2"} --data-binary "${3:-$2}"
}
sid_of() { tr -d '\r' <"$1.h" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p'; }
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}'
code=$(mcp "$tmp/mcpA" "$init")
A=$(sid_of "$tmp/mcpA")
check "client A opens an MCP session" [ "$code" = 200 -a "${#A}" = 32 ]
ok200=0 full=0 other=0 B=
for i in $(seq 1 70); do
	code=$(mcp "$tmp/mcpB" "$init")
	case $code in
	200) ok200=$((ok200 + 1)); B=$(sid_of "$tmp/mcpB") ;;
	503) full=$((full + 1)); cp "$tmp/mcpB" "$tmp/mcpfull"; cp "$tmp/mcpB.h" "$tmp/mcpfull.h" ;;
	*) other=$((other + 1)) ;;
	esac
done
check "client B's 70 initialize calls: 63 sessions, then 7 refused with 503 (got $ok200, $full, $other other)" \
	[ "$ok200" = 63 -a "$full" = 7 -a "$other" = 0 ]
check "the refusal is a JSON-RPC error naming the cap and DELETE, with Retry-After" sh -c \
	"jq -e '.jsonrpc == \"2.0\" and .id == 1 and .error.code == -32002 and (.error.message | test(\"all 64 are in use\")) and (.error.message | test(\"DELETE\"))' '$tmp/mcpfull' >/dev/null && grep -qi '^Retry-After: 60' '$tmp/mcpfull.h'"
code=$(mcp "$tmp/mcpA2" "$A" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
check "client A's session still works (tools/list)" sh -c "[ '$code' = 200 ] && jq -e '.result.tools | length > 0' '$tmp/mcpA2' >/dev/null"
code=$(mcp "$tmp/mcpA3" "$A" '{"jsonrpc":"2.0","id":3,"method":"ping"}')
check "and answers ping" [ "$code" = 200 ]
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Mcp-Session-Id: $B" "$DETM_URL/mcp")
check "client B ends one of its sessions (DELETE)" [ "$code" = 200 ]
code=$(mcp "$tmp/mcpB" "$init")
check "and the next initialize gets a session" [ "$code" = 200 -a -n "$(sid_of "$tmp/mcpB")" ]

# ---- every route: foreign Origin and Host ----
curl -s "$DETM_URL/api/routes" | jq -r '.routes[] | "\(.method) \(.path)"' >"$tmp/routes"
curl -s "$DETM_URL/api/routes" | jq -r '.routes[] | select(.auth == "none") | "\(.method) \(.path)"' >"$tmp/routes_open"
n=$(wc -l <"$tmp/routes")
fill() { sed -e 's/{[a-z_]*}/abcd1234/g' <<<"$1"; }
origin_bad=0 host_bad=0
while read -r m p; do
	u="$DETM_URL$(fill "$p")"
	code=$(curl -s -o "$tmp/resp" -w '%{http_code}' --max-time 5 -X "$m" -H 'Origin: http://evil.example' "$u")
	{ [ "$code" = 403 ] && jq -e '.error.code == "forbidden"' "$tmp/resp" >/dev/null; } || { origin_bad=$((origin_bad + 1)); echo "   Origin: $m $p -> $code"; }
	code=$(curl -s -o "$tmp/resp" -w '%{http_code}' --max-time 5 -X "$m" -H 'Host: evil.example' "$u")
	{ [ "$code" = 403 ] && jq -e '.error.code == "forbidden"' "$tmp/resp" >/dev/null; } || { host_bad=$((host_bad + 1)); echo "   Host: $m $p -> $code"; }
done <"$tmp/routes"
check "a foreign Origin is 403 on all $n routes" [ "$origin_bad" = 0 ]
check "a foreign Host is 403 on all $n routes" [ "$host_bad" = 0 ]
daemon_stop

# ---- a slow crowd (crowd.py) ----
# Its own detmd: the default connection timeout (30 s; a 3 s one would let
# idle connections go before the crowd is done), headers within 5 s.
daemon_start --header-timeout 5 || { bad "daemon start (crowd)"; finish; exit 1; }
port=${DETM_URL##*:}
# 256 connections (all of --max-connections) trickle a header line every
# 2 s on /mcp: the reserve keeps slots free, so /api/health still answers
# (issue 33 asks for 100 ms: printed; asserted only: within 5 s, on a busy
# machine), and the header deadline (5 s here) closes them all.
tests/hostile/crowd.py "$port" trickle 256 9 >"$tmp/crowd.log" 2>&1 &
cpid=$!
pids+=($cpid)
wait_for 20 grep -q '^open' "$tmp/crowd.log"
sleep 1
h=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 5 "$DETM_URL/api/health")
check "with 256 connections trickling headers ($(head -1 "$tmp/crowd.log")), /api/health answers ($h s)" \
	[ "${h%% *}" = 200 ]
api POST /api/tasks '{"name":"in the crowd","plan":["a"]}'
expect "and a write too" 201
wait "$cpid"
check "the header deadline closed every trickling connection ($(tail -1 "$tmp/crowd.log"))" \
	grep -q '^closed 256 of 256' "$tmp/crowd.log"
# 300 clients of /api/events at once, that keep their connections open, a
# 503's too: the stream cap (max-connections/4 = 64) lets 64 in, the others
# get a 503 JSON error naming the cap (or, the oldest without a request in
# progress, are closed to keep the reserve free: "other"), and short
# requests still find a slot.
tests/hostile/crowd.py "$port" sse 300 4 >"$tmp/sse-crowd.log" 2>&1 &
cpid=$!
pids+=($cpid)
wait_for 20 grep -q '^asked' "$tmp/sse-crowd.log"
sleep 1
h=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 5 "$DETM_URL/api/health")
wait_for 20 grep -q '^streams' "$tmp/sse-crowd.log"
check "with 300 event-stream clients ($(tail -1 "$tmp/sse-crowd.log")), /api/health answers ($h s)" \
	[ "${h%% *}" = 200 ]
read -r _ c_streams _ c_refused _ c_json _ c_other < <(grep '^streams' "$tmp/sse-crowd.log")
capped() { [ "${c_streams:-0}" = 64 ] && [ "${c_refused:-0}" -gt 0 ] && [ "$c_json" = "$c_refused" ]; }
check "64 streams open (the cap), every refused one a 503 JSON error naming it" capped
wait "$cpid"
# (a stream notices its client's hang-up at the next tick: a second or two)
sse_opens() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$DETM_URL/api/events")" = 200 ]; }
check "a stream opens again once they are gone" wait_for 10 sse_opens
daemon_stop

# ---- a big task (bigtask.py; issue 33, item 3) ----
# 50 MB of actions (1 MB POSTs). Its export and its full view are written
# as they are read, by threads of their own: 8 exports whose clients read
# nothing hold little memory (the old daemon built the 48 MB view first:
# +800 MB, and kept it after they left), a 9th is 503 with Retry-After (the
# archive cap, 8), and /api/health stays quick during 4 full views (they
# were built on the HTTP workers: 0.9-2.9 s).
# Its own data dir, removed after: the suite's other daemons share theirs
# (the chaos run's dumps would carry the 50 MB).
shared_data=${DETM_DATA:-}
DETM_DATA=$(mktemp -d /tmp/detm-test.XXXXXX)
daemon_start || { bad "daemon start (big task)"; finish; exit 1; }
port=${DETM_URL##*:}
api POST /api/tasks '{"name":"a big task","plan":["a","b","c"]}'
BT=$(jqr .task_id)
tests/hostile/bigtask.py "$port" fill "$BT" 50 >"$tmp/fill.log" 2>&1
check "a 50 MB task is logged ($(cat "$tmp/fill.log"))" grep -q '^filled 50 ' "$tmp/fill.log"
curl -s -o "$tmp/big.zip" "$DETM_URL/api/tasks/$BT/export"
curl -s -o "$tmp/big.json" "$DETM_URL/api/tasks/$BT?detail=full"
rm -rf "$tmp/bigx" && mkdir "$tmp/bigx" && (cd "$tmp/bigx" && unzip -q ../big.zip task.json actions.json)
check "its export is a whole ZIP whose task.json is GET ?detail=full, byte for byte" sh -c \
	"unzip -tq '$tmp/big.zip' >/dev/null && cmp -s '$tmp/bigx/task.json' '$tmp/big.json'"
check "the full view holds the 50 actions (48 MB)" sh -c \
	"[ \$(grep -o '\"action_id\":' '$tmp/big.json' | wc -l) = 50 ] && [ \$(stat -c %s '$tmp/big.json') -gt 45000000 ]"
tests/hostile/bigtask.py "$port" exports "$BT" 8 "$DETM_PID" >"$tmp/exports.log" 2>&1
read -r _ _ rss0 _ rss1 _ xs < <(grep '^rss before' "$tmp/exports.log")
rss2=$(sed -n 's/^rss closed //p' "$tmp/exports.log")
check "8 exports that read nothing are all 200 ($xs)" [ "$xs" = "200 200 200 200 200 200 200 200" ]
# Under ASan freed memory sits in the quarantine (256 MB) and counts as RSS.
case $DETM_BIN in *asan*) margin=300 ;; *) margin=40 ;; esac
check "while they wait, detmd's RSS grows by less than $margin MB (${rss0:-?} -> ${rss1:-?} KiB)" \
	[ $((${rss1:-999999999} - ${rss0:-0})) -lt $((margin * 1024)) ]
check "and once they are closed it is within $margin MB of before (${rss2:-?} KiB)" \
	[ $((${rss2:-999999999} - ${rss0:-0})) -lt $((margin * 1024)) ]
check "a 9th export meanwhile is 503 unavailable with Retry-After ($(grep '^extra' "$tmp/exports.log"))" \
	grep -q '^extra 503 unavailable retry 5$' "$tmp/exports.log"
check "once they are closed, an export is 200 again (the slots came back)" grep -q '^after 200$' "$tmp/exports.log"
tests/hostile/bigtask.py "$port" views "$BT" 4 "$tmp/view" >"$tmp/views.log" 2>&1
read -r _ _ hmax _ _ hn _ < <(grep '^health max' "$tmp/views.log")
# issue 33 asks for quick; asserted generously: 300 ms (2 busy loops: 44 ms; old: 1.5 s).
check "while 4 full views are written, /api/health answers within 300 ms ($(head -1 "$tmp/views.log"))" \
	sh -c "[ '${hn:-0}' -gt 0 ] && [ '${hmax:-99999}' -lt 300 ]"
check "and the 4 views are whole: $(tail -1 "$tmp/views.log")" sh -c \
	"grep -q '^views ok 4 ' '$tmp/views.log' && cmp -s '$tmp/view.0' '$tmp/big.json' && cmp -s '$tmp/view.3' '$tmp/big.json'"
# In process (/mcp tools/call) a view is built in memory: capped at 8 MiB.
bm() { curl -s -D "$tmp/bm.h" -o "$tmp/bm" -X POST "$DETM_URL/mcp" -H 'Content-Type: application/json' \
	-H 'Accept: application/json' ${2:+-H "Mcp-Session-Id: $2"} --data-binary "$1"; }
bm '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"big","version":"1"}}}'
bsid=$(tr -d '\r' <"$tmp/bm.h" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
bm '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$bsid"
bm '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task_summary","arguments":{"task_id":"'"$BT"'","detail_level":"full"}}}' "$bsid"
check "on /mcp, task_summary full of it is a tool error naming the 8 MiB cap and what to do instead" \
	sh -c "jq -e '.result.isError and (.result.content[0].text | test(\"larger than 8 MiB\") and test(\"export\"))' '$tmp/bm' >/dev/null"
daemon_stop
check "and detmd stops cleanly after the big task (exit 0)" [ "${DETM_RC:-1}" = 0 ]
rm -rf "$DETM_DATA" "$tmp"/big* "$tmp"/view.*
DETM_DATA=$shared_data

# ---- every route: the token ----
DETM_TOKEN=hostile-token-1 daemon_start || { bad "daemon start (token)"; finish; exit 1; }
none_bad=0 wrong_bad=0 right_bad=0 open_bad=0
while read -r m p; do
	u="$DETM_URL$(fill "$p")"
	if grep -qxF "$m $p" "$tmp/routes_open"; then   # the probes: open by design (security.md)
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X "$m" "$u")
		case $code in 200|503) ;; *) open_bad=$((open_bad + 1)); echo "   open route: $m $p -> $code" ;; esac
		continue
	fi
	code=$(curl -s -o "$tmp/resp" -w '%{http_code}' --max-time 5 -X "$m" "$u")
	{ [ "$code" = 401 ] && jq -e '.error.code == "unauthorized"' "$tmp/resp" >/dev/null; } || { none_bad=$((none_bad + 1)); echo "   no token: $m $p -> $code"; }
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X "$m" -H 'Authorization: Bearer hostile-token-2' "$u")
	[ "$code" = 401 ] || { wrong_bad=$((wrong_bad + 1)); echo "   wrong token: $m $p -> $code"; }
	case $p in *mjpeg|/api/events) continue ;; esac   # streams: checked below
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X "$m" -H 'Authorization: Bearer hostile-token-1' \
		-H 'Content-Type: application/json' -d '{}' "$u")
	[ "$code" != 401 ] || { right_bad=$((right_bad + 1)); echo "   right token refused: $m $p"; }
done <"$tmp/routes"
check "without the token every one of the $n routes but the $(wc -l <"$tmp/routes_open") probes is 401 JSON (dashboard, events, MJPEG included)" [ "$none_bad" = 0 ]
[ "$(cat "$tmp/routes_open")" = "$(printf 'GET /livez\nGET /readyz')" ] || open_bad=$((open_bad + 1))
check "the probes (auth none in /api/routes: only /livez, /readyz) answer without the token" [ "$open_bad" = 0 ]
check "a wrong token is 401 everywhere" [ "$wrong_bad" = 0 ]
check "the right token is let in everywhere" [ "$right_bad" = 0 ]
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -H 'Authorization: Bearer hostile-token-1' "$DETM_URL/api/events")
check "the event stream opens with the token" [ "$code" = 200 ]
check "a token that differs only in its last byte is refused" [ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer hostile-token-X' "$DETM_URL/api/health")" = 401 ]
# The dashboard's ?token= becomes a cookie only when it is the token itself:
# a request let in by its Bearer header may carry any query token.
curl -s -o /dev/null -D "$tmp/dh" -H 'Authorization: Bearer hostile-token-1' "$DETM_URL/dashboard?token=junk%3Bevil"
check "a valid Bearer with ?token=junk sets no cookie" sh -c "! grep -qi '^Set-Cookie' '$tmp/dh'"
curl -s -o /dev/null -D "$tmp/dh" "$DETM_URL/dashboard?token=hostile-token-1"
check "the right ?token= still sets the cookie" grep -qi '^Set-Cookie: detm_token=hostile-token-1;' "$tmp/dh"
daemon_stop

# ---- chaos: every route at once, in random order (chaos.py) ----
# Tasks with displays come and go while six clients call everything else
# on them; streams and ZIPs are dropped mid-way. Under `make asan-test`
# a leak or report at the clean stop fails the suite too (tests/run.sh).
daemon_start || { bad "daemon start (chaos)"; finish; exit 1; }
python3 tests/hostile/chaos.py "$DETM_URL" "${CHAOS_SECONDS:-20}" 6 "${CHAOS_SEED:-$$}" >"$tmp/chaos.out" 2>&1
cat "$tmp/chaos.out"
PASS=$((PASS + $(grep -c '^ok ' "$tmp/chaos.out")))
FAIL=$((FAIL + $(grep -c '^FAIL ' "$tmp/chaos.out")))
grep -q '^ok ' "$tmp/chaos.out" || bad "chaos.py ran" "$(tail -3 "$tmp/chaos.out")"
check "after the chaos detmd answers /api/health" healthy
daemon_stop
check "and stops cleanly (exit 0)" [ "${DETM_RC:-1}" = 0 ]
finish
