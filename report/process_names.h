// Names of a report's processes that stay the same from run to run, for CI histories (JUnit
// test cases) and flame-graph diffs (the root frame of collapsed stacks and speedscope
// profiles): what each process ran, without its pid, and " #2", " #3"... for a later process
// that ran the same as an earlier one, in the report's order (start order, the program
// first). The pid stays in the formats beside the name (a JUnit property, the JSON report).
// Ordinary C++.
#pragma once

#include <string>
#include <vector>

#include "report/model.h"

namespace memtrack::report {

enum class ProcessNaming {
  kCommand,  // the whole command line, quoted as the text report quotes it
  kProgram,  // the program's file name only
};

// One name per process, in the same order.
std::vector<std::string> stable_process_names(const std::vector<ProcessReport>& processes,
                                              ProcessNaming naming);

}  // namespace memtrack::report
