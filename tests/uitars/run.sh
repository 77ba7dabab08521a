#!/usr/bin/env bash
# run.sh - the uitars suite: every UI-TARS answer form read the way
# ByteDance's own parser reads it. Each answer of tests/uitars/cases.json is
# served by bin/vision-stub (Ollama wire format) to a real detmd (uitars
# backend) on a real 1920x1080 Xvfb task display, through POST
# /api/gui/find; the screen point detmd answers is judged by oracle.mjs
# against @ui-tars/action-parser from npm (lockfile committed, installed
# here with npm ci) given the same answer, image and scale. Scenes: both
# ACU_UITARS_COORDS conventions on a 960 px image, the image one at 1280
# and 1920 px too.
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

dir=tests/uitars
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "FAIL uitars: needs node and npm (scripts/install-deps.sh test)"
	echo "0 passed, 1 failed"
	exit 1
fi
npm_ci "$dir" @ui-tars/action-parser || { echo "0 passed, 1 failed"; exit 1; }

suite_init uitars --term --rm-data
stub_start --no-key || { echo "0 passed, 1 failed"; exit 1; }
export OLLAMA_URL="$STUB" ACU_GUI_AGENT_BACKEND=uitars ACU_GROUNDING_TIMEOUT_MS=5000
unset OPENROUTER_API_KEY

# One rule per case: the description "the point <cI>" gets answer I.
n=$(jq length "$dir/cases.json")
stub_rules=$(jq -c '{rules: [to_entries[] | {contains: "<c\(.key)>", answer: .value.answer}]}' "$dir/cases.json")

total_pass=0
total_fail=0

# scene COORDS MAX_DIM IMAGE_W IMAGE_H: every case through gui/find, then the oracle.
# run_part runs it in a subshell: its detmd (and that detmd's 1080p display)
# is stopped here, before the subshell ends, or nothing would stop it.
scene() {
	local res="$tmp/results-$1-$2.jsonl" t i rc
	unset DETM_DATA
	ACU_UITARS_COORDS=$1 ACU_GROUNDING_MAX_DIM=$2 daemon_start || { echo "0 passed, 1 failed"; return 1; }
	api POST /api/tasks '{"name":"uitars","plan":["read answers"],"display":true,"display_resolution":"1920x1080"}'
	t=$(jq -r .task_id <"$tmp/resp")
	stub_script "$stub_rules"
	: >"$res"
	for ((i = 0; i < n; i++)); do
		api POST /api/gui/find "{\"task_id\":\"$t\",\"description\":\"the point <c$i>\"}"
		jq -c --argjson i "$i" --argjson code "$CODE" \
			'{i: $i, code: $code, x, y, iw: .image_size.width, ih: .image_size.height, msg: .error.message}' \
			<"$tmp/resp" >>"$res"
	done
	printf '{"coords":"%s","image":[%d,%d],"screen":[1920,1080]}\n' "$1" "$3" "$4" >"$tmp/scene.json"
	node "$dir/oracle.mjs" "$dir/cases.json" "$tmp/scene.json" "$res"
	rc=$?
	daemon_stop
	rm -rf "$DETM_DATA"
	return "$rc"
}

run_part "image 960" scene image 960 960 540
run_part "1000 960" scene 1000 960 960 540
run_part "image 1280" scene image 1280 1280 720
run_part "image 1920" scene image 1920 1920 1080
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
