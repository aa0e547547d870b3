// The leak scan at exit: stops the other threads, gathers the roots (writable mappings that
// are not heap or memtrack's own, every thread's stack above its stack pointer, registers)
// and classifies every live block (reachability.h). Runtime-safe: no malloc.
#pragma once

#include <cstdint>

#include "core/mmap_array.h"
#include "runtime/reachability.h"

namespace memtrack::rt {

// Fills `blocks` with every live block, sorted by address and classified. `stack_top` is an
// address in the caller's frame: the calling thread's stack is scanned from there up, so
// the scan's own frames are never roots. Returns false if it could not run (out of memory,
// /proc unreadable); the caller then reports the blocks unclassified.
[[nodiscard]] bool scan_live_blocks(core::MmapArray<ScanBlock>& blocks, uintptr_t stack_top);

}  // namespace memtrack::rt
