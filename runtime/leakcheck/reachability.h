// Classification of live blocks at exit, with memcheck's rules (docs/runtime.md,
// "Reachability"): a mark phase from the roots (start pointers make blocks reachable,
// interior pointers only possibly lost, unless one of memcheck's heuristics recognises them),
// then cliques among the unreached blocks: in address order, each unclaimed block is a
// definitely lost "leader" and every unreached block it reaches is indirectly lost.
// Runtime-safe: mmap-backed arrays only. Not thread safe; the caller stops other threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/mmap_array.h"
#include "core/sys_linux.h"

namespace memtrack::rt {

enum class BlockState : uint8_t { kUnreached = 0, kIndirect = 1, kPossible = 2, kReachable = 3 };

struct ScanBlock {
  uintptr_t start;
  uint64_t size;
  uint32_t stack_id;
  BlockState state;
  uint8_t ignored;  // memtrack_ignore_object: treated as a root
  uint8_t reserved[2];
  uint64_t indirect_bytes;  // for a clique leader: what its clique holds
  uint64_t indirect_blocks;
};

class ReachabilityScan {
 public:
  // `blocks` must be sorted by start and stay alive while the scan runs. `readonly` lists
  // read-only file mappings (sorted by start), where vtables live (multiple inheritance
  // heuristic). Returns false if the work list cannot be mapped.
  [[nodiscard]] bool try_init(core::MmapArray<ScanBlock>& blocks,
                              const core::MmapArray<core::sys::MemoryRange>& readonly);

  // Treats every aligned word of [begin, end) as a root. The memory must be readable.
  void scan_root_range(uintptr_t begin, uintptr_t end);
  // Treats `value` (a register) as a root.
  void scan_root_word(uintptr_t value);
  // Makes every ignored block reachable, as if a root pointed at it.
  void mark_ignored();
  // Scans reachable and possibly lost blocks until nothing changes. Returns false if the
  // work list overflowed mmap (the result is then conservative only in part).
  bool propagate();
  // Forms the cliques of the unreached blocks (definite leaders and their indirect blocks).
  void classify_unreached();

  // Index of the block containing `address` (a zero-size block counts as one byte), or -1.
  long find_block(uintptr_t address) const;

 private:
  void reach(uintptr_t value, bool from_definite);
  void scan_block_words(const ScanBlock& block, bool from_definite);
  bool heuristic_start(const ScanBlock& block, uintptr_t value) const;
  bool is_readonly_data(uintptr_t address) const;
  void claim(long leader, uintptr_t value);

  core::MmapArray<ScanBlock>* blocks_ = nullptr;
  const core::MmapArray<core::sys::MemoryRange>* readonly_ = nullptr;
  core::MmapArray<uint32_t> work_;
  uintptr_t lowest_ = 0;
  uintptr_t highest_ = 0;  // one past the end of the highest block
  bool overflow_ = false;
};

}  // namespace memtrack::rt
