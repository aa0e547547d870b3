// The module map for the result file: every loaded ELF object (path, load bias, mapped range,
// build-id), plus the ones dlclose'd earlier, so their frames still symbolize.
// Runtime-safe: mmap-backed storage; no malloc.
#pragma once

#include <cstdint>

#include "core/mmap_array.h"

namespace memtrack::rt {

struct ModuleRecord {
  uint64_t load_bias;
  uint64_t start;
  uint64_t end;
  uint16_t build_id_size;
  uint16_t flags;  // core::result::kModuleUnloaded
  uint8_t build_id[64];
  char path[1024];  // NUL-terminated, cut if longer
};

// Appends the loaded modules and then the unloaded ones not loaded again at the same
// address. Returns false if memory for the list cannot be mapped. Takes the loader lock
// (dl_iterate_phdr): call only at exit or with no runtime lock held.
[[nodiscard]] bool collect_modules(core::MmapArray<ModuleRecord>& out);

// Remembers the module `handle` names before dlclose may unmap it, so its frames still
// symbolize (collect_modules lists it as unloaded). Call inside the runtime scope.
void remember_before_dlclose(void* handle);

}  // namespace memtrack::rt
