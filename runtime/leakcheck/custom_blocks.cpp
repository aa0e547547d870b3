// The program's own allocators' blocks and pools (custom_blocks.h). Two tables, both keyed by
// the block's address: the blocks' records (size, stack), and, for blocks of a pool, the
// pool's number (in the record's size field). The pools' names map to their numbers in an
// open-addressing array under one lock: pools are made and destroyed far more rarely than
// their blocks.
#include "runtime/leakcheck/custom_blocks.h"

#include <atomic>

#include "core/metadata_budget.h"
#include "core/mmap_array.h"
#include "core/spin_lock.h"

namespace memtrack::rt {
namespace {

core::AllocTable g_blocks;
core::AllocTable g_members;  // block address -> its pool's number (AllocRecord::size)
std::atomic<uint64_t> g_lost{0};

enum class SlotState : uint8_t { kEmpty = 0, kUsed = 1, kRemoved = 2 };
struct PoolSlot {
  uintptr_t name;
  SlotState state;
};
core::SpinLock g_pools_lock;
PoolSlot* g_pools = nullptr;  // kMaxCustomPools slots, mapped at the first pool; under the lock
size_t g_pool_count = 0;      // under the lock

size_t pool_home(uintptr_t name) {
  uint64_t h = static_cast<uint64_t>(name) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> 32) & (kMaxCustomPools - 1);
}

// The slot of `name`, or kMaxCustomPools. Under the lock.
size_t find_pool_locked(uintptr_t name) {
  if (g_pools == nullptr) return kMaxCustomPools;
  size_t slot = pool_home(name);
  for (size_t probe = 0; probe < kMaxCustomPools; ++probe) {
    const PoolSlot& s = g_pools[slot];
    if (s.state == SlotState::kEmpty) break;
    if (s.state == SlotState::kUsed && s.name == name) return slot;
    slot = (slot + 1) & (kMaxCustomPools - 1);
  }
  return kMaxCustomPools;
}

// The slot of `name`, made if new; kMaxCustomPools when full or without memory. Under the lock.
size_t find_or_add_pool_locked(uintptr_t name) {
  size_t found = find_pool_locked(name);
  if (found != kMaxCustomPools) return found;
  if (g_pools == nullptr) {
    g_pools = static_cast<PoolSlot*>(core::map_metadata(kMaxCustomPools * sizeof(PoolSlot)));
    if (g_pools == nullptr) return kMaxCustomPools;
  }
  // At most three quarters full, so that every probe for a name that is not there ends.
  if (g_pool_count >= kMaxCustomPools / 4 * 3) return kMaxCustomPools;
  size_t slot = pool_home(name);
  while (g_pools[slot].state == SlotState::kUsed) slot = (slot + 1) & (kMaxCustomPools - 1);
  g_pools[slot] = PoolSlot{name, SlotState::kUsed};
  ++g_pool_count;
  return slot;
}

// A pool's number in g_members: its slot plus one, so that no pool is 0.
uint64_t pool_number(size_t slot) {
  return slot + 1;
}

// The blocks of pool `number` (whole, or only those outside [begin, end) when `outside`),
// forgotten; their count, or -1 if their addresses could not be collected.
long forget_pool_blocks(uint64_t number, bool outside, uintptr_t begin, uintptr_t end) {
  core::MmapArray<uintptr_t> doomed;
  bool ok = true;
  g_members.for_each([&](const core::AllocRecord& member) {
    if (member.size == number && ok) ok = doomed.try_push_back(member.ptr);
  });
  if (!ok) return -1;
  long count = 0;
  for (uintptr_t addr : doomed) {
    core::AllocRecord rec;
    if (!g_blocks.try_lookup(addr, &rec)) continue;
    if (outside && rec.ptr >= begin && rec.ptr <= end && rec.size <= end - rec.ptr) continue;
    core::AllocRecord gone;
    if (g_blocks.try_erase(addr, &gone)) ++count;
    (void)g_members.try_erase(addr, &gone);
  }
  return count;
}

}  // namespace

core::AllocTable& custom_block_table() {
  return g_blocks;
}

bool add_custom_block(uintptr_t addr, uint64_t size, uintptr_t pool, uint32_t stack_id) {
  core::AllocRecord rec;
  rec.ptr = addr;
  rec.size = size;
  rec.stack_id = stack_id;
  uint64_t number = 0;
  if (pool != 0) {
    core::SpinLockGuard guard(g_pools_lock);
    size_t slot = find_or_add_pool_locked(pool);
    if (slot != kMaxCustomPools) number = pool_number(slot);
  }
  bool ok = addr != 0 && (pool == 0 || number != 0) && g_blocks.try_insert(rec);
  core::AllocRecord member;
  if (ok && number != 0) {
    member.ptr = addr;
    member.size = number;
    if (!g_members.try_insert(member)) {
      (void)g_blocks.try_erase(addr, &rec);
      ok = false;
    }
  } else if (ok) {
    (void)g_members.try_erase(addr, &member);  // it was a pool's block before
  }
  if (!ok) g_lost.fetch_add(1, std::memory_order_relaxed);
  return ok;
}

bool remove_custom_block(uintptr_t addr) {
  core::AllocRecord rec;
  if (!g_blocks.try_erase(addr, &rec)) return false;
  (void)g_members.try_erase(addr, &rec);
  return true;
}

bool resize_custom_block(uintptr_t addr, uint64_t size) {
  core::AllocRecord rec;
  if (!g_blocks.try_lookup(addr, &rec)) return false;
  rec.size = size;
  return g_blocks.try_insert(rec);
}

bool move_custom_block(uintptr_t from, uintptr_t to, uint64_t size) {
  core::AllocRecord rec;
  if (!g_blocks.try_erase(from, &rec)) return false;
  core::AllocRecord member;
  uint64_t number = g_members.try_erase(from, &member) ? member.size : 0;
  rec.ptr = to;
  rec.size = size;
  bool ok = to != 0 && g_blocks.try_insert(rec);
  if (ok && number != 0) {
    member.ptr = to;
    member.size = number;
    ok = g_members.try_insert(member);
    if (!ok) (void)g_blocks.try_erase(to, &rec);
  }
  if (!ok) g_lost.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool create_custom_pool(uintptr_t pool) {
  core::SpinLockGuard guard(g_pools_lock);
  return find_or_add_pool_locked(pool) != kMaxCustomPools;
}

long destroy_custom_pool(uintptr_t pool) {
  uint64_t number = 0;
  {
    core::SpinLockGuard guard(g_pools_lock);
    size_t slot = find_pool_locked(pool);
    if (slot == kMaxCustomPools) return -1;
    g_pools[slot].state = SlotState::kRemoved;
    --g_pool_count;
    number = pool_number(slot);
  }
  // A pool made again under the same name meanwhile may take the same slot, and its first
  // blocks would go with the old ones: the program destroyed and made it at once from two
  // threads, which no pool allocator does.
  return forget_pool_blocks(number, false, 0, 0);
}

long trim_custom_pool(uintptr_t pool, uintptr_t begin, uint64_t size) {
  uint64_t number = 0;
  {
    core::SpinLockGuard guard(g_pools_lock);
    size_t slot = find_pool_locked(pool);
    if (slot == kMaxCustomPools) return -1;
    number = pool_number(slot);
  }
  uintptr_t end = size > UINTPTR_MAX - begin ? UINTPTR_MAX : begin + static_cast<uintptr_t>(size);
  return forget_pool_blocks(number, true, begin, end);
}

bool move_custom_pool(uintptr_t from, uintptr_t to) {
  core::SpinLockGuard guard(g_pools_lock);
  size_t slot = find_pool_locked(from);
  if (slot == kMaxCustomPools) return false;
  if (to == from) return true;
  if (find_pool_locked(to) != kMaxCustomPools) return false;
  // A slot is found from its name's home, so the new name takes a slot of its own and the
  // pool's blocks are given its number.
  size_t fresh = find_or_add_pool_locked(to);
  if (fresh == kMaxCustomPools) return false;
  g_pools[slot].state = SlotState::kRemoved;
  --g_pool_count;
  const uint64_t old_number = pool_number(slot);
  const uint64_t new_number = pool_number(fresh);
  core::MmapArray<uintptr_t> members;
  bool ok = true;
  g_members.for_each([&](const core::AllocRecord& member) {
    if (member.size == old_number && ok) ok = members.try_push_back(member.ptr);
  });
  for (uintptr_t addr : members) {
    core::AllocRecord member;
    member.ptr = addr;
    member.size = new_number;
    if (!g_members.try_insert(member)) g_lost.fetch_add(1, std::memory_order_relaxed);
  }
  return ok;
}

bool custom_pool_exists(uintptr_t pool) {
  core::SpinLockGuard guard(g_pools_lock);
  return find_pool_locked(pool) != kMaxCustomPools;
}

size_t custom_block_count() {
  return g_blocks.size();
}

uint64_t custom_blocks_lost() {
  return g_lost.load(std::memory_order_relaxed);
}

void custom_blocks_lock_all() {
  g_pools_lock.lock();
  g_blocks.lock_all();
  g_members.lock_all();
}

void custom_blocks_unlock_all() {
  g_members.unlock_all();
  g_blocks.unlock_all();
  g_pools_lock.unlock();
}

void custom_blocks_reset_after_fork() {
  g_members.reset_after_fork();
  g_blocks.reset_after_fork();
  g_pools_lock.reset_after_fork();
}

}  // namespace memtrack::rt
