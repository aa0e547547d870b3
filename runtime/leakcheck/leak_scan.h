// The leak scan at exit: stops the other threads, gathers the roots (writable mappings that
// are not heap or memtrack's own, every thread's stack above its stack pointer, registers)
// and classifies every live block (reachability.h). Runtime-safe: no malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/mmap_array.h"
#include "runtime/leakcheck/reachability.h"
#include "runtime/leakcheck/retention.h"

namespace memtrack::rt {

// Where one scan's time went (nanoseconds per phase), and its working memory.
struct LeakScanStats {
  uint64_t blocks = 0;
  uint64_t bytes = 0;         // the block array, its index, the work list and the cliques
  uint64_t stop_ns = 0;       // stopping the other threads
  uint64_t collect_ns = 0;    // copying the allocation table
  uint64_t sort_ns = 0;       // sorting by address
  uint64_t maps_ns = 0;       // reading /proc/self/maps and memtrack's own mappings
  uint64_t roots_ns = 0;      // scanning the roots
  uint64_t mark_ns = 0;       // scanning what the roots reach
  uint64_t cliques_ns = 0;    // forming the cliques of what is left
  uint64_t retention_ns = 0;  // the retention graph, when asked for
  uint64_t cpu_ns = 0;        // CPU time of the scanning thread, all phases
};

// Fills `blocks` with every live block, sorted by address, and classifies them: their states
// and scan.cliques() hold the verdicts (the rest of `scan` must not be used afterwards).
// `stack_top` is an address in the caller's frame: the calling thread's stack is scanned
// from there up, so the scan's own frames are never roots. Returns false if it could not run
// (out of memory, /proc unreadable); the caller then reports the blocks unclassified.
// `stats`, if not null, receives the phases' times. `retention`, if not null, receives what
// holds the still-reachable blocks (empty if memory for it ran out: a warning says so).
// `block`, if not null (with `retention`), receives the description of the block that holds
// block->address (memtrack snapshot --retainers).
[[nodiscard]] bool scan_live_blocks(ScanBlocks& blocks, ReachabilityScan& scan, uintptr_t stack_top,
                                    LeakScanStats* /*out*/ stats,
                                    RetentionGraph* /*out*/ retention = nullptr,
                                    BlockDescription* /*in,out*/ block = nullptr);

// The runtime's own zero-initialised globals when it is linked into the executable (the
// archive gathers them in one section): no root, like libmemtrack.so's image, which the
// skipped code range covers whole. Set once at start-up.
void set_runtime_globals_range(uintptr_t begin, uintptr_t end);

}  // namespace memtrack::rt
