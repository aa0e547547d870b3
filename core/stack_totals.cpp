// Totals by allocation stack (see stack_totals.h).
#include "core/stack_totals.h"

#include "core/sys_linux.h"

namespace memtrack::core {

StackTotals::Counter* StackTotals::chunk_for(uint32_t shard, uint32_t id) {
  std::atomic<Counter*>& slot = chunks_[shard][id / kChunkIds];
  Counter* chunk = slot.load(std::memory_order_acquire);
  if (chunk != nullptr) return chunk;
  constexpr size_t kBytes = sizeof(Counter) * kChunkIds;
  auto* mapped = static_cast<Counter*>(sys::map_pages(kBytes));  // zeroed
  if (mapped == nullptr) return nullptr;
  if (slot.compare_exchange_strong(chunk, mapped, std::memory_order_acq_rel)) return mapped;
  sys::unmap_pages(mapped, kBytes);  // another thread mapped it first
  return chunk;
}

bool StackTotals::add(uint32_t shard, uint32_t id, uint64_t blocks, uint64_t bytes) {
  if (id == 0 || id > StackDepot::kMaxStacks || shard >= kShards) return false;
  Counter* chunk = chunk_for(shard, id);
  if (chunk == nullptr) return false;
  Counter& counter = chunk[id % kChunkIds];
  counter.blocks.fetch_add(blocks, std::memory_order_relaxed);
  counter.bytes.fetch_add(bytes, std::memory_order_relaxed);
  uint32_t highest = highest_.load(std::memory_order_relaxed);
  while (id > highest && !highest_.compare_exchange_weak(highest, id, std::memory_order_release,
                                                         std::memory_order_relaxed)) {
  }
  return true;
}

StackTotals::Totals StackTotals::get(uint32_t id) const {
  Totals totals;
  if (id == 0 || id > StackDepot::kMaxStacks) return totals;
  for (const auto& shard : chunks_) {
    const Counter* chunk = shard[id / kChunkIds].load(std::memory_order_acquire);
    if (chunk == nullptr) continue;
    const Counter& counter = chunk[id % kChunkIds];
    totals.blocks += counter.blocks.load(std::memory_order_relaxed);
    totals.bytes += counter.bytes.load(std::memory_order_relaxed);
  }
  return totals;
}

}  // namespace memtrack::core
