// valgrind's XML output (memcheck, protocol 4; 5 when descriptors are listed) for the CI
// plugins and IDEs that read it (docs/cli.md, "Output formats"). No I/O but the given stream.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/model.h"

namespace memtrack::report {

struct ValgrindXmlOptions {
  LeakKinds show_kinds = kDefaultShownKinds;  // the Leak_* errors listed (--show-leak-kinds)
  std::string version;                        // memtrack's, for the preamble
  // <vargv>: the tool's own command line, executable first; empty: "memtrack".
  std::vector<std::string> tool_argv;
};

// One <valgrindoutput> document with the elements, and in the order, that valgrind 3.x's
// memcheck writes them: protocolversion, protocoltool, preamble, pid, ppid, tool, args,
// status RUNNING, the allocator misuse errors (InvalidFree, MismatchedFree with their
// auxwhat and stacks), status FINISHED, descriptors left open (FdNotClosed, protocol 5 only),
// the Leak_* errors (one per shown group, smallest first, "loss record i of n"), errorcounts
// and suppcounts. valgrind writes one document per process: pid, ppid and args are those of
// the first process of report.processes, and the errors of every process follow, numbered
// in one sequence (render one process per document for valgrind's exact layout). On-demand
// checks and processes without leak data add nothing. Differences from valgrind: stacks start
// at the allocator's caller (valgrind's at its replacement malloc), <tid> is 1 (the runtime
// does not record threads per block), and times are 0. suppcounts counts, per suppression,
// the leak groups and descriptor sites it hid. Text is XML-escaped (xml_text.h).
void render_valgrind_xml(const Report& report, std::ostream& out,
                         const ValgrindXmlOptions& options = {});

// valgrind's <kind> of a leak group: Leak_DefinitelyLost, Leak_IndirectlyLost,
// Leak_PossiblyLost, Leak_StillReachable; groups the runtime did not classify are
// Leak_PossiblyLost (valgrind has no such kind; nothing is claimed about their reachability).
const char* valgrind_leak_kind(LeakKind kind);

}  // namespace memtrack::report
