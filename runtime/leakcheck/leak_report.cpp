// Grouping and ordering of unfreed blocks. Runtime-safe: mmap-backed arrays only.
#include "runtime/leakcheck/leak_report.h"

#include "core/sampling.h"

namespace memtrack::rt {

double sample_weight(uint64_t size, uint64_t interval, core::StackView stack,
                     const SystemRuntimeCode& runtime_code) {
  if (stack.size > 0 && runtime_code.contains(stack.frames[0] - 1)) return 1.0;
  return 1.0 / core::sample_probability(size, interval);
}

void LeakReport::add_block(LeakGroup& group, uint64_t size) const {
  group.bytes += size;
  group.blocks += 1;
  // A sampled block stands for 1/p blocks of its size (docs/sampling.md); its blocks are
  // rounded once per group, when the groups are taken out.
  if (sample_interval_ == 0 || group.stack_id == core::StackDepot::kInvalidId) return;
  double weight =
      runtime_code_ != nullptr && stacks_ != nullptr
          ? sample_weight(size, sample_interval_, stacks_->get(group.stack_id), *runtime_code_)
          : 1.0 / core::sample_probability(size, sample_interval_);
  EstimateShare share = estimate_share(size, weight);
  group.estimated_bytes += share.bytes;
  group.estimated_blocks += share.scaled_blocks;
}

bool LeakReport::try_collect(core::BlockRecords& table, uint32_t stack_count) {
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
    add_block(by_stack[rec.stack_id], rec.size);
  });
  for (LeakGroup& group : by_stack) {
    group.estimated_blocks = (group.estimated_blocks + kEstimateScale / 2) / kEstimateScale;
    if (group.blocks > 0 && !groups_.try_push_back(group)) return false;
  }
  return true;
}

bool LeakReport::try_collect_classified(const ScanBlocks& blocks,
                                        const core::MmapArray<ReachabilityScan::Clique>& cliques,
                                        uint32_t stack_count, const ReachabilityScan* held) {
  // One group per (stack id, kind), indexed directly. Freshly mapped memory is zero, so only
  // the pages of the groups that occur are ever touched; a group learns its key when it is
  // taken out. A fifth slot per stack holds the blocks the C runtime holds for itself.
  constexpr uint32_t kKinds = 4;  // definite, indirect, possible, reachable
  constexpr uint32_t kSlots = kKinds + 1;
  constexpr uint32_t kRuntimeHeld = kKinds;
  static_assert(static_cast<uint32_t>(LeakKind::kDefinite) == 0 &&
                static_cast<uint32_t>(LeakKind::kIndirect) == 1 &&
                static_cast<uint32_t>(LeakKind::kPossible) == 2 &&
                static_cast<uint32_t>(LeakKind::kReachable) == 3);
  // BlockState to LeakKind: a block left unreached is definitely lost.
  constexpr LeakKind kKindOf[] = {LeakKind::kDefinite, LeakKind::kIndirect, LeakKind::kPossible,
                                  LeakKind::kReachable};
  core::MmapArray<LeakGroup> by_key;
  if (!by_key.try_resize((size_t{stack_count} + 1) * kSlots)) return false;
  for (size_t i = 0; i < blocks.size(); ++i) {
    uint32_t stack_id = blocks.stack_id(i);
    if (stack_id > stack_count) continue;
    uint32_t slot = held != nullptr && held->runtime_held(i)
                        ? kRuntimeHeld
                        : static_cast<uint32_t>(kKindOf[static_cast<uint32_t>(blocks.state(i))]);
    LeakGroup& group = by_key[size_t{stack_id} * kSlots + slot];
    group.stack_id = stack_id;  // add_block's test of a sampled block
    add_block(group, blocks.size_of(i));
  }
  for (const ReachabilityScan::Clique& clique : cliques) {
    uint32_t stack_id = blocks.stack_id(clique.leader);
    if (stack_id > stack_count) continue;
    LeakGroup& group = by_key[size_t{stack_id} * kSlots];
    group.indirect_bytes += clique.bytes;
    group.indirect_blocks += clique.blocks;
  }
  for (size_t i = 0; i < by_key.size(); ++i) {
    LeakGroup group = by_key[i];
    if (group.blocks == 0) continue;
    group.estimated_blocks = (group.estimated_blocks + kEstimateScale / 2) / kEstimateScale;
    group.stack_id = static_cast<uint32_t>(i / kSlots);
    const uint32_t slot = static_cast<uint32_t>(i % kSlots);
    group.runtime_internal = slot == kRuntimeHeld;
    group.kind = group.runtime_internal ? LeakKind::kReachable : static_cast<LeakKind>(slot);
    if (!groups_.try_push_back(group)) return false;
  }
  return true;
}

void LeakReport::sort() {
  core::heap_sort(groups_.data(), groups_.size(), [](const LeakGroup& a, const LeakGroup& b) {
    // true when a sorts before b: more bytes first (estimated in the sampled mode), then
    // more blocks, then older stacks.
    uint64_t a_bytes = a.estimated_bytes != 0 ? a.estimated_bytes : a.bytes;
    uint64_t b_bytes = b.estimated_bytes != 0 ? b.estimated_bytes : b.bytes;
    if (a_bytes != b_bytes) return a_bytes > b_bytes;
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
