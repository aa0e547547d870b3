// The table of live allocations: pointer -> (size, stack id, family).
// Runtime-safe: memory comes from mmap only; never allocates through malloc.
//
// Layout: kShardCount independent open-addressing hash tables with linear probing and
// backward-shift deletion (no tombstones), each behind its own spin lock. The layout follows
// the heap's (alloc_table.cpp, shard_of and home_of): a 64 MiB stretch of address space (one
// glibc heap, and glibc gives each thread an arena of its own) maps to a group of 8 shards, so
// threads rarely write the same shard header; within a shard, each 512-byte region of the heap
// has a window of 32 consecutive slots and a block's home is its offset in the region, so the
// records of neighbouring blocks share cache lines and a free of a block allocated with its
// neighbours rarely misses the cache. A shard grows (new mmap, rehash, munmap old) when it
// passes 3/4 load, by 1.5x or 1.33x (capacities 2^k and 3 * 2^(k-1)), so it is between 1/2
// and 3/4 full. Slots are 16 bytes (the record packed: pointer/8 in 45 bits, size in 40,
// stack id in 24, flags), so a live allocation costs 21-32 bytes of table. Blocks of 1 TiB or
// more keep their exact size in a small side list.
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
  uint8_t aligned = 0;   // 1 if made by an aligned operator new
  uint8_t ignored = 0;   // memtrack_ignore_object: never reported, a root for the leak scan
  uint8_t reported = 0;  // live mode: was older than the age threshold at some live report
  uint16_t epoch = 0;    // live mode: allocation time in ticks, modulo kEpochModulus
  // Blocks of memtrack's own heap: the order of their allocation (SmallHeap::set_record);
  // 0 for the allocation table's, which do not keep one.
  uint64_t sequence = 0;
};
inline constexpr uint16_t kEpochModulus = 1 << 14;
static_assert(sizeof(AllocRecord) <= 40);  // the unpacked form; slots are 16 bytes

// Counts kept by the table itself (under the shard locks, so the allocation path needs no
// shared counter): every insert of a new block and every erase.
struct AllocTotals {
  uint64_t inserted = 0;        // blocks recorded
  uint64_t inserted_bytes = 0;  // their sizes
  uint64_t erased = 0;          // blocks removed (freed), including ones replaced in place
  uint64_t live = 0;            // blocks in the table
  uint64_t live_bytes = 0;
};

// Thread safe: every operation locks only the shard that owns the pointer.
// Zero-initialised memory is a valid empty table, so it can live in .bss.
class AllocTable {
 public:
  // 32 groups of 8 shards; a 64 MiB stretch of address space (one glibc heap) maps to one
  // group (alloc_table.cpp, shard_of).
  static constexpr size_t kGroupBits = 5;
  static constexpr size_t kShardsPerGroupBits = 3;
  static constexpr uint64_t kArenaShift = 26;
  static constexpr size_t kShardCount = size_t{1} << (kGroupBits + kShardsPerGroupBits);

  // Inserts or overwrites the record for rec.ptr. Returns false if the shard needed to grow
  // and mmap failed, or the pointer cannot be packed (not 8-aligned or above 2^48); the
  // record is then not stored.
  [[nodiscard]] bool try_insert(const AllocRecord& rec);

  // Puts back a record that try_erase just removed, undoing that erase in the totals.
  [[nodiscard]] bool try_restore(const AllocRecord& rec);

  // Removes the record for `ptr`, copying it to *out. Returns false if `ptr` is unknown.
  // With `sequence`, also gives this erase's number in its shard, which counts up from 1
  // with every erase there (restores do not take it back): all erases of one address go
  // through the same shard under its lock, so a later free of the address, after it was
  // allocated again, always has the larger number (the quarantine orders its entries by it).
  bool try_erase(uintptr_t ptr, AllocRecord* /*out*/ out, uint64_t* /*out*/ sequence = nullptr);

  // Sums of the per-shard counters. Each shard is read under its lock.
  AllocTotals totals();

  bool try_lookup(uintptr_t ptr, AllocRecord* /*out*/ out);

  // Sets the ignored mark of the block at `ptr`. Returns false if `ptr` is unknown.
  bool try_mark_ignored(uintptr_t ptr);

  // Calls fn(const AllocRecord&) for the live records and sets the reported mark where fn
  // returns true; `fn` follows for_each's rules. For a running program: a shard is locked
  // for at most kMarkingChunk slots at a time, so allocation calls never wait long, and the
  // walk is not a snapshot. A record that a concurrent free moves across the walk's position
  // (backward-shift deletion) can be missed or, at a cluster that wraps around the end,
  // visited twice; the rest of a shard that grows meanwhile is skipped.
  static constexpr size_t kMarkingChunk = 256;
  template <typename Fn>
  void for_each_marking_reported(Fn&& fn) {
    for (Shard& shard : shards_) {
      const Slot* walked = nullptr;
      size_t i = 0;
      for (bool more = true; more;) {
        SpinLockGuard guard(shard.lock);
        if (walked != nullptr && walked != shard.slots) break;
        walked = shard.slots;
        size_t end = i + kMarkingChunk < shard.capacity ? i + kMarkingChunk : shard.capacity;
        for (; i < end; ++i) {
          if (shard.slots[i].key == 0) continue;
          const AllocRecord rec = unpack_locked(shard.slots[i]);
          if (fn(rec)) shard.slots[i].key |= kReportedBit;
        }
        more = i < shard.capacity;
      }
    }
  }

  // Calls fn(const AllocRecord&) for every live record, one shard locked at a time. `fn`
  // must not call back into the table or allocate through the runtime.
  template <typename Fn>
  void for_each(Fn&& fn) {
    for (Shard& shard : shards_) {
      SpinLockGuard guard(shard.lock);
      for (size_t i = 0; i < shard.capacity; ++i) {
        if (shard.slots[i].key != 0) {
          const AllocRecord rec = unpack_locked(shard.slots[i]);
          fn(rec);
        }
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

  // Erases every record, keeping the memory mapped (an attached runtime's detach: the next
  // attach starts empty). Thread safe, one shard at a time.
  void clear();

  // Releases all memory; the table is empty afterwards. Not thread safe.
  void test_only_reset();

 private:
  // key: pointer/8 (bits 0-44; 0 marks an empty slot), family (45-46), aligned (47),
  // ignored (48), reported (49), epoch (50-63). size_and_stack: size (bits 0-39;
  // kHugeSize: see huge_), stack id (40-63).
  static constexpr uint64_t kReportedBit = uint64_t{1} << 49;
  struct Slot {
    uint64_t key;
    uint64_t size_and_stack;
  };
  static_assert(sizeof(Slot) == 16);

  // One cache line: the lock, the geometry and the counters an insert or erase updates.
  struct alignas(64) Shard {
    SpinLock lock;
    Slot* slots = nullptr;
    size_t capacity = 0;          // 2^k or 3 * 2^(k-1) (grow_locked), or 0 before the first insert
    uint64_t erase_sequence = 0;  // erases ever made here (try_erase's sequence)
    uint64_t inserted = 0;
    uint64_t inserted_bytes = 0;
    uint64_t erased = 0;
    uint64_t live_bytes = 0;
    // A record replaced in place counts as an insert and an erase, and a restore takes back
    // an erase, so the difference is the number of records: no separate count to update.
    size_t count_locked() const { return static_cast<size_t>(inserted - erased); }
    // An insert of a new block at this count grows the shard first: 3/4 of the capacity
    // (0 before the first insert, which therefore grows it).
    size_t grow_at_locked() const { return capacity * 3 / 4; }
  };
  static_assert(sizeof(Shard) == 64);

  // Exact sizes of blocks whose size does not fit in 40 bits.
  struct HugeBlock {
    uintptr_t ptr;
    uint64_t size;
  };
  static constexpr size_t kMaxHugeBlocks = 64;

  // Record placement (alloc_table.cpp): regions of 512 bytes, one slot per 16 bytes of a
  // region, so a region's window is 32 slots (8 cache lines).
  static constexpr uint64_t kRegionShift = 9;
  static constexpr uint64_t kGranuleShift = 4;
  static constexpr size_t kWindowSlots = size_t{1} << (kRegionShift - kGranuleShift);

  // A pointer's region hash, computed once per operation: it picks both the shard and the
  // window within it.
  static uint64_t region_hash(uint64_t pointer_bits);
  static size_t shard_of(uint64_t pointer_bits, uint64_t hash);
  static size_t window_start(uint64_t hash, size_t capacity);
  static size_t window_offset(uint64_t pointer_bits);
  static size_t home_of(uint64_t pointer_bits, uint64_t hash, size_t capacity);
  static size_t home_of(uint64_t pointer_bits, size_t capacity);
  static size_t next_capacity(size_t capacity);
  static bool grow_locked(Shard& shard);
  static size_t probe_locked(const Shard& shard, uint64_t pointer_bits, size_t home);
  // The slot holding `pointer_bits`, or capacity if absent.
  static size_t find_locked(const Shard& shard, uint64_t pointer_bits, uint64_t hash);
  static void erase_slot_locked(Shard& shard, size_t slot);
  static Slot pack(const AllocRecord& rec, uint64_t size);
  static AllocRecord unpack_fields(const Slot& slot);
  AllocRecord unpack_locked(const Slot& slot);
  bool try_note_huge(uintptr_t ptr, uint64_t size);
  uint64_t take_huge_size(uintptr_t ptr);
  uint64_t huge_size(uintptr_t ptr);
  void replace_locked(Shard& shard, Slot& slot, Slot packed);
  bool try_insert_slow_locked(Shard& shard, uint64_t hash, Slot packed);
  bool try_insert_counted(const AllocRecord& rec, bool restore);

  Shard shards_[kShardCount];
  SpinLock huge_lock_;
  HugeBlock huge_[kMaxHugeBlocks] = {};
};

}  // namespace memtrack::core
