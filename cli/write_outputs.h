// The last step of every command that reports: the report written in every format asked for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "report/model.h"

namespace memtrack::cli {

// Writes the text report (stderr, stdout for --log-file=-, or --log-file), the JSON report
// (--json) and the other formats (--junit, --collapsed, --html; `live`: the live reports of
// the run, as live_to_json() made them, for the HTML report's charts). A report that cannot be
// written to its file goes to stderr instead, after one "memtrack: error:" line saying why. With
// live reports (--expire) the log file already holds them, and the report is appended.
// `text_to_stdout`: with no --log-file the text goes to stdout instead of stderr (memtrack
// snapshot). Returns false if any output could not be written where it was asked for (the
// caller's exit status is then 125: a CI job must not pass on a report it never got).
[[nodiscard]] bool write_outputs(const report::Report& report, const Config& config,
                                 uint32_t main_pid, bool text_to_stdout = false,
                                 const std::vector<nlohmann::ordered_json>& live = {});

// Whether the text report is coloured (--color, the terminal, NO_COLOR, TERM).
bool use_color(const Config& config);

}  // namespace memtrack::cli
