#!/usr/bin/env bash
# replay.sh - record once, replay without the model (issue 38 item 3): a
# recorded 20-step workflow in a real GTK 3 application (tests/replay/
# save_app.py through desktop_launch: launch, three saves of six steps each
# - click File name, type a name, click Content, type a text, click Save,
# click OK in the "Saved" window - and one more click) on a 1024x768 task
# display, recorded by a scripted agent over HTTP (no model), then:
#
#   same     replayed on a fresh display as it was: wall time against the
#            recording's, model calls, steps replayed, how each was grounded
#   moved    replayed after the app changed its layout and window size
#            (every widget elsewhere): how many steps re-grounded without
#            a model (the tree, OCR), how many needed one
#   gone     the save button renamed: where the replay stops (needs_agent)
#
# No grounding model is configured, so "model calls" can only be 0 and a
# step none of the ways finds stops the replay (needs_agent). A real agent's
# recording would cost at least one model call per step; the scripted one
# here costs none, so its wall time is a floor. Reported, never enforced.
# Tunables: DETM_BIN (bin).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

tmp=$(mktemp -d /tmp/detm-bench-replay.XXXXXX)
pids=()
cleanup() {
	daemon_stop
	rm -rf "$tmp" "${DETM_DATA:-/nonexistent}"
}
trap cleanup EXIT
export LC_ALL=C.UTF-8
app="$PWD/tests/replay/save_app.py"
out="$tmp/out"
cfg="$tmp/app.json"
mkdir -p "$out"
. tests/replay/lib.sh
/usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "3.0")' 2>/dev/null ||
	{ echo "bench/replay: needs python3-gi with GTK 3 (scripts/install-deps.sh test)" >&2; exit 1; }
layout a 420 200 Save
daemon_start --launch-allow "$app" || { echo "bench/replay: detmd did not start" >&2; exit 1; }

t0=$(date +%s%N)
api POST /api/tasks '{"name":"bench: three saves","display":true,"display_width":1024,"display_height":768}'
S=$(jqr .task_id)
api POST "/api/tasks/$S/launch" "{\"command\":\"$app\",\"args\":[\"$cfg\"],\"wait_window\":15}"
record_save "$S" a.txt "first file" filename
record_save "$S" b.txt "second file"
record_save "$S" c.txt "third file"
click "$S" "$(el "$S" "role=text&name=Content")"
t1=$(date +%s%N)
api PATCH "/api/tasks/$S" '{"status":"completed"}'
rec_ms=$(( (t1 - t0) / 1000000 ))

row() { # row NAME: one line from the last progress
	printf '%-7s %-12s %6s ms %5s/%-5s %9s %7s %12s   %s\n' "$1" "$(jqr .status)" "$(took 2>/dev/null || echo -)" \
		"$(jqr .replayed)" "$(jqr .steps_total)" "$(jqr .regrounded)" "$(jqr .model_calls)" \
		"$(jqr '.needs.step // "-"')" \
		"$(jqr '[.steps[].grounded_by] | group_by(.) | map("\(.[0]) \(length)") | join(", ")')$(jqr \
		'[.steps[] | select(.grounded_by == "ocr" or .grounded_by == "window") | "\(.step) \(.action) by \(.grounded_by)"] | if length > 0 then " (" + join(", ") + ")" else "" end')"
}
echo "recorded: ${rec_ms} ms wall (scripted agent over HTTP, 0 model calls)"
printf '%-7s %-12s %9s %11s %9s %7s %12s   %s\n' case status wall replayed regrounded models "stopped at" "grounded by"
rm -f "$out"/*.txt
R=$(replay "$S" '{}') && result "$R" && row same
layout b 640 360 Save
rm -f "$out"/*.txt
R=$(replay "$S" '{}') && result "$R" && row moved
layout a 420 200 Store
R=$(replay "$S" '{"timeout_ms":4000}') && result "$R" && row gone
