# lib.sh - shell helpers for test suites that drive a real detmd.
#
#   . tests/lib.sh
#   daemon_start [extra detmd args...]   # sets DETM_URL, DETM_PID, DETM_DATA
#                                        # (DETM_TOKEN set: started with that token)
#   daemon_stop                          # SIGTERM, wait
#   daemon_kill9                         # kill -9, wait
#   ok "name" / bad "name" "why"; finish  # counting and the closing line
#   suite_init NAME [--term] [--rm-data]  # the shared preamble (below)
#
# detmd is started with --port 0 on 127.0.0.1: it binds a free port and
# writes it to $DETM_DATA/detmd.port, so parallel runs never collide.

DETM_BIN=${DETM_BIN:-bin}
PASS=0
FAIL=0

ok() { PASS=$((PASS + 1)); echo "ok   $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1${2:+: $2}"; }
check() { # check "name" cmd... : ok if cmd succeeds
	local name=$1; shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}
finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}

# daemon_start [args]: start detmd on a free port with DETM_DATA (a new temp
# dir unless already set) and wait until it answers /api/health.
# free_port: a loopback TCP port nothing listens on right now
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
daemon_start() {
	: "${DETM_DATA:=$(mktemp -d /tmp/detm-test.XXXXXX)}"
	rm -f "$DETM_DATA/detmd.port"
	ACU_TOKEN=${DETM_TOKEN:-} "$DETM_BIN/detmd" --listen 127.0.0.1 --port 0 \
		--data-dir "$DETM_DATA" "$@" >>"$DETM_DATA/stdout.log" 2>&1 &
	DETM_PID=$!
	local i
	for i in $(seq 1 200); do
		if [ -s "$DETM_DATA/detmd.port" ]; then
			DETM_URL="http://127.0.0.1:$(cat "$DETM_DATA/detmd.port")"
			if curl -fsS -o /dev/null ${DETM_TOKEN:+-H "Authorization: Bearer $DETM_TOKEN"} \
				"$DETM_URL/api/health" 2>/dev/null; then
				export DETM_URL DETM_PID DETM_DATA
				return 0
			fi
		fi
		kill -0 "$DETM_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "detmd did not start; its output:" >&2
	cat "$DETM_DATA/stdout.log" >&2
	return 1
}

daemon_stop() {
	[ -n "${DETM_PID:-}" ] || return 0
	kill -TERM "$DETM_PID" 2>/dev/null
	wait "$DETM_PID" 2>/dev/null
	DETM_RC=$?
	DETM_PID=
}

daemon_kill9() {
	[ -n "${DETM_PID:-}" ] || return 0
	kill -9 "$DETM_PID" 2>/dev/null
	wait "$DETM_PID" 2>/dev/null
	DETM_PID=
}

# JSON API helpers for suites that keep a scratch dir in $tmp:
#   api METHOD PATH [BODY]   body to $tmp/resp, status to $CODE
#   jqr EXPR                 jq -r on the last response
#   expect NAME STATUS [JQ]  ok if the status matches and JQ prints true
api() {
	CODE=$(curl -sS -o "${tmp:?}/resp" -w '%{http_code}' -X "$1" "$DETM_URL$2" \
		-H 'Content-Type: application/json' ${3:+--data-binary "$3"})
}
jqr() { jq -r "$@" <"${tmp:?}/resp"; }
expect() {
	local name=$1 want=$2 expr=${3:-}
	if [ "$CODE" != "$want" ]; then
		bad "$name" "status $CODE, want $want: $(head -c 400 "$tmp/resp")"
	elif [ -n "$expr" ] && [ "$(jq -r "$expr" <"$tmp/resp" 2>/dev/null)" != "true" ]; then
		bad "$name" "$expr is not true in $(head -c 400 "$tmp/resp")"
	else
		ok "$name"
	fi
}

# wait_for SECONDS cmd...: poll cmd every 50 ms until it succeeds.
wait_for() {
	local t=$1 i; shift
	for i in $(seq 1 $((t * 20))); do "$@" && return 0; sleep 0.05; done
	return 1
}

# mcp_calls OUT LIMIT MSG... : detm-mcp with the MSGs on stdin (one JSON-RPC
# message each); stdin stays open until OUT holds a reply to every request
# among them, or LIMIT seconds passed. detm-mcp abandons calls still running
# 1 s after stdin closes (a client that hangs up is gone), and on a busy
# machine a gui_do or a tree can take longer than that.
mcp_calls() {
	local out=$1 limit=$2 ids n i=0
	shift 2
	ids=$(printf '%s\n' "$@" | jq -sc '[.[] | select(.id != null) | .id]')
	n=$(jq 'length' <<<"$ids")
	: >"$out"
	{
		printf '%s\n' "$@"
		while [ "$i" -lt $((limit * 10)) ] &&
		    [ "$(jq -s --argjson ids "$ids" '[.[] | select(.id as $x | $ids | index($x))] | length' "$out" 2>/dev/null)" != "$n" ]; do
			sleep 0.1
			i=$((i + 1))
		done
	} | timeout "$limit" "$DETM_BIN/detm-mcp" --url "$DETM_URL" >"$out" 2>/dev/null
}

# bin/vision-stub helpers for suites that set STUB to its URL:
#   stub_script JSON   the answers to give next (and forget past requests)
#   stub_count         requests seen since (health checks excluded)
#   stub_last JQ       JQ applied to the last such request
stub_script() { curl -fsS -X POST "$STUB/_stub/script" -d "$1" >/dev/null; curl -fsS -X DELETE "$STUB/_stub/requests" >/dev/null; }
stub_count() { curl -fsS "$STUB/_stub/requests" | jq '[.requests[] | select(.api != "health")] | length'; }
stub_last() { curl -fsS "$STUB/_stub/requests" | jq -c "[.requests[] | select(.api != \"health\")] | last | $1"; }

# run_part NAME CMD...: one part of a suite that has several (each prints
# its own "N passed, N failed"): run it, show its output, and add its counts
# to total_pass / total_fail (a non-zero exit counts as a failure).
run_part() {
	local name=$1 out rc line p f
	shift
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed '$d'
	line=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
	else
		printf '%s\n' "$line"
		p=0 f=1
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name exited with status $rc"
		f=1
	fi
	echo "   ($name: $p passed, $f failed)"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
}

# A task's own display, for suites that start X clients on it:
#   disp_of TASK / auth_of TASK   its DISPLAY and XAUTHORITY
#   xenv TASK cmd...              run an X client there (stderr to $tmp/clients.log)
disp_of() { curl -s "$DETM_URL/api/tasks/$1" | jq -r .metadata.display; }
auth_of() { curl -s "$DETM_URL/api/tasks/$1" | jq -r .metadata.xauthority; }
xenv() {
	local t=$1; shift
	DISPLAY=$(disp_of "$t") XAUTHORITY=$(auth_of "$t") "$@" 2>>"${tmp:?}/clients.log"
}

# ---- the shared suite preamble ----
#
#   suite_init NAME [--term] [--rm-data]
#       $tmp (a new /tmp/detm-NAME.XXXXXX), pids=() and LC_ALL=C.UTF-8; at
#       exit: suite_atexit if the suite defines one, detmd stopped (kill -9,
#       or SIGTERM with --term so it stops its own Xvfbs first), every pid
#       in pids killed, $tmp removed (and $DETM_DATA with --rm-data).
#   xstart TASK cmd...     an X client on TASK's display, in the background;
#                          its own pid (not a subshell's) in XPID and pids
#   xwait TASK TITLE [S]   until a window titled exactly TITLE is on TASK's
#                          display (S seconds, 10 by default)
#   xvfb_start WxHxD       a private Xvfb (-displayfd, no TCP): XVFB_DISPLAY
#                          (":N") and XVFB_PID (also in pids); 1 if it fails
#   stub_start [--no-key] [args...]
#                          bin/vision-stub on a free port with key KEY
#                          ("stub-key-$$"; none with --no-key) and args:
#                          STUB (its URL), STUB_PID (also in pids); 1 if it
#                          does not start
#   npm_ci DIR MODULE      DIR's npm packages (lockfile committed) unless
#                          MODULE is there, installed from the same
#                          package.json and lock; 1 (and npm's log) if not
SUITE_STOP=kill9
SUITE_RM_DATA=
suite_init() {
	local name=$1 a
	shift
	for a in "$@"; do
		case $a in
		--term) SUITE_STOP=term ;;
		--rm-data) SUITE_RM_DATA=1 ;;
		*) echo "suite_init: unknown option $a" >&2; return 1 ;;
		esac
	done
	tmp=$(mktemp -d "/tmp/detm-$name.XXXXXX")
	pids=()
	export LC_ALL=C.UTF-8
	trap suite_cleanup EXIT
}
suite_cleanup() {
	local p
	if declare -F suite_atexit >/dev/null; then suite_atexit; fi
	if [ "$SUITE_STOP" = term ]; then daemon_stop; else daemon_kill9; fi
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "${tmp:?}"
	if [ -n "$SUITE_RM_DATA" ]; then rm -rf "${DETM_DATA:-/nonexistent}"; fi
}

xstart() {
	local t=$1 d a
	shift
	d=$(disp_of "$t")
	a=$(auth_of "$t")
	DISPLAY=$d XAUTHORITY=$a "$@" 2>>"${tmp:?}/clients.log" &
	XPID=$!
	pids+=("$XPID")
}
xwait() {
	wait_for "${3:-10}" sh -c "DISPLAY=$(disp_of "$1") XAUTHORITY=$(auth_of "$1") \
		xdotool search --name '^$2\$' >/dev/null 2>&1"
}

xvfb_start() {
	local num
	rm -f "${tmp:?}/displayfd"
	mkfifo "$tmp/displayfd"
	Xvfb -displayfd 5 -screen 0 "$1" -nolisten tcp 5>"$tmp/displayfd" >/dev/null 2>&1 &
	XVFB_PID=$!
	pids+=("$XVFB_PID")
	read -r -t 10 num <"$tmp/displayfd" || return 1
	XVFB_DISPLAY=":$num"
}

stub_start() {
	KEY="stub-key-$$"
	rm -f "${tmp:?}/stub.port"
	if [ "${1:-}" = --no-key ]; then shift; KEY=; else set -- --key "$KEY" "$@"; fi
	"$DETM_BIN/vision-stub" --port 0 --port-file "$tmp/stub.port" "$@" 2>"$tmp/stub.log" &
	STUB_PID=$!
	pids+=("$STUB_PID")
	wait_for 5 test -s "$tmp/stub.port" || { echo "vision-stub did not start:" >&2; cat "$tmp/stub.log" >&2; return 1; }
	STUB="http://127.0.0.1:$(cat "$tmp/stub.port")"
}

npm_ci() {
	local dir=$1 module=$2 want rc=0
	want=$(cat "$dir/package.json" "$dir/package-lock.json" 2>/dev/null | sha256sum | cut -c1-64)
	# One install at a time per DIR (suites run side by side share
	# tests/mcp/sdk, tests/dashboard): npm ci empties node_modules first.
	# node_modules/.detm-lock holds the hash of the package.json and lock
	# it was installed from: a changed lock or version installs again.
	(
		flock 9
		[ -d "$dir/node_modules/$module" ] &&
			[ "$(cat "$dir/node_modules/.detm-lock" 2>/dev/null)" = "$want" ] && exit 0
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>npm-ci.log) || exit 1
		echo "$want" >"$dir/node_modules/.detm-lock"
	) 9>"$dir/.npm-ci.lock" || rc=1
	if [ "$rc" -ne 0 ]; then
		echo "FAIL npm ci failed in $dir:"
		cat "$dir/npm-ci.log"
		return 1
	fi
	rm -f "$dir/npm-ci.log"
}
