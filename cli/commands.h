// The subcommands. Each returns the process exit status; failures throw memtrack::Error.
#pragma once

#include "cli/options.h"

namespace memtrack::cli {

int run_command(const Config& config);       // memtrack run
int report_command(const Config& config);    // memtrack report
int top_command(const Config& config);       // memtrack top (top_command.cpp)
int snapshot_command(const Config& config);  // memtrack snapshot (snapshot_command.cpp)

}  // namespace memtrack::cli
