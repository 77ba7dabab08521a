#!/usr/bin/env bash
# run.sh - the memory suite: memory_search / memory_read / memory_append
# (the Python DETM's tools) over a real workspace directory, through HTTP,
# the Python route names and detm-mcp; and the path guard that the Python
# one lacked: absolute paths, "..", symbolic links (any component, out of
# the workspace or not) and a sibling directory whose name starts like the
# workspace's are refused; and a race (swap.py, race.py) that swaps a folder
# for a link out of the workspace while reads and appends go through it.
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init memory
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
printf 'caf\xe9 latin\nna\xefve\n' >"$ws/memory/latin1.md"
# A 399-byte first line then two-byte characters: the 400-byte snippet cap
# falls inside the first of them.
{ printf 'cutneedle %0389d' 0; printf '\xc3\xa9%.0s' $(seq 1 20); printf '\n'; } >"$ws/memory/cut.md"
mkfifo "$ws/memory/fifo.md" "$ws/pipe.md"
mkdir -p "$ws/sub"

# utf8_ok : the last response is strictly valid UTF-8.
utf8_ok() { python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8")' <"$tmp/resp" 2>/dev/null; }
# lib.sh's api with a deadline, so a hang (a FIFO opened blocking) fails the
# step (CODE 000) rather than hanging the suite.
api() {
	CODE=$(timeout 20 curl -sS -m 15 -o "${tmp:?}/resp" -w '%{http_code}' -X "$1" "$DETM_URL$2" \
		-H 'Content-Type: application/json' ${3:+--data-binary "$3"}) || CODE=${CODE:-000}
}

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
api POST /api/memory/read '{"path":"memory/latin1.md"}'
check "read of a Latin-1 file answers valid UTF-8" utf8_ok
expect "with U+FFFD for the bytes that are not UTF-8" 200 '.content == "caf\ufffd latin\nna\ufffdve\n"'
api POST /api/memory/search '{"query":"latin"}'
check "search of a Latin-1 file answers valid UTF-8" utf8_ok
expect "and finds the line" 200 '.count == 1 and .results[0].snippet == "caf\ufffd latin\nna\ufffdve\n"'
api POST /api/memory/search '{"query":"cutneedle"}'
check "a snippet cut at 400 bytes is still valid UTF-8" utf8_ok
expect "cut between characters" 200 '.count == 1 and (.results[0].snippet | length) == 399 and (.results[0].snippet | test("\ufffd") | not)'
api POST /api/memory/read '{"path":"memory/fifo.md"}'
expect "read of a FIFO answers at once: 400, not a regular file" 400 '.error.field == "path" and (.error.message | test("not a regular file"))'
api POST /api/memory/search '{"query":"export"}'
expect "search skips a FIFO in memory/" 200 '.count == 2'
api POST /api/memory/append '{"note":"x","path":"memory/fifo.md"}'
expect "append to a FIFO answers at once: 400" 400 '.error.field == "path"'
api POST /api/memory/append '{"note":"x","path":"pipe.md"}'
expect "append to a FIFO at the top: 400" 400 '.error.field == "path"'
for p in sub sub/ memory/. memory memory/2026-11-01.md/x.md; do
	api POST /api/memory/append "{\"note\":\"x\",\"path\":\"$p\"}"
	case $CODE in
	4??) if grep -q "$tmp" "$tmp/resp"; then bad "append to $p" "absolute path in $(cat "$tmp/resp")"; else ok "append to $p is a client error ($CODE)"; fi ;;
	*) bad "append to $p is a client error" "got $CODE: $(head -c 200 "$tmp/resp")" ;;
	esac
done
# A directory on the path swapped for a symbolic link between the guard's
# check and the open (issue 33): the path is resolved under the workspace's
# directory fd, following no link, so a swap is refused, never followed.
mkdir -p "$ws/alias/real" "$tmp/elsewhere"
echo inside >"$ws/alias/real/x.md"
echo "secret outside" >"$tmp/elsewhere/x.md"
ln -s real "$ws/alias/inlink"
ln -s "$tmp/elsewhere" "$ws/alias/outlink"
for p in alias/inlink/x.md alias/outlink/x.md; do
	api POST /api/memory/read "{\"path\":\"$p\"}"
	expect "read through a linked folder ($p) is 403, not followed" 403 \
		'.error.field == "path" and (.error.message | test("leads outside the workspace")) and (.error.message | test("secret") | not)'
	api POST /api/memory/append "{\"note\":\"x\",\"path\":\"$p\"}"
	expect "append through a linked folder ($p) is 403" 403 '.error.field == "path"'
	api POST /api/memory/append "{\"note\":\"x\",\"path\":\"${p%x.md}new.md\"}"
	expect "append creating a file through a linked folder (${p%x.md}new.md) is 403" 403 '.error.field == "path"'
done
check "nothing was written through the linked folders" sh -c "[ \"\$(cat $tmp/elsewhere/x.md)\" = 'secret outside' ] && [ ! -e $tmp/elsewhere/new.md ] && [ \"\$(cat $ws/alias/real/x.md)\" = inside ] && [ ! -e $ws/alias/real/new.md ]"
# The race: sub/ and a link to $tmp/out swap places (renameat2 EXCHANGE, or
# two renames) as fast as they can while 1000 reads of sub/file and 1000
# appends to sub/file and sub/new.md go through the daemon. Bounded by count,
# not time: a loaded machine makes it slower, never flaky.
mkdir -p "$tmp/out"
echo inside >"$ws/sub/file"
echo "secret outside" >"$tmp/out/file"
python3 tests/memory/swap.py "$ws/sub" "$tmp/out" "$tmp/swap.stop" >"$tmp/swap.out" 2>&1 &
swapper=$!
pids+=("$swapper")
python3 tests/memory/race.py "$DETM_URL" 1000 >"$tmp/race.out" 2>&1
touch "$tmp/swap.stop"
wait "$swapper"
cat "$tmp/race.out" "$tmp/swap.out"
echo "outside after the race: $(ls -A "$tmp/out" | wc -l) file(s), $(cat "$tmp"/out/* | grep -c '^race') appended note(s)"
check "the swapper swapped (sub/ was a link at times)" grep -q '^swaps [1-9]' "$tmp/swap.out"
check "every request answered (200, or 403 while sub/ was a link)" grep -q '^unexpected 0$' "$tmp/race.out"
check "no read returned the file outside the workspace" grep -q '^leaked 0$' "$tmp/race.out"
check "no append wrote outside the workspace" sh -c "[ \"\$(cat $tmp/out/file)\" = 'secret outside' ] && [ \"\$(ls -A $tmp/out)\" = file ]"
check "the appends that went through are in sub/" sh -c "[ -d $ws/sub ] && [ ! -L $ws/sub ] && grep -q '^race' $ws/sub/file $ws/sub/new.md"
api POST /memory_search '{"query":"linkedin"}'
expect "the Python route /memory_search" 200 '.count == 1'
mcp_calls "$tmp/mcp.out" 30 '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"linkedin login"}}}' \
	'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_read","arguments":{"path":"../workspace2/MEMORY.md"}}}'
check "detm-mcp's memory_search finds it" sh -c "jq -e 'select(.id == 2) | .result.structuredContent.count == 1' $tmp/mcp.out | grep -q true"
check "detm-mcp's memory_read outside the workspace is a tool error" sh -c "jq -e 'select(.id == 3) | .result.isError == true' $tmp/mcp.out | grep -q true"
daemon_stop
daemon_start --workspace "$tmp/none/deeper/ws" || { bad "daemon start (no workspace)"; finish; exit 1; }
api POST /api/memory/search '{"query":"x"}'
expect "a missing workspace searches nothing" 200 '.count == 0'
api POST /api/memory/read '{}'
expect "reading it is 404, with no absolute path in the message" 404 "(.error.message | contains(\"$tmp\") | not)"
api POST /api/memory/append '{"note":"first"}'
expect "it is created (parents too) by the first append" 200 ".path == \"memory/$(date -u +%F).md\""
check "in the right place" test -s "$tmp/none/deeper/ws/memory/$(date -u +%F).md"
daemon_stop
finish
