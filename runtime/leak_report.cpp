// Grouping and ordering of unfreed blocks. Runtime-safe: mmap-backed arrays only.
#include "runtime/leak_report.h"

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

void LeakReport::sort() {
  core::heap_sort(groups_.data(), groups_.size(), [](const LeakGroup& a, const LeakGroup& b) {
    // true when a sorts before b: more bytes first, then more blocks, then older stacks.
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.blocks != b.blocks) return a.blocks > b.blocks;
    return a.stack_id < b.stack_id;
  });
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
