#!/usr/bin/env bash
# funclen.sh [N] - function lengths in common/, daemon/ and mcp-proxy/ (the
# house style puts a definition's name at column 0 and its braces on their
# own lines at column 0). Prints the longest N (default 15), the median and
# how many exceed 100 lines. Used by `make lint`; a report, not a test.
set -u
cd "$(dirname "$0")/.."
top=${1:-15}
awk '
FNR == 1 { name = ""; start = 0 }
/^[a-z_][a-z0-9_]*\(/ { split($0, a, "("); name = a[1]; next }
/^\{/ && name != "" { start = FNR; next }
/^\}/ && start > 0 { printf "%d %s:%d %s\n", FNR - start - 1, FILENAME, start, name; start = 0; name = "" }
' common/*.c daemon/*.c mcp-proxy/*.c | sort -rn >/tmp/funclen.$$
n=$(wc -l </tmp/funclen.$$)
over=$(awk '$1 > 100' /tmp/funclen.$$ | wc -l)
median=$(awk '{print $1}' /tmp/funclen.$$ | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "functions: $n, median $median lines, over 100 lines: $over"
head -n "$top" /tmp/funclen.$$
rm -f /tmp/funclen.$$
