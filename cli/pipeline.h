// From result files to what the user sees: symbolize, apply suppressions, render text and
// JSON, and choose the exit status.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "cli/result_dir.h"
#include "report/model.h"
#include "report/suppressions.h"

namespace memtrack::cli {

// The process the user started, as the launcher saw it (its exit status is authoritative:
// a process killed by a signal never writes its own result file).
// What memtrack knows about a run that tells why a process has no leak data.
struct NoDataFacts {
  bool trace_children = true;
  bool exit_report_disabled = false;            // MEMTRACK_OPTIONS sets report_at_exit=0
  std::string untrackable;                      // why the program cannot be tracked (run anyway)
  std::map<uint32_t, report::ExitInfo> reaped;  // descendants memtrack reaped (subreaper)
  std::string kept_dir;  // the result directory, kept for processes still running
};

struct MainProcess {
  uint32_t pid = 0;
  std::vector<std::string> command;
  report::ExitInfo exit;
  NoDataFacts facts;
};

// Adds a report without leak data for every process that wrote a start marker but no result
// file (except the main process, which build_report covers), each with its exact reason
// where memtrack knows it; then orders the processes: the main one first, the others in start
// order (report/process_order.h: by pid, but never before their parent).
void add_processes_without_data(report::Report& report, const std::vector<StartedProcess>& started,
                                const NoDataFacts& facts, uint32_t main_pid);

// Reads every --suppressions file. Throws Error (with FILE:LINE) for a bad or missing one;
// `run` calls it before starting the program, so a typo never costs a whole run.
report::Suppressions load_suppressions(const Config& config);

// Builds the report of every file, the main process first, then the others in start order
// (report/process_order.h). Files that cannot be read are skipped after one "memtrack:
// error:" line each; `*had_errors` says whether that happened. A module path that exists
// under `sysroot` (--sysroot) is symbolized from there. Leak groups of kinds not in
// `stack_kinds` keep an empty stack (report::build_process_report; stack_kinds_to_symbolize
// says which kinds the outputs list).
report::Report build_report(const std::vector<std::string>& result_files,
                            const report::Suppressions& suppressions,
                            const std::optional<MainProcess>& main, bool* /*out*/ had_errors,
                            const std::string& sysroot = "",
                            report::LeakKinds stack_kinds = report::LeakKinds::all());

// The leak kinds whose stacks an output of `config` may use: the listed ones
// (--show-leak-kinds, which every format follows), the failing ones (--errors-for-leak-kinds:
// JUnit names them) and every kind but still reachable. All of them with --baseline,
// --gen-suppressions, --json, --html or --xml-file, whose output depends on every group.
report::LeakKinds stack_kinds_to_symbolize(const Config& config);

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

// Throws Error when --log-file or --json names a file that cannot be written (checked before
// the program runs; names with %p: their directory).
void check_output_paths(const Config& config);

// Throws Error when the pprof profile would go to stdout and stdout is a terminal.
void check_binary_stdout(const Config& config);

// Whether the text report is coloured (--color, the terminal, NO_COLOR, TERM).
bool use_color(const Config& config);

// --log-file's %p expanded.
std::string expand_pid(const std::string& pattern, uint32_t pid);

// A key for a module map: processes with the same key can share a Symbolizer.
std::string module_key(const std::vector<RawModule>& modules);

// The exit status for `report`: --error-exitcode when an unsuppressed group of one of the
// --errors-for-leak-kinds kinds exists (whether listed or not), any process has an
// allocator misuse error (errors are never suppressed), has no leak data (unless
// --error-for-no-data=no) or, with --error-for-fds=yes, an unsuppressed descriptor open at
// exit; otherwise `program_status`.
int exit_status(const report::Report& report, const Config& config, int program_status);

}  // namespace memtrack::cli
