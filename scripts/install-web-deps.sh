#!/usr/bin/env bash
# Installs web/node_modules from web/package-lock.json (exact versions, integrity-checked):
# the flame-graph and chart libraries the HTML report embeds at build time, and the tools the
# tests run (puppeteer-core for headless Chromium, the SARIF multitool, speedscope's schema).
# Idempotent: does nothing when node_modules already matches the lock file.
set -euo pipefail
cd "$(dirname "$0")/../web"

stamp=node_modules/.memtrack-lock-stamp
if [[ -f $stamp ]] && cmp -s package-lock.json "$stamp"; then
  exit 0
fi

# A machine without Node.js gets Debian's (nodejs and npm; Node.js from elsewhere, such as
# NodeSource's package, which brings its own npm, is used as it is).
if ! command -v npm >/dev/null; then
  ../scripts/install-deps.sh nodejs npm
fi

echo "install-web-deps: npm ci in web/"
# --ignore-scripts: no package's install script runs; the one that matters (the SARIF
# multitool's chmod of its executable) is done here instead.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
find node_modules/@microsoft -name Sarif.Multitool -type f -exec chmod u+x {} +
cp package-lock.json "$stamp"
