# The two commands a new user needs: `make demo` and `make test`. Both install the Debian
# packages they need first (scripts/install-deps.sh is idempotent and quick when all are there).
.PHONY: all deps build demo test test-asan build-asan format clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release

demo: build
	@echo "== running examples/leaky under libmemtrack.so =="
	LD_PRELOAD=$(CURDIR)/build/release/runtime/libmemtrack.so build/release/examples/leaky

test: build
	ctest --preset release

build-asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan

test-asan: build-asan
	ctest --preset asan

format:
	git ls-files '*.h' '*.cpp' '*.c' | xargs clang-format -i

clean:
	rm -rf build
