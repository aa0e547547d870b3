// Classification of live blocks at exit, with memcheck's rules (docs/runtime.md,
// "Reachability"): a mark phase from the roots (start pointers make blocks reachable,
// interior pointers only possibly lost, unless one of memcheck's heuristics recognises them),
// then cliques among the unreached blocks: in allocation order (address order where it is
// not known), each unclaimed block is a definitely lost "leader" and every unreached block it
// reaches is indirectly lost.
// Runtime-safe: mmap-backed arrays only. Not thread safe; the caller stops other threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/mmap_array.h"
#include "core/sys_linux.h"
#include "runtime/leakcheck/guarded_read.h"
#include "runtime/leakcheck/scan_blocks.h"

namespace memtrack::rt {

class ReachabilityScan {
 public:
  // What a definitely lost block's clique holds besides the block itself.
  struct Clique {
    uint32_t leader;  // the block's index
    uint32_t blocks;  // indirectly lost blocks (a scan holds fewer than 2^32)
    uint64_t bytes;   // and their bytes
  };

  // `blocks` must be sorted (try_sort) and stay alive while the scan runs; the scan keeps
  // its verdicts in their states. `readonly` lists read-only file mappings (sorted by
  // start), where vtables live (multiple inheritance heuristic). Returns false if the work
  // list cannot be mapped.
  [[nodiscard]] bool try_init(ScanBlocks& blocks,
                              const core::MmapArray<core::sys::MemoryRange>& readonly);

  // Treats every aligned word of [begin, end) as a root, except the words of the excluded
  // ranges (set_excluded). The memory must be readable.
  void scan_root_range(uintptr_t begin, uintptr_t end);
  // Ranges scan_root_range leaves out (sorted by start, not overlapping; `ranges` must stay
  // alive while it is set): the C runtime's own roots, scanned after the program's
  // (begin_runtime_roots). Empty by default.
  void set_excluded(const core::sys::MemoryRange* ranges, size_t count);
  // Treats `value` (a register) as a root.
  void scan_root_word(uintptr_t value);
  // Makes every ignored block reachable, as if a root pointed at it.
  void mark_ignored();
  // Switches to the C runtime's own roots (its libraries' data and TLS, each thread's
  // descriptor), after the program's roots were scanned and propagated: clears the
  // exclusion, and from now on a block still unreached that the runtime allocated itself
  // (`allocated_by_runtime(stack id)`) is *held by the runtime* when any pointer reaches it,
  // start or interior (glibc's search trees tag their pointers' low bits), and counts as
  // reachable; other blocks follow the usual rules. So glibc's environment tree, NSS and
  // locale state, and per-thread buffers are the runtime's, not the program's, as memcheck's
  // run of __libc_freeres makes them; a block of the program's that only glibc keeps (a
  // putenv string, a setvbuf buffer) stays reachable.
  void begin_runtime_roots(bool (*allocated_by_runtime)(uint32_t stack_id));
  // True if the block was reached only through the C runtime's roots (begin_runtime_roots).
  bool runtime_held(size_t index) const {
    return held_.size() != 0 && (held_[index / 64] >> (index % 64) & 1) != 0;
  }
  // Scans reachable and possibly lost blocks until nothing changes. Returns false if the
  // work list overflowed mmap (the result is then conservative only in part).
  bool propagate();
  // Forms the cliques of the unreached blocks (definite leaders and their indirect blocks).
  // Leaders are taken in the order of sequence(index), a block's allocation sequence (see
  // SmallHeap::set_record), then of address: memcheck takes them in address order, which
  // in its allocator is the order of allocation, so in a lost cycle the block allocated first
  // is the definitely lost one. Without `sequence`, address order. Returns false if memory
  // for the work list, the order or the cliques ran out.
  bool classify_unreached(uint64_t (*sequence)(uintptr_t start) = nullptr);

  // The cliques that hold at least one indirect block, in the order their leaders led. A
  // leader whose clique a later leader took over keeps its entry, with zero totals.
  const core::MmapArray<Clique>& cliques() const { return cliques_; }

  // Memory of the work list and the cliques (for the scan's statistics).
  size_t bytes_used() const;

  // The edges from the roots into the heap, kept for the retention graph (retention.h): a
  // root word that refers to a block the way the mark phase counts (its start, or an interior
  // address one of the heuristics accepts), with the source of the root range it lies in.
  struct RootEdge {
    uintptr_t address;  // the root word's address (0 for a register or a stream)
    uint32_t block;     // the block's index
    uint32_t source;    // set_root_source's value when the word was read
  };
  // Starts keeping root edges: every root word read from now on (scan_root_range,
  // scan_root_word, mark_ignored) until begin_runtime_roots. The C runtime's own roots are not
  // kept: what only they hold is not the program's. Returns false if the list cannot be mapped
  // (the edges kept until memory ran out stay, and root_edges_complete() says false).
  [[nodiscard]] bool keep_root_edges();
  void set_root_source(uint32_t source) { source_ = source; }
  const core::MmapArray<RootEdge>& root_edges() const { return root_edges_; }
  bool root_edges_complete() const { return !edges_overflow_; }

  // Calls f(target) for every block the block `index` refers to as the mark phase counts a
  // reference from a reachable block (start pointers and the heuristics' interior pointers):
  // its out-edges in the heap graph, in the order of its words, repeats included. Reads
  // guarded (a ScanGuard must be alive).
  template <typename F>
  void for_each_reference(size_t index, F&& f) const {
    for_each_reference_at(index, [&f](uintptr_t, size_t target) { f(target); });
  }
  // The same with the address of each pointer: f(address, target).
  template <typename F>
  void for_each_reference_at(size_t index, F&& f) const {
    const ScanBlocks::Filter filter = blocks_->filter();
    const uintptr_t begin = blocks_->start(index);
    read_words_at(begin, begin + static_cast<uintptr_t>(blocks_->size_of(index)),
                  [&](uintptr_t at, uintptr_t value) {
                    if (!filter.may_hold(value)) return;
                    long target = reference_target(value);
                    if (target >= 0) f(at, static_cast<size_t>(target));
                  });
  }

 private:
  // Not inlined: the guarded loops of read_ranges keep no state of theirs in registers.
  __attribute__((noinline)) void reach(uintptr_t value, bool from_definite);
  __attribute__((noinline)) void claim(size_t leader, uintptr_t value);
  bool pop_work(uintptr_t* /*out*/ begin, uintptr_t* /*out*/ end);
  bool heuristic_start(size_t index, uintptr_t value) const;
  // The block `value` refers to as a start pointer or a heuristic's interior pointer, or -1.
  long reference_target(uintptr_t value) const;
  // A root word at `address` holding `value`: kept as a root edge if edges are being kept,
  // then reached.
  void reach_root(uintptr_t address, uintptr_t value);
  bool is_allocator_link(size_t index, uintptr_t value) const;
  bool is_readonly_data(uintptr_t address) const;
  void push(size_t index);
  // The position of unreached block `index` in the leaders' order.
  uint32_t rank_of(size_t index) const;
  bool try_order_leaders(uint64_t (*sequence)(uintptr_t start));

  ScanBlocks* blocks_ = nullptr;
  const core::MmapArray<core::sys::MemoryRange>* readonly_ = nullptr;
  void mark_held(size_t index);
  // Calls f(begin, end) on each part of [begin, end) outside the excluded ranges.
  template <typename F>
  void for_each_included(uintptr_t begin, uintptr_t end, F&& f) const;

  core::MmapArray<uint32_t> work_;
  // The excluded ranges of scan_root_range, and the runtime phase's state.
  const core::sys::MemoryRange* excluded_ = nullptr;
  size_t excluded_count_ = 0;
  bool (*allocated_by_runtime_)(uint32_t stack_id) = nullptr;
  core::MmapArray<uint64_t> held_;  // one bit per block, mapped by begin_runtime_roots
  core::MmapArray<Clique> cliques_;
  // The unreached blocks in the leaders' order, and (index, rank) pairs sorted by index;
  // empty for address order.
  core::MmapArray<uint32_t> leaders_;
  struct Rank {
    uint32_t index;
    uint32_t rank;
  };
  core::MmapArray<Rank> ranks_;
  core::MmapArray<RootEdge> root_edges_;
  bool keeping_edges_ = false;
  bool edges_overflow_ = false;
  uint32_t source_ = 0;
  size_t work_peak_ = 0;
  size_t leader_ = 0;           // the clique being formed
  bool from_definite_ = false;  // the block being read is reachable
  bool overflow_ = false;
};

}  // namespace memtrack::rt
