// The leak scan at exit: stops the other threads, gathers the roots (writable mappings that
// are not heap or memtrack's own, every thread's stack above its stack pointer, registers)
// and classifies every live block (reachability.h). Runtime-safe: no malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/mmap_array.h"
#include "runtime/leakcheck/reachability.h"

namespace memtrack::rt {

// Fills `blocks` with every live block, sorted by address and classified. `stack_top` is an
// address in the caller's frame: the calling thread's stack is scanned from there up, so
// the scan's own frames are never roots. Returns false if it could not run (out of memory,
// /proc unreadable); the caller then reports the blocks unclassified.
[[nodiscard]] bool scan_live_blocks(core::MmapArray<ScanBlock>& blocks, uintptr_t stack_top);

// The registers of the reporting thread where a signal interrupted it (its ucontext's general
// registers): roots of the exit report, like the stopped threads' registers, since the
// values the program held in them are live (a crash report runs in the signal handler, above
// the interrupted frame). Called once, from the handler of the signal that ends the process.
void note_interrupted_registers(const uintptr_t* registers, size_t count);

// The runtime's own zero-initialised globals when it is linked into the executable (the
// archive gathers them in one section): no root, like libmemtrack.so's image, which the
// skipped code range covers whole. Set once at start-up.
void set_runtime_globals_range(uintptr_t begin, uintptr_t end);

}  // namespace memtrack::rt
