#!/usr/bin/env bash
# run.sh - the mcp suite: bin/test-mcp (C, drives bin/detm-mcp over pipes),
# tests/mcp/sdk/*.mjs (the official MCP TypeScript SDK clients 1.x and 2.x,
# over stdio and over detmd's /mcp; skills.mjs and tasks.mjs: the skills
# and Tasks extensions) and tests/mcp/conformance (the official
# conformance suite against /mcp), all against a real detmd started here. Prints one closing line
# "N passed, N failed" (the sum of both parts) and exits non-zero on any
# failure. Node.js is required: a missing node fails the suite, loudly.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
export DETM_BIN

total_pass=0
total_fail=0


# The OCR backend judges smart waits in process: the SDK test waits for a
# real resolution on a real display without a model server.
export ACU_VISION_BACKEND=ocr
# gui_find grounds through bin/vision-stub (UI-TARS text over Ollama), so
# the coordinate test (agentside.mjs) can pass its result on unchanged.
stubdir=$(mktemp -d /tmp/detm-mcp-stub.XXXXXX)
printf '%s\n' "{\"answers\":[\"click(start_box='(320,240)')\"]}" >"$stubdir/script.json"
"$DETM_BIN/vision-stub" --port 0 --port-file "$stubdir/port" --script "$stubdir/script.json" 2>"$stubdir/log" &
stub_pid=$!
for _ in $(seq 1 100); do [ -s "$stubdir/port" ] && break; sleep 0.05; done
export OLLAMA_URL="http://127.0.0.1:$(cat "$stubdir/port")" ACU_GUI_AGENT_BACKEND=uitars
# gui_agent's supervisor model: a second stub speaking OpenRouter's wire
# format, answering "wait 0.2 s" slowly and forever (agentcancel.mjs).
key="stub-key-$$"
"$DETM_BIN/vision-stub" --port 0 --port-file "$stubdir/sup.port" --key "$key" 2>"$stubdir/sup.log" &
sup_pid=$!
for _ in $(seq 1 100); do [ -s "$stubdir/sup.port" ] && break; sleep 0.05; done
export SUPERVISOR_URL="http://127.0.0.1:$(cat "$stubdir/sup.port")"
curl -fsS -X POST "$SUPERVISOR_URL/_stub/script" \
	-d '{"answers":["TOOL_CALL wait {\"seconds\":0.2}"],"delay_ms":300}' >/dev/null
cleanup() {
	daemon_stop
	kill "$stub_pid" "$sup_pid" 2>/dev/null
	wait "$stub_pid" "$sup_pid" 2>/dev/null
	rm -rf "$stubdir"
}
if ! daemon_start; then
	echo "0 passed, 1 failed"
	exit 1
fi
trap cleanup EXIT

if [ -x "$DETM_BIN/test-mcp" ] && [ -x "$DETM_BIN/detm-mcp" ]; then
	run_part test-mcp "$DETM_BIN/test-mcp"
else
	echo "FAIL $DETM_BIN/test-mcp or $DETM_BIN/detm-mcp is missing (make all $DETM_BIN/test-mcp)"
	total_fail=$((total_fail + 1))
fi

# The OpenClaw skill carries detm's MCP instructions verbatim (OpenClaw
# never shows a server's instructions): the two must not drift apart.
instr=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"skill-check","version":"1"}}}' |
	timeout 10 "$DETM_BIN/detm-mcp" --url "$DETM_URL" 2>/dev/null | head -1 | jq -r '.result.instructions // empty')
if [ -n "$instr" ] && grep -qxF -- "$instr" integrations/openclaw/SKILL.md; then
	echo "ok   the OpenClaw skill (integrations/openclaw/SKILL.md) holds detm's MCP instructions verbatim"
	total_pass=$((total_pass + 1))
else
	echo "FAIL the OpenClaw skill holds detm's MCP instructions verbatim (got ${#instr} bytes of instructions)"
	total_fail=$((total_fail + 1))
fi

# Memory tools and OpenClaw (issue 36): an OpenClaw client has its own
# memory tools over the same files, so detm's are off for it unless asked.
init_as() { printf '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"%s","version":"1"}}}' "$1"; }
list_mem() { # list_mem CLIENT [detm-mcp options]: the memory tools tools/list gives CLIENT
	local who=$1; shift
	printf '%s\n%s\n%s\n' "$(init_as "$who")" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/list"}' |
		timeout 10 "$DETM_BIN/detm-mcp" --url "$DETM_URL" "$@" 2>/dev/null |
		jq -r 'select(.id == 2) | [.result.tools[].name | select(startswith("memory_"))] | join(",")'
}
mem_check() { # mem_check NAME WANT CLIENT [options]
	local got; got=$(list_mem "${@:3}")
	if [ "$got" = "$2" ]; then echo "ok   $1"; total_pass=$((total_pass + 1)); else
		echo "FAIL $1: memory tools listed: '$got', want '$2'"; total_fail=$((total_fail + 1)); fi
}
mem_check "memory tools: listed for a client that is not OpenClaw" "memory_search,memory_read,memory_append" claude-code
mem_check "memory tools: not listed for OpenClaw (clientInfo openclaw-mcp)" "" openclaw-mcp
mem_check "memory tools: --memory-tools on lists them for OpenClaw too" "memory_search,memory_read,memory_append" OpenClaw --memory-tools on
mem_check "memory tools: --memory-tools off hides them from everyone" "" claude-code --memory-tools off
got=$(printf '%s\n%s\n' "$(init_as openclaw)" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"x"}}}' |
	timeout 10 "$DETM_BIN/detm-mcp" --url "$DETM_URL" 2>/dev/null | jq -r 'select(.id == 3) | .error.message // "no error"')
if [[ "$got" == *"memory tools are off for this client"*"--memory-tools on"* ]]; then
	echo "ok   memory tools: a call from OpenClaw says they are off and how to turn them on"; total_pass=$((total_pass + 1))
else echo "FAIL memory tools: a call from OpenClaw is refused with the reason: got '$got'"; total_fail=$((total_fail + 1)); fi

sdk=tests/mcp/sdk
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "FAIL sdk interop: node/npm not found on PATH; install Node.js >= 18 to run the MCP SDK interop test"
	total_fail=$((total_fail + 1))
elif ! npm_ci "$sdk" @modelcontextprotocol/sdk || ! npm_ci "$sdk" @modelcontextprotocol/client; then
	total_fail=$((total_fail + 1))
else
	run_part sdk-interop node "$sdk/interop.mjs"
	run_part sdk-agent-side node "$sdk/agentside.mjs"
	run_part sdk-eras node "$sdk/eras.mjs"
	run_part sdk-skills node "$sdk/skills.mjs"
	run_part sdk-tasks node "$sdk/tasks.mjs"
fi
# The official conformance suite against detmd's /mcp (Node 22 from npm),
# on a detmd that also serves the suite's fixture tools (test_*).
daemon_stop
if daemon_start --mcp-conformance-tools; then
	run_part conformance tests/mcp/conformance/run.sh
else
	echo "FAIL detmd --mcp-conformance-tools did not start"
	total_fail=$((total_fail + 1))
fi

# gui_agent cancellation, on a detmd whose supervisor is the second stub
# (with OPENROUTER_API_KEY set, UI-TARS grounding would go to OpenRouter
# too, so the parts above run without it).
if [ -d "$sdk/node_modules/@modelcontextprotocol/client" ]; then
	daemon_stop
	if OPENROUTER_API_KEY=$key ACU_OPENROUTER_URL=$SUPERVISOR_URL daemon_start; then
		run_part sdk-agent-cancel node "$sdk/agentcancel.mjs"
	else
		echo "FAIL detmd with a supervisor model did not start"
		total_fail=$((total_fail + 1))
	fi
fi

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
