// --num-callers: stacks cut to a number of frames after the runtime recorded them deeper
// (it always records at least its default depth, so whether a block is kept by the C/C++
// runtime for its own use never depends on how many frames a user wants to see).
// Ordinary C++ (may allocate).
#pragma once

#include <cstddef>

#include "report/model.h"

namespace memtrack::report {

// Cuts every stack of `process` (leak groups, suppressed groups, errors, descriptor sites,
// the crash) to at most `depth` frames (inlined frames count, as with valgrind), then merges
// leak groups of the same kind whose cut stacks are equal, adding up their bytes and blocks
// (as valgrind merges loss records by the frames it kept), and sorts them again. Summary
// totals do not change. `depth` 0 leaves the process as it is.
void limit_stack_depth(ProcessReport& process, size_t depth);

}  // namespace memtrack::report
