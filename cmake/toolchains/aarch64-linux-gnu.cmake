# Cross build for 64-bit ARM with Debian's gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu and
# libc6-dev-arm64-cross. Only the runtime and the programs it is tested on are built
# (MEMTRACK_RUNTIME_ONLY); the tests run them under qemu-user (tests/emulated).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# The emulator and the target's library root, as `qemu-aarch64 -L ROOT PROGRAM` takes them
# (binfmt_misc is not assumed: every run names the emulator).
set(MEMTRACK_EMULATOR qemu-aarch64)
set(MEMTRACK_TARGET_ROOT /usr/aarch64-linux-gnu)
