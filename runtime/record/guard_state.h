// The heap check's state that the recording path reads (heap_check.h): its options, the pool,
// whether the calling thread's next allocation goes on a guard page, and which blocks have
// redzones (check_heap=full). Apart from
// heap_check.h so that record.h and record.cpp can use it without depending on the misuse
// store heap_check.cpp reports to. Defined in heap_check.cpp. Runtime-safe: no malloc, no call.
#pragma once

#include <cstdint>

#include "core/guard_pool.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

struct HeapCheck {
  uint64_t interval = 0;  // check_heap=sample:N; 0 = off
  uint64_t seed = 0;      // of the threads' countdowns (the sampled mode's seed when it has one)
  bool continue_after = false;
  // check_heap_max_per_sec: the time between two checked blocks of a thread at that rate
  // (0: no limit).
  uint64_t rate_gap_ns = 0;
  // check_heap=full: every chunk of memtrack's heap holds a block with redzones (redzone.h),
  // and so do the larger blocks from the real allocator (heap_check.cpp).
  bool full = false;
};
extern HeapCheck g_heap_check;
extern core::GuardPool g_guard_pool;

// The check of `interval` first: with the pool off, one load and a branch not taken.
inline bool guarded_owns(const void* ptr) {
  return g_heap_check.interval != 0 && g_guard_pool.owns(reinterpret_cast<uintptr_t>(ptr));
}
// The block's allocation stack, for the fault's report (record_allocation calls this for a
// block of the pool, whose stack is known only once it is recorded).
inline void note_guarded_stack(uintptr_t ptr, uint32_t stack_id) {
  g_guard_pool.set_alloc_stack(ptr, stack_id);
}

// check_heap=full: the block's allocation stack, kept in its header for the reports of its
// edges and of a write after its free (record_allocation calls this as note_guarded_stack).
// Defined in heap_check.cpp.
void note_redzoned_stack(uintptr_t ptr, uint32_t stack_id);

// Whether the rate limit lets the calling thread put one more block on a guard page now
// (and counts it); false counts a block passed by. Defined in heap_check.cpp.
bool guard_rate_allows(ThreadState& t);

// Whether the calling thread's next allocation goes on a guard page: its countdown, in
// allocations, ran out now or at an earlier call that has not placed the block yet (the
// sampled mode asks before it chooses the path that captures a stack, the allocator call
// asks again; t_thread.guard_due carries the answer between them).
inline bool guard_due() {
  if (g_heap_check.interval == 0) return false;
  ThreadState& t = t_thread;
  if (t.guard_due) return true;
  // sample:1 is every block (an exponential countdown of mean 1 would skip some).
  if (g_heap_check.interval != 1 &&
      (!t.guard_sampler.take(1, g_heap_check.interval, g_heap_check.seed) ||
       (g_heap_check.rate_gap_ns != 0 && !guard_rate_allows(t)))) {
    return false;
  }
  t.guard_due = true;
  return true;
}
// The fast path's halves of guard_due (hooks/fast_path.h): true if the allocation is not one
// for the pool, with nothing changed, and the countdown's step.
inline bool guard_passes_by(const ThreadState& t) {
  return g_heap_check.interval == 0 ||
         (g_heap_check.interval != 1 && !t.guard_due && t.guard_sampler.passes_by(1));
}
inline void guard_pass_by(ThreadState& t) {
  if (g_heap_check.interval != 0) t.guard_sampler.pass_by(1);
}

}  // namespace memtrack::rt
