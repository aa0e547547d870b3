// Allocator misuse: double free, invalid free, mismatched allocation/deallocation families,
// realloc of a freed pointer; and the store of heap memory errors (heap_check.h). Freed blocks go
// into a bounded quarantine (per-thread rings) so a second free can name where the first one
// happened. Runtime-safe: mmap only, no malloc.
#pragma once

#include <cstdint>

#include "core/alloc_table.h"
#include "core/mmap_array.h"
#include "core/result_records.h"

namespace memtrack::rt {

enum class Release {
  kTracked,  // a tracked block: its record is in *out; the caller frees it
  kFreed,    // a tracked block, already freed (only with `free_tracked`): its record is in *out
  kUnknown,  // not ours to judge (e.g. allocated while memtrack could not track): pass it on
  kRejected  // a misuse that must not reach the allocator (double or invalid free)
};

// The one path of every deallocation hook (outside the runtime scope). Removes the record,
// checks the allocation family against `call`/`aligned`, quarantines the block, and for an
// unknown pointer decides whether it is a misuse. `caller`: the hook's return address, the
// free's site kept in the quarantine (free_stacks=1 captures the whole stack instead).
// `free_tracked` (free and delete, not realloc, which still copies the bytes): a tracked
// block of memtrack's heap is freed here, with its record, in one step (kFreed).
// Thread safe.
Release release_block(void* ptr, core::result::FreeCall call, bool aligned, uintptr_t caller,
                      core::AllocRecord* /*out*/ out, bool free_tracked = false);

// One distinct error (kind, stack of the bad call), kept as the result file stores it.
using ErrorEntry = core::result::ErrorRecord;

// Records a heap memory error (record/heap_check.h) among the misuse errors: the same
// deduplication by kind and bad stack, the same halt_on_error. Async-signal-safe unless the
// interrupted thread holds the errors' lock (the caller checks in_runtime()).
void record_heap_error(const ErrorEntry& entry);

// Copies the errors recorded so far into `out`. Returns false if memory runs out.
[[nodiscard]] bool copy_errors(core::MmapArray<ErrorEntry>& out);

// Forgets the errors recorded so far: memtrack attach's next attach starts without those a
// hook still running at the last detach may have recorded.
void forget_errors();

// What halt_on_error runs before it aborts: the exit report (hooks/exit_hooks.h), which
// lies above this folder and is therefore handed down at start-up. Called once.
void set_halt_report(void (*report)(const char* how));

// Makes the key whose destructor gives a thread's quarantine ring back at its exit. Called
// once at start-up, before other threads exist.
void init_misuse();

// fork() support for the quarantine and error locks.
void misuse_lock_all();
void misuse_unlock_all();
void misuse_reset_after_fork();

}  // namespace memtrack::rt
