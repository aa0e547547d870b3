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
constexpr uint64_t kAlignedBit = uint64_t{1} << 47;
constexpr uint64_t kIgnoredBit = uint64_t{1} << 48;
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
uint64_t AllocTable::region_hash(uint64_t pointer_bits) {
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
size_t AllocTable::shard_of(uintptr_t ptr) {
  uint64_t group = (static_cast<uint64_t>(ptr) >> kArenaShift) * 0xD6E8FEB86659FD93ull;
  uint64_t within = region_hash(static_cast<uint64_t>(ptr) >> 3) >> (64 - kShardsPerGroupBits);
  return static_cast<size_t>((group >> (64 - kGroupBits)) << kShardsPerGroupBits | within);
}

// The home slot: the window start spread over any capacity by a multiply (capacities are not
// all powers of two, see next_capacity; they stay below 2^32, so 32 hash bits times the
// capacity fit in 64 bits on every target), plus the offset within the region.
size_t AllocTable::home_of(uint64_t pointer_bits, size_t capacity) {
  uint64_t window_hash = region_hash(pointer_bits) << kShardsPerGroupBits;  // not the shard's
  auto start = static_cast<size_t>(((window_hash >> 32) * static_cast<uint64_t>(capacity)) >> 32);
  size_t home =
      start + static_cast<size_t>((pointer_bits >> (kGranuleShift - 3)) & (kWindowSlots - 1));
  return home < capacity ? home : home - capacity;
}

bool AllocTable::try_pack(const AllocRecord& rec, Slot* slot) {
  uint64_t pointer_bits = static_cast<uint64_t>(rec.ptr) >> 3;
  if ((rec.ptr & 7) != 0 || pointer_bits > kPointerMask || pointer_bits == 0) return false;
  uint64_t size = rec.size;
  if (size >= kHugeSize) {
    SpinLockGuard guard(huge_lock_);
    HugeBlock* free_entry = nullptr;
    for (HugeBlock& block : huge_) {
      if (block.ptr == rec.ptr || (block.ptr == 0 && free_entry == nullptr)) free_entry = &block;
    }
    if (free_entry == nullptr) return false;
    *free_entry = HugeBlock{rec.ptr, rec.size};
    size = kHugeSize;
  }
  slot->key = pointer_bits | static_cast<uint64_t>(rec.family) << kFamilyShift |
              (rec.aligned ? kAlignedBit : 0) | (rec.ignored ? kIgnoredBit : 0) |
              (rec.reported ? kReportedBit : 0) |
              static_cast<uint64_t>(rec.epoch % kEpochModulus) << kEpochShift;
  slot->size_and_stack = size | static_cast<uint64_t>(rec.stack_id) << kSizeBits;
  return true;
}

AllocRecord AllocTable::unpack_locked(const Slot& slot) {
  AllocRecord rec;
  rec.ptr = static_cast<uintptr_t>((slot.key & kPointerMask) << 3);
  rec.size = slot.size_and_stack & kSizeMask;
  rec.stack_id = static_cast<uint32_t>(slot.size_and_stack >> kSizeBits);
  rec.family = static_cast<AllocFamily>((slot.key >> kFamilyShift) & 3);
  rec.aligned = (slot.key & kAlignedBit) != 0 ? 1 : 0;
  rec.ignored = (slot.key & kIgnoredBit) != 0 ? 1 : 0;
  rec.reported = (slot.key & kReportedBit) != 0 ? 1 : 0;
  rec.epoch = static_cast<uint16_t>(slot.key >> kEpochShift);
  if (rec.size == kHugeSize) {
    SpinLockGuard guard(huge_lock_);
    for (const HugeBlock& block : huge_) {
      if (block.ptr == rec.ptr) rec.size = block.size;
    }
  }
  return rec;
}

uint64_t AllocTable::take_huge_size(uintptr_t ptr) {
  SpinLockGuard guard(huge_lock_);
  for (HugeBlock& block : huge_) {
    if (block.ptr == ptr) {
      block.ptr = 0;
      return block.size;
    }
  }
  return kHugeSize;
}

size_t AllocTable::find_locked(const Shard& shard, uint64_t pointer_bits) {
  if (shard.capacity == 0) return 0;
  size_t slot = probe_locked(shard, pointer_bits);
  return (shard.slots[slot].key & kPointerMask) == pointer_bits ? slot : shard.capacity;
}

// The slot holding `pointer_bits`, or else the empty slot that ends its probe run (where an
// insert puts it). The shard must have slots; a free slot always exists (load <= 3/4).
size_t AllocTable::probe_locked(const Shard& shard, uint64_t pointer_bits) {
  size_t capacity = shard.capacity;
  for (size_t i = home_of(pointer_bits, capacity);; i = i + 1 == capacity ? 0 : i + 1) {
    uint64_t here = shard.slots[i].key & kPointerMask;
    if (here == pointer_bits || here == 0) return i;
  }
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

bool AllocTable::try_insert(const AllocRecord& rec) {
  return try_insert_counted(rec, false);
}

bool AllocTable::try_restore(const AllocRecord& rec) {
  return try_insert_counted(rec, true);
}

bool AllocTable::try_insert_counted(const AllocRecord& rec, bool restore) {
  Slot packed;
  if (!try_pack(rec, &packed)) return false;
  uint64_t pointer_bits = packed.key & kPointerMask;
  Shard& shard = shards_[shard_of(rec.ptr)];
  SpinLockGuard guard(shard.lock);
  size_t slot = shard.capacity == 0 ? 0 : probe_locked(shard, pointer_bits);
  if (shard.capacity != 0 && shard.slots[slot].key != 0) {
    // The allocator handed out an address we still hold: the earlier free went untracked
    // (for example it happened through a path we do not interpose). The new block wins.
    AllocRecord old = unpack_locked(shard.slots[slot]);
    shard.slots[slot] = packed;
    ++shard.erased;
    shard.live_bytes -= old.size;
  } else {
    if ((shard.count + 1) * 4 > shard.capacity * 3) {
      if (!grow_locked(shard)) {
        if (rec.size >= kHugeSize) take_huge_size(rec.ptr);
        return false;
      }
      slot = probe_locked(shard, pointer_bits);
    }
    shard.slots[slot] = packed;
    ++shard.count;
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

// Backward-shift deletion keeps every probe chain intact without tombstones: after emptying
// a slot, later entries of the cluster move back if their home slot allows it.
void AllocTable::erase_slot_locked(Shard& shard, size_t slot) {
  size_t capacity = shard.capacity;
  size_t hole = slot;
  for (size_t i = slot + 1 == capacity ? 0 : slot + 1; shard.slots[i].key != 0;
       i = i + 1 == capacity ? 0 : i + 1) {
    size_t home = home_of(shard.slots[i].key & kPointerMask, capacity);
    // Move entry i into the hole unless its home lies cyclically in (hole, i].
    bool home_after_hole = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
    if (!home_after_hole) {
      shard.slots[hole] = shard.slots[i];
      hole = i;
    }
  }
  shard.slots[hole] = Slot{0, 0};
  --shard.count;
}

bool AllocTable::try_erase(uintptr_t ptr, AllocRecord* out) {
  if ((ptr & 7) != 0) return false;
  Shard& shard = shards_[shard_of(ptr)];
  SpinLockGuard guard(shard.lock);
  size_t slot = find_locked(shard, static_cast<uint64_t>(ptr) >> 3);
  if (slot == shard.capacity) return false;
  *out = unpack_locked(shard.slots[slot]);
  if ((shard.slots[slot].size_and_stack & kSizeMask) == kHugeSize) take_huge_size(ptr);
  erase_slot_locked(shard, slot);
  ++shard.erased;
  shard.live_bytes -= out->size;
  return true;
}

bool AllocTable::try_lookup(uintptr_t ptr, AllocRecord* out) {
  if ((ptr & 7) != 0) return false;
  Shard& shard = shards_[shard_of(ptr)];
  SpinLockGuard guard(shard.lock);
  size_t slot = find_locked(shard, static_cast<uint64_t>(ptr) >> 3);
  if (slot == shard.capacity) return false;
  *out = unpack_locked(shard.slots[slot]);
  return true;
}

bool AllocTable::try_mark_ignored(uintptr_t ptr) {
  if ((ptr & 7) != 0) return false;
  Shard& shard = shards_[shard_of(ptr)];
  SpinLockGuard guard(shard.lock);
  size_t slot = find_locked(shard, static_cast<uint64_t>(ptr) >> 3);
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
    totals.live += shard.count;
    totals.live_bytes += shard.live_bytes;
  }
  return totals;
}

size_t AllocTable::size() {
  size_t total = 0;
  for (Shard& shard : shards_) {
    SpinLockGuard guard(shard.lock);
    total += shard.count;
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

void AllocTable::test_only_reset() {
  for (Shard& shard : shards_) {
    unmap_metadata(shard.slots, shard.capacity * sizeof(Slot));
    shard.slots = nullptr;
    shard.capacity = 0;
    shard.count = 0;
    shard.inserted = shard.inserted_bytes = shard.erased = shard.live_bytes = 0;
  }
  for (HugeBlock& block : huge_) block = HugeBlock{0, 0};
}

}  // namespace memtrack::core
