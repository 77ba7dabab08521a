#!/usr/bin/env bash
# http.sh - the dashboard's HTTP side, with curl: embedded files (types,
# ETag/304, CSP, no path outside the table), GET /api/events (SSE: hello,
# events after a change, replay from Last-Event-ID, reset for ids from
# before a restart, heartbeat-free end at shutdown), and the token flow for
# browsers (?token= -> HttpOnly cookie -> the page's requests). Prints
# "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

tmp=$(mktemp -d /tmp/detm-dashhttp.XXXXXX)
trap 'daemon_kill9; rm -rf "$tmp"' EXIT

daemon_start || { bad "daemon start"; finish; exit 1; }
for f in "" /index.html /app.js /style.css; do
	code=$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$DETM_URL/dashboard$f")
	case $f in
	*.js) want="200 text/javascript; charset=utf-8" ;;
	*.css) want="200 text/css; charset=utf-8" ;;
	*) want="200 text/html; charset=utf-8" ;;
	esac
	check "GET /dashboard$f is $want" [ "$code" = "$want" ]
done
etag=$(curl -s -D - -o /dev/null "$DETM_URL/dashboard/app.js" | tr -d '\r' | sed -n 's/^ETag: //Ip')
check "an unchanged file is 304 for its ETag" [ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$DETM_URL/dashboard/app.js")" = 304 ]
check "the page is served with a CSP that allows only detmd itself" sh -c \
	"curl -s -D - -o /dev/null $DETM_URL/dashboard | grep -qi \"^Content-Security-Policy: default-src 'self'\""
for p in /dashboard/../schema.sql /dashboard/..%2fschema.sql /dashboard/nope.html /dashboard/app.js/x /dashboard/%2e%2e; do
	code=$(curl -s --path-as-is -o "$tmp/resp" -w '%{http_code}' "$DETM_URL$p")
	check "GET $p is a 404 JSON error" sh -c "[ $code = 404 ] && jq -e .error.code $tmp/resp >/dev/null"
done

# ---- SSE ----
curl -s -N --max-time 3 "$DETM_URL/api/events" >"$tmp/ev1" & ev=$!
sleep 0.5
api POST /api/tasks '{"name":"sse","plan":["a"]}'
T=$(jqr .task_id)
api POST "/api/tasks/$T/messages" '{"content":"hello sse"}'
wait "$ev"
check "the stream starts with hello and a retry hint" sh -c "head -3 $tmp/ev1 | grep -q '^retry: 2000' && grep -q '^event: hello' $tmp/ev1"
check "a new task is an event with its id" grep -q "^data: {\"type\":\"task\",\"op\":\"created\",\"task_id\":\"$T\"" "$tmp/ev1"
check "a message is an event" grep -q '^event: message' "$tmp/ev1"
first=$(grep -m1 '^id: ' "$tmp/ev1" | cut -d' ' -f2)
curl -s -N --max-time 1 -H "Last-Event-ID: $first" "$DETM_URL/api/events" >"$tmp/ev2"
check "Last-Event-ID replays what came after it" sh -c "grep -q '^id: $((first + 1))$' $tmp/ev2 && ! grep -q '^id: $first$' $tmp/ev2"
curl -s -N --max-time 1 "$DETM_URL/api/events?since=999999" >"$tmp/ev3"
check "an id from before a restart gets a reset" grep -q '^event: reset' "$tmp/ev3"
check "the content type is text/event-stream" sh -c \
	"curl -s -N --max-time 1 -D - -o /dev/null $DETM_URL/api/events | grep -qi '^Content-Type: text/event-stream'"
# Clients that die without a word: detmd closes their sockets (and frees
# their threads) well before the next heartbeat (15 s) would find them gone.
# Counted in /proc/net/tcp: detmd's side of a dead client is CLOSE_WAIT (08)
# until detmd closes it.
port_hex=$(printf '%04X' "${DETM_URL##*:}")
close_wait() { awk -v p=":$port_hex" '$2 ~ p"$" && $4 == "08"' /proc/net/tcp | wc -l; }
dead=()
for i in 1 2 3 4 5 6; do curl -s -N "$DETM_URL/api/events" >"$tmp/dead$i" & dead+=($!); done
wait_for 10 sh -c "for i in 1 2 3 4 5 6; do [ -s $tmp/dead\$i ] || exit 1; done"
kill -9 "${dead[@]}" 2>/dev/null; wait "${dead[@]}" 2>/dev/null
wait_for 2 sh -c "[ \$(awk -v p=':$port_hex' '\$2 ~ p\"\$\" && \$4 == \"08\"' /proc/net/tcp | wc -l) -ge 1 ]"
t0=$(date +%s)
while [ "$(close_wait)" != 0 ] && [ $(( $(date +%s) - t0 )) -lt 8 ]; do sleep 0.2; done
check "six killed SSE clients: detmd closes their sockets ($(close_wait) left after $(( $(date +%s) - t0 )) s)" \
	[ "$(close_wait)" = 0 ]
curl -s -N "$DETM_URL/api/events" >/dev/null & sse=$!
sleep 0.3
daemon_stop
check "detmd stops promptly with an event stream open (exit $DETM_RC)" [ "$DETM_RC" = 0 ]
check "and the stream ends" wait_for 3 sh -c "! kill -0 $sse 2>/dev/null"

# ---- a token: the browser's way in ----
DETM_TOKEN=s3cret-token daemon_start || { bad "daemon start (token)"; finish; exit 1; }
code=$(curl -s -o "$tmp/resp" -w '%{http_code}' "$DETM_URL/dashboard")
check "with a token, /dashboard without it is 401 JSON" sh -c "[ $code = 401 ] && jq -e '.error.code == \"unauthorized\"' $tmp/resp >/dev/null"
curl -s -D "$tmp/h" -o /dev/null "$DETM_URL/dashboard?token=s3cret-token"
check "/dashboard?token= sets an HttpOnly SameSite cookie and redirects" sh -c \
	"grep -qi '^HTTP/1.1 303' $tmp/h && grep -qi '^Set-Cookie: detm_token=s3cret-token; Path=/; HttpOnly; SameSite=Strict' $tmp/h && grep -qi '^Location: /dashboard' $tmp/h"
check "the cookie opens the page" [ "$(curl -s -o /dev/null -w '%{http_code}' -b detm_token=s3cret-token "$DETM_URL/dashboard")" = 200 ]
check "and the API (events, tasks)" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 -b detm_token=s3cret-token $DETM_URL/api/tasks) = 200 ]"
check "a wrong cookie is 401" [ "$(curl -s -o /dev/null -w '%{http_code}' -b detm_token=nope "$DETM_URL/api/tasks")" = 401 ]
check "a query token works for GET (links, <img>)" [ "$(curl -s -o /dev/null -w '%{http_code}' "$DETM_URL/api/tasks?token=s3cret-token")" = 200 ]
check "but not for POST" [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{"name":"x"}' "$DETM_URL/api/tasks?token=s3cret-token")" = 401 ]
daemon_stop
finish
