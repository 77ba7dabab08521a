#!/usr/bin/env bash
# run.sh - the apps suite (issue 34 item 7): an agent with only detm's MCP
# tools (apps.mjs: the official MCP TypeScript SDK client over bin/detm-mcp)
# starts real Debian applications with desktop_launch and finishes ordinary
# work in each, with no recovery step, checked outside detm:
#   mousepad          GTK 3: a text saved through Save As -> the file's bytes
#   gnome-calculator  GTK 4 under openbox: 12 x 7 by clicking listed
#                     buttons -> 84 in the tree, the clipboard, xclip
#   chromium          a form filled by label -> server.py's log; a wait sees
#                     "Saving..." turn into "Saved"
#   firefox-esr       the same form -> the log
#   LibreOffice Calc  cells saved as CSV through Save As and Keep format
#                     -> the CSV's bytes
# Prints per-task wall time, tool calls and effect verdicts, then
# "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
suite_init apps --term --rm-data

for t in node xdotool xprop xclip mousepad gnome-calculator chromium firefox-esr libreoffice openbox python3; do
	command -v $t >/dev/null || { bad "needs $t" "run scripts/install-deps.sh test"; finish; exit 1; }
done
npm_ci tests/mcp/sdk @modelcontextprotocol/sdk || { bad "npm ci tests/mcp/sdk"; finish; exit 1; }

python3 tests/apps/server.py "$tmp/form.port" "$tmp/form.log" 2>"$tmp/server.err" &
pids+=($!)
wait_for 10 test -s "$tmp/form.port" || { bad "the form server starts" "$(cat "$tmp/server.err")"; finish; exit 1; }
daemon_start || { bad "daemon start"; finish; exit 1; }

FORM_URL="http://127.0.0.1:$(cat "$tmp/form.port")/form" FORM_LOG="$tmp/form.log" \
	node tests/apps/apps.mjs >"$tmp/apps.out" 2>&1
sed '$d' "$tmp/apps.out"
p=$(tail -1 "$tmp/apps.out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
if [ -n "$p" ]; then PASS=$((PASS + ${p% *})); FAIL=$((FAIL + ${p#* })); else bad "apps.mjs" "$(tail -3 "$tmp/apps.out")"; fi
finish
