#!/usr/bin/env bash
# run.sh - the osworld suite (issue 37 item 2): detmd as OSWorld's in-VM
# server, one per task under /osworld/<task_id>/, driven by a client that
# follows OSWorld's PythonController and SetupController call by call
# (controller.py; Python requests, as OSWorld's own), checked from outside
# (osworld.py says what): a detmd without --osworld-exec refuses commands;
# one with it serves every route on two task displays at once; the
# Provider of integrations/osworld/ starts, reverts and stops tasks and its
# forwarder carries PythonController's URLs to them.
#
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init osworld --term --rm-data

for t in python3 xterm mousepad zenity xlogo xdotool xwininfo xdpyinfo import convert ffprobe; do
	command -v $t >/dev/null || { bad "needs $t" "run scripts/install-deps.sh test"; finish; exit 1; }
done
python3 -c 'import requests' 2>/dev/null || { bad "needs python3-requests"; finish; exit 1; }

total_pass=0 total_fail=0
export tmp DETM_BIN
py() { PYTHONPATH=tests/osworld:integrations/osworld python3 tests/osworld/osworld.py "$1"; }

daemon_start || { bad "daemon start (exec off)"; finish; exit 1; }
run_part off py off
daemon_stop
rm -rf "$DETM_DATA"
unset DETM_DATA

daemon_start --osworld-exec || { bad "daemon start (exec on)"; finish; exit 1; }
run_part on py on
run_part provider py provider

daemon_stop
# Under ASan a leak or an error makes detmd exit non-zero at its stop.
if [ "${DETM_RC:-0}" -eq 0 ]; then ok "detmd stopped cleanly"; else
	bad "detmd stopped cleanly" "exit $DETM_RC: $(grep -m3 -A3 'ERROR\|SUMMARY' "$DETM_DATA/stdout.log")"; fi
PASS=$((PASS + total_pass)) FAIL=$((FAIL + total_fail))
finish
