// --check-heap=sample (check_heap_sample=N; docs/heap-errors.md): about one allocation in N
// goes on a guard page of core/guard_pool.h, and the faults of bad accesses to it become
// reports with three stacks. The hooks' allocator calls (hooks/program_heap.cpp) place and free
// the blocks; the crash handler (hooks/signal_report.cpp) hands over the faults; the report
// checks the live blocks' bytes before it copies the errors. Runtime-safe: no malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/guard_pool.h"
#include "runtime/record/guard_state.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

// Maps the pool from the options (start-up, after they are read and init_sampling). With the
// pool unavailable (address space, mmap) the check is off and says so once.
void init_heap_check();

// A guarded block of `size` bytes at `alignment` (0: malloc's) if guard_due said so and the
// pool can place it (clears guard_due), else nullptr. Outside the runtime only.
void* try_guarded_allocate(size_t size, size_t alignment);
// Frees a block of the pool (after release_block judged the call): checks the bytes beside
// it (an error if they changed), captures the free's stack, makes its page inaccessible. A
// pointer that is no live block's start is dropped.
void free_guarded(void* ptr);
// malloc_usable_size of a block of the pool: its size (no slack to write into), 0 if none.
size_t guarded_usable_size(const void* ptr);

enum class GuardFault {
  kNotOurs,   // not an access to the pool: the crash handler goes on
  kReported,  // reported; the process is to die of the signal (the crash report follows)
  kContinued  // reported and the page opened (check_heap_continue): return from the handler
};
// The SIGSEGV handler's first question (`info`, `context`: its arguments), on the faulting
// thread. Async-signal-safe.
GuardFault report_guard_fault(const void* info, const void* context);

// Reports, once each, the live blocks whose bytes beside them changed (before the exit's
// report). A block another thread frees meanwhile is skipped.
void check_guarded_blocks();

}  // namespace memtrack::rt
