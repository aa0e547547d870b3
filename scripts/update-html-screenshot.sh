#!/usr/bin/env bash
# Regenerates docs/images/html-report.png, the README's picture of the HTML report: the
# browser test (tests/html/browser_test.js) opens the demo program's report in headless
# Chromium, expands one leak group and takes the picture. Needs a configured release build.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
cmake --build "$build" -j1 --target memtrack leaky crash html_many_leaks html_synthetic_report
mkdir -p docs/images
node tests/html/browser_test.js \
  --memtrack "$build/cli/memtrack" --leaky "$build/examples/leaky" --crash "$build/examples/crash" \
  --many "$build/tests/html/html_many_leaks" --synthetic "$build/tests/html/html_synthetic_report" \
  --chromium "$(command -v chromium)" --modules web/node_modules \
  --out "$build/tests/html/artifacts" --readme-screenshot docs/images/html-report.png
echo "wrote docs/images/html-report.png"
