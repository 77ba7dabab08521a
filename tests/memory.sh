#!/usr/bin/env bash
# memory.sh - the memory suite: memory_search / memory_read / memory_append
# (the Python DETM's tools) over a real workspace directory, through HTTP,
# the Python route names and detm-mcp; and the path guard that the Python
# one lacked: absolute paths, "..", symbolic links out of the workspace and
# a sibling directory whose name starts like the workspace's are refused.
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

tmp=$(mktemp -d /tmp/detm-memory.XXXXXX)
trap 'daemon_kill9; rm -rf "$tmp"' EXIT
ws=$tmp/workspace
mkdir -p "$ws/memory" "$tmp/workspace2"
cat >"$ws/MEMORY.md" <<'MD'
# Memory
The LinkedIn login works with the work email.
Exports go to ~/Documents/exports.
MD
printf 'line %d\n' $(seq 1 300) >"$ws/memory/2026-11-01.md"
printf 'The export button is in the File menu.\nnothing here\n' >"$ws/memory/2026-11-02.md"
echo "secret outside" >"$tmp/workspace2/MEMORY.md"
echo "secret outside" >"$tmp/outside.md"
ln -s "$tmp/outside.md" "$ws/memory/link.md"
ln -s "$tmp" "$ws/up"

daemon_start --workspace "$ws" || { bad "daemon start"; finish; exit 1; }
api POST /api/memory/search '{"query":"export"}'
expect "search finds every line with the word, best first" 200 \
	'.count == 2 and ([.results[].path] | sort) == ["MEMORY.md","memory/2026-11-02.md"] and (.results | all(.line >= 1 and .score >= 1))'
api POST /api/memory/search '{"query":"EXPORT file menu"}'
expect "all terms must match, case-insensitively" 200 '.count == 1 and .results[0].path == "memory/2026-11-02.md" and .results[0].line == 1 and (.results[0].snippet | test("File menu"))'
api POST /api/memory/search '{"query":"line","max_results":7}'
expect "max_results caps the results, one per 5-line block" 200 '.count == 7 and ([.results[] | (.line / 5 | floor)] | unique | length) == 7'
api POST /api/memory/search '{"query":"secret"}'
expect "search never reads through links out of the workspace" 200 '.count == 0'
api POST /api/memory/search '{}'
expect "search without a query is 400" 400 '.error.field == "query"'
api POST /api/memory/read '{}'
expect "read defaults to MEMORY.md from line 1" 200 '.path == "MEMORY.md" and .total_lines == 3 and (.content | startswith("# Memory"))'
api POST /api/memory/read '{"path":"memory/2026-11-01.md","offset":100,"limit":3}'
expect "read an offset and a limit" 200 '.content == "line 100\nline 101\nline 102" and .total_lines == 300'
for p in /etc/passwd ../workspace2/MEMORY.md memory/../../outside.md memory/link.md up/outside.md nosuch.md; do
	api POST /api/memory/read "{\"path\":\"$p\"}"
	case $CODE in
	403|404) if jqr '.error.message' | grep -q secret; then bad "read $p" "leaked"; else ok "read $p is refused ($CODE)"; fi ;;
	*) bad "read $p is refused" "got $CODE: $(head -c 200 "$tmp/resp")" ;;
	esac
done
api POST /api/memory/append '{"note":"The VPN needs the token app."}'
expect "append goes to memory/<UTC date>.md" 200 ".ok and .path == \"memory/$(date -u +%F).md\" and .appended > 20"
check "with a timestamped heading" grep -q '^## \[[0-9][0-9]:[0-9][0-9] UTC\] Note' "$ws/memory/$(date -u +%F).md"
api POST /api/memory/search '{"query":"vpn token"}'
expect "and is found by the next search" 200 ".count == 1 and .results[0].path == \"memory/$(date -u +%F).md\""
api POST /api/memory/append '{"note":"to MEMORY.md","path":"MEMORY.md"}'
expect "append to a given file" 200 '.path == "MEMORY.md"'
check "which now ends with the note" sh -c "tail -1 $ws/MEMORY.md | grep -qx 'to MEMORY.md'"
for p in /tmp/x.md ../workspace2/MEMORY.md memory/link.md up/new.md; do
	api POST /api/memory/append "{\"note\":\"x\",\"path\":\"$p\"}"
	case $CODE in 403|404) ok "append to $p is refused ($CODE)" ;; *) bad "append to $p is refused" "got $CODE" ;; esac
done
check "nothing outside the workspace was written" sh -c "[ \"\$(cat $tmp/outside.md)\" = 'secret outside' ] && [ ! -e $tmp/new.md ] && [ ! -e /tmp/x.md ] && [ \"\$(cat $tmp/workspace2/MEMORY.md)\" = 'secret outside' ]"
api POST /memory_search '{"query":"linkedin"}'
expect "the Python route /memory_search" 200 '.count == 1'
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"linkedin login"}}}' \
	'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_read","arguments":{"path":"../workspace2/MEMORY.md"}}}' |
	timeout 10 "$DETM_BIN/detm-mcp" --url "$DETM_URL" >"$tmp/mcp.out" 2>/dev/null
check "detm-mcp's memory_search finds it" sh -c "jq -e 'select(.id == 2) | .result.structuredContent.count == 1' $tmp/mcp.out | grep -q true"
check "detm-mcp's memory_read outside the workspace is a tool error" sh -c "jq -e 'select(.id == 3) | .result.isError == true' $tmp/mcp.out | grep -q true"
daemon_stop
daemon_start --workspace "$tmp/none" || { bad "daemon start (no workspace)"; finish; exit 1; }
api POST /api/memory/search '{"query":"x"}'
expect "a missing workspace searches nothing" 200 '.count == 0'
api POST /api/memory/append '{"note":"first"}'
expect "and is created by the first append" 200 ".path == \"memory/$(date -u +%F).md\""
daemon_stop
finish
