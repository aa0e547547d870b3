// The table of live allocations: pointer -> (size, stack id, family).
// Runtime-safe: memory comes from mmap only; never allocates through malloc.
//
// Layout: kShardCount independent open-addressing hash tables with linear probing and
// backward-shift deletion (no tombstones), each behind its own spin lock, so threads that
// allocate at the same time rarely touch the same lock or cache line. A shard doubles (new
// mmap, rehash, munmap old) when it passes 3/4 load; a record is 24 bytes, so a live
// allocation costs 32-64 bytes of table depending on where its shard is in its growth cycle.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/spin_lock.h"

namespace memtrack::core {

// Which allocation function produced a block, so frees can be matched to it.
enum class AllocFamily : uint8_t {
  kMalloc = 0,  // malloc, calloc, realloc, reallocarray, memalign & co.
  kNew,         // operator new (plain, nothrow, aligned)
  kNewArray,    // operator new[] (plain, nothrow, aligned)
};

struct AllocRecord {
  uintptr_t ptr = 0;  // 0 marks an empty slot; the table never holds null
  uint64_t size = 0;
  uint32_t stack_id = 0;
  AllocFamily family = AllocFamily::kMalloc;
  uint8_t aligned = 0;  // 1 if made by an aligned operator new
  uint8_t ignored = 0;  // memtrack_ignore_object: never reported, a root for the leak scan
  uint8_t reserved = 0;
};
static_assert(sizeof(AllocRecord) == 24);

// Thread safe: every operation locks only the shard that owns the pointer.
// Zero-initialised memory is a valid empty table, so it can live in .bss.
class AllocTable {
 public:
  static constexpr size_t kShardCount = 64;

  // Inserts or overwrites the record for rec.ptr. Returns false if the shard needed to grow
  // and mmap failed; the record is then not stored.
  [[nodiscard]] bool try_insert(const AllocRecord& rec);

  // Removes the record for `ptr`, copying it to *out. Returns false if `ptr` is unknown.
  bool try_erase(uintptr_t ptr, AllocRecord* /*out*/ out);

  bool try_lookup(uintptr_t ptr, AllocRecord* /*out*/ out);

  // Sets the ignored mark of the block at `ptr`. Returns false if `ptr` is unknown.
  bool try_mark_ignored(uintptr_t ptr);

  // Calls fn(const AllocRecord&) for every live record, one shard locked at a time. `fn`
  // must not call back into the table or allocate through the runtime.
  template <typename Fn>
  void for_each(Fn&& fn) {
    for (Shard& shard : shards_) {
      SpinLockGuard guard(shard.lock);
      for (size_t i = 0; i < shard.capacity; ++i) {
        if (shard.slots[i].ptr != 0) fn(static_cast<const AllocRecord&>(shard.slots[i]));
      }
    }
  }

  size_t size();

  // Bytes of table memory mapped right now (for the memory-overhead statistic).
  size_t mapped_bytes();

  // fork() support: lock_all() in the prepare handler, unlock_all() in the parent and
  // reset_after_fork() in the child.
  void lock_all();
  void unlock_all();
  void reset_after_fork();

  // Releases all memory; the table is empty afterwards. Not thread safe.
  void test_only_reset();

 private:
  struct alignas(64) Shard {
    SpinLock lock;
    AllocRecord* slots = nullptr;
    size_t capacity = 0;  // power of two, or 0 before the first insert
    size_t count = 0;
  };

  static size_t shard_of(uintptr_t ptr);
  static size_t hash_of(uintptr_t ptr);
  static bool grow_locked(Shard& shard);
  static size_t find_locked(const Shard& shard, uintptr_t ptr);  // capacity if absent
  static void erase_slot_locked(Shard& shard, size_t slot);

  Shard shards_[kShardCount];
};

}  // namespace memtrack::core
