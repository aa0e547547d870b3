#!/usr/bin/env bash
# Installs web/node_modules from web/package-lock.json (exact versions, integrity-checked):
# the flame-graph and chart libraries the HTML report embeds at build time, and the tools the
# tests run (puppeteer-core for headless Chromium, the SARIF multitool, speedscope's schema).
# Idempotent: does nothing when node_modules already matches the lock file.
set -euo pipefail
cd "$(dirname "$0")/../web"

if ! command -v npm >/dev/null; then
  echo "install-web-deps: error: npm not found; install Node.js 18 or later (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi

stamp=node_modules/.memtrack-lock-stamp
if [[ -f $stamp ]] && cmp -s package-lock.json "$stamp"; then
  exit 0
fi

echo "install-web-deps: npm ci in web/"
# --ignore-scripts: no package's install script runs; the one that matters (the SARIF
# multitool's chmod of its executable) is done here instead.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
find node_modules/@microsoft -name Sarif.Multitool -type f -exec chmod u+x {} +
cp package-lock.json "$stamp"
