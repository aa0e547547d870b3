// memtrack_attach, the entry `memtrack attach` calls in a running process (attach.h). Calls
// libc (open, dladdr, dlopen, dlsym) but never the program's malloc through memtrack: it runs
// before the hooks are in place, inside the runtime scope.
#include "runtime/hooks/attach.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <unistd.h>

#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/hooks/export.h"
#include "runtime/hooks/init.h"
#include "runtime/link/got_patch.h"
#include "runtime/link/real_functions.h"
#include "runtime/live/live_thread.h"
#include "runtime/record/misuse.h"
#include "runtime/runtime.h"

namespace memtrack::rt {
namespace {

// The entry points an attached runtime takes over: the allocation functions. The process's
// entry and exit, descriptors, signals and exec stay the program's own (their state from
// before the attach is unknown, and a detach could not undo a wrapped exit).
constexpr const char* kAttachedSymbols[] = {
    "malloc",
    "free",
    "calloc",
    "realloc",
    "reallocarray",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "valloc",
    "pvalloc",
#if __SIZEOF_SIZE_T__ == 8
    "_Znwm",
    "_Znam",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
#else
    "_Znwj",
    "_Znaj",
    "_ZnwjSt11align_val_t",
    "_ZnajSt11align_val_t",
    "_ZnwjRKSt9nothrow_t",
    "_ZnajRKSt9nothrow_t",
    "_ZnwjSt11align_val_tRKSt9nothrow_t",
    "_ZnajSt11align_val_tRKSt9nothrow_t",
    "_ZdlPvj",
    "_ZdaPvj",
    "_ZdlPvjSt11align_val_t",
    "_ZdaPvjSt11align_val_t",
#endif
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
    // Other allocators' own names (docs/runtime.md, "Other allocators"): in a program linked
    // with one, each hook does its work through the standard ones, that is through that
    // allocator's malloc and free. Their queries (sallocx, nallocx, mi_usable_size,
    // tc_malloc_size) stay the allocator's: every block is still its own.
    "mallocx",
    "rallocx",
    "xallocx",
    "dallocx",
    "sdallocx",
    "tc_malloc",
    "tc_malloc_skip_new_handler",
    "tc_calloc",
    "tc_realloc",
    "tc_memalign",
    "tc_posix_memalign",
    "tc_valloc",
    "tc_pvalloc",
    "tc_free",
    "tc_free_sized",
    "tc_cfree",
    "tc_new",
    "tc_new_nothrow",
    "tc_newarray",
    "tc_newarray_nothrow",
    "tc_new_aligned",
    "tc_new_aligned_nothrow",
    "tc_newarray_aligned",
    "tc_newarray_aligned_nothrow",
    "tc_delete",
    "tc_delete_nothrow",
    "tc_delete_sized",
    "tc_delete_aligned",
    "tc_delete_aligned_nothrow",
    "tc_delete_sized_aligned",
    "tc_deletearray",
    "tc_deletearray_nothrow",
    "tc_deletearray_sized",
    "tc_deletearray_aligned",
    "tc_deletearray_aligned_nothrow",
    "tc_deletearray_sized_aligned",
    "mi_malloc",
    "mi_malloc_small",
    "mi_zalloc",
    "mi_zalloc_small",
    "mi_calloc",
    "mi_mallocn",
    "mi_realloc",
    "mi_reallocn",
    "mi_reallocf",
    "mi_expand",
    "mi_malloc_aligned",
    "mi_zalloc_aligned",
    "mi_calloc_aligned",
    "mi_realloc_aligned",
    "mi_strdup",
    "mi_strndup",
    "mi_new",
    "mi_new_aligned",
    "mi_free",
    "mi_cfree",
    "mi_free_size",
    "mi_free_aligned",
    "mi_free_size_aligned",
};
constexpr size_t kAttachedCount = sizeof(kAttachedSymbols) / sizeof(kAttachedSymbols[0]);

// The hooks, those that release a block first (g_release_count of them), and dlopen's
// stand-in last.
GotTarget g_targets[kAttachedCount + 1];
size_t g_target_count = 0;
size_t g_release_count = 0;

// free, realloc, every operator delete, and the other allocators' names for them.
bool releases(const char* symbol) {
  static constexpr const char* kNames[] = {"free", "realloc", "rallocx", "dallocx", "sdallocx"};
  static constexpr const char* kPrefixes[] = {"_ZdlPv",   "_ZdaPv",    "tc_free",
                                              "tc_cfree", "tc_delete", "tc_realloc",
                                              "mi_free",  "mi_cfree",  "mi_realloc"};
  for (const char* name : kNames) {
    if (strcmp(symbol, name) == 0) return true;
  }
  for (const char* prefix : kPrefixes) {
    if (strncmp(symbol, prefix, strlen(prefix)) == 0) return true;
  }
  return false;
}

using Dlopen = void* (*)(const char*, int);
Dlopen g_real_dlopen = nullptr;

uintptr_t own_address() {
  return reinterpret_cast<uintptr_t>(&g_targets);
}

// Every module's entries for the functions that release blocks first, then the rest: while
// the GOTs are being patched, a thread may allocate through one entry and free through
// another. A block allocated by the real malloc and freed through a hook is only an unknown
// free; one recorded by a hook and freed by the real free would leave a record without a
// block.
long patch_in_order() {
  if (patch_got_entries(g_targets, g_release_count, own_address()) < 0) return -1;
  return patch_got_entries(g_targets, g_target_count, own_address());
}

// A module the program loads while memtrack is attached gets the hooks too.
void* attached_dlopen(const char* file, int mode) {
  void* handle = g_real_dlopen(file, mode);
  if (handle != nullptr && attached()) {
    RuntimeScope scope;
    if (patch_in_order() < 0) {
      diag("warning: too many GOT entries to patch; a module loaded now is not tracked");
    }
  }
  return handle;
}

// __libc_single_threaded when memtrack_attach was called, before memtrack's thread.
bool g_single_threaded_before = false;

// glibc's own copy of __libc_single_threaded (what its malloc reads), and the program's
// copy if the executable has one (a copy relocation): pthread_create writes both.
void set_single_threaded() {
  __libc_single_threaded = 1;
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libc == nullptr) return;
  if (void* own = dlsym(libc, "__libc_single_threaded"); own != nullptr) {
    *static_cast<char*>(own) = 1;
  }
  dlclose(libc);
}

// What the program's allocator holds at the attach, if it is glibc's (mallinfo2 knows
// nothing of another allocator's blocks): 0 when not known.
uint64_t preexisting_heap_bytes() {
  Dl_info info{};
  if (g_real.malloc == nullptr || dladdr(reinterpret_cast<void*>(g_real.malloc), &info) == 0 ||
      info.dli_fname == nullptr || strstr(info.dli_fname, "/libc.so") == nullptr) {
    return 0;
  }
  struct mallinfo2 heap = mallinfo2();
  return heap.uordblks + heap.hblkhd;
}

// memtrack's own definitions: this library is not in the global scope (dlopen'ed local),
// so its own name for malloc is the C library's; dlsym on its own handle finds its hooks.
bool find_hooks() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_address), &info) == 0 || info.dli_fname == nullptr) {
    return false;
  }
  void* self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (self == nullptr) return false;
  g_target_count = 0;
  for (bool release : {true, false}) {
    for (const char* symbol : kAttachedSymbols) {
      void* hook = releases(symbol) == release ? dlsym(self, symbol) : nullptr;
      if (hook != nullptr)
        g_targets[g_target_count++] = GotTarget{symbol, reinterpret_cast<uintptr_t>(hook)};
    }
    if (release) g_release_count = g_target_count;
  }
  dlclose(self);
  g_real_dlopen = reinterpret_cast<Dlopen>(resolve_next("dlopen"));
  if (g_real_dlopen != nullptr) {
    g_targets[g_target_count++] =
        GotTarget{"dlopen", reinterpret_cast<uintptr_t>(&attached_dlopen)};
  }
  return g_target_count > 0;
}

}  // namespace
}  // namespace memtrack::rt

namespace rt = memtrack::rt;

MEMTRACK_EXPORT_C int memtrack_attach(const char* options, const char* log_path, int watcher) {
  using rt::AttachStatus;
  rt::Presence was = rt::presence();
  if (was == rt::Presence::kFromStart) return static_cast<int>(AttachStatus::kTrackedFromStart);
  if (was == rt::Presence::kAttached) return static_cast<int>(AttachStatus::kAlreadyAttached);
  rt::RuntimeScope scope;
  int log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) return static_cast<int>(AttachStatus::kNoLogFile);
  rt::set_diag_fd(log_fd);
  if (!rt::initialize_attached(options) || (was == rt::Presence::kDormant && !rt::find_hooks())) {
    rt::set_diag_fd(-1);
    close(log_fd);
    return static_cast<int>(AttachStatus::kNoRealAllocator);
  }
  // The detach emptied the tables, but a hook still running then may have recorded a block
  // or an error after: this attach starts from nothing.
  rt::g_allocs.clear();
  rt::forget_errors();
  rt::g_stats.peak_live_bytes.store(0, std::memory_order_relaxed);
  rt::g_stats.untracked_allocations.store(0, std::memory_order_relaxed);
  rt::g_stats.untracked_bytes.store(0, std::memory_order_relaxed);
  rt::g_single_threaded_before = __libc_single_threaded != 0;
  rt::g_stats.preexisting_bytes.store(rt::preexisting_heap_bytes(), std::memory_order_relaxed);
  rt::g_stats.preexisting_frees.store(0, std::memory_order_relaxed);
  rt::g_stats.preexisting_freed_bytes.store(0, std::memory_order_relaxed);
  rt::g_stats.attach_ns.store(memtrack::core::sys::monotonic_ns(), std::memory_order_relaxed);
  rt::watch_attach(watcher, log_fd);
  rt::g_presence.store(rt::Presence::kAttached, std::memory_order_release);
  rt::start_attached_services(options);
  if (!rt::runtime_thread_started()) {
    rt::g_presence.store(was, std::memory_order_release);
    rt::set_diag_fd(-1);
    close(log_fd);
    return static_cast<int>(AttachStatus::kNoThread);
  }
  long patched = rt::patch_in_order();
  memtrack::core::FixedText<160> line;
  if (patched < 0) {
    line.str("warning: too many GOT entries to patch; some calls are not tracked");
  } else {
    line.str("attached: ").u64(static_cast<uint64_t>(patched)).str(" GOT entries patched");
  }
  rt::diag(line.data());
  return static_cast<int>(AttachStatus::kAttached);
}

MEMTRACK_EXPORT_C int memtrack_after_detach() {
  using rt::AfterDetachStatus;
  if (rt::attached()) return static_cast<int>(AfterDetachStatus::kStillAttached);
  rt::RuntimeScope scope;
  int saved_errno = errno;
  rt::reap_detached_thread();
  int status = static_cast<int>(AfterDetachStatus::kRestored);
  if (!rt::g_single_threaded_before) {
    status = static_cast<int>(AfterDetachStatus::kWasMultiThreaded);
  } else {
    // memtrack's thread, joined, may still be listed for a moment on its way out.
    int threads = memtrack::core::sys::thread_count();
    for (int i = 0; i < 200 && threads > 1; ++i) {
      usleep(1000);
      threads = memtrack::core::sys::thread_count();
    }
    if (threads == 1) {
      rt::set_single_threaded();
    } else {
      status = static_cast<int>(AfterDetachStatus::kOtherThreads);
    }
  }
  errno = saved_errno;
  return status;
}
