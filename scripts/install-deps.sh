#!/usr/bin/env bash
# Installs, idempotently, every Debian 12 package that memtrack's build and tests need (or,
# with --demo, only what building and running memtrack needs: `make demo`; given package names
# as arguments, those instead: scripts/install-bench-deps.sh does that; with --aarch64-full,
# the arm64 libraries of the whole-project aarch64 cross build).
# Packages already present are not touched, so a second run costs only a dpkg query.
set -euo pipefail

# Building memtrack (every tool and the runtime) and running it: `make demo`.
demo_packages=(
  build-essential g++ cmake make pkg-config python3
  libgtest-dev libgmock-dev libbenchmark-dev   # the unit tests beside the code are configured
  libdw-dev libelf-dev              # symbolization (elfutils libdw)
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libunwind8          # runtime unwinder, loaded privately by libmemtrack.so
  libncurses-dev      # memtrack top's full-screen view
  libzstd-dev                       # compressed profile recordings
  libprotobuf-dev protobuf-compiler zlib1g-dev   # pprof output (profile.proto, gzip)
  libcpp-httplib-dev  # memtrack ui's HTTP server
)

# Everything else the tests need: `make test`.
packages=(
  "${demo_packages[@]}"
  git
  clang libclang-rt-14-dev          # libFuzzer target for the result-file reader
  clang-format        # the format check (tests/check_format.py)
  coreutils procps    # real-program tests: ls, sort
  valgrind            # the oracle for leak classification (tests/memcheck)
  gdb                 # a real program the leak scan must survive (tests/cli, scan_gdb)
  redis-server redis-tools  # memtrack attach on a real service under load (tests/cli)
  libjemalloc-dev libgoogle-perftools-dev libmimalloc-dev  # other allocators' APIs (tests/cli)
  libheaptrack        # heaptrack_api.h: a pool annotated for heaptrack (tests/cli)
  strace              # what a short run opens, checked by tests/cli/test_startup.py
  tmux                # memtrack top's end-to-end test drives it in a tmux pane
  groff-base          # the installed man page is checked with groff -ww
  file                # CPack's Debian package finds the ELF files dpkg-shlibdeps reads
  golang-go           # `go tool pprof` reads the pprof output in the tests
  python3-jsonschema  # speedscope output checked against speedscope's own schema
  python3-yaml        # the CI recipes' YAML (docs/ci-recipes.md) parsed by the tests
  chromium            # the HTML report and memtrack ui tested in headless Chromium
  qemu-user           # aarch64 and armhf builds run emulated in the tests
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
  gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf libc6-dev-armhf-cross
)

# The whole project cross-built for aarch64 (preset aarch64-full, `make test-aarch64-full`,
# not part of `make test`): Debian's arm64 builds of the libraries above, Multi-Arch: same, so
# they sit beside the amd64 ones (the arch-all ones, CLI11 and nlohmann-json, serve both).
# Installing them may upgrade amd64 packages to the same version, so only that target asks.
aarch64_full_packages=(
  libdw-dev:arm64 libelf-dev:arm64 libzstd-dev:arm64 libprotobuf-dev:arm64 zlib1g-dev:arm64
  libncurses-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 libbenchmark-dev:arm64
  libfmt-dev:arm64 libcpp-httplib-dev:arm64
)

if [[ "${1:-}" == "--aarch64-full" ]]; then
  packages=("${aarch64_full_packages[@]}")
elif [[ "${1:-}" == "--demo" ]]; then
  packages=("${demo_packages[@]}")
elif [[ $# -gt 0 ]]; then
  packages=("$@")
fi

# Whether a package (name, or name:arch for another architecture than dpkg's own) is
# installed; an Architecture: all package serves every architecture.
native_arch=$(dpkg --print-architecture)
installed() {
  local name=${1%%:*} arch=${1#*:}
  [[ "$arch" == "$1" ]] && arch=$native_arch
  dpkg-query -W -f='${Status} ${Architecture}\n' "$name" 2>/dev/null |
    grep -E "^install ok installed ($arch|all)\$" >/dev/null
}

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "install-deps: error: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
# Packages of another architecture (name:arch) need it known to dpkg before apt-get update.
for p in "${missing[@]}"; do
  arch=${p#*:}
  if [[ "$arch" != "$p" ]] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    "${sudo[@]}" dpkg --add-architecture "$arch"
  fi
done
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
# --no-remove: a Multi-Arch: same package must have the same version in both architectures;
# apt may upgrade the amd64 one to match, but must never remove anything to get there.
"${sudo[@]}" apt-get install -y -q --no-install-recommends --no-remove "${missing[@]}"
