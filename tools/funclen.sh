#!/usr/bin/env bash
# funclen.sh [N] - function lengths in common/, daemon/ (every folder) and mcp-proxy/ (the
# house style puts a definition's name at column 0 and its braces on their
# own lines at column 0). Prints the longest N (default 15), the median and
# how many exceed 100 lines. Used by `make lint`.
#
# funclen.sh --check - the house rule as a test (run by tools/check-layers.sh,
# so by the `layers` suite of make test): prints one FAIL line per function
# over 100 lines and exits non-zero, except in the files of LEGACY_LONG
# below (debt: the list may only shrink; a listed file with no function over
# 100 lines fails the check until its entry is removed).
set -u
cd "$(dirname "$0")/.."
LEGACY_LONG=""
MAX=100

lengths() {
	awk '
	FNR == 1 { name = ""; start = 0 }
	/^[a-z_][a-z0-9_]*\(/ { split($0, a, "("); name = a[1]; next }
	/^\{/ && name != "" { start = FNR; next }
	/^\}/ && start > 0 { printf "%d %s:%d %s\n", FNR - start - 1, FILENAME, start, name; start = 0; name = "" }
	' common/*.c daemon/*.c daemon/*/*.c mcp-proxy/*.c | sort -rn
}

if [ "${1:-}" = "--check" ]; then
	long=$(lengths | awk -v max=$MAX '$1 > max')
	fail=0
	while read -r n where name; do
		[ -n "${n:-}" ] || continue
		f=${where%%:*}
		case " $LEGACY_LONG " in *" $f "*) continue ;; esac
		echo "FAIL $where $name is $n lines (at most $MAX: split it by step)"
		fail=1
	done <<<"$long"
	for f in $LEGACY_LONG; do
		if ! grep -q " $f:" <<<"$long"; then
			echo "FAIL $f has no function over $MAX lines now: remove it from LEGACY_LONG in $0"
			fail=1
		fi
	done
	exit $fail
fi

top=${1:-15}
lengths >/tmp/funclen.$$
n=$(wc -l </tmp/funclen.$$)
over=$(awk -v max=$MAX '$1 > max' /tmp/funclen.$$ | wc -l)
median=$(awk '{print $1}' /tmp/funclen.$$ | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "functions: $n, median $median lines, over $MAX lines: $over"
head -n "$top" /tmp/funclen.$$
rm -f /tmp/funclen.$$
