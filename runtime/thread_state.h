// All per-thread state of the runtime, in one initial-exec TLS block: no allocation, no
// __tls_get_addr call, and constant-initialised, so it is valid from a thread's first
// instruction (the first malloc of a thread may come before anything else runs on it).
// Runtime-safe: no malloc, async-signal-safe.
#pragma once

#include <setjmp.h>

#include <atomic>
#include <cstdint>

#include "core/sampling.h"
#include "core/small_heap.h"

// 1 in libmemtrack_attach.so (runtime/CMakeLists.txt), the runtime memtrack attach loads.
#ifndef MEMTRACK_ATTACH_RUNTIME
#define MEMTRACK_ATTACH_RUNTIME 0
#endif

namespace memtrack::rt {

// A free of a block of memtrack's heap that a signal handler made while its thread was
// inside the runtime, done at the thread's next call outside it (hooks/program_heap.h).
struct DeferredFree {
  void* ptr;
  uintptr_t caller;  // the free's return address, for a misuse report
  uint8_t call;      // core::result::FreeCall
  bool aligned;
};
struct DeferredFrees {
  static constexpr int kCapacity = 16;
  // Entries [0, count) are filled; a handler reserves one with fetch_add (a handler of its
  // own may interrupt it).
  std::atomic<int> count{0};
  DeferredFree entries[kCapacity];
};

// One per thread (t_thread); only the owning thread touches it, signal handlers included.
struct ThreadState {
  int in_runtime = 0;         // RuntimeScope depth (runtime.h)
  bool initializing = false;  // this thread runs ensure_initialized (hooks/init.cpp)
  // fd/fd_tracking.h: StdioScope depth, and the first block allocated in it (the FILE).
  int stdio_scope = 0;
  uintptr_t stdio_first_block = 0;
  uint32_t stdio_first_size = 0;
  // leakcheck/guarded_read.h: where a fault in a guarded read jumps back to, and the address.
  sigjmp_buf* volatile fault_jump = nullptr;
  volatile uintptr_t fault_address = 0;
  unsigned quarantine_ring = ~0u;  // record/misuse.cpp; ~0u until the thread's first free
  // record/peak.cpp: the unpublished net change of live bytes and its highest value.
  int64_t live_delta = 0;
  int64_t live_high = 0;
  bool exit_hook_set = false;   // the thread-exit publication is registered
  int allowed_allocations = 0;  // AllowAllocation depth (alloc_guard.h)
  int tid = 0;  // cached gettid() for the event log (output/trace_log.cpp); 0 = unknown
  // __lsan_disable depth (hooks/lsan_interface.cpp): blocks allocated meanwhile are ignored.
  int lsan_disabled = 0;
  bool in_realloc = false;  // record/profile.cpp: a free is the first half of a realloc
  // record/profile.cpp: 1 + the index of this thread's heap profile buffer; 0 = none yet.
  int profile_buffer = 0;
  // record/record.cpp: 1 + the shard of g_stack_totals this thread adds to; 0 = none yet.
  uint32_t totals_shard = 0;
  // record/stack_scrub.h: the thread's own stack, learnt at its first recorded block
  // (stack_size 0 until then; ~0 when it cannot be known).
  uintptr_t stack_low = 0;
  uintptr_t stack_size = 0;
#if !MEMTRACK_ATTACH_RUNTIME
  // hooks/program_heap.cpp: this thread's lists of memtrack's own heap and its counters.
  // Not in libmemtrack_attach.so: a library loaded after start-up gets little static TLS
  // (glibc keeps about 1.5 KiB for all of them), and the attached runtime has no heap of
  // its own (every block is the program's allocator's).
  core::HeapThread heap{};
  DeferredFrees deferred{};  // hooks/program_heap.h
#endif
  // record/record.h: the sampled mode's countdown to this thread's next sampled allocation.
  core::ByteSampler sampler{};
  // record/heap_check.h: the countdown, in allocations, to the next block put on a guard
  // page, and whether it ran out with the block not placed yet.
  core::ByteSampler guard_sampler{};
  bool guard_due = false;
  // check_heap_max_per_sec: the time (monotonic ns) from which this thread's next block may
  // go on a guard page without exceeding the rate (heap_check.cpp, guard_rate_allows).
  uint64_t guard_rate_next_ns = 0;
  // check_heap=full: this thread holds the lock of the registry of large blocks or of the
  // quarantine (heap_check.cpp), so a signal handler's free on it must take neither.
  bool holds_check_heap_lock = false;
};

extern __thread ThreadState t_thread;

#if MEMTRACK_ATTACH_RUNTIME
// Never used: the heap is never turned on in libmemtrack_attach.so; the calls that pass a
// thread's lists reach it only for blocks of memtrack's heap.
extern core::HeapThread g_no_heap_thread;
#endif

// This thread's lists of memtrack's own heap.
inline core::HeapThread& thread_heap() {
#if MEMTRACK_ATTACH_RUNTIME
  return g_no_heap_thread;
#else
  return t_thread.heap;
#endif
}

}  // namespace memtrack::rt
