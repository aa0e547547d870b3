// The module map for the result file: every loaded ELF object (path, load bias, mapped range,
// build-id), plus the ones dlclose'd earlier, so their frames still symbolize.
// Runtime-safe: mmap-backed storage; no malloc.
#pragma once

#include <link.h>

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

// dl_iterate_phdr for the runtime: every walk of the loader's list by memtrack goes through
// here, under a lock that fork() takes in its prepare handler (loader_walk_fork_*). glibc
// holds its list lock for the walk and does not reset it in a forked child, so a fork while
// memtrack's thread was walking would leave the child's lock held by a thread the child does
// not have (its next walk, a C++ throw among them, would wait for ever). A signal handler
// that interrupts its own thread's walk walks without waiting, as glibc's recursive lock
// lets it. The prepare handler also takes the lock of the modules the dlclose hook keeps.
int walk_loaded_objects(int (*callback)(dl_phdr_info*, size_t, void*), void* arg);
void loader_walk_fork_prepare();
void loader_walk_fork_parent();
void loader_walk_fork_child();

// Remembers the module `handle` names before dlclose may unmap it, so its frames still
// symbolize (collect_modules lists it as unloaded). Call inside the runtime scope.
void remember_before_dlclose(void* handle);

}  // namespace memtrack::rt
