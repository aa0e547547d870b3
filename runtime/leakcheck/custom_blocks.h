// The blocks of the program's own allocators, as it declares them (include/memtrack/memtrack.h:
// malloc-like blocks and pools, and the valgrind and heaptrack annotations mapped onto them):
// leak-checked and reported like malloc's blocks. They are kept in a table of their own, not
// with malloc's records: a pool's blocks lie inside a block of malloc's (its superblock), the
// first one often at the same address. The leak scan takes them with the others and leaves
// out a block that holds some of them (ScanBlocks::drop_containers), as memcheck leaves out a
// pool's superblock. Runtime-safe: no malloc; the tables' memory is mmapped.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/alloc_table.h"

namespace memtrack::rt {

// Pools at a time (a pool is named by an address, usually its own object's).
inline constexpr size_t kMaxCustomPools = 1 << 16;

// A block of `size` bytes at `addr`, allocated at the stack `stack_id`, in `pool` (0: none; a
// pool not created yet is created). Replaces a block recorded at `addr` before. False if it
// cannot be recorded: `addr` is 0 or not a multiple of 8, or memory ran out (counted:
// custom_blocks_lost). Thread safe, as every function here.
bool add_custom_block(uintptr_t addr, uint64_t size, uintptr_t pool, uint32_t stack_id);
// Forgets the block at `addr`; false if there is none.
bool remove_custom_block(uintptr_t addr);
// The block at `addr` now has `size` bytes (its stack stays); false if there is none.
bool resize_custom_block(uintptr_t addr, uint64_t size);
// The block at `from` now lies at `to` with `size` bytes, in the same pool, with its stack;
// false if there is none at `from`.
bool move_custom_block(uintptr_t from, uintptr_t to, uint64_t size);

// Pools. create_custom_pool is idempotent; false when kMaxCustomPools exist or no memory.
bool create_custom_pool(uintptr_t pool);
// Forgets the pool and every block in it; returns the number of blocks. -1 for an unknown
// pool.
long destroy_custom_pool(uintptr_t pool);
// Forgets the pool's blocks that do not lie wholly in [begin, begin + size); their number,
// or -1 for an unknown pool.
long trim_custom_pool(uintptr_t pool, uintptr_t begin, uint64_t size);
// The pool at `from` is now named `to`; false if `from` is unknown or `to` exists.
bool move_custom_pool(uintptr_t from, uintptr_t to);
bool custom_pool_exists(uintptr_t pool);

// Calls fn(const core::AllocRecord&) for every custom block (see AllocTable::for_each).
template <typename Fn>
void for_each_custom_block(Fn&& fn);

// The number of custom blocks, and of those that could not be recorded.
size_t custom_block_count();
uint64_t custom_blocks_lost();

// fork() support, as for AllocTable.
void custom_blocks_lock_all();
void custom_blocks_unlock_all();
void custom_blocks_reset_after_fork();

// --- implementation ------------------------------------------------------------------------
core::AllocTable& custom_block_table();

template <typename Fn>
void for_each_custom_block(Fn&& fn) {
  custom_block_table().for_each(fn);
}

}  // namespace memtrack::rt
