# replay/lib.sh - what the replay suite and bench/replay.sh share: a scripted
# agent over HTTP driving tests/replay/save_app.py. Needs tests/lib.sh
# (api, jqr, bad), $tmp, $out (the app's folder) and $cfg (its config).
#
#   layout a|b W H LABEL       writes the app's config
#   el TASK QUERY              an element's centre "X Y" ("" none)
#   wait_el TASK QUERY         the same once it shows (20 s)
#   click TASK "X Y"           a desktop click (settle_ms 4000)
#   type_text TASK TEXT [P]    a desktop type (with "param": P)
#   record_save TASK NAME TEXT [P]  six steps: File name, type NAME, Content,
#                              type TEXT, Save, OK in the Saved window
#   replay SOURCE BODY         POST replay (202 checked): the replay task id
#   result REPLAY              waits for its end; the progress in $tmp/resp
#   took                       the last progress's ended_at - started_at, ms

layout() {
	printf '{"out_dir":"%s","layout":"%s","width":%s,"height":%s,"save_label":"%s"}\n' "$out" "$1" "$2" "$3" "$4" >"$cfg"
}
el() {
	api GET "/api/desktop/elements?task_id=$1&$2"
	[ "$CODE" = 200 ] && jqr '.elements[0].bounds // empty | "\(.x + (.width / 2 | floor)) \(.y + (.height / 2 | floor))"'
}
wait_el() {
	local i p
	for i in $(seq 1 100); do
		p=$(el "$1" "$2")
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.2
	done
	return 1
}
click() {
	[ -n "$2" ] || { bad "click on $1" "no point (the element was not found)"; return 1; }
	set -- "$1" $2
	api POST /api/desktop/action "{\"task_id\":\"$1\",\"action\":\"click\",\"x\":$2,\"y\":$3,\"settle_ms\":4000}"
	[ "$CODE" = 200 ] || bad "click on $1" "$CODE $(head -c 300 "$tmp/resp")"
}
type_text() {
	api POST /api/desktop/action "{\"task_id\":\"$1\",\"action\":\"type\",\"text\":\"$2\",\"settle_ms\":4000${3:+,\"param\":\"$3\"}}"
	[ "$CODE" = 200 ] || bad "type on $1" "$CODE $(head -c 300 "$tmp/resp")"
}
record_save() {
	local p
	p=$(wait_el "$1" "role=text&name=File%20name") || bad "record: the File name entry shows in the tree"
	click "$1" "$p"
	type_text "$1" "$2" "${4:-}"
	p=$(el "$1" "role=text&name=Content")
	click "$1" "$p"
	type_text "$1" "$3"
	p=$(el "$1" "role=push%20button&name=Save")
	SAVE_AT=$p
	click "$1" "$p"
	p=$(wait_el "$1" "role=push%20button&name=OK&window=Saved") || bad "record: the Saved window shows"
	click "$1" "$p"
}
replay() {
	api POST "/api/tasks/$1/replay" "$2"
	if [ "$CODE" != 202 ]; then
		bad "POST replay $2" "$CODE $(head -c 400 "$tmp/resp")"
		return 1
	fi
	jqr .task_id
}
result() {
	local i
	for i in $(seq 1 12); do
		api GET "/api/tasks/$1/replay?block_s=10"
		[ "$(jqr .status)" != running ] && return 0
	done
}
took() {
	jqr 'def ms: (sub("\\.[0-9]+Z$"; "Z") | fromdate) * 1000 + (capture("\\.(?<f>[0-9]{3})Z$").f | tonumber); (.ended_at | ms) - (.started_at | ms)'
}
