// Sharded open-addressing table of live allocations. Runtime-safe: mmap only.
#include "core/alloc_table.h"

#include "core/metadata_budget.h"

namespace memtrack::core {
namespace {
constexpr size_t kInitialCapacity = 512;  // 8 KiB of slots, two pages

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

// The slot within a shard: Fibonacci hashing of the pointer bits. The low bits of a product
// depend only on the low bits of the pointer, so page- or MiB-aligned blocks would all share a
// few home slots and form long probe clusters; folding the well-mixed high half into the low
// half spreads them; the fold leaves the top 6 bits, which pick the shard, unchanged. (A
// stronger mixer measured no shorter probes, and costs on every probe of a backward shift.)
uint64_t AllocTable::hash_of(uint64_t pointer_bits) {
  uint64_t h = (pointer_bits >> 1) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 32);
}

// The top 6 bits of the same hash pick the shard, independent of the slot bits. (Choosing
// the shard by 64 MiB region, so that threads on different glibc arenas keep to shards of
// their own, measured 27% slower with one thread and no better with two.)
size_t AllocTable::shard_of(uintptr_t ptr) {
  return static_cast<size_t>(hash_of(static_cast<uint64_t>(ptr) >> 3) >> 58);
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
  size_t mask = shard.capacity - 1;
  for (size_t i = static_cast<size_t>(hash_of(pointer_bits) & mask);; i = (i + 1) & mask) {
    uint64_t here = shard.slots[i].key & kPointerMask;
    if (here == pointer_bits) return i;
    if (here == 0) return shard.capacity;
  }
}

bool AllocTable::grow_locked(Shard& shard) {
  size_t new_capacity = shard.capacity == 0 ? kInitialCapacity : shard.capacity * 2;
  auto* slots = static_cast<Slot*>(map_metadata(new_capacity * sizeof(Slot)));
  if (slots == nullptr) return false;
  size_t mask = new_capacity - 1;
  for (size_t i = 0; i < shard.capacity; ++i) {
    const Slot& slot = shard.slots[i];
    if (slot.key == 0) continue;
    size_t j = static_cast<size_t>(hash_of(slot.key & kPointerMask) & mask);
    while (slots[j].key != 0) j = (j + 1) & mask;
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
  size_t slot = find_locked(shard, pointer_bits);
  if (slot != shard.capacity) {
    // The allocator handed out an address we still hold: the earlier free went untracked
    // (for example it happened through a path we do not interpose). The new block wins.
    AllocRecord old = unpack_locked(shard.slots[slot]);
    shard.slots[slot] = packed;
    ++shard.erased;
    shard.live_bytes -= old.size;
  } else {
    if ((shard.count + 1) * 4 > shard.capacity * 3 && !grow_locked(shard)) {
      if (rec.size >= kHugeSize) take_huge_size(rec.ptr);
      return false;
    }
    size_t mask = shard.capacity - 1;
    size_t i = static_cast<size_t>(hash_of(pointer_bits) & mask);
    while (shard.slots[i].key != 0) i = (i + 1) & mask;
    shard.slots[i] = packed;
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
  size_t mask = shard.capacity - 1;
  size_t hole = slot;
  for (size_t i = (slot + 1) & mask; shard.slots[i].key != 0; i = (i + 1) & mask) {
    size_t home = static_cast<size_t>(hash_of(shard.slots[i].key & kPointerMask) & mask);
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
