#!/usr/bin/env bash
# Regenerates docs/images/ui.png, the README's picture of memtrack ui: the ui browser test
# (tests/ui/browser_test.js) filters the table to cli_daemon under memtrack run, takes a
# snapshot and takes the picture. Needs a configured release build.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
cmake --build "$build" -j1 --target memtrack memtrack_rt cli_daemon cli_sleeper cli_heap_pattern
mkdir -p docs/images
node tests/ui/browser_test.js \
  --memtrack "$build/cli/memtrack" --daemon "$build/tests/cli/cli_daemon" \
  --sleeper "$build/tests/cli/cli_sleeper" --pattern "$build/tests/cli/cli_heap_pattern" --chromium "$(command -v chromium)" \
  --modules web/node_modules --out "$build/tests/ui/artifacts" --readme-screenshot docs/images/ui.png
echo "wrote docs/images/ui.png"
