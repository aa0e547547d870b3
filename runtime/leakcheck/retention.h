// Who keeps the still-reachable blocks alive (docs/runtime.md, "Retention"): the heap graph of
// a finished leak scan, its dominator tree and the retained sizes, and the blocks grouped by
// allocation site and by what holds them. Runtime-safe: mmap-backed arrays only. Not thread
// safe; built while the scan's threads are still stopped (it reads the blocks again).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/mmap_array.h"
#include "core/result_format.h"
#include "runtime/leakcheck/reachability.h"
#include "runtime/leakcheck/scan_blocks.h"
#include "runtime/unwind/elf_symbols.h"
#include "runtime/unwind/fast_unwind.h"

namespace memtrack::rt {

using core::result::HolderKind;
using core::result::kNoGroup;
using core::result::kNoRetainer;
using core::result::RootKind;

// One root range (or set of root words) as the scan read it; root edges name it by index.
struct RootSource {
  RootKind kind = RootKind::kData;
  uint32_t tid = 0;     // the thread of a stack or of registers
  uintptr_t start = 0;  // the range (0, 0 for registers, ignored blocks and streams)
  uintptr_t end = 0;
  // A stack's frames (walk_frames_from), in the scan's frame array: a root word lies in the
  // first frame whose CFA is above it. Above the last CFA of a complete walk, up to the
  // thread pointer's page, lie the thread's static TLS and descriptor.
  uint32_t first_frame = 0;
  uint32_t frame_count = 0;
  bool frames_complete = false;
  uintptr_t thread_pointer = 0;
};

// Names the variable a root word of kind kData lies in (describe_data_address).
using DataNamer = DataSymbolInfo (*)(uintptr_t address);

// A named root: a variable, a thread's stack or registers, a registered region... The
// retention graph's nodes just below its virtual root.
struct Retainer {
  RootKind kind = RootKind::kData;
  uint32_t source = 0;                      // its RootSource
  uint32_t tid = 0;                         // the source's thread
  uint32_t frame = core::result::kNoFrame;  // a stack's frame (0 innermost), or the whole stack
  uintptr_t pc = 0;                         // where that frame was
  uintptr_t start = 0;                      // the variable (symbol) or the source's range
  uint64_t size = 0;
  const char* symbol = nullptr;  // mangled name of the variable, or nullptr
  const char* module = nullptr;  // the module its address lies in, or nullptr
  uintptr_t module_offset = 0;   // start relative to the module's load bias
  uint64_t retained_bytes = 0;   // what would become unreachable without it
  uint64_t retained_blocks = 0;
};

// The groups form a tree, the dominator tree summed by site: a group of kind kSite lies under
// the group of the blocks that dominate its blocks (parent), the others at the top.
struct RetentionGroup {
  uint32_t stack_id = 0;
  HolderKind holder_kind = HolderKind::kSite;
  uint32_t holder = 0;
  uint32_t root = 0;           // the retainer at the top of the dominator chain, or kNoRetainer
  uint32_t parent = kNoGroup;  // kind kSite: the holding blocks' group (an index of groups())
  uint64_t bytes = 0;
  uint64_t blocks = 0;
  uint64_t retained_bytes = 0;  // what these blocks keep alive, themselves included
  uint64_t retained_blocks = 0;
};

// One block as memtrack snapshot --retainers ADDR describes it: its dominator chain up to the
// root that holds it, and who points at it.
struct BlockLink {
  core::result::LinkKind kind = core::result::LinkKind::kBlock;
  uint32_t stack_id = 0;
  uint32_t retainer = 0;
  uintptr_t start = 0;
  uint64_t size = 0;
  uint64_t offset = 0;  // a referrer block: where its pointer lies; a root: the word's address
};
struct BlockDescription {
  uintptr_t address = 0;
  bool found = false;  // a live block holds the address
  BlockState state = BlockState::kUnreached;
  uintptr_t start = 0;
  uint64_t size = 0;
  uint32_t stack_id = 0;
  uint64_t retained_bytes = 0;
  uint64_t retained_blocks = 0;
  BlockLink chain[core::result::kMaxBlockLinks];  // nearest first, the root last
  uint16_t chain_count = 0;
  BlockLink referrers[core::result::kMaxBlockLinks];
  uint16_t referrer_count = 0;
};

class RetentionGraph {
 public:
  // Builds the graph of the program's reachable blocks (state kReachable, not held by the C
  // runtime) from `scan`'s root edges, computes the dominator tree and the retained sizes,
  // and groups the blocks. `namer` names kData root words (nullptr: by source); `frames` holds
  // the stacks' frames the sources refer to. With `describe` (its address set), also describes
  // the block that holds that address (memtrack snapshot --retainers ADDR), while the blocks
  // are still as the scan saw them: its referrers are read from them. Returns false if memory
  // could not be mapped.
  [[nodiscard]] bool try_build(const ScanBlocks& blocks, const ReachabilityScan& scan,
                               const RootSource* sources, size_t source_count, DataNamer namer,
                               const FrameSpan* frames = nullptr,
                               BlockDescription* describe = nullptr);

  // Forgets everything built (after a failed try_build): no retainers, no groups.
  void clear();
  // Built, with at least its retainers and groups (false before try_build or after clear).
  bool built() const { return built_; }

  const core::MmapArray<Retainer>& retainers() const { return retainers_; }
  const core::MmapArray<RetentionGroup>& groups() const { return groups_; }
  // The passes the dominator computation took, and whether it converged and every root edge
  // was kept (otherwise some blocks' holders are approximate).
  uint32_t passes() const { return passes_; }
  bool complete() const { return complete_; }
  // What the blocks reached from several roots at once retain together.
  uint64_t shared_bytes() const { return shared_bytes_; }
  uint64_t shared_blocks() const { return shared_blocks_; }

  // Per block, for tests (each looks the block up in the whole order): its immediate dominator
  // as a block index (-1: a retainer or the virtual root, see dominating_retainer), what it
  // retains (0 for a block not in the graph), and its group (kNoGroup if none).
  long dominator_block(size_t index) const;
  uint32_t dominating_retainer(size_t index) const;  // kNoRetainer if none directly
  uint64_t retained_bytes(size_t index) const;
  uint64_t retained_blocks(size_t index) const;  // walks the tree: O(blocks x depth)
  uint32_t group_of(size_t index) const;

  // Working memory of the graph (for the scan's statistics).
  size_t bytes_used() const;

 private:
  static constexpr uint32_t kUnset = UINT32_MAX;
  [[nodiscard]] bool try_build_graph(const ScanBlocks& blocks, const ReachabilityScan& scan,
                                     const RootSource* sources, size_t source_count,
                                     DataNamer namer, const FrameSpan* frames,
                                     BlockDescription* describe, bool* described);
  [[nodiscard]] bool try_collect_retainers(const ReachabilityScan& scan, const RootSource* sources,
                                           size_t source_count, DataNamer namer,
                                           const FrameSpan* frames);
  [[nodiscard]] bool try_order(const ScanBlocks& blocks, const ReachabilityScan& scan);
  [[nodiscard]] bool try_group_unreached(const ScanBlocks& blocks, const ReachabilityScan& scan);
  void compute_dominators(const ScanBlocks& blocks, const ReachabilityScan& scan);
  void compute_retained(const ScanBlocks& blocks);
  void describe_block(const ScanBlocks& blocks, const ReachabilityScan& scan,
                      BlockDescription* out) const;
  [[nodiscard]] bool try_group(const ScanBlocks& blocks);
  // Adds one block to the group of `key`, made if new; its index, or kNoGroup without memory.
  [[nodiscard]] uint32_t try_add_to_group(const RetentionGroup& key, uint64_t bytes,
                                          uint64_t retained_bytes, uint64_t retained_blocks);
  uint32_t postorder_of(size_t index) const;  // kUnset if the block is not in the graph
  bool member(const ScanBlocks& blocks, const ReachabilityScan& scan, size_t index) const;
  template <typename F>
  void for_each_successor(const ScanBlocks& blocks, const ReachabilityScan& scan, uint32_t node,
                          F&& f) const;
  uint32_t intersect(uint32_t a, uint32_t b) const;

  size_t block_count_ = 0;  // nodes: blocks, then retainers, then the virtual root
  uint32_t root_node_ = 0;
  core::MmapArray<Retainer> retainers_;
  core::MmapArray<uint32_t> retainer_first_;  // retainer r's targets: [first[r], first[r + 1])
  core::MmapArray<uint32_t> retainer_targets_;
  core::MmapArray<uintptr_t> retainer_words_;  // each target's root word address
  // Per node, 20 bytes at most at once: each phase hands the 4 bytes a node it no longer needs
  // on to the next (number_ -> retained_blocks_ -> group_).
  core::MmapArray<uint32_t> order_;            // node by postorder number
  core::MmapArray<uint32_t> number_;           // postorder number by node (kUnset: not reached)
  core::MmapArray<uint32_t> idom_;             // by postorder number
  core::MmapArray<uint64_t> retained_bytes_;   // by postorder number
  core::MmapArray<uint32_t> retained_blocks_;  // by postorder number, until try_group
  core::MmapArray<uint32_t> group_;            // a block's group by postorder number
  core::MmapArray<RetentionGroup> groups_;
  core::MmapArray<uint32_t> group_slots_;  // index + 1 into groups_, 0 empty (open addressing)
  size_t group_mask_ = 0;
  bool built_ = false;
  uint32_t passes_ = 0;
  bool complete_ = true;
  uint64_t shared_bytes_ = 0;
  uint64_t shared_blocks_ = 0;
};

}  // namespace memtrack::rt
