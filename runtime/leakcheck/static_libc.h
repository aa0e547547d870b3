// What the exit report cannot tell by module in a static program: the functions of static
// glibc that allocate for the C library's own use. Runtime-safe: no malloc, no libc.
#pragma once

namespace memtrack::rt {

// True if `function` (a frame's symbol name, or nullptr) is one of glibc's own allocation
// sites that in a dynamic program lie in ld.so (thread DTVs, the loader's start-up state) and
// are counted there as kept by the C runtime. Thread safe.
bool is_static_libc_internal(const char* function);

}  // namespace memtrack::rt
