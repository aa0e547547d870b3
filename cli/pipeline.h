// From result files to the report: read, symbolize, apply suppressions; and the exit status
// it gives. Before it: output_paths.h (checked before the program runs); after it:
// write_outputs.h; beside it: no_data.h (processes that wrote no result file).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/no_data.h"
#include "cli/options.h"
#include "report/model.h"
#include "report/suppressions.h"

namespace memtrack::cli {

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

// A key for a module map: processes with the same key can share a Symbolizer.
std::string module_key(const std::vector<RawModule>& modules);

// The exit status for `report`: --error-exitcode when an unsuppressed group of one of the
// --errors-for-leak-kinds kinds exists (whether listed or not), any process has an
// allocator misuse error (errors are never suppressed), has no leak data (unless
// --error-for-no-data=no) or, with --error-for-fds=yes, an unsuppressed descriptor open at
// exit; otherwise `program_status`.
int exit_status(const report::Report& report, const Config& config, int program_status);

}  // namespace memtrack::cli
