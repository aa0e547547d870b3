// The subcommands. Each returns the process exit status; failures throw memtrack::Error.
#pragma once

#include "cli/options.h"
#include "report/model.h"

namespace memtrack::cli {

int run_command(const Config& config);         // memtrack run
int report_command(const Config& config);      // memtrack report
int top_command(const Config& config);         // memtrack top (top_command.cpp)
int snapshot_command(const Config& config);    // memtrack snapshot (snapshot_command.cpp)
int diff_command(const Config& config);        // memtrack diff (diff_command.cpp)
int link_flags_command(const Config& config);  // memtrack link-flags (link_flags.cpp)

// The directory holding libmemtrack_static.a and its wrap list (beside libmemtrack.so).
// Throws Error if either is missing.
std::string find_static_runtime_dir();

// The exit status when --fail-on fails memtrack diff (and memtrack run --baseline without
// --error-exitcode).
inline constexpr int kExitGateFailed = 1;

// memtrack run --baseline (diff_command.cpp). read_baseline reads the JSON report before
// the run starts (throws Error); check_baseline prints the differences to stderr and returns
// true when --fail-on fails the run.
report::Report read_baseline(const std::string& path);
bool check_baseline(const report::Report& baseline, const report::Report& report,
                    const Config& config);

}  // namespace memtrack::cli
