// Where the program's blocks come from: memtrack's own heap (core/small_heap.h) for what it
// can serve, the real allocator (glibc) for the rest, and for every call made inside the
// runtime. A pointer of the heap never reaches the real allocator, and the heap refuses
// whatever is not one of its allocated chunks, so neither allocator's lists can be broken
// by a bad pointer. These are the allocator calls only; recording is the hooks' business
// (record/record.h), but for the frees a signal handler makes inside the runtime, which are
// kept and done here later (below). Runtime-safe: no malloc of its own. Internal to hooks/.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/result_format.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

// At start-up, after the options are read: reserves the heap unless glibc_malloc is set or
// the machine cannot give the address space (then every block comes from glibc).
void init_program_heap();

// A chunk of the heap for `size` bytes at `alignment` (0: malloc's; otherwise a power of
// two), or nullptr if the heap cannot serve it: it is off, the size or alignment is beyond
// it, its memory ran out, or the calling thread is inside the runtime. The caller then
// calls the real allocator's function, which keeps glibc's exact semantics for what the
// heap does not serve (errno, EINVAL, rounding).
void* try_heap_allocate(size_t size, size_t alignment);
// calloc's: `size` zeroed bytes at malloc's alignment, or nullptr as try_heap_allocate.
void* try_heap_allocate_zeroed(size_t size);
// True if `ptr` lies in the heap (an allocated chunk or not).
bool heap_owns(const void* ptr);
// Frees a block of either allocator. A heap pointer that is not an allocated chunk (a double
// or invalid free the misuse check did not stop) is dropped, never passed on.
void free_block(void* ptr);
// realloc on a block of either allocator: a heap block grows into a new block (of the heap
// or the real allocator) unless its chunk still fits, a real block stays with the real
// allocator. realloc(ptr, 0) frees and returns nullptr, as glibc's does. Inside the runtime (a
// signal handler's realloc) the new block is the real allocator's, and the old one's free is kept
// as try_defer_free keeps a free (`caller`: the hook's return address).
void* reallocate_block(void* ptr, size_t size, uintptr_t caller);
// malloc_usable_size of a block of either allocator (0 for a heap pointer that is not an
// allocated chunk).
size_t block_usable_size(void* ptr);
// The usable size of the chunk the heap would give a block of `size` bytes at `alignment`
// (0: malloc's), or 0 if it would not serve it (off, too large, over-aligned).
size_t heap_chunk_size(size_t size, size_t alignment);

// What the heap holds, for mallinfo2 (glibc's statistics see only glibc's blocks): the
// bytes of its segments, and the requested bytes of the blocks recorded in them.
struct HeapUsage {
  size_t segment_bytes = 0;
  size_t live_bytes = 0;
};
HeapUsage heap_usage();

// malloc_trim for the heap: the memory of its free chunks goes back to the system. Returns
// true if any did.
bool trim_heap();

// The frees a signal handler makes while its thread is inside the runtime, of blocks of
// memtrack's heap the program allocated (any other block a handler frees there goes to the
// real allocator at once: record/forwarded.h). The interrupted runtime code may hold the
// lock of the block's record, or be halfway through the thread's heap lists, so neither can
// be changed then; the free is kept in the thread's state (DeferredFrees) and done, with its
// misuse check, at the thread's next free, delete or realloc outside the runtime (their slow
// paths; not its allocations, whose registers must stay as they are: stack_scrub.h), when
// the thread exits, or before the exit's report. Without it the block's record would stay:
// a false leak at exit.

// Called by a deallocation hook inside the runtime scope for a pointer that is not a
// forwarded block: keeps the free of `ptr` (the hook's `call`, `aligned`, `caller`) if it is
// a block of memtrack's heap and the program's (no AllowAllocation scope is open), and
// returns true. False, with nothing done, otherwise, or when the thread keeps
// DeferredFrees::kCapacity frees already (then the caller frees the chunk as before and
// its record stays).
bool try_defer_free(void* ptr, core::result::FreeCall call, bool aligned, uintptr_t caller);

// Does the calling thread's kept frees (outside the runtime only).
void drain_deferred_frees_now();
inline void drain_deferred_frees() {
#if !MEMTRACK_ATTACH_RUNTIME
  if (t_thread.deferred.count.load(std::memory_order_relaxed) != 0) drain_deferred_frees_now();
#endif
}

}  // namespace memtrack::rt
