#!/usr/bin/env bash
# run.sh - the vision suite: starts bin/vision-stub on a free loopback
# port (with an API key to check), runs bin/test-vision against it and
# passes on its closing "N passed, N failed" line and exit status.
# DETM_BIN selects bin/ or bin-asan/; an argument filters tests by name.
set -u
cd "$(dirname "$0")/../.."
DETM_BIN=${DETM_BIN:-bin}

for b in vision-stub test-vision; do
	if [ ! -x "$DETM_BIN/$b" ]; then
		echo "FAIL $DETM_BIN/$b is missing (make test-bins)"
		echo "0 passed, 1 failed"
		exit 1
	fi
done

dir=$(mktemp -d /tmp/detm-vision.XXXXXX)
key="stub-key-$$"
"$DETM_BIN/vision-stub" --port 0 --port-file "$dir/port" --key "$key" 2>"$dir/stub.log" &
stub=$!
cleanup() {
	kill -TERM "$stub" 2>/dev/null
	wait "$stub" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

for _ in $(seq 1 200); do
	[ -s "$dir/port" ] && break
	kill -0 "$stub" 2>/dev/null || break
	sleep 0.05
done
if [ ! -s "$dir/port" ]; then
	echo "FAIL vision-stub did not start:"
	cat "$dir/stub.log"
	echo "0 passed, 1 failed"
	exit 1
fi

VISION_STUB_URL="http://127.0.0.1:$(cat "$dir/port")" VISION_STUB_KEY="$key" \
	"$DETM_BIN/test-vision" "$@"
rc=$?
# The stub must have survived the run and must exit cleanly (under ASan a
# leak or error makes its status non-zero).
if ! kill -0 "$stub" 2>/dev/null; then
	echo "FAIL vision-stub died during the run:"
	cat "$dir/stub.log"
	rc=1
else
	kill -TERM "$stub"
	wait "$stub"
	src=$?
	if [ "$src" -ne 0 ]; then
		echo "FAIL vision-stub exited with status $src:"
		cat "$dir/stub.log"
		rc=1
	fi
fi
exit $rc
