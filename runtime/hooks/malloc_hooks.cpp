// The C allocation entry points, interposed with LD_PRELOAD. Each keeps glibc's exact
// semantics (return values, errno, realloc(p, 0) frees); blocks come from memtrack's own heap
// where it can serve them, from the real allocator otherwise (program_heap.h).
// Runtime-safe: nothing here allocates itself (an allocation from inside the runtime scope is
// forwarded untouched, and aborts in an allocation-guard build: runtime/alloc_guard.h).
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/text_buffer.h"
#include "runtime/alloc_guard.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/hooks/entry.h"
#include "runtime/hooks/export.h"
#include "runtime/hooks/fast_path.h"
#include "runtime/hooks/program_heap.h"
#include "runtime/link/bootstrap_arena.h"
#include "runtime/link/real_functions.h"
#include "runtime/output/trace_log.h"
#include "runtime/record/forwarded.h"
#include "runtime/record/misuse.h"
#include "runtime/record/profile.h"
#include "runtime/record/record.h"
#include "runtime/record/stack_scrub.h"
#include "runtime/runtime.h"

using memtrack::core::AllocFamily;
using memtrack::core::AllocRecord;
using memtrack::core::result::FreeCall;
namespace rt = memtrack::rt;

namespace {

// The stack of a block about to be allocated, captured before it exists (record.h,
// capture_allocation_stack); 0 when the block will not be recorded: inside the runtime, and
// inside the real fopen/fclose (StdioScope), where glibc's own FILE objects are not the
// program's memory (fd_tracking.h). `frame`: the hook's frame address (MEMTRACK_HOOK_FRAME).
uint32_t stack_before(uintptr_t frame) {
  if (rt::in_runtime() || rt::in_stdio_scope()) return 0;
  return rt::capture_allocation_stack(frame);
}

// Records the block allocated after stack_before (inside the runtime: forwarded.h).
void track(void* p, size_t size, uint32_t stack) {
  if (p == nullptr) return;
  if (rt::in_runtime()) {
    rt::note_forwarded(p);
    return;
  }
  if (rt::in_stdio_scope()) {
    rt::note_stdio_block(p, size);
    return;
  }
  rt::record_allocation(p, size, AllocFamily::kMalloc, false, stack);
  rt::scrub_if_foreign_stack();
}

// Hides a pointer the hook still needs across the stack capture, so no frame of the
// unwinder saves it (the value it keeps is no address); reveal() undoes it.
constexpr uintptr_t kHiddenMask = uintptr_t{0xa5a5} << (sizeof(uintptr_t) * 8 - 16);
uintptr_t hide(void* p) {
  uintptr_t hidden = reinterpret_cast<uintptr_t>(p) ^ kHiddenMask;
  __asm__ volatile("" : "+r"(hidden));
  return hidden;
}
void* reveal(uintptr_t hidden) {
  __asm__ volatile("" : "+r"(hidden));
  return reinterpret_cast<void*>(hidden ^ kHiddenMask);
}

// An allocation call of the program for the event log (not one glibc makes inside fopen).
bool logged() {
  return rt::tracing() && !rt::in_stdio_scope();
}

// malloc's work but the fast path's, for malloc and realloc(nullptr, size). `frame` and
// `caller`: the hook's (MEMTRACK_HOOK_FRAME, MEMTRACK_CALLER).
__attribute__((always_inline)) inline void* malloc_impl(size_t size, uintptr_t frame,
                                                        uintptr_t caller) {
  if (rt::must_bootstrap()) return rt::bootstrap_alloc(size, 16);
  rt::check_allocation("malloc");
  uint32_t stack = 0;
  void* p = nullptr;
  if (rt::unsampled_call(size, caller)) {
    p = rt::allocate_unsampled(size, 0, AllocFamily::kMalloc, false);
    if (p != nullptr) {
      rt::scrub_if_foreign_stack();
      return p;
    }
  } else {
    stack = stack_before(frame);
    p = rt::try_heap_allocate(size, 0);
  }
  if (p == nullptr) p = rt::g_real.malloc(size);
  track(p, size, stack);
  return p;
}

// The aligned allocation functions: the heap for a power-of-two alignment it serves, the
// real function (its own argument checks and rounding) for anything else.
template <typename Real>
void* aligned_impl(size_t alignment, size_t size, Real real) {
  void* p = nullptr;
  if (alignment != 0 && (alignment & (alignment - 1)) == 0) {
    p = rt::try_heap_allocate(size, alignment);
  }
  return p != nullptr ? p : real();
}

// realloc of a bootstrap block: copy into a real block; the arena block is simply abandoned.
void* realloc_from_bootstrap(void* old, size_t size) {
  if (size == 0) return nullptr;  // glibc frees and returns NULL for realloc(p, 0)
  void* fresh = malloc(size);
  if (fresh != nullptr) {
    size_t old_size = rt::bootstrap_size(old);
    memtrack::core::copy_bytes(fresh, old, old_size < size ? old_size : size);
  }
  return fresh;
}

// The hooks' slow paths: all they do but the sampled mode's fast path (fast_path.h). Out of
// line, so that the fast path saves no register for them, and called last in the hook, as a
// tail call: their return address and frame are then the hook's own, which the stack capture
// and the misuse reports take (MEMTRACK_CALLER, MEMTRACK_HOOK_FRAME). The hook computes
// neither itself, so that in the full mode it needs no frame: a test and a jump
// (runtime.hook_tail_calls checks that the compiler made them jumps).
__attribute__((noinline)) void* malloc_slow(size_t size) {
  void* p = malloc_impl(size, MEMTRACK_HOOK_FRAME, MEMTRACK_CALLER);
  if (logged()) rt::trace_alloc("malloc", size, p);
  return p;
}

__attribute__((noinline)) void* calloc_slow(size_t count, size_t size) {
  if (rt::must_bootstrap()) {
    size_t total = 0;
    if (__builtin_mul_overflow(count, size, &total)) {
      errno = ENOMEM;
      return nullptr;
    }
    return rt::bootstrap_alloc(total, 16);  // arena memory is zeroed
  }
  rt::check_allocation("calloc");
  size_t total = 0;
  bool overflow = __builtin_mul_overflow(count, size, &total);
  uint32_t stack =
      rt::unsampled_call(total, MEMTRACK_CALLER) ? 0 : stack_before(MEMTRACK_HOOK_FRAME);
  void* p = nullptr;
  if (!overflow) p = rt::try_heap_allocate_zeroed(total);
  if (p == nullptr) p = rt::g_real.calloc(count, size);  // the real calloc checks for overflow
  track(p, count * size, stack);
  if (logged()) rt::trace_alloc2("calloc", count, size, p);
  return p;
}

// The event is logged before the real free: once the block is freed, another thread may be
// given the address, and its line must come after ours.
__attribute__((noinline)) void free_slow(void* ptr) {
  if (ptr == nullptr) {
    if (logged()) rt::trace_free("free", nullptr);
    return;
  }
  if (rt::bootstrap_owns(ptr)) return;
  if (rt::g_real.free == nullptr && rt::must_bootstrap()) return;  // cannot happen after start-up
  if (!rt::in_runtime()) {
    rt::drain_deferred_frees();
    if (rt::g_sampling.interval != 0 && rt::free_unsampled(ptr, AllocFamily::kMalloc, false)) {
      if (rt::tracing()) rt::trace_free("free", ptr);
      return;
    }
    AllocRecord rec;
    rt::Release release =
        rt::release_block(ptr, FreeCall::kFree, false, MEMTRACK_CALLER, &rec, true);
    bool tracked = release == rt::Release::kTracked || release == rt::Release::kFreed;
    // Inside fclose only the blocks the program's calls made (the stdio buffer) are events.
    if (rt::tracing() && (!rt::in_stdio_scope() || tracked)) rt::trace_free("free", ptr);
    if (release == rt::Release::kRejected || release == rt::Release::kFreed) return;
  } else if (!rt::forget_forwarded(ptr) &&
             rt::try_defer_free(ptr, FreeCall::kFree, false, MEMTRACK_CALLER)) {
    return;  // a handler's free of a heap block inside the runtime (program_heap.h)
  }
  rt::free_block(ptr);
}

}  // namespace

MEMTRACK_EXPORT_C void* malloc(size_t size) {
  if (rt::g_sampling.fast_path) {
    if (void* p = rt::try_fast_allocate(size, AllocFamily::kMalloc, MEMTRACK_CALLER)) return p;
  }
  return malloc_slow(size);
}

MEMTRACK_EXPORT_C void* calloc(size_t count, size_t size) {
  size_t total = 0;
  if (rt::g_sampling.fast_path && !__builtin_mul_overflow(count, size, &total)) {
    if (void* p = rt::try_fast_allocate(total, AllocFamily::kMalloc, MEMTRACK_CALLER)) {
      memset(p, 0, total);
      return p;
    }
  }
  return calloc_slow(count, size);
}

MEMTRACK_EXPORT_C void free(void* ptr) {
  if (rt::g_sampling.fast_path && rt::try_fast_free(ptr, AllocFamily::kMalloc)) return;
  free_slow(ptr);
}

// The record is removed before the real realloc runs: once it returns, another thread may
// receive the old address from malloc, and its record must not be erased by us afterwards.
// With several threads, the line of a realloc that moved the block may follow a line of
// another thread that was already given the old address: the real realloc frees it before
// the result is known.
MEMTRACK_EXPORT_C void* realloc(void* ptr, size_t size) {
  if (ptr == nullptr) {
    void* p = malloc_impl(size, MEMTRACK_HOOK_FRAME, MEMTRACK_CALLER);
    if (logged()) rt::trace_realloc(nullptr, size, p);
    return p;
  }
  if (rt::bootstrap_owns(ptr)) return realloc_from_bootstrap(ptr, size);
  if (rt::must_bootstrap()) {  // a non-arena pointer cannot exist before the real malloc is known
    errno = ENOMEM;
    return nullptr;
  }
  if (rt::in_runtime()) {
    rt::check_allocation("realloc");
    void* p = rt::reallocate_block(ptr, size, MEMTRACK_CALLER);
    if (p != ptr && (p != nullptr || size == 0)) {
      rt::forget_forwarded(ptr);
      rt::note_forwarded(p);
    }
    return p;
  }
  rt::drain_deferred_frees();
  // A block that stays where it is keeps its address: hidden during the capture.
  uintptr_t hidden = hide(ptr);
  uint32_t stack =
      rt::unsampled_call(size, MEMTRACK_CALLER) ? 0 : stack_before(MEMTRACK_HOOK_FRAME);
  ptr = reveal(hidden);
  AllocRecord old;
  rt::ProfileReallocScope realloc_scope;  // the heap profile records the free as a realloc's
  rt::Release release = rt::release_block(ptr, FreeCall::kRealloc, false, MEMTRACK_CALLER, &old);
  if (release == rt::Release::kRejected) {  // realloc of a freed or foreign pointer
    if (logged()) rt::trace_realloc(ptr, size, nullptr);
    errno = ENOMEM;
    return nullptr;
  }
  bool known = release == rt::Release::kTracked;
  void* p = rt::reallocate_block(ptr, size, MEMTRACK_CALLER);
  if (p != nullptr) {
    track(p, size, stack);
  } else if (size != 0 && known) {
    int saved_errno = errno;
    rt::restore_record(old);  // failed: the old block is untouched and still live
    errno = saved_errno;
  }
  if (logged()) rt::trace_realloc(ptr, size, p);
  return p;
}

MEMTRACK_EXPORT_C void* reallocarray(void* ptr, size_t count, size_t size) {
  size_t total = 0;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(ptr, total);
}

MEMTRACK_EXPORT_C int posix_memalign(void** out, size_t alignment, size_t size) {
  if (rt::must_bootstrap()) {
    void* p = rt::bootstrap_alloc(size, alignment);
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
  }
  rt::check_allocation("posix_memalign");
  uint32_t stack =
      rt::unsampled_call(size, MEMTRACK_CALLER) ? 0 : stack_before(MEMTRACK_HOOK_FRAME);
  int rc = 0;
  void* p = nullptr;
  // A power of two and a multiple of sizeof(void*), or the real one's EINVAL.
  if (alignment % sizeof(void*) == 0 && (alignment & (alignment - 1)) == 0) {
    p = rt::try_heap_allocate(size, alignment);
  }
  if (p != nullptr) {
    *out = p;
  } else {
    rc = rt::g_real.posix_memalign(out, alignment, size);
  }
  if (rc == 0) track(*out, size, stack);
  if (logged()) rt::trace_posix_memalign(alignment, size, rc == 0 ? *out : nullptr, rc);
  return rc;
}

MEMTRACK_EXPORT_C void* aligned_alloc(size_t alignment, size_t size) {
  if (rt::must_bootstrap()) return rt::bootstrap_alloc(size, alignment);
  rt::check_allocation("aligned_alloc");
  uint32_t stack =
      rt::unsampled_call(size, MEMTRACK_CALLER) ? 0 : stack_before(MEMTRACK_HOOK_FRAME);
  void* p =
      aligned_impl(alignment, size, [&] { return rt::g_real.aligned_alloc(alignment, size); });
  track(p, size, stack);
  if (logged()) rt::trace_alloc2("aligned_alloc", alignment, size, p);
  return p;
}

MEMTRACK_EXPORT_C void* memalign(size_t alignment, size_t size) {
  if (rt::must_bootstrap()) return rt::bootstrap_alloc(size, alignment);
  rt::check_allocation("memalign");
  uint32_t stack =
      rt::unsampled_call(size, MEMTRACK_CALLER) ? 0 : stack_before(MEMTRACK_HOOK_FRAME);
  void* p = aligned_impl(alignment, size, [&] { return rt::g_real.memalign(alignment, size); });
  track(p, size, stack);
  if (logged()) rt::trace_alloc2("memalign", alignment, size, p);
  return p;
}

MEMTRACK_EXPORT_C void* valloc(size_t size) {
  if (rt::must_bootstrap()) return rt::bootstrap_alloc(size, 4096);
  rt::check_allocation("valloc");
  uint32_t stack =
      rt::unsampled_call(size, MEMTRACK_CALLER) ? 0 : stack_before(MEMTRACK_HOOK_FRAME);
  void* p = aligned_impl(static_cast<size_t>(getpagesize()), size,
                         [&] { return rt::g_real.valloc(size); });
  track(p, size, stack);
  if (logged()) rt::trace_alloc("valloc", size, p);
  return p;
}

// pvalloc hands out whole pages; the block is recorded with the rounded size, which is what
// the program may use (LeakSanitizer counts it the same way).
MEMTRACK_EXPORT_C void* pvalloc(size_t size) {
  size_t page = static_cast<size_t>(getpagesize());
  size_t rounded = size == 0 ? page : (size + page - 1) & ~(page - 1);
  if (rt::must_bootstrap()) return rt::bootstrap_alloc(rounded, page);
  rt::check_allocation("pvalloc");
  uint32_t stack =
      rt::unsampled_call(rounded, MEMTRACK_CALLER) ? 0 : stack_before(MEMTRACK_HOOK_FRAME);
  void* p = aligned_impl(page, rounded, [&] { return rt::g_real.pvalloc(size); });
  track(p, rounded, stack);
  if (logged()) rt::trace_alloc("pvalloc", size, p);
  return p;
}

MEMTRACK_EXPORT_C size_t malloc_usable_size(void* ptr) {
  if (ptr == nullptr) return 0;
  if (rt::bootstrap_owns(ptr)) return rt::bootstrap_size(ptr);
  if (rt::must_bootstrap()) return 0;
  return rt::block_usable_size(ptr);
}

namespace {

// glibc's counts plus memtrack's heap, whose segments are memory the allocator has from the
// system (arena) and whose recorded blocks are in use (uordblks), the rest free (fordblks),
// so a program that watches its heap through mallinfo2 still sees its small blocks.
void add_heap_usage(size_t& arena, size_t& in_use, size_t& free_bytes) {
  rt::HeapUsage usage = rt::heap_usage();
  arena += usage.segment_bytes;
  in_use += usage.live_bytes;
  free_bytes += usage.segment_bytes > usage.live_bytes ? usage.segment_bytes - usage.live_bytes : 0;
}

}  // namespace

MEMTRACK_EXPORT_C struct mallinfo2 mallinfo2() {
  struct mallinfo2 info = {};
  if (auto real = rt::g_lazy_real.mallinfo2.get(); real != nullptr) info = real();
  if (!rt::must_bootstrap()) add_heap_usage(info.arena, info.uordblks, info.fordblks);
  return info;
}

// glibc's trim of its own heaps, then the memory of every free chunk of memtrack's heap goes
// back to the system too. 1 if either gave any back, as glibc's.
MEMTRACK_EXPORT_C int malloc_trim(size_t pad) {
  int released = 0;
  if (auto real = rt::g_lazy_real.malloc_trim.get(); real != nullptr) released = real(pad);
  if (!rt::must_bootstrap() && rt::trim_heap()) released = 1;
  return released;
}

// The older form, with int fields (glibc deprecates it; they wrap past 2 GiB as glibc's do).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
MEMTRACK_EXPORT_C struct mallinfo mallinfo() {
  struct mallinfo info = {};
  if (auto real = rt::g_lazy_real.mallinfo.get(); real != nullptr) info = real();
  if (rt::must_bootstrap()) return info;
  size_t arena = 0;
  size_t in_use = 0;
  size_t free_bytes = 0;
  add_heap_usage(arena, in_use, free_bytes);
  info.arena = static_cast<int>(static_cast<unsigned>(info.arena) + arena);
  info.uordblks = static_cast<int>(static_cast<unsigned>(info.uordblks) + in_use);
  info.fordblks = static_cast<int>(static_cast<unsigned>(info.fordblks) + free_bytes);
  return info;
}
#pragma GCC diagnostic pop

// The aliases below leave out the attributes glibc declares on its functions (malloc,
// alloc_size, nothrow, ...): they tell a compiler about calls, and the callers of these see
// hook_aliases.h or their library's header instead.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-attributes"

// The hooks under the runtime's own names (hook_aliases.h).
namespace memtrack::rt::hook {
void* malloc(size_t size) __attribute__((alias("malloc")));
void* calloc(size_t count, size_t size) __attribute__((alias("calloc")));
void* realloc(void* ptr, size_t size) __attribute__((alias("realloc")));
void free(void* ptr) __attribute__((alias("free")));
void* aligned_alloc(size_t alignment, size_t size) __attribute__((alias("aligned_alloc")));
size_t malloc_usable_size(void* ptr) __attribute__((alias("malloc_usable_size")));
}  // namespace memtrack::rt::hook

// tcmalloc's (gperftools' tcmalloc.h) and mimalloc's (mimalloc.h) names of the same
// functions: with the library loaded, a program that calls them by these names reaches the
// hooks as if it had called malloc, free, ... (their blocks are the same family: both
// libraries also define malloc and free, which they serve alike). The names with other
// arguments or work are in foreign_hooks.cpp, C++'s in new_delete_hooks.cpp. A name whose
// function takes an argument more (tc_free_sized's size) is an alias all the same: the
// argument is passed in a register the hook never reads, and the caller clears it up.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattribute-alias"
MEMTRACK_EXPORT_C void* tc_malloc(size_t size) __attribute__((alias("malloc")));
MEMTRACK_EXPORT_C void* tc_malloc_skip_new_handler(size_t size) __attribute__((alias("malloc")));
MEMTRACK_EXPORT_C void tc_free(void* ptr) __attribute__((alias("free")));
MEMTRACK_EXPORT_C void tc_free_sized(void* ptr, size_t size) __attribute__((alias("free")));
MEMTRACK_EXPORT_C void tc_cfree(void* ptr) __attribute__((alias("free")));
MEMTRACK_EXPORT_C void* tc_realloc(void* ptr, size_t size) __attribute__((alias("realloc")));
MEMTRACK_EXPORT_C void* tc_calloc(size_t count, size_t size) __attribute__((alias("calloc")));
MEMTRACK_EXPORT_C void* tc_memalign(size_t alignment, size_t size)
    __attribute__((alias("memalign")));
MEMTRACK_EXPORT_C int tc_posix_memalign(void** out, size_t alignment, size_t size)
    __attribute__((alias("posix_memalign")));
MEMTRACK_EXPORT_C void* tc_valloc(size_t size) __attribute__((alias("valloc")));
MEMTRACK_EXPORT_C void* tc_pvalloc(size_t size) __attribute__((alias("pvalloc")));
MEMTRACK_EXPORT_C size_t tc_malloc_size(void* ptr) __attribute__((alias("malloc_usable_size")));
MEMTRACK_EXPORT_C void* mi_malloc(size_t size) __attribute__((alias("malloc")));
MEMTRACK_EXPORT_C void* mi_malloc_small(size_t size) __attribute__((alias("malloc")));
MEMTRACK_EXPORT_C void* mi_calloc(size_t count, size_t size) __attribute__((alias("calloc")));
MEMTRACK_EXPORT_C void* mi_realloc(void* ptr, size_t size) __attribute__((alias("realloc")));
MEMTRACK_EXPORT_C void mi_free(void* ptr) __attribute__((alias("free")));
MEMTRACK_EXPORT_C void mi_cfree(void* ptr) __attribute__((alias("free")));
MEMTRACK_EXPORT_C size_t mi_usable_size(void* ptr) __attribute__((alias("malloc_usable_size")));
#pragma GCC diagnostic pop
#pragma GCC diagnostic pop
