#!/usr/bin/env bash
# Installs, idempotently, the Debian 12 packages that bench/compare.py runs next to memtrack
# (the peer tools and the real programs it measures); the build's own packages come from
# install-deps.sh. Packages already present are not touched.
set -euo pipefail
here=$(dirname "$0")
"$here/install-deps.sh"
exec "$here/install-deps.sh" \
  valgrind \
  heaptrack zstd \
  liblsan0 \
  time \
  python3 git g++ coreutils bc
