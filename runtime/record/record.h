// Recording of allocations and frees in the allocation table. Runtime-safe: no malloc.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/alloc_table.h"
#include "core/stack_totals.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/leakcheck/runtime_roots.h"
#include "runtime/record/guard_state.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

// The stack of an allocation the calling hook is about to make, captured before the block
// exists: no frame of the unwinder (which goes kilobytes below the hook) then holds the new
// block's address. On a stack the program allocated itself (a coroutine's, which the leak
// scan reads whole, dead part included) such a copy would keep a block the program dropped
// alive. Must be called with the thread outside the runtime (in_runtime() false); keeps
// errno. `hook_frame`: the frame address of the hook the program called (0 if unknown),
// where the capture starts leaving the runtime's frames.
uint32_t capture_allocation_stack(uintptr_t hook_frame = 0);

// In the sampled mode (sample_bytes > 0; docs/sampling.md) only the allocations the thread's
// byte sampler picks get a stack, and those the C and C++ runtime's libraries make
// themselves (`caller`, the hook's return address, in their code), which is_runtime_internal
// must still recognise; the others get stack id 0 (the depot's invalid id: no stack) and
// cost a subtraction and a few compares (sampled_out). The hooks take that decision before they
// call the capture and keep the capture's call as it is in the full mode: passing the size down
// into it changed how the hooks' frames hold the new block's address, which the stack scrub must
// clear (stack_scrub.h; tests/memcheck's coroutine_stack caught it).
struct Sampling {
  uint64_t interval = 0;           // sample_bytes; 0 = the full mode
  uint64_t seed = 0;               // sample_seed, or one drawn at start-up
  SystemRuntimeCode runtime_code;  // allocations called from here always get a stack
  // The hooks' fast path may run (hooks/fast_path.h): the sampled mode with memtrack's heap
  // on. Set once at start-up; off in libmemtrack_attach.so, which has no heap.
  bool fast_path = false;
  std::atomic<uint64_t> sampled{0};  // allocations sampled so far (not counting those)
};
extern Sampling g_sampling;
// True when the sampled mode leaves this allocation without a stack.
inline bool sampled_out(size_t size, uintptr_t caller) {
  if (g_sampling.interval == 0) return false;
  if (t_thread.sampler.take(size, g_sampling.interval, g_sampling.seed)) {
    g_sampling.sampled.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return !g_sampling.runtime_code.contains(caller);
}
// True when the sampled mode leaves this allocation call of the program without a stack, so
// the hook takes the lean path below: the mode is on, the thread is outside the runtime and
// outside glibc's stdio internals (fd_tracking.h), and sampled_out passes it by. `caller`:
// the hook's return address. The capture's call stays apart from this decision.
inline bool unsampled_call(size_t size, uintptr_t caller) {
  // A block due for a guard page (heap_check.h) needs its stack: not the lean path.
  return g_sampling.interval != 0 && !in_runtime() && !in_stdio_scope() && !guard_due() &&
         sampled_out(size, caller);
}
// Sets g_sampling from the options (start-up, after they are read).
void init_sampling();
// The seed of the run's random choices (the sampled mode's, the heap check's): the
// sample_seed option, or a different one each run.
uint64_t run_seed();

// The sampled mode's lean path, for the allocations sampled_out leaves without a stack: the
// hooks call these instead of the capture, the heap call, record_allocation and release_block,
// so such a block costs what the heap costs plus its record (docs/sampling.md, "Cost").
// Both must be called with the calling thread outside the runtime, and keep errno.
//
// A chunk of memtrack's heap for `size` bytes at `alignment` (as try_heap_allocate) with its
// record (stack id 0, `family`, `aligned`) written in the same step, or nullptr if the heap
// cannot serve it: the caller then allocates elsewhere and records with stack id 0.
void* allocate_unsampled(size_t size, size_t alignment, core::AllocFamily family, bool aligned);
// The free of a heap block without a stack by a call of its own family (`family`, `aligned`):
// record and chunk go in one step, with no quarantine entry (a second free of the chunk is
// still a double free: misuse.cpp finds it free in the heap). False, with nothing done, for
// every other pointer: the caller takes the full path (release_block).
bool free_unsampled(void* ptr, core::AllocFamily family, bool aligned);
// With alloc_totals (memtrack run --pprof-http): what each stack allocated since the start,
// counted by record_allocation (in the sampled mode: each sampled block by its weight, the
// blocks in kEstimateScale units); g_stack_totals_incomplete once an addition was lost.
extern core::StackTotals g_stack_totals;
extern std::atomic<bool> g_stack_totals_incomplete;
// Records a new block / forgets a freed one. Must be called with the calling thread outside
// the runtime (in_runtime() false); they enter it themselves. Keep errno unchanged.
// `stack_id`: capture_allocation_stack's, taken before the block was allocated.
void record_allocation(void* ptr, size_t size, core::AllocFamily family, bool aligned,
                       uint32_t stack_id);
// Returns true and fills *out if `ptr` was a tracked block, and *erase_sequence with the
// number the allocation table gave this erase (AllocTable::try_erase). With `deallocated`,
// a block of memtrack's heap is freed in the same step, and *deallocated says whether it was
// (BlockRecords::try_erase_and_deallocate); the caller frees the others.
bool record_free(void* ptr, core::AllocRecord* /*out*/ out, uint64_t* /*out*/ erase_sequence,
                 bool* /*out*/ deallocated = nullptr);
// Puts a record back (used when realloc fails after its old record was removed).
void restore_record(const core::AllocRecord& rec);

// The current allocation time in ticks, stored with each block (only advances in live mode,
// where the runtime thread moves it on; live/live_thread.h).
extern std::atomic<uint32_t> g_epoch;
// Per stack id, the blocks freed after a live report counted them; null until the runtime
// thread maps it.
extern std::atomic<uint32_t>* g_freed_after_report;

// A block that a live report had counted was freed (the free path calls this).
void note_freed_after_report(uint32_t stack_id);

}  // namespace memtrack::rt
