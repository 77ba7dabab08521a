#!/usr/bin/env bash
# ocr.sh - OCR microbenchmark: builds bench/ocr.c (which includes
# daemon/backends/ocr.c) at -O2 (-iquote: a header named limits.h would shadow
# <limits.h>), starts a private Xvfb 1920x1080x24 with four xterms of text
# (the 6x13 bitmap font, black-on-white, Xft DejaVu Sans Mono 11, and one
# that prints "Tests passed: 42 of 42" six seconds after it starts), and
# prints medians for ocr_text on the full frame and on the changed-region
# crops (x2, x3), with PSM_SPARSE_TEXT vs PSM_AUTO; with OCR_BENCH_OMP=1
# a second pass with OpenMP's parallel regions allowed again (what ocr_new's
# serialisation saves; slow: ~3 min); then the `tesseract` CLI on the same
# PNGs if it is installed (package tesseract-ocr). Not part of `make test`.
#
#   bench/ocr.sh [-n N] [-f FULL_RUNS]    (arguments go to the program)
#
# Tunables: CC (cc), OCR_CFLAGS (-O2 -g), OCR_BENCH_TEXT=1 prints the text.
#
# Notes (2-vCPU shared VM, gcc 12 -O2, tesseract 5.3.0 + Debian's eng
# "fast" model 4.1.0, medians, PSM_SPARSE_TEXT unless said):
#   ocr_new (model load)                      53 ms
#   ocr_grey_thumb 1080p -> 480x270            3.4 ms;  ocr_changed_boxes 0.13 ms
#   changed-line crop 152x32, x2              9.8 ms  (x3: 11.5 ms, conf 85 -> 93)
#   DejaVu 11 xterm window 1000x380, x2     123 ms
#   6x13 xterm window full of text, x2     1.78 s   (2900 chars of ls -la)
#   full frame 1920x1080, x1               2.76 s   (PSM_AUTO: 1.02 s, fewer words)
#   PSM_AUTO on the changed-line crop misread it ("Tests" lost): SPARSE stays.
#   tessedit_do_invert 1: +4-8 % on dark-on-light input, so 0.
#   OpenMP left parallel (-p, OCR_BENCH_OMP=1): crop 65 ms, full frame 12.7 s:
#   5-7x slower; hence ocr_new's serialisation.
#   tesseract CLI (baselines.md section 6): ~100 ms model load per call,
#   0.17-0.25 s per window crop, 2.0-2.3 s per 1080p frame.
set -u
cd "$(dirname "$0")/.."

CC=${CC:-cc}
CFLAGS=${OCR_CFLAGS:--O2 -g}
WARN="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
      -Wwrite-strings -Wformat=2 -Wpointer-arith -Wundef -Wsign-compare -Wcast-qual -Wvla
      -Wno-unused-parameter"
PKGS="x11 x11-xcb xcb xext libturbojpeg zlib json-c tesseract"
OUT=build/bench/ocr

for tool in Xvfb xterm; do
	command -v "$tool" >/dev/null || { echo "ocr.sh: $tool not found" >&2; exit 1; }
done

mkdir -p build/bench
# shellcheck disable=SC2086
$CC $WARN $CFLAGS -iquote daemon -iquote common $(pkg-config --cflags $PKGS) -o "$OUT" bench/ocr.c \
	daemon/backends/ocr_phrase.c daemon/backends/ocr_boxes.c daemon/x11/xcap.c daemon/x11/xcap_pixels.c daemon/x11/xcap_encode.c daemon/x11/xerr.c daemon/core/nowait.c daemon/core/dynlib.c common/derr.c common/utf8.c daemon/core/util.c daemon/core/log.c \
	$(pkg-config --libs $PKGS) -ldl -lpthread || exit 1

tmp=$(mktemp -d /tmp/detm-ocrbench.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

start_screen() {
	Xvfb -displayfd 3 -screen 0 1920x1080x24 -nolisten tcp -noreset 3>"$tmp/dpy" >/dev/null 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		grep -q . "$tmp/dpy" 2>/dev/null && break
		sleep 0.05
	done
	num=$(head -n 1 "$tmp/dpy")
	[ -n "$num" ] || { echo "ocr.sh: Xvfb did not start" >&2; exit 1; }
	export DISPLAY=":$num"
	command -v xsetroot >/dev/null && xsetroot -solid '#2e5e8c'
	xterm -geometry 100x50+20+20 -e sh -c \
		'ls -la /usr/bin | head -n 46; echo Download complete; sleep 3600' >/dev/null 2>&1 & pids+=($!)
	xterm -geometry 90x40+700+80 -bg white -fg black -e sh -c \
		'head -n 60 /etc/services; sleep 3600' >/dev/null 2>&1 & pids+=($!)
	xterm -geometry 110x24+300+700 -fa 'DejaVu Sans Mono' -fs 11 -e sh -c \
		'ls /usr/lib | head -n 18; echo Saved report.pdf to Downloads; echo Download complete; sleep 3600' \
		>/dev/null 2>&1 & pids+=($!)
	xterm -geometry 60x10+1300+700 -e sh -c \
		'echo Running test suite...; sleep 6; echo Tests passed: 42 of 42; sleep 3600' \
		>/dev/null 2>&1 & pids+=($!)
	for _ in $(seq 100); do
		[ "$(xwininfo -root -children 2>/dev/null | grep -c xterm)" -ge 4 ] && break
		sleep 0.05
	done
	sleep 1   # let the clients draw
}

stop_screen() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	pids=()
	rm -f "$tmp/dpy"
}

echo "== OCR bench: 1920x1080x24, $(nproc) CPUs, $CC $CFLAGS, tesseract $(pkg-config --modversion tesseract)"
echo "   phrases: #1 Download complete  #2 Saved report.pdf to Downloads  #3 Tests passed: 42 of 42"
start_screen
echo "=== in process, OpenMP serialised by ocr_new"
"$OUT" -o "$tmp" "$@" | tee "$tmp/out"
stop_screen
if [ "${OCR_BENCH_OMP:-0}" = 1 ]; then
	start_screen
	echo "=== in process, OpenMP parallel regions allowed (-p)"
	"$OUT" -p "$@"
	stop_screen
fi

if command -v tesseract >/dev/null; then
	read -r _ bx by bw bh < <(grep '^  box0' "$tmp/out")
	if command -v convert >/dev/null; then
		convert "$tmp/full.png" -crop "${bw}x${bh}+${bx}+${by}" +repage -filter catrom \
			-resize 200% "$tmp/crop.png"
	fi
	echo "== tesseract CLI (OMP_THREAD_LIMIT=1, --psm 11, per call incl. model load)"
	for img in full crop; do
		[ -f "$tmp/$img.png" ] || continue
		best=
		for _ in 1 2 3; do
			t0=$(date +%s%N)
			OMP_THREAD_LIMIT=1 tesseract "$tmp/$img.png" - --psm 11 >/dev/null 2>&1
			t=$((($(date +%s%N) - t0) / 1000000))
			{ [ -z "$best" ] || [ "$t" -lt "$best" ]; } && best=$t
		done
		echo "  $img.png: best of 3 ${best} ms"
	done
else
	echo "== tesseract CLI: not installed (package tesseract-ocr); see"
	echo "   shared/reference/baselines.md section 6 for its numbers on this machine"
fi
