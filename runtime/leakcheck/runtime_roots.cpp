// The C and C++ runtime's own roots (runtime_roots.h). Calls libc (dl_iterate_phdr, dlsym)
// but never malloc for itself.
#include "runtime/leakcheck/runtime_roots.h"

#include <dlfcn.h>
#include <link.h>

#include "runtime/alloc_guard.h"
#include "runtime/leakcheck/static_libc.h"
#include "runtime/link/link_mode.h"
#include "runtime/unwind/elf_symbols.h"

namespace memtrack::rt {
namespace {

const char* base_name(const char* path) {
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p) {
    if (*p == '/') base = p + 1;
  }
  return base;
}

bool starts_with(const char* s, const char* prefix) {
  while (*prefix != '\0') {
    if (*s++ != *prefix++) return false;
  }
  return true;
}

// A static TLS block lies within this distance of the thread pointer; a module's block
// further away was allocated when its module was loaded (dynamic TLS, a block of its own).
constexpr intptr_t kStaticTlsReach = intptr_t{1} << 20;

// glibc tells debuggers the size of its thread descriptor (for libthread_db); 0 if unknown.
size_t thread_descriptor_size() {
  static size_t cached = 1;  // 1: not looked up yet
  if (cached != 1) return cached;
  size_t size = 0;
  if (link_mode() == LinkMode::kPreload) {
    AllowAllocation allowed("dlsym");  // a failed lookup allocates its message
    const auto* value =
        static_cast<const uint32_t*>(dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread"));
    if (value != nullptr && *value < 65536) size = *value;
  }
  cached = size;
  return size;
}

}  // namespace

size_t thread_descriptor_tid_offset() {
  static size_t cached = 1;  // 1: not looked up yet (no real offset is odd)
  if (cached != 1) return cached;
  size_t offset = 0;
  if (link_mode() == LinkMode::kPreload) {
    AllowAllocation allowed("dlsym");  // a failed lookup allocates its message
    // libthread_db's description of the field: {bits, count, offset}.
    const auto* field = static_cast<const uint32_t*>(dlsym(RTLD_DEFAULT, "_thread_db_pthread_tid"));
    if (field != nullptr && field[0] == 32 && field[1] == 1 && field[2] < 65536 &&
        field[2] % 4 == 0) {
      offset = field[2];
    }
  }
  cached = offset;
  return offset;
}

bool is_dynamic_linker(const char* module) {
  return module != nullptr && starts_with(base_name(module), "ld-linux");
}

bool is_system_runtime(const char* module) {
  if (module == nullptr) return false;
  const char* base = base_name(module);
  return starts_with(base, "libc.so") || starts_with(base, "ld-linux") ||
         starts_with(base, "libstdc++.so") || starts_with(base, "libgcc_s.so") ||
         starts_with(base, "libm.so");
}

SystemRuntimeCode find_system_runtime_code() {
  SystemRuntimeCode code;
  // The list of modules, from our own entry back to its head and forward from there.
  dl_find_object self{};
  if (_dl_find_object(reinterpret_cast<void*>(&find_system_runtime_code), &self) != 0 ||
      self.dlfo_link_map == nullptr) {
    return code;
  }
  const link_map* map = self.dlfo_link_map;
  while (map->l_prev != nullptr) map = map->l_prev;
  for (; map != nullptr && code.count < SystemRuntimeCode::kMax; map = map->l_next) {
    if (map->l_name == nullptr || !is_system_runtime(map->l_name) || map->l_ld == nullptr) {
      continue;
    }
    dl_find_object object{};
    if (_dl_find_object(reinterpret_cast<void*>(map->l_ld), &object) != 0) continue;
    core::sys::MemoryRange range{reinterpret_cast<uintptr_t>(object.dlfo_map_start),
                                 reinterpret_cast<uintptr_t>(object.dlfo_map_end)};
    if (code.count == 0 || range.start < code.lowest) code.lowest = range.start;
    if (code.count == 0 || range.end > code.highest) code.highest = range.end;
    code.ranges[code.count++] = range;
  }
  return code;
}

bool is_runtime_internal(core::StackView stack) {
  if (stack.frames == nullptr || stack.size == 0) return false;
  SymbolInfo top = describe_address(stack.frames[0], true);
  if (is_dynamic_linker(top.module)) return true;  // TLS, DTV, dlopen state
  if (top.function != nullptr &&
      core::strings_equal(top.function, core::string_length(top.function), "_IO_file_doallocate")) {
    return true;  // stdio buffers
  }
  if (link_mode() != LinkMode::kPreload && is_static_libc_internal(top.function)) return true;
  for (uint32_t i = 0; i < stack.size; ++i) {
    if (!is_system_runtime(describe_address(stack.frames[i], true).module)) return false;
  }
  return true;  // allocated by runtime start-up code with no program frame on the stack
}

int RuntimeRoots::collect_module(::dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* roots = static_cast<RuntimeRoots*>(data);
  if (!is_system_runtime(info->dlpi_name)) return 0;
  const uintptr_t thread_pointer = reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && ph.p_memsz > 0) {
      core::sys::MemoryRange range{info->dlpi_addr + ph.p_vaddr,
                                   info->dlpi_addr + ph.p_vaddr + ph.p_memsz};
      auto& list = (ph.p_flags & PF_X) != 0 ? roots->code_ : roots->ranges_;
      if ((ph.p_flags & (PF_X | PF_W)) != 0 && !list.try_push_back(range)) roots->failed_ = true;
    } else if (ph.p_type == PT_TLS && info->dlpi_tls_data != nullptr &&
               roots->tls_count_ < kMaxTls) {
      intptr_t offset =
          static_cast<intptr_t>(reinterpret_cast<uintptr_t>(info->dlpi_tls_data) - thread_pointer);
      if (offset > -kStaticTlsReach && offset < kStaticTlsReach) {
        roots->tls_[roots->tls_count_++] = Tls{offset, ph.p_memsz};
      }
    }
  }
  return 0;
}

bool RuntimeRoots::try_collect() {
  descriptor_size_ = thread_descriptor_size();
  dl_iterate_phdr(collect_module, this);
  return !failed_;
}

bool RuntimeRoots::try_finish(const uintptr_t* thread_pointers, size_t count) {
  for (size_t t = 0; t < count && !failed_; ++t) {
    const uintptr_t tp = thread_pointers[t];
    if (tp == 0) continue;
    for (size_t i = 0; i < tls_count_; ++i) {
      uintptr_t start = tp + static_cast<uintptr_t>(tls_[i].offset);
      if (!ranges_.try_push_back(core::sys::MemoryRange{start, start + tls_[i].size})) {
        failed_ = true;
      }
    }
    if (descriptor_size_ == 0) continue;
#if defined(__x86_64__)
    // TLS variant II: the descriptor starts at the thread pointer.
    core::sys::MemoryRange descriptor{tp, tp + descriptor_size_};
#else
    // TLS variant I (ARM): the descriptor lies just below the thread pointer.
    core::sys::MemoryRange descriptor{tp - descriptor_size_, tp};
#endif
    if (!ranges_.try_push_back(descriptor)) failed_ = true;
  }
  if (failed_) return false;
  auto by_start = [](const core::sys::MemoryRange& a, const core::sys::MemoryRange& b) {
    return a.start < b.start;
  };
  core::heap_sort(ranges_.data(), ranges_.size(), by_start);
  core::heap_sort(code_.data(), code_.size(), by_start);
  // Merge overlapping and adjacent ranges, so each word is scanned once.
  size_t kept = 0;
  for (size_t i = 0; i < ranges_.size(); ++i) {
    if (kept > 0 && ranges_[i].start <= ranges_[kept - 1].end) {
      if (ranges_[i].end > ranges_[kept - 1].end) ranges_[kept - 1].end = ranges_[i].end;
    } else {
      ranges_[kept++] = ranges_[i];
    }
  }
  return ranges_.try_resize(kept);
}

bool RuntimeRoots::is_runtime_code(uintptr_t pc) const {
  size_t i = core::first_after(code_.data(), code_.size(), pc,
                               [](const core::sys::MemoryRange& r) { return r.start; });
  return i > 0 && pc < code_[i - 1].end;
}

}  // namespace memtrack::rt
