# Cross build for 32-bit ARM (armhf: ARMv7, hard float, EHABI unwind tables) with Debian's
# gcc-arm-linux-gnueabihf, g++-arm-linux-gnueabihf and libc6-dev-armhf-cross. Only the
# runtime and the programs it is tested on are built (MEMTRACK_RUNTIME_ONLY); the tests run
# them under qemu-user (tests/emulated).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# The emulator and the target's library root, as `qemu-arm -L ROOT PROGRAM` takes them
# (binfmt_misc is not assumed: every run names the emulator).
set(MEMTRACK_EMULATOR qemu-arm)
set(MEMTRACK_TARGET_ROOT /usr/arm-linux-gnueabihf)
# The target's C library first, by LD_LIBRARY_PATH: qemu-user opens a path under ROOT if it
# is there and the host's own path otherwise, and the loader's search path starts with
# /lib/arm-linux-gnueabihf, which ROOT does not have. With Debian's multiarch C library for
# the target installed (libc6:armhf), ROOT's loader would then load that libc.so.6, another
# build of glibc than itself (cmake/toolchains/aarch64-linux-gnu.cmake: on arm64, programs
# that start threads hang in such a pair).
set(MEMTRACK_EMULATOR_OPTIONS -L ${MEMTRACK_TARGET_ROOT} -E LD_LIBRARY_PATH=${MEMTRACK_TARGET_ROOT}/lib)
