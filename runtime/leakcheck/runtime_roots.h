// The C and C++ runtime's own roots for the leak scan: the writable data of its libraries
// (libc, the dynamic linker, libstdc++, libgcc_s, libm), their static TLS in every thread, and
// every thread's descriptor (glibc's struct pthread). Blocks the runtime allocated that only
// these reach are its own state (the environment and its search tree, NSS, locale, time zone
// and iconv caches, per-thread strerror, dlerror and key buffers): valgrind frees them with
// __libc_freeres before its check, here they count as the runtime's (reachability.h,
// begin_runtime_roots; docs/runtime.md, "Runtime-internal blocks").
// Runtime-safe: mmap-backed arrays. try_collect calls dl_iterate_phdr, which takes the
// loader's lock: call it before other threads are stopped. Not thread safe; one per scan.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/mmap_array.h"
#include "core/stack_depot.h"
#include "core/sys_linux.h"

struct dl_phdr_info;

namespace memtrack::rt {

// True for the C and C++ runtime's libraries (libc, ld.so, libstdc++, libgcc_s, libm), by
// the file name of `module` (a path).
bool is_system_runtime(const char* module);
// True for the dynamic linker (ld-linux*), by file name.
bool is_dynamic_linker(const char* module);

// True for blocks allocated at `stack` that ld.so, stdio or the C++ runtime allocate for
// themselves and keep for the life of the process (thread TLS, stdio buffers, libstdc++'s
// emergency EH pool), by where they were allocated: the blocks the scan finds held only by
// the runtime's roots are the others. Not the program's leaks; memcheck calls them "still
// reachable".
bool is_runtime_internal(core::StackView stack);

// The address ranges of the runtime's libraries loaded now (libc, ld.so, libstdc++,
// libgcc_s, libm: is_system_runtime), for the sampled mode, which captures the stack of every
// allocation these make themselves so that is_runtime_internal can still tell their blocks
// (record/record.h). Found once at start-up through the loader's list of modules; a runtime
// library loaded later with dlopen is not in it.
struct SystemRuntimeCode {
  static constexpr int kMax = 8;
  core::sys::MemoryRange ranges[kMax] = {};
  int count = 0;
  // The ranges' hull: the program's own code usually lies outside it, and is told apart by
  // these two compares (the sampled mode asks for every allocation it passes by).
  uintptr_t lowest = 0;
  uintptr_t highest = 0;
  bool contains(uintptr_t pc) const {
    if (pc < lowest || pc >= highest) return false;
    for (int i = 0; i < count; ++i) {
      if (pc >= ranges[i].start && pc < ranges[i].end) return true;
    }
    return false;
  }
};
SystemRuntimeCode find_system_runtime_code();

// Where glibc's thread descriptor (struct pthread) keeps the thread's id, which the kernel
// clears when the thread exits (set_tid_address): 0 if unknown (a static program, or a glibc
// without libthread_db's descriptions). Looked up once with dlsym, so call it first before
// threads are stopped.
size_t thread_descriptor_tid_offset();

class RuntimeRoots {
 public:
  // Finds the runtime's libraries among the loaded modules: their writable segments, their
  // code, and where their static TLS lies relative to a thread pointer. Returns false if
  // memory cannot be mapped (the scan then has no runtime roots).
  [[nodiscard]] bool try_collect();

  // Adds, for each thread pointer (the calling thread's and the stopped threads'), the
  // thread's static TLS blocks of the runtime's libraries and its descriptor; then sorts and
  // merges every range. Returns false if memory cannot be mapped.
  [[nodiscard]] bool try_finish(const uintptr_t* thread_pointers, size_t count);

  // The ranges, sorted by start and not overlapping (after try_finish).
  const core::sys::MemoryRange* ranges() const { return ranges_.data(); }
  size_t count() const { return ranges_.size(); }

  // True if `pc` lies in the code of one of the runtime's libraries.
  bool is_runtime_code(uintptr_t pc) const;

 private:
  struct Tls {
    intptr_t offset;  // of the module's block from the thread pointer
    size_t size;
  };
  static constexpr size_t kMaxTls = 8;

  core::MmapArray<core::sys::MemoryRange> ranges_;
  core::MmapArray<core::sys::MemoryRange> code_;
  Tls tls_[kMaxTls] = {};
  size_t tls_count_ = 0;
  size_t descriptor_size_ = 0;  // glibc's struct pthread; 0 if unknown
  bool failed_ = false;

  // dl_iterate_phdr's callback: one module.
  static int collect_module(::dl_phdr_info* info, size_t size, void* data);
};

}  // namespace memtrack::rt
