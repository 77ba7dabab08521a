#!/usr/bin/env bash
# check-layers.sh - the include rules of docs/architecture.md, read from the
# #include "..." lines of the sources. Prints one line per broken rule and
# "N passed, N failed"; exits non-zero on any failure.
#
#   1. common/ includes only common/ headers (and system headers).
#   2. mcp-proxy/ includes mcp-proxy/ and common/ headers, never daemon/;
#      a11y/ (detm-a11y, the one program linking libatspi) includes a11y/
#      and common/ headers only.
#   3. No path climbs out of its folder ("../").
#   4. daemon/ is in subsystem folders with a rank (RANK below). A file
#      includes headers of its own folder by their bare name, common/
#      headers by theirs, and headers of a folder of LOWER rank by the
#      folder's name ("store/store.h"); never a folder of the same or a
#      higher rank, never mcp-proxy/. A "*_int.h" is a folder's private
#      header: only files of that folder include it. main.c and modules.c
#      (daemon/ itself) are the top rank.
#   5. Every daemon folder with sources is one the Makefile builds
#      (DAEMON_DIRS), and every folder of the tree has a rank here.
#   6. No function over 100 lines: tools/funclen.sh --check (its own
#      shrink-only LEGACY_LONG list).
set -u
cd "$(dirname "$0")/.."
declare -A RANK=(
	[core]=1
	[store]=2 [x11]=2 [backends]=2
	[task]=3
	[desktop]=4 [ops]=4
	[waits]=5 [gui]=5 [recorder]=5
	[http]=6
	[.]=7
)
pass=0 fail=0
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
incs() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }

# Rules 1-3: the programs' folders.
for f in common/*.[ch] mcp-proxy/*.[ch] a11y/*.[ch]; do
	[ -e "$f" ] || continue
	dir=${f%%/*}
	ok=1
	for h in $(incs "$f"); do
		case $h in
		*../*) bad "$f includes $h (climbs out of $dir/)"; ok=0; continue ;;
		esac
		[ -e "$dir/$h" ] && continue
		[ "$dir" != common ] && [ -e "common/$h" ] && continue
		if [ "$dir" = common ]; then
			bad "$f includes $h: common/ may include only common/"
		else
			bad "$f includes $h: $dir/ may include only $dir/ and common/"
		fi
		ok=0
	done
	[ $ok = 1 ] && pass=$((pass + 1))
done

# daemon_inc FILE FOLDER HEADER: 0 if FILE (in FOLDER) may include HEADER.
daemon_inc() {
	local f=$1 folder=$2 h=$3 hf
	case $h in
	*../*) bad "$f includes $h (climbs out of its folder)"; return 1 ;;
	*/*)
		hf=${h%%/*}
		if [ ! -e "daemon/$h" ]; then
			[ -e "common/$h" ] && return 0
			bad "$f includes $h: no such header under daemon/"; return 1
		fi
		case $h in *_int.h) bad "$f includes $h: a folder's private header, from outside it"; return 1 ;; esac
		if [ -z "${RANK[$hf]:-}" ]; then bad "$f includes $h: folder $hf has no rank"; return 1; fi
		if [ "$hf" = "$folder" ]; then bad "$f includes $h: its own folder, by the bare name"; return 1; fi
		if [ "${RANK[$hf]}" -ge "${RANK[$folder]}" ]; then
			bad "$f includes $h: $hf/ (rank ${RANK[$hf]}) is not below $folder/ (rank ${RANK[$folder]})"
			return 1
		fi
		return 0 ;;
	esac
	[ -e "$(dirname "$f")/$h" ] && return 0
	[ -e "common/$h" ] && return 0
	hf=$(cd daemon && ls -d */"$h" 2>/dev/null | head -n 1)
	bad "$f includes $h: neither its own folder's nor common/'s${hf:+ (name the folder: \"$hf\")}"
	return 1
}

# Rule 4.
for f in daemon/*.[ch] daemon/*/*.[ch]; do
	[ -e "$f" ] || continue
	folder=$(dirname "${f#daemon/}")
	if [ -z "${RANK[$folder]:-}" ]; then
		bad "$f: folder daemon/$folder has no rank in $0"
		continue
	fi
	ok=1
	for h in $(incs "$f"); do
		daemon_inc "$f" "$folder" "$h" || ok=0
	done
	[ $ok = 1 ] && pass=$((pass + 1))
done

# Rule 5.
dirs=$(sed -n 's/^DAEMON_DIRS := //p' Makefile)
for d in daemon/*/; do
	d=${d#daemon/}
	d=${d%/}
	if [ -z "${RANK[$d]:-}" ]; then
		bad "daemon/$d has no rank in $0"
	elif ! case " $dirs " in *" $d "*) true ;; *) false ;; esac; then
		bad "daemon/$d is not in the Makefile's DAEMON_DIRS (its sources would not be built)"
	else
		pass=$((pass + 1))
	fi
done

# 6. No function over 100 lines (tools/funclen.sh --check, with its own
#    shrink-only list of files that still have some).
if tools/funclen.sh --check; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# 7. No merge conflict left in a tracked text file (one once landed in
#    README.md: no compiler reads it, so nothing else catches it).
if [ -d .git ] || git rev-parse --git-dir >/dev/null 2>&1; then
	left=$(git grep -lI -E '^(<<<<<<< |>>>>>>> )' -- . ':!tests/*/node_modules' 2>/dev/null || true)
	if [ -z "$left" ]; then
		pass=$((pass + 1))
	else
		bad "merge conflict markers left in: $(echo $left)"
	fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
