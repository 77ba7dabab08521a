#!/usr/bin/env bash
# run.sh - the faults suite (issue 31 point 5): what detmd acknowledged
# survives disk faults, a full disk and a power loss, SQLite's habit.
#
#   1. injected faults (bin/libdetm-inject.so, tests/faults/inject.c, as
#      LD_PRELOAD): 8 writers storm detmd (tests/faults/storm.py) and 1.5 s
#      in a trigger file opens a 1 s window of EIO/ENOSPC on one operation
#      of one file: WAL pwrite (EIO, ENOSPC), WAL fdatasync with --db-sync
#      full, data.db writes (the checkpoint), ftruncate. Each: the fault was
#      really injected (the injector's log), every 2xx reads back with its
#      logs in the live daemon, every non-2xx is {"error":{code,message,
#      field}} with the named code, writes succeed after the window, no
#      request hung; /api/health said db "degraded" with db_error, /metrics
#      counted the failure; then kill -9, a restart without the injector:
#      every 2xx is there, integrity_check ok, no write answered io_error or
#      no_space is stored.
#   2. a real full disk: the data dir on a 64 MB tmpfs that a
#      filler file fills mid-storm, then the filler is deleted: no_space,
#      and writes resume by themselves (skipped, with the reason, if mount
#      fails: not root).
#   3. power loss: the injector's powerloss mode keeps <file>.synced, what
#      the syncs covered; kill -9, the files replaced by their shadows,
#      data.db-shm removed, a restart without the injector. --db-sync full:
#      no acknowledged write lost; normal: integrity ok, the daemon opens,
#      the writes lost are counted.
#
# A not_durable reply (stored, fsync failed) is neither acknowledged nor
# failed: it is not required after a restart, and it is reported.
# Under ASan (DETM_BIN=bin-asan) the injector is preloaded after ASan's
# runtime (ldd names it), which keeps ASan's "runtime comes first" rule.
# Uses tests/lib.sh, python3, curl and the sqlite3 CLI; no timing is
# asserted (30 s per request is the "does not hang" deadline).
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init faults
REAL_BIN=$(cd "$DETM_BIN" && pwd)
INJ=$REAL_BIN/libdetm-inject.so
STORM=tests/faults/storm.py
dirs=()
mnt=
suite_atexit() {
	[ -n "${poller:-}" ] && kill "$poller" 2>/dev/null
	if [ -n "$mnt" ]; then daemon_kill9; umount "$mnt" 2>/dev/null; rmdir "$mnt"; fi
	rm -rf "${dirs[@]}"
}
PRELOAD=$INJ
asan_rt=$(ldd "$REAL_BIN/detmd" 2>/dev/null | awk '/libasan/ { print $3 }')
[ -n "$asan_rt" ] && PRELOAD="$asan_rt $INJ"

if [ ! -f "$INJ" ]; then
	bad "the injector is built" "$INJ missing (make test-bins)"
	finish
	exit 1
fi

new_data_dir() {
	DETM_DATA=$(mktemp -d /tmp/detm-test.XXXXXX)
	dirs+=("$DETM_DATA")
}
now_ms() { date +%s%3N; }

# with_injector VAR=VALUE... : $tmp/inj/detmd, detmd with the injector and
# these variables (use as DETM_BIN=$tmp/inj daemon_start ...).
with_injector() {
	mkdir -p "$tmp/inj"
	{
		echo '#!/bin/sh'
		printf 'exec env LD_PRELOAD=%q' "$PRELOAD"
		printf ' %q' "$@"
		printf ' %q "$@"\n' "$REAL_BIN/detmd"
	} >"$tmp/inj/detmd"
	chmod +x "$tmp/inj/detmd"
}

# tally : storm.py's ok/FAIL lines counted as checks of this suite.
tally() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok   "*) ok "${line#ok   }" ;;
		"FAIL "*) bad "${line#FAIL }" ;;
		*) echo "$line" ;;
		esac
	done
}

# storm_tally check|dbcheck ARGS... : storm.py's checks, tallied; a crash of
# storm.py (no FAIL line, non-zero exit) is a failure too.
storm_tally() {
	local out rc
	out=$($STORM "$@" 2>&1)
	rc=$?
	tally <<<"$out"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' <<<"$out"; then bad "storm.py $1 exited $rc"; fi
}

integrity() {
	local out
	out=$(sqlite3 "$DETM_DATA/data.db" 'PRAGMA integrity_check' 2>&1)
	if [ "$out" = ok ]; then ok "$1: integrity_check ok"; else bad "$1: integrity_check ok" "$(head -c 300 <<<"$out")"; fi
}

# health_poll : /api/health every 100 ms into $tmp/health until killed.
health_poll() {
	: >"$tmp/health"
	while :; do
		curl -sS -m 10 "$DETM_URL/api/health" >>"$tmp/health" 2>/dev/null
		echo >>"$tmp/health"
		sleep 0.1
	done &
	poller=$!
}
health_stop() { kill "$poller" 2>/dev/null; wait "$poller" 2>/dev/null; poller=; }

metric() { # metric NAME : its value in /metrics (empty if absent)
	curl -sS -m 10 "$DETM_URL/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}

# after_restart NAME [--lost-ok] : kill -9, restart on the same data dir
# without the injector, every 2xx is there, integrity ok, failed writes
# not stored.
after_restart() {
	local name=$1
	shift
	daemon_kill9
	if ! daemon_start; then
		bad "$name: restarts without the injector after kill -9"
		return
	fi
	ok "$name: restarts without the injector after kill -9"
	storm_tally check "$DETM_URL" "$tmp/storm.json" --label "$name, after restart" "$@"
	daemon_stop
	integrity "$name"
	storm_tally dbcheck "$DETM_DATA/data.db" "$tmp/storm.json" --label "$name, after restart"
}

# fault NAME SYNC EXPECT METRIC VAR=VALUE... : one injected scenario.
# EXPECT: the error codes a failed write is answered with ("-": the fault
# need not fail any write); METRIC: the /metrics counter that must move.
fault() {
	local name=$1 sync=$2 expect=$3 metric=$4 log n start ms
	shift 4
	new_data_dir
	rm -f "$tmp/go" "$tmp/inj.log"
	with_injector DETM_INJECT_TRIGGER="$tmp/go" DETM_INJECT_LOG="$tmp/inj.log" DETM_INJECT_MS=1000 "$@"
	if ! DETM_BIN=$tmp/inj daemon_start --db-sync "$sync"; then
		bad "$name: detmd starts with the injector"
		return
	fi
	health_poll
	$STORM run "$DETM_URL" "$tmp/storm.json" 5 8 "$tmp/go" 1.5
	health_stop
	log=$(cat "$tmp/inj.log" 2>/dev/null)
	read -r _ n _ start _ ms <<<"${log:-x 0 x 0 x 0}"
	if [ "${n:-0}" -gt 0 ]; then
		ok "$name: the injector failed $n calls"
	else
		bad "$name: the injector failed some calls" "it never fired (log: ${log:-none})"
		start=$(now_ms) ms=0
	fi
	local args=(--label "$name" --window "$start,$ms")
	[ "$expect" != - ] && args+=(--expect "$expect")
	storm_tally check "$DETM_URL" "$tmp/storm.json" "${args[@]}"
	# Failed reads leave writes working: health does not call the store
	# degraded for them (it is about writes); the read counter moves.
	if [ "$expect" != - ] && [ "$metric" != detm_db_read_failures_total ]; then
		check "$name: /api/health said db degraded with a db_error meanwhile" \
			grep -q '"db":"degraded".*"db_error"\|"db_error".*"db":"degraded"' "$tmp/health"
	fi
	n=$(metric "$metric")
	if [ "${n:-0}" -gt 0 ] 2>/dev/null; then ok "$name: $metric is $n"; else bad "$name: $metric counts the failures" "${n:-absent}"; fi
	after_restart "$name"
}

# ---- 1. injected faults ---------------------------------------------------------
fault "EIO on WAL pwrite" normal io_error detm_db_write_failures_total \
	DETM_INJECT_FILE=data.db-wal DETM_INJECT_OPS=pwrite,write,writev DETM_INJECT_ERRNO=EIO
fault "ENOSPC on WAL pwrite" normal no_space detm_db_write_failures_total \
	DETM_INJECT_FILE=data.db-wal DETM_INJECT_OPS=pwrite,write,writev DETM_INJECT_ERRNO=ENOSPC
fault "EIO on WAL fdatasync, sync full" full not_durable detm_db_sync_failures_total \
	DETM_INJECT_FILE=data.db-wal DETM_INJECT_OPS=fdatasync,fsync DETM_INJECT_ERRNO=EIO
fault "EIO on data.db writes (checkpoint)" normal - detm_db_checkpoint_failures_total \
	DETM_INJECT_FILE=data.db DETM_INJECT_OPS=pwrite,write,writev DETM_INJECT_ERRNO=EIO
fault "ENOSPC on ftruncate" normal - detm_db_checkpoint_failures_total \
	DETM_INJECT_FILE=data.db,data.db-wal DETM_INJECT_OPS=ftruncate DETM_INJECT_ERRNO=ENOSPC
# Reads that fail: a lookup that cannot read is the store's error, never
# "no such task" (issue 33: a write during a disk fault once answered 404),
# and a write already stored keeps its 2xx when only its reply's summary
# cannot be read (it used to be 500 "nothing was stored" for a stored task).
# No write need fail here: the read counter must move.
fault "EIO on reads" normal - detm_db_read_failures_total \
	DETM_INJECT_FILE=data.db,data.db-wal DETM_INJECT_OPS=pread DETM_INJECT_ERRNO=EIO

# ---- 2. a real full disk ---------------------------------------------------------
full_disk() {
	local name="full tmpfs" fill free
	mnt=$(mktemp -d /tmp/detm-faults-mnt.XXXXXX)
	if ! mount -t tmpfs -o size=64m tmpfs "$mnt" 2>"$tmp/mount.err"; then
		echo "skip: $name: mount -t tmpfs failed: $(head -c 200 "$tmp/mount.err")"
		rmdir "$mnt"
		mnt=
		return
	fi
	DETM_DATA=$mnt/data
	mkdir -m 700 "$DETM_DATA"
	if ! daemon_start; then
		bad "$name: detmd starts on the tmpfs"
		return
	fi
	health_poll
	$STORM run "$DETM_URL" "$tmp/storm.json" 6 8 &
	local storm=$!
	sleep 1.5
	fill=$(now_ms)
	dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null
	sleep 2
	rm -f "$mnt/filler"
	free=$(now_ms)
	wait "$storm"
	health_stop
	storm_tally check "$DETM_URL" "$tmp/storm.json" --label "$name" \
		--window "$fill,$((free - fill))" --expect no_space
	check "$name: /api/health said db degraded with a db_error meanwhile" \
		grep -q '"db":"degraded".*"db_error"\|"db_error".*"db":"degraded"' "$tmp/health"
	after_restart "$name"
	umount "$mnt" && rmdir "$mnt"
	mnt=
}
full_disk

# ---- 3. power loss ---------------------------------------------------------------
# power_cut : what a power loss leaves: each file as its last sync left it.
power_cut() {
	local f
	for f in data.db data.db-wal; do
		echo "   power loss: $f $(stat -c %s "$DETM_DATA/$f" 2>/dev/null || echo absent) bytes," \
			"synced $(stat -c %s "$DETM_DATA/$f.synced" 2>/dev/null || echo never)"
		if [ -e "$DETM_DATA/$f.synced" ]; then
			mv -f "$DETM_DATA/$f.synced" "$DETM_DATA/$f"
		else
			rm -f "$DETM_DATA/$f"
		fi
	done
	rm -f "$DETM_DATA/data.db-shm"
}

power_loss() {
	local sync=$1 name="power loss, --db-sync $1"
	shift
	new_data_dir
	with_injector DETM_INJECT_MODE=powerloss DETM_INJECT_FILE=data.db,data.db-wal
	if ! DETM_BIN=$tmp/inj daemon_start --db-sync "$sync"; then
		bad "$name: detmd starts with the injector"
		return
	fi
	$STORM run "$DETM_URL" "$tmp/storm.json" 4 8
	daemon_kill9
	if [ -e "$DETM_DATA/data.db.synced" ] || [ -e "$DETM_DATA/data.db-wal.synced" ]; then
		ok "$name: the simulator kept synced shadows"
	else
		bad "$name: the simulator kept synced shadows" "none: it never saw a sync"
	fi
	power_cut
	if ! daemon_start; then
		bad "$name: the database opens after the power loss"
		return
	fi
	ok "$name: the database opens after the power loss"
	storm_tally check "$DETM_URL" "$tmp/storm.json" --label "$name" "$@"
	daemon_stop
	integrity "$name"
}
power_loss full
power_loss normal --lost-ok

finish
