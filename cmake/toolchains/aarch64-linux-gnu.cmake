# Cross build for 64-bit ARM with Debian's gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu and
# libc6-dev-arm64-cross. The aarch64 preset builds only the runtime and the programs it is
# tested on (MEMTRACK_RUNTIME_ONLY); the aarch64-full preset builds the whole project against
# Debian's arm64 -dev packages (scripts/install-deps.sh). The tests run under qemu-user
# (tests/emulated).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The cross compiler's own root (libc, libstdc++), then the arm64 multiarch packages, whose
# libraries are in /usr/lib/aarch64-linux-gnu and headers in /usr/include.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The emulator and the target's library root, as `qemu-aarch64 -L ROOT PROGRAM` takes them
# (binfmt_misc is not assumed: every run names the emulator).
set(MEMTRACK_EMULATOR qemu-aarch64)
set(MEMTRACK_TARGET_ROOT /usr/aarch64-linux-gnu)
# The target's C library first, by LD_LIBRARY_PATH: qemu-user opens a path under ROOT if it
# is there and the host's own path otherwise, and the loader's search path starts with
# /lib/aarch64-linux-gnu, which ROOT does not have. With Debian's multiarch C library for the
# target installed (libc6:arm64, which the aarch64-full preset's packages bring), ROOT's
# loader would then load that libc.so.6, another build of glibc than itself: programs that
# start threads hang in it (seen with 2.36-8cross1 and 2.36-9+deb12u14).
set(MEMTRACK_EMULATOR_OPTIONS -L ${MEMTRACK_TARGET_ROOT} -E LD_LIBRARY_PATH=${MEMTRACK_TARGET_ROOT}/lib)
# The same for add_test and gtest_discover_tests, which run the unit tests of the full build.
set(CMAKE_CROSSCOMPILING_EMULATOR ${MEMTRACK_EMULATOR} ${MEMTRACK_EMULATOR_OPTIONS})
