# The two commands a new user needs: `make demo` and `make test`. Both install the Debian
# packages they need first (scripts/install-deps.sh is idempotent and quick when all are there).
.PHONY: all deps demo-deps bench-deps build demo test test-asan build-asan build-allocguard \
        test-tsan build-tsan build-emulated test-emulated test-aarch64-full bench compare format \
        install package clean

all: build

deps:
	@scripts/install-deps.sh
	@scripts/install-web-deps.sh

# Only what building and running memtrack needs: no test tools, no Node.js (the three browser
# libraries the HTML report embeds come straight from the npm registry, integrity-checked).
demo-deps:
	@scripts/install-deps.sh --demo
	@scripts/fetch-web-assets.py

build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release

# The first report: memtrack, its runtime and the example only, in build/demo (the demo
# preset: tests not configured, the tools at -O1 without debug info).
demo: demo-deps
	cmake --preset demo >/dev/null
	cmake --build --preset demo
	build/demo/cli/memtrack run -- build/demo/examples/leaky

# Installs the release build, stripped, under PREFIX (default /usr/local): binaries, runtime,
# header, man page, bash completion, pkg-config files, documentation.
PREFIX ?= /usr/local
install: build
	cmake --install build/release --strip --prefix $(PREFIX)

# The Debian package of the release build (CPack, packaging/CMakeLists.txt), in
# build/release/packages/. It installs under the build's CMAKE_INSTALL_PREFIX (/usr/local
# unless configured with -DCMAKE_INSTALL_PREFIX=/usr).
package: build
	cd build/release && cpack -G DEB -B packages

# The whole suite in the release build, then the unit tests again under ASan + UBSan (the
# preload runtime and the e2e programs cannot run under ASan, so the asan preset runs only
# the tests labelled "unit"), then the e2e programs against a runtime built with the
# allocation guard (docs/runtime.md, "Allocations of its own"; about a minute and a half),
# then the multi-threaded stress tests under ThreadSanitizer (the tsan preset builds only
# their binary), then the runtime and the e2e programs cross-built for aarch64 and armhf and
# run under qemu-user, their result files read by this machine's memtrack report (README,
# "Platforms"; about two minutes).
test: build build-asan build-allocguard build-tsan build-emulated
	ctest --preset release
	ctest --preset asan
	ctest --preset allocguard
	ctest --preset tsan
	ctest --preset aarch64
	ctest --preset armhf

# The cross builds need the host build's memtrack (their tests run its `report`).
build-emulated: build
	cmake --preset aarch64 >/dev/null
	cmake --build --preset aarch64
	cmake --preset armhf >/dev/null
	cmake --build --preset armhf

# The whole project cross-built for aarch64 (host tools and their unit tests under qemu-user,
# the aarch64 memtrack report reading emulated results). Not in `make test`: its build takes
# too long for the emulated part's 10-minute budget on a 2-core machine.
test-aarch64-full: build
	@scripts/install-deps.sh --aarch64-full
	cmake --preset aarch64-full >/dev/null
	cmake --build --preset aarch64-full
	ctest --preset aarch64-full

test-emulated: build-emulated
	ctest --preset aarch64
	ctest --preset armhf

build-asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan

build-allocguard: deps
	cmake --preset allocguard >/dev/null
	cmake --build --preset allocguard

test-asan: build-asan
	ctest --preset asan

build-tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan

test-tsan: build-tsan
	ctest --preset tsan

bench: build
	bench/run_overhead.sh build/release 5
	build/release/core/memtrack_core_bench --benchmark_min_time=0.2

# memtrack next to valgrind memcheck, heaptrack and LeakSanitizer on whole programs: installs the
# tools, builds what the comparison runs, and writes the table into docs/performance.md (median
# of 5 alternating runs; see there for the duration). Extra options: COMPARE_ARGS="--only sort".
compare: bench-deps
	cmake --preset release >/dev/null
	cmake --build --preset release --target memtrack memtrack_rt memtrack_workloads
	bench/compare.py --build build/release --runs 5 --instructions $(COMPARE_ARGS)

bench-deps:
	@scripts/install-bench-deps.sh

format:
	git ls-files '*.h' '*.cpp' '*.c' | xargs clang-format -i

clean:
	rm -rf build
