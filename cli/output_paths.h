// The output files a run will write, checked before the program starts (so a typo never
// costs a whole run), and the %p in their names.
#pragma once

#include <cstdint>
#include <string>

#include "cli/options.h"

namespace memtrack::cli {

// Throws Error when --log-file or --json names a file that cannot be written (checked before
// the program runs; names with %p: their directory).
void check_output_paths(const Config& config);

// Throws Error when the pprof profile would go to stdout and stdout is a terminal.
void check_binary_stdout(const Config& config);

// --log-file's %p expanded.
std::string expand_pid(const std::string& pattern, uint32_t pid);

}  // namespace memtrack::cli
