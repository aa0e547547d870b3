// --check-heap (check_heap=...; docs/heap-errors.md). `sample:N`: about one allocation in N
// goes on a guard page of core/guard_pool.h, and the faults of bad accesses to it become
// reports with three stacks. `full`: every block gets redzones (core/redzone.h), checked at
// its free, and waits in a quarantine (core/quarantine.h) after it, checked when it leaves. The
// hooks' allocator calls (hooks/program_heap.cpp) place and free the blocks; the crash handler
// (hooks/signal_report.cpp) hands over the faults; the exit's report checks the live and
// quarantined blocks' bytes before it copies the errors. Runtime-safe: no malloc.
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

// check_heap=full: a block of `size` bytes at `alignment` (0: malloc's) with redzones: in a
// chunk of memtrack's heap, or, if it does not fit one (over 64 KiB with its redzones) or the
// heap cannot serve, in a block of the real allocator laid out the same way. nullptr if
// neither can: the caller takes the real allocator, and the block is counted as unchecked
// if that one serves it only because memtrack had no memory for its record. Outside the
// runtime only.
void* try_redzoned_allocate(size_t size, size_t alignment);
// calloc's: the same, zeroed (a large one by the real calloc, so its fresh pages stay
// untouched).
void* try_redzoned_allocate_zeroed(size_t size);
// Frees a block with redzones (after release_block judged the call): checks its edges (an
// error if they changed), captures the free's stack, fills the block with the freed pattern
// and puts it in the quarantine; the blocks that leave it are checked and their memory given
// back. False if `ptr` is not in memtrack's heap and no large block with redzones: the
// caller gives it to the real free.
bool free_redzoned(void* ptr);
// Whether `ptr` is a live block with redzones (its header whole), and its size. kUnknown: a
// signal handler on a thread inside the registry of large blocks, which it cannot look up.
enum class Redzones { kNone, kLive, kUnknown };
Redzones redzoned_block(const void* ptr, size_t* /*out*/ size);

// fork(): the registry of large blocks with redzones, as the allocation table's.
void large_blocks_lock_all();
void large_blocks_unlock_all();
void large_blocks_reset_after_fork();

// Before the exit's report: reports, once each, the live blocks whose bytes beside them
// changed, and (check_heap=full) the quarantined ones written to after their free; says how
// many blocks the check could not cover. A block another thread frees meanwhile is skipped.
void check_heap_at_exit();

}  // namespace memtrack::rt
