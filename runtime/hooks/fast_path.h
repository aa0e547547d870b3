// The sampled mode's fast path, inlined into the allocation hooks: an allocation the byte
// sampler passes by and the free of a block recorded that way, done with no call when they
// need nothing but the calling thread's own heap list (docs/sampling.md, "Cost"). In every
// other case they say "not done" having changed nothing, and the hook goes on as it would
// without them (record.h: unsampled_call, allocate_unsampled, free_unsampled, which also
// handle what is left out here: refills and spills, the peak's publication, the sequence
// numbers' synchronisation, the event log, the heap profile, a foreign stack).
// Runtime-safe: no malloc, no call; the runtime scope is held across the change of the
// thread's lists, so a signal handler's allocation meanwhile goes to the real allocator.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/small_heap.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/output/trace_log.h"
#include "runtime/record/guard_state.h"
#include "runtime/record/peak.h"
#include "runtime/record/profile.h"
#include "runtime/record/record.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

// Neither the event log nor the heap profile wants this call (the slow path writes both).
inline bool fast_path_unobserved() {
  return !g_trace_on.load(std::memory_order_relaxed) &&
         !g_profile_on.load(std::memory_order_relaxed);
}

// Holds the thread's runtime scope across a change of its heap lists. The signal fences keep
// the compiler from moving the lists' loads and stores outside it: a handler that runs in
// between must see the scope.
class FastPathScope {
 public:
  explicit FastPathScope(ThreadState& t) : t_(t) {
    ++t_.in_runtime;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~FastPathScope() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    --t_.in_runtime;
  }
  FastPathScope(const FastPathScope&) = delete;
  FastPathScope& operator=(const FastPathScope&) = delete;

 private:
  ThreadState& t_;
};

// The block for malloc(size) / new(size) (`family`) that the program called from `caller`
// (the hook's return address), or nullptr: then nothing was done, the sampler's countdown
// included. Only for blocks the heap serves (at most 64 KiB) at the default alignment, on the
// thread's own stack (on a stack of the program's making the slow path scrubs: stack_scrub.h).
__attribute__((always_inline)) inline void* try_fast_allocate(size_t size, core::AllocFamily family,
                                                              uintptr_t caller) {
  if (!g_sampling.fast_path || size > core::SmallHeap::kMaxSize) return nullptr;
  ThreadState& t = t_thread;
  if (t.in_runtime != 0 || t.stdio_scope != 0) return nullptr;
  // The C and C++ runtime's own allocations always get a stack (sampled_out); their code lies
  // inside this hull, and the slow path looks closer.
  if (caller - g_sampling.runtime_code.lowest <
      g_sampling.runtime_code.highest - g_sampling.runtime_code.lowest) {
    return nullptr;
  }
  auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (sp - t.stack_low >= t.stack_size || !fast_path_unobserved()) return nullptr;
  void* p = nullptr;
  {
    // The countdown and the live bytes are read and written inside the scope: a signal
    // handler's allocation meanwhile takes the slow path, which leaves both alone.
    FastPathScope scope(t);
    int64_t live = t.live_delta + static_cast<int64_t>(size);
    if (t.sampler.passes_by(size) && live < kPublishBytes && guard_passes_by(t)) {
      p = g_allocs.heap().try_pop_recorded(size, family, t.lsan_disabled > 0,
                                           g_epoch.load(std::memory_order_relaxed), thread_heap());
      if (p != nullptr) {
        t.sampler.pass_by(size);
        guard_pass_by(t);
        t.live_delta = live;
        if (live > t.live_high) t.live_high = live;
      }
    }
  }
  return p;
}

// The free (or delete of `family`) of `ptr` if it is a block the fast path or the lean path
// recorded, freed by a call of its own family; false, with nothing done, for anything else.
__attribute__((always_inline)) inline bool try_fast_free(void* ptr, core::AllocFamily family) {
  if (!g_sampling.fast_path) return false;
  ThreadState& t = t_thread;
  if (t.in_runtime != 0 || !fast_path_unobserved()) return false;
  uint64_t size = 0;
  FastPathScope scope(t);  // the live bytes too (try_fast_allocate)
  if (!g_allocs.heap().try_push_unstacked(
          reinterpret_cast<uintptr_t>(ptr), family, thread_heap(), &size, [&](uint64_t bytes) {
            return t.live_delta - static_cast<int64_t>(bytes) > -kPublishBytes;
          })) {
    return false;
  }
  t.live_delta -= static_cast<int64_t>(size);
  return true;
}

}  // namespace memtrack::rt
