#!/usr/bin/env bash
# run.sh - the clip suite: a task display's clipboard held and read by
# detmd itself, and the task's own folder of files, against a real detmd,
# real Xvfb displays and real X clients as oracles.
#
#   clipboard: empty; text set through the API read by xclip (UTF8_STRING,
#              STRING as Latin-1, TARGETS) and pasted into a GTK entry
#              (zenity); text and PNG set with xclip read through the API;
#              PNG round trips byte for byte; INCR both ways with 1 MiB;
#              PRIMARY; the shared display; caps and bad input; the
#              actions logged without the content
#   files:     upload (raw bytes, JSON text, JSON base64) / list / download
#              round trips, subfolders, binary bytes; "..", absolute paths,
#              a planted symbolic link (file and folder) refused with the
#              error shape; the per-file cap (413); delete; kill -9 right
#              after a 2xx upload, restart: the file is there whole; the
#              folder removed with its task
#   mcp:       the official MCP SDK client drives the five tools through
#              detm-mcp (tests/mcp/sdk/clipfiles.mjs), and /mcp answers a
#              clipboard_get with an image block
#
# xclip is a test oracle only: detmd never runs it. Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh

suite_init clip --term

b64() { base64 -w0 "$@"; }
# putj PATH FILE: PUT a JSON body from a file (too big for the command line).
putj() {
	CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X PUT "$DETM_URL$1" \
		-H 'Content-Type: application/json' --data-binary "@$2")
}
# putraw PATH FILE [CURL-ARGS...]: PUT a file's bytes as the body.
putraw() {
	local p=$1 f=$2
	shift 2
	CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X PUT "$DETM_URL$p" \
		-H 'Content-Type: application/octet-stream' --data-binary "@$f" "$@")
}
# getraw PATH OUT [CURL-ARGS...]: GET into OUT; status in CODE, type in CTYPE.
getraw() {
	local p=$1 o=$2 w
	shift 2
	w=$(curl -sS -o "$o" -w '%{http_code} %{content_type}' "$DETM_URL$p" "$@")
	CODE=${w%% *}
	CTYPE=${w#* }
}
is_error() { # is_error CODE FIELD: the one error shape, with that code and field
	jq -e --arg c "$1" --arg f "$2" '.error.code == $c and (.error.message | length > 0) and
		(($f == "") or .error.field == $f)' "$tmp/resp" >/dev/null
}
# xclip_own TASK ARGS... FILE: xclip -i of FILE in the foreground (-quiet),
# in the background (where stdin would be /dev/null, hence a file), as the
# selection's owner until another client takes it.
xclip_own() {
	local t=$1
	shift
	xstart "$t" xclip -i -quiet "$@"
	sleep 0.3
}

# ---- a shared desktop of our own, detmd, a task with a display ----
xvfb_start 1024x768x24 || { bad "shared Xvfb" "did not start"; finish; exit 1; }
SHARED=$XVFB_DISPLAY
daemon_start --display "$SHARED" || { bad "daemon start"; finish; exit 1; }
api POST /api/tasks '{"name":"clipboard","display":true}' >/dev/null
expect "a task with its own display" 201
A=$(jqr .task_id)

# ---- clipboard: empty ----
api GET "/api/tasks/$A/clipboard"
expect "an empty clipboard is a 200 that says so" 200 \
	'.empty == true and .format == null and (.message | startswith("the clipboard is empty"))'
api GET "/api/tasks/$A/clipboard?selection=primary"
expect "so is an empty primary selection" 200 '.empty == true and (.message | test("primary selection is empty"))'

# ---- clipboard: set through the API, read by X clients ----
text='héllo wörld — 漢字かな 😀 tab	end'
api PUT "/api/tasks/$A/clipboard" "$(jq -n --arg t "$text" '{text:$t}')"
expect "set text" 200 ".owner_is_detmd and .format == \"text\" and .chars == $(printf %s "$text" | wc -m)"
check "xclip reads the text (UTF8_STRING)" \
	[ "$(xenv "$A" timeout 10 xclip -o -selection clipboard)" = "$text" ]
targets=$(xenv "$A" timeout 10 xclip -o -selection clipboard -t TARGETS | tr '\n' ' ')
check "TARGETS lists UTF8_STRING, STRING, TEXT and no image" \
	sh -c "echo '$targets' | grep -q UTF8_STRING && echo '$targets' | grep -qw STRING && echo '$targets' | grep -qw TEXT && ! echo '$targets' | grep -q image/png"
api PUT "/api/tasks/$A/clipboard" '{"text":"größe café"}' >/dev/null
check "STRING is Latin-1" [ "$(xenv "$A" timeout 10 xclip -o -selection clipboard -t STRING | iconv -f latin1 -t utf-8)" = "größe café" ]
api GET "/api/tasks/$A/clipboard"
expect "read back through the API: detmd's own owner answered" 200 \
	'.text == "größe café" and .owner_is_detmd and .target == "UTF8_STRING" and .incr == false'

# A GTK program pastes it (ctrl+v into a zenity entry; zenity prints the entry).
if command -v zenity >/dev/null; then
	api PUT "/api/tasks/$A/clipboard" '{"text":"pasted into GTK 42"}' >/dev/null
	xenv "$A" zenity --entry --title=pastehere --text=paste >"$tmp/zenity.out" &
	ZP=$!
	pids+=("$ZP")
	if xwait "$A" pastehere 15; then
		wid=$(xenv "$A" xdotool search --name '^pastehere$' | head -1)
		api POST /api/desktop/action "{\"task_id\":\"$A\",\"action\":\"focus_window\",\"window_id\":\"$wid\"}" >/dev/null
		sleep 0.5
		api POST /api/desktop/action "{\"task_id\":\"$A\",\"action\":\"press_key\",\"keys\":\"ctrl+v\"}" >/dev/null
		sleep 0.5
		api POST /api/desktop/action "{\"task_id\":\"$A\",\"action\":\"press_key\",\"keys\":\"Return\"}" >/dev/null
		wait_for 10 sh -c "! kill -0 $ZP 2>/dev/null"
		check "a GTK entry pastes what detmd holds (ctrl+v)" grep -qx "pasted into GTK 42" "$tmp/zenity.out"
	else
		bad "a GTK entry pastes what detmd holds" "the zenity window did not appear"
	fi
else
	bad "a GTK entry pastes what detmd holds" "zenity is not installed (scripts/install-deps.sh test)"
fi

# ---- clipboard: set by an X client, read through the API ----
printf '%s' "copied by xclip ü" >"$tmp/x.txt"
xclip_own "$A" -selection clipboard "$tmp/x.txt"
api GET "/api/tasks/$A/clipboard"
expect "xclip's text read through the API, another owner" 200 \
	'.text == "copied by xclip ü" and .owner_is_detmd == false and .format == "text"'
api GET "/api/tasks/$A/clipboard?format=image"
expect "format=image on a text clipboard is 404 naming what it offers" 404 \
	'.error.code == "not_found" and .error.field == "format" and (.error.message | test("UTF8_STRING"))'

# ---- PNG both ways, byte for byte ----
convert -size 64x48 gradient:red-blue "$tmp/a.png"
b64 "$tmp/a.png" >"$tmp/a.b64"
jq -n --rawfile i "$tmp/a.b64" '{image_base64:$i}' >"$tmp/a.json"
putj "/api/tasks/$A/clipboard" "$tmp/a.json"
expect "set a PNG" 200 '.format == "image" and .image_size.width == 64 and .image_size.height == 48'
xenv "$A" timeout 10 xclip -o -selection clipboard -t image/png >"$tmp/a.out"
check "xclip reads the same PNG bytes (image/png)" cmp -s "$tmp/a.png" "$tmp/a.out"
api GET "/api/tasks/$A/clipboard"
jqr .image_b64 | base64 -d >"$tmp/a.back" 2>/dev/null
check "read back through the API (auto: the image, same bytes)" sh -c \
	"cmp -s $tmp/a.png $tmp/a.back && [ \"\$(jq -r '.format + \" \" + .mime_type' $tmp/resp)\" = 'image image/png' ]"
convert -size 30x20 xc:green "$tmp/b.png"
xclip_own "$A" -selection clipboard -t image/png "$tmp/b.png"
api GET "/api/tasks/$A/clipboard?format=image"
jqr .image_b64 | base64 -d >"$tmp/b.back" 2>/dev/null
check "a PNG copied by xclip, read through the API, same bytes" sh -c \
	"cmp -s $tmp/b.png $tmp/b.back && jq -e '.owner_is_detmd == false and .image_size.width == 30' $tmp/resp >/dev/null"
api GET "/api/tasks/$A/clipboard?format=text"
expect "format=text on an image-only clipboard is 404 naming what it offers" 404 \
	'.error.field == "format" and (.error.message | test("image/png"))'

# ---- INCR: 1 MiB both ways ----
head -c 786432 /dev/urandom | base64 -w0 >"$tmp/big.txt"
jq -n --rawfile t "$tmp/big.txt" '{text:$t}' >"$tmp/big.json"
putj "/api/tasks/$A/clipboard" "$tmp/big.json"
expect "set 1 MiB of text" 200 '.bytes == 1048576'
xenv "$A" timeout 20 xclip -o -selection clipboard >"$tmp/big.out"
check "xclip reads all 1 MiB (INCR from detmd's owner)" cmp -s "$tmp/big.txt" "$tmp/big.out"
head -c 786432 /dev/urandom | base64 -w0 >"$tmp/big2.txt"
xclip_own "$A" -selection clipboard "$tmp/big2.txt"
api GET "/api/tasks/$A/clipboard"
jqr -j .text >"$tmp/big2.out"
check "1 MiB copied by xclip comes through the API (INCR read)" sh -c \
	"cmp -s $tmp/big2.txt $tmp/big2.out && jq -e '.incr == true and .bytes == 1048576' $tmp/resp >/dev/null"

# ---- PRIMARY, and the shared display ----
api PUT "/api/tasks/$A/clipboard" '{"text":"the primary one","selection":"primary"}'
expect "set the primary selection" 200 '.selection == "primary"'
check "xclip reads PRIMARY" [ "$(xenv "$A" timeout 10 xclip -o -selection primary)" = "the primary one" ]
check "the clipboard itself is untouched (xclip's 1 MiB)" sh -c \
	"DISPLAY=$(disp_of "$A") XAUTHORITY=$(auth_of "$A") timeout 10 xclip -o -selection clipboard | cmp -s - $tmp/big2.txt"
api PUT /api/clipboard '{"text":"on the shared desktop"}'
expect "PUT /api/clipboard without a task: the shared display" 200 ".display == \"$SHARED\""
check "xclip on the shared display reads it" [ "$(DISPLAY=$SHARED timeout 10 xclip -o -selection clipboard)" = "on the shared desktop" ]
check "and the task's display does not see it" [ "$(xenv "$A" timeout 10 xclip -o -selection clipboard -t UTF8_STRING 2>/dev/null)" != "on the shared desktop" ]
api GET "/api/clipboard?task_id=$A&selection=primary"
expect "GET /api/clipboard?task_id reads the task's display" 200 '.text == "the primary one"'

# ---- clipboard: caps and bad input ----
{ printf '{"text":"'; head -c $((16 * 1024 * 1024 + 1)) /dev/zero | tr '\0' 'a'; printf '"}'; } >"$tmp/huge.json"
putj "/api/tasks/$A/clipboard" "$tmp/huge.json"
check "16 MiB + 1 of text is 413 with the error shape" sh -c "[ $CODE = 413 ] && jq -e '.error.code == \"payload_too_large\"' $tmp/resp >/dev/null"
api PUT "/api/tasks/$A/clipboard" '{"image_base64":"bm90IGEgcG5n"}'
expect "image_base64 that is no PNG is 400 on image_base64" 400 '.error.field == "image_base64"'
api PUT "/api/tasks/$A/clipboard" '{"image_base64":"%%%"}'
expect "image_base64 that is no base64 is 400" 400 '.error.field == "image_base64"'
api PUT "/api/tasks/$A/clipboard" '{"text":"a","image_base64":"aGk="}'
expect "text and image_base64 together is 400" 400 '.error.code == "invalid_argument"'
api PUT "/api/tasks/$A/clipboard" '{"text":"a","selection":"secondary"}'
expect "an unknown selection is 400 on selection" 400 '.error.field == "selection"'
api PUT "/api/tasks/$A/clipboard" '{"txt":"a"}'
expect "an unknown field is 400 naming it" 400 '.error.field == "txt"'
api GET /api/tasks/0badf00d/clipboard
expect "an unknown task is 404" 404 '.error.message | test("no task")'

# ---- clipboard calls are logged on the task, without their content ----
api GET "/api/tasks/$A?detail=full"
expect "every clipboard call is a gui action on the task" 200 \
	'([.task_actions[] | select(.summary | test("^clipboard_(get|set)"))] | length) >= 10'
check "no logged action holds the clipboard's text" sh -c \
	"! grep -q 'größe café\|pasted into GTK\|copied by xclip' $tmp/resp"

# ---- files: upload, list, download ----
printf 'first line\nsecond ünïcode line\n' >"$tmp/t.txt"
putraw "/api/tasks/$A/files/report.txt" "$tmp/t.txt"
expect "upload raw bytes: 201 created" 201 ".created == true and .bytes == $(stat -c %s "$tmp/t.txt") and .absolute_path == \"$DETM_DATA/files/$A/report.txt\""
putraw "/api/tasks/$A/files/report.txt" "$tmp/t.txt"
expect "the same again: 200 replaced" 200 '.created == false'
check "the file is in the task's folder on disk" cmp -s "$tmp/t.txt" "$DETM_DATA/files/$A/report.txt"
getraw "/api/tasks/$A/files/report.txt" "$tmp/t.out"
check "download raw: same bytes, text/plain" sh -c "[ $CODE = 200 ] && cmp -s $tmp/t.txt $tmp/t.out && echo '$CTYPE' | grep -q '^text/plain'"
head -c 1048576 /dev/urandom >"$tmp/r.bin"
putraw "/api/tasks/$A/files/data/deep/random.bin" "$tmp/r.bin"
expect "upload 1 MiB of binary into new subfolders (slashes as sent)" 201
getraw "/api/tasks/$A/files/data%2Fdeep%2Frandom.bin" "$tmp/r.out"
check "download it by the %2F spelling: same bytes, octet-stream" sh -c \
	"[ $CODE = 200 ] && cmp -s $tmp/r.bin $tmp/r.out && [ '$CTYPE' = application/octet-stream ]"
b64 "$tmp/r.bin" >"$tmp/r.b64"
jq -n --rawfile c "$tmp/r.b64" '{content_base64:$c}' >"$tmp/r.json"
putj "/api/tasks/$A/files/copy.bin" "$tmp/r.json"
expect "upload JSON content_base64" 201 '.bytes == 1048576'
check "the base64 upload decoded to the same bytes" cmp -s "$tmp/r.bin" "$DETM_DATA/files/$A/copy.bin"
api PUT "/api/tasks/$A/files/note.md" '{"content":"# ünïcode note\n"}'
expect "upload JSON content (text)" 201
api GET "/api/tasks/$A/files/note.md?format=json"
expect "download as JSON: utf-8 text" 200 '.encoding == "utf-8" and .content == "# ünïcode note\n"'
api GET "/api/tasks/$A/files/copy.bin?format=json"
jqr .content_base64 | base64 -d >"$tmp/c.out" 2>/dev/null
check "download binary as JSON: base64, same bytes" sh -c "[ $CODE = 200 ] && jq -e '.encoding == \"base64\"' $tmp/resp >/dev/null && cmp -s $tmp/r.bin $tmp/c.out"
api GET "/api/tasks/$A/files"
expect "list: paths, types, sizes, the folder's absolute path" 200 \
	".folder == \"$DETM_DATA/files/$A\" and ([.files[] | .path + \":\" + .type] | index(\"data/deep/random.bin:file\") != null and index(\"data:folder\") != null and index(\"report.txt:file\") != null) and ([.files[] | select(.path == \"copy.bin\")][0].bytes == 1048576) and (.files[0].mtime | test(\"Z$\")) and .limits.file_bytes == 33554432"
CODE=$(curl -sS -o "$tmp/resp" -w '%{http_code}' -X PUT "$DETM_URL/api/tasks/$A/files/empty.txt" --data-binary '' -H 'Content-Type: text/plain')
check "an empty file can be uploaded" sh -c "[ $CODE = 201 ] && [ -f $DETM_DATA/files/$A/empty.txt ] && [ ! -s $DETM_DATA/files/$A/empty.txt ]"

# ---- files: confinement ----
folder="$DETM_DATA/files/$A"
getraw "/api/tasks/$A/files/../../../data.db" "$tmp/resp" --path-as-is
check "GET ../ (as sent) is 403 with the error shape" sh -c "[ $CODE = 403 ] && jq -e '.error.code == \"forbidden\" and .error.field == \"path\"' $tmp/resp >/dev/null"
getraw "/api/tasks/$A/files/%2E%2E%2F%2E%2E%2Fdata.db" "$tmp/resp"
check "GET %2E%2E%2F (escaped) is 403" sh -c "[ $CODE = 403 ] && jq -e '.error.code == \"forbidden\"' $tmp/resp >/dev/null"
putraw "/api/tasks/$A/files/sub/..%2F..%2Fescaped.txt" "$tmp/t.txt"
check "PUT with .. inside is 403 and writes nothing outside" sh -c "[ $CODE = 403 ] && [ ! -e $DETM_DATA/files/escaped.txt ] && [ ! -e $DETM_DATA/escaped.txt ]"
getraw "/api/tasks/$A/files/%2Fetc%2Fpasswd" "$tmp/resp"
check "an absolute path is 403" sh -c "[ $CODE = 403 ] && jq -e '.error.field == \"path\"' $tmp/resp >/dev/null"
ln -s /etc/passwd "$folder/link.txt"
getraw "/api/tasks/$A/files/link.txt" "$tmp/resp"
check "a symbolic link planted in the folder is not followed (403)" sh -c \
	"[ $CODE = 403 ] && jq -e '.error.code == \"forbidden\"' $tmp/resp >/dev/null && ! grep -q root: $tmp/resp"
putraw "/api/tasks/$A/files/link.txt" "$tmp/t.txt"
check "nor written through (403, /etc/passwd untouched)" sh -c "[ $CODE = 403 ] && grep -q '^root:' /etc/passwd && [ -L $folder/link.txt ]"
mkdir -p "$tmp/outside"
ln -s "$tmp/outside" "$folder/dirlink"
putraw "/api/tasks/$A/files/dirlink/x.txt" "$tmp/t.txt"
check "a planted folder link: PUT through it is 403, nothing lands outside" sh -c "[ $CODE = 403 ] && [ -z \"\$(ls -A $tmp/outside)\" ]"
echo secret >"$tmp/outside/s.txt"
getraw "/api/tasks/$A/files/dirlink/s.txt" "$tmp/resp"
check "and GET through it is 403" sh -c "[ $CODE = 403 ] && ! grep -q secret $tmp/resp"
api GET "/api/tasks/$A/files"
expect "list shows the links as links, not what they point to" 200 \
	'([.files[] | select(.path == "link.txt" or .path == "dirlink") | .type] | sort) == ["symlink","symlink"] and ([.files[] | select(.path | startswith("dirlink/"))] | length) == 0'
api PUT "/api/tasks/$A/files/a%2F%2Fb.txt" '{"content":"x"}'
expect "an empty component is 400" 400 '.error.field == "path"'
api PUT "/api/tasks/$A/files/.detm-up-x" '{"content":"x"}'
expect "detmd's own temporary names are refused" 400 '.error.field == "path"'

# ---- files: caps, delete ----
head -c $((32 * 1024 * 1024 + 1)) /dev/zero >"$tmp/big.bin"
putraw "/api/tasks/$A/files/big.bin" "$tmp/big.bin"
check "32 MiB + 1 is 413 with the error shape, nothing stored" sh -c \
	"[ $CODE = 413 ] && jq -e '.error.code == \"payload_too_large\"' $tmp/resp >/dev/null && [ ! -e $folder/big.bin ]"
check "no temporary file is left behind" sh -c "! ls -A $folder | grep -q '^.detm-'"
api DELETE "/api/tasks/$A/files/report.txt"
expect "delete a file" 200 '.deleted == true'
api GET "/api/tasks/$A/files/report.txt?format=json"
expect "then it is 404" 404 '.error.field == "path" and (.error.message | test("no such file"))'
api DELETE "/api/tasks/$A/files/data"
expect "deleting a folder that is not empty is 409" 409 '.error.code == "conflict"'
api GET "/api/tasks/$A?detail=full"
expect "uploads, downloads and deletes are logged on the task" 200 \
	'([.task_actions[] | select(.summary | test("^(upload|download|delete) "))] | length) >= 8 and ([.task_actions[] | select(.summary | test("^upload .* failed"))] | length) >= 3'

# ---- files: kill -9 right after a 2xx upload, restart ----
head -c $((8 * 1024 * 1024)) /dev/urandom >"$tmp/k.bin"
putraw "/api/tasks/$A/files/kept/k.bin" "$tmp/k.bin"
kcode=$CODE
daemon_kill9
check "an upload answered 201 ..." [ "$kcode" = 201 ]
daemon_start --display "$SHARED" || { bad "daemon restart"; finish; exit 1; }
getraw "/api/tasks/$A/files/kept/k.bin" "$tmp/k.out"
check "... is there whole after kill -9 and a restart" sh -c "[ $CODE = 200 ] && cmp -s $tmp/k.bin $tmp/k.out"

# ---- through MCP ----
if npm_ci tests/mcp/sdk @modelcontextprotocol/sdk; then
	run_mcp() {
		DETM_URL=$DETM_URL DETM_DATA=$DETM_DATA DETM_BIN=$DETM_BIN node tests/mcp/sdk/clipfiles.mjs
	}
	out=$(run_mcp 2>&1)
	printf '%s\n' "$out" | sed '$d'
	line=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		PASS=$((PASS + BASH_REMATCH[1]))
		FAIL=$((FAIL + BASH_REMATCH[2]))
	else
		bad "the MCP SDK client" "$line"
	fi
else
	bad "the MCP SDK client" "npm ci failed in tests/mcp/sdk"
fi
api POST "/api/tasks/$A/display" '{}' >/dev/null
expect "a new display for the task after the restart" 201
convert -size 9x7 xc:yellow "$tmp/m.png"
api PUT /api/clipboard "$(jq -n --arg i "$(b64 "$tmp/m.png")" --arg t "$A" '{task_id:$t,image_base64:$i}')" >/dev/null
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
sid=$(curl -sS -D - -o /dev/null -X POST "$DETM_URL/mcp" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' -d "$init" | tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
curl -sS -o /dev/null -X POST "$DETM_URL/mcp" -H 'Content-Type: application/json' -H "Mcp-Session-Id: $sid" \
	-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18' \
	-d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
curl -sS -o "$tmp/resp" -X POST "$DETM_URL/mcp" -H 'Content-Type: application/json' -H "Mcp-Session-Id: $sid" \
	-H 'Accept: application/json' -H 'MCP-Protocol-Version: 2025-06-18' \
	-d "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"clipboard_get\",\"arguments\":{\"task_id\":\"$A\"}}}"
jq -r '.result.content[] | select(.type == "image") | .data' "$tmp/resp" 2>/dev/null | base64 -d >"$tmp/m.back" 2>/dev/null
check "/mcp: clipboard_get answers with an image block holding the PNG" sh -c \
	"cmp -s $tmp/m.png $tmp/m.back && jq -e '.result.isError != true and (.result.content[] | select(.type == \"image\") | .mimeType) == \"image/png\"' $tmp/resp >/dev/null"

# ---- the folder goes with its task ----
had=no
[ -f "$folder/kept/k.bin" ] && [ -L "$folder/dirlink" ] && had=yes
api DELETE "/api/tasks/$A"
expect "delete the task" 200
check "its folder (files, folders, links) is gone, what the link pointed to is not" sh -c \
	"[ $had = yes ] && [ ! -e $folder ] && [ -f $tmp/outside/s.txt ] && grep -q '^root:' /etc/passwd"

finish
