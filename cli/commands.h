// The subcommands. Each returns the process exit status; failures throw memtrack::Error.
#pragma once

#include "cli/options.h"
#include "report/model.h"

namespace memtrack::cli {

int run_command(const Config& config);         // memtrack run
int report_command(const Config& config);      // memtrack report
int top_command(const Config& config);         // memtrack top (top_command.cpp)
int snapshot_command(const Config& config);    // memtrack snapshot (snapshot_command.cpp)
int attach_command(const Config& config);      // memtrack attach (attach_command.cpp)
int detach_command(const Config& config);      // memtrack detach (attach_command.cpp)
int diff_command(const Config& config);        // memtrack diff (diff_command.cpp)
int ui_command(const Config& config);          // memtrack ui (ui_command.cpp, in memtrack-ui)
int link_flags_command(const Config& config);  // memtrack link-flags (link_flags.cpp)

// The directory holding libmemtrack_static.a and its wrap list (beside libmemtrack.so).
// Throws Error if either is missing.
std::string find_static_runtime_dir();

// Asks `pid`, running under memtrack run, for a full report, waits up to timeout_s for its
// result file and returns the file's path (the caller removes it). With `block`, the report
// also describes the block holding that address (memtrack snapshot --retainers). Throws Error
// naming the problem: no such process, not under memtrack, snapshots off, no answer in time.
// (snapshot_command.cpp; also used by memtrack ui.)
std::string request_snapshot(uint32_t pid, double timeout_s, uint64_t block = 0);

// Whether process `pid` exists (a zombie too), whoever it belongs to. (snapshot_command.cpp.)
bool process_exists(uint32_t pid);

// The result directory of `pid`, running under memtrack run (its MEMTRACK_OPTIONS
// result_dir; "" when it has none). Throws Error as request_snapshot does.
std::string memtrack_result_dir(uint32_t pid);

// Whether `pid` runs under memtrack recording a heap profile (MEMTRACK_OPTIONS profile, as
// memtrack run --profile sets it). False for any process it cannot tell of.
bool memtrack_records_profile(uint32_t pid);

// The raw heap profile `pid` is recording into now: its MEMTRACK_OPTIONS profile pattern with
// %p expanded (relative to the process's working directory), or that name with ".N" for the
// Nth image of the process (after exec), the highest N there is. Throws Error as
// request_snapshot does, and when the process records no heap profile or has not started one.
std::string memtrack_raw_profile(uint32_t pid);

// A report read from a JSON report (run --json), a result file or a directory of them.
// `*had_errors`: a result file could not be read (its error is printed). Throws Error.
// (diff_command.cpp; diff's BASE and NEW, and memtrack ui's FILEs.)
report::Report load_report(const std::string& path, const Config& config, bool* had_errors);

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
