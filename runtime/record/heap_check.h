// --check-heap (check_heap=...; docs/heap-errors.md). `sample:N`: about one allocation in N
// goes on a guard page of core/guard_pool.h, and the faults of bad accesses to it become
// reports with three stacks. `full`: every block of memtrack's heap gets redzones
// (core/redzone.h), checked at its free, and waits in a quarantine (core/quarantine.h) after
// it, checked when it leaves. The hooks' allocator calls (hooks/program_heap.cpp) place and
// free the blocks; the crash handler (hooks/signal_report.cpp) hands over the faults; the exit's
// report checks the live and quarantined blocks' bytes before it copies the errors.
// Runtime-safe: no malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/guard_pool.h"
#include "core/quarantine.h"
#include "runtime/record/guard_state.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

extern core::Quarantine g_quarantine;

// Maps the pool or the quarantine from the options (start-up, after they are read,
// init_program_heap and init_sampling). What the check cannot do (no address space, the
// sampled leak mode with `full`, memtrack's heap off) it says once, and it is off.
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

// check_heap=full: a block of `size` bytes at `alignment` (0: malloc's) with redzones in a
// chunk of memtrack's heap, or nullptr if it does not fit one (over 64 KiB with its redzones)
// or the heap cannot serve: the caller takes the real allocator, and the block is counted
// as unchecked. Outside the runtime only.
void* try_redzoned_allocate(size_t size, size_t alignment);
// Frees a block with redzones (after release_block judged the call): checks its edges (an
// error if they changed), captures the free's stack, fills the block with the freed pattern
// and puts it in the quarantine; the blocks that leave it are checked and their chunks given
// back.
void free_redzoned(void* ptr);
// Whether `ptr` is a block with redzones (of the heap, its header whole), and its size.
bool redzoned_block_size(const void* ptr, size_t* /*out*/ size);
// malloc_usable_size of a block with redzones: its size, 0 if `ptr` is none.
size_t redzoned_usable_size(const void* ptr);

// Before the exit's report: reports, once each, the live blocks whose bytes beside them
// changed, and (check_heap=full) the quarantined ones written to after their free; says how
// many blocks the check could not cover. A block another thread frees meanwhile is skipped.
void check_heap_at_exit();

}  // namespace memtrack::rt
