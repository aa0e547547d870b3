#!/usr/bin/env bash
# Regenerates docs/images/html-report.png, the README's picture of the HTML report: the
# browser test (tests/html/browser_test.js) opens the demo program's report in headless
# Chromium, expands one leak group and takes the picture; and docs/images/profile-report.png,
# the heap profile's page (tests/html/profile_test.js, heap_pattern with a window). Needs a
# configured release build.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
cmake --build "$build" -j1 --target memtrack leaky crash html_many_leaks html_synthetic_report \
  cli_heap_pattern
mkdir -p docs/images
node tests/html/browser_test.js \
  --memtrack "$build/cli/memtrack" --leaky "$build/examples/leaky" --crash "$build/examples/crash" \
  --many "$build/tests/html/html_many_leaks" --synthetic "$build/tests/html/html_synthetic_report" \
  --chromium "$(command -v chromium)" --modules web/node_modules \
  --out "$build/tests/html/artifacts" --readme-screenshot docs/images/html-report.png
echo "wrote docs/images/html-report.png"
node tests/html/profile_test.js \
  --memtrack "$build/cli/memtrack" --pattern "$build/tests/cli/cli_heap_pattern" \
  --chromium "$(command -v chromium)" --modules web/node_modules \
  --out "$build/tests/html/artifacts" --docs-screenshot docs/images/profile-report.png
