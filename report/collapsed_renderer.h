// Collapsed ("folded") stacks of the leaked bytes, the input of flamegraph.pl and speedscope:
// one line "root;...;leaf BYTES" per distinct stack. No I/O but the given stream.
#pragma once

#include <ostream>
#include <string>

#include "report/model.h"

namespace memtrack::report {

struct CollapsedOptions {
  LeakKinds show_kinds = kDefaultShownKinds;  // groups of other kinds are left out
};

// One frame's name in a line: the function, "?? (module basename)" without one; ';' (the
// separator) and line breaks become ':' and ' '.
std::string collapsed_frame(const Frame& frame);

// For every process of report.processes and each of its unsuppressed groups of the shown
// kinds: "COMMAND[PID];FRAME;...;FRAME BYTES", root first (the process, then main or the
// thread's start, down to the allocator's caller), with the printed frames of the text report
// (printed_frame_count). Groups with the same line are summed; lines keep the order of their
// first group. With the default kinds the bytes of a process's lines sum to its
// summary.leaked().bytes.
void render_collapsed(const Report& report, std::ostream& out,
                      const CollapsedOptions& options = {});

}  // namespace memtrack::report
