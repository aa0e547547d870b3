// /proc/self/maps, read without malloc, for the leak scan's roots.
// Runtime-safe: a fixed read buffer and mmap-backed output.
#pragma once

#include <cstdint>

#include "core/mmap_array.h"

namespace memtrack::rt {

struct MapRegion {
  uintptr_t start;
  uintptr_t end;
  bool readable;
  bool writable;
  bool file_backed;  // has a path (not anonymous, not [heap]/[stack]/[vdso]...)
  bool special;      // [vvar], [vdso], [vsyscall]: never scanned
  bool heap;         // [heap]
  bool device;       // /dev/... (except /dev/zero): reading may have side effects
};

// Appends every mapping, in address order. Returns false if /proc/self/maps cannot be read
// or memory for the list cannot be mapped.
[[nodiscard]] bool read_proc_maps(core::MmapArray<MapRegion>& out);

}  // namespace memtrack::rt
