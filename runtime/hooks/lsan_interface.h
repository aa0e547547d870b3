// The root-region calls of the program (LeakSanitizer's __lsan_*_root_region in
// lsan_interface.cpp, memtrack.h's in annotation_hooks.cpp): leakcheck/root_regions.h's table,
// with a size of 0 ignored and a warning naming `api` for a region that cannot be registered
// or was not. Runtime-safe: no malloc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::rt {

void register_root_region_from(const char* api, uintptr_t begin, size_t size);
void unregister_root_region_from(const char* api, uintptr_t begin, size_t size);

}  // namespace memtrack::rt
