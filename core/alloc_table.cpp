// Sharded open-addressing table of live allocations. Runtime-safe: mmap only.
#include "core/alloc_table.h"

#include "core/metadata_budget.h"

namespace memtrack::core {
namespace {
constexpr size_t kInitialCapacity = 512;  // 8 KiB of slots, two pages
// home_of needs capacities below 2^32, and their byte size must fit in size_t.
constexpr uint64_t kMaxGrowableCapacity =
    (uint64_t{1} << 30) < SIZE_MAX / 32 ? (uint64_t{1} << 30) : SIZE_MAX / 32;

constexpr uint64_t kPointerBits = 45;
constexpr uint64_t kPointerMask = (uint64_t{1} << kPointerBits) - 1;
constexpr uint64_t kFamilyShift = 45;
constexpr uint64_t kAlignedShift = 47;
constexpr uint64_t kIgnoredShift = 48;
constexpr uint64_t kReportedShift = 49;
constexpr uint64_t kIgnoredBit = uint64_t{1} << kIgnoredShift;
constexpr uint64_t kEpochShift = 50;
constexpr uint64_t kSizeBits = 40;
constexpr uint64_t kSizeMask = (uint64_t{1} << kSizeBits) - 1;
constexpr uint64_t kHugeSize = kSizeMask;  // the real size is in the huge-block list
}  // namespace

// Where a block's record lives follows the heap's layout. The address space is cut into
// regions of 2^kRegionShift bytes; a region's hash picks its shard within its group and the
// start of a window of kWindowSlots consecutive slots, and a block's home is its offset within
// the region, one slot per 2^kGranuleShift bytes. Blocks that glibc carves next to each other (one
// after the other from the top chunk, or from neighbouring bins) therefore have records in the same
// or neighbouring cache lines: a free of a block allocated with its neighbours finds the line
// already loaded, where a hash of the whole pointer scatters them over a table of hundreds of
// MiB and every free misses. Windows are short (a few cache lines), so regions whose windows
// overlap only lengthen probe runs by a few slots.
inline uint64_t AllocTable::region_hash(uint64_t pointer_bits) {
  uint64_t h = (pointer_bits >> (kRegionShift - 3)) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

// The shard: a group of kShardsPerGroup shards per 64 MiB of address space, then the region's
// hash within the group. glibc gives each thread an arena of its own, made of heaps aligned to
// 64 MiB, so threads that allocate and free their own blocks mostly lock and write shard
// headers of their own group, and no header line moves between cores on every call (with
// every thread spread over every shard, it did on almost every call). One thread still spreads
// its blocks over a group's shards, so no single shard holds a whole heap and the transient of
// one shard's growth (old and new slots both mapped) stays a fraction of the table. (One
// shard per 64 MiB, measured earlier, was 27% slower with one thread: a whole heap in one
// shard.)
inline size_t AllocTable::shard_of(uint64_t pointer_bits, uint64_t hash) {
  uint64_t group = (pointer_bits >> (kArenaShift - 3)) * 0xD6E8FEB86659FD93ull;
  uint64_t within = hash >> (64 - kShardsPerGroupBits);
  return static_cast<size_t>((group >> (64 - kGroupBits)) << kShardsPerGroupBits | within);
}

// The home slot: the window start spread over any capacity by a multiply (capacities are not
// all powers of two, see next_capacity; they stay below 2^32, so 32 hash bits times the
// capacity fit in 64 bits on every target), plus the offset within the region.
inline size_t AllocTable::window_start(uint64_t hash, size_t capacity) {
  uint64_t window_hash = hash << kShardsPerGroupBits;  // not the bits that chose the shard
  return static_cast<size_t>(((window_hash >> 32) * static_cast<uint64_t>(capacity)) >> 32);
}

inline size_t AllocTable::window_offset(uint64_t pointer_bits) {
  return static_cast<size_t>((pointer_bits >> (kGranuleShift - 3)) & (kWindowSlots - 1));
}

inline size_t AllocTable::home_of(uint64_t pointer_bits, uint64_t hash, size_t capacity) {
  size_t home = window_start(hash, capacity) + window_offset(pointer_bits);
  return home < capacity ? home : home - capacity;
}

inline size_t AllocTable::home_of(uint64_t pointer_bits, size_t capacity) {
  return home_of(pointer_bits, region_hash(pointer_bits), capacity);
}

// Flags are 0 or 1, so the key is built without branches. `size` is rec.size, or kHugeSize
// for a block whose size is in the huge-block list.
inline AllocTable::Slot AllocTable::pack(const AllocRecord& rec, uint64_t size) {
  uint64_t key = static_cast<uint64_t>(rec.ptr) >> 3;
  key |= static_cast<uint64_t>(rec.family) << kFamilyShift;
  key |= static_cast<uint64_t>(rec.aligned != 0) << kAlignedShift;
  key |= static_cast<uint64_t>(rec.ignored != 0) << kIgnoredShift;
  key |= static_cast<uint64_t>(rec.reported != 0) << kReportedShift;
  key |= static_cast<uint64_t>(rec.epoch % kEpochModulus) << kEpochShift;
  return Slot{key, size | static_cast<uint64_t>(rec.stack_id) << kSizeBits};
}

// The record without the huge-block lookup: a size of kHugeSize means "see huge_".
inline AllocRecord AllocTable::unpack_fields(const Slot& slot) {
  AllocRecord rec;
  rec.ptr = static_cast<uintptr_t>((slot.key & kPointerMask) << 3);
  rec.size = slot.size_and_stack & kSizeMask;
  rec.stack_id = static_cast<uint32_t>(slot.size_and_stack >> kSizeBits);
  rec.family = static_cast<AllocFamily>((slot.key >> kFamilyShift) & 3);
  rec.aligned = static_cast<uint8_t>((slot.key >> kAlignedShift) & 1);
  rec.ignored = static_cast<uint8_t>((slot.key >> kIgnoredShift) & 1);
  rec.reported = static_cast<uint8_t>((slot.key >> kReportedShift) & 1);
  rec.epoch = static_cast<uint16_t>(slot.key >> kEpochShift);
  return rec;
}

AllocRecord AllocTable::unpack_locked(const Slot& slot) {
  AllocRecord rec = unpack_fields(slot);
  if (rec.size == kHugeSize) [[unlikely]] {
    rec.size = huge_size(rec.ptr);
  }
  return rec;
}

// Blocks of 1 TiB or more: the huge-block list is off the common path, out of line.
__attribute__((noinline, cold)) bool AllocTable::try_note_huge(uintptr_t ptr, uint64_t size) {
  SpinLockGuard guard(huge_lock_);
  HugeBlock* free_entry = nullptr;
  for (HugeBlock& block : huge_) {
    if (block.ptr == ptr || (block.ptr == 0 && free_entry == nullptr)) free_entry = &block;
  }
  if (free_entry == nullptr) return false;
  *free_entry = HugeBlock{ptr, size};
  return true;
}

__attribute__((noinline, cold)) uint64_t AllocTable::huge_size(uintptr_t ptr) {
  SpinLockGuard guard(huge_lock_);
  uint64_t size = kHugeSize;
  for (const HugeBlock& block : huge_) {
    if (block.ptr == ptr) size = block.size;
  }
  return size;
}

__attribute__((noinline, cold)) uint64_t AllocTable::take_huge_size(uintptr_t ptr) {
  SpinLockGuard guard(huge_lock_);
  for (HugeBlock& block : huge_) {
    if (block.ptr == ptr) {
      block.ptr = 0;
      return block.size;
    }
  }
  return kHugeSize;
}

// The slot holding `pointer_bits`, or else the empty slot that ends its probe run (where an
// insert puts it). The shard must have slots; a free slot always exists (load <= 3/4).
inline size_t AllocTable::probe_locked(const Shard& shard, uint64_t pointer_bits, size_t home) {
  const Slot* slots = shard.slots;
  size_t capacity = shard.capacity;
  for (size_t i = home;;) {
    uint64_t here = slots[i].key & kPointerMask;
    if (here == pointer_bits || here == 0) return i;
    if (++i == capacity) i = 0;
  }
}

inline size_t AllocTable::find_locked(const Shard& shard, uint64_t pointer_bits, uint64_t hash) {
  if (shard.capacity == 0) return 0;
  size_t slot = probe_locked(shard, pointer_bits, home_of(pointer_bits, hash, shard.capacity));
  return shard.slots[slot].key != 0 ? slot : shard.capacity;
}

// Capacities alternate between 2^k and 3 * 2^(k-1), so a shard grows by 1.5x or 1.33x and its
// load after growing stays above 1/2 (a doubling table drops to 3/8): the slack per live block
// is smaller, and home_of maps onto any capacity.
size_t AllocTable::next_capacity(size_t capacity) {
  if (capacity == 0) return kInitialCapacity;
  if (capacity > kMaxGrowableCapacity) return 0;
  bool power_of_two = (capacity & (capacity - 1)) == 0;
  return power_of_two ? capacity / 2 * 3 : capacity / 3 * 4;
}

bool AllocTable::grow_locked(Shard& shard) {
  size_t new_capacity = next_capacity(shard.capacity);
  if (new_capacity == 0) return false;
  auto* slots = static_cast<Slot*>(map_metadata(new_capacity * sizeof(Slot)));
  if (slots == nullptr) return false;
  for (size_t i = 0; i < shard.capacity; ++i) {
    const Slot& slot = shard.slots[i];
    if (slot.key == 0) continue;
    size_t j = home_of(slot.key & kPointerMask, new_capacity);
    while (slots[j].key != 0) j = j + 1 == new_capacity ? 0 : j + 1;
    slots[j] = slot;
  }
  unmap_metadata(shard.slots, shard.capacity * sizeof(Slot));
  shard.slots = slots;
  shard.capacity = new_capacity;
  return true;
}

// The allocator handed out an address we still hold: the earlier free went untracked (for
// example it happened through a path we do not interpose). The new block wins.
__attribute__((noinline)) void AllocTable::replace_locked(Shard& shard, Slot& slot, Slot packed) {
  AllocRecord old = unpack_locked(slot);
  slot = packed;
  ++shard.erased;
  shard.live_bytes -= old.size;
}

// The insert when the shard is empty or full enough to grow: look for the pointer first, so
// a record replaced in place needs no growth.
__attribute__((noinline)) bool AllocTable::try_insert_slow_locked(Shard& shard, uint64_t hash,
                                                                  Slot packed) {
  uint64_t pointer_bits = packed.key & kPointerMask;
  size_t slot = find_locked(shard, pointer_bits, hash);
  if (slot != shard.capacity) {
    replace_locked(shard, shard.slots[slot], packed);
    return true;
  }
  if (!grow_locked(shard)) return false;
  slot = probe_locked(shard, pointer_bits, home_of(pointer_bits, hash, shard.capacity));
  shard.slots[slot] = packed;
  return true;
}

// Inlined into both callers: one call per insert, not two.
__attribute__((always_inline)) inline bool AllocTable::try_insert_counted(const AllocRecord& rec,
                                                                          bool restore) {
  uint64_t pointer_bits = static_cast<uint64_t>(rec.ptr) >> 3;
  if ((rec.ptr & 7) != 0 || pointer_bits > kPointerMask || pointer_bits == 0) return false;
  uint64_t size = rec.size;
  if (size >= kHugeSize) [[unlikely]] {
    if (!try_note_huge(rec.ptr, size)) return false;
    size = kHugeSize;
  }
  const Slot packed = pack(rec, size);
  uint64_t hash = region_hash(pointer_bits);
  Shard& shard = shards_[shard_of(pointer_bits, hash)];
  SpinLockGuard guard(shard.lock);
  if (shard.count_locked() < shard.grow_at_locked()) [[likely]] {
    size_t slot = probe_locked(shard, pointer_bits, home_of(pointer_bits, hash, shard.capacity));
    Slot& here = shard.slots[slot];
    if (here.key == 0) [[likely]] {
      here = packed;
    } else {
      replace_locked(shard, here, packed);
    }
  } else if (!try_insert_slow_locked(shard, hash, packed)) {
    if (size == kHugeSize) take_huge_size(rec.ptr);
    return false;
  }
  shard.live_bytes += rec.size;
  if (restore) {
    --shard.erased;
  } else {
    ++shard.inserted;
    shard.inserted_bytes += rec.size;
  }
  return true;
}

bool AllocTable::try_insert(const AllocRecord& rec) {
  return try_insert_counted(rec, false);
}

bool AllocTable::try_restore(const AllocRecord& rec) {
  return try_insert_counted(rec, true);
}

// Backward-shift deletion keeps every probe chain intact without tombstones: after emptying
// a slot, later entries of the cluster move back if their home slot allows it. (Remembering
// the window start of the last region seen, to skip its hash, made erase slower: neighbouring
// entries of a cluster mostly come from different regions whose windows overlap.)
__attribute__((noinline)) void AllocTable::erase_slot_locked(Shard& shard, size_t slot) {
  Slot* slots = shard.slots;
  size_t capacity = shard.capacity;
  size_t hole = slot;
  for (size_t i = slot + 1 == capacity ? 0 : slot + 1; slots[i].key != 0;
       i = i + 1 == capacity ? 0 : i + 1) {
    size_t home = home_of(slots[i].key & kPointerMask, capacity);
    // Move entry i into the hole unless its home lies cyclically in (hole, i].
    bool home_after_hole = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
    if (!home_after_hole) {
      slots[hole] = slots[i];
      hole = i;
    }
  }
  slots[hole].key = 0;
}

bool AllocTable::try_erase(uintptr_t ptr, AllocRecord* out, uint64_t* sequence) {
  if ((ptr & 7) != 0) return false;
  uint64_t pointer_bits = static_cast<uint64_t>(ptr) >> 3;
  uint64_t hash = region_hash(pointer_bits);
  Shard& shard = shards_[shard_of(pointer_bits, hash)];
  SpinLockGuard guard(shard.lock);
  size_t slot = find_locked(shard, pointer_bits, hash);
  if (slot == shard.capacity) return false;
  *out = unpack_fields(shard.slots[slot]);
  if (out->size == kHugeSize) [[unlikely]] {
    out->size = take_huge_size(ptr);
  }
  // Most often the next slot is empty and nothing moves: no call into the shift loop.
  size_t next = slot + 1 == shard.capacity ? 0 : slot + 1;
  if (shard.slots[next].key == 0) [[likely]] {
    shard.slots[slot].key = 0;
  } else {
    erase_slot_locked(shard, slot);
  }
  ++shard.erased;
  shard.live_bytes -= out->size;
  if (sequence != nullptr) *sequence = ++shard.erase_sequence;
  return true;
}

bool AllocTable::try_lookup(uintptr_t ptr, AllocRecord* out) {
  if ((ptr & 7) != 0) return false;
  uint64_t pointer_bits = static_cast<uint64_t>(ptr) >> 3;
  uint64_t hash = region_hash(pointer_bits);
  Shard& shard = shards_[shard_of(pointer_bits, hash)];
  SpinLockGuard guard(shard.lock);
  size_t slot = find_locked(shard, pointer_bits, hash);
  if (slot == shard.capacity) return false;
  *out = unpack_locked(shard.slots[slot]);
  return true;
}

bool AllocTable::try_mark_ignored(uintptr_t ptr) {
  if ((ptr & 7) != 0) return false;
  uint64_t pointer_bits = static_cast<uint64_t>(ptr) >> 3;
  uint64_t hash = region_hash(pointer_bits);
  Shard& shard = shards_[shard_of(pointer_bits, hash)];
  SpinLockGuard guard(shard.lock);
  size_t slot = find_locked(shard, pointer_bits, hash);
  if (slot == shard.capacity) return false;
  shard.slots[slot].key |= kIgnoredBit;
  return true;
}

AllocTotals AllocTable::totals() {
  AllocTotals totals;
  for (Shard& shard : shards_) {
    SpinLockGuard guard(shard.lock);
    totals.inserted += shard.inserted;
    totals.inserted_bytes += shard.inserted_bytes;
    totals.erased += shard.erased;
    totals.live += shard.count_locked();
    totals.live_bytes += shard.live_bytes;
  }
  return totals;
}

size_t AllocTable::size() {
  size_t total = 0;
  for (Shard& shard : shards_) {
    SpinLockGuard guard(shard.lock);
    total += shard.count_locked();
  }
  return total;
}

size_t AllocTable::mapped_bytes() {
  size_t total = 0;
  for (Shard& shard : shards_) {
    SpinLockGuard guard(shard.lock);
    total += shard.capacity * sizeof(Slot);
  }
  return total;
}

void AllocTable::lock_all() {
  for (Shard& shard : shards_) shard.lock.lock();
  huge_lock_.lock();
}

void AllocTable::unlock_all() {
  huge_lock_.unlock();
  for (Shard& shard : shards_) shard.lock.unlock();
}

void AllocTable::reset_after_fork() {
  for (Shard& shard : shards_) shard.lock.reset_after_fork();
  huge_lock_.reset_after_fork();
}

void AllocTable::clear() {
  for (Shard& shard : shards_) {
    SpinLockGuard guard(shard.lock);
    for (size_t i = 0; i < shard.capacity; ++i) shard.slots[i] = Slot{0, 0};
    shard.inserted = shard.inserted_bytes = shard.erased = shard.live_bytes = 0;
  }
  SpinLockGuard guard(huge_lock_);
  for (HugeBlock& block : huge_) block = HugeBlock{0, 0};
}

void AllocTable::test_only_reset() {
  for (Shard& shard : shards_) {
    unmap_metadata(shard.slots, shard.capacity * sizeof(Slot));
    shard.slots = nullptr;
    shard.capacity = 0;
    shard.erase_sequence = 0;
    shard.inserted = shard.inserted_bytes = shard.erased = shard.live_bytes = 0;
  }
  for (HugeBlock& block : huge_) block = HugeBlock{0, 0};
}

}  // namespace memtrack::core
