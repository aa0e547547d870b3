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

namespace memtrack::rt {

// The result file's leak kinds and groups (core/result_records.h), as stored.
using core::result::LeakGroup;
using core::result::LeakKind;

struct LeakTotals {
  uint64_t bytes = 0;
  uint64_t blocks = 0;
  uint64_t groups = 0;
};

// Not thread safe; one per report.
class LeakReport {
 public:
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

 private:
  core::MmapArray<LeakGroup> groups_;
};

}  // namespace memtrack::rt
