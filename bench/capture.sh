#!/usr/bin/env bash
# capture.sh - xcap microbenchmark: builds bench/capture.c with daemon/x11/xcap.c
# (and the few modules it needs) at -O2 (-iquote: a header named limits.h would
# shadow <limits.h>), starts a private Xvfb 1920x1080x24
# with three xterms full of text and an xlogo on a solid background, and
# prints per-operation medians/p95 next to ImageMagick `import` and plain
# XGetImage. Not part of `make test`.
#
#   bench/capture.sh [-n N] [-i IMPORT_RUNS] [-o DIR]   (arguments go to the program)
#
# Tunables: CC (cc), CAPTURE_CFLAGS (-O2 -g).
#
# Notes (2-vCPU shared VM, gcc 12 -O2, n=100, noisy by 10-40 %; medians):
#   grab 1080p via SHM -> RGB            2.2 ms  (XShmGetImage ~1 ms + convert)
#   grab + area downscale -> 1280x720    4.2 ms;  -> 960x540  3.2 ms
#   JPEG q72 4:2:0 encode 1080p          4.2 ms  (226 KB on three xterms + xlogo)
#   shot JPEG 1080p q72                  6.4 ms  (226 KB);  max_width 1280: 5.8 ms (101 KB)
#   shot PNG 1080p (deflate level 1)    23 ms    (163 KB)
#   XGetImage instead of SHM: grab 4.7x slower (10.5 ms), shot 2.4x slower
#   ImageMagick `import -window root` per call: 73 ms, 11x our 1080p JPEG shot
#   tjInitCompress+tjDestroy: ~0.1 us, so the per-thread handle is for tidiness
set -u
cd "$(dirname "$0")/.."

CC=${CC:-cc}
CFLAGS=${CAPTURE_CFLAGS:--O2 -g}
WARN="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
      -Wwrite-strings -Wformat=2 -Wpointer-arith -Wundef -Wsign-compare -Wcast-qual -Wvla
      -Wno-unused-parameter"
PKGS="x11 x11-xcb xcb xext libturbojpeg zlib json-c"
OUT=build/bench/capture

for tool in Xvfb xterm xlogo import; do
	command -v "$tool" >/dev/null || { echo "capture.sh: $tool not found" >&2; exit 1; }
done

mkdir -p build/bench
# shellcheck disable=SC2086
$CC $WARN $CFLAGS -iquote daemon -iquote common $(pkg-config --cflags $PKGS) -o "$OUT" bench/capture.c \
	daemon/x11/xcap.c daemon/x11/xcap_pixels.c daemon/x11/xcap_encode.c daemon/x11/xerr.c daemon/core/nowait.c common/derr.c common/utf8.c daemon/core/util.c daemon/core/log.c \
	$(pkg-config --libs $PKGS) -lpthread || exit 1

tmp=$(mktemp -d /tmp/detm-capbench.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

Xvfb -displayfd 3 -screen 0 1920x1080x24 -nolisten tcp -noreset 3>"$tmp/dpy" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	grep -q . "$tmp/dpy" 2>/dev/null && break
	sleep 0.05
done
num=$(head -n 1 "$tmp/dpy")
[ -n "$num" ] || { echo "capture.sh: Xvfb did not start" >&2; exit 1; }
export DISPLAY=":$num"

# A desktop-like screen: solid background, text windows, a logo.
command -v xsetroot >/dev/null && xsetroot -solid '#2e5e8c'
text='ls -la /usr/bin | head -n 200; cat /etc/services | head -n 100; sleep 3600'
xterm -geometry 100x50+20+20 -e sh -c "$text" >/dev/null 2>&1 & pids+=($!)
xterm -geometry 90x40+700+80 -bg white -fg black -e sh -c "$text" >/dev/null 2>&1 & pids+=($!)
xterm -geometry 110x24+300+700 -fa 'DejaVu Sans Mono' -fs 11 -e sh -c "$text" >/dev/null 2>&1 & pids+=($!)
xlogo -geometry 300x300+1550+650 >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 100); do
	[ "$(xwininfo -root -children 2>/dev/null | grep -c -E 'xterm|xlogo')" -ge 4 ] && break
	sleep 0.05
done
sleep 1   # let the clients draw

echo "== xcap capture bench: $DISPLAY 1920x1080x24, $(nproc) CPUs, $CC $CFLAGS"
"$OUT" "$@"
