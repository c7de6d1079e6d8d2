#!/usr/bin/env bash
# Installs what the SillyTavern end-to-end tests need; idempotent, a few seconds when everything is there.
#   - Debian's chromium (headless browser for the tests; never a browser download by a test tool), with fonts for
#     Latin and CJK text (the screenshots show Chinese chats)
#   - SillyTavern 1.19.0 from the npm registry into ${JIYI_ST_HOME:-<repo>/.cache/sillytavern-1.19.0}
# The tree installed here stays pristine: test runs copy it (hard links) into a temp folder.
set -euo pipefail

ST_VERSION=1.19.0
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
ST_HOME="${JIYI_ST_HOME:-$REPO/.cache/sillytavern-$ST_VERSION}"

DEBIAN_PACKAGES=(chromium fonts-liberation fonts-noto-cjk)
missing=()
for package in "${DEBIAN_PACKAGES[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "install.sh: installing Debian packages: ${missing[*]}" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

marker="$ST_HOME/.jiyi-installed"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$ST_VERSION" ]; then
    exit 0
fi

echo "install.sh: installing SillyTavern $ST_VERSION into $ST_HOME" >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "sillytavern@$ST_VERSION" >/dev/null)
rm -rf "$ST_HOME.partial"
mkdir -p "$ST_HOME.partial"
tar -xzf "$work"/sillytavern-"$ST_VERSION".tgz -C "$ST_HOME.partial" --strip-components=1
(cd "$ST_HOME.partial" && npm install --no-save --no-audit --no-fund --omit=dev --ignore-scripts --loglevel=error)
echo "$ST_VERSION" > "$ST_HOME.partial/.jiyi-installed"
rm -rf "$ST_HOME"
mv "$ST_HOME.partial" "$ST_HOME"
echo "install.sh: done" >&2
