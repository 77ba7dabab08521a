#!/usr/bin/env bash
# tests/deploy/run.sh - the deploy suite (issue 39): deploy/ checked without
# a cluster or a container engine.
#
#   chart        validate.mjs: the Helm chart rendered for each values file
#                by render.mjs (helm is not packaged in Debian 12; the chart
#                keeps to the subset it implements), every object validated
#                against the Kubernetes schemas (kubernetes-models) and the
#                SandboxTemplate/SandboxWarmPool against agent-sandbox's
#                v1beta1 CRD schemas (deploy/crds/, ajv, strict), the
#                probes/drain/token/scrape/NetworkPolicy wiring, and that
#                broken objects are rejected
#   image        deploy/Containerfile builds from scripts/install-deps.sh
#                (build, then runtime), runs as a non-root user with /data
#                a volume, ships detmd, detm-mcp and detm-a11y; every
#                library those binaries need (ELF NEEDED, and the sonames
#                detmd loads at first use) is in the runtime group or a
#                direct dependency of one of its packages (dpkg, apt-cache)
#
# The validators are npm packages pinned by package-lock.json (npm ci).
# Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
suite_init deploy

npm_ci tests/deploy kubernetes-models || { bad "npm ci tests/deploy"; finish; exit 1; }
total_pass=0 total_fail=0
run_part chart node tests/deploy/validate.mjs
PASS=$total_pass FAIL=$total_fail

# ---- the image ----
CF=deploy/Containerfile
check "Containerfile: Debian 12 in both stages" [ "$(grep -c '^FROM debian:12' "$CF")" = 2 ]
check "Containerfile: builds with install-deps.sh build, runs on install-deps.sh runtime" \
	sh -c "grep -q 'install-deps.sh build' '$CF' && grep -q 'install-deps.sh runtime' '$CF'"
check "Containerfile: detmd, detm-mcp and detm-a11y (beside detmd) in /usr/local/bin" \
	grep -q 'COPY --from=build /src/bin/detmd /src/bin/detm-mcp /src/bin/detm-a11y /usr/local/bin/' "$CF"
check "Containerfile: a non-root USER 10001, the data dir /data a VOLUME" \
	sh -c "grep -qx 'USER 10001:10001' '$CF' && grep -q 'VOLUME \[\"/data\"\]' '$CF' && grep -q 'ACU_DATA_DIR=/data' '$CF'"
runtime=$(sed -n '/^runtime_pkgs=(/,/)/p' scripts/install-deps.sh | tr -d '()' | sed 's/runtime_pkgs=//' | tr -s ' \t\n' '\n' | grep -v '^$')
check "install-deps.sh runtime is a group it accepts" sh -c "grep -q '^runtime) want=' scripts/install-deps.sh"
# Packages the runtime group brings: its own and their direct dependencies.
brought=$( { printf '%s\n' $runtime; apt-cache depends $runtime 2>/dev/null | sed -n 's/^ *\(Pre\)\{0,1\}Depends: //p'; } | sed 's/[<>]//g; s/:any$//' | sort -u)
missing=
for b in "$DETM_BIN/detmd" "$DETM_BIN/detm-mcp" "$DETM_BIN/detm-a11y"; do
	for so in $(readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p') \
		$( [ "$(basename "$b")" = detmd ] && grep -ho '"lib[a-z0-9]*\.so\.[0-9]*"' daemon/recorder/enc.c daemon/backends/ocr.c daemon/core/zipout.c | tr -d '"'); do
		# the sanitizers' runtimes (make asan-test's build): no image ships them
		case $so in libasan.so*|libubsan.so*|liblsan.so*|libtsan.so*) continue ;; esac
		p=$(ldconfig -p | awk -v s="$so" '$1 == s { print $NF; exit }')
		pkg=$( [ -n "$p" ] && dpkg -S "$(readlink -f "$p")" 2>/dev/null | head -1 | cut -d: -f1)
		[ -z "$pkg" ] && pkg=$( [ -n "$p" ] && dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1)
		[ "$pkg" = libc6 ] && continue
		if [ -z "$pkg" ] || ! grep -qx "$pkg" <<<"$brought"; then missing="$missing $(basename "$b"):$so(${pkg:-?})"; fi
	done
done
check "every library detmd, detm-mcp and detm-a11y need comes with the runtime group${missing:+ (missing:$missing)}" [ -z "$missing" ]
finish
