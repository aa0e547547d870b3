// The leak model at exit: unfreed blocks grouped by allocation stack, largest first.
// Runtime-safe: built from the allocation table with mmap-backed arrays only. The same model
// feeds the text report today and the result file for the CLI later.
#pragma once

#include <cstdint>

#include "core/block_records.h"
#include "core/mmap_array.h"
#include "core/result_records.h"
#include "core/stack_depot.h"
#include "runtime/leakcheck/reachability.h"
#include "runtime/leakcheck/retention.h"
#include "runtime/leakcheck/runtime_roots.h"

namespace memtrack::rt {

// The result file's leak kinds and groups (core/result_records.h), as stored.
using core::result::LeakGroup;
using core::result::LeakKind;

struct LeakTotals {
  uint64_t bytes = 0;
  uint64_t blocks = 0;
  uint64_t groups = 0;
};

// How many blocks a sampled block of `size` bytes stands for in the sampled mode's estimates
// (docs/sampling.md): 1/p(size) at the mean interval `interval`, or 1 for a block allocated by
// the C/C++ runtime's own code (frame 0 of its `stack` in `runtime_code`), which always gets a
// stack. Estimates sum these in fixed point, kEstimateScale to one block.
double sample_weight(uint64_t size, uint64_t interval, core::StackView stack,
                     const SystemRuntimeCode& runtime_code);
inline constexpr uint64_t kEstimateScale = uint64_t{1} << 16;
// What one sampled block of `size` bytes and `weight` adds to an estimate: its bytes rounded
// (half a byte against a weight of thousands), its blocks in kEstimateScale units, to be
// rounded once per sum.
struct EstimateShare {
  uint64_t bytes = 0;
  uint64_t scaled_blocks = 0;
};
inline EstimateShare estimate_share(uint64_t size, double weight) {
  return {static_cast<uint64_t>(weight * static_cast<double>(size) + 0.5),
          static_cast<uint64_t>(weight * kEstimateScale + 0.5)};
}

// Not thread safe; one per report.
class LeakReport {
 public:
  // The sampled mode's mean interval in bytes (0: the full mode), before collecting: each
  // group then also estimates what its site holds in all (LeakGroup::estimated_bytes).
  // `runtime_code`: where the allocations that always get a stack are called from (their
  // blocks stand for themselves alone), and `stacks` the depot that tells it by frame 0.
  void set_sampling(uint64_t interval, const SystemRuntimeCode* runtime_code,
                    const core::StackDepot* stacks) {
    sample_interval_ = interval;
    runtime_code_ = runtime_code;
    stacks_ = stacks;
  }

  // Groups every live block of `table` by stack id. Returns false if memory for the working
  // set cannot be mapped.
  [[nodiscard]] bool try_collect(core::BlockRecords& table, uint32_t stack_count);

  // Groups classified blocks by (stack id, kind); definite groups sum the indirect totals of
  // their blocks' cliques (as ReachabilityScan::cliques() lists them). Blocks the C runtime
  // holds for itself (`held`'s runtime_held, if given) form reachable groups of their own,
  // marked runtime_internal.
  [[nodiscard]] bool try_collect_classified(
      const ScanBlocks& blocks, const core::MmapArray<ReachabilityScan::Clique>& cliques,
      uint32_t stack_count, const ReachabilityScan* held = nullptr);

  // Sorts groups by bytes, then blocks (both descending), then stack id, so the order is
  // deterministic for identical runs.
  void sort();

  // Sums over the groups with the given runtime_internal value, over every kind or one.
  LeakTotals totals(bool runtime_internal) const;
  LeakTotals totals(bool runtime_internal, LeakKind kind) const;

  core::MmapArray<LeakGroup>& groups() { return groups_; }
  const core::MmapArray<LeakGroup>& groups() const { return groups_; }

  // What holds the still-reachable blocks, when the scan was asked for it (flag retainers).
  RetentionGraph& retention() { return retention_; }
  const RetentionGraph& retention() const { return retention_; }
  // The block memtrack snapshot --retainers ADDR asked about (address 0: none).
  BlockDescription& block() { return block_; }
  const BlockDescription& block() const { return block_; }

 private:
  // Adds a block of `size` bytes to `group`, and to its estimate if the block was sampled.
  void add_block(LeakGroup& group, uint64_t size) const;

  core::MmapArray<LeakGroup> groups_;
  RetentionGraph retention_;
  BlockDescription block_;
  uint64_t sample_interval_ = 0;
  const SystemRuntimeCode* runtime_code_ = nullptr;
  const core::StackDepot* stacks_ = nullptr;
};

}  // namespace memtrack::rt
