// Sharded open-addressing table of live allocations. Runtime-safe: mmap only.
#include "core/alloc_table.h"

#include "core/metadata_budget.h"

namespace memtrack::core {
namespace {
constexpr size_t kInitialCapacity = 512;  // 12 KiB of slots, three pages
}

// Fibonacci hashing of the pointer without its always-zero low bits. The top 6 bits pick the
// shard and the low bits the slot, so the two choices are independent. The low bits of a
// product depend only on the low bits of the pointer, so page- or MiB-aligned blocks would all
// share a few home slots and form long probe clusters; folding the well-mixed high half into
// the low half spreads them. The fold leaves the top 6 bits, and so the shard, unchanged.
size_t AllocTable::hash_of(uintptr_t ptr) {
  uint64_t h = (static_cast<uint64_t>(ptr) >> 4) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h ^ (h >> 32));
}

size_t AllocTable::shard_of(uintptr_t ptr) {
  return hash_of(ptr) >> 58;
}

size_t AllocTable::find_locked(const Shard& shard, uintptr_t ptr) {
  if (shard.capacity == 0) return 0;
  size_t mask = shard.capacity - 1;
  for (size_t i = hash_of(ptr) & mask;; i = (i + 1) & mask) {
    uintptr_t here = shard.slots[i].ptr;
    if (here == ptr) return i;
    if (here == 0) return shard.capacity;
  }
}

bool AllocTable::grow_locked(Shard& shard) {
  size_t new_capacity = shard.capacity == 0 ? kInitialCapacity : shard.capacity * 2;
  auto* slots = static_cast<AllocRecord*>(map_metadata(new_capacity * sizeof(AllocRecord)));
  if (slots == nullptr) return false;
  size_t mask = new_capacity - 1;
  for (size_t i = 0; i < shard.capacity; ++i) {
    const AllocRecord& rec = shard.slots[i];
    if (rec.ptr == 0) continue;
    size_t j = hash_of(rec.ptr) & mask;
    while (slots[j].ptr != 0) j = (j + 1) & mask;
    slots[j] = rec;
  }
  unmap_metadata(shard.slots, shard.capacity * sizeof(AllocRecord));
  shard.slots = slots;
  shard.capacity = new_capacity;
  return true;
}

bool AllocTable::try_insert(const AllocRecord& rec) {
  Shard& shard = shards_[shard_of(rec.ptr)];
  SpinLockGuard guard(shard.lock);
  size_t slot = find_locked(shard, rec.ptr);
  if (slot != shard.capacity) {
    // The allocator handed out an address we still hold: the earlier free went untracked
    // (for example it happened through a path we do not interpose). The new block wins.
    shard.slots[slot] = rec;
    return true;
  }
  if ((shard.count + 1) * 4 > shard.capacity * 3 && !grow_locked(shard)) return false;
  size_t mask = shard.capacity - 1;
  size_t i = hash_of(rec.ptr) & mask;
  while (shard.slots[i].ptr != 0) i = (i + 1) & mask;
  shard.slots[i] = rec;
  ++shard.count;
  return true;
}

// Backward-shift deletion keeps every probe chain intact without tombstones: after emptying
// a slot, later entries of the cluster move back if their home slot allows it.
void AllocTable::erase_slot_locked(Shard& shard, size_t slot) {
  size_t mask = shard.capacity - 1;
  size_t hole = slot;
  for (size_t i = (slot + 1) & mask; shard.slots[i].ptr != 0; i = (i + 1) & mask) {
    size_t home = hash_of(shard.slots[i].ptr) & mask;
    // Move entry i into the hole unless its home lies cyclically in (hole, i].
    bool home_after_hole = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
    if (!home_after_hole) {
      shard.slots[hole] = shard.slots[i];
      hole = i;
    }
  }
  shard.slots[hole] = AllocRecord{};
  --shard.count;
}

bool AllocTable::try_erase(uintptr_t ptr, AllocRecord* out) {
  Shard& shard = shards_[shard_of(ptr)];
  SpinLockGuard guard(shard.lock);
  size_t slot = find_locked(shard, ptr);
  if (slot == shard.capacity) return false;
  *out = shard.slots[slot];
  erase_slot_locked(shard, slot);
  return true;
}

bool AllocTable::try_lookup(uintptr_t ptr, AllocRecord* out) {
  Shard& shard = shards_[shard_of(ptr)];
  SpinLockGuard guard(shard.lock);
  size_t slot = find_locked(shard, ptr);
  if (slot == shard.capacity) return false;
  *out = shard.slots[slot];
  return true;
}

bool AllocTable::try_mark_ignored(uintptr_t ptr) {
  Shard& shard = shards_[shard_of(ptr)];
  SpinLockGuard guard(shard.lock);
  size_t slot = find_locked(shard, ptr);
  if (slot == shard.capacity) return false;
  shard.slots[slot].ignored = 1;
  return true;
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
    total += shard.capacity * sizeof(AllocRecord);
  }
  return total;
}

void AllocTable::lock_all() {
  for (Shard& shard : shards_) shard.lock.lock();
}

void AllocTable::unlock_all() {
  for (Shard& shard : shards_) shard.lock.unlock();
}

void AllocTable::reset_after_fork() {
  for (Shard& shard : shards_) shard.lock.reset_after_fork();
}

void AllocTable::test_only_reset() {
  for (Shard& shard : shards_) {
    unmap_metadata(shard.slots, shard.capacity * sizeof(AllocRecord));
    shard.slots = nullptr;
    shard.capacity = 0;
    shard.count = 0;
  }
}

}  // namespace memtrack::core
