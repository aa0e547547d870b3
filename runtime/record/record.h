// Recording of allocations and frees in the allocation table. Runtime-safe: no malloc.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/alloc_table.h"

namespace memtrack::rt {

// Records a new block / forgets a freed one. Must be called with the calling thread outside
// the runtime (in_runtime() false); they enter it themselves. Keep errno unchanged.
// `hook_frame`: the frame address of the hook the program called (0 if unknown), where the
// stack capture starts leaving the runtime's frames.
void record_allocation(void* ptr, size_t size, core::AllocFamily family, bool aligned,
                       uintptr_t hook_frame = 0);
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
