// Every form of C++ operator new and delete, interposed so each block remembers whether it
// came from malloc, new or new[]. Runtime-safe: built without exceptions; a bad_alloc is
// thrown by calling libstdc++'s own std::__throw_bad_alloc, which unwinds through these
// frames (they hold no locks and need no cleanup while the exception passes).
#include <stdlib.h>

#include <new>
#include <type_traits>

#include "runtime/alloc_guard.h"
#include "runtime/diag.h"
#include "runtime/hooks/entry.h"
#include "runtime/hooks/export.h"
#include "runtime/hooks/fast_path.h"
#include "runtime/hooks/program_heap.h"
#include "runtime/link/bootstrap_arena.h"
#include "runtime/link/real_functions.h"
#include "runtime/output/trace_log.h"
#include "runtime/record/forwarded.h"
#include "runtime/record/misuse.h"
#include "runtime/record/record.h"
#include "runtime/record/stack_scrub.h"
#include "runtime/runtime.h"

using memtrack::core::AllocFamily;
using memtrack::core::AllocRecord;
using memtrack::core::result::FreeCall;
namespace rt = memtrack::rt;

// size_t in the mangled names of libstdc++'s operators looked up by name (link/interposed.inc):
// unsigned long ('m') on 64-bit targets, unsigned int ('j') on 32-bit ARM. With the wrong
// letter no nothrow new would be found, and every one would return nullptr.
#if __SIZEOF_SIZE_T__ == 8
static_assert(std::is_same_v<size_t, unsigned long>);
#else
static_assert(std::is_same_v<size_t, unsigned int>);
#endif

namespace {

using NewHandlerGetter = std::new_handler (*)();
using Thrower = void (*)();

// Looks a symbol up once and caches it. Lookups happen on first use because a C program may
// load the C++ runtime later with dlopen.
template <typename Fn>
Fn lookup(std::atomic<Fn>& cache, const char* name) {
  Fn fn = cache.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn>(rt::resolve_default(name));
    cache.store(fn, std::memory_order_release);
  }
  return fn;
}

std::new_handler current_new_handler() {
  static std::atomic<NewHandlerGetter> getter{nullptr};
  NewHandlerGetter fn = lookup(getter, "_ZSt15get_new_handlerv");
  return fn != nullptr ? fn() : nullptr;
}

[[noreturn]] void throw_bad_alloc() {
  static std::atomic<Thrower> thrower{nullptr};
  Thrower fn = lookup(thrower, "_ZSt17__throw_bad_allocv");
  if (fn != nullptr) fn();
  rt::diag("fatal: operator new failed and std::bad_alloc cannot be thrown (no libstdc++)");
  abort();
}

void* allocate(size_t size, size_t alignment) {
  void* p = rt::try_heap_allocate(size, alignment);
  if (p != nullptr) return p;
  if (alignment == 0) return rt::g_real.malloc(size);
  // As libstdc++ does: aligned_alloc wants a size that is a multiple of the alignment.
  size_t rounded = (size + alignment - 1) & ~(alignment - 1);
  return rt::g_real.aligned_alloc(alignment, rounded);
}

const char* new_name(AllocFamily family) {
  return family == AllocFamily::kNewArray ? "new[]" : "new";
}

// The alignment argument of an aligned nothrow new, for the event log.
inline size_t alignment_of(std::align_val_t alignment, const std::nothrow_t&) {
  return static_cast<size_t>(alignment);
}
inline size_t alignment_of(const std::nothrow_t&) {
  return 0;
}

// The throwing forms, with the loop the standard prescribes: retry after each new_handler
// call, throw std::bad_alloc when there is none.
void* new_impl(size_t size, AllocFamily family, size_t alignment, uintptr_t frame,
               uintptr_t caller) {
  rt::enter();  // finishes start-up if needed
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) throw_bad_alloc();
  if (alignment != 0 && alignment < sizeof(void*)) alignment = sizeof(void*);
  size_t request = size == 0 ? 1 : size;
  rt::check_allocation(new_name(family));
  uint32_t stack = 0;
  if (rt::unsampled_call(size, caller)) {  // the sampled mode's lean path (record.h)
    void* p = rt::allocate_unsampled(size, alignment, family, alignment != 0);
    if (p != nullptr) {
      rt::scrub_if_foreign_stack();
      if (rt::tracing()) rt::trace_new(new_name(family), size, alignment, false, p);
      return p;
    }
  } else if (!rt::in_runtime()) {
    // Captured before the block exists (record.h, capture_allocation_stack).
    stack = rt::capture_allocation_stack(frame);
  }
  for (;;) {
    void* p = allocate(request, alignment);
    if (p != nullptr) {
      if (!rt::in_runtime()) {
        rt::record_allocation(p, size, family, alignment != 0, stack);
        rt::scrub_if_foreign_stack();
      } else {
        rt::note_forwarded(p);
      }
      if (rt::tracing()) rt::trace_new(new_name(family), size, alignment, false, p);
      return p;
    }
    std::new_handler handler = current_new_handler();
    if (handler == nullptr) throw_bad_alloc();
    handler();
  }
}

// The nothrow forms call libstdc++'s own nothrow operator (which catches whatever a
// new_handler throws) with the runtime scope set, so the blocks it allocates through our
// hooks are not recorded twice; the result is recorded here with the right family.
template <typename Fn, typename... Args>
void* nothrow_new_impl(rt::RealFunction<Fn>& real_new, uintptr_t caller, size_t size,
                       AllocFamily family, bool aligned, Args... args) {
  rt::enter();  // finishes start-up if needed
  rt::check_allocation(new_name(family));
  Fn real = real_new.get();
  if (real == nullptr) return nullptr;
  uint32_t stack =
      rt::unsampled_call(size, caller) || rt::in_runtime() ? 0 : rt::capture_allocation_stack();
  void* p = nullptr;
  {
    rt::RuntimeScope scope;
    rt::AllowAllocation allowed("the real nothrow operator new");
    p = real(size, args...);
  }
  if (p != nullptr && !rt::in_runtime()) {
    rt::record_allocation(p, size, family, aligned, stack);
    rt::scrub_if_foreign_stack();
  } else if (p != nullptr) {
    rt::note_forwarded(p);
  }
  if (rt::tracing())
    rt::trace_new(new_name(family), size, aligned ? alignment_of(args...) : 0, true, p);
  return p;
}

// Logged before the real free, as free is (malloc_hooks.cpp).
// `caller`: the operator's return address (the delete expression's site).
__attribute__((always_inline)) inline void delete_impl(void* ptr, FreeCall call, bool aligned,
                                                       uintptr_t caller) {
  if (rt::tracing() && !rt::bootstrap_owns(ptr)) {
    rt::trace_free(call == FreeCall::kDeleteArray ? "delete[]" : "delete", ptr);
  }
  if (ptr == nullptr || rt::bootstrap_owns(ptr)) return;
  if (!rt::in_runtime()) {
    rt::drain_deferred_frees();
    if (rt::g_sampling.interval != 0 &&
        rt::free_unsampled(
            ptr, call == FreeCall::kDeleteArray ? AllocFamily::kNewArray : AllocFamily::kNew,
            aligned)) {
      return;
    }
    AllocRecord rec;
    rt::Release release = rt::release_block(ptr, call, aligned, caller, &rec, true);
    if (release == rt::Release::kRejected || release == rt::Release::kFreed) return;
  } else if (!rt::forget_forwarded(ptr) && rt::try_defer_free(ptr, call, aligned, caller)) {
    return;  // a handler's delete of a heap block inside the runtime (program_heap.h)
  }
  rt::free_block(ptr);  // libstdc++'s operator delete is free() for every form
}

// The slow paths of the hooks that have a fast path (fast_path.h), out of line and called
// last, as a tail call, so that their frame and return address are the operator's
// (malloc_hooks.cpp, malloc_slow).
template <AllocFamily family>
__attribute__((noinline)) void* new_slow(size_t size) {
  return new_impl(size, family, 0, MEMTRACK_HOOK_FRAME, MEMTRACK_CALLER);
}
template <FreeCall call>
__attribute__((noinline)) void delete_slow(void* p) {
  delete_impl(p, call, false, MEMTRACK_CALLER);
}

}  // namespace

MEMTRACK_EXPORT void* operator new(size_t size) {
  if (rt::g_sampling.fast_path) {
    if (void* p = rt::try_fast_allocate(size, AllocFamily::kNew, MEMTRACK_CALLER)) return p;
  }
  return new_slow<AllocFamily::kNew>(size);
}
MEMTRACK_EXPORT void* operator new[](size_t size) {
  if (rt::g_sampling.fast_path) {
    if (void* p = rt::try_fast_allocate(size, AllocFamily::kNewArray, MEMTRACK_CALLER)) return p;
  }
  return new_slow<AllocFamily::kNewArray>(size);
}
MEMTRACK_EXPORT void* operator new(size_t size, std::align_val_t al) {
  return new_impl(size, AllocFamily::kNew, static_cast<size_t>(al), MEMTRACK_HOOK_FRAME,
                  MEMTRACK_CALLER);
}
MEMTRACK_EXPORT void* operator new[](size_t size, std::align_val_t al) {
  return new_impl(size, AllocFamily::kNewArray, static_cast<size_t>(al), MEMTRACK_HOOK_FRAME,
                  MEMTRACK_CALLER);
}

MEMTRACK_EXPORT void* operator new(size_t size, const std::nothrow_t& tag) noexcept {
  return nothrow_new_impl(rt::g_lazy_real.nothrow_new, MEMTRACK_CALLER, size, AllocFamily::kNew,
                          false, tag);
}
MEMTRACK_EXPORT void* operator new[](size_t size, const std::nothrow_t& tag) noexcept {
  return nothrow_new_impl(rt::g_lazy_real.nothrow_new_array, MEMTRACK_CALLER, size,
                          AllocFamily::kNewArray, false, tag);
}
MEMTRACK_EXPORT void* operator new(size_t size, std::align_val_t al,
                                   const std::nothrow_t& tag) noexcept {
  return nothrow_new_impl(rt::g_lazy_real.aligned_nothrow_new, MEMTRACK_CALLER, size,
                          AllocFamily::kNew, true, al, tag);
}
MEMTRACK_EXPORT void* operator new[](size_t size, std::align_val_t al,
                                     const std::nothrow_t& tag) noexcept {
  return nothrow_new_impl(rt::g_lazy_real.aligned_nothrow_new_array, MEMTRACK_CALLER, size,
                          AllocFamily::kNewArray, true, al, tag);
}

MEMTRACK_EXPORT void operator delete(void* p) noexcept {
  if (rt::g_sampling.fast_path && rt::try_fast_free(p, AllocFamily::kNew)) return;
  delete_slow<FreeCall::kDelete>(p);
}
MEMTRACK_EXPORT void operator delete[](void* p) noexcept {
  if (rt::g_sampling.fast_path && rt::try_fast_free(p, AllocFamily::kNewArray)) return;
  delete_slow<FreeCall::kDeleteArray>(p);
}
MEMTRACK_EXPORT void operator delete(void* p, size_t) noexcept {
  if (rt::g_sampling.fast_path && rt::try_fast_free(p, AllocFamily::kNew)) return;
  delete_slow<FreeCall::kDelete>(p);
}
MEMTRACK_EXPORT void operator delete[](void* p, size_t) noexcept {
  if (rt::g_sampling.fast_path && rt::try_fast_free(p, AllocFamily::kNewArray)) return;
  delete_slow<FreeCall::kDeleteArray>(p);
}
MEMTRACK_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept {
  if (rt::g_sampling.fast_path && rt::try_fast_free(p, AllocFamily::kNew)) return;
  delete_slow<FreeCall::kDelete>(p);
}
MEMTRACK_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept {
  if (rt::g_sampling.fast_path && rt::try_fast_free(p, AllocFamily::kNewArray)) return;
  delete_slow<FreeCall::kDeleteArray>(p);
}
MEMTRACK_EXPORT void operator delete(void* p, std::align_val_t) noexcept {
  delete_impl(p, FreeCall::kDelete, true, MEMTRACK_CALLER);
}
MEMTRACK_EXPORT void operator delete[](void* p, std::align_val_t) noexcept {
  delete_impl(p, FreeCall::kDeleteArray, true, MEMTRACK_CALLER);
}
MEMTRACK_EXPORT void operator delete(void* p, size_t, std::align_val_t) noexcept {
  delete_impl(p, FreeCall::kDelete, true, MEMTRACK_CALLER);
}
MEMTRACK_EXPORT void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  delete_impl(p, FreeCall::kDeleteArray, true, MEMTRACK_CALLER);
}
MEMTRACK_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  delete_impl(p, FreeCall::kDelete, true, MEMTRACK_CALLER);
}
MEMTRACK_EXPORT void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  delete_impl(p, FreeCall::kDeleteArray, true, MEMTRACK_CALLER);
}

// tcmalloc's (gperftools' tcmalloc.h) and mimalloc's (mimalloc.h) C names of the operators,
// as aliases (malloc_hooks.cpp says why that holds for tcmalloc's and mimalloc's C names).
#if __SIZEOF_SIZE_T__ == 8
#define MEMTRACK_SIZE "m"
#else
#define MEMTRACK_SIZE "j"
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattribute-alias"
#pragma GCC diagnostic ignored "-Wmissing-attributes"
MEMTRACK_EXPORT_C void* tc_new(size_t size) __attribute__((alias("_Znw" MEMTRACK_SIZE)));
MEMTRACK_EXPORT_C void* tc_newarray(size_t size) __attribute__((alias("_Zna" MEMTRACK_SIZE)));
MEMTRACK_EXPORT_C void* tc_new_nothrow(size_t size, const std::nothrow_t& tag) noexcept
    __attribute__((alias("_Znw" MEMTRACK_SIZE "RKSt9nothrow_t")));
MEMTRACK_EXPORT_C void* tc_newarray_nothrow(size_t size, const std::nothrow_t& tag) noexcept
    __attribute__((alias("_Zna" MEMTRACK_SIZE "RKSt9nothrow_t")));
MEMTRACK_EXPORT_C void* tc_new_aligned(size_t size, std::align_val_t al)
    __attribute__((alias("_Znw" MEMTRACK_SIZE "St11align_val_t")));
MEMTRACK_EXPORT_C void* tc_newarray_aligned(size_t size, std::align_val_t al)
    __attribute__((alias("_Zna" MEMTRACK_SIZE "St11align_val_t")));
MEMTRACK_EXPORT_C void* tc_new_aligned_nothrow(size_t size, std::align_val_t al,
                                               const std::nothrow_t& tag) noexcept
    __attribute__((alias("_Znw" MEMTRACK_SIZE "St11align_val_tRKSt9nothrow_t")));
MEMTRACK_EXPORT_C void* tc_newarray_aligned_nothrow(size_t size, std::align_val_t al,
                                                    const std::nothrow_t& tag) noexcept
    __attribute__((alias("_Zna" MEMTRACK_SIZE "St11align_val_tRKSt9nothrow_t")));
MEMTRACK_EXPORT_C void tc_delete(void* p) noexcept __attribute__((alias("_ZdlPv")));
MEMTRACK_EXPORT_C void tc_deletearray(void* p) noexcept __attribute__((alias("_ZdaPv")));
MEMTRACK_EXPORT_C void tc_delete_sized(void* p, size_t size) noexcept
    __attribute__((alias("_ZdlPv" MEMTRACK_SIZE)));
MEMTRACK_EXPORT_C void tc_deletearray_sized(void* p, size_t size) noexcept
    __attribute__((alias("_ZdaPv" MEMTRACK_SIZE)));
MEMTRACK_EXPORT_C void tc_delete_nothrow(void* p, const std::nothrow_t& tag) noexcept
    __attribute__((alias("_ZdlPvRKSt9nothrow_t")));
MEMTRACK_EXPORT_C void tc_deletearray_nothrow(void* p, const std::nothrow_t& tag) noexcept
    __attribute__((alias("_ZdaPvRKSt9nothrow_t")));
MEMTRACK_EXPORT_C void tc_delete_aligned(void* p, std::align_val_t al) noexcept
    __attribute__((alias("_ZdlPvSt11align_val_t")));
MEMTRACK_EXPORT_C void tc_deletearray_aligned(void* p, std::align_val_t al) noexcept
    __attribute__((alias("_ZdaPvSt11align_val_t")));
MEMTRACK_EXPORT_C void tc_delete_sized_aligned(void* p, size_t size, std::align_val_t al) noexcept
    __attribute__((alias("_ZdlPv" MEMTRACK_SIZE "St11align_val_t")));
MEMTRACK_EXPORT_C void tc_deletearray_sized_aligned(void* p, size_t size,
                                                    std::align_val_t al) noexcept
    __attribute__((alias("_ZdaPv" MEMTRACK_SIZE "St11align_val_t")));
MEMTRACK_EXPORT_C void tc_delete_aligned_nothrow(void* p, std::align_val_t al,
                                                 const std::nothrow_t& tag) noexcept
    __attribute__((alias("_ZdlPvSt11align_val_tRKSt9nothrow_t")));
MEMTRACK_EXPORT_C void tc_deletearray_aligned_nothrow(void* p, std::align_val_t al,
                                                      const std::nothrow_t& tag) noexcept
    __attribute__((alias("_ZdaPvSt11align_val_tRKSt9nothrow_t")));
MEMTRACK_EXPORT_C void* mi_new(size_t size) __attribute__((alias("_Znw" MEMTRACK_SIZE)));
MEMTRACK_EXPORT_C void* mi_new_aligned(size_t size, size_t alignment)
    __attribute__((alias("_Znw" MEMTRACK_SIZE "St11align_val_t")));
#pragma GCC diagnostic pop
#undef MEMTRACK_SIZE
