#!/usr/bin/env bash
# run.sh - the persist suite: what detmd acknowledged survives a restart.
#
#   1. clean restart: write a task tree over HTTP, SIGTERM, restart on the
#      same data dir, and compare the JSON of the summary (detail=full), each
#      drill-down, the thread and the task list byte for byte
#   2. crash: kill -9 right after the last 2xx (and once mid-stream, with a
#      writer still running); after a restart every acknowledged action is
#      there, and PRAGMA integrity_check says ok
#   3. exclusivity: a second detmd on the same data dir or the same port
#      exits non-zero with a clear message, and the first keeps serving
#   4. racing operators: 20 clients send random pause/resume/cancel to one
#      task while an agent logs actions (tests/load/controls.py): no 5xx,
#      every acknowledged control and action is recorded once, the thread's
#      control and lifecycle messages replay as a walk of the status machine
#      ending in the task's status, created_at never goes back; the same
#      thread after a restart
#
# Uses tests/lib.sh, curl, python3 and the sqlite3 CLI; prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init persist
dirs=()
suite_atexit() {
	[ -n "${writer:-}" ] && kill "$writer" 2>/dev/null
	rm -rf "${dirs[@]}"
}

# api METHOD PATH [BODY] : print the body; fail (return 1) on a non-2xx status.
api() {
	local code
	code=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X "$1" "$DETM_URL$2" \
		${3:+-H 'Content-Type: application/json' --data-binary "$3"}) || return 1
	cat "$tmp/resp"
	case "$code" in 2??) return 0 ;; *) echo "  $1 $2 -> $code: $(cat "$tmp/resp")" >&2; return 1 ;; esac
}
field() { # field KEY : the first "KEY":"value" string in stdin
	sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" | head -n 1
}
new_data_dir() {
	DETM_DATA=$(mktemp -d /tmp/detm-test.XXXXXX)
	dirs+=("$DETM_DATA")
}

snapshot() { # snapshot DIR : save every view of task $T into DIR
	mkdir -p "$1"
	api GET "/api/tasks/$T?detail=full" >"$1/full" &&
		api GET "/api/tasks/$T?detail=focused" >"$1/focused" &&
		api GET "/api/tasks/$T/items/0?limit=1000" >"$1/item0" &&
		api GET "/api/tasks/$T/items/1?limit=1000" >"$1/item1" &&
		api GET "/api/tasks/$T/items/2?limit=1000" >"$1/item2" &&
		api GET "/api/tasks/$T/messages?limit=1000" >"$1/messages" &&
		api GET "/api/tasks/$A1" >"$1/action1" &&
		api GET "/api/tasks?status=all&limit=500" >"$1/list"
}

# ---- 1. clean restart -------------------------------------------------------
new_data_dir
if ! daemon_start; then
	bad "clean restart: daemon starts"
	finish
	exit 1
fi
built=0
{
	T=$(api POST /api/tasks '{"name":"persist me","plan":["open","export","verify"],"metadata":{"owner":"me","n":1},"agent_id":"agent-1"}' | field task_id) &&
	api PATCH "/api/tasks/$T/items/0" '{"status":"active"}' >/dev/null &&
	A1=$(api POST "/api/tasks/$T/actions" '{"action_type":"gui","summary":"clicked Export","input_data":{"x":10,"y":[1,2]},"output_data":"ok","duration_ms":12,"logs":[{"content":"dialog opened"},{"log_type":"stderr","content":"caf\u00e9 \u2713"}]}' | field action_id) &&
	A1="$T/actions/$A1" &&
	api POST "/api/tasks/$A1/logs" '{"log_type":"stdout","content":"late log"}' >/dev/null &&
	api PATCH "/api/tasks/$T/items/0" '{"status":"completed"}' >/dev/null &&
	api PATCH "/api/tasks/$T/items/1" '{"status":"active","note":"slow export"}' >/dev/null &&
	api POST "/api/tasks/$T/actions" '{"action_type":"cli","summary":"ran export.sh","status":"started","output_data":{"pages":3}}' >/dev/null &&
	api POST "/api/tasks/$T/messages" '{"content":"please also email it"}' >/dev/null &&
	api POST "/api/tasks/$T/messages" '{"content":"ok","role":"agent","msg_type":"reply"}' >/dev/null &&
	api PATCH "/api/tasks/$T" '{"metadata":{"n":null,"stage":"export"},"message":"export is slow today"}' >/dev/null &&
	api POST "/api/tasks/$T/items" '{"items":["email it"]}' >/dev/null &&
	api POST "/api/tasks/$T/pause" '{"reason":"lunch"}' >/dev/null &&
	api POST "/api/tasks/$T/resume" >/dev/null &&
	api POST /api/tasks '{"name":"second task"}' >/dev/null &&
	built=1
} || true
if [ "$built" = 1 ]; then ok "clean restart: task tree written"; else bad "clean restart: task tree written"; fi

if snapshot "$tmp/before"; then ok "clean restart: snapshot before"; else bad "clean restart: snapshot before"; fi
daemon_stop
if [ "${DETM_RC:-1}" -eq 0 ]; then ok "clean restart: SIGTERM exits 0"; else bad "clean restart: SIGTERM exits 0" "exit status $DETM_RC"; fi
if daemon_start; then
	ok "clean restart: restarts on the same data dir"
	if snapshot "$tmp/after"; then ok "clean restart: snapshot after"; else bad "clean restart: snapshot after"; fi
	for f in full focused item0 item1 item2 messages action1 list; do
		if cmp -s "$tmp/before/$f" "$tmp/after/$f"; then
			ok "clean restart: $f identical"
		else
			bad "clean restart: $f identical" "$(diff <(tr ',' '\n' <"$tmp/before/$f") <(tr ',' '\n' <"$tmp/after/$f") | head -n 6 | tr '\n' ' ')"
		fi
	done
	if grep -q '"content":"late log"' "$tmp/after/full" && grep -q '"stage":"export"' "$tmp/after/full"; then
		ok "clean restart: logs and metadata are in the snapshot"
	else
		bad "clean restart: logs and metadata are in the snapshot"
	fi
	# A write after the restart still works and ids do not collide.
	if api POST "/api/tasks/$T/actions" '{"action_type":"cli","summary":"after restart"}' >/dev/null; then
		ok "clean restart: writes work after the restart"
	else
		bad "clean restart: writes work after the restart"
	fi
else
	bad "clean restart: restarts on the same data dir"
fi

# ---- 3. exclusivity (while this daemon runs) ----------------------------------
if [ -n "${DETM_PID:-}" ]; then
	port=${DETM_URL##*:}
	timeout 10 "$DETM_BIN/detmd" --listen 127.0.0.1 --port 0 --data-dir "$DETM_DATA" \
		>"$tmp/second.out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -qiE 'already|lock|in use' "$tmp/second.out"; then
		ok "exclusive: a second detmd on the same data dir exits $rc with a message"
	else
		bad "exclusive: a second detmd on the same data dir exits non-zero with a message" \
			"exit $rc, output: $(head -c 300 "$tmp/second.out")"
	fi
	other=$(mktemp -d /tmp/detm-test.XXXXXX)
	dirs+=("$other")
	timeout 10 "$DETM_BIN/detmd" --listen 127.0.0.1 --port "$port" --data-dir "$other" \
		>"$tmp/third.out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "$port" "$tmp/third.out"; then
		ok "exclusive: a second detmd on the same port exits $rc naming the port"
	else
		bad "exclusive: a second detmd on the same port exits non-zero naming the port" \
			"exit $rc, output: $(head -c 300 "$tmp/third.out")"
	fi
	if api GET /api/health >/dev/null && kill -0 "$DETM_PID" 2>/dev/null; then
		ok "exclusive: the first detmd still serves"
	else
		bad "exclusive: the first detmd still serves"
	fi
	if [ "$(cat "$DETM_DATA/detmd.port" 2>/dev/null)" = "$port" ]; then
		ok "exclusive: the failed start left detmd.port alone"
	else
		bad "exclusive: the failed start left detmd.port alone" "now $(cat "$DETM_DATA/detmd.port" 2>/dev/null)"
	fi
fi
daemon_stop

# ---- 2. crash: kill -9 right after the last 2xx ---------------------------------
# check_acked FILE : every action id in FILE (task/aid per line) reads back.
check_acked() {
	local missing=0 n=0 line
	while read -r line; do
		n=$((n + 1))
		api GET "/api/tasks/$line" >/dev/null 2>&1 || missing=$((missing + 1))
	done <"$1"
	echo "$missing of $n"
	[ "$missing" -eq 0 ]
}
integrity() {
	local out
	out=$(sqlite3 "$DETM_DATA/data.db" 'PRAGMA integrity_check' 2>&1)
	if [ "$out" = ok ]; then ok "$1: integrity_check ok"; else bad "$1: integrity_check ok" "$out"; fi
}

new_data_dir
if daemon_start; then
	: >"$tmp/acked"
	T=$(api POST /api/tasks '{"name":"crash","plan":["a"]}' | field task_id)
	n=0
	set -o pipefail
	for i in $(seq 1 300); do
		aid=$(api POST "/api/tasks/$T/actions" "{\"action_type\":\"cli\",\"summary\":\"row $i\",\"logs\":[{\"content\":\"log $i\"}]}" | field action_id) || break
		[ -n "$aid" ] && echo "$T/actions/$aid" >>"$tmp/acked" && n=$((n + 1))
	done
	set +o pipefail
	api POST "/api/tasks/$T/messages" '{"content":"last message before the crash"}' >/dev/null && n=$((n + 1))
	daemon_kill9
	if [ "$n" -eq 301 ]; then ok "crash: 301 writes acknowledged"; else bad "crash: 301 writes acknowledged" "$n"; fi
	if daemon_start; then
		ok "crash: restarts after kill -9"
		if r=$(check_acked "$tmp/acked"); then ok "crash: every acknowledged action is there"; else bad "crash: every acknowledged action is there" "missing $r"; fi
		if api GET "/api/tasks/$T/messages?limit=1" | grep -q 'last message before the crash'; then
			ok "crash: the last acknowledged message is there"
		else
			bad "crash: the last acknowledged message is there"
		fi
		if api GET "/api/tasks/$T/items/0?limit=1" | grep -q '"action_count":300'; then
			ok "crash: action_count is 300"
		else
			bad "crash: action_count is 300" "$(api GET "/api/tasks/$T/items/0?limit=1" | head -c 200)"
		fi
		daemon_stop
		integrity "crash"
	else
		bad "crash: restarts after kill -9"
	fi
else
	bad "crash: daemon starts"
fi

# ---- 2b. crash mid-stream: a writer is still sending when kill -9 lands ------
if daemon_start; then
	: >"$tmp/acked2"
	T2=$(api POST /api/tasks '{"name":"crash mid-stream","plan":["a"]}' | field task_id)
	(
		i=0
		while :; do
			i=$((i + 1))
			[ "$i" -le 20000 ] || exit 0   # a bound, whatever happens
			# Stop at the first failed request (the daemon was killed);
			# test api's own status, not a pipeline's.
			out=$(api POST "/api/tasks/$T2/actions" "{\"action_type\":\"cli\",\"summary\":\"stream $i\"}" 2>/dev/null) || exit 0
			aid=$(printf '%s' "$out" | field action_id)
			[ -n "$aid" ] && echo "$T2/actions/$aid" >>"$tmp/acked2"
		done
	) &
	writer=$!
	# kill -9 lands while the writer is streaming: after its 20th
	# acknowledgement, not after a fixed time (a busy machine may ack none)
	wait_for 60 sh -c "[ \$(wc -l <'$tmp/acked2') -ge 20 ]"
	daemon_kill9
	wait "$writer" 2>/dev/null
	writer=
	n=$(wc -l <"$tmp/acked2")
	if [ "$n" -gt 0 ]; then ok "crash mid-stream: $n writes acknowledged before kill -9"; else bad "crash mid-stream: writes acknowledged before kill -9" "0"; fi
	if daemon_start; then
		if r=$(check_acked "$tmp/acked2"); then ok "crash mid-stream: every acknowledged action is there"; else bad "crash mid-stream: every acknowledged action is there" "missing $r"; fi
		if r=$(check_acked "$tmp/acked"); then ok "crash mid-stream: the first crash's rows are still there"; else bad "crash mid-stream: the first crash's rows are still there" "missing $r"; fi
		daemon_stop
		integrity "crash mid-stream"
	else
		bad "crash mid-stream: restarts after kill -9"
	fi
else
	bad "crash mid-stream: daemon starts"
fi


# ---- 4. racing operators: one transaction per transition ----------------------
# Each "ok"/"FAIL" line of controls.py counts as one check here.
tally() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok   "*) ok "racing operators: ${line#ok   }" ;;
		"FAIL "*) bad "racing operators: ${line#FAIL }" ;;
		*) echo "$line" ;;
		esac
	done
}
new_data_dir
if daemon_start; then
	T4=$(api POST /api/tasks '{"name":"racing operators","plan":["work"]}' | field task_id)
	tests/load/controls.py run "$DETM_URL" 20 20 "$T4" "$tmp/controls.json" | tally
	tests/load/controls.py check "$DETM_URL" "$T4" "$tmp/controls.json" | tally
	api GET "/api/tasks/$T4/messages?limit=1000" >"$tmp/thread4.before"
	daemon_stop
	if daemon_start; then
		api GET "/api/tasks/$T4/messages?limit=1000" >"$tmp/thread4.after"
		check "racing operators: the thread is the same after a restart" \
			cmp -s "$tmp/thread4.before" "$tmp/thread4.after"
		daemon_stop
	else
		bad "racing operators: restarts"
	fi
else
	bad "racing operators: daemon starts"
fi

# ---- 5. file modes ------------------------------------------------------------
# A data dir someone made 755 (and a umask of 022): every file detmd creates
# is still 0600, and the start-up log warns about the dir.
new_data_dir
chmod 755 "$DETM_DATA"
umask 022
if daemon_start; then
	api POST /api/tasks '{"name":"modes"}' >/dev/null || bad "file modes: a write"
	for f in data.db data.db-wal data.db-shm detmd.port logs/debug.log; do
		m=$(stat -c %a "$DETM_DATA/$f" 2>/dev/null)
		if [ "$m" = 600 ]; then ok "file modes: $f is 0600"; else bad "file modes: $f is 0600" "mode ${m:-missing}"; fi
	done
	check "file modes: the log warns that the data dir is mode 755" \
		grep -q 'data dir .* has mode 755' "$DETM_DATA/logs/debug.log"
	daemon_stop
else
	bad "file modes: daemon starts in a 755 data dir"
fi

finish
