// The program's blocks between memtrack's own heap and the real allocator (program_heap.h).
// Calls libc (pthread keys, getrlimit, memcpy, memset) but never malloc.
#include "runtime/hooks/program_heap.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>

#include "core/result_names.h"
#include "runtime/link/real_functions.h"
#include "runtime/output/trace_log.h"
#include "runtime/record/heap_check.h"
#include "runtime/record/misuse.h"
#include "runtime/record/record.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {
namespace {

pthread_key_t g_heap_key;
bool g_have_heap_key = false;

core::SmallHeap& heap() {
  return g_allocs.heap();
}

// At a thread's exit (pthread key destructor): its cached chunks go back for other threads.
void retire_heap_thread(void*) {
  drain_deferred_frees();
  RuntimeScope scope;
  heap().retire_thread(thread_heap());
}

// When a thread first changes the heap (allocates, frees, records): retire_heap_thread must
// run when it exits, before its TLS block, which the heap's list of threads points to, is
// freed or handed to a new thread. The key is made at start-up, among the process's first,
// so pthread_setspecific stores into the thread descriptor (keys past the first 32 would
// make it allocate).
void note_heap_thread(core::HeapThread& t) {
  if (g_have_heap_key) pthread_setspecific(g_heap_key, &t);
}

}  // namespace

void init_program_heap() {
  if (g_flags.glibc_malloc || MEMTRACK_ATTACH_RUNTIME) return;
  // An address-space limit (ulimit -v) would be eaten by the heap's reservation.
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) return;
  g_have_heap_key = pthread_key_create(&g_heap_key, retire_heap_thread) == 0;
  if (!g_have_heap_key) return;  // threads could not give their lists back
  heap().set_thread_registered_callback(note_heap_thread);
  if (!heap().try_init()) return;
}

void* try_heap_allocate(size_t size, size_t alignment) {
  // Inside the runtime (its own work, or a signal handler that interrupted it, perhaps in
  // the middle of this thread's heap lists): the real allocator.
  if (in_runtime()) return nullptr;
  // Out of the way when the check is off (one load and a branch not taken).
  if (__builtin_expect(g_heap_check.interval != 0, 0)) {
    if (void* guarded = try_guarded_allocate(size, alignment)) return guarded;
  }
  // Every chunk of the heap then holds a block with redzones: none is handed out without.
  if (__builtin_expect(g_heap_check.full, 0)) return try_redzoned_allocate(size, alignment);
  if (!heap().enabled()) return nullptr;
  RuntimeScope scope;
  // errno stays as it was (try_allocate): if the heap cannot serve, glibc serves the call
  // now, and sets errno only if it fails too.
  return heap().try_allocate(size, alignment, thread_heap());
}

void* try_heap_allocate_zeroed(size_t size) {
  if (in_runtime()) return nullptr;
  // A large block with redzones comes from the real calloc: its fresh pages stay untouched.
  if (__builtin_expect(g_heap_check.full, 0)) return try_redzoned_allocate_zeroed(size);
  void* p = try_heap_allocate(size, 0);
  if (p != nullptr) memset(p, 0, size);
  return p;
}

bool heap_owns(const void* ptr) {
  return heap().owns(ptr);
}

void free_block(void* ptr) {
  if (guarded_owns(ptr)) {
    free_guarded(ptr);  // never the real allocator's, even when it is no live block
    return;
  }
  if (g_heap_check.full) {
    if (!free_redzoned(ptr)) g_real.free(ptr);
    return;
  }
  if (!heap().owns(ptr)) {
    g_real.free(ptr);
    return;
  }
  if (in_runtime()) {
    // Possibly a signal handler that interrupted this thread's own heap calls: the central
    // list, if its lock is free (else the chunk stays allocated: lost, never corrupted).
    heap().try_deallocate_remote(ptr);
    return;
  }
  RuntimeScope scope;
  heap().try_deallocate(ptr, thread_heap());
}

namespace {

// The old block's free after a realloc moved or freed it: a signal handler's inside the
// runtime is kept for later (try_defer_free).
void free_reallocated(void* ptr, uintptr_t caller) {
  if (!in_runtime() || !try_defer_free(ptr, core::result::FreeCall::kRealloc, false, caller)) {
    free_block(ptr);
  }
}

// realloc of a checked block (`live`: it is one, of `usable` bytes): always a new block, as
// memcheck's, so a stale pointer to the old one faults (a guard page's: the pool's pages fit
// one block each) or writes into a quarantined block (redzones).
void* reallocate_checked(void* ptr, size_t size, uintptr_t caller, bool live, size_t usable) {
  if (!live) {
    errno = ENOMEM;  // not a live block (the misuse check let it through): nothing to copy
    return nullptr;
  }
  if (size == 0) {
    free_reallocated(ptr, caller);
    return nullptr;
  }
  void* fresh = try_heap_allocate(size, 0);
  if (fresh == nullptr) fresh = g_real.malloc(size);
  if (fresh == nullptr) return nullptr;
  memcpy(fresh, ptr, usable < size ? usable : size);
  free_reallocated(ptr, caller);
  return fresh;
}

}  // namespace

void* reallocate_block(void* ptr, size_t size, uintptr_t caller) {
  if (guarded_owns(ptr)) {
    bool live = g_guard_pool.live_block(reinterpret_cast<uintptr_t>(ptr)) != nullptr;
    return reallocate_checked(ptr, size, caller, live, guarded_usable_size(ptr));
  }
  if (g_heap_check.full) {
    size_t usable = 0;
    Redzones found = redzoned_block(ptr, &usable);
    if (found == Redzones::kUnknown) {  // a signal handler's, which cannot look it up now
      errno = ENOMEM;
      return nullptr;
    }
    if (found == Redzones::kLive || heap().owns(ptr)) {
      return reallocate_checked(ptr, size, caller, found == Redzones::kLive, usable);
    }
  }
  if (!heap().owns(ptr)) return g_real.realloc(ptr, size);
  size_t usable = heap().usable_size(ptr);
  if (usable == 0) {  // not an allocated chunk: nothing to copy from
    errno = ENOMEM;
    return nullptr;
  }
  if (size == 0) {
    free_reallocated(ptr, caller);
    return nullptr;
  }
  // Same class: the chunk still fits, and is no more than a quarter too large.
  if (size <= usable &&
      core::SmallHeap::class_for(size, 0) == core::SmallHeap::class_for(usable, 0)) {
    return ptr;
  }
  void* fresh = try_heap_allocate(size, 0);
  if (fresh == nullptr) fresh = g_real.malloc(size);
  if (fresh == nullptr) return nullptr;  // errno set by malloc; the old block is untouched
  memcpy(fresh, ptr, usable < size ? usable : size);
  free_reallocated(ptr, caller);
  return fresh;
}

size_t block_usable_size(void* ptr) {
  if (guarded_owns(ptr)) return guarded_usable_size(ptr);
  if (g_heap_check.full) {
    size_t size = 0;
    Redzones found = redzoned_block(ptr, &size);
    if (found != Redzones::kNone || heap().owns(ptr)) return found == Redzones::kLive ? size : 0;
  }
  return heap().owns(ptr) ? heap().usable_size(ptr) : g_real.malloc_usable_size(ptr);
}

size_t heap_chunk_size(size_t size, size_t alignment) {
  if (!heap().enabled()) return 0;
  int c = core::SmallHeap::class_for(size, alignment);
  return c < 0 ? 0 : core::SmallHeap::class_size(static_cast<size_t>(c));
}

bool trim_heap() {
  if (in_runtime() || !heap().enabled()) return false;
  RuntimeScope scope;
  int saved_errno = errno;
  bool released = heap().trim(thread_heap()) > 0;
  errno = saved_errno;
  return released;
}

HeapUsage heap_usage() {
  if (!heap().enabled()) return {};
  RuntimeScope scope;
  return {.segment_bytes = heap().segment_bytes(),
          .live_bytes = static_cast<size_t>(heap().totals().live_bytes)};
}

// The frees a signal handler makes inside the runtime, kept for later.

using core::AllocFamily;
using core::result::FreeCall;

#if !MEMTRACK_ATTACH_RUNTIME  // which has no heap: nothing is kept (program_heap.h)
namespace {

AllocFamily family_of(FreeCall call) {
  switch (call) {
    case FreeCall::kDelete:
      return AllocFamily::kNew;
    case FreeCall::kDeleteArray:
      return AllocFamily::kNewArray;
    default:
      return AllocFamily::kMalloc;
  }
}

// What the hook would have done outside the runtime (malloc_hooks.cpp free_slow,
// new_delete_hooks.cpp delete_impl): the record goes, the misuse check judges the call, the
// chunk goes back.
void free_as_program(const DeferredFree& kept) {
  auto call = static_cast<FreeCall>(kept.call);
  if (tracing() && call != FreeCall::kRealloc) trace_free(core::free_call_name(call), kept.ptr);
  if (g_sampling.interval != 0 && free_unsampled(kept.ptr, family_of(call), kept.aligned)) return;
  core::AllocRecord rec;
  bool whole = call != FreeCall::kRealloc;  // a realloc's copy was made when it ran
  Release release = release_block(kept.ptr, call, kept.aligned, kept.caller, &rec, whole);
  if (release == Release::kRejected || release == Release::kFreed) return;
  free_block(kept.ptr);
}

}  // namespace
#endif

bool try_defer_free(void* ptr, FreeCall call, bool aligned, uintptr_t caller) {
#if MEMTRACK_ATTACH_RUNTIME
  (void)ptr, (void)call, (void)aligned, (void)caller;
  return false;
#else
  // The runtime's own frees (inside an AllowAllocation scope) are of the real allocator's
  // blocks: every allocation inside the runtime goes there.
  // With check_heap=full a block of the real allocator may be a large one with redzones,
  // whose registry the handler must not wait for: kept too.
  if (t_thread.allowed_allocations > 0 || !(heap_owns(ptr) || g_heap_check.full)) return false;
  DeferredFrees& kept = t_thread.deferred;
  int slot = kept.count.fetch_add(1, std::memory_order_relaxed);
  if (slot >= DeferredFrees::kCapacity) {
    kept.count.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  kept.entries[slot] = {ptr, caller, static_cast<uint8_t>(call), aligned};
  std::atomic_signal_fence(std::memory_order_release);
  return true;
#endif
}

void drain_deferred_frees_now() {
#if !MEMTRACK_ATTACH_RUNTIME
  if (in_runtime()) return;
  int saved_errno = errno;
  DeferredFrees& kept = t_thread.deferred;
  for (;;) {
    int count = kept.count.load(std::memory_order_acquire);
    if (count <= 0) break;
    DeferredFree last = kept.entries[count - 1];
    // A handler that kept another free meanwhile makes this fail: the loop takes that first.
    if (!kept.count.compare_exchange_strong(count, count - 1, std::memory_order_acq_rel)) {
      continue;
    }
    free_as_program(last);
  }
  errno = saved_errno;
#endif
}

}  // namespace memtrack::rt
