#!/usr/bin/env bash
# check-layers.sh - the include rules of docs/architecture.md, read from the
# #include "..." lines of the sources. Prints one line per broken rule and
# "N passed, N failed"; exits non-zero on any failure.
#
#   1. common/ includes only common/ headers (and system headers).
#   2. daemon/ includes daemon/ and common/ headers, never mcp-proxy/.
#   3. mcp-proxy/ includes mcp-proxy/ and common/ headers, never daemon/.
#   4. No path climbs out of its folder ("../").
#   4a. a11y/ (detm-a11y, the one program linking libatspi) includes a11y/
#      and common/ headers only, never daemon/ or mcp-proxy/.
#   5. Inside daemon/, only the HTTP layer sees struct req: api.h and http.h
#      are included by http.c, routes.c, main.c and api_*.c alone. Files
#      that still break this are listed in LEGACY_HTTP below (debt: the list
#      may only shrink; a file that no longer needs its entry fails the
#      check until the entry is removed).
#   6. No function over 100 lines: tools/funclen.sh --check (its own
#      shrink-only LEGACY_LONG list).
set -u
cd "$(dirname "$0")/.."
LEGACY_HTTP=""
pass=0 fail=0
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
incs() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }

for f in common/*.[ch] daemon/*.[ch] mcp-proxy/*.[ch] a11y/*.[ch]; do
	[ -e "$f" ] || continue
	dir=${f%%/*}
	ok=1
	for h in $(incs "$f"); do
		case $h in
		*../*) bad "$f includes $h (climbs out of $dir/)"; ok=0; continue ;;
		esac
		if [ -e "$dir/$h" ]; then continue; fi
		if [ "$dir" != common ] && [ -e "common/$h" ]; then continue; fi
		case $dir in
		common) bad "$f includes $h: common/ may include only common/" ;;
		daemon) bad "$f includes $h: not in daemon/ or common/" ;;
		mcp-proxy) bad "$f includes $h: not in mcp-proxy/ or common/" ;;
		a11y) bad "$f includes $h: not in a11y/ or common/" ;;
		esac
		ok=0
	done
	[ $ok = 1 ] && pass=$((pass + 1))
done

for f in daemon/*.[ch]; do
	b=${f#daemon/}
	case $b in http.c | http.h | api.h | routes.c | main.c | api_*.c) continue ;; esac
	sees=0
	for h in $(incs "$f"); do case $h in api.h | http.h) sees=1 ;; esac; done
	legacy=0
	case " $LEGACY_HTTP " in *" $b "*) legacy=1 ;; esac
	if [ $sees = 1 ] && [ $legacy = 0 ]; then
		bad "$f includes api.h/http.h: only the HTTP layer (http.c, routes.c, main.c, api_*.c) may"
	elif [ $sees = 0 ] && [ $legacy = 1 ]; then
		bad "$f no longer includes api.h/http.h: remove it from LEGACY_HTTP in $0"
	else
		pass=$((pass + 1))
	fi
done
# 6. No function over 100 lines (tools/funclen.sh --check, with its own
#    shrink-only list of files that still have some).
if tools/funclen.sh --check; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
