#!/usr/bin/env bash
# Installs mem0's npm client (mem0ai, pinned in package.json and package-lock.json) into tests/mem0_js/node_modules
# for tests/server/test_mem0_sdk_js.py. Idempotent: nothing to do, in milliseconds, until package-lock.json changes.
# Needs node and npm, and the npm registry the first time; the test fails (never skips) with this script's name
# when the install is missing or stale.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
marker="$HERE/node_modules/.jiyi-installed"
wanted="$(sha256sum "$HERE/package-lock.json" | cut -d' ' -f1)"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$wanted" ]; then
    exit 0
fi

for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "install.sh: $tool is not on PATH (Debian: apt-get install nodejs npm)" >&2; exit 1; }
done
echo "install.sh: installing mem0's npm client into $HERE/node_modules (npm ci)" >&2
# npm ci installs exactly the lock; .npmrc beside it keeps mem0ai's unused peer dependencies out.
if ! (cd "$HERE" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error); then
    echo "install.sh: npm ci failed; is the npm registry ($(npm config get registry)) reachable?" >&2
    exit 1
fi
echo "$wanted" > "$marker"
echo "install.sh: done" >&2
