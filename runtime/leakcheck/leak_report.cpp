// Grouping and ordering of unfreed blocks. Runtime-safe: mmap-backed arrays only.
#include "runtime/leakcheck/leak_report.h"

namespace memtrack::rt {

bool LeakReport::try_collect(core::AllocTable& table, uint32_t stack_count) {
  // Stack ids are dense (1..stack_count), so a direct index replaces a hash map. Blocks made
  // while the depot was out of memory carry id 0 and form a group of their own.
  core::MmapArray<LeakGroup> by_stack;
  if (!by_stack.try_reserve(size_t{stack_count} + 1)) return false;
  for (uint32_t id = 0; id <= stack_count; ++id) {
    LeakGroup empty;
    empty.stack_id = id;
    if (!by_stack.try_push_back(empty)) return false;
  }
  table.for_each([&](const core::AllocRecord& rec) {
    // A stack interned after stack_count was read belongs to a block allocated during the
    // report by another thread; it is not part of this snapshot.
    if (rec.stack_id > stack_count) return;
    LeakGroup& group = by_stack[rec.stack_id];
    group.bytes += rec.size;
    group.blocks += 1;
  });
  for (const LeakGroup& group : by_stack) {
    if (group.blocks > 0 && !groups_.try_push_back(group)) return false;
  }
  return true;
}

bool LeakReport::try_collect_classified(const core::MmapArray<ScanBlock>& blocks,
                                        uint32_t stack_count) {
  constexpr uint32_t kKinds = 4;  // definite, indirect, possible, reachable
  core::MmapArray<LeakGroup> by_key;
  if (!by_key.try_resize((size_t{stack_count} + 1) * kKinds)) return false;
  for (size_t i = 0; i < by_key.size(); ++i) {
    by_key[i] = LeakGroup{};
    by_key[i].stack_id = static_cast<uint32_t>(i / kKinds);
    by_key[i].kind = static_cast<LeakKind>(i % kKinds);
  }
  for (const ScanBlock& b : blocks) {
    if (b.stack_id > stack_count) continue;
    LeakKind kind = b.state == BlockState::kReachable  ? LeakKind::kReachable
                    : b.state == BlockState::kPossible ? LeakKind::kPossible
                    : b.state == BlockState::kIndirect ? LeakKind::kIndirect
                                                       : LeakKind::kDefinite;
    LeakGroup& group = by_key[size_t{b.stack_id} * kKinds + static_cast<uint32_t>(kind)];
    group.bytes += b.size;
    group.blocks += 1;
    group.indirect_bytes += b.indirect_bytes;
    group.indirect_blocks += b.indirect_blocks;
  }
  for (const LeakGroup& group : by_key) {
    if (group.blocks > 0 && !groups_.try_push_back(group)) return false;
  }
  return true;
}

void LeakReport::sort() {
  core::heap_sort(groups_.data(), groups_.size(), [](const LeakGroup& a, const LeakGroup& b) {
    // true when a sorts before b: more bytes first, then more blocks, then older stacks.
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.blocks != b.blocks) return a.blocks > b.blocks;
    return a.stack_id < b.stack_id;
  });
}

LeakTotals LeakReport::totals(bool runtime_internal, LeakKind kind) const {
  LeakTotals sum;
  for (const LeakGroup& group : groups_) {
    if (group.runtime_internal != runtime_internal || group.kind != kind) continue;
    sum.bytes += group.bytes;
    sum.blocks += group.blocks;
    sum.groups += 1;
  }
  return sum;
}

LeakTotals LeakReport::totals(bool runtime_internal) const {
  LeakTotals sum;
  for (size_t i = 0; i < groups_.size(); ++i) {
    const LeakGroup& group = groups_[i];
    if (group.runtime_internal != runtime_internal) continue;
    sum.bytes += group.bytes;
    sum.blocks += group.blocks;
    sum.groups += 1;
  }
  return sum;
}

}  // namespace memtrack::rt
